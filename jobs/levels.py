"""The committed saturation level of `benchwatch analyze` (issue 19): after the snapshot-level
saturation rows are stored, run the hysteresis over each series' stored rows and store the level
on every row (so `saturation_latest`, the report and the alert rule read one level).

Recomputed from the whole stored history of each series every time: deterministic, and the
first analyze after the upgrade to migration 020 fills the rows written before it with the same
levels the alert rule computed at notify time (no alert resolves or fires anew).
"""

from __future__ import annotations

import logging

from analysis.constants import SERIES_KEY
from analysis.hysteresis import series_levels
from storage import levels as store
from storage.engine import duckdb

log = logging.getLogger("benchwatch.jobs.levels")


def run_levels(con: duckdb.DuckDBPyConnection) -> int:
    """Compute and store the level columns of every stored saturation row; returns rows changed."""
    rows = store.read_level_inputs(con, SERIES_KEY)
    if rows.empty:
        return 0
    return store.store_levels(con, series_levels(rows, SERIES_KEY), SERIES_KEY)

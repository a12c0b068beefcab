"""The committed saturation level of `benchwatch analyze` (issue 19): after the snapshot-level
saturation rows are stored, run the hysteresis over each series' stored rows and store the level
on every row (so `saturation_latest`, the report and the alert rule read one level).

Recomputed from the whole stored history of each series every time, as of the analysis' `now`
(a move commits after LEVEL_DWELL_DAYS even without a new snapshot): deterministic for a given
day, so a new day without new data runs it too (jobs/analyze.py `_move_to_day`).
"""

from __future__ import annotations

import logging
from datetime import datetime

from analysis.constants import SERIES_KEY
from analysis.hysteresis import series_levels
from storage import levels as store
from storage.engine import duckdb

log = logging.getLogger("benchwatch.jobs.levels")


def run_levels(con: duckdb.DuckDBPyConnection, now: datetime | None = None) -> int:
    """Compute and store the level columns of every stored saturation row as of `now` (the
    analysis' time: a pending move that has stood LEVEL_DWELL_DAYS by then commits, a frozen
    source's too; None judges each series' newest row at its own as_of); returns rows changed."""
    rows = store.read_level_inputs(con, SERIES_KEY)
    if rows.empty:
        return 0
    return store.store_levels(con, series_levels(rows, SERIES_KEY, now=now), SERIES_KEY)

"""Relation: the committed saturation level on every stored saturation row (issue 19): the
hysteresis (analysis.hysteresis.series_levels) over each series' stored rows, written back on
every row (so `saturation_latest`, the report and the alert rule read one level).

Recomputed from the whole stored history of each series on every analysis, as of its `now` (a
move commits after LEVEL_DWELL_DAYS even without a new snapshot): deterministic for a given day,
so a new day without new data runs it too. It reads the `saturation` rows the relations before
it wrote.
"""

from __future__ import annotations

from datetime import datetime

import pandas as pd

from analysis.constants import SERIES_KEY
from analysis.hysteresis import series_levels
from jobs.relations.base import EVERY, Inputs, Relation
from jobs.relations.shared import no_scores, now_of
from storage import levels as store
from storage.engine import duckdb


def compute(inputs: Inputs, units: frozenset[str] | None) -> pd.DataFrame | None:
    if inputs.plan.full and no_scores(inputs):
        return None
    rows = store.read_level_inputs(inputs.con, SERIES_KEY)
    return None if rows.empty else series_levels(rows, SERIES_KEY, now=now_of(inputs))


def write(inputs: Inputs, levels: pd.DataFrame, units: frozenset[str] | None) -> None:
    store.store_levels(inputs.con, levels, SERIES_KEY)


def run_levels(con: duckdb.DuckDBPyConnection, now: datetime | None = None) -> int:
    """Compute and store the level columns of every stored saturation row as of `now` (the
    analysis' time: a pending move that has stood LEVEL_DWELL_DAYS by then commits, a frozen
    source's too; None judges each series' newest row at its own as_of); returns rows changed."""
    rows = store.read_level_inputs(con, SERIES_KEY)
    if rows.empty:
        return 0
    return store.store_levels(con, series_levels(rows, SERIES_KEY, now=now), SERIES_KEY)


RELATION = Relation("levels", EVERY, compute, write)

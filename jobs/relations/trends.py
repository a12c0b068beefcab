"""Relation `trends`: each table's frontier trend and forecast (analysis.trends.trends_table),
replaced per table; its day-relative columns (`as_of`, `stale_days`: analysis.trends.at_day) move
to the day of the analysis on the tables kept."""

from __future__ import annotations

import pandas as pd

from analysis.constants import SATURATION_K
from analysis.trends import at_day, trends_table
from jobs.relations.base import TABLE, Inputs, Relation
from jobs.relations.frontier import frontier_of
from jobs.relations.shared import history_and_tables, no_scores, now_of, primary, registry_of, with_sources
from storage import saturation as store


def compute(inputs: Inputs, units: frozenset[str] | None) -> pd.DataFrame | None:
    if no_scores(inputs):
        return None
    rows = primary(inputs)
    trends = trends_table(rows, now=now_of(inputs), benchmarks=registry_of(inputs), k=SATURATION_K,
                          frontier=frontier_of(inputs))
    trends["k"] = SATURATION_K
    trends["population"] = trends["table_id"].map(rows.groupby("table_id")["population"].first())
    return with_sources(trends, history_and_tables(inputs)["catalogue"])


def write(inputs: Inputs, rows: pd.DataFrame, units: frozenset[str] | None) -> None:
    store.replace_units(inputs.con, "trends", rows, where={"k": SATURATION_K},
                        units=None if units is None else sorted(units),
                        run_at=now_of(inputs).tz_localize("UTC").to_pydatetime())


def to_day(inputs: Inputs, recomputed: frozenset[str]) -> None:
    stored = store.read_trends(inputs.con)
    kept = stored[~stored["table_id"].isin(recomputed) & (stored["k"] == SATURATION_K)]
    store.move_trends_to_day(inputs.con, at_day(kept, now_of(inputs)))


RELATION = Relation("trends", TABLE, compute, write, to_day)

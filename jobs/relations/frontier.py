"""Relation `frontier`: each table's best score and top-k mean over time, on its primary
population (analysis.trends.frontier_history), replaced per table."""

from __future__ import annotations

import pandas as pd

from analysis.constants import SATURATION_K
from analysis.trends import frontier_history
from jobs.relations.base import TABLE, Inputs, Relation
from jobs.relations.shared import history_and_tables, no_scores, now_of, primary, with_sources
from storage import saturation as store


def frontier_of(inputs: Inputs) -> pd.DataFrame:
    """The recomputed tables' frontier as analysis computes it (the trends read it too), once."""
    return inputs.once("frontier", lambda: frontier_history(primary(inputs), SATURATION_K))


def compute(inputs: Inputs, units: frozenset[str] | None) -> pd.DataFrame | None:
    if no_scores(inputs):
        return None
    return with_sources(frontier_of(inputs).assign(k=SATURATION_K), history_and_tables(inputs)["catalogue"])


def write(inputs: Inputs, rows: pd.DataFrame, units: frozenset[str] | None) -> None:
    store.replace_units(inputs.con, "frontier", rows, where={"k": SATURATION_K},
                        units=None if units is None else sorted(units),
                        run_at=now_of(inputs).tz_localize("UTC").to_pydatetime())


RELATION = Relation("frontier", TABLE, compute, write)

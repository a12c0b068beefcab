"""Relation `saturation_trajectory`: each table's saturation index over calendar time, on its dated
history (analysis.trajectory), replaced per table."""

from __future__ import annotations

import pandas as pd

from analysis.constants import SATURATION_ALPHA, SATURATION_K, SATURATION_Z
from analysis.trajectory import saturation_trajectory
from jobs.relations.base import TABLE, Inputs, Relation
from jobs.relations.shared import SCOPE, history_and_tables, no_scores, now_of, with_sources
from storage import saturation as store


def compute(inputs: Inputs, units: frozenset[str] | None) -> pd.DataFrame | None:
    """On every population of the history; n is the table's (models population where there is one)."""
    if no_scores(inputs):
        return None
    shared = history_and_tables(inputs)
    tables = shared["catalogue"].set_index("table_id")
    n_of = tables["n_items"].dropna().to_dict()
    assumed_of = tables["n_assumed"].fillna(False).astype(bool).to_dict()
    trajectory = saturation_trajectory(shared["history"], n_of, SATURATION_K, SATURATION_ALPHA, SATURATION_Z,
                                       n_assumed=assumed_of)
    trajectory.insert(3, "scope", SCOPE)
    return with_sources(trajectory, shared["catalogue"])


def write(inputs: Inputs, rows: pd.DataFrame, units: frozenset[str] | None) -> None:
    store.replace_units(inputs.con, "saturation_trajectory", rows,
                        where={"scope": SCOPE, "k": SATURATION_K, "alpha": SATURATION_ALPHA},
                        units=None if units is None else sorted(units),
                        run_at=now_of(inputs).tz_localize("UTC").to_pydatetime())


RELATION = Relation("trajectory", TABLE, compute, write)

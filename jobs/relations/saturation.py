"""Relation `saturation`, scope `all`: the snapshot-level saturation index of each table's latest
scores (analysis.saturation_tables), upserted on its key: the rows of earlier days stay, a history."""

from __future__ import annotations

import pandas as pd

from jobs.relations.base import TABLE, Inputs, Relation
from jobs.relations.shared import SCOPE, history_and_tables, no_scores, now_of, with_sources
from storage import saturation as store


def compute(inputs: Inputs, units: frozenset[str] | None) -> pd.DataFrame | None:
    if no_scores(inputs):
        return None
    shared = history_and_tables(inputs)
    return with_sources(shared["snap"], shared["catalogue"])


def write(inputs: Inputs, rows: pd.DataFrame, units: frozenset[str] | None) -> None:
    store.store_scope_saturation(inputs.con, rows, scope=SCOPE, run_at=now_of(inputs).tz_localize("UTC").to_pydatetime())


RELATION = Relation("saturation", TABLE, compute, write)

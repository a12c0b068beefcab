"""Relation `disagreements`: which gaps between two sources' numbers of one model on one question
set are findings (analysis.disagreement.analyse over the view source_disagreements), the whole
analysis as one unit: recomputed when any input changed, kept on a new day without new data
(nothing in it is relative to the day). Stored whole (storage.disagreements, migration 085), so
the alert rule, `status` and the report read the one result."""

from __future__ import annotations

from analysis.disagreement import Disagreements, analyse, as_rows
from jobs.relations.base import ANALYSIS, Inputs, Relation
from jobs.relations.shared import now_of
from storage import disagreements as store


def compute(inputs: Inputs, units: frozenset[str] | None) -> Disagreements | None:
    rows = store.read_source_disagreements(inputs.con)
    return None if rows is None else analyse(rows)


def write(inputs: Inputs, result: Disagreements, units: frozenset[str] | None) -> None:
    store.store_disagreements(inputs.con, *as_rows(result), run_at=now_of(inputs).tz_localize("UTC").to_pydatetime())


RELATION = Relation("disagreements", ANALYSIS, compute, write)

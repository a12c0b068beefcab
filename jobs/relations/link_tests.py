"""Relation `link_tests`: the tests of A1 and A2 (analysis.contamination.LINKED_SIGNALS), which
read a benchmark's reference benchmarks across tables, and the models they did not test, as one
unit, the link: recomputed when a changed table's benchmark has or is a reference (step.plan).
Carried into the contamination run (jobs/relations/contamination.py), which writes them: kept,
the stored tests stand in for a recomputation (`keep`), unless one cannot (a non-finite number,
no snapshots: analysis.contamination.reuse.reusable); then the link is recomputed.

One unit, not one per benchmark: A1's bootstraps draw from the run's one random stream
(jobs/relations/signals.py) in the order of its tests, so recomputing some benchmarks' tests
would hand the later ones other draws than a full analysis gives them, and a stream seeded per
benchmark would change every number.
"""

from __future__ import annotations

import analysis.contamination as signal_registry
from analysis.contamination import LINKED_SIGNALS
from jobs.contamination import TestPart, computed_part, linked_history, split_signals, stored_part
from jobs.relations import signals as shared
from jobs.relations.base import LINK, Inputs, Relation
from jobs.relations.shared import now_of


def compute(inputs: Inputs, units: frozenset[str] | None) -> TestPart:
    data = shared.data(inputs)
    items = inputs.computed.get("item_tests")
    return computed_part(inputs.con, split_signals(signal_registry.SIGNALS)[1], data,
                         items=items.tested if items is not None else None, history=linked_history(inputs.con, data),
                         rng=shared.rng(inputs), now=now_of(inputs), th=shared.TH, holds=shared.holds(inputs),
                         predecessors=shared.predecessors(inputs))


def keep(inputs: Inputs, recomputed: frozenset[str]) -> tuple[TestPart | None, frozenset[str]]:
    """The last run's A1/A2 tests and not-tested models; the link itself when one cannot stand in."""
    bad = shared.unusable(inputs)
    again = frozenset({""}) - recomputed if len(bad) and bad["signal"].isin(LINKED_SIGNALS).any() else frozenset()
    if recomputed | again:
        return None, again
    stored, skips = shared.last_run(inputs)
    return stored_part(stored, skips, split_signals(signal_registry.SIGNALS)[1], lambda s, b: True, shared.TH), again


RELATION = Relation("link_tests", LINK, compute, keep=keep)

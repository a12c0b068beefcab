"""Relation `item_tests`: the tests of the contamination signals that test item sets (A3; every
signal but A1/A2: analysis.contamination.LINKED_SIGNALS), the models they did not test and the
item sets' post-cutoff scores, per item set (source, benchmark of dated item results). Carried
into the contamination run (jobs/relations/contamination.py), which writes them: a kept set's
stored tests stand in for a recomputation (`keep`); one whose stored tests cannot (a non-finite
number, no snapshots: analysis.contamination.reuse.reusable) is recomputed.
"""

from __future__ import annotations

import analysis.contamination as signal_registry
from analysis.contamination import LINKED_SIGNALS
from jobs.contamination import TestPart, computed_part, item_rows, post_scores, split_signals, stored_part
from jobs.relations import signals as shared
from jobs.relations.base import ITEM_SET, Inputs, Relation
from jobs.relations.shared import now_of
from storage import contamination as store


def compute(inputs: Inputs, units: frozenset[str] | None) -> TestPart:
    data = shared.data(inputs)
    sets = None if units is None else {shared.item_set(u) for u in units}
    tested = item_rows(inputs.con, data, sets)
    part = computed_part(inputs.con, split_signals(signal_registry.SIGNALS)[0], data, items=tested, history=None,
                         rng=shared.rng(inputs), now=now_of(inputs), th=shared.TH, holds=shared.holds(inputs),
                         predecessors=shared.predecessors(inputs))
    part.post, part.tested = post_scores(tested, data["cutoffs"], now_of(inputs), shared.TH), tested
    return part


def keep(inputs: Inputs, recomputed: frozenset[str]) -> tuple[TestPart, frozenset[str]]:
    """The last run's tests, not-tested models and post-cutoff scores of the item sets not
    recomputed (their windows ending now); the item sets whose stored tests cannot stand in."""
    bad = shared.unusable(inputs)
    again = frozenset(shared.item_key(s, b) for sig, s, b in zip(bad["signal"], bad["source"], bad["benchmark"])
                      if sig not in LINKED_SIGNALS) - recomputed
    sets = {shared.item_set(u) for u in recomputed | again}
    stored, skips = shared.last_run(inputs)
    part = stored_part(stored, skips, split_signals(signal_registry.SIGNALS)[0],
                       lambda s, b: (s, b) not in sets, shared.TH)
    post = store.read_last_post_scores(inputs.con)
    post = post[[(s, b) not in sets for s, b in zip(post["source"], post["benchmark"])]]
    part.post = post.assign(window_end=now_of(inputs)) if len(post) else None
    return part, again


RELATION = Relation("item_tests", ITEM_SET, compute, keep=keep)

"""Relation: the contamination run (model dates, post-cutoff slices and scores, the signals' tests
with their family-wide BH correction, flags and statuses, the item sets' calibrations, the
suspicion states: jobs/contamination.py.finish_run), on the step as one unit, the whole analysis:
recomputed when any input changed, moved to the day otherwise (its newest run's `run_at`, its
post-cutoff windows' end, its open suspicions' `updated_at`).

Its tests are the rows of two relations before it, each kept or recomputed by the step per unit:
`item_tests` (per item set) and `link_tests` (A1/A2, one unit); a kept unit's stored tests enter
the family-wide correction with their stored p-values. The run writes itself (a new run_id).
"""

from __future__ import annotations

import pandas as pd

from analysis.constants import SUSPICION_STATES
from jobs.contamination import finish_run
from jobs.relations import signals as shared
from jobs.relations.base import ANALYSIS, Inputs, Relation
from jobs.relations.shared import now_of
from storage import contamination as store

# the suspicion state a day move leaves alone
RESOLVED_STATE = SUSPICION_STATES[2]
PARTS = ("item_tests", "link_tests")     # the relations whose tests the run carries


def compute(inputs: Inputs, units: frozenset[str] | None) -> pd.DataFrame:
    """The run, written (storage.contamination.store_contamination_run); its signal tests."""
    parts = [p for name in PARTS for p in (inputs.kept.get(name), inputs.computed.get(name)) if p is not None]
    return finish_run(inputs.con, now=now_of(inputs), seed=shared.SEED, th=shared.TH, data=shared.data(inputs),
                      parts=parts, holds=shared.holds(inputs), every_item=inputs.plan.full)


def to_day(inputs: Inputs, recomputed: frozenset[str]) -> None:
    store.move_run_to_day(inputs.con, inputs.now, resolved_state=RESOLVED_STATE)


RELATION = Relation("contamination", ANALYSIS, compute, None, to_day)

"""Relation: the contamination run (model dates, post-cutoff slices and scores, every registered
signal's tests, the suspicion states: jobs/contamination.py), on the step as one unit, the whole
analysis: recomputed when any input changed, moved to the day otherwise (its newest run's
`run_at`, its post-cutoff windows' end, its open suspicions' `updated_at`).

The remaining hand-written case: inside the run, the A3 item groups whose fingerprint changed
(`Plan.a3_groups`) are tested again and A1/A2 (which read reference benchmarks across tables and
draw from one random stream) are recomputed as a whole only when a changed table's benchmark has
or is a reference (`Plan.link`); every other test is the stored one and enters the family-wide
correction with its stored p-value (analysis.contamination.reuse), and the run writes itself.
Moving it onto the step's units ('a3', 'link') is the next case.
"""

from __future__ import annotations

import pandas as pd

from analysis.constants import SUSPICION_STATES
from jobs.relations.base import ANALYSIS, Inputs, Relation
from storage import contamination as store

# the suspicion state a day move leaves alone (analysis.constants, not the contamination package: it imports scipy)
RESOLVED_STATE = SUSPICION_STATES[2]


def compute(inputs: Inputs, units: frozenset[str] | None) -> pd.DataFrame:
    """The run, written (storage.contamination.store_contamination_run); its signal tests."""
    from jobs.contamination import run_contamination
    plan = inputs.plan
    if plan.full:
        return run_contamination(inputs.con, now=inputs.now)
    return run_contamination(inputs.con, now=inputs.now, fresh_a3=plan.a3_groups, fresh_link=plan.link,
                             latest=inputs.latest)


def to_day(inputs: Inputs, recomputed: frozenset[str]) -> None:
    store.move_run_to_day(inputs.con, inputs.now, resolved_state=RESOLVED_STATE)


RELATION = Relation("contamination", ANALYSIS, compute, None, to_day)

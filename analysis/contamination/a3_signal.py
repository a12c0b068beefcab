"""A3 as a registered signal (analysis.contamination.SIGNALS): its tests (analysis.contamination.a3)
and its placebo (analysis.contamination.a3_placebo), which builds on the tests' statistic."""

from __future__ import annotations

import pandas as pd

from analysis.contamination.a3 import a3_tests
from analysis.contamination.a3_placebo import a3_placebo
from analysis.contamination.base import PLACEBO_COLUMNS, Signal, SignalInputs, SignalTest, Thresholds


def _tests(inputs: SignalInputs, th: Thresholds) -> list[SignalTest]:
    if not inputs.has_items:
        return []
    return a3_tests(inputs.items, inputs.cutoffs, now=inputs.now, th=th, skipped=inputs.skipped)


def _placebo(inputs: SignalInputs, th: Thresholds, trials: int) -> pd.DataFrame:
    if not inputs.has_items:
        return pd.DataFrame(columns=PLACEBO_COLUMNS)
    return a3_placebo(inputs.items, inputs.cutoffs, rng=inputs.rng, now=inputs.now, trials=trials, th=th)


SIGNAL = Signal(name="A3", tests=_tests, placebo=_placebo,
                floors=("a3_min_items", "a3_min_ref_models", "guard_days"))

"""Contamination-suspect signals A1, A2, A3 with false-positive control (docs/statistics.md, "Contamination-suspect signals").

Every result is a *suspect*, never a verdict: a flag means the data are hard to explain
without contamination, and it carries its evidence (effect, CI, p, q, n per side, reference
models, parameters, snapshot ids).

- A3 (item-level, dated items): E_m = G_m - G_ref, G = mean pass before minus after the
  cutoff, G_ref = the same gap of clean reference models (cutoff + g before every item of the
  pre window, cutoff trust 'stated' or 'inferred', never a placeholder date), ability-matched,
  which removes difficulty drift (LCB's later releases are harder); contest-clustered z,
  referred to the null scale of the references' own placebo z's (t with R df).
- A1 (aggregate, ConStat analogue): δ = s_{m,b} - σ(f_b(x_m)), x_m = mean logit score on b's
  reference benchmarks, f_b a monotone link fitted on >= 8 reference models, never predicting
  below b's chance level (chance is a floor, not a point of the link); prediction-scale t test.
- A2 (jump): J = Δ - Δ̂ for a model over its predecessor or between two snapshots,
  z_J = J / sqrt(SE_new² + SE_old² + σ_f²).

False-positive control: effect >= 5 pp and >= 2·SE, Benjamini–Hochberg q <= 0.05 within
each signal's family (A1, A2, A3 separately), data floors, and a status that says whether the flag persisted
over two snapshots or is corroborated by a second signal or source.

Pure: DataFrames in, DataFrames out; randomness only from the `rng` passed in.

Layout (signals as plug-ins, the pattern of `scrapers.SOURCES`): `base` (thresholds, the test
record and its one builder, the `Signal` declaration, the inputs and the one preparation of
scores), `numerics` (links, BH, CIs), `link` (the A1/A2 link data and reference pools), one
module per signal exposing `SIGNAL` (`a1`, `a2`, `a3_signal`: A3's test is `a3`, its placebo
`a3_placebo`, its calibration per item set `set_calibration`), `families` (BH per family, flags,
status) and `run` (`run_signals`, `calibrate`), which iterate `SIGNALS` below. Adding a
statistic: README "Add a statistic".
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from analysis.contamination import a1, a2, a3_signal
from analysis.contamination.a1 import a1_a2_placebo, a1_one, a1_tests
from analysis.contamination.a2 import a2_one, a2_predecessor_tests, a2_snapshot_tests, link_placebo
from analysis.contamination.a3 import (
    a3_core,
    a3_one,
    a3_tests,
    ability_weights,
    did_test,
    reference_cutoffs,
    reference_placebo_p,
    smoother_weights,
)
from analysis.contamination.a3_placebo import a3_placebo
from analysis.contamination.base import (
    PLACEBO_COLUMNS,
    RESULT_COLUMNS,
    STATUSES,
    Prepared,
    Signal,
    SignalInputs,
    SignalTest,
    Thresholds,
    prepare,
    prepare_benchmarks,
    prepare_scores,
    signal_test,
)
from analysis.contamination.families import family_q_values, finalize
from analysis.contamination.numerics import (  # noqa: F401  (tests patch and call these)
    _isotonic_predict,
    _isotonic_predict_batch,
    _link_predict,
    isotonic_fit_batch,
    jsonable,
    pava,
)
from analysis.contamination import run as _run
from analysis.fdr import benjamini_hochberg  # noqa: F401 - part of the package's API (tests call it)

# One line per signal. Adding a statistic: write analysis/contamination/<name>.py exposing SIGNAL,
# add it here. The order is the order placebos draw from the shared rng (A3 first, as before the
# split, so seeded calibrations are unchanged).
SIGNALS: tuple[Signal, ...] = (
    a3_signal.SIGNAL,
    a1.SIGNAL,
    a2.SIGNAL,
)
# The signals that read scores across tables (a benchmark's reference benchmarks): an analysis
# keeps or recomputes their tests as one unit, A1/A2's link (jobs/relations/link_tests.py); every
# other signal's tests are kept or recomputed per item set (source, benchmark; item_tests.py).
LINKED_SIGNALS = frozenset({"A1", "A2"})


def run_signals(*args: Any, **kwargs: Any) -> pd.DataFrame:
    """`run.run_signals` over the registered SIGNALS (read at call time: a test may extend them)."""
    return _run.run_signals(*args, signals=SIGNALS, **kwargs)


def calibrate(*args: Any, **kwargs: Any) -> pd.DataFrame:
    """`run.calibrate` over the registered SIGNALS (read at call time)."""
    return _run.calibrate(*args, signals=SIGNALS, **kwargs)


def summarize_placebo(placebo: pd.DataFrame, trials: int, th: Thresholds = Thresholds(),
                      signals: Any = None) -> pd.DataFrame:
    """`run.summarize_placebo`, one row per registered signal by default."""
    return _run.summarize_placebo(placebo, trials, th, signals=signal_names() if signals is None else signals)


def signal_names() -> tuple[str, ...]:
    """The registered signals' names, sorted (A1, A2, A3)."""
    return tuple(sorted(s.name for s in SIGNALS))


__all__ = [
    "SIGNALS", "LINKED_SIGNALS", "STATUSES", "RESULT_COLUMNS", "PLACEBO_COLUMNS", "Signal", "SignalInputs", "SignalTest", "Thresholds",
    "Prepared", "prepare", "prepare_benchmarks", "prepare_scores", "signal_test", "run_signals", "calibrate",
    "summarize_placebo", "finalize", "family_q_values", "benjamini_hochberg", "jsonable", "pava",
    "isotonic_fit_batch", "a1_tests", "a1_one", "a1_a2_placebo", "link_placebo", "a2_one", "a2_predecessor_tests",
    "a2_snapshot_tests", "a3_core", "a3_one", "a3_tests", "a3_placebo", "ability_weights", "did_test",
    "reference_cutoffs", "reference_placebo_p", "smoother_weights", "signal_names",
]

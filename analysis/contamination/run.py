"""Running the registered signals (`run_signals`) and calibrating them on placebos (`calibrate`,
`summarize_placebo`). Both iterate the signals they are given: the package's registry
(`analysis.contamination.SIGNALS`, read at call time by its wrappers)."""

from __future__ import annotations

from dataclasses import asdict
from functools import partial
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from analysis.constants import CALIBRATION_TRIALS
from analysis.contamination.base import log, PLACEBO_COLUMNS, SKIP_COLUMNS, Signal, SignalInputs, SignalTest, Thresholds
from analysis.contamination.families import TestKey, finalize, previous_tests
from analysis.contamination.numerics import _share_ci, _wilson
from analysis.contamination.suspicions import by_key
from analysis.cutoffs import benchmark_slices
from analysis.fdr import benjamini_hochberg


def _slices_or_none(benchmarks: pd.DataFrame | None, cutoffs: pd.DataFrame, th: Thresholds) -> pd.DataFrame | None:
    if benchmarks is None or "material_date" not in benchmarks.columns or cutoffs.empty:
        return None
    return benchmark_slices(benchmarks, cutoffs, guard_days=th.guard_days)


def run_signals(scores: pd.DataFrame | None, items: pd.DataFrame | None, cutoffs: pd.DataFrame,
                benchmarks: pd.DataFrame | None, previous_flags: pd.DataFrame | None, *,
                rng: np.random.Generator, now: pd.Timestamp, history: pd.DataFrame | None = None,
                predecessors: pd.DataFrame | None = None, th: Thresholds = Thresholds(),
                signals: Sequence[Signal] = (), suspicions: pd.DataFrame | None = None,
                stored: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every signal of `signals` (the package passes its registry, `analysis.contamination.SIGNALS`)
    the data allow, one BH family per signal, flags and statuses: `signal_tests`, then
    `family_results`.

    scores: latest scores (source, benchmark, model, score, n_items, stderr, metric, snapshot_id);
    items: dated item results (source, benchmark, model, item_id, item_date, score, snapshot_id);
    cutoffs: `analysis.cutoffs.resolve_model_dates` output; benchmarks: benchmark,
    reference_benchmarks, n_items, chance, material_date[, material_start]; previous_flags: the
    previous run's output (model, benchmark, signal, source, detail, status, flagged, effect, se,
    ci_low, ci_high, p_value, evidence); stored: the newest stored test of each key (same
    columns; by default `previous_flags`): a test on its data keeps its stored numbers and flag
    and is not computed again where its signal can skip it (families.finalize, holdable);
    suspicions: the stored suspicion states (suspicions.py), which decide `persisted`; history: all
    snapshots' scores (+ observed_at, setting) for A2 re-score jumps; predecessors: (model,
    predecessor) for A2 family jumps.

    Returns one row per test: model, benchmark, source, signal, detail, effect, se, ci_low, ci_high,
    p_value, q_value, flagged, status, evidence (JSON-serializable dict).
    """
    previous = previous_tests(previous_flags)
    holds = previous if stored is None else previous_tests(stored)
    inputs = signal_inputs(scores, items, cutoffs, benchmarks, rng=rng, now=now, history=history,
                           predecessors=predecessors, th=th, stored=holds)
    tests = signal_tests(inputs, th, signals)
    return family_results(tests, inputs.skipped, previous, th, signals=signals, suspicions=suspicions, stored=holds)


def signal_inputs(scores: pd.DataFrame | None, items: pd.DataFrame | None, cutoffs: pd.DataFrame,
                  benchmarks: pd.DataFrame | None, *, rng: np.random.Generator, now: pd.Timestamp,
                  history: pd.DataFrame | None = None, predecessors: pd.DataFrame | None = None,
                  th: Thresholds = Thresholds(), stored: Mapping[TestKey, dict] | None = None) -> SignalInputs:
    """What the signals test on (`run_signals`' arguments; `stored`: families.previous_tests of the
    stored tests a run may hold); the slices are computed on first use."""
    return SignalInputs(scores=scores, items=items, cutoffs=cutoffs, benchmarks=benchmarks, now=now, rng=rng,
                        history=history, predecessors=predecessors,
                        slices_from=partial(_slices_or_none, benchmarks, cutoffs, th), stored=stored)


def signal_tests(inputs: SignalInputs, th: Thresholds, signals: Sequence[Signal]) -> list[SignalTest]:
    """The tests of `signals` on `inputs`, in their order (they draw from `inputs.rng` in it);
    the models they could not test are appended to `inputs.skipped`."""
    tests: list[SignalTest] = []
    for signal in signals:
        tests += signal.tests(inputs, th)
    return tests


def family_results(tests: list[SignalTest], skipped: list[dict],
                   previous: pd.DataFrame | Mapping[TestKey, dict] | None, th: Thresholds, *,
                   signals: Sequence[Signal], suspicions: pd.DataFrame | None = None,
                   stored: pd.DataFrame | Mapping[TestKey, dict] | None = None) -> pd.DataFrame:
    """The tests of one run (computed, or stored ones standing in: analysis.contamination.reuse)
    with their family-wide BH q-values, flags and statuses (families.finalize); the models not
    tested (`skipped`) in the frame's attrs["skipped"]."""
    out = finalize(tests, previous, th, families={s.name: s.family for s in signals},
                   suspicions=by_key(suspicions) if suspicions is not None else None, stored=stored)
    out.attrs["skipped"] = pd.DataFrame(skipped, columns=SKIP_COLUMNS)
    counts = out.groupby("signal")["flagged"].agg(["size", "sum"]) if not out.empty else None
    log.info("[contamination] %d test(s); flagged per signal: %s", len(out),
             {} if counts is None else {s: f"{int(r['sum'])}/{int(r['size'])}" for s, r in counts.iterrows()})
    return out


def summarize_placebo(placebo: pd.DataFrame, trials: int, th: Thresholds = Thresholds(),
                      signals: Sequence[str] | None = None) -> pd.DataFrame:
    """Per signal: share of placebo p below 0.01 and 0.05 (CI), the family-wise false-flag
    rate per trial after BH alone (q <= fdr_q within the signal's family) and after the full
    flag rule, each with a 95 % CI. `ok` is False when a share or the BH-only rate exceeds its
    nominal level (0.01, 0.05, fdr_q) beyond its CI (the CI's lower bound is above it).
    One row per signal name of `signals` (default: those present in `placebo`), ordered by name.

    `units`: the distinct placebo models (source, benchmark, model). A clean model keeps its own
    offset at every fake cutoff, so its placebo tests are one unit, not many; `p05_unit_lo/hi` is
    the share's CI with those units as clusters (t with units − 1 df): how far from 5 % a
    calibrated test's rate may fall on a history with that few clean models (the --power target
    check reads it; the exit rule keeps the trial-clustered CI)."""
    rows = []
    if signals is None:
        signals = sorted(set(placebo["signal"])) if len(placebo) else []
    for signal in sorted(signals):
        sub = placebo[placebo["signal"] == signal] if len(placebo) else placebo
        row: dict[str, Any] = {"signal": signal, "trials": trials, "tests": len(sub)}
        if len(sub) == 0:
            rows.append({**row, "ok": None})
            continue
        per_trial = sub.groupby("trial")
        n = per_trial.size().to_numpy(float)
        for level, name in ((0.01, "p01"), (0.05, "p05")):
            hits = per_trial["p_value"].apply(lambda p: float((p < level).sum())).to_numpy(float)
            row[name], row[f"{name}_lo"], row[f"{name}_hi"] = _share_ci(hits, n)
        any_bh, any_rule = 0, 0
        for _, t in per_trial:
            q = benjamini_hochberg(t["p_value"])
            bh = np.isfinite(q) & (q <= th.fdr_q)
            rule = bh & (t["effect"].to_numpy() >= th.min_effect) & \
                (t["effect"].to_numpy() >= th.min_effect_se * t["se"].to_numpy()) & t["gate"].to_numpy(bool)
            any_bh += int(bh.any())
            any_rule += int(rule.any())
        keys = [c for c in ("source", "benchmark", "model") if c in sub.columns]
        if "model" in keys:       # a frame without models (built by hand) has no units to count
            per_unit = sub.assign(**{k: sub[k].fillna("").astype(str) for k in keys}).groupby(keys)["p_value"]
            row["units"] = per_unit.ngroups
            _, row["p05_unit_lo"], row["p05_unit_hi"] = _unit_share_ci(
                per_unit.apply(lambda p: float((p < 0.05).sum())).to_numpy(float), per_unit.size().to_numpy(float))
        k = per_trial.ngroups
        row["trials_tested"] = k
        row["fw_bh"], row["fw_bh_lo"], row["fw_bh_hi"] = _wilson(any_bh, k)
        row["fw_rule"], row["fw_rule_lo"], row["fw_rule_hi"] = _wilson(any_rule, k)
        row["ok"] = bool(row["p01_lo"] <= 0.01 and row["p05_lo"] <= 0.05 and row["fw_bh_lo"] <= th.fdr_q)
        rows.append(row)
    cols = ["signal", "trials", "trials_tested", "tests", "p01", "p01_lo", "p01_hi", "p05", "p05_lo", "p05_hi",
            "fw_bh", "fw_bh_lo", "fw_bh_hi", "fw_rule", "fw_rule_lo", "fw_rule_hi", "ok", "units",
            "p05_unit_lo", "p05_unit_hi"]
    return pd.DataFrame(rows).reindex(columns=cols)


def _unit_share_ci(hits: np.ndarray, n: np.ndarray) -> tuple[float, float, float]:
    """`_share_ci` with placebo models as the clusters and t_{units−1} for the few of them (one
    unit: no interval, [0, 1])."""
    from scipy import stats   # on first use: a heavy import most commands never need
    if len(n) < 2:
        p = float(hits.sum() / n.sum()) if n.sum() else float("nan")
        return p, 0.0, 1.0
    return _share_ci(hits, n, z=float(stats.t.ppf(0.975, len(n) - 1)))


def calibrate(scores: pd.DataFrame | None, items: pd.DataFrame | None, cutoffs: pd.DataFrame,
              benchmarks: pd.DataFrame | None, *, rng: np.random.Generator, now: pd.Timestamp,
              trials: int = CALIBRATION_TRIALS, th: Thresholds = Thresholds(),
              bootstrap_b: int | None = None, signals: Sequence[Signal] = ()) -> pd.DataFrame:
    """Placebo calibration of every signal of `signals` (the package passes its registry) (`Signal.placebo`, `summarize_placebo`).

    Every placebo test is a false positive by construction; the summary says whether the
    p-values are as uniform as they claim (share below 0.01 and 0.05) and how often a trial's
    family would raise at least one flag. Placebos run in the order of SIGNALS (they share
    `rng`); a placebo function shared by several signals (A1 and A2) runs once.
    """
    th_run = Thresholds(**{**asdict(th), "bootstrap_b": bootstrap_b or th.bootstrap_b})
    inputs = SignalInputs(scores=scores, items=items, cutoffs=cutoffs, benchmarks=benchmarks, now=now, rng=rng)
    frames: list[pd.DataFrame] = []
    done: list = []
    for signal in signals:
        if signal.placebo is None or any(signal.placebo is f for f in done):
            continue
        done.append(signal.placebo)
        frames.append(signal.placebo(inputs, th_run, trials))
    frames = [f for f in frames if len(f)]
    placebo = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=PLACEBO_COLUMNS)
    out = summarize_placebo(placebo, trials, th, signals=[s.name for s in signals])
    log.info("[contamination] placebo calibration over %d trial(s): %s", trials,
             out[["signal", "tests", "p05", "fw_bh", "ok"]].to_dict("records"))
    return out

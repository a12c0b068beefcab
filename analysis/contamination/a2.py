"""A2 (jump): J = Δ - Δ̂ of a model over its predecessor, or of a re-scored entry between two
snapshots. docs/statistics.md, A2."""

from __future__ import annotations

from typing import Iterable

import numpy as np
import pandas as pd
from scipy import stats

from analysis.contamination.a1 import a1_a2_placebo
from analysis.contamination.base import (
    _a1_pairs_to_skip,
    log,
    PLACEBO_COLUMNS,
    prepare,
    prepare_scores,
    Prepared,
    Signal,
    signal_test,
    SignalInputs,
    SignalTest,
    Thresholds,
)
from analysis.contamination.link import _link_data, _LinkData, _loo_residuals, _with_anchor, _x_of, _xy
from analysis.contamination.numerics import _Z95, _link_predict, _logit, _sigmoid
from analysis.cutoffs import as_dates, require_columns


def a2_one(s_new: float, se_new: float, s_old: float, se_old: float, x_new: float, x_old: float,
           link: _LinkData, *, kind: str = "predecessor") -> dict:
    """J = Δ - Δ̂ with Δ̂ = σ(f(x_new)) - σ(f(x_old)).

    Re-score of one model (kind 'rescore'): its own deviation from the link cancels,
    z_J = J / sqrt(SE_new² + SE_old² + σ_f²), normal. Two models (kind 'predecessor'): J carries
    both models' deviations from the link, so var J = SE_new² + SE_old² + 2 s_LOO² (s_LOO² = the
    references' mean squared leave-one-out residual, as in A1; conservative, the binomial part
    is counted twice) and p = P(t_{R-1} > z_J). With σ_f² alone, random model pairs drew
    p < 0.01 in 11 % of real-data placebo tests.
    """
    x, y = _xy(link.s_ref, link.n_ref)
    xa, ya = _with_anchor(x[None, :], y[None, :], link.anchor)
    pred = _sigmoid(_link_predict(xa, ya, [[x_new, x_old]], isotonic=link.isotonic, floor=link.floor))[0]
    fitted = _sigmoid(_link_predict(xa, ya, x[None, :], isotonic=link.isotonic, floor=link.floor))[0]
    sigma_f = float(np.std(link.s_ref[:, 0] - fitted, ddof=1))
    delta = s_new - s_old
    expected = float(pred[0] - pred[1])
    jump = delta - expected
    loo = _loo_residuals(x, y, link) if kind == "predecessor" else np.array([])
    s_loo = float(np.sqrt(np.mean(loo ** 2))) if len(loo) else None
    if s_loo is not None:
        se = float(np.sqrt(se_new ** 2 + se_old ** 2 + 2 * s_loo ** 2))
        df = max(len(link.refs) - 1, 1)
        z = jump / se if se > 0 else float("nan")
        p_value, crit = float(stats.t.sf(z, df)), float(stats.t.ppf(0.975, df))
    else:
        se = float(np.sqrt(se_new ** 2 + se_old ** 2 + sigma_f ** 2))
        df = None
        z = jump / se if se > 0 else float("nan")
        p_value, crit = float(stats.norm.sf(z)), _Z95
    raw_se = float(np.sqrt(se_new ** 2 + se_old ** 2))
    return {"effect": jump, "se": se, "z": z, "p_value": p_value, "loo_scale": s_loo, "null_df": df,
            "ci_low": jump - crit * se, "ci_high": jump + crit * se,
            "raw_jump": delta, "raw_z": delta / raw_se if raw_se > 0 else None,
            "expected_jump": expected, "score_new": s_new, "score_old": s_old, "se_new": se_new,
            "se_old": se_old, "sigma_f": sigma_f, "x_new": x_new, "x_old": x_old,
            "reference_models": link.refs, "reference_benchmarks": link.ref_benchmarks,
            "n_reference_models": len(link.refs), "link": "isotonic" if link.isotonic else "logit_linear",
            "chance_anchor": link.anchor, "chance_floor": _sigmoid(link.floor) if link.floor is not None else None}


def a2_predecessor_tests(scores: pd.DataFrame, benchmarks: pd.DataFrame, predecessors: pd.DataFrame, *,
                         slices: pd.DataFrame | None = None, th: Thresholds = Thresholds(),
                         pairs: Iterable[tuple[str, str, str]] | None = None,
                         prepared: Prepared | None = None) -> list[SignalTest]:
    """A2 for each (model, predecessor) pair on each benchmark with references, per source.

    `pairs` (model, predecessor, benchmark) replaces `predecessors` (placebo calibration).
    """
    p = prepared or prepare(scores, benchmarks)
    bench, s, table = p.bench, p.scores, p.table
    skip = _a1_pairs_to_skip(slices)
    if pairs is None:
        require_columns(predecessors, ("model", "predecessor"), "predecessors")
        wanted = {(m, p, None) for m, p in zip(predecessors["model"], predecessors["predecessor"])
                  if isinstance(m, str) and isinstance(p, str) and m != p}
    else:
        wanted = set(pairs)
    tests = []
    for (source, b), rows in s.groupby(["source", "benchmark"], sort=True):
        refs_b = p.reference_benchmarks(b)
        if not refs_b:
            continue
        by_model = rows.set_index("model")
        for new, old, only_b in sorted(wanted, key=str):
            if (only_b is not None and only_b != b) or new not in by_model.index or old not in by_model.index:
                continue
            if (new, b) in skip:
                continue
            both = [r for r in refs_b if all(m in table.score.index and pd.notna(table.score.at[m, r])
                                             for m in (new, old))]
            link, why = _link_data(b, rows, table, bench, both, {new, old}, th)
            if link is None:
                log.debug("[contamination] A2 %s/%s %s over %s not tested: %s", source or "-", b, new, old, why)
                continue
            rn, ro = by_model.loc[new], by_model.loc[old]
            res = a2_one(float(rn["score"]), float(rn["se"]), float(ro["score"]), float(ro["se"]),
                         _x_of(table, new, both), _x_of(table, old, both), link)
            res.update({"kind": "predecessor", "predecessor": old})
            detail = f"predecessor {old}"
            snaps = set(link.snapshot_ids) | {int(v) for v in (rn.get("snapshot_id"), ro.get("snapshot_id"))
                                              if v is not None and pd.notna(v)}
            tests.append(signal_test("A2", new, b, source, res, snapshot_ids=snaps, detail=detail,
                                     gate=bool(np.isfinite(res["z"]) and res["z"] >= th.a2_min_z)))
    return tests


def a2_snapshot_tests(history: pd.DataFrame, scores: pd.DataFrame, benchmarks: pd.DataFrame, *,
                      slices: pd.DataFrame | None = None, th: Thresholds = Thresholds(),
                      prepared: Prepared | None = None) -> list[SignalTest]:
    """A2 for re-scored entries: the newest change of a (source, benchmark, model, setting) series.

    x_old / x_new are the model's reference-benchmark scores as of each snapshot's time (latest
    score observed by then, any source), so an unchanged model has Δ̂ = 0. Entries whose setting
    (harness, prompt, edit format) differs are different series and never compared.
    """
    require_columns(history, ("snapshot_id", "observed_at", "benchmark", "model", "score"), "score history")
    p = prepared or prepare(scores, benchmarks)
    bench, s, table = p.bench, p.scores, p.table
    h = history.copy()
    h["observed_at"] = as_dates(h["observed_at"], "score history: observed_at")
    hs = prepare_scores(h, bench, "score history", by_setting=True)
    skip = _a1_pairs_to_skip(slices)
    tests = []
    hs = hs.sort_values(["observed_at", "snapshot_id"])
    for (source, b, m, setting), series in hs.groupby(["source", "benchmark", "model", "setting"], sort=True):
        series = series.drop_duplicates("snapshot_id", keep="last")
        if len(series) < 2 or (m, b) in skip:
            continue
        new, old = series.iloc[-1], series.iloc[-2]
        if new["score"] == old["score"]:
            continue
        refs_b = [r for r in bench["reference_benchmarks"].get(b, ()) if r != b]
        asof = {}
        for label, t in (("new", new["observed_at"]), ("old", old["observed_at"])):
            seen = hs[(hs["model"] == m) & hs["benchmark"].isin(refs_b) & (hs["observed_at"] <= t)]
            latest = seen.sort_values(["observed_at", "score"]).groupby("benchmark").tail(1)
            asof[label] = latest.set_index("benchmark")
        both = [r for r in refs_b if r in asof["new"].index and r in asof["old"].index and r in table.score.columns]
        rows = s[(s["source"] == source) & (s["benchmark"] == b)]
        link, why = _link_data(b, rows, table, bench, both, {m}, th)
        if link is None:
            log.debug("[contamination] A2 %s/%s %s snapshot jump not tested: %s", source or "-", b, m, why)
            continue
        x = {k: float(_logit(v.loc[both, "score"].to_numpy(float), v.loc[both, "n"].to_numpy(float)).mean())
             for k, v in asof.items()}
        res = a2_one(float(new["score"]), float(new["se"]), float(old["score"]), float(old["se"]),
                     x["new"], x["old"], link, kind="rescore")
        res.update({"kind": "snapshot", "setting": setting, "snapshot_new": int(new["snapshot_id"]),
                    "snapshot_old": int(old["snapshot_id"]), "observed_new": new["observed_at"],
                    "observed_old": old["observed_at"]})
        snaps = set(link.snapshot_ids) | {int(new["snapshot_id"]), int(old["snapshot_id"])}
        tests.append(signal_test("A2", m, b, source, res, snapshot_ids=snaps, detail=f"rescore {setting}".rstrip(),
                                 gate=bool(np.isfinite(res["z"]) and res["z"] >= th.a2_min_z)))
    return tests


def _tests(inputs: SignalInputs, th: Thresholds) -> list[SignalTest]:
    if not inputs.has_scores:
        return []
    tests = []
    if inputs.predecessors is not None and not inputs.predecessors.empty:
        tests += a2_predecessor_tests(inputs.scores, inputs.benchmarks, inputs.predecessors, slices=inputs.slices,
                                      th=th, prepared=inputs.prepared)
    if inputs.history is not None and not inputs.history.empty:
        tests += a2_snapshot_tests(inputs.history, inputs.scores, inputs.benchmarks, slices=inputs.slices, th=th,
                                   prepared=inputs.prepared)
    return tests


# A2's placebo is drawn together with A1's (the same reference pools): the same function object,
# so `calibrate` runs it once.
def link_placebo(inputs: SignalInputs, th: Thresholds, trials: int) -> pd.DataFrame:
    """The placebo A1 and A2 share (one draw of reference pools per trial; `a1.a1_a2_placebo`):
    its frame holds both signals' placebo tests, so A1 declares none of its own."""
    if not inputs.has_scores:
        return pd.DataFrame(columns=PLACEBO_COLUMNS)
    return a1_a2_placebo(inputs.scores, inputs.benchmarks, rng=inputs.rng, trials=trials, th=th,
                         pair_tests=a2_predecessor_tests)


SIGNAL = Signal(name="A2", tests=_tests, placebo=link_placebo, floors=("a1_min_ref_models",))

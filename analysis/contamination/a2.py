"""A2 (jump): J = Δ - Δ̂ of a model over its predecessor, or of a re-scored entry between two
snapshots. docs/statistics.md, A2."""

from __future__ import annotations

from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from analysis.contamination.a1 import a1_a2_placebo, score_groups
from analysis.contamination.base import (
    _a1_pairs_to_skip,
    data_hash,
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
    from scipy import stats   # imported when used: an analysis that computes no contamination test needs none of it
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
                         prepared: Prepared | None = None,
                         groups: Sequence[tuple[Any, pd.DataFrame]] | None = None) -> list[SignalTest]:
    """A2 for each (model, predecessor) pair on each benchmark with references, per source.

    `pairs` (model, predecessor, benchmark) replaces `predecessors` (placebo calibration).
    `groups`: the prepared scores split by (source, benchmark) (`a1.score_groups`), when the caller
    has them (a placebo's trials).
    """
    p = prepared or prepare(scores, benchmarks)
    bench, table = p.bench, p.table
    skip = _a1_pairs_to_skip(slices)
    if pairs is None:
        require_columns(predecessors, ("model", "predecessor"), "predecessors")
        wanted: set[tuple[str, str, str | None]] = {(m, p, None) for m, p in zip(predecessors["model"], predecessors["predecessor"])
                  if isinstance(m, str) and isinstance(p, str) and m != p}
    else:
        wanted = set(pairs)
    # a benchmark no pair names is read only when a pair is of every benchmark (only_b None)
    named = None if any(only_b is None for *_, only_b in wanted) else {only_b for *_, only_b in wanted}
    tests = []
    for (source, b), rows in (score_groups(p) if groups is None else groups):
        if named is not None and b not in named:
            continue
        refs_b = p.reference_benchmarks(b)
        if not refs_b:
            continue
        by_model = rows.set_index("model")
        for new, old, only_b in sorted(wanted, key=str):
            if (only_b is not None and only_b != b) or new not in by_model.index or old not in by_model.index:
                continue
            if (new, b) in skip:
                continue
            on_old = set(table.scored(old, refs_b))
            both = [r for r in table.scored(new, refs_b) if r in on_old]
            link, why = _link_data(b, rows, table, bench, both, {new, old}, th)
            if link is None:
                log.debug("[contamination] A2 %s/%s %s over %s not tested: %s", source or "-", b, new, old, why)
                continue
            rn, ro = by_model.loc[new], by_model.loc[old]
            res = a2_one(float(rn["score"]), float(rn["se"]), float(ro["score"]), float(ro["se"]),
                         _x_of(table, new, both), _x_of(table, old, both), link)
            res.update({"kind": "predecessor", "predecessor": old,
                        "data_hash": data_hash(new, old, float(rn["score"]), float(rn["se"]), float(ro["score"]),
                                               float(ro["se"]), link.refs, link.s_ref, link.n_ref, both)})
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

    Cost O(N log N) in the history's rows: the last two snapshots of every series come from one
    sort, and the as-of reference scores from one sorted (model, benchmark, time) index searched
    per tested series (not a filter of the whole history per series).
    """
    require_columns(history, ("snapshot_id", "observed_at", "benchmark", "model", "score"), "score history")
    p = prepared or prepare(scores, benchmarks)
    bench, s, table = p.bench, p.scores, p.table
    h = history.assign(observed_at=as_dates(history["observed_at"], "score history: observed_at"))
    hs = prepare_scores(h, bench, "score history", by_setting=True)
    skip = _a1_pairs_to_skip(slices)
    keys = ["source", "benchmark", "model", "setting"]
    hs = hs.sort_values(["observed_at", "snapshot_id"])
    # every series in key order, its snapshots in time order (one row each: the last of a snapshot)
    ser = hs.dropna(subset=keys).drop_duplicates(keys + ["snapshot_id"], keep="last")
    ser = ser.sort_values(keys, kind="stable").reset_index(drop=True)
    from_end = ser.groupby(keys, sort=False).cumcount(ascending=False).to_numpy()
    old_i = np.flatnonzero(from_end == 1)
    new_i = old_i + 1
    score = ser["score"].to_numpy(float)
    models, benches = ser["model"].to_numpy(object), ser["benchmark"].to_numpy(object)
    keep = (score[new_i] != score[old_i]) & np.array([(m, b) not in skip for m, b in
                                                      zip(models[new_i], benches[new_i])], dtype=bool)
    old_i, new_i = old_i[keep], new_i[keep]
    refs_of = {b: [r for r in bench["reference_benchmarks"].get(b, ()) if r != b] for b in set(benches[new_i])}
    asof = _AsOf(hs, {r for refs in refs_of.values() for r in refs})
    rows_of = {k: g for k, g in s.groupby(["source", "benchmark"], sort=False)}
    no_rows = s.iloc[:0]
    col = {c: ser[c].to_numpy(object) for c in ("source", "setting", "observed_at", "snapshot_id")}
    se = ser["se"].to_numpy(float)
    tests = []
    for io, inew in zip(old_i.tolist(), new_i.tolist()):
        source, b, m, setting = col["source"][inew], benches[inew], models[inew], col["setting"][inew]
        refs_b = refs_of[b]
        t_new, t_old = pd.Timestamp(col["observed_at"][inew]), pd.Timestamp(col["observed_at"][io])
        seen = {"new": asof.latest(m, refs_b, t_new), "old": asof.latest(m, refs_b, t_old)} if refs_b else {}
        both = [r for r in refs_b if r in seen["new"] and r in seen["old"] and r in table.score.columns]
        link, why = _link_data(b, rows_of.get((source, b), no_rows), table, bench, both, {m}, th)
        if link is None:
            log.debug("[contamination] A2 %s/%s %s snapshot jump not tested: %s", source or "-", b, m, why)
            continue
        x = {}
        for label, v in seen.items():
            sn = np.array([v[r] for r in both], dtype=float).reshape(-1, 2)
            x[label] = float(_logit(sn[:, 0], sn[:, 1]).mean())
        res = a2_one(float(score[inew]), float(se[inew]), float(score[io]), float(se[io]),
                     x["new"], x["old"], link, kind="rescore")
        snap_new, snap_old = int(col["snapshot_id"][inew]), int(col["snapshot_id"][io])
        res.update({"kind": "snapshot", "setting": setting, "snapshot_new": snap_new, "snapshot_old": snap_old,
                    "observed_new": t_new, "observed_old": t_old,
                    "data_hash": data_hash(m, setting, float(score[inew]), float(se[inew]), float(score[io]),
                                           float(se[io]), x["new"], x["old"], link.refs, link.s_ref, link.n_ref)})
        snaps = set(link.snapshot_ids) | {snap_new, snap_old}
        tests.append(signal_test("A2", m, b, source, res, snapshot_ids=snaps, detail=f"rescore {setting}".rstrip(),
                                 gate=bool(np.isfinite(res["z"]) and res["z"] >= th.a2_min_z)))
    return tests


class _AsOf:
    """A model's latest score (and n) on a benchmark as of a time, any source or setting: the
    history rows of `benchmarks` sorted by (model, benchmark, observed_at, score), searched by time.
    Among rows of one time the highest score wins (then the later row)."""

    def __init__(self, hs: pd.DataFrame, benchmarks: set[str]) -> None:
        d = hs[hs["benchmark"].isin(list(benchmarks)) & hs["observed_at"].notna() & hs["model"].notna()]
        d = d.sort_values(["model", "benchmark", "observed_at", "score"], kind="stable")
        self.t = d["observed_at"].to_numpy()
        self.score, self.n = d["score"].to_numpy(float), d["n"].to_numpy(float)
        m, b = d["model"].to_numpy(object), d["benchmark"].to_numpy(object)
        starts = np.flatnonzero(np.r_[True, (m[1:] != m[:-1]) | (b[1:] != b[:-1])]) if len(d) else np.array([], int)
        ends = np.r_[starts[1:], len(d)]
        self.span = {(m[i], b[i]): (i, j) for i, j in zip(starts.tolist(), ends.tolist())}

    def latest(self, model: str, benchmarks: list[str], t: pd.Timestamp) -> dict[str, tuple[float, float]]:
        """benchmark -> (score, n) of the model's latest row observed at or before t."""
        out: dict[str, tuple[float, float]] = {}
        if pd.isna(t) or not len(self.t):      # no row at all: no span either
            return out
        t64 = np.datetime64(t).astype(self.t.dtype)
        for r in benchmarks:
            span = self.span.get((model, r))
            if span is None:
                continue
            i = span[0] + int(np.searchsorted(self.t[span[0]:span[1]], t64, side="right")) - 1
            if i >= span[0]:
                out[r] = (self.score[i], self.n[i])
        return out


def _tests(inputs: SignalInputs, th: Thresholds) -> list[SignalTest]:
    if not inputs.can_link:
        return []
    tests = []
    if inputs.predecessors is not None and not inputs.predecessors.empty:
        tests += a2_predecessor_tests(inputs.scores, inputs.benchmarks, inputs.predecessors, slices=inputs.cutoff_slices(),
                                      th=th, prepared=inputs.prepared)
    if inputs.history is not None and not inputs.history.empty:
        tests += a2_snapshot_tests(inputs.history, inputs.scores, inputs.benchmarks, slices=inputs.cutoff_slices(), th=th,
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

"""Contamination-suspect signals A1, A2, A3 with false-positive control (DESIGN §5, METHODS A).

Every result is a *suspect*, never a verdict: a flag means the data are hard to explain
without contamination, and it carries its evidence (effect, CI, p, q, n per side, reference
models, parameters, snapshot ids).

- A3 (item-level, dated items): E_m = G_m - G_ref, G = mean pass before minus after the
  cutoff, G_ref = the same gap of clean reference models (cutoff + g before every item of the
  pre window), ability-matched, which removes difficulty drift (LCB's later releases are
  harder); item-clustered two-proportion z or Fisher exact on effective counts.
- A1 (aggregate, ConStat analogue): δ = s_{m,b} - σ(f_b(x_m)), x_m = mean logit score on b's
  reference benchmarks, f_b a monotone link fitted on >= 8 reference models; parametric
  bootstrap p-value.
- A2 (jump): J = Δ - Δ̂ for a model over its predecessor or between two snapshots,
  z_J = J / sqrt(SE_new² + SE_old² + σ_f²).

False-positive control, over all tests of one run: effect >= 5 pp and >= 2·SE,
Benjamini–Hochberg q <= 0.05, data floors, and a status that says whether the flag persisted
over two snapshots or is corroborated by a second signal or source.

Pure: DataFrames in, DataFrames out; randomness only from the `rng` passed in.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, field
from datetime import date, datetime
from typing import Any, Callable, Iterable

import numpy as np
import pandas as pd
from scipy import stats

from analysis.constants import (
    A1_BOOTSTRAP_B,
    A1_ISOTONIC_MIN_REF,
    A1_MIN_REF_MODELS,
    A1_MIN_TAIL_COUNT,
    A1_MIN_UNIQUE_RESAMPLED,
    A1_ROBUST_Z,
    A1_ROBUST_Z_MIN_BENCHMARKS,
    A2_MIN_Z,
    A3_MIN_ITEMS_PER_SIDE,
    A3_MIN_REF_COVERAGE,
    A3_MIN_REF_MODELS,
    CALIBRATION_MAX_FLAG_RATE,
    CALIBRATION_TRIALS,
    FDR_Q,
    FISHER_MIN_EXPECTED,
    GUARD_BAND_DAYS,
    MIN_EFFECT,
    MIN_EFFECT_SE,
)
from analysis.cutoffs import (
    as_dates,
    benchmark_slices,
    check_proportions,
    guard,
    prepare_items,
    require_columns,
)

log = logging.getLogger("benchwatch.analysis.contamination")

SIGNALS = ("A1", "A2", "A3")
STATUSES = ("corroborated", "persisted", "suspect", "not_flagged")
RESULT_COLUMNS = ["model", "benchmark", "source", "signal", "detail", "effect", "se", "ci_low", "ci_high",
                  "p_value", "q_value", "flagged", "status", "evidence"]
_Z95 = stats.norm.ppf(0.975)


@dataclass(frozen=True)
class Thresholds:
    """Every knob of the signals; stored in each test's evidence."""

    min_effect: float = MIN_EFFECT
    min_effect_se: float = MIN_EFFECT_SE
    fdr_q: float = FDR_Q
    guard_days: int = GUARD_BAND_DAYS
    a3_min_items: int = A3_MIN_ITEMS_PER_SIDE
    a3_min_ref_models: int = A3_MIN_REF_MODELS
    fisher_min_expected: float = FISHER_MIN_EXPECTED
    a1_min_ref_models: int = A1_MIN_REF_MODELS
    a1_min_unique: int = A1_MIN_UNIQUE_RESAMPLED
    a1_isotonic_min_ref: int = A1_ISOTONIC_MIN_REF
    bootstrap_b: int = A1_BOOTSTRAP_B
    a1_robust_z: float = A1_ROBUST_Z
    a1_robust_z_min_benchmarks: int = A1_ROBUST_Z_MIN_BENCHMARKS
    a2_min_z: float = A2_MIN_Z


@dataclass
class SignalTest:
    """One test before multiplicity control; `gate` is the signal's own extra condition."""

    model: str
    benchmark: str
    source: str
    signal: str
    effect: float
    se: float
    p_value: float
    ci_low: float
    ci_high: float
    snapshot_ids: tuple = ()
    gate: bool = True
    evidence: dict = field(default_factory=dict)
    detail: str = ""       # tells apart two tests of one signal on one (model, benchmark, source)


def jsonable(value: Any) -> Any:
    """Evidence values as plain JSON types (numpy scalars, dates, NaN -> null)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, np.ndarray, pd.Index)):
        return [jsonable(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if np.isfinite(value) else None
    if value is None or value is pd.NaT:
        return None
    if isinstance(value, (pd.Timestamp, datetime, date)):
        return value.date().isoformat() if isinstance(value, datetime) else value.isoformat()
    return value


# --- shared numerics -------------------------------------------------------------------------

def _logit(p: np.ndarray, n: np.ndarray | float) -> np.ndarray:
    """logit with the continuity clip p in [0.5/n, 1 - 0.5/n], so 0 % and 100 % stay finite."""
    eps = 0.5 / np.asarray(n, dtype=float)
    q = np.clip(p, eps, 1 - eps)
    return np.log(q) - np.log1p(-q)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def pava(y: np.ndarray, w: np.ndarray | None = None) -> np.ndarray:
    """Pool-adjacent-violators: the non-decreasing fit to y (already ordered by x), weighted."""
    y = np.asarray(y, dtype=float)
    w = np.ones_like(y) if w is None else np.asarray(w, dtype=float)
    vals: list[float] = []
    wts: list[float] = []
    cnts: list[int] = []
    for yi, wi in zip(y, w):
        vals.append(yi)
        wts.append(wi)
        cnts.append(1)
        while len(vals) > 1 and vals[-2] > vals[-1]:
            wsum = wts[-2] + wts[-1]
            merged = (vals[-2] * wts[-2] + vals[-1] * wts[-1]) / wsum
            cnt = cnts[-2] + cnts[-1]
            del vals[-1], wts[-1], cnts[-1]
            vals[-1], wts[-1], cnts[-1] = merged, wsum, cnt
    return np.repeat(vals, cnts)


def _linear_coef(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row-wise least squares y = a + b x with b clipped at 0 (a monotone non-decreasing link)."""
    xm = x.mean(axis=-1, keepdims=True)
    ym = y.mean(axis=-1, keepdims=True)
    sxx = ((x - xm) ** 2).sum(axis=-1)
    sxy = ((x - xm) * (y - ym)).sum(axis=-1)
    slope = np.where(sxx > 0, sxy / np.where(sxx > 0, sxx, 1.0), 0.0)
    slope = np.maximum(slope, 0.0)
    return ym[..., 0] - slope * xm[..., 0], slope


def _isotonic_predict(x: np.ndarray, y: np.ndarray, x_new: np.ndarray) -> np.ndarray:
    """Isotonic fit of y on x, linearly interpolated; beyond the data, the logit-linear slope.

    Flat extrapolation would call every model better than all references "above prediction";
    continuing with the (non-negative) least-squares slope keeps the frontier honest.
    """
    order = np.argsort(x, kind="stable")
    xs, ys = x[order], y[order]
    xu, inv, counts = np.unique(xs, return_inverse=True, return_counts=True)
    yu = np.bincount(inv, weights=ys) / counts
    fit = pava(yu, counts)
    _, slope = _linear_coef(x, y)
    x_new = np.asarray(x_new, dtype=float)
    out = np.interp(x_new, xu, fit)
    out = np.where(x_new < xu[0], fit[0] + slope * (x_new - xu[0]), out)
    return np.where(x_new > xu[-1], fit[-1] + slope * (x_new - xu[-1]), out)


def _link_predict(x: np.ndarray, y: np.ndarray, x_new: np.ndarray, *, isotonic: bool) -> np.ndarray:
    """Monotone link f: x -> y fitted per row. x, y: (B, R) points of B fits; x_new: (B, K) -> (B, K)."""
    x, y, x_new = np.atleast_2d(x), np.atleast_2d(y), np.atleast_2d(np.asarray(x_new, dtype=float))
    if not isotonic:
        a, b = _linear_coef(x, y)
        return a[:, None] + b[:, None] * x_new
    return np.vstack([_isotonic_predict(x[i], y[i], x_new[i]) for i in range(x.shape[0])])


def benjamini_hochberg(p_values: Iterable[float]) -> np.ndarray:
    """BH-adjusted q-values (`scipy.stats.false_discovery_control`); NaN p stays NaN."""
    p = np.asarray(list(p_values), dtype=float)
    q = np.full_like(p, np.nan)
    ok = np.isfinite(p)
    if ok.any():
        q[ok] = stats.false_discovery_control(np.clip(p[ok], 0.0, 1.0), method="bh")
    return q


# --- A3: item-level pre/post gap, difference-in-differences ---------------------------------

def ability_weights(z_refs: np.ndarray, z_model: float) -> tuple[np.ndarray, bool]:
    """Weights w (Σ w = 1) such that Σ w_r G_r is a polynomial fit of the references' gaps
    G_r on their ability z_r, evaluated at the model's ability z_m (a linear smoother).

    z = logit of post-window accuracy. Degree 2 from 5 references (the null gap of a Rasch-like
    item set is hump-shaped in ability), 1 with 4, 0 (the plain mean) with 3. z_m outside the
    references' range is clamped to it (no extrapolation); the flag says so.
    """
    r = len(z_refs)
    deg = 2 if r >= 5 else 1 if r == 4 else 0
    lo, hi = float(np.min(z_refs)), float(np.max(z_refs))
    clamped = bool(z_model < lo or z_model > hi)
    z0 = float(np.clip(z_model, lo, hi))
    x = np.vander(z_refs - z0, deg + 1, increasing=True)
    w = np.linalg.lstsq(x, np.eye(r), rcond=None)[0][0]
    return w, clamped


def did_test(y_pre: np.ndarray, y_post: np.ndarray, a_pre: np.ndarray, a_post: np.ndarray, *,
             fisher_min_expected: float = FISHER_MIN_EXPECTED) -> dict:
    """One-sided test of E = (ȳ_pre - ȳ_post) - G_ref > 0, with items as the sampled units.

    a_i = Σ_r w_r p_ir is the ability-matched clean reference on item i, so that
    G_ref = mean_pre a - mean_post a. Per-item pass fractions are means of ~10 samples of the
    *same* problem; those samples are not independent draws, so counts are never items ×
    samples. Instead:

    - SE(E) is item-clustered and paired: u_i = y_i - a_i, SE² = var(u_pre)/n_pre +
      var(u_post)/n_post. Pairing on the item removes the shared difficulty, and the
      reference's own sampling noise is inside var(u).
    - Effective counts (Rao–Scott design effect): deff = SE² / V_bin, V_bin the binomial
      variance of the two windows with one trial per item; ñ_w = n_w / deff trials, x_w =
      p_w · ñ_w successes, where the post rate is shifted by the reference gap, p*_post =
      ȳ_post + G_ref (what m would score post-cutoff at pre-cutoff difficulty). The binomial
      variance of that 2×2 table equals the item-clustered variance of E.
    - Test: two-proportion z = E / SE; when an expected cell of the effective table is below
      `fisher_min_expected`, one-sided Fisher exact on the rounded effective table instead
      (G_ref enters there as a fixed shift).
    """
    n_pre, n_post = len(y_pre), len(y_post)
    p_pre, p_post = float(np.mean(y_pre)), float(np.mean(y_post))
    g_ref = float(np.mean(a_pre) - np.mean(a_post))
    effect = (p_pre - p_post) - g_ref
    u_pre, u_post = y_pre - a_pre, y_post - a_post
    se = float(np.sqrt(np.var(u_pre, ddof=1) / n_pre + np.var(u_post, ddof=1) / n_post))
    p_star = float(np.clip(p_post + g_ref, 0.0, 1.0))
    v_bin = p_pre * (1 - p_pre) / n_pre + p_star * (1 - p_star) / n_post
    deff = se ** 2 / v_bin if v_bin > 0 and se > 0 else 1.0
    ne_pre, ne_post = n_pre / deff, n_post / deff
    x_pre, x_post = p_pre * ne_pre, p_star * ne_post
    pooled = (x_pre + x_post) / (ne_pre + ne_post)
    expected = min(ne_pre * pooled, ne_pre * (1 - pooled), ne_post * pooled, ne_post * (1 - pooled))
    counts = {"n_eff_pre": ne_pre, "n_eff_post": ne_post, "x_eff_pre": x_pre, "x_eff_post": x_post,
              "design_effect": deff, "min_expected_cell": expected}
    if expected < fisher_min_expected:
        table = np.maximum(np.rint([[x_pre, ne_pre - x_pre], [x_post, ne_post - x_post]]).astype(int), 0)
        p_value = float(stats.fisher_exact(table, alternative="greater").pvalue)
        method = "fisher_exact_effective_counts"
        counts["table"] = table.tolist()
    elif se > 0:
        p_value = float(stats.norm.sf(effect / se))
        method = "two_proportion_z_item_clustered"
    else:
        p_value, method = float("nan"), "degenerate"
    return {"effect": effect, "se": se, "p_value": p_value, "method": method, "p_pre": p_pre,
            "p_post": p_post, "gap_model": p_pre - p_post, "gap_ref": g_ref,
            "n_pre": n_pre, "n_post": n_post, **counts}


def a3_one(matrix: pd.DataFrame, dates: pd.Series, model: str, c_lo: pd.Timestamp, c_hi: pd.Timestamp,
           reference_cutoffs: pd.Series, *, th: Thresholds) -> tuple[dict | None, str]:
    """A3 for one model on one item matrix (items × models). Returns (result, reason-if-skipped).

    Windows (METHODS A3): I_pre = {d <= c_lo - g}, I_post = {d > c_hi + g}. Clean references:
    c_hi(r) + g < min(d over I_pre), scored on every kept item (items a reference lacks are
    dropped; references missing > 10 % of the model's window items are left out first).

    The reference gap is ability-matched (`ability_weights`) instead of METHODS' plain median
    of the references' gaps: under difficulty drift (LCB's later problems are harder) the
    null gap depends on ability — hump-shaped in logit accuracy — so a strong or weak model
    compared with the median reference shows a spurious gap. On seeded null data with drift
    the median version gave P(p < .05) = 8 % (sd of z 1.19); the matched one 5 % (sd 1.01).
    The median gap stays in the evidence.
    """
    g = guard(th.guard_days)
    y = matrix[model]
    pre0 = y.notna() & (dates <= c_lo - g)
    post0 = y.notna() & (dates > c_hi + g)
    if pre0.sum() < th.a3_min_items or post0.sum() < th.a3_min_items:
        return None, f"window below floor (pre {int(pre0.sum())}, post {int(post0.sum())} items)"
    first_pre = dates[pre0].min()
    window = pre0 | post0
    refs = [r for r, c in reference_cutoffs.items()
            if r != model and r in matrix.columns and pd.notna(c) and c + g < first_pre
            and matrix.loc[window, r].notna().mean() >= A3_MIN_REF_COVERAGE]
    if len(refs) < th.a3_min_ref_models:
        return None, f"{len(refs)} clean reference model(s) < {th.a3_min_ref_models}"
    ref = matrix[refs]
    complete = ref.notna().all(axis=1)
    pre, post = pre0 & complete, post0 & complete
    if pre.sum() < th.a3_min_items or post.sum() < th.a3_min_items:
        return None, "window below floor after matching reference items"
    r_pre, r_post = ref[pre].to_numpy(float), ref[post].to_numpy(float)
    y_pre, y_post = y[pre].to_numpy(float), y[post].to_numpy(float)
    n_post = len(y_post)
    z_refs = _logit(r_post.mean(axis=0), n_post)
    z_model = float(_logit(np.array(y_post.mean()), n_post))
    w, clamped = ability_weights(z_refs, z_model)
    res = did_test(y_pre, y_post, r_pre @ w, r_post @ w, fisher_min_expected=th.fisher_min_expected)
    gaps = r_pre.mean(axis=0) - r_post.mean(axis=0)
    res.update({
        "gap_ref_median": float(np.median(gaps)),
        "effect_vs_median_gap": res["gap_model"] - float(np.median(gaps)),
        "reference_models": refs, "reference_gaps": dict(zip(refs, gaps.tolist())),
        "reference_weights": dict(zip(refs, w.tolist())), "ability_clamped": clamped,
        "pre_window": [None, (c_lo - g)], "post_window": [(c_hi + g), dates[post].max()],
        "c_lo": c_lo, "c_hi": c_hi,
    })
    return res, ""


def _a3_frame(items: pd.DataFrame, now: pd.Timestamp) -> dict[tuple[str, str], tuple[pd.DataFrame, pd.Series, tuple]]:
    """(source, benchmark) -> (items × models matrix, item dates, snapshot ids)."""
    it = prepare_items(items)
    it = it[it["item_date"].notna() & (it["item_date"] <= pd.Timestamp(now))]
    out = {}
    for (source, bench), b in it.groupby(["source", "benchmark"], sort=True):
        matrix = b.pivot(index="item_id", columns="model", values="score")
        per_item = b.groupby("item_id")["item_date"]
        spread = per_item.max() - per_item.min()
        if (spread > pd.Timedelta(days=1)).any():
            log.warning("[contamination] %s/%s: %d item(s) carry different dates per model; earliest used",
                        source or "-", bench, int((spread > pd.Timedelta(days=1)).sum()))
        snaps = tuple(sorted(int(s) for s in b["snapshot_id"].dropna().unique())) if "snapshot_id" in b else ()
        out[(source, bench)] = (matrix, per_item.min().reindex(matrix.index), snaps)
    return out


def a3_tests(items: pd.DataFrame, cutoffs: pd.DataFrame, *, now: pd.Timestamp,
             th: Thresholds = Thresholds()) -> list[SignalTest]:
    """A3 for every (source, benchmark, model) with dated items and a resolved cutoff interval."""
    cut = cutoffs.set_index("model")
    tests = []
    for (source, bench), (matrix, dates, snaps) in _a3_frame(items, now).items():
        for model in matrix.columns:
            if model not in cut.index or pd.isna(cut.at[model, "c_hi"]) or pd.isna(cut.at[model, "c_lo"]):
                continue
            res, why = a3_one(matrix, dates, model, cut.at[model, "c_lo"], cut.at[model, "c_hi"],
                              cut["c_hi"], th=th)
            if res is None:
                log.debug("[contamination] A3 %s/%s %s not tested: %s", source or "-", bench, model, why)
                continue
            tests.append(SignalTest(
                model=model, benchmark=bench, source=source, signal="A3", effect=res["effect"],
                se=res["se"], p_value=res["p_value"], ci_low=res["effect"] - _Z95 * res["se"],
                ci_high=res["effect"] + _Z95 * res["se"], snapshot_ids=snaps, evidence=res))
    return tests


# --- scores and reference benchmarks (A1, A2) -----------------------------------------------

def _ref_list(value: Any) -> tuple[str, ...]:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ()
    if isinstance(value, str):
        return tuple(v.strip() for v in value.replace("|", ";").replace(",", ";").split(";") if v.strip())
    return tuple(str(v) for v in value if v is not None and str(v).strip())


def prepare_benchmarks(benchmarks: pd.DataFrame) -> pd.DataFrame:
    """benchmark -> reference_benchmarks (tuple), n_items, chance (indexed by benchmark)."""
    require_columns(benchmarks, ("benchmark",), "benchmarks")
    b = benchmarks.drop_duplicates("benchmark").set_index("benchmark")
    out = pd.DataFrame(index=b.index)
    refs = b["reference_benchmarks"] if "reference_benchmarks" in b.columns else pd.Series(None, index=b.index)
    out["reference_benchmarks"] = [_ref_list(v) for v in refs]
    out["n_items"] = pd.to_numeric(b["n_items"], errors="coerce") if "n_items" in b.columns else np.nan
    out["chance"] = pd.to_numeric(b["chance"], errors="coerce") if "chance" in b.columns else np.nan
    return out


def prepare_scores(scores: pd.DataFrame, bench: pd.DataFrame, what: str = "scores", *,
                   by_setting: bool = False) -> pd.DataFrame:
    """Proportion scores, one row per (source, benchmark, model[, snapshot]), with n and SE.

    Several settings of one model (edit formats, prompts) collapse to the best one, as the
    leaderboards rank them (unless `by_setting`). n = the row's n_items, else the registry's, else s(1-s)/stderr²;
    SE = stderr, else sqrt(s(1-s)/n) (n_eff = n items, METHODS "Standard errors").
    """
    require_columns(scores, ("benchmark", "model", "score"), what)
    s = scores.copy()
    if "source" not in s.columns:
        s["source"] = ""
    if "metric" in s.columns:
        s = s[s["metric"].fillna("proportion") == "proportion"]
    s["score"] = pd.to_numeric(s["score"], errors="coerce")
    s = s[s["score"].notna()]
    check_proportions(s["score"], f"{what}: score")
    for col in ("n_items", "stderr"):
        s[col] = pd.to_numeric(s[col], errors="coerce") if col in s.columns else np.nan
    key = ["source", "benchmark", "model"] + (["snapshot_id"] if "snapshot_id" in s.columns else [])
    if by_setting:
        s["setting"] = s["setting"].fillna("") if "setting" in s.columns else ""
        key.append("setting")
    s = s.sort_values("score", ascending=False, kind="stable").drop_duplicates(key)
    n = s["n_items"].astype(float)
    n = n.fillna(s["benchmark"].map(bench["n_items"]).astype(float))
    var = s["score"] * (1 - s["score"])
    from_se = (var / s["stderr"] ** 2).where((s["stderr"] > 0) & (var > 0))
    s["n"] = n.fillna(np.rint(from_se))
    s["se"] = s["stderr"].fillna(np.sqrt(var / s["n"]))
    unknown_n = s["n"].isna()
    if unknown_n.any():
        log.info("[contamination] %d %s row(s) without n_items or stderr are left out of A1/A2, e.g. %s",
                    int(unknown_n.sum()), what, s.loc[unknown_n, ["benchmark", "model"]].head(3).to_dict("records"))
        s = s[~unknown_n]
    return s.reset_index(drop=True)


@dataclass
class _RefTable:
    """Scores of every model on reference benchmarks (mean over sources), with n."""

    score: pd.DataFrame   # model × benchmark
    n: pd.DataFrame
    snapshots: pd.DataFrame  # model × benchmark -> max snapshot id (or NaN)

    @classmethod
    def build(cls, s: pd.DataFrame) -> "_RefTable":
        snap = s["snapshot_id"] if "snapshot_id" in s.columns else pd.Series(np.nan, index=s.index)
        t = s.assign(_snap=snap).groupby(["model", "benchmark"]).agg(
            score=("score", "mean"), n=("n", "max"), snap=("_snap", "max"))
        return cls(t["score"].unstack(), t["n"].unstack(), t["snap"].unstack())


@dataclass
class _LinkData:
    """The data of one A1/A2 fit: reference models' (x, y) and the benchmark set used."""

    refs: list[str]
    ref_benchmarks: list[str]
    s_ref: np.ndarray          # (R, 1 + J): score on b, then on each reference benchmark
    n_ref: np.ndarray
    anchor: tuple[float, float] | None
    isotonic: bool
    snapshot_ids: tuple


def _link_data(b: str, source_rows: pd.DataFrame, table: _RefTable, bench: pd.DataFrame,
               ref_benchmarks: list[str], exclude: set[str], th: Thresholds) -> tuple[_LinkData | None, str]:
    """Reference models for b from one source: score on b (that source) and on all of R'."""
    if not ref_benchmarks:
        return None, "tested model has no score on any reference benchmark"
    have = table.score.reindex(columns=ref_benchmarks).notna().all(axis=1)
    candidates = source_rows[~source_rows["model"].isin(exclude)]
    refs = [m for m in candidates["model"] if m in have.index and have[m]]
    if len(refs) < th.a1_min_ref_models:
        return None, f"|M_ref| = {len(refs)} < {th.a1_min_ref_models}"
    rows = candidates.set_index("model").loc[refs]
    s_ref = np.column_stack([rows["score"].to_numpy(float),
                             table.score.loc[refs, ref_benchmarks].to_numpy(float)])
    n_ref = np.column_stack([rows["n"].to_numpy(float), table.n.loc[refs, ref_benchmarks].to_numpy(float)])
    chance_b = bench["chance"].get(b, np.nan)
    chance_r = bench["chance"].reindex(ref_benchmarks).to_numpy(float)
    anchor = None
    if np.isfinite(chance_b) and chance_b > 0 and np.all(np.isfinite(chance_r)) and np.all(chance_r > 0):
        big = 1e6   # the anchor is exact, not a sample
        anchor = (float(np.mean(_logit(chance_r, big))), float(_logit(np.array(chance_b), big)))
    snaps = set(rows["snapshot_id"].dropna().astype(int)) if "snapshot_id" in rows else set()
    snaps |= {int(v) for v in table.snapshots.loc[refs, ref_benchmarks].stack().dropna()}
    return _LinkData(refs, list(ref_benchmarks), s_ref, n_ref, anchor,
                     len(refs) >= th.a1_isotonic_min_ref, tuple(sorted(snaps))), ""


def _xy(s: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x = mean logit over reference benchmarks (columns 1..), y = logit on b (column 0)."""
    lg = _logit(s, n)
    return lg[..., 1:].mean(axis=-1), lg[..., 0]


def _with_anchor(x: np.ndarray, y: np.ndarray, anchor: tuple[float, float] | None) -> tuple[np.ndarray, np.ndarray]:
    if anchor is None:
        return x, y
    shape = x.shape[:-1] + (1,)
    return (np.concatenate([x, np.full(shape, anchor[0])], axis=-1),
            np.concatenate([y, np.full(shape, anchor[1])], axis=-1))


def _resample_refs(rng: np.random.Generator, r: int, b: int, min_unique: int) -> np.ndarray:
    """(b, r) indices drawn with replacement, each row with >= min_unique distinct models."""
    idx = rng.integers(0, r, size=(b, r))
    need = min(min_unique, r)
    for _ in range(1000):
        srt = np.sort(idx, axis=1)
        uniq = 1 + (np.diff(srt, axis=1) != 0).sum(axis=1)
        bad = uniq < need
        if not bad.any():
            return idx
        idx[bad] = rng.integers(0, r, size=(int(bad.sum()), r))
    raise RuntimeError("could not draw reference resamples with enough distinct models")


def a1_one(model_row: pd.Series, link: _LinkData, s_m_refs: np.ndarray, n_m_refs: np.ndarray,
           *, rng: np.random.Generator, th: Thresholds, n_boot: int | None = None) -> dict:
    """δ = s_{m,b} - σ(f_b(x_m)) and its parametric bootstrap (METHODS A1 steps 2-5).

    Each replicate resamples M_ref with replacement (>= 5 distinct), redraws every score as
    Binomial(n, s)/n (m's own included), refits f_b and recomputes δ*. One-sided
    p = (1 + #{δ* <= 0}) / (B + 1); SE = sd(δ*); CI = 2.5/97.5 % percentiles of δ*.
    That count cannot go below 1/(B + 1), which BH over a large family (hundreds of tests)
    could never accept; when fewer than `A1_MIN_TAIL_COUNT` replicates cross 0 the tail is
    taken from the bootstrap's normal approximation instead, p = Φ(-δ / SE).
    """
    n_boot = n_boot or th.bootstrap_b
    s_all = np.vstack([link.s_ref, np.concatenate([[model_row["score"]], s_m_refs])])
    n_all = np.vstack([link.n_ref, np.concatenate([[model_row["n"]], n_m_refs])])
    n_int = np.maximum(np.rint(n_all).astype(np.int64), 1)
    x, y = _xy(s_all, n_all)
    r = len(link.refs)
    xa, ya = _with_anchor(x[:r], y[:r], link.anchor)
    pred = float(_sigmoid(_link_predict(xa, ya, x[None, r:], isotonic=link.isotonic))[0, 0])
    delta = float(model_row["score"]) - pred

    sb = rng.binomial(n_int, s_all, size=(n_boot,) + s_all.shape) / n_int
    xb, yb = _xy(sb, n_all)
    idx = _resample_refs(rng, r, n_boot, th.a1_min_unique)
    xr, yr = _with_anchor(np.take_along_axis(xb[:, :r], idx, axis=1),
                          np.take_along_axis(yb[:, :r], idx, axis=1), link.anchor)
    pb = _sigmoid(_link_predict(xr, yr, xb[:, r:r + 1], isotonic=link.isotonic))[:, 0]
    deltas = sb[:, r, 0] - pb
    se = float(np.std(deltas, ddof=1))
    crossing = int((deltas <= 0).sum())
    if crossing >= A1_MIN_TAIL_COUNT or se <= 0:
        p_value, p_method = (1 + crossing) / (n_boot + 1), "bootstrap_count"
    else:
        p_value, p_method = float(stats.norm.sf(delta / se)), "bootstrap_normal_tail"
    lo, hi = np.percentile(deltas, [2.5, 97.5])
    fitted = _sigmoid(_link_predict(xa, ya, x[None, :r], isotonic=link.isotonic))[0]
    return {
        "effect": delta, "se": se, "p_value": p_value, "ci_low": float(lo), "ci_high": float(hi),
        "score": float(model_row["score"]), "predicted": pred, "n_items": float(model_row["n"]),
        "se_binomial": float(np.sqrt(model_row["score"] * (1 - model_row["score"]) / model_row["n"])),
        "x_model": float(x[r]), "reference_models": link.refs, "reference_benchmarks": link.ref_benchmarks,
        "n_reference_models": r, "link": "isotonic" if link.isotonic else "logit_linear",
        "chance_anchor": link.anchor, "bootstrap_b": n_boot, "p_method": p_method,
        "bootstrap_crossing_zero": crossing,
        "reference_fit_residual_sd": float(np.std(link.s_ref[:, 0] - fitted, ddof=1)),
    }


def _a1_pairs_to_skip(slices: pd.DataFrame | None) -> set[tuple[str, str]]:
    if slices is None or slices.empty:
        return set()
    post = slices[slices["status"] == "post"]
    return set(zip(post["model"], post["benchmark"]))


def a1_tests(scores: pd.DataFrame, benchmarks: pd.DataFrame, *, rng: np.random.Generator,
             slices: pd.DataFrame | None = None, th: Thresholds = Thresholds(),
             only: Callable[[str, str], bool] | None = None) -> list[SignalTest]:
    """A1 for every (source, b, m) where b has reference benchmarks and b is not post-cutoff for m.

    Pairs whose benchmark is post-cutoff for the model cannot be contaminated by it; they are
    the placebo set of `calibrate`. `only(model, benchmark)` restricts the tested pairs.
    """
    bench = prepare_benchmarks(benchmarks)
    s = prepare_scores(scores, bench)
    table = _RefTable.build(s)
    skip = _a1_pairs_to_skip(slices)
    tests = []
    for (source, b), rows in s.groupby(["source", "benchmark"], sort=True):
        refs_b = [r for r in bench["reference_benchmarks"].get(b, ()) if r != b and r in table.score.columns]
        if not refs_b:
            continue
        for _, row in rows.iterrows():
            m = row["model"]
            if (m, b) in skip or (only is not None and not only(m, b)):
                continue
            mine = [r for r in refs_b if m in table.score.index and pd.notna(table.score.at[m, r])]
            link, why = _link_data(b, rows, table, bench, mine, {m}, th)
            if link is None:
                log.debug("[contamination] A1 %s/%s %s not tested: %s", source or "-", b, m, why)
                continue
            res = a1_one(row, link, table.score.loc[m, mine].to_numpy(float),
                         table.n.loc[m, mine].to_numpy(float), rng=rng, th=th)
            snaps = set(link.snapshot_ids)
            if "snapshot_id" in row and pd.notna(row["snapshot_id"]):
                snaps.add(int(row["snapshot_id"]))
            tests.append(SignalTest(model=m, benchmark=b, source=source, signal="A1", effect=res["effect"],
                                    se=res["se"], p_value=res["p_value"], ci_low=res["ci_low"],
                                    ci_high=res["ci_high"], snapshot_ids=tuple(sorted(snaps)), evidence=res))
    _a1_self_consistency(tests, th)
    return tests


def _a1_self_consistency(tests: list[SignalTest], th: Thresholds) -> None:
    """Modified z of each residual within its model's A1 profile (Iglewicz–Hoaglin, METHODS A1.6).

    z̃ = 0.6745 (δ - med δ) / MAD; with MAD = 0 the mean absolute deviation × 1.2533 stands in.
    The gate z̃ >= 3.5 applies when the model has residuals on >= 5 benchmarks.
    """
    by_model: dict[str, list[SignalTest]] = {}
    for t in tests:
        by_model.setdefault(t.model, []).append(t)
    for model_tests in by_model.values():
        d = np.array([t.effect for t in model_tests])
        if len(d) < th.a1_robust_z_min_benchmarks:
            for t in model_tests:
                t.evidence["robust_z"] = None
            continue
        med = np.median(d)
        mad = np.median(np.abs(d - med))
        scale = mad / 0.6745 if mad > 0 else 1.2533 * np.mean(np.abs(d - med))
        for t, di in zip(model_tests, d):
            z = (di - med) / scale if scale > 0 else (np.inf if di > med else 0.0)
            t.evidence["robust_z"] = float(z)
            t.gate = bool(z >= th.a1_robust_z)


# --- A2: jump over a predecessor or between snapshots ----------------------------------------

def a2_one(s_new: float, se_new: float, s_old: float, se_old: float, x_new: float, x_old: float,
           link: _LinkData) -> dict:
    """J = Δ - Δ̂ with Δ̂ = σ(f(x_new)) - σ(f(x_old)); z_J = J / sqrt(SE_new² + SE_old² + σ_f²)."""
    x, y = _xy(link.s_ref, link.n_ref)
    xa, ya = _with_anchor(x[None, :], y[None, :], link.anchor)
    pred = _sigmoid(_link_predict(xa, ya, [[x_new, x_old]], isotonic=link.isotonic))[0]
    fitted = _sigmoid(_link_predict(xa, ya, x[None, :], isotonic=link.isotonic))[0]
    sigma_f = float(np.std(link.s_ref[:, 0] - fitted, ddof=1))
    delta = s_new - s_old
    expected = float(pred[0] - pred[1])
    jump = delta - expected
    se = float(np.sqrt(se_new ** 2 + se_old ** 2 + sigma_f ** 2))
    z = jump / se if se > 0 else float("nan")
    raw_se = float(np.sqrt(se_new ** 2 + se_old ** 2))
    return {"effect": jump, "se": se, "z": z, "p_value": float(stats.norm.sf(z)),
            "ci_low": jump - _Z95 * se, "ci_high": jump + _Z95 * se,
            "raw_jump": delta, "raw_z": delta / raw_se if raw_se > 0 else None,
            "expected_jump": expected, "score_new": s_new, "score_old": s_old, "se_new": se_new,
            "se_old": se_old, "sigma_f": sigma_f, "x_new": x_new, "x_old": x_old,
            "reference_models": link.refs, "reference_benchmarks": link.ref_benchmarks,
            "n_reference_models": len(link.refs), "link": "isotonic" if link.isotonic else "logit_linear"}


def _x_of(table: _RefTable, model: str, refs: list[str]) -> float:
    return float(_logit(table.score.loc[model, refs].to_numpy(float), table.n.loc[model, refs].to_numpy(float)).mean())


def a2_predecessor_tests(scores: pd.DataFrame, benchmarks: pd.DataFrame, predecessors: pd.DataFrame, *,
                         slices: pd.DataFrame | None = None, th: Thresholds = Thresholds(),
                         pairs: Iterable[tuple[str, str, str]] | None = None) -> list[SignalTest]:
    """A2 for each (model, predecessor) pair on each benchmark with references, per source.

    `pairs` (model, predecessor, benchmark) replaces `predecessors` (placebo calibration).
    """
    bench = prepare_benchmarks(benchmarks)
    s = prepare_scores(scores, bench)
    table = _RefTable.build(s)
    skip = _a1_pairs_to_skip(slices)
    if pairs is None:
        require_columns(predecessors, ("model", "predecessor"), "predecessors")
        wanted = {(m, p, None) for m, p in zip(predecessors["model"], predecessors["predecessor"])
                  if isinstance(m, str) and isinstance(p, str) and m != p}
    else:
        wanted = set(pairs)
    tests = []
    for (source, b), rows in s.groupby(["source", "benchmark"], sort=True):
        refs_b = [r for r in bench["reference_benchmarks"].get(b, ()) if r != b and r in table.score.columns]
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
            tests.append(SignalTest(model=new, benchmark=b, source=source, signal="A2", effect=res["effect"],
                                    se=res["se"], p_value=res["p_value"], ci_low=res["ci_low"],
                                    ci_high=res["ci_high"], snapshot_ids=tuple(sorted(snaps)),
                                    gate=bool(np.isfinite(res["z"]) and res["z"] >= th.a2_min_z), evidence=res,
                                    detail=detail))
    return tests


def a2_snapshot_tests(history: pd.DataFrame, scores: pd.DataFrame, benchmarks: pd.DataFrame, *,
                      slices: pd.DataFrame | None = None, th: Thresholds = Thresholds()) -> list[SignalTest]:
    """A2 for re-scored entries: the newest change of a (source, benchmark, model, setting) series.

    x_old / x_new are the model's reference-benchmark scores as of each snapshot's time (latest
    score observed by then, any source), so an unchanged model has Δ̂ = 0. Entries whose setting
    (harness, prompt, edit format) differs are different series and never compared.
    """
    require_columns(history, ("snapshot_id", "observed_at", "benchmark", "model", "score"), "score history")
    bench = prepare_benchmarks(benchmarks)
    h = history.copy()
    h["observed_at"] = as_dates(h["observed_at"], "score history: observed_at")
    hs = prepare_scores(h, bench, "score history", by_setting=True)
    s = prepare_scores(scores, bench)
    table = _RefTable.build(s)
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
                     x["new"], x["old"], link)
        res.update({"kind": "snapshot", "setting": setting, "snapshot_new": int(new["snapshot_id"]),
                    "snapshot_old": int(old["snapshot_id"]), "observed_new": new["observed_at"],
                    "observed_old": old["observed_at"]})
        snaps = set(link.snapshot_ids) | {int(new["snapshot_id"]), int(old["snapshot_id"])}
        tests.append(SignalTest(model=m, benchmark=b, source=source, signal="A2", effect=res["effect"],
                                se=res["se"], p_value=res["p_value"], ci_low=res["ci_low"],
                                ci_high=res["ci_high"], snapshot_ids=tuple(sorted(snaps)),
                                gate=bool(np.isfinite(res["z"]) and res["z"] >= th.a2_min_z), evidence=res,
                                detail=f"rescore {setting}".rstrip()))
    return tests


# --- multiplicity, flags, status --------------------------------------------------------------

def _is_flag(t: SignalTest, q: float, th: Thresholds) -> bool:
    return bool(np.isfinite(q) and q <= th.fdr_q and t.effect >= th.min_effect
                and t.effect >= th.min_effect_se * t.se and t.gate)


def _previous_keys(previous: pd.DataFrame | None) -> dict[tuple[str, str, str, str, str], tuple]:
    """(model, benchmark, signal, source, detail) -> snapshot ids of the previous run's flags."""
    if previous is None or previous.empty:
        return {}
    require_columns(previous, ("model", "benchmark", "signal", "status"), "previous flags")
    out = {}
    for row in previous.to_dict("records"):
        if row["status"] == "not_flagged":
            continue
        ev = row.get("evidence")
        if isinstance(ev, str):
            ev = json.loads(ev)
        snaps = tuple((ev or {}).get("snapshot_ids") or ())
        key = (row["model"], row["benchmark"], row["signal"], row.get("source") or "", row.get("detail") or "")
        out[key] = snaps
    return out


def finalize(tests: list[SignalTest], previous_flags: pd.DataFrame | None, th: Thresholds) -> pd.DataFrame:
    """BH over all tests of the run, the flag rule, and the status of each test.

    status: `corroborated` when the (model, benchmark) flag also comes from another signal or
    another source; else `persisted` when the previous run flagged the same (model, benchmark,
    signal, source, detail) on different snapshots; else `suspect`; unflagged tests are `not_flagged`.
    """
    q = benjamini_hochberg(t.p_value for t in tests)
    flagged = [_is_flag(t, qi, th) for t, qi in zip(tests, q)]
    fired: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for t, f in zip(tests, flagged):
        if f:
            fired.setdefault((t.model, t.benchmark), set()).add((t.signal, t.source))
    prev = _previous_keys(previous_flags)
    rows = []
    for t, qi, f in zip(tests, q, flagged):
        others = sorted(fired.get((t.model, t.benchmark), set()) - {(t.signal, t.source)})
        prev_snaps = prev.get((t.model, t.benchmark, t.signal, t.source, t.detail))
        persisted = f and prev_snaps is not None and tuple(prev_snaps) != tuple(t.snapshot_ids)
        status = ("not_flagged" if not f else "corroborated" if others
                  else "persisted" if persisted else "suspect")
        evidence = {"signal": t.signal, "source": t.source, "effect": t.effect, "se": t.se,
                    "ci": [t.ci_low, t.ci_high], "p_value": t.p_value, "q_value": qi,
                    "snapshot_ids": list(t.snapshot_ids), **t.evidence,
                    "corroborated_by": [{"signal": s, "source": src} for s, src in others] if f else [],
                    "persisted_from_snapshots": list(prev_snaps) if persisted else None,
                    "unit": "proportion", "thresholds": asdict(th), "label": "suspect, not a verdict"}
        rows.append({"model": t.model, "benchmark": t.benchmark, "source": t.source, "signal": t.signal,
                     "detail": t.detail, "effect": t.effect, "se": t.se, "ci_low": t.ci_low, "ci_high": t.ci_high,
                     "p_value": t.p_value, "q_value": qi, "flagged": f, "status": status,
                     "evidence": jsonable(evidence)})
    out = pd.DataFrame(rows, columns=RESULT_COLUMNS)
    return out.sort_values(["signal", "source", "benchmark", "model", "detail"], kind="stable").reset_index(drop=True)


def _slices_or_none(benchmarks: pd.DataFrame | None, cutoffs: pd.DataFrame, th: Thresholds) -> pd.DataFrame | None:
    if benchmarks is None or "material_date" not in benchmarks.columns or cutoffs.empty:
        return None
    return benchmark_slices(benchmarks, cutoffs, guard_days=th.guard_days)


def run_signals(scores: pd.DataFrame | None, items: pd.DataFrame | None, cutoffs: pd.DataFrame,
                benchmarks: pd.DataFrame | None, previous_flags: pd.DataFrame | None, *,
                rng: np.random.Generator, now: pd.Timestamp, history: pd.DataFrame | None = None,
                predecessors: pd.DataFrame | None = None, th: Thresholds = Thresholds()) -> pd.DataFrame:
    """Every signal the data allow, one BH family, flags and statuses.

    scores: latest scores (source, benchmark, model, score, n_items, stderr, metric, snapshot_id);
    items: dated item results (source, benchmark, model, item_id, item_date, score, snapshot_id);
    cutoffs: `analysis.cutoffs.resolve_model_dates` output; benchmarks: benchmark,
    reference_benchmarks, n_items, chance, material_date[, material_start]; previous_flags: the
    previous run's output (model, benchmark, signal, source, status, evidence); history: all
    snapshots' scores (+ observed_at, setting) for A2 re-score jumps; predecessors: (model,
    predecessor) for A2 family jumps.

    Returns one row per test: model, benchmark, source, signal, detail, effect, se, ci_low, ci_high,
    p_value, q_value, flagged, status, evidence (JSON-serializable dict).
    """
    slices = _slices_or_none(benchmarks, cutoffs, th)
    tests: list[SignalTest] = []
    if items is not None and not items.empty:
        tests += a3_tests(items, cutoffs, now=now, th=th)
    if scores is not None and not scores.empty and benchmarks is not None:
        tests += a1_tests(scores, benchmarks, rng=rng, slices=slices, th=th)
        if predecessors is not None and not predecessors.empty:
            tests += a2_predecessor_tests(scores, benchmarks, predecessors, slices=slices, th=th)
        if history is not None and not history.empty:
            tests += a2_snapshot_tests(history, scores, benchmarks, slices=slices, th=th)
    out = finalize(tests, previous_flags, th)
    counts = out.groupby("signal")["flagged"].agg(["size", "sum"]) if not out.empty else None
    log.info("[contamination] %d test(s); flagged per signal: %s", len(out),
             {} if counts is None else {s: f"{int(r['sum'])}/{int(r['size'])}" for s, r in counts.iterrows()})
    return out


# --- placebo calibration ----------------------------------------------------------------------

def _placebo_a3(items: pd.DataFrame, cutoffs: pd.DataFrame, *, rng: np.random.Generator,
                now: pd.Timestamp, th: Thresholds) -> list[SignalTest]:
    """Random fake cutoffs on clean models (cutoff + g before every item); references = the other clean ones."""
    g = guard(th.guard_days)
    cut = cutoffs.set_index("model")
    tests = []
    for (source, bench), (matrix, dates, _) in _a3_frame(items, now).items():
        first = dates.min()
        clean = [m for m in matrix.columns if m in cut.index and pd.notna(cut.at[m, "c_hi"])
                 and cut.at[m, "c_hi"] + g < first]
        d = np.sort(dates.dropna().to_numpy())
        k = th.a3_min_items
        if len(clean) < th.a3_min_ref_models + 1 or len(d) < 2 * k:
            continue
        lo = pd.Timestamp(d[k - 1]) + g              # pre = {d <= fake - g} keeps >= k items
        hi = pd.Timestamp(d[-k]) - g - pd.Timedelta(days=1)   # post = {d > fake + g} keeps >= k items
        if lo > hi:
            continue
        span = (hi - lo).days
        ref_cut = cut.loc[clean, "c_hi"]
        for m in clean:
            fake = lo + pd.Timedelta(days=int(rng.integers(0, span + 1)))
            res, _ = a3_one(matrix, dates, m, fake, fake, ref_cut, th=th)
            if res is not None:
                tests.append(SignalTest(m, bench, source, "A3", res["effect"], res["se"], res["p_value"],
                                        np.nan, np.nan, evidence={**res, "fake_cutoff": fake}))
    return tests


def _clean_scores(scores: pd.DataFrame, benchmarks: pd.DataFrame, slices: pd.DataFrame | None) -> pd.DataFrame:
    """Placebo candidates for A1/A2: (source, benchmark, model) rows whose benchmark is post-cutoff
    for the model and that could be tested (the model has a score on one of b's references)."""
    if slices is None:
        return scores.iloc[0:0]
    post = slices.loc[slices["status"] == "post", ["model", "benchmark"]]
    bench = prepare_benchmarks(benchmarks)
    s = prepare_scores(scores, bench)
    table = _RefTable.build(s)
    clean = s.merge(post, on=["model", "benchmark"], how="inner")
    has_ref = [any(r != b and r in table.score.columns and pd.notna(table.score.at[m, r])
                   for r in bench["reference_benchmarks"].get(b, ()))
               for m, b in zip(clean["model"], clean["benchmark"])]
    return clean[np.array(has_ref, dtype=bool)]


def calibrate(scores: pd.DataFrame | None, items: pd.DataFrame | None, cutoffs: pd.DataFrame,
              benchmarks: pd.DataFrame | None, *, rng: np.random.Generator, now: pd.Timestamp,
              trials: int = CALIBRATION_TRIALS, th: Thresholds = Thresholds(),
              bootstrap_b: int | None = None) -> pd.DataFrame:
    """Placebo false-flag rate per signal (METHODS A, false-positive control 5).

    Each trial: A3 on every clean model (cutoff + g before all items) with a random fake cutoff
    inside the item range, the other clean models as references; A1 on one random clean
    (model, benchmark) pair per benchmark and source (the benchmark is post-cutoff for it and
    the model has reference-benchmark scores);
    A2 on one random ordered pair of clean models per benchmark and source as a fake
    predecessor. The trial's placebo tests form one BH family and go through the same flag
    rule as a real run. rate = flags / tests over all trials; it must stay <= 5 %.
    """
    bench_b = bootstrap_b or th.bootstrap_b
    th_run = Thresholds(**{**asdict(th), "bootstrap_b": bench_b})
    slices = _slices_or_none(benchmarks, cutoffs, th)
    clean = _clean_scores(scores, benchmarks, slices) if scores is not None and benchmarks is not None else None
    totals = {s: [0, 0] for s in SIGNALS}
    for _ in range(trials):
        tests: list[SignalTest] = []
        if items is not None and not items.empty:
            tests += _placebo_a3(items, cutoffs, rng=rng, now=now, th=th)
        if clean is not None and not clean.empty and benchmarks is not None:
            picks, pairs = set(), set()
            for (_, b), rows in clean.groupby(["source", "benchmark"]):
                models = rows["model"].unique()
                picks.add((models[rng.integers(len(models))], b))
                if len(models) >= 2:
                    i, j = rng.choice(len(models), size=2, replace=False)
                    pairs.add((models[i], models[j], b))
            tests += a1_tests(scores, benchmarks, rng=rng, th=th_run, only=lambda m, b: (m, b) in picks)
            tests += a2_predecessor_tests(scores, benchmarks, pd.DataFrame(), th=th_run, pairs=pairs)
        q = benjamini_hochberg(t.p_value for t in tests)
        for t, qi in zip(tests, q):
            if t.signal == "A1":
                t.gate = True   # one placebo residual per model: the profile guard does not apply
            totals[t.signal][0] += 1
            totals[t.signal][1] += int(_is_flag(t, qi, th))
    rows = []
    for signal, (n, k) in totals.items():
        rate = k / n if n else float("nan")
        rows.append({"signal": signal, "trials": trials, "tests": n, "flags": k, "rate": rate,
                     "max_rate": CALIBRATION_MAX_FLAG_RATE, "ok": bool(n and rate <= CALIBRATION_MAX_FLAG_RATE) if n else None})
    return pd.DataFrame(rows)

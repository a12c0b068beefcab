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
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, field
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
    A3_REFS_PER_PARAMETER,
    CALIBRATION_TRIALS,
    FDR_Q,
    FISHER_MIN_EXPECTED,
    GUARD_BAND_DAYS,
    MIN_EFFECT,
    MIN_EFFECT_SE,
    REFERENCE_TRUST,
)
from analysis.cutoffs import (
    as_dates,
    benchmark_slices,
    check_proportions,
    guard,
    prepare_items,
    require_columns,
)
from common.jsonsafe import jsonable
from common.refs import parse_refs

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
    # A3's null distribution: 'reference_placebo' (contest-clustered z scaled by the clean
    # references' placebo z, t-distributed) or 'item_normal' (the former item-independent
    # z / Fisher test, anti-conservative: kept to show that `calibrate` catches it).
    a3_null: str = "reference_placebo"
    # How A1/A2 use b's chance level: 'floor' (no prediction below chance) or 'anchor' (the
    # former exact point (chance on the references -> chance on b) inside the link; models at
    # chance on a hard reference benchmark but far above chance on b made it predict chance
    # for them: kept to show that `calibrate` catches it).
    chance_link: str = "floor"


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


def isotonic_fit_batch(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Isotonic (non-decreasing) least-squares fits of B rows at once, without a Python loop.

    x, y: (B, n). Returns (xs, fit), each row sorted by x, fit the isotonic regression of y on
    x with tied x pooled (the same fit as `pava` on the tie-group means weighted by counts).
    Uses the min-max formula of isotonic regression, fit_i = max_{j <= i} min_{k >= i}
    mean(y_j..y_k), with j restricted to the first and k to the last index of a tie group:
    O(n^2) numbers per row, vectorized over the batch (n is a few dozen reference models).
    """
    x, y = np.atleast_2d(np.asarray(x, dtype=float)), np.atleast_2d(np.asarray(y, dtype=float))
    b, n = x.shape
    order = np.argsort(x, axis=1, kind="stable")
    xs, ys = np.take_along_axis(x, order, axis=1), np.take_along_axis(y, order, axis=1)
    starts = np.ones((b, n), dtype=bool)
    starts[:, 1:] = xs[:, 1:] != xs[:, :-1]
    ends = np.ones((b, n), dtype=bool)
    ends[:, :-1] = starts[:, 1:]
    cum = np.concatenate([np.zeros((b, 1)), np.cumsum(ys, axis=1)], axis=1)
    j, k = np.arange(n)[:, None], np.arange(n)[None, :]
    upper = k >= j                                                     # (j, k): block j..k
    means = (cum[:, None, 1:] - cum[:, :-1, None]) / np.where(upper, k + 1 - j, 1)
    means = np.where(upper[None] & ends[:, None, :], means, np.inf)
    tail_min = np.minimum.accumulate(means[:, :, ::-1], axis=2)[:, :, ::-1]   # min over k >= i
    tail_min = np.where(upper[None] & starts[:, :, None], tail_min, -np.inf)
    return xs, tail_min.max(axis=1)


def _isotonic_predict_batch(x: np.ndarray, y: np.ndarray, x_new: np.ndarray) -> np.ndarray:
    """`_isotonic_predict` for B rows at once: x, y (B, n), x_new (B, K) -> (B, K)."""
    xs, fit = isotonic_fit_batch(x, y)
    _, slope = _linear_coef(x, y)
    q = np.broadcast_to(np.asarray(x_new, dtype=float), (xs.shape[0], np.shape(x_new)[-1]))
    n = xs.shape[1]
    pos = (xs[:, None, :] <= q[:, :, None]).sum(axis=-1)              # (B, K): points <= q
    left, right = np.clip(pos - 1, 0, n - 1), np.clip(pos, 0, n - 1)
    xl, xr = np.take_along_axis(xs, left, axis=1), np.take_along_axis(xs, right, axis=1)
    fl, fr = np.take_along_axis(fit, left, axis=1), np.take_along_axis(fit, right, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(xr > xl, (q - xl) / np.where(xr > xl, xr - xl, 1.0), 0.0)
    out = fl + t * (fr - fl)
    out = np.where(q < xs[:, :1], fit[:, :1] + slope[:, None] * (q - xs[:, :1]), out)
    out = np.where(q > xs[:, -1:], fit[:, -1:] + slope[:, None] * (q - xs[:, -1:]), out)
    return np.where(np.isnan(q), np.nan, out)


def _link_predict(x: np.ndarray, y: np.ndarray, x_new: np.ndarray, *, isotonic: bool,
                  floor: float | None = None) -> np.ndarray:
    """Monotone link f: x -> y fitted per row. x, y: (B, R) points of B fits; x_new: (B, K) -> (B, K).

    `floor` (logit of b's chance level) bounds the prediction from below: a model is never
    predicted below chance, but chance is not a point of the link (docs/statistics.md, A1).
    """
    x, y, x_new = np.atleast_2d(x), np.atleast_2d(y), np.atleast_2d(np.asarray(x_new, dtype=float))
    if not isotonic:
        a, b = _linear_coef(x, y)
        out = a[:, None] + b[:, None] * x_new
    else:
        out = _isotonic_predict_batch(x, y, x_new)
    return out if floor is None else np.maximum(out, floor)


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

    z = logit of post-window accuracy. The degree keeps >= `A3_REFS_PER_PARAMETER` (3)
    references per fitted coefficient: 2 (the null gap of a Rasch-like item set is hump-shaped
    in ability) from 9 references, 1 from 6, else 0 (the plain mean) — a quadratic through 5
    points follows their noise. z_m outside the references' range is clamped to it (no
    extrapolation); the flag says so. One problem of `smoother_weights`.
    """
    z_refs = np.asarray(z_refs, dtype=float)
    w, clamped = smoother_weights(z_refs[None, :], np.ones((1, len(z_refs)), dtype=bool), np.array([[z_model]]))
    return w[0, 0], bool(clamped[0, 0])


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


def smoother_weights(z: np.ndarray, masks: np.ndarray, z0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`ability_weights` for a batch: z (T, M) abilities of M models in T windows, masks (P, M)
    the references of P problems, z0 (T, P) the tested abilities -> weights (T, P, M), clamped (T, P).

    w = e0' (X'X)^+ X' with X the masked Vandermonde rows (1, z - z0, (z - z0)^2) up to the degree
    the problem's reference count allows (`ability_weights`); z0 clamped to the range.
    """
    z = np.atleast_2d(np.asarray(z, dtype=float))
    masks = np.asarray(masks, dtype=bool)
    cnt = masks.sum(axis=-1)
    deg = np.clip(cnt // A3_REFS_PER_PARAMETER - 1, 0, 2)
    zm = np.where(masks[None], z[:, None, :], np.nan)
    lo, hi = np.nanmin(zm, axis=-1), np.nanmax(zm, axis=-1)
    clamped = (z0 < lo) | (z0 > hi)
    d = z[:, None, :] - np.clip(z0, lo, hi)[..., None]
    basis = (np.arange(3)[None, :] <= deg[:, None]).astype(float)          # (P, 3)
    x = np.stack([np.ones_like(d), d, d * d], axis=-1) * masks[None, :, :, None] * basis[None, :, None, :]
    xtx = np.einsum("tpmi,tpmj->tpij", x, x)
    w = np.einsum("tpi,tpmi->tpm", np.linalg.pinv(xtx)[..., 0, :], x)
    return w, clamped


def _cluster_var(u: np.ndarray, window: np.ndarray, onehot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and contest-clustered variance of the mean of u (n, T, P) over window (n, T).

    V = C/(C-1) * sum_c (sum_{i in c} (u_i - ū))^2 / n^2 (CR1 sandwich for a mean; C = clusters
    with an item in the window). With one item per cluster it is var(u, ddof=1) / n.
    """
    wk = window[:, :, None].astype(float)
    cnt = window.sum(axis=0).astype(float)                                  # (T,)
    mean = (u * wk).sum(axis=0) / cnt[:, None]
    dev = (u - mean[None]) * wk
    n, t, p = u.shape
    sums = onehot @ dev.reshape(n, t * p)                                   # (C, T*P)
    c_eff = (onehot @ window.astype(float) > 0).sum(axis=0).astype(float)   # (T,)
    corr = np.where(c_eff > 1, c_eff / np.maximum(c_eff - 1, 1), np.nan)
    var = (sums ** 2).sum(axis=0).reshape(t, p) / cnt[:, None] ** 2 * corr[:, None]
    return mean, var


def a3_core(y: np.ndarray, pre: np.ndarray, post: np.ndarray, clusters: np.ndarray, targets: np.ndarray,
            ref_masks: np.ndarray) -> dict[str, np.ndarray]:
    """The A3 difference-in-differences for a batch of problems, vectorized over windows and problems.

    y (n, M): item pass fractions of M models on n items (complete); pre, post (n, T): T pairs
    of windows; clusters (n,): the item's contest (its date); targets (P,) the tested model of each
    problem and ref_masks (P, M) its references. For each (window, problem): u_i = y_i - a_i with
    a_i = Σ_r w_r y_ir the ability-matched reference (`smoother_weights`, ability = logit of the
    post-window accuracy), E = mean_pre u - mean_post u, SE² = the contest-clustered variances
    of the two means (items of one contest share a date and are not independent), z = E / SE.
    """
    y = np.asarray(y, dtype=float)
    pre, post = np.asarray(pre, dtype=bool), np.asarray(post, dtype=bool)
    n_pre, n_post = pre.sum(axis=0), post.sum(axis=0)
    ability = _logit((post.T.astype(float) @ y) / n_post[:, None], n_post[:, None])   # (T, M)
    w, clamped = smoother_weights(ability, ref_masks, ability[:, targets])
    a = np.einsum("nm,tpm->ntp", y, w)
    u = y[:, targets][:, None, :] - a
    _, codes = np.unique(clusters, return_inverse=True)
    onehot = np.zeros((codes.max() + 1, len(codes)))
    onehot[codes, np.arange(len(codes))] = 1.0
    m_pre, v_pre = _cluster_var(u, pre, onehot)
    m_post, v_post = _cluster_var(u, post, onehot)
    effect = m_pre - m_post
    se = np.sqrt(v_pre + v_post)
    gap_model = (pre.T.astype(float) @ y[:, targets]) / n_pre[:, None] - (post.T.astype(float) @ y[:, targets]) / n_post[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, effect / se, np.nan)
    return {"effect": effect, "se": se, "z": z, "gap_model": gap_model, "gap_ref": gap_model - effect,
            "weights": w, "clamped": clamped, "n_pre": n_pre, "n_post": n_post}


def reference_placebo_p(z_model: np.ndarray, z_refs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One-sided p of z_model against the null scale the clean references show.

    Each reference r, tested with the same windows against the other references (never the
    tested model), gives a placebo z_r: what this statistic looks like on a model that cannot be
    contaminated. σ̂² = mean z_r² (over-dispersion from item dependence, smoother bias and
    extrapolation; centred at 0, so a shared bias counts too); the scale used is max(1, σ̂), and
    p = P(t_R > z / max(1, σ̂)) with R placebo references (σ̂² estimated from R values).
    z_model (...,), z_refs (..., R) -> (p, scale, R).
    """
    ok = np.isfinite(z_refs)
    r = ok.sum(axis=-1)
    sigma = np.sqrt(np.where(ok, z_refs ** 2, 0.0).sum(axis=-1) / np.maximum(r, 1))
    scale = np.maximum(sigma, 1.0)
    with np.errstate(invalid="ignore"):
        p = np.where(r >= 2, stats.t.sf(z_model / scale, np.maximum(r, 1)), np.nan)
    return p, sigma, r


def _a3_p(z: np.ndarray, z_placebo: np.ndarray, se: np.ndarray,
          th: Thresholds) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(p, scale, df, calibrated SE) of A3 from z (...), the references' placebo z (..., R) and SE (...).

    'reference_placebo': `reference_placebo_p`, SE × max(1, σ̂), df = R. 'item_normal' (the former,
    anti-conservative test): p = Φ(-z) with items as independent units, scale 1, df = inf.
    """
    if th.a3_null == "item_normal":
        return stats.norm.sf(z), np.ones_like(z), np.full_like(z, np.inf), se
    p, sigma, r = reference_placebo_p(z, z_placebo)
    scale = np.maximum(sigma, 1.0)
    return p, scale, r.astype(float), se * scale


def a3_one(matrix: pd.DataFrame, dates: pd.Series, model: str, c_lo: pd.Timestamp, c_hi: pd.Timestamp,
           reference_cutoffs: pd.Series, *, th: Thresholds) -> tuple[dict | None, str]:
    """A3 for one model on one item matrix (items × models). Returns (result, reason-if-skipped).

    Windows (docs/statistics.md, "The signals", A3): I_pre = {d <= c_lo - g}, I_post = {d > c_hi + g}. Clean references:
    c_hi(r) + g < min(d over I_pre), scored on every kept item (items a reference lacks are
    dropped; references missing > 10 % of the model's window items are left out first).

    The reference gap is ability-matched (`ability_weights`) instead of a plain median
    of the references' gaps: under difficulty drift (LCB's later problems are harder) the
    null gap depends on ability — hump-shaped in logit accuracy — so a strong or weak model
    compared with the median reference shows a spurious gap. The median gap stays in the evidence.

    Inference (`a3_core`, `reference_placebo_p`): SE is contest-clustered (items of one date),
    and the null scale comes from the references themselves, each tested as a placebo with the
    same windows; the reported SE is the clustered SE times that scale, the CI uses t_R. A
    matched gap extrapolated to the strongest model, or a reference that is not quite clean,
    widens the placebo z's and so the test, instead of producing a flag.
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
    keep = pre | post
    y_all = matrix.loc[keep, [model] + refs].to_numpy(float)
    pre_m, post_m = pre[keep].to_numpy()[:, None], post[keep].to_numpy()[:, None]
    r = len(refs)
    targets = np.arange(r + 1)
    masks = np.zeros((r + 1, r + 1), dtype=bool)
    masks[0, 1:] = True                                   # the tested model against every reference
    for j in range(1, r + 1):                             # each reference against the others (placebo)
        masks[j, 1:] = True
        masks[j, j] = False
    item_normal = th.a3_null == "item_normal"
    clusters = np.arange(int(keep.sum())) if item_normal else dates[keep].to_numpy()
    core = a3_core(y_all, pre_m, post_m, clusters, targets, masks)
    effect, se_item, z = float(core["effect"][0, 0]), float(core["se"][0, 0]), float(core["z"][0, 0])
    z_placebo = core["z"][0, 1:]
    p_value, scale, df, se = _a3_p(np.array([[z]]), z_placebo[None, None, :], np.array([[se_item]]), th)
    p_value, scale, df, se = float(p_value[0, 0]), float(scale[0, 0]), float(df[0, 0]), float(se[0, 0])
    r_pre, r_post = y_all[pre_m[:, 0], 1:], y_all[post_m[:, 0], 1:]
    gaps = r_pre.mean(axis=0) - r_post.mean(axis=0)
    t_crit = float(stats.t.ppf(0.975, df)) if np.isfinite(df) and df >= 1 else _Z95
    df = int(df) if np.isfinite(df) else None
    w = core["weights"][0, 0, 1:]
    res = {"effect": effect, "se": se, "p_value": p_value, "ci_low": effect - t_crit * se,
           "ci_high": effect + t_crit * se, "method": th.a3_null,
           "z_clustered": z, "se_clustered": se_item, "null_scale": scale,
           "null_scale_raw": float(np.sqrt(np.nanmean(z_placebo ** 2))) if np.isfinite(z_placebo).any() else None,
           "placebo_z": dict(zip(refs, z_placebo.tolist())), "null_df": df,
           "p_pre": float(y_all[pre_m[:, 0], 0].mean()), "p_post": float(y_all[post_m[:, 0], 0].mean()),
           "gap_model": float(core["gap_model"][0, 0]), "gap_ref": float(core["gap_ref"][0, 0]),
           "n_pre": int(core["n_pre"][0]), "n_post": int(core["n_post"][0]),
           "n_contests_pre": int(dates[pre].nunique()), "n_contests_post": int(dates[post].nunique()),
           "gap_ref_median": float(np.median(gaps)),
           "effect_vs_median_gap": float(core["gap_model"][0, 0]) - float(np.median(gaps)),
           "reference_models": refs, "reference_gaps": dict(zip(refs, gaps.tolist())),
           "reference_weights": dict(zip(refs, w.tolist())), "ability_clamped": bool(core["clamped"][0, 0]),
           "pre_window": [None, (c_lo - g)], "post_window": [(c_hi + g), dates[post].max()],
           "c_lo": c_lo, "c_hi": c_hi}
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


def reference_cutoffs(cutoffs: pd.DataFrame) -> pd.Series:
    """model -> c_hi of the models whose cutoff may make them clean references: trust in
    `REFERENCE_TRUST` (a placeholder date never qualifies). Frames without `cutoff_trust` (built
    by hand) count as stated."""
    c = cutoffs.set_index("model")
    if "cutoff_trust" in c.columns:
        c = c[c["cutoff_trust"].isin(REFERENCE_TRUST)]
    return c["c_hi"]


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
                              reference_cutoffs(cutoffs), th=th)
            if res is None:
                log.debug("[contamination] A3 %s/%s %s not tested: %s", source or "-", bench, model, why)
                continue
            tests.append(SignalTest(
                model=model, benchmark=bench, source=source, signal="A3", effect=res["effect"],
                se=res["se"], p_value=res["p_value"], ci_low=res["ci_low"],
                ci_high=res["ci_high"], snapshot_ids=snaps, evidence=res))
    return tests


# --- scores and reference benchmarks (A1, A2) -----------------------------------------------

def prepare_benchmarks(benchmarks: pd.DataFrame) -> pd.DataFrame:
    """benchmark -> reference_benchmarks (tuple), n_items, chance (indexed by benchmark)."""
    require_columns(benchmarks, ("benchmark",), "benchmarks")
    b = benchmarks.drop_duplicates("benchmark").set_index("benchmark")
    out = pd.DataFrame(index=b.index)
    refs = b["reference_benchmarks"] if "reference_benchmarks" in b.columns else pd.Series(None, index=b.index)
    out["reference_benchmarks"] = [parse_refs(v) for v in refs]
    out["n_items"] = pd.to_numeric(b["n_items"], errors="coerce") if "n_items" in b.columns else np.nan
    out["chance"] = pd.to_numeric(b["chance"], errors="coerce") if "chance" in b.columns else np.nan
    return out


def prepare_scores(scores: pd.DataFrame, bench: pd.DataFrame, what: str = "scores", *,
                   by_setting: bool = False) -> pd.DataFrame:
    """Proportion scores, one row per (source, benchmark, model[, snapshot]), with n and SE.

    Several settings of one model (edit formats, prompts) collapse to the best one, as the
    leaderboards rank them (unless `by_setting`). n = the row's n_items, else the registry's, else s(1-s)/stderr²;
    SE = stderr, else sqrt(s(1-s)/n) (n_eff = n items; docs/statistics.md, "The signals").
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
    floor: float | None = None  # logit of b's chance level: predictions never go below it


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
    anchor, floor = None, None
    big = 1e6   # chance is exact, not a sample
    if th.chance_link == "anchor":
        if np.isfinite(chance_b) and chance_b > 0 and np.all(np.isfinite(chance_r)) and np.all(chance_r > 0):
            anchor = (float(np.mean(_logit(chance_r, big))), float(_logit(np.array(chance_b), big)))
    elif np.isfinite(chance_b) and chance_b > 0:
        floor = float(_logit(np.array(chance_b), big))
    snaps = set(rows["snapshot_id"].dropna().astype(int)) if "snapshot_id" in rows else set()
    snaps |= {int(v) for v in table.snapshots.loc[refs, ref_benchmarks].stack().dropna()}
    return _LinkData(refs, list(ref_benchmarks), s_ref, n_ref, anchor,
                     len(refs) >= th.a1_isotonic_min_ref, tuple(sorted(snaps)), floor), ""


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


def _loo_residuals(x: np.ndarray, y: np.ndarray, link: _LinkData) -> np.ndarray:
    """Proportion residual s_r - σ(f_{-r}(x_r)) of each reference model r against the link fitted
    on the other references (plus the chance anchor): the A1 null population of residuals."""
    r = len(x)
    if r < 3:
        return np.array([])
    keep = ~np.eye(r, dtype=bool)
    xs, ys = x[None, :].repeat(r, 0)[keep].reshape(r, r - 1), y[None, :].repeat(r, 0)[keep].reshape(r, r - 1)
    xs, ys = _with_anchor(xs, ys, link.anchor)
    pred = _sigmoid(_link_predict(xs, ys, x[:, None], isotonic=link.isotonic, floor=link.floor))[:, 0]
    return link.s_ref[:, 0] - pred


def a1_one(model_row: pd.Series, link: _LinkData, s_m_refs: np.ndarray, n_m_refs: np.ndarray,
           *, rng: np.random.Generator, th: Thresholds, n_boot: int | None = None) -> dict:
    """δ = s_{m,b} - σ(f_b(x_m)), tested against a prediction scale (docs/statistics.md, A1).

    Fit uncertainty: each bootstrap replicate resamples M_ref with replacement (>= 5 distinct),
    redraws every score as Binomial(n, s)/n (m's own included), refits f_b and recomputes δ*;
    SE_boot = sd(δ*) (kept in the evidence with its count p-value, `p_bootstrap`).
    Prediction scale: s_LOO² = mean over references of their leave-one-out residual² (how far
    a model not involved in the fit falls from it). SE = sqrt(SE_boot² + s_LOO²) (conservative:
    the fit error is in both terms); p = P(t_{R-1} > δ / SE); CI = δ ± t_{R-1, .975} SE.
    """
    n_boot = n_boot or th.bootstrap_b
    s_all = np.vstack([link.s_ref, np.concatenate([[model_row["score"]], s_m_refs])])
    n_all = np.vstack([link.n_ref, np.concatenate([[model_row["n"]], n_m_refs])])
    n_int = np.maximum(np.rint(n_all).astype(np.int64), 1)
    x, y = _xy(s_all, n_all)
    r = len(link.refs)
    xa, ya = _with_anchor(x[:r], y[:r], link.anchor)
    pred = float(_sigmoid(_link_predict(xa, ya, x[None, r:], isotonic=link.isotonic, floor=link.floor))[0, 0])
    delta = float(model_row["score"]) - pred

    sb = rng.binomial(n_int, s_all, size=(n_boot,) + s_all.shape) / n_int
    xb, yb = _xy(sb, n_all)
    idx = _resample_refs(rng, r, n_boot, th.a1_min_unique)
    xr, yr = _with_anchor(np.take_along_axis(xb[:, :r], idx, axis=1),
                          np.take_along_axis(yb[:, :r], idx, axis=1), link.anchor)
    pb = _sigmoid(_link_predict(xr, yr, xb[:, r:r + 1], isotonic=link.isotonic, floor=link.floor))[:, 0]
    deltas = sb[:, r, 0] - pb
    se_boot = float(np.std(deltas, ddof=1))
    crossing = int((deltas <= 0).sum())
    if crossing >= A1_MIN_TAIL_COUNT or se_boot <= 0:
        p_boot, p_method = (1 + crossing) / (n_boot + 1), "bootstrap_count"
    else:
        p_boot, p_method = float(stats.norm.sf(delta / se_boot)), "bootstrap_normal_tail"
    # Prediction scale: how far clean-looking reference models fall from a link fitted without
    # them (ceiling effects, model idiosyncrasy). The bootstrap alone is the uncertainty of the
    # fit, not of a new model's position around it: on a saturated benchmark it called
    # idiosyncratic +14 pp residuals contamination.
    loo = _loo_residuals(x[:r], y[:r], link)
    s_loo = float(np.sqrt(np.mean(loo ** 2))) if len(loo) else float("nan")
    se = float(np.sqrt(se_boot ** 2 + s_loo ** 2))
    df = max(r - 1, 1)
    p_value = float(stats.t.sf(delta / se, df)) if se > 0 else float("nan")
    t_crit = float(stats.t.ppf(0.975, df))
    fitted = _sigmoid(_link_predict(xa, ya, x[None, :r], isotonic=link.isotonic, floor=link.floor))[0]
    return {
        "effect": delta, "se": se, "p_value": p_value, "ci_low": delta - t_crit * se, "ci_high": delta + t_crit * se,
        "method": "prediction_t", "se_bootstrap": se_boot, "loo_scale": s_loo, "p_bootstrap": p_boot,
        "null_df": df, "bootstrap_ci": [float(v) for v in np.percentile(deltas, [2.5, 97.5])],
        "score": float(model_row["score"]), "predicted": pred, "n_items": float(model_row["n"]),
        "se_binomial": float(np.sqrt(model_row["score"] * (1 - model_row["score"]) / model_row["n"])),
        "x_model": float(x[r]), "reference_models": link.refs, "reference_benchmarks": link.ref_benchmarks,
        "n_reference_models": r, "link": "isotonic" if link.isotonic else "logit_linear",
        "chance_anchor": link.anchor, "chance_floor": _sigmoid(link.floor) if link.floor is not None else None,
        "chance_link": th.chance_link, "bootstrap_b": n_boot, "p_method": p_method,
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
    """Modified z of each residual within its model's A1 profile (Iglewicz–Hoaglin; docs/statistics.md, "The signals", A1).

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
                     x["new"], x["old"], link, kind="rescore")
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

def family_q_values(tests: list[SignalTest]) -> np.ndarray:
    """BH q-values computed within each signal's family of tests, in the order of `tests`."""
    q = np.full(len(tests), np.nan)
    for signal in {t.signal for t in tests}:
        idx = [i for i, t in enumerate(tests) if t.signal == signal]
        q[idx] = benjamini_hochberg(tests[i].p_value for i in idx)
    return q


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
    """BH per signal family (A1, A2, A3 separately), the flag rule, and the status of each test.

    One family per signal: the many mostly-null A1/A2 tests of a run would otherwise raise the
    BH bar of A3's item-level tests (and vice versa); each family's q-values control that
    signal's false discovery rate at `fdr_q`.

    status: `corroborated` when the (model, benchmark) flag also comes from another signal or
    another source; else `persisted` when the previous run flagged the same (model, benchmark,
    signal, source, detail) on different snapshots; else `suspect`; unflagged tests are `not_flagged`.
    """
    q = family_q_values(tests)
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
    """Every signal the data allow, one BH family per signal, flags and statuses.

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

PLACEBO_COLUMNS = ["trial", "signal", "source", "benchmark", "model", "effect", "se", "p_value", "gate"]


def _a3_placebo_frame(matrix: pd.DataFrame, dates: pd.Series, clean: list[str], fakes: np.ndarray,
                      th: Thresholds) -> dict[str, np.ndarray]:
    """A3 with fake cutoffs `fakes` (T,) on every clean model at once, vectorized over trials.

    Each clean model is tested with the other clean models as references; its null scale comes
    from each reference tested against the rest (never the tested model), as in `a3_one`.
    Returns arrays (T, M): effect, se (calibrated), p_value.
    """
    g = guard(th.guard_days)
    ok = matrix[clean].notna().all(axis=1) & dates.notna()
    y = matrix.loc[ok, clean].to_numpy(float)
    d = dates[ok].to_numpy()
    clusters = np.arange(len(d)) if th.a3_null == "item_normal" else d
    m = len(clean)
    targets, masks, owner = [], [], []
    for j in range(m):                   # problem (j, j): j tested; (j, r): placebo r without j
        for r in range(m):
            mask = np.ones(m, dtype=bool)
            mask[[j, r]] = False
            targets.append(r)
            masks.append(mask)
            owner.append(j)
    targets, masks = np.array(targets), np.array(masks)
    t_all = len(fakes)
    out = {k: np.full((t_all, m), np.nan) for k in ("effect", "se", "p_value")}
    chunk = max(1, int(4e6 // max(1, len(d) * len(targets))))
    for lo in range(0, t_all, chunk):
        f = fakes[lo:lo + chunk]
        pre = d[:, None] <= (f - g)[None, :]
        post = d[:, None] > (f + g)[None, :]
        good = (pre.sum(axis=0) >= th.a3_min_items) & (post.sum(axis=0) >= th.a3_min_items)
        if not good.any():
            continue
        core = a3_core(y, pre[:, good], post[:, good], clusters, targets, masks)
        z = core["z"].reshape(-1, m, m)                 # (T, j, r)
        eye = np.eye(m, dtype=bool)
        z_main = z[:, eye]                               # (T, m)
        z_plac = z[:, ~eye].reshape(-1, m, m - 1)
        se_main = core["se"].reshape(-1, m, m)[:, eye]
        p, _, _, se = _a3_p(z_main, z_plac, se_main, th)
        rows = np.arange(lo, lo + len(f))[good]
        out["effect"][rows] = core["effect"].reshape(-1, m, m)[:, eye]
        out["se"][rows] = se
        out["p_value"][rows] = p
    return out


def a3_placebo(items: pd.DataFrame, cutoffs: pd.DataFrame, *, rng: np.random.Generator, now: pd.Timestamp,
               trials: int, th: Thresholds = Thresholds()) -> pd.DataFrame:
    """Placebo A3 tests on real item data: models whose trusted cutoff (+ g) precedes every item
    are clean; each trial draws one fake cutoff per benchmark (uniform over the dates that leave
    `a3_min_items` on both sides) and tests every clean model against the others."""
    g = guard(th.guard_days)
    ref_cut = reference_cutoffs(cutoffs)
    frames = []
    for (source, bench), (matrix, dates, _) in _a3_frame(items, now).items():
        first = dates.min()
        clean = [mdl for mdl in matrix.columns if mdl in ref_cut.index and pd.notna(ref_cut[mdl])
                 and ref_cut[mdl] + g < first and matrix[mdl].notna().mean() >= A3_MIN_REF_COVERAGE]
        d = np.sort(dates.dropna().to_numpy())
        k = th.a3_min_items
        if len(clean) < th.a3_min_ref_models + 1 or len(d) < 2 * k:
            continue
        lo = pd.Timestamp(d[k - 1]) + g
        hi = pd.Timestamp(d[-k]) - g - pd.Timedelta(days=1)
        if lo > hi:
            continue
        fakes = (lo + pd.to_timedelta(rng.integers(0, (hi - lo).days + 1, size=trials), unit="D")).to_numpy()
        res = _a3_placebo_frame(matrix, dates, clean, fakes, th)
        frames.append(pd.DataFrame({
            "trial": np.repeat(np.arange(trials), len(clean)), "signal": "A3", "source": source, "benchmark": bench,
            "model": np.tile(clean, trials), "effect": res["effect"].ravel(), "se": res["se"].ravel(),
            "p_value": res["p_value"].ravel(), "gate": True}))
    out = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=PLACEBO_COLUMNS)
    return out[out["p_value"].notna()] if len(out) else out


def _reference_pool(scores: pd.DataFrame, benchmarks: pd.DataFrame, th: Thresholds) -> list[tuple[str, str, list[str]]]:
    """(source, benchmark, models) for every benchmark A1 can test: models with b's score (that
    source) and scores on all of b's reference benchmarks they are tested on (A1's own rule)."""
    bench = prepare_benchmarks(benchmarks)
    s = prepare_scores(scores, bench)
    table = _RefTable.build(s)
    pools = []
    for (source, b), rows in s.groupby(["source", "benchmark"], sort=True):
        refs_b = [r for r in bench["reference_benchmarks"].get(b, ()) if r != b and r in table.score.columns]
        if not refs_b:
            continue
        have = table.score.reindex(index=rows["model"], columns=refs_b).notna().all(axis=1)
        models = [m for m in rows["model"] if have.get(m, False)]
        if len(models) >= th.a1_min_ref_models + 2:
            pools.append((source, b, models))
    return pools


def a1_a2_placebo(scores: pd.DataFrame, benchmarks: pd.DataFrame, *, rng: np.random.Generator, trials: int,
                  th: Thresholds = Thresholds()) -> pd.DataFrame:
    """Real-data placebos of A1 and A2 (leave-one-reference-out).

    A1: per trial and benchmark, one random model of the reference pool is tested as if new,
    against the others (it is never its own reference). A2: one random ordered pair of pool
    models as a fake predecessor relation. Both ask whether the test's p-values are uniform on
    the population it assumes as null; a contaminated model in the pool can only push the rates
    up, so the figures bound the false-flag rate from above.
    """
    pools = _reference_pool(scores, benchmarks, th)
    frames = []
    for trial in range(trials):
        picks, pairs = set(), set()
        for _, b, models in pools:
            picks.add((models[rng.integers(len(models))], b))
            i, j = rng.choice(len(models), size=2, replace=False)
            pairs.add((models[i], models[j], b))
        tests = a1_tests(scores, benchmarks, rng=rng, th=th, only=lambda m, b: (m, b) in picks)
        tests += a2_predecessor_tests(scores, benchmarks, pd.DataFrame(), th=th, pairs=pairs)
        frames.append(pd.DataFrame([{"trial": trial, "signal": t.signal, "source": t.source, "benchmark": t.benchmark,
                                     "model": t.model, "effect": t.effect, "se": t.se, "p_value": t.p_value,
                                     "gate": True if t.signal == "A1" else t.gate} for t in tests],
                                   columns=PLACEBO_COLUMNS))
    frames = [f for f in frames if len(f)]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=PLACEBO_COLUMNS)


def _share_ci(hits: np.ndarray, n: np.ndarray, z: float = _Z95) -> tuple[float, float, float]:
    """Share Σhits/Σn with a CI that treats trials as clusters (tests of one trial share data):
    the larger of the cluster-robust ratio variance and the binomial one."""
    tot = n.sum()
    if tot == 0:
        return float("nan"), float("nan"), float("nan")
    p = hits.sum() / tot
    t = len(n)
    v_cl = ((hits - p * n) ** 2).sum() / tot ** 2 * (t / (t - 1)) if t > 1 else 0.0
    v_bin = p * (1 - p) / tot
    half = z * np.sqrt(max(v_cl, v_bin))
    return float(p), float(max(0.0, p - half)), float(min(1.0, p + half))


def _wilson(k: int, n: int, z: float = _Z95) -> tuple[float, float, float]:
    if n == 0:
        return float("nan"), float("nan"), float("nan")
    p = k / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return float(p), float(max(0.0, mid - half)), float(min(1.0, mid + half))


def summarize_placebo(placebo: pd.DataFrame, trials: int, th: Thresholds = Thresholds()) -> pd.DataFrame:
    """Per signal: share of placebo p below 0.01 and 0.05 (CI), the family-wise false-flag
    rate per trial after BH alone (q <= fdr_q within the signal's family) and after the full
    flag rule, each with a 95 % CI. `ok` is False when a share or the BH-only rate exceeds its
    nominal level (0.01, 0.05, fdr_q) beyond its CI (the CI's lower bound is above it)."""
    rows = []
    for signal in SIGNALS:
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
        k = per_trial.ngroups
        row["trials_tested"] = k
        row["fw_bh"], row["fw_bh_lo"], row["fw_bh_hi"] = _wilson(any_bh, k)
        row["fw_rule"], row["fw_rule_lo"], row["fw_rule_hi"] = _wilson(any_rule, k)
        row["ok"] = bool(row["p01_lo"] <= 0.01 and row["p05_lo"] <= 0.05 and row["fw_bh_lo"] <= th.fdr_q)
        rows.append(row)
    cols = ["signal", "trials", "trials_tested", "tests", "p01", "p01_lo", "p01_hi", "p05", "p05_lo", "p05_hi",
            "fw_bh", "fw_bh_lo", "fw_bh_hi", "fw_rule", "fw_rule_lo", "fw_rule_hi", "ok"]
    return pd.DataFrame(rows).reindex(columns=cols)


def calibrate(scores: pd.DataFrame | None, items: pd.DataFrame | None, cutoffs: pd.DataFrame,
              benchmarks: pd.DataFrame | None, *, rng: np.random.Generator, now: pd.Timestamp,
              trials: int = CALIBRATION_TRIALS, th: Thresholds = Thresholds(),
              bootstrap_b: int | None = None) -> pd.DataFrame:
    """Placebo calibration per signal (`a3_placebo`, `a1_a2_placebo`, `summarize_placebo`).

    Every placebo test is a false positive by construction; the summary says whether the
    p-values are as uniform as they claim (share below 0.01 and 0.05) and how often a trial's
    family would raise at least one flag.
    """
    th_run = Thresholds(**{**asdict(th), "bootstrap_b": bootstrap_b or th.bootstrap_b})
    frames = []
    if items is not None and not items.empty:
        frames.append(a3_placebo(items, cutoffs, rng=rng, now=now, trials=trials, th=th))
    if scores is not None and not scores.empty and benchmarks is not None:
        frames.append(a1_a2_placebo(scores, benchmarks, rng=rng, trials=trials, th=th_run))
    frames = [f for f in frames if len(f)]
    placebo = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=PLACEBO_COLUMNS)
    out = summarize_placebo(placebo, trials, th)
    log.info("[contamination] placebo calibration over %d trial(s): %s", trials,
             out[["signal", "tests", "p05", "fw_bh", "ok"]].to_dict("records"))
    return out

"""The A1 bootstrap as it was before issue 23 (a verbatim copy of analysis/contamination/a1.py
`a1_one` and the numerics it used: per-row PAVA through scipy's public isotonic_regression, the
logit of every redrawn score): the test oracle of the vectorised implementation
(tests/unit/test_a1_oracle.py). Not used by the product."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from analysis.constants import A1_MIN_TAIL_COUNT
from analysis.contamination.base import Thresholds
from analysis.contamination.link import _LinkData


def _logit(p: np.ndarray, n: np.ndarray | float) -> np.ndarray:
    """logit with the continuity clip p in [0.5/n, 1 - 0.5/n], so 0 % and 100 % stay finite."""
    eps = 0.5 / np.asarray(n, dtype=float)
    q = np.clip(p, eps, 1 - eps)
    return np.log(q) - np.log1p(-q)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _linear_coef(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row-wise least squares y = a + b x with b clipped at 0 (a monotone non-decreasing link)."""
    xm = x.mean(axis=-1, keepdims=True)
    ym = y.mean(axis=-1, keepdims=True)
    sxx = ((x - xm) ** 2).sum(axis=-1)
    sxy = ((x - xm) * (y - ym)).sum(axis=-1)
    slope = np.where(sxx > 0, sxy / np.where(sxx > 0, sxx, 1.0), 0.0)
    slope = np.maximum(slope, 0.0)
    return ym[..., 0] - slope * xm[..., 0], slope


ISOTONIC_BATCH_MAX_CELLS = 8_000_000
ISOTONIC_BATCH_MAX_N = 150


def isotonic_fit_batch(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Isotonic (non-decreasing) least-squares fits of B rows at once (see `_isotonic_fit_block`);
    memory bounded: chunks of rows, and a PAVA fit per row beyond ISOTONIC_BATCH_MAX_N points."""
    x, y = np.atleast_2d(np.asarray(x, dtype=float)), np.atleast_2d(np.asarray(y, dtype=float))
    b, n = x.shape
    if n > ISOTONIC_BATCH_MAX_N:
        return _isotonic_fit_rows(x, y)
    rows = max(1, ISOTONIC_BATCH_MAX_CELLS // max(n * n, 1))
    if b <= rows:
        return _isotonic_fit_block(x, y)
    parts = [_isotonic_fit_block(x[i:i + rows], y[i:i + rows]) for i in range(0, b, rows)]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def _isotonic_fit_rows(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The same fits row by row: tied x pooled to their mean (weighted by count), then weighted PAVA
    (scipy.optimize.isotonic_regression, compiled), for rows too long for the min-max formula."""
    from scipy.optimize import isotonic_regression
    order = np.argsort(x, axis=1, kind="stable")
    xs, ys = np.take_along_axis(x, order, axis=1), np.take_along_axis(y, order, axis=1)
    fit = np.empty_like(ys)
    for i in range(xs.shape[0]):
        starts = np.ones(xs.shape[1], dtype=bool)
        starts[1:] = xs[i, 1:] != xs[i, :-1]
        group = np.cumsum(starts) - 1
        counts = np.bincount(group).astype(float)
        means = np.bincount(group, weights=ys[i]) / counts
        fit[i] = isotonic_regression(means, weights=counts, increasing=True).x[group]
    return xs, fit


def _isotonic_fit_block(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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

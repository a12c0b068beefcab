"""Shared numerics of the signals: logit/sigmoid, isotonic and linear links, BH, CIs, JSON-safe values."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import isotonic_regression
from scipy.special import ndtri

from common.jsonsafe import jsonable  # noqa: F401 - the signals' evidence goes through it

# scipy.stats.norm.ppf(0.975) is ndtri(0.975) (tests/integration/test_scipy_equivalents.py): scipy.special,
# not scipy.stats
_Z95 = ndtri(0.975)


def _logit(p: np.ndarray, n: np.ndarray | float) -> np.ndarray:
    """logit with the continuity clip p in [0.5/n, 1 - 0.5/n], so 0 % and 100 % stay finite."""
    eps = 0.5 / np.asarray(n, dtype=float)
    q = np.clip(p, eps, 1 - eps)
    return np.log(q) - np.log1p(-q)


def _sigmoid(x: np.ndarray | float) -> np.ndarray:
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


# The min-max fit below holds B·n² numbers per array: above this many, rows go in chunks (the same
# numbers, row by row independent), and above ISOTONIC_BATCH_MAX_N reference models each row is fitted
# by PAVA instead (O(n) per row: a 445-model table × 2,000 bootstrap rows is 400M cells, ~3 GB per array).
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
    (scipy's `isotonic_regression`), for rows too long for the min-max formula.

    The sort and the pooling of ties are done for all rows at once (group numbers running over the
    whole batch: `bincount` adds each group's values in the same order as row by row), so the loop
    only calls PAVA on each row's group means, in place (issue 23: a 445-model bootstrap is 2,000
    such rows per tested model)."""
    b, n = x.shape
    flat = (stable_argsort_rows(x) + (np.arange(b) * n)[:, None]).reshape(-1)
    xs, ys = x.reshape(-1)[flat].reshape(b, n), y.reshape(-1)[flat]
    starts = np.ones((b, n), dtype=bool)
    starts[:, 1:] = xs[:, 1:] != xs[:, :-1]
    group = np.cumsum(starts.reshape(-1)) - 1                 # group number over the whole batch
    counts = np.bincount(group).astype(float)
    means = np.bincount(group, weights=ys) / counts
    bounds = np.r_[0, np.cumsum(np.count_nonzero(starts, axis=1))].tolist()   # row i: bounds[i]:bounds[i+1]
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        means[lo:hi] = isotonic_regression(means[lo:hi], weights=counts[lo:hi], increasing=True).x
    return xs, means[group].reshape(b, n)


def stable_argsort_rows(x: np.ndarray) -> np.ndarray:
    """`np.argsort(x, axis=1, kind="stable")` of a 2-D float array.

    A stable argsort of floats is a merge sort, which numpy does not vectorise as it does its quicksort;
    here: the quick argsort, then each run of ties put back in index order by sorting the integer
    keys (run number, index), which is the stable order exactly (NaN last, as numpy sorts them)."""
    x = np.atleast_2d(np.asarray(x, dtype=float))
    b, n = x.shape
    small = n * (n + 1) < 2 ** 31
    order = np.argsort(x, axis=1).astype(np.int32 if small else np.intp, copy=False)
    xs = x.reshape(-1)[order + (np.arange(b, dtype=order.dtype) * n)[:, None]]
    starts = np.ones((b, n), dtype=bool)
    np.not_equal(xs[:, 1:], xs[:, :-1], out=starts[:, 1:])
    if np.isnan(xs[:, -1]).any():                              # NaN sort last: one run of ties
        starts[:, 1:] &= ~(np.isnan(xs[:, 1:]) & np.isnan(xs[:, :-1]))
    run = np.cumsum(starts, axis=1, dtype=order.dtype)
    run *= n
    key = run + order
    key.sort(axis=1)
    key -= run
    return key.astype(np.intp)


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
    # One (B, n, n) array, worked in place (the B·n² temporaries were most of the cost). Its cells
    # below the diagonal (k < j) are left as they come: the min over k >= i of row j, taken from the
    # right, reads them only for i < j, which the -inf mask discards. Min and max are exact, so the
    # fit is the same number whatever the order they are taken in.
    means = np.subtract(cum[:, None, 1:], cum[:, :-1, None])
    means /= np.where(upper, k + 1 - j, 1).astype(float)
    if not ends.all():
        np.copyto(means, np.inf, where=~ends[:, None, :])
    tail_min = means[:, :, ::-1]
    np.minimum.accumulate(tail_min, axis=2, out=tail_min)              # min over k >= i, in place
    np.copyto(means, -np.inf, where=~upper)
    if not starts.all():
        np.copyto(means, -np.inf, where=~starts[:, :, None])
    return xs, means.max(axis=1)


def _isotonic_predict_batch(x: np.ndarray, y: np.ndarray, x_new: np.ndarray) -> np.ndarray:
    """`_isotonic_predict` for B rows at once: x, y (B, n), x_new (B, K) -> (B, K)."""
    xs, fit = isotonic_fit_batch(x, y)
    _, slope = _linear_coef(x, y)
    q = np.broadcast_to(np.asarray(x_new, dtype=float), (xs.shape[0], np.shape(x_new)[-1]))
    n = xs.shape[1]
    pos = np.count_nonzero(xs[:, None, :] <= q[:, :, None], axis=-1)   # (B, K): points <= q
    left, right = np.clip(pos - 1, 0, n - 1), np.clip(pos, 0, n - 1)
    xl, xr = np.take_along_axis(xs, left, axis=1), np.take_along_axis(xs, right, axis=1)
    fl, fr = np.take_along_axis(fit, left, axis=1), np.take_along_axis(fit, right, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(xr > xl, (q - xl) / np.where(xr > xl, xr - xl, 1.0), 0.0)
    out = fl + t * (fr - fl)
    out = np.where(q < xs[:, :1], fit[:, :1] + slope[:, None] * (q - xs[:, :1]), out)
    out = np.where(q > xs[:, -1:], fit[:, -1:] + slope[:, None] * (q - xs[:, -1:]), out)
    return np.where(np.isnan(q), np.nan, out)


def _link_predict(x: np.ndarray, y: np.ndarray, x_new: np.ndarray | list[list[float]], *, isotonic: bool,
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

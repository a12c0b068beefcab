"""The logistic S-curve behind the trends' forecast and plateau test (analysis.trends, whose
docstring gives the model): F(t) = floor + (L - floor) / (1 + exp(-k (t - t0))), fitted by
least squares with k > 0 and max F <= L <= ceiling, the time it reaches a threshold with a
delta-method SD, and the extra-sum-of-squares F-test of a plateau below the threshold.

Pure: arrays in, numbers out.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import curve_fit
from scipy.special import expit, fdtrc

from analysis.constants import LOGISTIC_MAX_RATE, LOGISTIC_T0_SPAN_YEARS

log = logging.getLogger("benchwatch.analysis.logistic")


def logistic(t: np.ndarray, k: float, t0: float, L: float, floor: float) -> np.ndarray:
    """floor + (L - floor) / (1 + exp(-k (t - t0)))."""
    return floor + (L - floor) * expit(k * (np.asarray(t, dtype="float64") - t0))


def _jacobian(t: np.ndarray, k: float, t0: float, L: float, floor: float) -> np.ndarray:
    """d logistic / d(k, t0, L) at each t, shape (len(t), 3): with s = expit(k (t - t0)),
    (L - floor) s (1 - s) (t - t0), -(L - floor) s (1 - s) k, and s."""
    s = expit(k * (t - t0))
    ds = (L - floor) * s * (1.0 - s)
    return np.column_stack([ds * (t - t0), -k * ds, s])


@dataclass(frozen=True)
class LogisticFit:
    k: float
    t0: float              # years since the first record
    L: float
    cov: np.ndarray        # covariance of (k, t0, L), or of (k, t0) when L was fixed
    L_fixed: bool


def fit_logistic(t: np.ndarray, y: np.ndarray, *, floor: float, ceiling: float,
                 L_fixed: float | None = None) -> LogisticFit:
    """Least-squares logistic through (t years, y) with k > 0 and max y <= L <= ceiling.

    Several starting points; the one with the smallest residual sum wins. Raises
    RuntimeError when no start converges. The solver is given the derivatives (`_jacobian`):
    estimating them by differences was a third of a fit's time, for the same fits.
    """
    t = np.asarray(t, dtype="float64")
    y = np.asarray(y, dtype="float64")
    t_lo, t_hi = t.min() - LOGISTIC_T0_SPAN_YEARS, t.max() + LOGISTIC_T0_SPAN_YEARS
    y_max = float(y.max())
    best = None
    for k0 in (0.5, 2.0, 8.0):
        for t00 in (float(np.median(t)), float(t.max())):
            try:
                if L_fixed is None:
                    L_hi = max(ceiling, y_max + 1e-9)
                    L0 = min(L_hi, y_max + 0.5 * (L_hi - y_max))
                    p, cov = curve_fit(lambda tt, k, t0, L: logistic(tt, k, t0, L, floor), t, y,
                                       p0=[k0, t00, L0], bounds=([1e-6, t_lo, y_max], [LOGISTIC_MAX_RATE, t_hi, L_hi]),
                                       method="trf", maxfev=20_000, jac=lambda tt, k, t0, L: _jacobian(tt, k, t0, L, floor))
                else:
                    L_set = float(L_fixed)
                    p, cov = curve_fit(lambda tt, k, t0: logistic(tt, k, t0, L_set, floor), t, y,
                                       p0=[k0, t00], bounds=([1e-6, t_lo], [LOGISTIC_MAX_RATE, t_hi]),
                                       method="trf", maxfev=20_000,
                                       jac=lambda tt, k, t0: _jacobian(tt, k, t0, L_set, floor)[:, :2])
            except (RuntimeError, ValueError) as exc:
                log.debug("[trends] logistic start k=%s t0=%s failed: %s", k0, t00, exc)
                continue
            L = float(p[2]) if L_fixed is None else float(L_fixed)
            sse = float(np.sum((logistic(t, p[0], p[1], L, floor) - y) ** 2))
            if best is None or sse < best[0]:
                best = (sse, LogisticFit(k=float(p[0]), t0=float(p[1]), L=L, cov=np.asarray(cov), L_fixed=L_fixed is not None))
    if best is None:
        raise RuntimeError("logistic fit did not converge from any starting point")
    return best[1]


def logistic_time_to(fit: LogisticFit, target: float, floor: float) -> tuple[float | None, float | None]:
    """(t_y, sd) in years: t_y = t0 - ln((L - floor) / (y - floor) - 1) / k; None when y >= L."""
    if not floor < target < fit.L:
        return None, None
    a = (fit.L - floor) / (target - floor) - 1.0
    t_y = fit.t0 - math.log(a) / fit.k
    grad = [math.log(a) / fit.k ** 2, 1.0]                       # d/dk, d/dt0
    if not fit.L_fixed:
        grad.append(-1.0 / (fit.k * a * (target - floor)))     # d/dL
    g = np.asarray(grad)
    var = float(g @ fit.cov @ g) if np.isfinite(fit.cov).all() else math.nan
    return t_y, (math.sqrt(var) if var >= 0 and math.isfinite(var) else None)


def plateau_test(t: np.ndarray, y: np.ndarray, free: LogisticFit, target: float, *,
                 floor: float) -> tuple[float | None, int]:
    """One-sided test that the plateau L lies below `target`: (p, residual df).

    H0: L = target (the boundary of L >= target, where the frontier would still reach the
    threshold); H1: L < target, with L-hat < target from the free fit. Extra sum of squares:
    F = (SSE_0 - SSE_1) / (SSE_1 / (n - 3)) ~ F(1, n - 3) under H0, n = record points, 3 free
    parameters (k, t0, L). With 5 records that is 2 residual df: a plateau needs strong evidence.
    p is None when the H0 fit does not converge.
    """
    n = len(t)
    df2 = n - 3
    if df2 < 1:
        return None, df2
    try:
        null = fit_logistic(t, y, floor=floor, ceiling=target, L_fixed=target)
    except RuntimeError:
        return None, df2
    sse1 = float(np.sum((logistic(t, free.k, free.t0, free.L, floor) - y) ** 2))
    sse0 = float(np.sum((logistic(t, null.k, null.t0, null.L, floor) - y) ** 2))
    if sse0 <= sse1:
        return 1.0, df2
    if sse1 <= 0:
        return 0.0, df2
    stat = (sse0 - sse1) / (sse1 / df2)
    # the F(1, df2) upper tail: scipy.stats.f.sf(stat, 1, df2) is fdtrc(1, df2, stat)
    # (tests/integration/test_scipy_equivalents.py)
    return float(fdtrc(1, df2, stat)), df2

"""The trailing trend of a benchmark's frontier: a Theil-Sen slope through its distinct points.

In calendar time reconstructed from model dates (docs/statistics.md, "Trends and forecasts"; the
frontier itself and the forecast are analysis/trends.py): over the 365 days ending at the
benchmark's last dated result `trend_end` (never the wall clock: a source that ended months ago
must not read as a flat year), `stale_days` = now - trend_end. F is a step function: sampled on a grid, most pairwise slopes are ties and
Theil-Sen's CI collapses to [0, 0]. The fit therefore uses the distinct frontier points only:
the frontier carried into the window at its start, every record in the window, and the
frontier at its end (the flat tail after the last record counts). Theil-Sen slope and its
95% CI (`theilslopes`: scipy.stats.theilslopes' numbers) through those points, in pp/month for proportions (metric
units/month otherwise). Simulated step frontiers (tests/unit/test_trends.py) show the CI covering
the true drift at 0.88-0.95 where the grid method covers 0.4-0.7.
`trend_status`: ok | too_few_points (fewer than TREND_MIN_POINTS = 6 points: slope, no CI;
from 3-5 points the "95% CI" is just the range of the pairwise slopes) | no_record_in_window
(the frontier did not move: slope 0, no CI) | no_data_in_window (< 2 model dates: NULL slope).
`stalled` iff no movement is shown (no record, or a CI containing 0, or no CI) and the last
record is more than 180 days older than trend_end.

Pure: nothing is read or written.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy.special import ndtri

from analysis.constants import (
    STALLED_MIN_DAYS,
    TREND_CONFIDENCE,
    TREND_MIN_DATES,
    TREND_MIN_POINTS,
    TREND_WINDOW_DAYS,
)

TREND_OK = "ok"
TREND_TOO_FEW_POINTS = "too_few_points"
TREND_NO_RECORD = "no_record_in_window"
TREND_NO_DATA = "no_data_in_window"


@dataclass(frozen=True)
class TrendFit:
    """Slope of the frontier over the window ending at its last result; slopes in metric units per day.

    `slope` is NaN for no_data_in_window; `low`/`high` are NaN unless status is ok.
    """

    status: str
    start: pd.Timestamp
    end: pd.Timestamp
    slope: float
    low: float
    high: float
    x_med: float          # pivot of the line: median point time (days since 1970) and value
    y_med: float
    n_points: int         # distinct frontier points fitted
    n_dates: int          # distinct model dates in the window

    @property
    def moving(self) -> bool:
        """The CI excludes 0: the frontier shows a significant change (up, or down for costs)."""
        return self.status == TREND_OK and (self.low > 0 or self.high < 0)


def epoch_days(ts) -> np.ndarray:
    return (pd.to_datetime(pd.Series(ts)).to_numpy(dtype="datetime64[ns]").astype("int64") / 86_400e9)


def from_epoch_days(x: float | None) -> pd.Timestamp | None:
    """Days since 1970 -> Timestamp; None when not finite or outside pandas' nanosecond range.

    Callers bound forecast dates to the horizon first; this keeps any other value from
    overflowing (a Timestamp of year 55,824 cannot be formatted and wraps in a TIMESTAMP column).
    """
    if x is None or not math.isfinite(x) or not _MIN_DAYS <= x <= _MAX_DAYS:
        return None
    return pd.Timestamp(int(round(x * 86_400)), unit="s").as_unit("ns")


_MIN_DAYS = pd.Timestamp.min.value / 86_400e9 + 1      # pandas' datetime64[ns] range, in days since 1970
_MAX_DAYS = pd.Timestamp.max.value / 86_400e9 - 1


def frontier_trend(as_of: pd.Series, frontier: pd.Series, is_record: pd.Series, *,
                   end: pd.Timestamp | None = None, window_days: int = TREND_WINDOW_DAYS,
                   confidence: float = TREND_CONFIDENCE, min_points: int = TREND_MIN_POINTS) -> TrendFit:
    """Theil-Sen slope through the distinct points of a step frontier over (end - window, end].

    `as_of`, `frontier`, `is_record`: one benchmark's frontier history, oldest first. `end`
    defaults to its last date (the benchmark's last result). Points: (start, frontier carried
    into the window) when there is history before it, each record in the window, and (end,
    frontier at end) unless the last record is at `end`. Fitting these instead of a regular
    grid keeps the ties of a step function from collapsing the CI to [0, 0]; the flat time after
    the last record still pulls the slope down through the end point. Fewer than `min_points`
    points: a slope without a CI (`min_points` other than the default only to study the CI).
    """
    t = pd.to_datetime(pd.Series(as_of)).reset_index(drop=True)
    f = pd.Series(np.asarray(frontier, dtype="float64"))
    rec = pd.Series(np.asarray(is_record, dtype=bool))
    end = t.iat[-1] if end is None else pd.Timestamp(end)
    keep = t <= end
    t, f, rec = t[keep], f[keep], rec[keep]
    start = end - pd.Timedelta(days=window_days)
    inside = t > start
    n_dates = int(t[inside].nunique())
    nan = math.nan
    if n_dates < TREND_MIN_DATES:
        return TrendFit(TREND_NO_DATA, start, end, nan, nan, nan, nan, nan, 0, n_dates)
    xs: list = []
    ys: list = []
    if (~inside).any():
        xs.append(start)
        ys.append(float(f[~inside].iat[-1]))
    xs += list(t[inside & rec])
    ys += list(f[inside & rec])
    if xs[-1] != end:
        xs.append(end)
        ys.append(float(f.iat[-1]))
    x = epoch_days(xs)
    y = np.asarray(ys, dtype="float64")
    x_med, y_med = float(np.median(x)), float(np.median(y))
    if not (inside & rec).any():
        return TrendFit(TREND_NO_RECORD, start, end, 0.0, nan, nan, x_med, y_med, len(x), n_dates)
    if len(x) < max(min_points, 3):
        slope = float((y[-1] - y[0]) / (x[-1] - x[0]))
        return TrendFit(TREND_TOO_FEW_POINTS, start, end, slope, nan, nan, x_med, y_med, len(x), n_dates)
    res = theilslopes(y, x, alpha=confidence)
    return TrendFit(TREND_OK, start, end, float(res.slope), float(res.low_slope), float(res.high_slope),
                    float(np.median(x)), float(res.intercept + res.slope * np.median(x)), len(x), n_dates)


class TheilSen(NamedTuple):
    slope: float
    intercept: float
    low_slope: float
    high_slope: float


def theilslopes(y, x, alpha: float = 0.95) -> TheilSen:
    """Theil-Sen slope, intercept and the slope's `alpha` CI (Sen 1968, eq. 2.6): the steps of
    `scipy.stats.theilslopes(y, x, alpha)` (scipy 1.17, method 'separate', NaNs propagated) with
    the same numbers (tests/integration/test_scipy_equivalents.py)."""
    y = np.array(y, dtype=float, copy=True).ravel()
    x = np.array(x, dtype=float, copy=True).ravel()
    if len(x) != len(y):
        raise ValueError("theilslopes: x and y differ in length")
    if len(x) < 2 or np.isnan(x).any() or np.isnan(y).any():
        return TheilSen(math.nan, math.nan, math.nan, math.nan)
    deltax = x[:, np.newaxis] - x
    deltay = y[:, np.newaxis] - y
    slopes = deltay[deltax > 0] / deltax[deltax > 0]
    slopes.sort()
    medslope = np.median(slopes)
    medinter = np.median(y) - medslope * np.median(x)
    if alpha > 0.5:
        alpha = 1. - alpha
    z = ndtri(alpha / 2.)
    nt, ny = len(slopes), len(y)
    sigsq = 1 / 18. * (ny * (ny - 1) * (2 * ny + 5) - sum(k * (k - 1) * (2 * k + 5) for k in _repeats(x))
                       - sum(k * (k - 1) * (2 * k + 5) for k in _repeats(y)))
    try:
        sigma = np.sqrt(sigsq)
        ru = min(int(np.round((nt - z * sigma) / 2.)), len(slopes) - 1)
        rl = max(int(np.round((nt + z * sigma) / 2.)) - 1, 0)
        low, high = slopes[[rl, ru]]
    except (ValueError, IndexError):
        low, high = np.nan, np.nan
    return TheilSen(medslope, medinter, low, high)


def _repeats(arr: np.ndarray) -> np.ndarray:
    """How often each value of `arr` that occurs more than once occurs (scipy's _find_repeats)."""
    arr = np.sort(np.asarray(arr, np.float64).ravel())
    change = np.concatenate(([True], arr[1:] != arr[:-1]))
    freq = np.diff(np.concatenate(np.nonzero(change) + ([arr.size],)))
    return freq[freq > 1]


def is_stalled(fit: TrendFit, last_record_at: pd.Timestamp) -> bool | None:
    """No movement shown over the window (no record, no CI, or a CI containing 0) and the last record
    more than STALLED_MIN_DAYS before the trend's end. None when the window holds no data."""
    if fit.status == TREND_NO_DATA:
        return None
    return bool(not fit.moving and (fit.end - pd.Timestamp(last_record_at)) / pd.Timedelta(days=1) > STALLED_MIN_DAYS)

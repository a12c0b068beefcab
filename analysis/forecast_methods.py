"""The forecasters the backtest compares (analysis/backtest.py; docs/statistics.md, "Forecasts with
a track record"): each sees one table's frontier as it stood at an origin (`Past`) and forecasts
the frontier some days ahead, with its own interval where it has one.

- `persistence` (no change: F(o)), the baseline every MAE stands beside;
- `theil_sen`: the trailing-year Theil-Sen slope of analysis.frontier_trend.frontier_trend ending at o,
  anchored at F(o): F(o) + max(slope, 0) h, capped at the ceiling; its own interval from the
  slope's 80 % CI;
- `logistic`: analysis.logistic fitted to the records dated <= o (at least
  FORECAST_MIN_RECORDS), L fixed at the ceiling when no inflection shows, as the trends do; its
  own interval by the delta method.

A frontier never falls, so every forecast and bound is at least F(o). Pure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
import pandas as pd
from scipy.special import ndtri

from analysis.constants import BACKTEST_NOMINAL, DAYS_PER_YEAR, FORECAST_HORIZON_YEARS, FORECAST_MIN_RECORDS
from analysis.logistic import _jacobian, fit_logistic, logistic, logistic_time_to
from analysis.frontier_trend import TREND_NO_DATA, frontier_trend
from analysis.live_forecast import DAMPED, LOGISTIC, PERSISTENCE, THEIL_SEN


@dataclass(frozen=True)
class Past:
    """One table's frontier as seen at `origin` (days since 1970): its points dated <= origin."""

    table_id: str
    days: np.ndarray          # frontier point dates, days since 1970, oldest first
    frontier: np.ndarray
    is_record: np.ndarray
    origin: float
    floor: float | None
    ceiling: float | None

    @property
    def now(self) -> float:
        """F(origin): the frontier at the origin."""
        return float(self.frontier[-1])


@dataclass
class Method:
    """A forecaster: `values(past, horizons in days)` -> per horizon (forecast, low, high) or None
    (abstains; low/high NaN when it has no interval of its own); `crossing(past, threshold)` ->
    days since 1970 when it forecasts the frontier reaches `threshold`, or None."""

    values: Callable[[Past, Sequence[float]], list[tuple[float, float, float] | None]]
    crossing: Callable[[Past, float], float | None] = lambda past, threshold: None
    cache: dict = field(default_factory=dict)


# --- the methods -----------------------------------------------------------------------------------

_Z = float(ndtri(0.5 + BACKTEST_NOMINAL / 2))      # the central-80 % normal quantile, 1.2816


def _cap(v: float, past: Past) -> float:
    """A frontier value: never below F(origin), never above the ceiling."""
    v = max(v, past.now)
    return min(v, past.ceiling) if past.ceiling is not None else v


def _persistence(past: Past, horizons: Sequence[float]) -> list[tuple[float, float, float] | None]:
    return [(past.now, math.nan, math.nan) for _ in horizons]


def _trend(past: Past):
    ts = pd.Series(pd.to_datetime(np.round(past.days * 86_400).astype("int64"), unit="s"))
    return frontier_trend(ts, past.frontier, past.is_record, end=pd.Timestamp(round(past.origin * 86_400), unit="s"),
                          confidence=BACKTEST_NOMINAL)


def _theil_sen(past: Past, horizons: Sequence[float]) -> list[tuple[float, float, float] | None]:
    fit = _trend(past)
    if fit.status == TREND_NO_DATA or not math.isfinite(fit.slope):
        return [None for _ in horizons]
    out: list[tuple[float, float, float] | None] = []
    for h in horizons:
        point = _cap(past.now + max(fit.slope, 0.0) * h, past)
        if math.isfinite(fit.low) and math.isfinite(fit.high):
            out.append((point, _cap(past.now + max(fit.low, 0.0) * h, past),
                        _cap(past.now + max(fit.high, 0.0) * h, past)))
        else:
            out.append((point, math.nan, math.nan))
    return out


def _theil_sen_crossing(past: Past, threshold: float) -> float | None:
    fit = _trend(past)
    if fit.status == TREND_NO_DATA or not fit.slope > 0:
        return None
    when = past.origin + (threshold - past.now) / fit.slope
    return when if when <= past.origin + FORECAST_HORIZON_YEARS * DAYS_PER_YEAR else None


def _logistic_fit(past: Past, cache: dict):
    """The logistic through the records dated <= origin (None: too few, no ceiling, no fit);
    cached per table and number of records (the fit sees only the records)."""
    if past.floor is None or past.ceiling is None or not past.ceiling > past.floor:
        return None
    rec_days = past.days[past.is_record]
    if len(rec_days) < FORECAST_MIN_RECORDS:
        return None
    key = (past.table_id, len(rec_days))
    if key not in cache:
        t = (rec_days - rec_days[0]) / DAYS_PER_YEAR
        y = past.frontier[past.is_record]
        try:
            lf = fit_logistic(t, y, floor=past.floor, ceiling=past.ceiling)
            if y.max() < past.floor + (lf.L - past.floor) / 2:      # no inflection: L at the ceiling (as trends)
                lf = fit_logistic(t, y, floor=past.floor, ceiling=past.ceiling, L_fixed=past.ceiling)
            cache[key] = (lf, float(rec_days[0]))
        except RuntimeError:
            cache[key] = None
    return cache[key]


def _make_logistic() -> Method:
    cache: dict = {}

    def values(past: Past, horizons: Sequence[float]) -> list[tuple[float, float, float] | None]:
        got = _logistic_fit(past, cache)
        if got is None:
            return [None for _ in horizons]
        lf, start = got
        floor = float(past.floor)      # type: ignore[arg-type]     # _logistic_fit checked it
        out: list[tuple[float, float, float] | None] = []
        for h in horizons:
            t = np.asarray([(past.origin + h - start) / DAYS_PER_YEAR])
            point = float(logistic(t, lf.k, lf.t0, lf.L, floor)[0])
            jac = _jacobian(t, lf.k, lf.t0, lf.L, floor)[0]
            jac = jac[:2] if lf.L_fixed else jac
            var = float(jac @ lf.cov @ jac) if np.isfinite(lf.cov).all() else math.nan
            sd = math.sqrt(var) if var >= 0 else math.nan
            out.append((_cap(point, past), _cap(point - _Z * sd, past) if math.isfinite(sd) else math.nan,
                        _cap(point + _Z * sd, past) if math.isfinite(sd) else math.nan))
        return out

    def crossing(past: Past, threshold: float) -> float | None:
        got = _logistic_fit(past, cache)
        if got is None:
            return None
        lf, start = got
        t_y, _ = logistic_time_to(lf, threshold, float(past.floor))      # type: ignore[arg-type]
        if t_y is None or not math.isfinite(t_y):
            return None
        when = start + t_y * DAYS_PER_YEAR
        return when if past.origin < when <= past.origin + FORECAST_HORIZON_YEARS * DAYS_PER_YEAR else None

    return Method(values=values, crossing=crossing, cache=cache)


def default_methods() -> dict[str, Method]:
    """The methods the backtest compares (fresh caches)."""
    return {PERSISTENCE: Method(values=_persistence), THEIL_SEN: Method(values=_theil_sen, crossing=_theil_sen_crossing),
            LOGISTIC: _make_logistic()}

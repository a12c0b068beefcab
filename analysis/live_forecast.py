"""A table's live forecast from the backtest's record (docs/statistics.md, "Forecasts with a track
record"): the method names, the kind a metric is scored as, and the forecast with its calibrated
interval. Arithmetic on stored rows only, apart from the backtest's fitting (analysis/backtest.py,
analysis/forecast_methods.py), so the report that prints it loads no optimiser.

Pure: numbers and frames in, a frame out.
"""

from __future__ import annotations

import math

import pandas as pd

from analysis.constants import DAYS_PER_MONTH
from analysis.saturation import PROPORTION

PERSISTENCE, THEIL_SEN, LOGISTIC, DAMPED = "persistence", "theil_sen", "logistic", "damped_theil_sen"


def kind_of(metric: str) -> tuple[str, str, float]:
    """(kind, unit, scale): proportions are one kind in pp (x 100); any other metric its own kind and unit."""
    return (PROPORTION, "pp", 100.0) if metric == PROPORTION else (str(metric), str(metric), 1.0)


def live_forecast(frontier: float, slope_per_day: float, ceiling: float | None, record: pd.DataFrame, *,
                  metric: str) -> pd.DataFrame:
    """The frontier forecast of the method a kind's backtest chose, with the interval the backtest
    calibrated (F-hat + q + q_per_rise (F-hat - F), clipped to [F, ceiling]): one row per horizon
    (horizon_months, forecast, low, high, method, n), in the metric's units. `record`:
    forecast_backtest_summary rows of the kind's chosen method;
    `frontier`, `slope_per_day`: the table's current frontier and trailing Theil-Sen slope. Empty
    when the chosen method is persistence (no forecast earned) or not one this can apply."""
    cols = ["horizon_months", "forecast", "low", "high", "method", "n"]
    if not len(record) or not math.isfinite(frontier) or not math.isfinite(slope_per_day):
        return pd.DataFrame(columns=cols)
    _, _, scale = kind_of(metric)
    out = []
    for r in record.sort_values("horizon_months").to_dict("records"):
        if r["method"] not in (THEIL_SEN, DAMPED):
            continue
        days = float(r["horizon_months"]) * DAYS_PER_MONTH
        line = frontier + max(slope_per_day, 0.0) * days
        line = min(line, ceiling) if ceiling is not None else line
        lam = 1.0 if r["method"] == THEIL_SEN else float(r["damping"])
        if not math.isfinite(lam):
            continue
        point = frontier + lam * (line - frontier)

        def bound(q: float, per_rise) -> float:
            per_rise = 0.0 if per_rise is None or pd.isna(per_rise) else float(per_rise)
            v = max(point + q / scale + per_rise * (point - frontier), frontier)
            return min(v, ceiling) if ceiling is not None else v
        out.append({"horizon_months": int(r["horizon_months"]), "forecast": point,
                    "low": bound(float(r["q_low"]), r.get("q_low_per_rise")),
                    "high": bound(float(r["q_high"]), r.get("q_high_per_rise")), "method": r["method"],
                    "n": int(r["n"])})
    return pd.DataFrame(out, columns=cols)

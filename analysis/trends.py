"""How a benchmark's frontier moves: history, trailing trend, stall, and an S-curve forecast.

DESIGN §4 / METHODS C1-C3, in calendar time reconstructed from model dates:

- Frontier F(t) = best score among models dated <= t; top-k mean; CV of the top k
  (sd / mean, population sd), and its mean over a trailing 90-day window. A falling CV with a
  rising S_index means the top models are bunching.
- Trend: Theil-Sen slope of F over the trailing 365 days (`scipy.stats.theilslopes`, 95% CI),
  in pp/month for proportions (metric units/month otherwise). F is a step function, so it is
  sampled on a regular grid (every TREND_GRID_DAYS back from `now`) rather than at model
  dates, which would weight release bursts. The CI treats grid points as independent.
  `stalled` iff the CI contains 0 and the last record is more than 180 days old.
- Forecast: logistic F(t) = floor + (L - floor) / (1 + exp(-k (t - t0))) fitted to the
  record-setting points (`scipy.optimize.curve_fit`, bounds k > 0, max F <= L <= ceiling;
  t in years), threshold y = floor + progress * (ceiling - floor), forecast
  t_y = t0 - ln((L - floor) / (y - floor) - 1) / k with a delta-method CI from the fit's
  covariance. `insufficient_data` below 5 records, when no inflection is visible (max F <
  fitted midpoint: refit with L = ceiling, reported but flagged), when the fit pins L at the
  last record while the trailing-year slope is still significantly positive (no plateau
  visible either), or when the CI is wider than 24 months; the forecast then falls back to
  extrapolating the Theil-Sen line. A fitted plateau L whose 95% CI lies below the threshold
  is `plateau` (no forecast date); one whose CI reaches the threshold is insufficient data.

Pure: `now` is an argument, nothing is read or written.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import curve_fit
from scipy.special import expit
from scipy.stats import theilslopes

from analysis.constants import (
    CV_WINDOW_DAYS,
    DAYS_PER_MONTH,
    DAYS_PER_YEAR,
    FORECAST_CI_Z,
    FORECAST_MAX_CI_MONTHS,
    FORECAST_MIN_RECORDS,
    FORECAST_PROGRESS,
    LOGISTIC_L_BOUND_TOL,
    LOGISTIC_MAX_RATE,
    LOGISTIC_T0_SPAN_YEARS,
    SATURATION_K,
    STALLED_MIN_DAYS,
    TREND_CONFIDENCE,
    TREND_GRID_DAYS,
    TREND_MIN_POINTS,
    TREND_WINDOW_DAYS,
)
from analysis.saturation import PROPORTION, running_topk

log = logging.getLogger("benchwatch.analysis.trends")

FRONTIER_COLUMNS = ["benchmark", "as_of", "n_models", "frontier", "frontier_model", "topk_mean", "cv_topk",
                    "cv_topk_90d", "is_record"]


def frontier_history(df: pd.DataFrame, k: int = SATURATION_K) -> pd.DataFrame:
    """Per benchmark and distinct model date: frontier, its model, top-k mean and CV, record flag.

    `df`: benchmark, model, score, date. Top-k mean and CV need k models (NaN before).
    `is_record`: the frontier rose at this date (the first date is a record).
    """
    run = running_topk(df, k)
    if run.empty:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in FRONTIER_COLUMNS})
    full = run["n_models"].to_numpy() >= k
    tops = np.full((len(run), k), np.nan)
    for i, row in enumerate(run["top_scores"]):
        tops[i, :len(row)] = row[:k]
    mean = np.where(full, tops.mean(axis=1), np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        cv = np.where(full & (mean > 0), tops.std(axis=1) / mean, np.nan)
    out = pd.DataFrame({
        "benchmark": run["benchmark"], "as_of": run["as_of"], "n_models": run["n_models"],
        "frontier": tops[:, 0], "frontier_model": run["top_models"].map(lambda m: m[0]),
        "topk_mean": mean, "cv_topk": cv,
    })
    prev = out.groupby("benchmark", sort=False)["frontier"].shift(1)
    out["is_record"] = prev.isna() | (out["frontier"] > prev)
    rolled = (out.set_index("as_of").groupby("benchmark", sort=False)["cv_topk"]
              .rolling(f"{CV_WINDOW_DAYS}D", min_periods=1).mean())
    out["cv_topk_90d"] = rolled.to_numpy()
    return out[FRONTIER_COLUMNS]


# --- trend ------------------------------------------------------------------------------

@dataclass(frozen=True)
class TrendFit:
    """Theil-Sen line through the sampled frontier; slopes in metric units per day."""

    slope: float
    low: float
    high: float
    x_med: float          # pivot of the line: median sample time (days since 1970) and value
    y_med: float
    n_points: int


def _days(ts) -> np.ndarray:
    return (pd.to_datetime(pd.Series(ts)).to_numpy(dtype="datetime64[ns]").astype("int64") / 86_400e9)


def _from_days(x: float | None) -> pd.Timestamp | None:
    if x is None or not math.isfinite(x):
        return None
    return pd.Timestamp(int(round(x * 86_400)), unit="s")


def theil_sen_trend(as_of: pd.Series, frontier: pd.Series, *, now) -> TrendFit | None:
    """Theil-Sen slope of the step-function frontier over the trailing window, sampled on a grid."""
    now = pd.Timestamp(now)
    t = pd.to_datetime(as_of).to_numpy(dtype="datetime64[ns]")
    f = np.asarray(frontier, dtype="float64")
    grid = pd.date_range(end=now, periods=TREND_WINDOW_DAYS // TREND_GRID_DAYS + 1,
                         freq=f"{TREND_GRID_DAYS}D").to_numpy(dtype="datetime64[ns]")
    pos = np.searchsorted(t, grid, side="right") - 1
    keep = pos >= 0
    if keep.sum() < TREND_MIN_POINTS:
        return None
    x = _days(grid[keep])
    y = f[pos[keep]]
    res = theilslopes(y, x, alpha=TREND_CONFIDENCE)
    return TrendFit(slope=float(res.slope), low=float(res.low_slope), high=float(res.high_slope),
                    x_med=float(np.median(x)), y_med=float(np.median(y)), n_points=int(keep.sum()))


def _linear_forecast(fit: TrendFit, target: float) -> tuple[float | None, float | None, float | None]:
    """Days at which the Theil-Sen line (and its slope-CI lines, same pivot) reach `target`."""
    def at(slope: float) -> float | None:
        return fit.x_med + (target - fit.y_med) / slope if slope > 0 else None
    return at(fit.slope), at(fit.high), at(fit.low)


# --- logistic forecast ---------------------------------------------------------------------

def logistic(t: np.ndarray, k: float, t0: float, L: float, floor: float) -> np.ndarray:
    """floor + (L - floor) / (1 + exp(-k (t - t0)))."""
    return floor + (L - floor) * expit(k * (np.asarray(t, dtype="float64") - t0))


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
    RuntimeError when no start converges.
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
                                       method="trf", maxfev=20_000)
                else:
                    p, cov = curve_fit(lambda tt, k, t0: logistic(tt, k, t0, L_fixed, floor), t, y,
                                       p0=[k0, t00], bounds=([1e-6, t_lo], [LOGISTIC_MAX_RATE, t_hi]),
                                       method="trf", maxfev=20_000)
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


# --- one row per benchmark -------------------------------------------------------------

TREND_COLUMNS = ["benchmark", "as_of", "metric", "n_models", "frontier", "frontier_model", "last_record_at",
                 "n_records", "topk_mean", "cv_topk", "cv_topk_90d", "slope_per_month", "slope_ci_low",
                 "slope_ci_high", "slope_unit", "slope_points", "stalled", "forecast_threshold", "forecast_status",
                 "forecast_method", "forecast_date", "forecast_ci_low", "forecast_ci_high", "logistic_k",
                 "logistic_t0", "logistic_L", "logistic_forecast_date", "forecast_reason"]


def trends_table(df: pd.DataFrame, *, now, benchmarks: pd.DataFrame | None = None, k: int = SATURATION_K,
                 progress: float = FORECAST_PROGRESS) -> pd.DataFrame:
    """One row per benchmark: current frontier, trailing trend, stall flag and forecast as of `now`.

    `df`: benchmark, model, score, date, optionally metric. Rows dated after `now` are left
    out. `benchmarks` (registry: id, ceiling, chance) gives floor and ceiling; proportions
    default to 0 and 1; other metrics without a ceiling get no forecast.
    """
    if not 0 < progress < 1:
        raise ValueError(f"progress must be in (0, 1), got {progress!r}")
    now = pd.Timestamp(now)
    d = df.copy()
    d["date"] = pd.to_datetime(d["date"])
    future = d["date"] > now
    if future.any():
        log.warning("[trends] %d row(s) dated after now=%s left out", int(future.sum()), now.date())
        d = d[~future]
    metric_of = (d.groupby("benchmark")["metric"].agg(lambda m: m.mode().iat[0] if m.notna().any() else PROPORTION)
                 .to_dict() if "metric" in d.columns else {})
    reg = {}
    if benchmarks is not None and not benchmarks.empty:
        for rec in benchmarks.to_dict("records"):
            reg[rec["id"]] = {c: (None if pd.isna(rec.get(c)) else float(rec[c])) for c in ("ceiling", "chance")
                              if c in rec}
    hist = frontier_history(d, k)
    rows = []
    for bench, g in hist.groupby("benchmark", sort=True):
        metric = metric_of.get(bench, PROPORTION)
        info = reg.get(bench, {})
        ceiling, floor = info.get("ceiling"), info.get("chance")
        if metric == PROPORTION:
            ceiling = 1.0 if ceiling is None else ceiling
            floor = 0.0 if floor is None else floor
        rows.append(_benchmark_trend(bench, g, now=now, metric=metric, ceiling=ceiling, floor=floor,
                                     progress=progress))
    return pd.DataFrame(rows, columns=TREND_COLUMNS)


def _benchmark_trend(bench: str, g: pd.DataFrame, *, now: pd.Timestamp, metric: str, ceiling: float | None,
                     floor: float | None, progress: float) -> dict:
    last = g.iloc[-1]
    rec = g[g["is_record"]]
    scale = 100.0 if metric == PROPORTION else 1.0
    row = {"benchmark": bench, "as_of": now, "metric": metric, "n_models": int(last["n_models"]),
           "frontier": float(last["frontier"]), "frontier_model": last["frontier_model"],
           "last_record_at": rec["as_of"].iat[-1], "n_records": len(rec), "topk_mean": last["topk_mean"],
           "cv_topk": last["cv_topk"], "cv_topk_90d": last["cv_topk_90d"],
           "slope_unit": "pp/month" if metric == PROPORTION else f"{metric}/month"}
    fit = theil_sen_trend(g["as_of"], g["frontier"], now=now)
    if fit is not None:
        row.update(slope_per_month=fit.slope * DAYS_PER_MONTH * scale, slope_ci_low=fit.low * DAYS_PER_MONTH * scale,
                   slope_ci_high=fit.high * DAYS_PER_MONTH * scale, slope_points=fit.n_points,
                   stalled=bool(fit.low <= 0 <= fit.high
                                and (now - rec["as_of"].iat[-1]).days > STALLED_MIN_DAYS))
    row.update(_forecast(rec, fit, now=now, ceiling=ceiling, floor=floor, progress=progress))
    return row


def _forecast(rec: pd.DataFrame, fit: TrendFit | None, *, now: pd.Timestamp, ceiling: float | None,
              floor: float | None, progress: float) -> dict:
    """Forecast columns: logistic when the data identify it, else the Theil-Sen line."""
    if ceiling is None or floor is None or not ceiling > floor:
        return {"forecast_status": "unavailable", "forecast_reason": "no ceiling/chance level for this metric"}
    target = floor + progress * (ceiling - floor)
    out: dict = {"forecast_threshold": target}
    reached = rec[rec["frontier"] >= target]
    if len(reached):
        return {**out, "forecast_status": "reached", "forecast_method": "observed",
                "forecast_date": reached["as_of"].iat[0], "forecast_reason": "frontier already at the threshold"}

    def fallback(reason: str) -> dict:
        res = {**out, "forecast_status": "insufficient_data", "forecast_method": "theil_sen"}
        if fit is None:
            return {**res, "forecast_method": None, "forecast_reason": reason + "; too little history for a trend"}
        mid, early, late = _linear_forecast(fit, target)
        if mid is None:
            return {**res, "forecast_reason": reason + "; frontier not rising over the trailing year"}
        return {**res, "forecast_date": _from_days(mid), "forecast_ci_low": _from_days(early),
                "forecast_ci_high": _from_days(late), "forecast_reason": reason + "; linear Theil-Sen extrapolation"}

    if len(rec) < FORECAST_MIN_RECORDS:
        return fallback(f"{len(rec)} record-setting point(s), fewer than {FORECAST_MIN_RECORDS}")
    origin = rec["as_of"].iat[0]
    t = (rec["as_of"] - origin).dt.total_seconds().to_numpy() / 86_400 / DAYS_PER_YEAR
    y = rec["frontier"].to_numpy(dtype="float64")
    to_date = lambda years: origin + pd.Timedelta(days=years * DAYS_PER_YEAR)  # noqa: E731
    try:
        lf = fit_logistic(t, y, floor=floor, ceiling=ceiling)
        flagged = None
        if y.max() < floor + (lf.L - floor) / 2:
            flagged = "no inflection observed (frontier below the fitted midpoint); L fixed at the ceiling"
            lf = fit_logistic(t, y, floor=floor, ceiling=ceiling, L_fixed=ceiling)
    except RuntimeError as exc:
        return fallback(str(exc))
    out.update(logistic_k=lf.k, logistic_t0=to_date(lf.t0), logistic_L=lf.L)
    pinned = lf.L - y.max() <= LOGISTIC_L_BOUND_TOL * (ceiling - floor)
    if pinned and fit is not None and fit.low > 0:
        # L pinned at the last record while the frontier still rises: the data show no plateau.
        return fallback(f"fitted plateau L={lf.L:.4g} is pinned at the last record while the frontier still rises "
                        "over the trailing year: plateau not identified")
    t_y, sd = logistic_time_to(lf, target, floor)
    if t_y is None:
        sd_L = math.sqrt(lf.cov[-1, -1]) if not lf.L_fixed and np.isfinite(lf.cov[-1, -1]) else math.nan
        upper = lf.L + FORECAST_CI_Z * sd_L
        if not upper < target:     # NaN (no SE) fails too
            return fallback(f"fitted plateau L={lf.L:.4g} (upper CI {upper:.4g}) not clearly below the "
                            f"threshold {target:.4g}")
        return {**out, "forecast_status": "plateau", "forecast_method": "logistic",
                "forecast_reason": f"fitted plateau L={lf.L:.4g} (95% CI up to {upper:.4g}) is below the "
                                   f"threshold {target:.4g}"}
    out["logistic_forecast_date"] = to_date(t_y)
    if flagged:
        return fallback(flagged)
    if sd is None:
        return fallback("forecast CI could not be estimated from the fit")
    width_months = 2 * FORECAST_CI_Z * sd * 12
    if width_months > FORECAST_MAX_CI_MONTHS:
        return fallback(f"logistic forecast CI {width_months:.0f} months wide (> {FORECAST_MAX_CI_MONTHS})")
    return {**out, "forecast_status": "ok", "forecast_method": "logistic", "forecast_date": to_date(t_y),
            "forecast_ci_low": to_date(t_y - FORECAST_CI_Z * sd), "forecast_ci_high": to_date(t_y + FORECAST_CI_Z * sd),
            "forecast_reason": None}

"""How a benchmark's frontier moves: history, trailing trend, stall, and an S-curve forecast.

In calendar time reconstructed from model dates (docs/statistics.md, "Trends and forecasts"):

- Frontier F(t) = best score among models dated <= t: the running maximum, or the running
  minimum for a lower-is-better metric kind (costs; `common.units.METRIC_DIRECTIONS`).
  Top-k mean; CV of the top k (sd / mean, population sd), and its mean over a trailing 90-day
  window. A falling CV with a rising S_index means the top models are bunching.
- Trend (analysis/frontier_trend.py): the Theil-Sen slope of the frontier over the 365 days
  ending at the benchmark's last dated result, its CI, `trend_status` and `stalled`.
- Forecast (the S-curve itself is analysis/logistic.py): logistic F(t) = floor + (L - floor) / (1 + exp(-k (t - t0))) fitted to the
  record-setting points (`scipy.optimize.curve_fit`, bounds k > 0, max F <= L <= ceiling;
  t in years), threshold y = floor + progress * (ceiling - floor), forecast
  t_y = t0 - ln((L - floor) / (y - floor) - 1) / k with a delta-method CI from the fit's
  covariance. `insufficient_data` below 5 records, when no inflection is visible (max F <
  fitted midpoint: refit with L = ceiling, reported but flagged), when the fit pins L at the
  last record while the trailing-year slope is still significantly positive (no plateau
  visible either), or when the CI is wider than 24 months; the Theil-Sen line then only says
  whether the crossing lies beyond the horizon (`beyond_horizon`), never a date: a status has a
  `forecast_date` only when it is `ok` (issue 53), and `reached` keeps the observed date in
  `reached_at`. Every forecast date lies in (last observation, last
  observation + FORECAST_HORIZON_YEARS]: while the frontier is below the threshold, a fit that
  puts the crossing at or before the last observation contradicts the data (the logistic then
  falls back: `insufficient_data`, no date), and a
  crossing later than the horizon is `beyond_horizon` with no date. Dates are computed in float
  days and bounded before any conversion, so no slope (1e-300, 1e300) can overflow or wrap.
  `plateau` (no forecast date) is a test that can fail:
  with L-hat below the threshold y, the extra-sum-of-squares F-test of H0: L = y against the
  free fit, F = (SSE_0 - SSE_1) / (SSE_1 / (n - 3)) on (1, n - 3) df, n = records, must
  reject at PLATEAU_ALPHA, and the trailing slope must not be significantly rising
  (`plateau_p`, `plateau_df` stored).

Pure: `now` is an argument, nothing is read or written.
"""

from __future__ import annotations

import logging
import math

import numpy as np
import pandas as pd

from analysis.constants import (
    CV_WINDOW_DAYS,
    DAYS_PER_MONTH,
    DAYS_PER_YEAR,
    FORECAST_CI_Z,
    FORECAST_HORIZON_YEARS,
    FORECAST_MAX_CI_MONTHS,
    FORECAST_MIN_RECORDS,
    FORECAST_PROGRESS,
    LOGISTIC_L_BOUND_TOL,
    PLATEAU_ALPHA,
    SATURATION_K,
)
from analysis.frontier_trend import (TREND_NO_DATA, TrendFit, epoch_days, from_epoch_days, frontier_trend,
                                     is_stalled)
from analysis.logistic import fit_logistic, logistic_time_to, plateau_test
from analysis.saturation import PROPORTION, with_tables
from analysis.trajectory import running_topk_scores
from common.units import lower_is_better

log = logging.getLogger("benchwatch.analysis.trends")

FRONTIER_COLUMNS = ["table_id", "benchmark", "as_of", "n_models", "frontier", "frontier_model", "topk_mean", "cv_topk",
                    "cv_topk_90d", "is_record"]


def metric_of(df: pd.DataFrame, key: str = "benchmark") -> dict[str, str]:
    """Each benchmark's (`key`: each table's) metric kind: the most frequent `metric` of its rows
    (proportion if none)."""
    if "metric" not in df.columns:
        return {}
    return (df.groupby(key)["metric"]
            .agg(lambda m: m.mode().iat[0] if m.notna().any() else PROPORTION).to_dict())


def frontier_history(df: pd.DataFrame, k: int = SATURATION_K) -> pd.DataFrame:
    """Per table and distinct model date: frontier, its model, top-k mean and CV, record flag.

    `df`: benchmark, model, score, date, optionally metric and table_id (default: the
    benchmark; a frontier never crosses a table). The frontier is the best score so
    far: the maximum, or the minimum for a lower-is-better metric kind (costs), whose top k
    are then the k cheapest. Top-k mean and CV need k models (NaN before).
    `is_record`: the frontier improved at this date (the first date is a record).
    """
    df = with_tables(df)
    lower = {b for b, m in metric_of(df, "table_id").items() if lower_is_better(m)}
    d = df
    if lower:      # the running top-k keeps the largest values: rank costs by their negation
        d = df.copy()
        flip = d["table_id"].isin(lower)
        d.loc[flip, "score"] = -pd.to_numeric(d.loc[flip, "score"])
    run, tops = running_topk_scores(d, k)
    if run.empty:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in FRONTIER_COLUMNS})
    sign = np.where(run["table_id"].isin(lower), -1.0, 1.0)
    full = run["n_models"].to_numpy() >= k
    tops = tops * sign[:, None]
    mean = np.where(full, tops.mean(axis=1), np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        cv = np.where(full & (mean > 0), tops.std(axis=1) / mean, np.nan)
    out = pd.DataFrame({
        "table_id": run["table_id"], "benchmark": run["benchmark"], "as_of": run["as_of"], "n_models": run["n_models"],
        "frontier": tops[:, 0], "frontier_model": run["top_model"],
        "topk_mean": mean, "cv_topk": cv,
    })
    better = pd.Series(tops[:, 0] * sign, index=out.index)          # larger is better in this scale
    prev = better.groupby(out["table_id"], sort=False).shift(1)
    out["is_record"] = prev.isna() | (better > prev)
    rolled = (out.set_index("as_of").groupby("table_id", sort=False)["cv_topk"]
              .rolling(f"{CV_WINDOW_DAYS}D", min_periods=1).mean())
    out["cv_topk_90d"] = rolled.to_numpy()
    return out[FRONTIER_COLUMNS]


def _linear_forecast(fit: TrendFit, target: float) -> tuple[float | None, float | None, float | None]:
    """Days at which the Theil-Sen line (and its slope-CI lines, same pivot) reach `target`."""
    def at(slope: float) -> float | None:
        return fit.x_med + (target - fit.y_med) / slope if slope > 0 else None
    return at(fit.slope), at(fit.high), at(fit.low)


# --- one row per benchmark -------------------------------------------------------------

TREND_COLUMNS = ["table_id", "benchmark", "as_of", "metric", "direction", "n_models", "frontier", "frontier_model",
                 "last_record_at", "n_records", "topk_mean", "cv_topk", "cv_topk_90d", "trend_status", "trend_start",
                 "trend_end", "stale_days", "slope_per_month", "slope_ci_low", "slope_ci_high", "slope_unit",
                 "slope_points", "stalled", "forecast_threshold", "forecast_status", "forecast_method",
                 "forecast_date", "forecast_ci_low", "forecast_ci_high", "logistic_k", "logistic_t0", "logistic_L",
                 "logistic_forecast_date", "plateau_p", "plateau_df", "forecast_reason", "reached_at"]


def trends_table(df: pd.DataFrame, *, now, benchmarks: pd.DataFrame | None = None, k: int = SATURATION_K,
                 progress: float = FORECAST_PROGRESS, frontier: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per table: current frontier, trailing trend, stall flag and forecast as of `now`.

    `df`: benchmark, model, score, date, optionally metric and table_id (default: the
    benchmark). Rows dated after `now` are left out. The trend of each table ends at its last
    dated result, `stale_days` before `now`.
    `benchmarks` (registry: id, ceiling, chance) gives floor and ceiling; proportions
    default to 0 and 1; other metrics without a ceiling get no forecast. `frontier`:
    `frontier_history(df, k)` when the caller has it (used unless rows after `now` were left out).
    """
    if not 0 < progress < 1:
        raise ValueError(f"progress must be in (0, 1), got {progress!r}")
    now = pd.Timestamp(now)
    d = with_tables(df).copy()
    d["date"] = pd.to_datetime(d["date"])
    future = d["date"] > now
    if future.any():
        log.warning("[trends] %d row(s) dated after now=%s left out", int(future.sum()), now.date())
        d = d[~future]
    metrics = metric_of(d, "table_id")
    reg = {}
    if benchmarks is not None and not benchmarks.empty:
        for rec in benchmarks.to_dict("records"):
            reg[rec["id"]] = {c: (None if pd.isna(rec.get(c)) else float(rec[c])) for c in ("ceiling", "chance")
                              if c in rec}
    hist = frontier if frontier is not None and not future.any() else frontier_history(d, k)
    rows = []
    for table, g in hist.groupby("table_id", sort=True):
        bench = g["benchmark"].iat[0]
        metric = metrics.get(table, PROPORTION)
        info = reg.get(bench, {})
        ceiling, floor = info.get("ceiling"), info.get("chance")
        if metric == PROPORTION:
            ceiling = 1.0 if ceiling is None else ceiling
            floor = 0.0 if floor is None else floor
        rows.append({"table_id": table, **_benchmark_trend(bench, g, now=now, metric=metric, ceiling=ceiling,
                                                           floor=floor, progress=progress)})
    return pd.DataFrame(rows, columns=TREND_COLUMNS)


def _benchmark_trend(bench: str, g: pd.DataFrame, *, now: pd.Timestamp, metric: str, ceiling: float | None,
                     floor: float | None, progress: float) -> dict:
    last = g.iloc[-1]
    rec = g[g["is_record"]]
    scale = 100.0 if metric == PROPORTION else 1.0
    fit = frontier_trend(g["as_of"], g["frontier"], g["is_record"])
    row = {"benchmark": bench, "as_of": now, "metric": metric,
           "direction": "lower" if lower_is_better(metric) else "higher", "n_models": int(last["n_models"]),
           "frontier": float(last["frontier"]), "frontier_model": last["frontier_model"],
           "last_record_at": rec["as_of"].iat[-1], "n_records": len(rec), "topk_mean": last["topk_mean"],
           "cv_topk": last["cv_topk"], "cv_topk_90d": last["cv_topk_90d"],
           "trend_status": fit.status, "trend_start": fit.start, "trend_end": fit.end,
           "stale_days": int((now - fit.end) / pd.Timedelta(days=1)), "slope_points": fit.n_points,
           "slope_unit": "pp/month" if metric == PROPORTION else f"{metric}/month"}
    per_month = DAYS_PER_MONTH * scale
    row.update(slope_per_month=fit.slope * per_month, slope_ci_low=fit.low * per_month,
               slope_ci_high=fit.high * per_month)
    row["stalled"] = is_stalled(fit, rec["as_of"].iat[-1])
    if lower_is_better(metric):
        row.update({"forecast_status": "unavailable",
                    "forecast_reason": "lower-is-better metric: no ceiling to reach"})
    else:
        row.update(_forecast(rec, fit, ceiling=ceiling, floor=floor, progress=progress,
                             last_obs=pd.Timestamp(last["as_of"])))
    return row


FORECAST_BEYOND_HORIZON = "beyond_horizon"


def _forecast(rec: pd.DataFrame, fit: TrendFit, *, ceiling: float | None, floor: float | None,
              progress: float, last_obs: pd.Timestamp | None = None) -> dict:
    """Forecast columns: logistic when the data identify it, else the Theil-Sen line.

    `last_obs`: the last observation (default: the trend's end). While the frontier is below the
    threshold, every date returned lies in (last_obs, last_obs + FORECAST_HORIZON_YEARS].
    """
    if ceiling is None or floor is None or not ceiling > floor:
        return {"forecast_status": "unavailable", "forecast_reason": "no ceiling/chance level for this metric"}
    target = floor + progress * (ceiling - floor)
    out: dict = {"forecast_threshold": target}
    reached = rec[rec["frontier"] >= target]
    if len(reached):
        # the observed date, under its own name: `forecast_date` is a forecast's, and only status ok has one
        return {**out, "forecast_status": "reached", "forecast_method": "observed",
                "reached_at": reached["as_of"].iat[0], "forecast_reason": "frontier already at the threshold"}
    last_obs = fit.end if last_obs is None else last_obs
    lo_days = float(epoch_days([last_obs])[0])                       # the window a forecast date may fall in
    hi_days = lo_days + FORECAST_HORIZON_YEARS * DAYS_PER_YEAR
    horizon = f"{FORECAST_HORIZON_YEARS} years after the last observation {last_obs:%Y-%m-%d}"

    def bounded(days: float | None, what: str) -> dict | None:
        """None when `days` is a usable date; else the columns that say why there is none."""
        if days is not None and math.isfinite(days) and lo_days < days <= hi_days:
            return None
        if days is not None and days > hi_days:        # includes +inf
            return {"forecast_status": FORECAST_BEYOND_HORIZON, "forecast_date": None, "forecast_ci_low": None,
                    "forecast_ci_high": None, "forecast_reason": f"{what} reaches the threshold later than {horizon}"}
        return {"forecast_status": "insufficient_data", "forecast_date": None, "forecast_ci_low": None,
                "forecast_ci_high": None,
                "forecast_reason": f"{what} reaches the threshold {target:.4g} at or before the last observation "
                                   f"{last_obs:%Y-%m-%d}, where the frontier is still below it: no date"}

    def ci(early: float | None, late: float | None) -> dict:
        """CI bounds kept inside the window: a bound before the last observation is the last
        observation (the frontier was below the threshold then); one past the horizon is NULL (open)."""
        low = None if early is None or not math.isfinite(early) else max(early, lo_days)
        high = None if late is None or not math.isfinite(late) or late > hi_days else late
        return {"forecast_ci_low": from_epoch_days(low), "forecast_ci_high": from_epoch_days(high)}

    def fallback(reason: str) -> dict:
        """No dated forecast: the logistic is not identified. The Theil-Sen line says whether the
        crossing lies beyond the horizon; a date it gives is not stored (insufficient_data has no
        date: the line's crossing is not a forecast that earned its interval, docs/statistics.md)."""
        res = {**out, "forecast_status": "insufficient_data", "forecast_method": "theil_sen",
               "forecast_date": None, "forecast_ci_low": None, "forecast_ci_high": None}
        if fit.status == TREND_NO_DATA:
            return {**res, "forecast_method": None, "forecast_reason": reason + "; no data in the trend window"}
        mid, _, _ = _linear_forecast(fit, target)
        if mid is None:
            return {**res, "forecast_reason": reason + "; frontier not rising over the trailing year"}
        bad = bounded(mid, "the linear Theil-Sen extrapolation")
        if bad is not None:
            status = bad.pop("forecast_status")
            return {**res, **bad, "forecast_status": status if status == FORECAST_BEYOND_HORIZON else res["forecast_status"],
                    "forecast_reason": reason + "; " + bad["forecast_reason"]}
        return {**res, "forecast_reason": reason + "; the linear Theil-Sen extrapolation would cross within the "
                                               "horizon, but a line is no dated forecast"}

    if len(rec) < FORECAST_MIN_RECORDS:
        return fallback(f"{len(rec)} record-setting point(s), fewer than {FORECAST_MIN_RECORDS}")
    origin = rec["as_of"].iat[0]
    t = (rec["as_of"] - origin).dt.total_seconds().to_numpy() / 86_400 / DAYS_PER_YEAR
    y = rec["frontier"].to_numpy(dtype="float64")
    origin_days = float(epoch_days([origin])[0])
    to_days = lambda years: origin_days + years * DAYS_PER_YEAR  # noqa: E731
    to_date = lambda years: from_epoch_days(to_days(years))  # noqa: E731
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
    if pinned and fit.moving:
        # L pinned at the last record while the frontier still rises: the data show no plateau.
        return fallback(f"fitted plateau L={lf.L:.4g} is pinned at the last record while the frontier still rises "
                        "over the trailing year: plateau not identified")
    t_y, sd = logistic_time_to(lf, target, floor)
    if t_y is not None and not math.isfinite(t_y):
        t_y = None
    if t_y is None:
        if fit.moving:
            return fallback(f"fitted plateau L={lf.L:.4g} below the threshold {target:.4g}, but the frontier "
                            "still rises significantly over the trailing year: no plateau")
        p, df2 = plateau_test(t, y, lf, target, floor=floor)
        out.update(plateau_p=p, plateau_df=df2)
        if p is None or not p < PLATEAU_ALPHA:
            shown = "F-test did not converge" if p is None else f"F-test p={p:.2g}, df=(1, {df2})"
            return fallback(f"fitted plateau L={lf.L:.4g} not shown below the threshold {target:.4g} ({shown})")
        return {**out, "forecast_status": "plateau", "forecast_method": "logistic",
                "forecast_reason": f"fitted plateau L={lf.L:.4g} is below the threshold {target:.4g} "
                                   f"(F-test of L = threshold: p={p:.2g}, df=(1, {df2}))"}
    bad = bounded(to_days(t_y), "the logistic fit")
    # the fit's own crossing, shown beside a fallback: only a date inside the window
    out["logistic_forecast_date"] = to_date(t_y) if bad is None else None
    if flagged:
        return fallback(flagged)
    if bad is not None and bad["forecast_status"] != FORECAST_BEYOND_HORIZON:
        return fallback(bad["forecast_reason"].removesuffix(": no date"))
    if sd is None:
        return fallback("forecast CI could not be estimated from the fit")
    width_months = 2 * FORECAST_CI_Z * sd * 12
    if width_months > FORECAST_MAX_CI_MONTHS:
        return fallback(f"logistic forecast CI {width_months:.0f} months wide (> {FORECAST_MAX_CI_MONTHS})")
    if bad is not None:
        return {**out, **bad, "forecast_method": "logistic"}
    return {**out, "forecast_status": "ok", "forecast_method": "logistic", "forecast_date": to_date(t_y),
            **ci(to_days(t_y - FORECAST_CI_Z * sd), to_days(t_y + FORECAST_CI_Z * sd)), "forecast_reason": None}


def at_day(trends: pd.DataFrame, now) -> pd.DataFrame:
    """Stored trend rows moved to the day of `now`: their day-relative columns, `as_of` (= now)
    and `stale_days` (= now - trend_end, as `trends_table` computes it), recomputed; every other
    column is about the table's data and stays (an incremental analysis on a new day)."""
    now = pd.Timestamp(now)
    out = trends.copy()
    out["as_of"] = now
    end = pd.to_datetime(out["trend_end"], utc=True).dt.tz_localize(None)    # naive UTC, as `now`
    out["stale_days"] = [None if pd.isna(e) else int((now - pd.Timestamp(e)) / pd.Timedelta(days=1)) for e in end]
    return out

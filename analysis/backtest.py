"""Forecasts with a track record (issue 53; docs/statistics.md, "Forecasts with a track record").

How good would benchwatch's forecasts have been? For every table with enough dated history,
at monthly past origins o (first day of each month), each method forecasts the frontier at
o + h for h in BACKTEST_HORIZONS_MONTHS, seeing only the frontier points dated on or before o:
the stored frontier is built by the project's one dating rule (analysis/dating.py: a result at
its evaluation date, else its first observation raised to its model's release), so a point
dated <= o is a result the rule puts before the origin. The forecast is scored against the
frontier the table actually shows at o + h (the last frontier point dated <= o + h); only
origins whose o + h lies within the table's history are scored: up to its last dated result, or
its last observation (`observed_until`) when that is later.

- Methods: analysis.forecast_methods (persistence, Theil-Sen, logistic). A lower-is-better kind
  gets no forecast anywhere, so no record.
- Outcomes known (`undetermined_outcomes`): a result dated at its first observation was achieved
  at some time between its model's release and then; where it beats the dated frontier at
  o + h and o + h lies in that span, the frontier then is not known and the outcome is not
  scored (likewise a crossing it may have preceded: `undetermined_crossings`). The dating rule
  is not moved; only outcomes it cannot tell are left out.
- Errors: e = forecast - observed (bias > 0: forecasts too high), in pp for proportions, in
  the metric's own unit otherwise; each kind is summarised on its own. Persistence's MAE on the
  same rows stands beside every method's.
- Calibrated intervals (cross-fitted): the tables are split into BACKTEST_FOLDS folds (by a hash
  of the table id); a forecast's 80 % interval is forecast + s [z10, z90]: s = a_h + b_h rise, the
  residual scale at its horizon for a forecast that expects the frontier to rise by `rise`
  (forecast - F(o); a, b >= 0 fitted to the absolute residuals), z the residuals divided by their
  scale, pooled over the horizons (the longest has the fewest outcomes), both from the same kind
  and method on the *other* folds' tables; clipped to [F(o), ceiling]. This borrows strength
  across tables (a table with little history gets the interval its kind earned, narrow where it
  expects no change, wide where it expects a climb) and never scores an interval on the residuals
  that made it. `coverage` is the share of outcomes inside it; `raw_coverage` that of the
  method's own interval, where it has one.
- Correlated origins: the origins of one table overlap (a 12-month forecast made in March and
  one made in April share 11 months of outcome). The point figures pool every forecast; their
  90 % CIs come from a table-clustered bootstrap (whole tables resampled, BACKTEST_BOOTSTRAP_B
  times, seeded), so a table with many origins cannot narrow them as if its forecasts were
  independent; `n_tables` stands beside `n`.
- Damped line (`with_damped`): F(o) + lambda (Theil-Sen - F(o)), lambda from DAMPING_GRID chosen
  per kind and horizon on the other folds' tables: how much of the trailing slope persisted.
- Choice (`choose_methods`): per kind and horizon, the non-persistence method with the lowest
  MAE among those scored on at least BACKTEST_MIN_TABLES tables that beat persistence's MAE on
  the same rows; otherwise `persistence` at that horizon, which forecasts nothing: "no forecast".
- Crossing dates: for each origin of a table whose frontier later reached its threshold (floor +
  FORECAST_PROGRESS (ceiling - floor)), each method's forecast crossing date (within
  FORECAST_HORIZON_YEARS) against the actual one, in months.

Pure: frames in, frames out; the bootstrap is seeded.
"""

from __future__ import annotations

import logging
import math
import zlib
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.optimize import nnls

from analysis.constants import (
    BACKTEST_BOOTSTRAP_B,
    BACKTEST_CI,
    BACKTEST_FOLDS,
    BACKTEST_HORIZONS_MONTHS,
    BACKTEST_MIN_HISTORY_DAYS,
    BACKTEST_MIN_RECORDS,
    BACKTEST_MIN_TABLES,
    BACKTEST_NOMINAL,
    BACKTEST_SEED,
    DAYS_PER_MONTH,
    FORECAST_PROGRESS,
)
from analysis.forecast_methods import DAMPED, PERSISTENCE, THEIL_SEN, Method, Past, default_methods
from analysis.live_forecast import kind_of
from analysis.saturation import PROPORTION
from common.units import lower_is_better

log = logging.getLogger("benchwatch.analysis.backtest")

DAMPING_GRID = tuple(i / 20 for i in range(21))      # the damping factors tried: 0 (no change) .. 1 (the line)

ROW_COLUMNS = ["table_id", "metric", "origin", "horizon_months", "method", "frontier_at_origin", "forecast",
               "raw_low", "raw_high", "observed", "ceiling", "n_records"]
CROSSING_COLUMNS = ["table_id", "metric", "origin", "method", "threshold", "forecast_crossing", "actual_crossing",
                    "error_months"]
SUMMARY_COLUMNS = ["kind", "unit", "horizon_months", "method", "n", "n_tables", "mae", "mae_low", "mae_high",
                   "naive_mae", "naive_mae_low", "naive_mae_high", "bias", "coverage", "coverage_low",
                   "coverage_high", "raw_coverage", "n_raw", "q_low", "q_high", "q_low_per_rise", "q_high_per_rise",
                   "nominal", "chosen", "damping"]


# --- the engine ------------------------------------------------------------------------------------

def _days(ts) -> np.ndarray:
    return pd.to_datetime(pd.Series(ts)).to_numpy(dtype="datetime64[ns]").astype("int64") / 86_400e9


def origins_of(first: pd.Timestamp, last: pd.Timestamp, shortest_months: int,
               min_history_days: int = BACKTEST_MIN_HISTORY_DAYS) -> pd.DatetimeIndex:
    """The monthly origins (first day of a month) of a table dated first..last: at least
    `min_history_days` after its first point, and early enough that the shortest horizon ends
    within its history."""
    start = (pd.Timestamp(first) + pd.Timedelta(days=min_history_days)).to_period("M").to_timestamp()
    if start < pd.Timestamp(first) + pd.Timedelta(days=min_history_days):
        start += pd.offsets.MonthBegin(1)
    end = pd.Timestamp(last) - pd.Timedelta(days=shortest_months * DAYS_PER_MONTH)
    return pd.date_range(start, end, freq="MS") if start <= end else pd.DatetimeIndex([])


def backtest(frontier: pd.DataFrame, tables: pd.DataFrame, *, horizons: Sequence[int] = BACKTEST_HORIZONS_MONTHS,
             methods: Mapping[str, Method] | None = None, progress: float = FORECAST_PROGRESS,
             min_records: int = BACKTEST_MIN_RECORDS,
             min_history_days: int = BACKTEST_MIN_HISTORY_DAYS) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(forecast rows, crossing rows) of every table's monthly origins (module docstring).

    `frontier`: table_id, as_of, frontier, is_record (analysis.trends.frontier_history, one
    population per table). `tables`: table_id, metric, floor, ceiling (None where unknown; a
    proportion defaults to 0 and 1), optionally observed_until (the table's last observation).
    Lower-is-better kinds are left out (no forecast to score).
    """
    methods = default_methods() if methods is None else methods
    meta = {r["table_id"]: r for r in tables.to_dict("records")}
    rows: list[tuple] = []
    crossings: list[tuple] = []
    skipped = 0
    for table, g in frontier.groupby("table_id", sort=True):
        info = meta.get(table, {})
        metric = info.get("metric")
        metric = PROPORTION if metric is None or pd.isna(metric) else str(metric)
        if lower_is_better(metric):
            skipped += 1
            continue
        floor, ceiling = _bound(info.get("floor")), _bound(info.get("ceiling"))
        if metric == PROPORTION:
            floor = 0.0 if floor is None else floor
            ceiling = 1.0 if ceiling is None else ceiling
        g = g.sort_values("as_of", kind="stable")
        days = _days(g["as_of"])
        f = g["frontier"].to_numpy(dtype="float64")
        rec = g["is_record"].to_numpy(dtype=bool)
        ok = np.isfinite(f) & np.isfinite(days)
        days, f, rec = days[ok], f[ok], rec[ok]
        if len(days) < 2:
            continue
        threshold = floor + progress * (ceiling - floor) if floor is not None and ceiling is not None \
            and ceiling > floor else None
        hit = np.flatnonzero(f >= threshold) if threshold is not None else np.array([], dtype=int)
        actual = float(days[hit[0]]) if len(hit) else None
        first, last = days[0], days[-1]
        until = info.get("observed_until")
        if until is not None and not pd.isna(until):
            last = max(last, float(_days([until])[0]))
        ts_first = pd.Timestamp(round(first * 86_400), unit="s")
        ts_last = pd.Timestamp(round(last * 86_400), unit="s")
        origins = origins_of(ts_first, ts_last, min(horizons), min_history_days)
        for origin, o in zip(origins, _days(origins) if len(origins) else []):
            o = float(o)
            i = int(np.searchsorted(days, o, side="right"))
            if i == 0 or int(rec[:i].sum()) < min_records:
                continue
            past = Past(str(table), days[:i], f[:i], rec[:i], o, floor, ceiling)
            hs = [h for h in horizons if o + h * DAYS_PER_MONTH <= last]
            if not hs:
                continue
            observed = [float(f[int(np.searchsorted(days, o + h * DAYS_PER_MONTH, side="right")) - 1]) for h in hs]
            n_rec = int(rec[:i].sum())
            for name, method in methods.items():
                got = method.values(past, [h * DAYS_PER_MONTH for h in hs])
                for h, obs, v in zip(hs, observed, got):
                    if v is None:
                        continue
                    rows.append((table, metric, origin, h, name, past.now, v[0], v[1], v[2], obs, ceiling, n_rec))
                if actual is not None and past.now < threshold and actual > o:     # type: ignore[operator]
                    when = method.crossing(past, float(threshold))                 # type: ignore[arg-type]
                    crossings.append((table, metric, origin, name, threshold,
                                      None if when is None else pd.Timestamp(round(when * 86_400), unit="s"),
                                      pd.Timestamp(round(actual * 86_400), unit="s"),
                                      math.nan if when is None else (when - actual) / DAYS_PER_MONTH))
    if skipped:
        log.info("[backtest] %d lower-is-better table(s) left out: they get no forecast to score", skipped)
    out = pd.DataFrame(rows, columns=ROW_COLUMNS)
    out["origin"] = pd.to_datetime(out["origin"])
    cross = pd.DataFrame(crossings, columns=CROSSING_COLUMNS)
    return out, cross


def _undated_by_table(undated: pd.DataFrame | None) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per table: (earliest, first observation, score) of its results dated at their first
    observation, in days; earliest = the model's release (-inf where unknown)."""
    if undated is None or not len(undated):
        return {}
    out = {}
    for table, g in undated.groupby("table_id", sort=False):
        lo = _days(g["release_date"])
        out[str(table)] = (np.where(np.isfinite(lo), lo, -np.inf), _days(g["date"]),
                           g["score"].to_numpy(dtype="float64"))
    return out


def undetermined_outcomes(rows: pd.DataFrame, undated: pd.DataFrame | None) -> np.ndarray:
    """Per forecast row, whether its outcome is unknown: a result the dating rule places at its
    first observation (`undated`: table_id, score, date, release_date) was achieved at some time
    between its model's release (any time, where unknown) and that date, so at an o + h in
    between where it beats the dated frontier (`observed`), the frontier then is not known. The
    dating rule is not moved: such an outcome is not scored (higher-is-better kinds only)."""
    out = np.zeros(len(rows), dtype=bool)
    by_table = _undated_by_table(undated)
    if not by_table or not len(rows):
        return out
    end = _days(rows["origin"]) + rows["horizon_months"].to_numpy(dtype="float64") * DAYS_PER_MONTH
    obs = rows["observed"].to_numpy(dtype="float64")
    tables = rows["table_id"].astype(str).to_numpy()
    for table, (lo, hi, score) in by_table.items():
        at = np.flatnonzero(tables == table)
        if len(at):
            t, o = end[at][:, None], obs[at][:, None]
            out[at] = ((lo[None, :] <= t) & (t < hi[None, :]) & (score[None, :] > o + 1e-12)).any(axis=1)
    return out


def undetermined_crossings(crossings: pd.DataFrame, undated: pd.DataFrame | None) -> np.ndarray:
    """Per crossing row, whether its actual crossing date is unknown: a result at or above the
    threshold that the dating rule places at its first observation may have been achieved before
    the dated crossing (its model released before it, or its release unknown)."""
    out = np.zeros(len(crossings), dtype=bool)
    by_table = _undated_by_table(undated)
    if not by_table or not len(crossings):
        return out
    actual = _days(crossings["actual_crossing"])
    threshold = crossings["threshold"].to_numpy(dtype="float64")
    tables = crossings["table_id"].astype(str).to_numpy()
    for table, (lo, _, score) in by_table.items():
        at = np.flatnonzero(tables == table)
        if len(at):
            out[at] = ((score[None, :] >= threshold[at][:, None]) & (lo[None, :] < actual[at][:, None])).any(axis=1)
    return out


def _bound(v) -> float | None:
    return None if v is None or pd.isna(v) else float(v)


# --- calibration, summary, choice -----------------------------------------------------------------

def best_damping(step: np.ndarray, moved: np.ndarray) -> float:
    """The lambda of DAMPING_GRID minimising sum |moved - lambda step|: `step` the line's forecast
    rise, `moved` the frontier's actual rise (ties: the smaller lambda, the nearer no change)."""
    grid = np.asarray(DAMPING_GRID)
    cost = np.abs(np.asarray(moved)[None, :] - grid[:, None] * np.asarray(step)[None, :]).sum(axis=1)
    return float(grid[int(np.argmin(cost))])


def with_damped(rows: pd.DataFrame, *, folds: int = BACKTEST_FOLDS) -> pd.DataFrame:
    """`rows` plus the damped Theil-Sen forecasts: F(o) + lambda (theil_sen - F(o)), lambda in
    DAMPING_GRID chosen per kind and horizon to minimise the absolute error on the *other* folds'
    tables (cross-fitted: a table's forecast never uses a lambda its own outcomes chose). Lambda 0
    is no change, 1 the line: the trailing slope shrunk by how much of it persisted across tables
    (borrowed strength). `damping` holds the lambda of each row (NaN for the other methods)."""
    out = rows.copy()
    out["damping"] = math.nan
    line = out[out["method"] == THEIL_SEN]
    if not len(line):
        return out
    fold = line["table_id"].map(lambda t: fold_of(t, folds)).to_numpy()
    step = (line["forecast"] - line["frontier_at_origin"]).to_numpy()
    resid = (line["observed"] - line["frontier_at_origin"]).to_numpy()
    kinds = line["metric"].map(lambda m: kind_of(m)[0]).to_numpy()
    hs = line["horizon_months"].to_numpy()
    lam = np.full(len(line), math.nan)
    for kind in np.unique(kinds):
        for h in np.unique(hs):
            same = (kinds == kind) & (hs == h)
            for k in range(folds):
                train, test = same & (fold != k), same & (fold == k)
                if test.any() and train.any():
                    lam[test] = best_damping(step[train], resid[train])
    damped = line.assign(method=DAMPED, forecast=line["frontier_at_origin"].to_numpy() + lam * step,
                         raw_low=math.nan, raw_high=math.nan, damping=lam)
    damped = damped[np.isfinite(lam)]
    return pd.concat([out, damped], ignore_index=True)


def fold_of(table_id: str, folds: int = BACKTEST_FOLDS) -> int:
    """The cross-fitting fold of a table: a stable hash of its id (the same on every run)."""
    return zlib.crc32(str(table_id).encode("utf-8")) % folds


def residual_quantiles(residuals: np.ndarray, nominal: float = BACKTEST_NOMINAL) -> tuple[float, float]:
    """(q_low, q_high): the central `nominal` share of observed - forecast."""
    tail = (1.0 - nominal) / 2
    return float(np.quantile(residuals, tail)), float(np.quantile(residuals, 1.0 - tail))


def pooled_quantiles(resid: np.ndarray, horizons: np.ndarray, rise: np.ndarray | None = None,
                     nominal: float = BACKTEST_NOMINAL) -> tuple[dict[int, tuple[float, float]], float, float]:
    """({horizon: (a, b)}, z_low, z_high): at horizon h a forecast's residual scale is a + b rise
    (`rise`: forecast - F(o), what the method expects the frontier to gain; a and b >= 0 fitted to
    the absolute residuals by non-negative least squares, each horizon its own: a frontier
    expected to move far misses by more than one expected to stay), and the residuals divided by
    their scale are pooled over the horizons for the interval's shape (a 10 % / 90 % quantile
    needs many outcomes, a scale few). The interval: forecast + (a + b rise) [z_low, z_high]."""
    rise = np.zeros(len(resid)) if rise is None else np.maximum(np.nan_to_num(np.asarray(rise, dtype="float64")), 0.0)
    fit: dict[int, tuple[float, float]] = {}
    for x in np.unique(horizons):
        at = horizons == x
        ab, _ = nnls(np.c_[np.ones(int(at.sum())), rise[at]], np.abs(resid[at]))
        fit[int(x)] = (float(ab[0]), float(ab[1]))
    s = np.array([fit[int(x)][0] + fit[int(x)][1] * r for x, r in zip(horizons, rise)])
    z = np.divide(resid, s, out=np.zeros_like(resid, dtype="float64"), where=s > 0)
    z_lo, z_hi = residual_quantiles(z, nominal)
    return fit, z_lo, z_hi


def calibrate(rows: pd.DataFrame, *, nominal: float = BACKTEST_NOMINAL, folds: int = BACKTEST_FOLDS) -> pd.DataFrame:
    """`rows` with `low`, `high` (the cross-fitted calibrated interval) and `inside` (module
    docstring); NaN where the other folds hold no residual of the same kind and method.

    The interval's shape is pooled over the horizons, its scale is each horizon's own and grows
    with the forecast's rise (`pooled_quantiles`): the 12-month horizon has the fewest outcomes."""
    out = rows.copy()
    out["low"] = math.nan
    out["high"] = math.nan
    if not len(out):
        out["inside"] = pd.Series(dtype="object")
        return out
    fold = out["table_id"].map(lambda t: fold_of(t, folds)).to_numpy()
    h = out["horizon_months"].to_numpy()
    resid = (out["observed"] - out["forecast"]).to_numpy()
    keys = (out["metric"].map(lambda m: kind_of(m)[0]) + "|" + out["method"].astype(str)).to_numpy()
    forecast = out["forecast"].to_numpy()
    rise = np.maximum(forecast - out["frontier_at_origin"].to_numpy(), 0.0)
    low, high = np.full(len(out), math.nan), np.full(len(out), math.nan)
    for key in np.unique(keys):
        same = keys == key
        for k in range(folds):
            train, test = same & (fold != k), same & (fold == k)
            if test.any() and train.any():
                fit, q_lo, q_hi = pooled_quantiles(resid[train], h[train], rise[train], nominal)
                width = np.array([fit[int(x)][0] + fit[int(x)][1] * r if int(x) in fit else math.nan
                                  for x, r in zip(h[test], rise[test])])
                low[test] = forecast[test] + q_lo * width
                high[test] = forecast[test] + q_hi * width
    start = out["frontier_at_origin"].to_numpy()
    cap = out["ceiling"].to_numpy(dtype="float64")
    low, high = np.maximum(low, start), np.maximum(high, start)
    low = np.where(np.isfinite(cap), np.minimum(low, cap), low)
    high = np.where(np.isfinite(cap), np.minimum(high, cap), high)
    out["low"], out["high"] = low, high
    obs = out["observed"].to_numpy()
    out["inside"] = pd.array(np.where(np.isfinite(low), (obs >= low - 1e-12) & (obs <= high + 1e-12), None),
                             dtype="boolean")
    return out


def _cluster_ci(table: np.ndarray, num: np.ndarray, den: np.ndarray, *, b: int, ci: float,
                rng: np.random.Generator) -> tuple[float, float]:
    """Percentile CI of sum(num) / sum(den) with whole tables resampled (`table`: codes 0..T-1)."""
    n_tables = int(table.max()) + 1 if len(table) else 0
    if n_tables < 2 or b < 1:
        return math.nan, math.nan
    nums = np.bincount(table, weights=num, minlength=n_tables)
    dens = np.bincount(table, weights=den, minlength=n_tables)
    w = rng.multinomial(n_tables, np.full(n_tables, 1.0 / n_tables), size=b)
    with np.errstate(invalid="ignore", divide="ignore"):
        stats = (w @ nums) / (w @ dens)
    stats = stats[np.isfinite(stats)]
    if not len(stats):
        return math.nan, math.nan
    tail = (1 - ci) / 2
    return float(np.quantile(stats, tail)), float(np.quantile(stats, 1 - tail))


def summarize(rows: pd.DataFrame, *, nominal: float = BACKTEST_NOMINAL, b: int = BACKTEST_BOOTSTRAP_B,
              ci: float = BACKTEST_CI, seed: int = BACKTEST_SEED) -> pd.DataFrame:
    """One row per kind, horizon and method (SUMMARY_COLUMNS) of calibrated rows (`calibrate`):
    n forecasts and tables, MAE, persistence's MAE on the same rows, bias and the calibrated
    interval's coverage (each with its table-clustered bootstrap CI where it has one), the
    method's own interval's coverage, and the residual quantiles of every table of the group
    (the calibration a live forecast of that kind would use). Errors in the kind's unit."""
    out: list[dict] = []
    if not len(rows):
        return pd.DataFrame(columns=SUMMARY_COLUMNS)
    rng = np.random.default_rng(seed)
    kinds = rows["metric"].map(lambda m: kind_of(m)[0])
    for (kind, h, method), g in rows.groupby([kinds, "horizon_months", "method"], sort=True):
        _, unit, scale = kind_of(str(g["metric"].iat[0]))
        table = pd.factorize(g["table_id"])[0]
        err = (g["forecast"] - g["observed"]).to_numpy() * scale
        naive = (g["frontier_at_origin"] - g["observed"]).to_numpy() * scale
        ones = np.ones(len(g))
        inside = g["inside"]
        has = inside.notna().to_numpy()
        raw = g["raw_low"].notna() & g["raw_high"].notna()
        raw_in = ((g["observed"] >= g["raw_low"] - 1e-12) & (g["observed"] <= g["raw_high"] + 1e-12))[raw]
        every = rows[(kinds == kind) & (rows["method"] == method)]         # pooled, as `calibrate`
        fit, z_lo, z_hi = pooled_quantiles((every["observed"] - every["forecast"]).to_numpy(),
                                           every["horizon_months"].to_numpy(),
                                           (every["forecast"] - every["frontier_at_origin"]).to_numpy(), nominal)
        base, per_rise = fit[int(h)]          # the scale at no rise, and its growth per unit of rise
        q_lo, q_hi = base * z_lo * scale, base * z_hi * scale
        mae_ci = _cluster_ci(table, np.abs(err), ones, b=b, ci=ci, rng=rng)
        naive_ci = _cluster_ci(table, np.abs(naive), ones, b=b, ci=ci, rng=rng)
        cov_ci = _cluster_ci(table[has], inside[has].astype(float).to_numpy(), ones[has], b=b, ci=ci, rng=rng) \
            if has.any() else (math.nan, math.nan)
        damping = math.nan
        if method == DAMPED:       # for live forecasts: the lambda of every table of the kind at this horizon
            line = rows[(kinds == kind) & (rows["method"] == THEIL_SEN) & (rows["horizon_months"] == h)]
            damping = best_damping((line["forecast"] - line["frontier_at_origin"]).to_numpy(),
                                   (line["observed"] - line["frontier_at_origin"]).to_numpy())
        out.append({"kind": kind, "unit": unit, "horizon_months": int(h), "method": method, "n": len(g),
                    "n_tables": int(g["table_id"].nunique()), "mae": float(np.mean(np.abs(err))),
                    "mae_low": mae_ci[0], "mae_high": mae_ci[1], "naive_mae": float(np.mean(np.abs(naive))),
                    "naive_mae_low": naive_ci[0], "naive_mae_high": naive_ci[1], "bias": float(np.mean(err)),
                    "coverage": float(inside[has].astype(float).mean()) if has.any() else math.nan,
                    "coverage_low": cov_ci[0], "coverage_high": cov_ci[1],
                    "raw_coverage": float(raw_in.mean()) if len(raw_in) else math.nan, "n_raw": int(raw.sum()),
                    "q_low": q_lo, "q_high": q_hi, "q_low_per_rise": per_rise * z_lo,
                    "q_high_per_rise": per_rise * z_hi,
                    "nominal": nominal, "chosen": False, "damping": damping})
    summary = pd.DataFrame(out, columns=SUMMARY_COLUMNS)
    chosen = choose_methods(summary)
    summary["chosen"] = [chosen.get((k, int(h))) == m
                         for k, h, m in zip(summary["kind"], summary["horizon_months"], summary["method"])]
    return summary


def choose_methods(summary: pd.DataFrame, *, min_tables: int = BACKTEST_MIN_TABLES) -> dict[tuple[str, int], str]:
    """Per kind and horizon, the method its forecasts use (module docstring): the non-persistence
    method with the lowest MAE at that horizon among those scored on `min_tables` tables or more
    that beat persistence's MAE on the same rows; else persistence (no forecast at that horizon)."""
    chosen: dict[tuple[str, int], str] = {}
    for (kind, h), g in summary.groupby(["kind", "horizon_months"], sort=True):
        ok = g[(g["method"] != PERSISTENCE) & (g["n_tables"] >= min_tables) & (g["mae"] < g["naive_mae"])]
        chosen[(str(kind), int(h))] = str(ok.sort_values(["mae", "method"])["method"].iat[0]) if len(ok) \
            else PERSISTENCE
    return chosen


def crossing_summary(crossings: pd.DataFrame) -> pd.DataFrame:
    """Per kind and method: origins with a later actual crossing, their tables, how many the method
    dated, and its error in months (forecast - actual: > 0 late) over those it dated."""
    cols = ["kind", "method", "n", "n_tables", "n_dated", "mae_months", "bias_months", "median_abs_months"]
    if not len(crossings):
        return pd.DataFrame(columns=cols)
    kinds = crossings["metric"].map(lambda m: kind_of(m)[0])
    out = []
    for (kind, method), g in crossings.groupby([kinds, "method"], sort=True):
        e = g["error_months"].dropna()
        out.append({"kind": kind, "method": method, "n": len(g), "n_tables": int(g["table_id"].nunique()),
                    "n_dated": len(e), "mae_months": float(e.abs().mean()) if len(e) else math.nan,
                    "bias_months": float(e.mean()) if len(e) else math.nan,
                    "median_abs_months": float(e.abs().median()) if len(e) else math.nan})
    return pd.DataFrame(out, columns=cols)

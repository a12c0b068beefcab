"""The saturation part of `benchwatch analyze`: read the history, compute, store, summarize.

Two scopes: `all` (every model; snapshot, trajectory, frontier, trends) and `post_cutoff` (per
benchmark only the models for which it is post-cutoff, on the slices of
jobs.contamination.model_slices). Glue only: the statistics are analysis.saturation /
analysis.trends, the SQL is storage.saturation, model dates are resolved by analysis.cutoffs.
"""

from __future__ import annotations

import logging
from datetime import datetime

import duckdb
import numpy as np
import pandas as pd

from analysis.constants import GUARD_BAND_DAYS, SATURATION_ALPHA, SATURATION_K, SATURATION_Z
from analysis.cutoffs import post_cutoff_scope, resolve_model_dates
from analysis.saturation import saturation_table, saturation_trajectory
from analysis.trends import frontier_history, trends_table
from jobs.contamination import model_slices, slice_inputs
from jobs.levels import run_levels
from common.time import naive_utc
from common.units import METRIC_DIRECTIONS, lower_is_better
from storage import reads
from storage import saturation as store

log = logging.getLogger("benchwatch.jobs.saturation")

SCOPE = "all"
POST_CUTOFF_SCOPE = "post_cutoff"
SUMMARY_COLUMNS = ["benchmark", "scope", "population", "as_of", "s_index", "bin", "r_norm", "se_delta", "n_items", "n_models",
                   "uncertainty", "stagnation", "reason", "trajectory_points", "frontier", "slope_per_month",
                   "stalled", "forecast_status", "forecast_date"]


def release_dates(claims: pd.DataFrame) -> pd.DataFrame:
    """Each model's resolved release date (analysis.cutoffs.resolve_model_dates): model, release_date."""
    if not len(claims):
        return pd.DataFrame({"model": pd.Series(dtype="object"), "release_date": pd.Series(dtype="datetime64[us]")})
    resolved = resolve_model_dates(claims)
    return resolved.loc[resolved["release_date"].notna(), ["model", "release_date"]].reset_index(drop=True)


def dated_history(history: pd.DataFrame, claims: pd.DataFrame | None = None, *,
                  releases: pd.DataFrame | None = None) -> pd.DataFrame:
    """Each result of the history with the date it enters the trajectory.

    date = max(own date, the model's resolved release date), where the own date is the
    result's evaluation date where the page gives one, else the first observation of the
    snapshot that showed it. A release date only bounds a result from below (a score cannot
    exist before its model); it never moves a result before its own evaluation, and the
    dates of one result never date another (a re-submission's better score enters when it
    was achieved, not when the name first appeared). `date_source` says which date won.
    `releases` (`release_dates`) replaces `claims` when already resolved.
    storage.saturation.read_running_best_history dates rows by this same rule in SQL.
    """
    h = history.copy()
    release = (release_dates(claims if claims is not None else pd.DataFrame()) if releases is None
               else releases).set_index("model")["release_date"]
    release_of = {m: d for m, d in release.items() if pd.notna(d)}
    release_dates_ = pd.to_datetime(pd.Series(release_of, dtype="object"), errors="coerce")
    mapped = h["model"].map(release_dates_) if len(release_dates_) else pd.Series(None, index=h.index, dtype="object")
    h["release_date"] = pd.to_datetime(mapped, errors="coerce")
    own = pd.to_datetime(h["evaluated_at"]).fillna(pd.to_datetime(h["first_observed_at"]))
    own_source = np.where(h["evaluated_at"].notna(), "evaluated_at", "first_observed_at")
    bounded = h["release_date"].notna() & (h["release_date"] > own)
    h["date"] = own.where(~bounded, h["release_date"])
    h["date_source"] = np.where(bounded, "release_date", own_source)
    counts = h["date_source"].value_counts().to_dict()
    log.info("[saturation] history dates: %s (each result at its own evaluation, else first observation; "
             "raised to the model's release date where that is later)", counts)
    return h


def read_dated_history(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """The dated history the trajectory, frontier and trends need: only the rows that can change
    a running top k (storage.saturation.read_running_best_history), dated by `dated_history`."""
    releases = release_dates(reads.read_model_date_claims(con))
    lower = [m for m in METRIC_DIRECTIONS if lower_is_better(m)]
    return dated_history(store.read_running_best_history(con, releases, lower), releases=releases)


def primary_population(history: pd.DataFrame) -> pd.DataFrame:
    """The rows of each benchmark's primary population: model runs where it has any, else systems.

    The frontier and the trend of a benchmark follow one population (never a pool of both).
    """
    pop = history["population"].fillna("models") if "population" in history.columns else \
        pd.Series("models", index=history.index)
    has_models = pop.eq("models").groupby(history["benchmark"]).transform("any")
    keep = pop.eq("models") | (~has_models & pop.eq("systems"))
    out = history[keep].copy()
    out["population"] = pop[keep]
    return out


def run_saturation(con: duckdb.DuckDBPyConnection, *, now: datetime | str, k: int = SATURATION_K,
                   alpha: float = SATURATION_ALPHA, z: float = SATURATION_Z) -> pd.DataFrame:
    """Compute and store snapshot-level saturation, its calendar-time trajectory, frontier and trends.

    Also stores scope `post_cutoff` (`run_post_cutoff_saturation`). Returns one summary row per
    benchmark with scores (scope all).
    """
    now_ts = naive_utc(now)
    latest = reads.read_latest_scores(con)
    if latest.empty:
        log.info("[saturation] no scores stored yet; nothing to compute")
        return pd.DataFrame(columns=SUMMARY_COLUMNS)
    registry = reads.read_benchmarks(con)
    snap = saturation_table(latest, registry, k=k, alpha=alpha, z=z, scope=SCOPE)
    snap["as_of"] = snap["benchmark"].map(latest.groupby("benchmark")["observed_at"].max())

    history = read_dated_history(con)
    # The history of a benchmark is read in the metric its latest scores use (none if they mix).
    # n is the one of the benchmark's primary population row (models where there is one).
    per_bench = snap.sort_values("population", key=lambda p: p.ne("models"), kind="stable") \
        .drop_duplicates("benchmark").set_index("benchmark")
    metric_of = per_bench["metric"].dropna()
    history = history[history["benchmark"].map(metric_of) == history["metric"]]
    n_of = per_bench["n_items"].to_dict()
    assumed_of = per_bench["n_assumed"].fillna(False).astype(bool).to_dict()
    trajectory = saturation_trajectory(history, n_of, k, alpha, z, n_assumed=assumed_of)
    trajectory.insert(2, "scope", SCOPE)
    primary = primary_population(history)
    frontier = frontier_history(primary, k)
    trends = trends_table(primary, now=now_ts, benchmarks=registry, k=k, frontier=frontier)
    trends["k"] = k
    frontier["k"] = k
    trends["population"] = trends["benchmark"].map(primary.groupby("benchmark")["population"].first())

    store.store_saturation_run(con, saturation=snap, trajectory=trajectory, frontier=frontier, trends=trends,
                               scope=SCOPE, k=k, alpha=alpha, run_at=now_ts.tz_localize("UTC").to_pydatetime())
    run_post_cutoff_saturation(con, now=now_ts, k=k, alpha=alpha, z=z)
    run_levels(con)   # the committed level of every stored row (issue 19; jobs/levels.py)
    summary = snap.merge(trajectory.groupby(["benchmark", "population"]).size().rename("trajectory_points"),
                         left_on=["benchmark", "population"], right_index=True, how="left")
    summary = summary.merge(trends[["benchmark", "population", "frontier", "slope_per_month", "stalled",
                                    "forecast_status", "forecast_date"]], on=["benchmark", "population"], how="left")
    summary["trajectory_points"] = summary["trajectory_points"].fillna(0).astype("int64")
    for col in ("as_of", "forecast_date"):
        # per value: a forecast date may lie beyond pandas' nanosecond range (year 2262)
        summary[col] = pd.Series([None if pd.isna(v) else (v if hasattr(v, "strftime") else pd.Timestamp(v))
                                  .strftime("%Y-%m-%d") for v in summary[col]], index=summary.index, dtype="object")
    return summary[SUMMARY_COLUMNS]


def post_cutoff_saturation(latest: pd.DataFrame, slices: pd.DataFrame, registry: pd.DataFrame, *,
                           k: int = SATURATION_K, alpha: float = SATURATION_ALPHA,
                           z: float = SATURATION_Z) -> pd.DataFrame:
    """Saturation on the clean scope: per benchmark, only models for which it is post-cutoff."""
    scoped = post_cutoff_scope(latest, slices)
    sat = saturation_table(scoped, registry, k=k, alpha=alpha, z=z, scope=POST_CUTOFF_SCOPE)
    # An empty clean scope (e.g. one source whose models all predate nothing) still yields one row
    # per benchmark with a reason; its as_of is NaT, typed as a timestamp either way.
    observed = pd.to_datetime(scoped["observed_at"]).astype("datetime64[us]")
    last = observed.groupby(scoped["benchmark"]).max()
    # reindex, not Series.map: mapping through an empty datetime Series raises in pandas 3
    sat["as_of"] = pd.Series(last.reindex(sat["benchmark"]).to_numpy(), index=sat.index, dtype="datetime64[us]")
    return sat


def run_post_cutoff_saturation(con: duckdb.DuckDBPyConnection, *, now: datetime | str, k: int = SATURATION_K,
                               alpha: float = SATURATION_ALPHA, z: float = SATURATION_Z,
                               guard_days: int = GUARD_BAND_DAYS) -> pd.DataFrame | None:
    """Compute and store the saturation index of scope `post_cutoff`; None when no model has a
    resolved cutoff (no slices: nothing stored, as before)."""
    data = slice_inputs(con)
    slices = model_slices(data["latest"], data["benchmarks"], data["cutoffs"], guard_days=guard_days)
    if not len(slices):
        return None
    sat = post_cutoff_saturation(data["latest"], slices, reads.read_benchmarks(con), k=k, alpha=alpha, z=z)
    store.store_scope_saturation(con, sat, scope=POST_CUTOFF_SCOPE,
                                 run_at=naive_utc(now).tz_localize("UTC").to_pydatetime())
    return sat

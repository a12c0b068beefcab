"""The saturation part of `benchwatch analyze`: read the history, compute, store, summarize.

Glue only: the statistics are analysis.saturation / analysis.trends, the SQL is
storage.saturation, model dates are resolved by analysis.cutoffs.
"""

from __future__ import annotations

import logging
from datetime import datetime

import duckdb
import numpy as np
import pandas as pd

from analysis.constants import SATURATION_ALPHA, SATURATION_K, SATURATION_Z
from analysis.cutoffs import resolve_model_dates
from analysis.saturation import saturation_table, saturation_trajectory
from analysis.trends import frontier_history, trends_table
from storage import reads
from storage import saturation as store

log = logging.getLogger("benchwatch.flows.saturation")

SCOPE = "all"
SUMMARY_COLUMNS = ["benchmark", "scope", "as_of", "s_index", "bin", "r_norm", "se_delta", "n_items", "n_models",
                   "uncertainty", "stagnation", "reason", "trajectory_points", "frontier", "slope_per_month",
                   "stalled", "forecast_status", "forecast_date"]


def _utc_naive(when: datetime | str) -> pd.Timestamp:
    ts = pd.Timestamp(when)
    return ts.tz_convert("UTC").tz_localize(None) if ts.tzinfo is not None else ts


def dated_history(history: pd.DataFrame, claims: pd.DataFrame) -> pd.DataFrame:
    """Score history with each model's date: its resolved release date, else the first evaluation or
    observation of it on that benchmark (an upper bound: the model was known by then)."""
    h = history.copy()
    release = pd.Series(dtype="datetime64[us]")
    if len(claims):
        resolved = resolve_model_dates(claims)
        release = resolved.set_index("model")["release_date"]
    h["release_date"] = h["model"].map(release)
    h["date"] = h["release_date"].fillna(h["evaluated_at"]).fillna(h["first_observed_at"])
    h["date_source"] = np.where(h["release_date"].notna(), "release_date",
                                np.where(h["evaluated_at"].notna(), "evaluated_at", "first_observed_at"))
    counts = h.drop_duplicates(["benchmark", "model"])["date_source"].value_counts().to_dict()
    if counts.get("evaluated_at") or counts.get("first_observed_at"):
        log.info("[saturation] history dates: %s (models without a release date are dated when first "
                 "evaluated/observed)", counts)
    return h


def run_saturation(con: duckdb.DuckDBPyConnection, *, now: datetime | str, k: int = SATURATION_K,
                   alpha: float = SATURATION_ALPHA, z: float = SATURATION_Z) -> pd.DataFrame:
    """Compute and store snapshot-level saturation, its calendar-time trajectory, frontier and trends.

    Returns one summary row per benchmark with scores.
    """
    now_ts = _utc_naive(now)
    latest = reads.read_latest_scores(con)
    if latest.empty:
        log.info("[saturation] no scores stored yet; nothing to compute")
        return pd.DataFrame(columns=SUMMARY_COLUMNS)
    registry = reads.read_benchmarks(con)
    snap = saturation_table(latest, registry, k=k, alpha=alpha, z=z, scope=SCOPE)
    snap["as_of"] = snap["benchmark"].map(latest.groupby("benchmark")["observed_at"].max())

    history = dated_history(store.read_score_history(con), reads.read_model_date_claims(con))
    # The history of a benchmark is read in the metric its latest scores use (none if they mix).
    metric_of = snap.set_index("benchmark")["metric"].dropna()
    history = history[history["benchmark"].map(metric_of) == history["metric"]]
    n_of = snap.set_index("benchmark")["n_items"].to_dict()
    assumed_of = snap.set_index("benchmark")["n_assumed"].fillna(False).astype(bool).to_dict()
    trajectory = saturation_trajectory(history, n_of, k, alpha, z, n_assumed=assumed_of)
    trajectory.insert(2, "scope", SCOPE)
    frontier = frontier_history(history, k)
    frontier["k"] = k
    trends = trends_table(history, now=now_ts, benchmarks=registry, k=k)
    trends["k"] = k

    store.store_saturation_run(con, saturation=snap, trajectory=trajectory, frontier=frontier, trends=trends,
                               scope=SCOPE, k=k, alpha=alpha, run_at=now_ts.tz_localize("UTC").to_pydatetime())
    summary = snap.merge(trajectory.groupby("benchmark").size().rename("trajectory_points"),
                         left_on="benchmark", right_index=True, how="left")
    summary = summary.merge(trends[["benchmark", "frontier", "slope_per_month", "stalled", "forecast_status",
                                    "forecast_date"]], on="benchmark", how="left")
    summary["trajectory_points"] = summary["trajectory_points"].fillna(0).astype("int64")
    for col in ("as_of", "forecast_date"):
        summary[col] = pd.to_datetime(summary[col]).dt.strftime("%Y-%m-%d").where(summary[col].notna(), None)
    return summary[SUMMARY_COLUMNS]

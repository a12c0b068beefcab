"""The saturation part of `benchwatch analyze` as one call, and the analysis' summary.

`run_saturation` recomputes every saturation relation (jobs/relations/dag.py `SATURATION`: the
tables, snapshot-level saturation of both scopes, trajectory, frontier, trends, levels) for every
table, through the one step with a full plan; `summary` is what `analyze` returns and stores with
its fingerprint. What the relations share is jobs/relations/shared.py.
"""

from __future__ import annotations

from datetime import datetime

import pandas as pd

from jobs.relations.base import Inputs
from jobs.relations.dag import SATURATION
from jobs.relations.step import Plan, materialize
from storage.engine import duckdb

SUMMARY_COLUMNS = ["table_id", "benchmark", "source", "scope", "population", "as_of", "s_index", "bin", "r_norm", "se_delta", "n_items", "n_models",
                   "uncertainty", "stagnation", "reason", "trajectory_points", "frontier", "slope_per_month",
                   "stalled", "forecast_status", "forecast_date"]


def summary(inputs: Inputs, previous: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per table and population with scores (scope all): the recomputed tables' rows
    (what the relations computed) and, of the others, `previous` (the last analysis' summary) as
    it was."""
    snap = inputs.computed.get("saturation")
    trajectory, trends = inputs.computed.get("trajectory"), inputs.computed.get("trends")
    if snap is None or snap.empty or trajectory is None or trends is None:
        out = pd.DataFrame(columns=SUMMARY_COLUMNS)
    else:
        points = trajectory.groupby(["table_id", "population"]).size().rename("trajectory_points")
        out = snap.merge(points, left_on=["table_id", "population"], right_index=True, how="left")
        out = out.merge(trends[["table_id", "population", "frontier", "slope_per_month", "stalled",
                                "forecast_status", "forecast_date"]], on=["table_id", "population"], how="left")
        out["trajectory_points"] = out["trajectory_points"].fillna(0).astype("int64")
        for col in ("as_of", "forecast_date"):
            # per value: a forecast date may lie beyond pandas' nanosecond range (year 2262)
            out[col] = pd.Series([None if pd.isna(v) else (v if hasattr(v, "strftime") else pd.Timestamp(v))
                                  .strftime("%Y-%m-%d") for v in out[col]], index=out.index, dtype="object")
        out = out[SUMMARY_COLUMNS]
    only = inputs.only
    if only is not None and previous is not None and len(previous):
        out = merged_summary(previous[~previous["table_id"].isin(only)], out)
    return out


def merged_summary(kept: pd.DataFrame, recomputed: pd.DataFrame) -> pd.DataFrame:
    """The last analysis' summary rows of the tables kept and the recomputed rows, in table order."""
    frames = [f for f in (kept.reindex(columns=SUMMARY_COLUMNS), recomputed) if len(f)]
    if not frames:
        return recomputed
    out = pd.concat(frames, ignore_index=True)
    return out.sort_values(["table_id", "population"], kind="stable", ignore_index=True)


def run_saturation(con: duckdb.DuckDBPyConnection, *, now: datetime | str) -> pd.DataFrame:
    """Compute and store every saturation relation (jobs/relations.dag.SATURATION: the tables,
    snapshot-level saturation of both scopes, trajectory, frontier, trends, levels) for every
    table, through the one step (jobs/relations/step.py) with a full plan. Returns one summary
    row per table and population with scores (scope all)."""
    inputs = materialize(con, SATURATION, Plan(full=True), pd.Timestamp(now).to_pydatetime())
    return summary(inputs)

"""The saturation part of `benchwatch analyze`: read the history, compute, store, summarize.

Everything is computed per leaderboard table (registry.tables: benchmark, source, version; a
declared pool is one table), never across tables. Two scopes: `all` (every model; snapshot,
trajectory, frontier, trends) and `post_cutoff` (per table only the models for which its
benchmark is post-cutoff, on the slices of jobs.contamination.model_slices). Glue only: the statistics are analysis.saturation /
analysis.trends, the SQL is storage.saturation, model dates are resolved by analysis.cutoffs.
"""

from __future__ import annotations

import contextvars
import logging
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

import pandas as pd

from analysis.constants import GUARD_BAND_DAYS, SATURATION_ALPHA, SATURATION_K, SATURATION_Z
from analysis.cutoffs import post_cutoff_scope
from analysis.dating import log_dates, release_dates
from analysis.saturation_tables import saturation_table, table_sizes
from analysis.trajectory import saturation_trajectory
from analysis.trends import at_day, frontier_history, metric_of, trends_table
from jobs.contamination import latest_scores, model_slices, resolved_dates, slice_inputs
from jobs.levels import run_levels
from common.time import naive_utc
from common.units import METRIC_DIRECTIONS, lower_is_better
from registry.tables import primary_reasons, assign_tables, primary_flags, table_name
from storage import reads
from storage import saturation as store
from storage.engine import duckdb
from storage.saturation import BENCHMARK_TABLES_COLUMNS

log = logging.getLogger("benchwatch.jobs.saturation")

SCOPE = "all"
POST_CUTOFF_SCOPE = "post_cutoff"
SUMMARY_COLUMNS = ["table_id", "benchmark", "source", "scope", "population", "as_of", "s_index", "bin", "r_norm", "se_delta", "n_items", "n_models",
                   "uncertainty", "stagnation", "reason", "trajectory_points", "frontier", "slope_per_month",
                   "stalled", "forecast_status", "forecast_date"]


def with_table_ids(frame: pd.DataFrame) -> pd.DataFrame:
    """Score rows with their leaderboard table (registry.tables.assign_tables: `table_id`,
    `table_source` = the source or 'pooled' for a declared pool)."""
    if "source" not in frame.columns:
        raise ValueError("[saturation] score rows need a source to be put in a table")
    return assign_tables(frame)


def read_dated_history(con: duckdb.DuckDBPyConnection, benchmarks: list[str] | None = None, *,
                       keep: bool = False, reuse: bool = False) -> pd.DataFrame:
    """The dated history the trajectory, frontier and trends need: only the rows that can change
    a running top k, each dated by the history's dating rule (both in analysis/running_best_history.sql,
    which storage.saturation.read_running_best_history executes; `benchmarks`: only those
    benchmarks' rows; `keep`, `reuse`: store what was read, read on top of what was stored)."""
    claims = reads.read_model_date_claims(con)
    releases = release_dates(claims, resolved=resolved_dates(claims))
    lower = [m for m in METRIC_DIRECTIONS if lower_is_better(m)]
    return log_dates(store.read_running_best_history(con, releases, lower, benchmarks=benchmarks,
                                                     keep=keep, reuse=reuse))


def primary_population(history: pd.DataFrame) -> pd.DataFrame:
    """The rows of each table's primary population: model runs where it has any, else systems.

    The frontier and the trend of a table follow one population (never a pool of both).
    """
    key = history["table_id"] if "table_id" in history.columns else history["benchmark"]
    pop = history["population"].fillna("models") if "population" in history.columns else \
        pd.Series("models", index=history.index)
    has_models = pop.eq("models").groupby(key).transform("any")
    keep = pop.eq("models") | (~has_models & pop.eq("systems"))
    out = history[keep].copy()
    out["population"] = pop[keep]
    return out


# The columns of the dated history that saturation_trajectory reads (identity, published SEs), and
# of those the ones frontier_history and trends_table read (and the population).
HISTORY_COLUMNS = ["table_id", "benchmark", "model", "model_raw", "setting", "population", "underlying", "score",
                   "stderr", "ci_low", "ci_high", "date", "metric", "se", "entity_variant"]
CATALOGUE_COLUMNS = ["source", "table_version", "n_items"]       # assign_tables, table_sizes
PRIMARY_COLUMNS = ["table_id", "benchmark", "model", "score", "date", "metric", "population", "se", "entity_variant"]

TABLE_META = ["table_id", "benchmark", "source", "sources", "table_version"]


def table_catalogue(spans: pd.DataFrame, history: pd.DataFrame, registry: pd.DataFrame,
                    snap: pd.DataFrame) -> pd.DataFrame:
    """One row per leaderboard table of the stored scores (`spans`: storage.saturation.
    read_table_spans, one row per table and model): its source (or 'pooled' and its members),
    version, name, question-set size and metric (the latest scores' where it is current, else
    its history's), models, observation span, primary flag.
    """
    rows = with_table_ids(spans) if len(spans) else spans
    if rows.empty:
        return pd.DataFrame(columns=[*TABLE_META, "name", "n_items", "n_assumed", "metric", "is_primary", "n_models",
                                     "first_observed_at", "last_observed_at", "first_dated_at", "last_dated_at",
                                     "primary_reason"])
    g = rows.groupby("table_id", sort=True)
    out = pd.DataFrame({
        "benchmark": g["benchmark"].first(), "source": g["table_source"].first(),
        "sources": g["source"].agg(lambda v: sorted({str(x) for x in v.dropna()})),
        "table_version": g["table_version"].first().fillna(""), "n_models": g["model"].nunique(),
        "first_observed_at": pd.to_datetime(g["first_observed_at"].min()),
        "last_observed_at": pd.to_datetime(g["last_observed_at"].max()),
        "first_dated_at": pd.to_datetime(g["first_dated_at"].min()),
        "last_dated_at": pd.to_datetime(g["last_dated_at"].max()),
    }).reset_index()
    # n and metric: the snapshot-level row of the primary population where the table is current
    current = snap.sort_values("population", key=lambda p: p.ne("models"), kind="stable") \
        .drop_duplicates("table_id").set_index("table_id")
    past = table_sizes(history, registry).set_index("table_id")
    past_metric = metric_of(history, "table_id") if len(history) else {}
    out["n_items"] = [current["n_items"].get(t) if t in current.index else past["n_items"].get(t)
                      for t in out["table_id"]]
    out["n_assumed"] = [bool(current["n_assumed"].get(t)) if t in current.index and
                        pd.notna(current["n_assumed"].get(t)) else bool(past["n_assumed"].get(t, False))
                        for t in out["table_id"]]
    out["metric"] = [current["metric"].get(t) if t in current.index else past_metric.get(t)
                     for t in out["table_id"]]
    out["n_items"] = pd.to_numeric(out["n_items"], errors="coerce")
    out["is_current"] = out["table_id"].isin(set(snap["table_id"]))
    out["is_primary"] = primary_flags(out).to_numpy()
    out["primary_reason"] = primary_reasons(out).to_numpy()
    names = dict(zip(registry["id"], registry["name"])) if "name" in registry.columns else {}
    out["name"] = [table_name(names.get(b, b), s, v, ss) for b, s, v, ss in
                   zip(out["benchmark"], out["source"], out["table_version"], out["sources"])]
    return out


def _with_sources(frame: pd.DataFrame, tables: pd.DataFrame) -> pd.DataFrame:
    """`frame` (with table_id) with its table's source and sources."""
    meta = tables.set_index("table_id")
    out = frame.copy()
    out["source"] = out["table_id"].map(meta["source"])
    out["sources"] = [list(meta["sources"].get(t, [])) for t in out["table_id"]]
    return out


def run_saturation(con: duckdb.DuckDBPyConnection, *, now: datetime | str, k: int = SATURATION_K,
                   alpha: float = SATURATION_ALPHA, z: float = SATURATION_Z, only: set[str] | None = None,
                   previous: pd.DataFrame | None = None, latest: pd.DataFrame | None = None) -> pd.DataFrame:
    """Compute and store snapshot-level saturation, its calendar-time trajectory, frontier and
    trends, per leaderboard table (never across tables), and the tables themselves.

    Also stores scope `post_cutoff` (`run_post_cutoff_saturation`). Returns one summary row per
    table and population with scores (scope all).

    `only` (an incremental analysis, jobs/analyze.py): recompute the tables of these ids and keep
    the stored results of the others, whose trends move to the day of `now`; `previous` is the
    last analysis' summary, whose rows of the other tables are returned as they were.
    `latest`: the latest scores of every benchmark, when the caller has read them
    (storage.reads.read_latest_scores; the analysis reads them once for all its steps).
    """
    now_ts = naive_utc(now)
    benches = None if only is None else sorted({t.split(":", 1)[0] for t in only})
    every = latest
    latest = latest_scores(con, benches, every)
    if only is None and latest.empty:
        log.info("[saturation] no scores stored yet; nothing to compute")
        return pd.DataFrame(columns=SUMMARY_COLUMNS)
    latest = with_table_ids(latest) if len(latest) else latest.assign(table_id=pd.Series(dtype="object"))
    if only is not None:
        latest = latest[latest["table_id"].isin(only)]
    registry = reads.read_benchmarks(con)
    # The latest tables (their index and bin-stability draws: numpy, which releases the GIL) are
    # computed in a thread while DuckDB reads the history, which leaves a core partly idle; the
    # thread runs in this context (a Prefect run's logger). Same tables, same draws (each table
    # is seeded by its own id).
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="saturation-table") as beside:
        tables_job = beside.submit(contextvars.copy_context().run, saturation_table, latest, registry,
                                   k=k, alpha=alpha, z=z, scope=SCOPE)
        # stored as read; an incremental analysis reads its tables' new rows on top of what the
        # last read of them stored (storage/history_kept.py), a full one reads every row
        history = read_dated_history(con, benches, keep=True, reuse=only is not None)
        snap = tables_job.result()
    if len(snap):
        snap["as_of"] = snap["table_id"].map(latest.groupby("table_id")["observed_at"].max())
    else:    # nothing to recompute (an incremental analysis on a new day): typed, for the writes
        snap["as_of"] = pd.Series(dtype="datetime64[us]")

    # the dating columns are logged (read_dated_history): from here on, what the tables and the
    # catalogue need; the read's wide frame goes as the narrow one is made
    history = with_table_ids(history[[c for c in [*HISTORY_COLUMNS, *CATALOGUE_COLUMNS] if c in history.columns]])
    spans = store.read_table_spans(con, benches)
    if only is not None:
        history = history[history["table_id"].isin(only)]
    tables = table_catalogue(spans, history, registry, snap)
    if only is not None:
        tables = tables[tables["table_id"].isin(only)]
    # A table's history is read in the metric its latest scores use (none if they mix), a past
    # table's in its history's metric; n is the table's (models population where there is one).
    metric_of_table = tables.set_index("table_id")["metric"].dropna()
    # ... and only the columns the trajectory, the frontier and the trends read from here on (the
    # dating columns were logged and the catalogue is made): a narrow copy, the read's frame goes
    history = history.loc[history["table_id"].map(metric_of_table) == history["metric"],
                          [c for c in HISTORY_COLUMNS if c in history.columns]]
    n_of = tables.set_index("table_id")["n_items"].dropna().to_dict()
    assumed_of = tables.set_index("table_id")["n_assumed"].fillna(False).astype(bool).to_dict()
    trajectory = saturation_trajectory(history, n_of, k, alpha, z, n_assumed=assumed_of)
    trajectory.insert(3, "scope", SCOPE)
    # the frontier and the trends read only these columns: a narrow copy, and the history goes
    primary = primary_population(history[[c for c in PRIMARY_COLUMNS if c in history.columns]])
    del history
    frontier = frontier_history(primary, k)
    trends = trends_table(primary, now=now_ts, benchmarks=registry, k=k, frontier=frontier)
    trends["k"] = k
    frontier["k"] = k
    trends["population"] = trends["table_id"].map(primary.groupby("table_id")["population"].first())
    snap, trajectory, frontier, trends = (_with_sources(f, tables) for f in (snap, trajectory, frontier, trends))

    run_at = now_ts.tz_localize("UTC").to_pydatetime()
    if only is None:
        store.store_saturation_run(con, saturation=snap, trajectory=trajectory, frontier=frontier, trends=trends,
                                   scope=SCOPE, k=k, alpha=alpha, run_at=run_at, tables=tables)
    else:
        kept = store.read_benchmark_tables(con)
        kept = kept[~kept["table_id"].isin(only)]
        stored_trends = store.read_trends(con)
        day = at_day(stored_trends[~stored_trends["table_id"].isin(only) & (stored_trends["k"] == k)], now_ts)
        store.store_saturation_tables(con, table_ids=sorted(only), saturation=snap, trajectory=trajectory,
                                      frontier=frontier, trends=trends,
                                      tables=all_tables(kept, tables.assign(run_at=run_at), set(benches or ())),
                                      day_trends=day,
                                      scope=SCOPE, k=k, alpha=alpha, run_at=run_at)
    # what the summary needs of the frames above; the frames go before the next reads (peak memory)
    points = trajectory.groupby(["table_id", "population"]).size().rename("trajectory_points")
    del trajectory, frontier, primary, latest, spans
    run_post_cutoff_saturation(con, now=now_ts, k=k, alpha=alpha, z=z, only=only, latest=every)
    run_levels(con, now_ts)   # the committed level of every stored row as of now (jobs/levels.py)
    if snap.empty:
        summary = pd.DataFrame(columns=SUMMARY_COLUMNS)
        return merged_summary(previous[~previous["table_id"].isin(only)], summary) \
            if only is not None and previous is not None and len(previous) else summary
    summary = snap.merge(points, left_on=["table_id", "population"], right_index=True, how="left")
    summary = summary.merge(trends[["table_id", "population", "frontier", "slope_per_month", "stalled",
                                    "forecast_status", "forecast_date"]], on=["table_id", "population"], how="left")
    summary["trajectory_points"] = summary["trajectory_points"].fillna(0).astype("int64")
    for col in ("as_of", "forecast_date"):
        # per value: a forecast date may lie beyond pandas' nanosecond range (year 2262)
        summary[col] = pd.Series([None if pd.isna(v) else (v if hasattr(v, "strftime") else pd.Timestamp(v))
                                  .strftime("%Y-%m-%d") for v in summary[col]], index=summary.index, dtype="object")
    summary = summary[SUMMARY_COLUMNS]
    if only is not None and previous is not None and len(previous):
        summary = merged_summary(previous[~previous["table_id"].isin(only)], summary)
    return summary


def all_tables(kept: pd.DataFrame, recomputed: pd.DataFrame, benchmarks: set[str] | None = None) -> pd.DataFrame:
    """The stored catalogue rows of the tables kept and the recomputed ones, with the primary
    table chosen again over both for each of `benchmarks` (those of the tables recomputed or
    gone; None: every benchmark). registry.tables.primary_flags decides one benchmark at a time
    from its own tables, so the others keep their stored flag."""
    cols = [*BENCHMARK_TABLES_COLUMNS, "run_at"]
    frames = [f[cols] for f in (kept, recomputed) if len(f)]
    if not frames:
        return pd.DataFrame(columns=cols)
    out = pd.concat(frames, ignore_index=True).sort_values("table_id", kind="stable", ignore_index=True)
    again = out["benchmark"].isin(benchmarks) if benchmarks is not None else pd.Series(True, index=out.index)
    if again.any():
        out.loc[again, "is_primary"] = primary_flags(out[again]).to_numpy()
        out.loc[again, "primary_reason"] = primary_reasons(out[again]).to_numpy()
    return out


def merged_summary(kept: pd.DataFrame, recomputed: pd.DataFrame) -> pd.DataFrame:
    """The last analysis' summary rows of the tables kept and the recomputed rows, in table order."""
    frames = [f for f in (kept.reindex(columns=SUMMARY_COLUMNS), recomputed) if len(f)]
    if not frames:
        return recomputed
    out = pd.concat(frames, ignore_index=True)
    return out.sort_values(["table_id", "population"], kind="stable", ignore_index=True)


def post_cutoff_saturation(latest: pd.DataFrame, slices: pd.DataFrame, registry: pd.DataFrame, *,
                           k: int = SATURATION_K, alpha: float = SATURATION_ALPHA,
                           z: float = SATURATION_Z) -> pd.DataFrame:
    """Saturation on the clean scope: per table, only models for which its benchmark is post-cutoff."""
    latest = with_table_ids(latest) if "source" in latest.columns and "table_id" not in latest.columns else latest
    scoped = post_cutoff_scope(latest, slices)
    sat = saturation_table(scoped, registry, k=k, alpha=alpha, z=z, scope=POST_CUTOFF_SCOPE)
    # An empty clean scope (e.g. one source whose models all predate nothing) still yields one row
    # per table with a reason; its as_of is NaT, typed as a timestamp either way.
    observed = pd.to_datetime(scoped["observed_at"]).astype("datetime64[us]")
    key = scoped["table_id"] if "table_id" in scoped.columns else scoped["benchmark"]
    last = observed.groupby(key).max()
    # reindex, not Series.map: mapping through an empty datetime Series raises in pandas 3
    sat["as_of"] = pd.Series(last.reindex(sat["table_id"]).to_numpy(), index=sat.index, dtype="datetime64[us]")
    if "source" in scoped.columns:
        meta = scoped.assign(table_source=scoped.get("table_source", scoped["source"])).groupby("table_id")
        sources = meta["source"].agg(lambda v: sorted({str(x) for x in v.dropna()}))
        sat["source"] = sat["table_id"].map(meta["table_source"].first())
        sat["sources"] = [list(sources.get(t, [])) for t in sat["table_id"]]
    return sat


def run_post_cutoff_saturation(con: duckdb.DuckDBPyConnection, *, now: datetime | str, k: int = SATURATION_K,
                               alpha: float = SATURATION_ALPHA, z: float = SATURATION_Z,
                               guard_days: int = GUARD_BAND_DAYS, only: set[str] | None = None,
                               latest: pd.DataFrame | None = None) -> pd.DataFrame | None:
    """Compute and store the saturation index of scope `post_cutoff`, per table; None when no
    model has a resolved cutoff (no slices: nothing stored, as before). `only`: these tables;
    `latest`: the latest scores of every benchmark, when the caller has read them."""
    data = slice_inputs(con, None if only is None else sorted({t.split(":", 1)[0] for t in only}), latest=latest)
    slices = model_slices(data["latest"], data["benchmarks"], data["cutoffs"], guard_days=guard_days)
    if not len(slices):
        return None
    latest = with_table_ids(data["latest"])
    if only is not None:
        latest = latest[latest["table_id"].isin(only)]
    sat = post_cutoff_saturation(latest, slices, reads.read_benchmarks(con), k=k, alpha=alpha, z=z)
    store.store_scope_saturation(con, sat, scope=POST_CUTOFF_SCOPE,
                                 run_at=naive_utc(now).tz_localize("UTC").to_pydatetime())
    return sat

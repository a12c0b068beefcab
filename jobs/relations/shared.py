"""What the saturation relations share (jobs/relations: catalogue, saturation, trajectory,
frontier, trends, post_cutoff, levels): the latest scores of the tables recomputed, the dated
history and the latest tables with their catalogue, read once per analysis (`Inputs.once`).

Everything is computed per leaderboard table (registry.tables: benchmark, source, version; a
declared pool is one table), never across tables. Two scopes: `all` (every model; snapshot,
trajectory, frontier, trends) and `post_cutoff` (per table only the models for which its
benchmark is post-cutoff, on the slices of jobs.contamination.model_slices). Glue only: the
statistics are analysis.saturation / analysis.trends, the SQL is storage.saturation, model dates
are resolved by analysis.cutoffs.
"""

from __future__ import annotations

import logging

import pandas as pd

from analysis.constants import SATURATION_ALPHA, SATURATION_K, SATURATION_Z
from analysis.dating import log_dates, release_dates
from analysis.saturation_tables import saturation_table, table_sizes
from analysis.trends import metric_of
from common.time import naive_utc
from common.units import METRIC_DIRECTIONS, lower_is_better
from jobs.contamination import latest_scores, resolved_dates
from jobs.relations.base import Inputs
from registry.tables import assign_tables, primary_flags, primary_reasons, table_name
from storage import reads
from storage import saturation as store
from storage.engine import duckdb

log = logging.getLogger("benchwatch.jobs.saturation")   # the saturation relations' messages, as before

SCOPE = "all"
POST_CUTOFF_SCOPE = "post_cutoff"
TABLE_META = ["table_id", "benchmark", "source", "sources", "table_version"]


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


def now_of(inputs: Inputs) -> pd.Timestamp:
    """The analysis' `now`, naive UTC (as the saturation frames hold their times)."""
    return naive_utc(inputs.now)


def latest_tables(inputs: Inputs) -> pd.DataFrame:
    """The latest scores of the tables recomputed, with their table ids (read once)."""
    def read() -> pd.DataFrame:
        latest = latest_scores(inputs.con, inputs.benchmarks, inputs.latest)
        latest = with_table_ids(latest) if len(latest) else latest.assign(table_id=pd.Series(dtype="object"))
        only = inputs.only
        return latest if only is None else latest[latest["table_id"].isin(only)]
    return inputs.once("latest_tables", read)


def no_scores(inputs: Inputs) -> bool:
    """A full analysis of a store without scores: no saturation relation has anything to write."""
    if inputs.only is None and latest_tables(inputs).empty:
        log.info("[saturation] no scores stored yet; nothing to compute")
        return True
    return False


def registry_of(inputs: Inputs) -> pd.DataFrame:
    return inputs.once("registry", lambda: reads.read_benchmarks(inputs.con))


def history_and_tables(inputs: Inputs) -> dict:
    """The recomputed tables' latest saturation rows (`snap`, without their sources yet), their
    catalogue rows (`catalogue`: jobs/relations/catalogue.py) and their dated history in the
    metric of each table (`history`: the columns the trajectory, the frontier and the trends
    read), read once per analysis."""
    return inputs.once("history_and_tables", lambda: _history_and_tables(inputs))


def _history_and_tables(inputs: Inputs) -> dict:
    con, only, benches = inputs.con, inputs.only, inputs.benchmarks
    latest, registry = latest_tables(inputs), registry_of(inputs)
    snap = saturation_table(latest, registry, k=SATURATION_K, alpha=SATURATION_ALPHA, z=SATURATION_Z, scope=SCOPE)
    # stored as read; an incremental analysis reads its tables' new rows on top of what the
    # last read of them stored (storage/history_kept.py), a full one reads every row
    history = read_dated_history(con, benches, keep=True, reuse=only is not None)
    if len(snap):
        snap["as_of"] = snap["table_id"].map(latest.groupby("table_id")["observed_at"].max())
    else:    # nothing to recompute: typed, for the writes
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
    # table's in its history's metric: only the columns the trajectory, the frontier and the
    # trends read from here on (a narrow copy, the read's frame goes)
    metric_of_table = tables.set_index("table_id")["metric"].dropna()
    history = history.loc[history["table_id"].map(metric_of_table) == history["metric"],
                          [c for c in HISTORY_COLUMNS if c in history.columns]]
    return {"snap": snap, "catalogue": tables, "history": history}


def primary(inputs: Inputs) -> pd.DataFrame:
    """The recomputed tables' history rows of their primary population, the columns the frontier
    and the trends read (read once; the trajectory, which reads every population, comes first
    and the whole history goes once this is made)."""
    def make() -> pd.DataFrame:
        shared = history_and_tables(inputs)
        history = shared.pop("history")
        return primary_population(history[[c for c in PRIMARY_COLUMNS if c in history.columns]])
    return inputs.once("primary", make)


def with_sources(frame: pd.DataFrame, tables: pd.DataFrame) -> pd.DataFrame:
    """`frame` (with table_id) with its table's source, version and sources (the key's parts
    are stored beside the id: migration 084)."""
    meta = tables.set_index("table_id")
    out = frame.copy()
    out["source"] = out["table_id"].map(meta["source"])
    out["table_version"] = out["table_id"].map(meta["table_version"])
    out["sources"] = [list(meta["sources"].get(t, [])) for t in out["table_id"]]
    return out

"""Reads for the saturation analysis and writes of its results (tables of migrations 002, 018).

Writes are bulk, from DataFrames, and idempotent: snapshot-level rows are keyed by
(table_id, as_of, scope, population, k, alpha) and replaced on the same key; the reconstructed
trajectory, the frontier history and the trends are derived from all stored data, so each
run replaces its slice as a whole. One transaction per analyze run.
"""

from __future__ import annotations

import logging
from contextlib import contextmanager
from datetime import datetime
from functools import lru_cache
from importlib import resources
from typing import Iterator

import numpy as np
import pandas as pd

from common.time import naive_utc_columns, utcnow
from storage import history_kept as kept
from storage.db import insert_frame, quote_ident, registered_frame, transaction, unless_closed
from storage.engine import duckdb
from analysis.dating import RUNNING_BEST_SQL

log = logging.getLogger("benchwatch.storage")

SATURATION_COLUMNS = ["table_id", "benchmark", "source", "table_version", "sources", "as_of", "scope", "population", "k", "alpha", "z", "metric", "n_items", "n_assumed",
                      "n_models", "top_scores", "top_models", "top_variants", "s1", "sk", "se_delta", "r_norm", "s_index",
                      "bin", "statistically_similar", "saturated", "stagnation", "headroom", "uncertainty", "reason",
                      "scale", "comparable", "bin_probs", "bin_hold_prob", "resample_noise", "resample_draws",
                      "resample_seed"]
TRAJECTORY_COLUMNS = ["table_id", "benchmark", "source", "table_version", "sources", "as_of", "scope", "population", "k", "alpha", "z", "n_items", "n_models",
                      "top_scores", "top_models", "top_variants", "s1",
                      "sk", "se_delta", "r_norm", "s_index", "bin", "statistically_similar", "uncertainty"]
FRONTIER_COLUMNS = ["table_id", "benchmark", "source", "table_version", "sources", "as_of", "k", "n_models", "frontier", "frontier_model", "topk_mean", "cv_topk",
                    "cv_topk_90d", "is_record"]
TRENDS_COLUMNS = ["table_id", "benchmark", "source", "table_version", "sources", "population", "k", "as_of", "metric", "direction", "n_models", "frontier",
                  "frontier_model", "last_record_at", "n_records", "topk_mean", "cv_topk", "cv_topk_90d", "trend_status",
                  "trend_start", "trend_end", "stale_days", "slope_per_month", "slope_ci_low", "slope_ci_high",
                  "slope_unit", "slope_points", "stalled", "forecast_threshold", "forecast_status", "forecast_method",
                  "forecast_date", "forecast_ci_low", "forecast_ci_high", "logistic_k", "logistic_t0", "logistic_L",
                  "logistic_forecast_date", "plateau_p", "plateau_df", "forecast_reason",
                  "reached_at"]  # + migrations 007, 012, 075
BENCHMARK_TABLES_COLUMNS = ["table_id", "benchmark", "source", "sources", "table_version", "name", "n_items",
                            "is_primary", "is_current", "n_models", "first_observed_at", "last_observed_at",  # 018
                            "first_dated_at", "last_dated_at", "primary_reason"]                   # 060


# --- reads -------------------------------------------------------------------------------

_HISTORY_ROWS = """
    WITH rows AS (
        SELECT sc.source, sc.benchmark, coalesce(sc.table_version, '') AS table_version, sc.model, sc.model_raw,
               sc.setting, sc.variant, sc.population, sc.underlying, sc.score, sc.metric, sc.stderr, sc.ci_low,
               sc.ci_high, sc.n_items, sc.evaluated_at, sn.observed_at, sn.id AS snapshot_id
        FROM scores sc JOIN snapshots sn ON sn.id = sc.snapshot_id
        WHERE sc.excluded_reason = '' AND (sn.status IS DISTINCT FROM 'held' OR NOT coalesce(list_contains(sn.held_tables, 'scores' || chr(31) || sc.benchmark || chr(31) || coalesce(sc.table_version, '')), true))   -- shrink guard (010, 041)
          AND NOT coalesce(sc.is_reference, false)                             -- never in a top k (017)
    )
    SELECT source, benchmark, table_version, model, model_raw, setting, variant, population, underlying, score,
           metric, stderr, ci_low, ci_high, n_items, evaluated_at, observed_at AS first_observed_at, observed_at,
           snapshot_id
    FROM rows
    QUALIFY row_number() OVER (PARTITION BY source, benchmark, table_version, model_raw, setting, score
                               ORDER BY observed_at, snapshot_id) = 1"""
# Rows of scores per query of a history read: the reads below window over every stored row, so
# they run on contiguous ranges of benchmarks (every window is within one benchmark) to bound
# DuckDB's memory by a range's rows instead of the whole table's.
# 1M rows: a range's windows then run within HISTORY_MEMORY_LIMIT (at 2.5M rows they spilled to
# disk).
HISTORY_CHUNK_ROWS = 1_000_000
# DuckDB's memory while a history read runs: its buffer pool would otherwise keep every block of
# the scores it scanned (most of a 10M-row table) in the process' memory; beyond it, DuckDB evicts
# or spills to its temporary directory.
HISTORY_MEMORY_LIMIT = "256MB"
# DuckDB's memory for a whole analysis (jobs/analyze.py): by default (80% of RAM) its buffer pool
# keeps every block the analysis' reads scanned, which each read once; beyond the limit those
# blocks are dropped (and read again from the file if a later query needs them). The history
# reads raise it to HISTORY_MEMORY_LIMIT for their windows; setting it back drops what they cached
# before the history frame is put in tables (the analysis' peak).
ANALYSIS_MEMORY_LIMIT = "128MB"


@contextmanager
def memory_limit(con: duckdb.DuckDBPyConnection, limit: str = HISTORY_MEMORY_LIMIT) -> Iterator[None]:
    """`with memory_limit(con):` DuckDB's memory_limit set to `limit`, then restored."""
    row = con.execute("SELECT current_setting('memory_limit')").fetchone()
    before = row[0] if row else None
    con.execute("SET memory_limit = ?", [limit])
    try:
        yield
    finally:
        if before is None:
            unless_closed(con, "RESET memory_limit")
        else:
            unless_closed(con, "SET memory_limit = ?", [before])


def benchmark_chunks(con: duckdb.DuckDBPyConnection, max_rows: int | None = None,
                     benchmarks: list[str] | None = None) -> list[list[str]]:
    """Benchmarks in byte order (DuckDB's VARCHAR order), cut into ranges of at most `max_rows`
    (default HISTORY_CHUNK_ROWS) score rows; a benchmark with more is a range of its own.
    `benchmarks`: only those (an incremental analysis reads the tables it recomputes)."""
    max_rows = HISTORY_CHUNK_ROWS if max_rows is None else max_rows
    counts = con.execute("SELECT benchmark, count(*) FROM scores WHERE ? IS NULL OR list_contains(?, benchmark) "
                         "GROUP BY benchmark ORDER BY benchmark", [benchmarks, benchmarks]).fetchall()
    chunks: list[list[str]] = []
    rows = max_rows
    for bench, n in counts:
        if rows + n > max_rows:
            chunks.append([])
            rows = 0
        chunks[-1].append(bench)
        rows += n
    return chunks


def shared_strings(df: pd.DataFrame) -> pd.DataFrame:
    """`df` with each text column's equal values one Python string (DuckDB returns a string per
    cell: a million rows of a few hundred names would hold a million copies). Same values, same dtypes."""
    for col in df.columns:
        if df[col].dtype == object or pd.api.types.is_string_dtype(df[col].dtype):
            codes, uniques = pd.factorize(df[col].to_numpy(dtype=object), use_na_sentinel=False)
            df[col] = pd.array(np.asarray(uniques, dtype=object)[codes], dtype=df[col].dtype)
    return df


# A total order: rows of one date keep this order in the running top k, which breaks ties by it.
_HISTORY_ORDER = "ORDER BY benchmark, model, source, table_version, setting, first_observed_at, model_raw, score"


@lru_cache(maxsize=1)
def running_best_sql() -> str:
    """The running-best history query, owned by analysis/ with the dating rule (storage executes it)."""
    return resources.files("analysis").joinpath(RUNNING_BEST_SQL).read_text(encoding="utf-8")


def read_score_history(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Every result ever published: one row per (source, benchmark, model_raw, setting, score).

    A result is a value a page showed for one of its rows; a re-submission or a re-run under the
    same name is a new result when its score differs. Each carries its own dates, never those of
    another result of the same model: `evaluated_at` as the page stated it on the result's first
    appearance, and `first_observed_at`, the first snapshot that showed it (an upper bound of
    when it was achieved). `observed_at` is the same first observation. Identity columns
    (model, variant, population, underlying, model_raw) come from registry.identity.
    """
    df = con.execute(f"{_HISTORY_ROWS} {_HISTORY_ORDER}").df()
    return naive_utc_columns(df, "evaluated_at", "first_observed_at", "observed_at")


def read_running_best_history(con: duckdb.DuckDBPyConnection, release_dates: pd.DataFrame,
                              lower_is_better: list[str], benchmarks: list[str] | None = None, *,
                              keep: bool = False, reuse: bool = False) -> pd.DataFrame:
    """The rows of `read_score_history` that can change a running top k or a frontier, its columns
    and each row's date.

    Most stored rows re-observe a model at a score no better than one it had earlier; they
    never enter a running top k (analysis.topk_scan._topk_scan skips them) and never move a
    frontier. The query and its dating rule are analysis/running_best_history.sql (a result's own
    evaluation date, else its first observation raised to `release_dates`' release of its model
    where that is later; each row comes with its `date`, `date_source`, `release_date` and
    `date_conflict`); a row is kept when, within its table (benchmark, source, table_version), metric, population and model, no row
    of a strictly earlier date has a score at least as good (at least as low for a metric in
    `lower_is_better`). Rows lacking a score, model or date are kept as they are (the analysis
    reports and drops them). `benchmarks`: only those benchmarks' rows.

    `keep` (an analysis, which writes): store what was read (storage.history_kept); `reuse`: read
    each benchmark on top of its stored rows where they still hold (only the rows of its tables'
    newer snapshots are read), else whole. The same rows either way.
    """
    release = release_dates[["model", "release_date"]].astype({"release_date": "datetime64[us]"})
    frames = []
    with registered_frame(con, release) as rel, memory_limit(con):
        # narrow rows (a row id, the keys, score and dates) through the windows; the kept rows'
        # other columns are fetched by row id at the end; one range of benchmarks at a time
        whole = _running_best(rel)
        chunks = benchmark_chunks(con, benchmarks=benchmarks)
        if keep or reuse:
            # one transaction: the kept rows and their basis describe the same rows (and DuckDB
            # writes a large insert's row groups straight to the file, not through its log)
            with transaction(con):
                frames = _read_kept(con, chunks, rel, lower_is_better, whole, reuse=reuse, keep=keep)
        else:
            frames = [con.execute(whole, [chunk, list(lower_is_better), chunk]).df().pipe(shared_strings)
                      for chunk in chunks]
        if not frames:          # no benchmark: the same columns, no row
            frames.append(con.execute(whole, [[""], list(lower_is_better), [""]]).df())
    df = pd.concat(frames, ignore_index=True)
    return naive_utc_columns(df, "evaluated_at", "first_observed_at", "observed_at", "release_date", "date")


def _running_best(releases: str, basis: str | None = None) -> str:
    """The history query: whole, or (`basis`, a registered frame of the tables' stored basis) on
    top of their kept rows (analysis/running_best_history.sql says how)."""
    if basis is None:
        parts = dict(basis_join="", only_new="", context="", stored="")
    else:
        same_table = (f"{{t}}.source = b.source AND {{t}}.benchmark = b.benchmark "
                      f"AND coalesce({{t}}.table_version, '') = b.table_version")
        # only_new: a newer row whose result (the first CTE's partition key) an earlier usable row
        # showed is not a first observation; the same key as that partition, tested on its rows
        parts = dict(
            basis_join=f"JOIN {basis} b ON {same_table.format(t='sc')} AND sc.snapshot_id > b.max_snapshot_id",
            only_new=("AND NOT EXISTS (SELECT 1 FROM scores o JOIN snapshots osn ON osn.id = o.snapshot_id "
                      "WHERE o.snapshot_id <= b.max_snapshot_id AND o.source = sc.source AND o.benchmark = sc.benchmark "
                      "AND coalesce(o.table_version, '') = coalesce(sc.table_version, '') "
                      "AND o.model_raw IS NOT DISTINCT FROM sc.model_raw AND o.setting IS NOT DISTINCT FROM sc.setting "
                      "AND o.score IS NOT DISTINCT FROM sc.score AND o.excluded_reason = '' "
                      "AND (osn.status IS DISTINCT FROM 'held' OR NOT coalesce(list_contains(osn.held_tables, 'scores' || chr(31) "
                      "|| o.benchmark || chr(31) || coalesce(o.table_version, '')), true)) "
                      "AND NOT coalesce(o.is_reference, false))"),
            context=("UNION ALL BY NAME SELECT h.benchmark, h.source, h.table_version AS _tv, h.model, h.metric, "
                     "coalesce(h.population, 'models') AS _pop, h.score, h.date AS _date, "
                     "h.score IS NOT NULL AND NOT isnan(h.score) AS _scored, true AS _context "
                     f"FROM history_kept h JOIN {basis} b ON {same_table.format(t='h')}"),
            stored=f"UNION ALL BY NAME SELECT h.* FROM history_kept h JOIN {basis} b ON {same_table.format(t='h')}")
    return running_best_sql().format(releases=releases, order=_HISTORY_ORDER, **parts)


def _read_kept(con: duckdb.DuckDBPyConnection, chunks: list[list[str]], rel: str, lower_is_better: list[str],
               whole: str, *, reuse: bool, keep: bool) -> list[pd.DataFrame]:
    """`read_running_best_history`'s ranges of benchmarks with the stored kept rows: each benchmark
    read on top of them where they hold (`reuse`), else whole; stored again (`keep`)."""
    lower = list(lower_is_better)
    everything = [b for chunk in chunks for b in chunk]
    rule = kept.rule_digest(running_best_sql(), lower)
    basis = kept.stored_basis(con, everything, rule) if reuse and everything else None
    reusing = basis is not None and len(basis) > 0
    # each table's rows now, in one scan (the basis to store; with the stored one, whether it holds)
    inputs = kept.table_inputs(con, everything, rel, basis if reusing else None) \
        if everything and (keep or reusing) else None
    on_kept = kept.reusable_benchmarks(basis, inputs) if reusing else set()
    frames = []
    for chunk in chunks:
        parts = []
        ours = sorted(set(chunk) & on_kept)
        if ours:
            assert basis is not None            # on_kept comes from it
            held_basis = basis[basis["benchmark"].isin(ours)]
            with registered_frame(con, held_basis[[*kept.TABLE_KEYS, "max_snapshot_id"]]) as b:
                read = con.execute(_running_best(rel, b), [ours, lower, ours]).df()
            held = kept.later_rows_dated_after(read, held_basis)
            if held != set(ours):
                log.info("[saturation] history of %d benchmark(s) read whole: a newer row is dated among the "
                         "earlier ones", len(set(ours) - held))
            ours = sorted(held)
            read = read[read["benchmark"].isin(held)]
            if keep and len(read):
                kept.add(con, kept.later_rows(read, held_basis[held_basis["benchmark"].isin(held)]))
            parts.append(read)
        rest = [b for b in chunk if b not in ours]
        if rest and keep:       # read whole into the kept rows (inside DuckDB), then from them
            con.execute("DELETE FROM history_kept WHERE list_contains(?, benchmark)", [rest])
            con.execute(f"INSERT INTO history_kept BY NAME {whole}", [rest, lower, rest])
            parts.append(con.execute(f"SELECT * FROM history_kept WHERE list_contains(?, benchmark) "
                                     f"{_HISTORY_ORDER}", [rest]).df())
        elif rest:
            parts.append(con.execute(whole, [rest, lower, rest]).df())
        # each benchmark's rows come from one read, in its order; the reads' rows in benchmark order
        # (byte order, as DuckDB orders text), as one read would give them
        df = pd.concat(parts, ignore_index=True).sort_values("benchmark", kind="stable", ignore_index=True) \
            if len(parts) > 1 else parts[0]
        frames.append(df.pipe(shared_strings))
    if keep and inputs is not None:
        kept.store_basis(con, everything, inputs, rule, utcnow())
    return frames


def read_table_spans(con: duckdb.DuckDBPyConnection, benchmarks: list[str] | None = None) -> pd.DataFrame:
    """Per stored (benchmark, source, table_version): its usable rows' first and last
    observation and their models (each model once per row set), for `benchmark_tables`
    (`benchmarks`: only those)."""
    df = con.execute("""
        SELECT sc.benchmark, sc.source, coalesce(sc.table_version, '') AS table_version, sc.model,
               min(sn.observed_at) AS first_observed_at, max(sn.observed_at) AS last_observed_at,
               min(coalesce(sc.evaluated_at, sn.observed_at)) AS first_dated_at,
               max(coalesce(sc.evaluated_at, sn.observed_at)) AS last_dated_at
        FROM scores sc JOIN snapshots sn ON sn.id = sc.snapshot_id
        WHERE sc.excluded_reason = '' AND NOT coalesce(sc.is_reference, false)
          AND (sn.status IS DISTINCT FROM 'held' OR NOT coalesce(list_contains(sn.held_tables, 'scores' || chr(31) || sc.benchmark || chr(31) || coalesce(sc.table_version, '')), true))
          AND (? IS NULL OR list_contains(?, sc.benchmark))
        GROUP BY ALL ORDER BY ALL""", [benchmarks, benchmarks]).df()
    return naive_utc_columns(df, "first_observed_at", "last_observed_at", "first_dated_at", "last_dated_at")


def read_saturation(con: duckdb.DuckDBPyConnection, *, scope: str | None = "all", k: int | None = None,
                    alpha: float | None = None) -> pd.DataFrame:
    """The snapshot-level S_index series of every table (for the bin state machine), oldest first;
    `scope=None`: every scope, one after the other in scope order (one read, not one per scope).

    Rows computed before migration 018 across the sources of a benchmark (source
    'pooled-legacy') are not a table's series and are left out."""
    df = con.execute("""SELECT * FROM saturation
                        WHERE (? IS NULL OR scope = ?) AND (? IS NULL OR k = ?) AND (? IS NULL OR alpha = ?)
                          AND source IS DISTINCT FROM 'pooled-legacy'
                        ORDER BY scope, benchmark, table_id, as_of""", [scope, scope, k, k, alpha, alpha]).df()
    return naive_utc_columns(df, "as_of", "run_at")


def read_saturation_latest(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    return naive_utc_columns(con.execute("SELECT * FROM saturation_latest ORDER BY benchmark, table_id").df(),
                             "as_of", "run_at")


def read_saturation_history(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    return naive_utc_columns(con.execute("SELECT * FROM saturation_history ORDER BY benchmark, table_id, as_of").df(),
                             "as_of")


def read_trends(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    return con.execute("SELECT * FROM trends ORDER BY benchmark, table_id, k").df()


def read_benchmark_tables(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Every leaderboard table of the last analysis (table `benchmark_tables`), primary first."""
    return naive_utc_columns(con.execute("""SELECT * FROM benchmark_tables
                                            ORDER BY benchmark, is_primary DESC, table_id""").df(),
                             "first_observed_at", "last_observed_at", "first_dated_at", "last_dated_at", "run_at")


# --- writes ------------------------------------------------------------------------------

def stamped_frame(df: pd.DataFrame, columns: list[str], run_at: datetime, where: str) -> pd.DataFrame:
    """`df`'s declared columns (all required: a missing one is named) stamped with the run's time."""
    missing = set(columns) - set(df.columns)
    if missing:
        raise ValueError(f"[storage] {where}: frame lacks column(s) {sorted(missing)}")
    out = df[columns].copy()
    out["run_at"] = run_at
    return out


def _upsert_saturation(con: duckdb.DuckDBPyConnection, sat: pd.DataFrame) -> int:
    """Replace snapshot-level rows on their key (table_id, as_of, scope, population, k, alpha); returns new keys."""
    with registered_frame(con, sat) as rel:
        new = (con.execute(f"""SELECT count(*) FROM {rel} s WHERE NOT EXISTS (
                                  SELECT 1 FROM saturation t WHERE t.table_id = s.table_id AND t.as_of = s.as_of
                                  AND t.scope = s.scope AND t.population = s.population AND t.k = s.k
                                  AND t.alpha = s.alpha)""").fetchone() or (0,))[0]
    if len(sat):
        insert_frame(con, "saturation", sat, or_replace=["table_id", "as_of", "scope", "population", "k", "alpha"])
    return int(new)


# the derived tables a relation replaces unit by unit (jobs/relations): table -> its columns and
# the columns of the slice one analysis owns (its parameters: the rows of another k are another's)
UNIT_TABLES: dict[str, tuple[list[str], tuple[str, ...]]] = {
    "saturation_trajectory": (TRAJECTORY_COLUMNS, ("scope", "k", "alpha")),
    "frontier": (FRONTIER_COLUMNS, ("k",)),
    "trends": (TRENDS_COLUMNS, ("k",)),
}


def replace_units(con: duckdb.DuckDBPyConnection, table: str, rows: pd.DataFrame, *, where: dict[str, object],
                  units: list[str] | None, run_at: datetime) -> int:
    """Replace the rows of the leaderboard tables `units` (None: every table) of `table`'s slice
    `where` (its parameters: UNIT_TABLES) by `rows`, stamped with `run_at`, in one transaction: a
    unit among them without rows now loses its rows; the other units' rows stay. Returns rows written."""
    columns, keys = UNIT_TABLES[table]
    if set(where) != set(keys):
        raise ValueError(f"[storage] {table}: a slice is given by {list(keys)}, not {sorted(where)}")
    frame = stamped_frame(rows, columns, run_at, table)
    clauses = " AND ".join(f"{quote_ident(c)} = ?" for c in keys)
    params = [where[c] for c in keys]
    with transaction(con):
        if units is None:
            con.execute(f"DELETE FROM {quote_ident(table)} WHERE {clauses}", params)
        else:
            con.execute(f"DELETE FROM {quote_ident(table)} WHERE {clauses} AND list_contains(?, table_id)",
                        [*params, sorted(units)])
        if len(frame):
            insert_frame(con, table, frame)
    log.info("[saturation] %s: %d row(s) of %s table(s) stored", table, len(frame),
             "every" if units is None else len(units))
    return len(frame)


def store_benchmark_tables(con: duckdb.DuckDBPyConnection, tables: pd.DataFrame) -> None:
    """Replace `benchmark_tables` as a whole by `tables` (BENCHMARK_TABLES_COLUMNS and `run_at`:
    kept rows keep theirs)."""
    tabs = tables[[*BENCHMARK_TABLES_COLUMNS, "run_at"]].copy()
    tabs["run_at"] = pd.to_datetime(tabs["run_at"], utc=True).dt.tz_localize(None)   # stored and new rows: naive UTC
    with transaction(con):
        con.execute("DELETE FROM benchmark_tables")
        if len(tabs):
            insert_frame(con, "benchmark_tables", tabs)


def move_trends_to_day(con: duckdb.DuckDBPyConnection, day: pd.DataFrame) -> int:
    """Write the day-relative columns of stored trend rows (`day`: table_id, k, as_of, stale_days,
    computed by analysis.trends.at_day) back onto their rows. Returns the rows moved."""
    if not len(day):
        return 0
    day = day[["table_id", "k", "as_of", "stale_days"]].copy()
    day["as_of"] = pd.to_datetime(day["as_of"]).astype("datetime64[us]")
    with registered_frame(con, day) as rel, transaction(con):
        con.execute(f"""UPDATE trends t SET as_of = CAST(f.as_of AS TIMESTAMPTZ), stale_days = f.stale_days
                        FROM {rel} f WHERE t.table_id = f.table_id AND t.k = f.k""")
    log.info("[saturation] %d trend row(s) moved to the day", len(day))
    return len(day)


def store_scope_saturation(con: duckdb.DuckDBPyConnection, saturation: pd.DataFrame, *, scope: str,
                           run_at: datetime) -> int:
    """Snapshot-level saturation rows of one scope (`all`, `post_cutoff`), replaced on their key
    (table_id, as_of, scope, population, k, alpha): a history, so rows of other days stay.
    Returns the number of new keys."""
    missing = set(SATURATION_COLUMNS) - set(saturation.columns)
    if missing:
        raise ValueError(f"[storage] saturation ({scope}): frame lacks column(s) {sorted(missing)}")
    sat = saturation[SATURATION_COLUMNS].copy()
    if (sat["scope"] != scope).any():
        raise ValueError(f"[storage] saturation: rows of another scope than {scope!r}")
    if sat["as_of"].isna().any():
        raise ValueError(f"[storage] saturation ({scope}): rows without as_of cannot be keyed")
    sat["run_at"] = run_at
    with transaction(con):
        new = _upsert_saturation(con, sat)
    log.info("[saturation] stored %d %s row(s) (%d new)", len(sat), scope, new)
    return int(new)

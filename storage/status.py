"""What is in the database, for `benchwatch status`: sources, counts, unknown names."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import duckdb

from storage.db import quote_ident, schema_version

if TYPE_CHECKING:
    import pandas as pd


class Table(NamedTuple):
    """Rows for people (`benchwatch status` prints them without importing pandas): column names
    and tuples; times are naive UTC (`::TIMESTAMP` under the session's UTC: no time-zone objects)."""

    columns: list[str]
    rows: list[tuple]


def _table(con: duckdb.DuckDBPyConnection, sql: str) -> Table:
    """No bound parameters here: DuckDB imports pandas to bind any (half a second of `status`)."""
    result = con.execute(sql)
    return Table([d[0] for d in result.description], result.fetchall())


def placeholder_not_tested(con: duckdb.DuckDBPyConnection) -> Table:
    """Models the newest contamination analysis could not test because their only cutoff is a
    placeholder date (view contamination_not_tested, migration 022), with the reason."""
    return _table(con, """SELECT signal, benchmark, source, model, reason FROM contamination_not_tested
                          WHERE cutoff_trust = 'placeholder' ORDER BY signal, source, benchmark, model""")


def source_status(con: duckdb.DuckDBPyConnection) -> Table:
    """Per source: last fetch attempt and outcome, last new snapshot, snapshot and score counts."""
    return _table(con, """
        WITH f AS (
            SELECT source, max(started_at) AS last_fetch, arg_max(status, started_at) AS last_fetch_status,
                   arg_max(error, started_at) AS last_error
            FROM fetches GROUP BY source),
        s AS (
            SELECT source, count(*) AS snapshots, count(*) FILTER (WHERE status = 'held') AS held,
                   max(first_seen) AS last_new_snapshot, max(observed_at) AS newest_observed
            FROM snapshots GROUP BY source),
        c AS (SELECT source, count(*) AS scores FROM scores GROUP BY source),
        i AS (SELECT source, count(*) AS item_results FROM item_results GROUP BY source)
        SELECT coalesce(s.source, f.source) AS source, s.snapshots, s.held,
               s.newest_observed::TIMESTAMP AS newest_observed, s.last_new_snapshot::TIMESTAMP AS last_new_snapshot,
               f.last_fetch::TIMESTAMP AS last_fetch, f.last_fetch_status, f.last_error,
               coalesce(c.scores, 0) AS scores, coalesce(i.item_results, 0) AS item_results
        FROM s FULL JOIN f ON f.source = s.source
        LEFT JOIN c ON c.source = coalesce(s.source, f.source)
        LEFT JOIN i ON i.source = coalesce(s.source, f.source)
        ORDER BY source""")


_HELD_SQL = """
        WITH usable AS (
            SELECT source, max(observed_at) AS newest_usable FROM snapshots
            WHERE status IS DISTINCT FROM 'held' GROUP BY source)
        SELECT sn.id AS snapshot_id, sn.source, sn.observed_at, sn.first_seen, sn.n_scores, sn.n_items,
               sn.held_reason, (u.newest_usable IS NULL OR sn.observed_at >= u.newest_usable) AS pending
        FROM snapshots sn LEFT JOIN usable u USING (source)
        WHERE sn.status = 'held'"""
_HELD_ORDER = " ORDER BY source, observed_at, snapshot_id"


def held_snapshots(con: duckdb.DuckDBPyConnection, *, pending_only: bool = False) -> pd.DataFrame:
    """Snapshots held by the shrink guard: id, source, observed_at, first_seen, n_scores, held_reason, pending.

    `pending` = newer than every usable snapshot of its source, i.e. it would be the latest if it
    were released (an older held snapshot is already superseded and only kept for the record).
    """
    df = con.execute(_HELD_SQL + _HELD_ORDER).df()
    return df[df["pending"]].reset_index(drop=True) if pending_only else df


def held_table(con: duckdb.DuckDBPyConnection) -> Table:
    """`held_snapshots` for people (every held snapshot, times as naive UTC)."""
    return _table(con, "SELECT * REPLACE (observed_at::TIMESTAMP AS observed_at, first_seen::TIMESTAMP AS first_seen) "
                       f"FROM ({_HELD_SQL}){_HELD_ORDER}")


# Unknown names listed by `status` (the counts cover them all).
UNKNOWN_ROWS = 50
_UNKNOWN_SQL = """
        WITH u AS (
            SELECT 'benchmark' AS kind, benchmark AS name, list(DISTINCT source) AS sources, count(*) AS rows
            FROM scores WHERE benchmark NOT IN (SELECT id FROM benchmarks) GROUP BY benchmark
            UNION ALL
            SELECT 'model', model, list(DISTINCT source), count(*)
            FROM scores WHERE model NOT IN (SELECT id FROM models) GROUP BY model)
        SELECT *, count(*) FILTER (WHERE kind = 'benchmark') OVER () AS n_benchmarks,
               count(*) FILTER (WHERE kind = 'model') OVER () AS n_models
        FROM u ORDER BY kind, rows DESC, name LIMIT """


def unknown(con: duckdb.DuckDBPyConnection, limit: int = UNKNOWN_ROWS) -> tuple[Table, dict[str, int]]:
    """Benchmark and model names in the data that no registry entry or alias maps (add an alias):
    the first `limit` rows (at least one: a row carries the counts), and how many of each kind
    there are in all — one statement (window counts, taken before the LIMIT), as `status` pays per
    statement at start-up."""
    result = con.execute(_UNKNOWN_SQL + str(max(int(limit), 1)))   # an int literal: see _table
    columns = [d[0] for d in result.description][:-2]
    rows = result.fetchall()
    counts = {"benchmarks": int(rows[0][-2]), "models": int(rows[0][-1])} if rows else {"benchmarks": 0, "models": 0}
    return Table(columns, [r[:-2] for r in rows]), counts


def table_counts(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    names = [r[0] for r in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() ORDER BY table_name").fetchall()]
    if not names:
        return {}
    counts = " UNION ALL ".join(f"SELECT {i} AS i, count(*) AS n FROM {quote_ident(n)}" for i, n in enumerate(names))
    by_index = dict(con.execute(counts).fetchall())     # one statement, not one per table
    return {n: int(by_index[i]) for i, n in enumerate(names)}


__all__ = ["Table", "source_status", "held_snapshots", "held_table", "unknown", "table_counts", "schema_version"]

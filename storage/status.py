"""What is in the database, for `benchwatch status`: sources, counts, unknown names."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from storage.db import quote_ident, schema_version
from storage.engine import duckdb

if TYPE_CHECKING:
    import pandas as pd


class Table(NamedTuple):
    """Rows for people (`benchwatch status` prints them without importing pandas): column names
    and tuples; times are naive UTC (`::TIMESTAMP` under the session's UTC: no time-zone objects)."""

    columns: list[str]
    rows: list[tuple]


def _table(con: duckdb.DuckDBPyConnection, sql: str) -> Table:
    """No bound parameters here: DuckDB's client imports pandas to bind any, and `status` loads pandas
    only to read rows that need it (the stored disagreements)."""
    result = con.execute(sql)
    return Table([d[0] for d in result.description], result.fetchall())


def unread_parts(con: duckdb.DuckDBPyConnection) -> Table:
    """Parts of each source's newest snapshot that were not read: a zip's members without a
    declaration (`meta.undeclared`) and declared members that failed (`meta.failed`, a declared
    column missing), as their parsers recorded them. Empty for every source that records none."""
    return _table(con, """
        WITH newest AS (SELECT source, max(id) AS snapshot_id FROM snapshots GROUP BY source),
        parts AS (
            SELECT s.source, s.id AS snapshot_id,
                   CAST(json_extract(s.meta, '$.undeclared') AS VARCHAR[]) AS undeclared,
                   CAST(json_extract(s.meta, '$.failed') AS VARCHAR[]) AS failed
            FROM snapshots s JOIN newest n ON n.source = s.source AND n.snapshot_id = s.id)
        SELECT source, snapshot_id, 'undeclared' AS kind, array_to_string(undeclared, ', ') AS names FROM parts
        WHERE len(coalesce(undeclared, [])) > 0
        UNION ALL
        SELECT source, snapshot_id, 'failed' AS kind, array_to_string(failed, ', ') AS names FROM parts
        WHERE len(coalesce(failed, [])) > 0
        ORDER BY source, kind""")


def placeholder_not_tested(con: duckdb.DuckDBPyConnection) -> Table:
    """Models the newest contamination analysis could not test because their only cutoff is a
    placeholder date (view contamination_not_tested, migration 022), with the reason."""
    return _table(con, """SELECT signal, benchmark, source, model, reason FROM contamination_not_tested
                          WHERE cutoff_trust = 'placeholder' ORDER BY signal, source, benchmark, model""")


def source_status(con: duckdb.DuckDBPyConnection) -> Table:
    """Per source: last fetch attempt and outcome (its error only: NULL once a later fetch succeeded), last
    new snapshot, snapshot and score counts."""
    return _table(con, """
        WITH f AS (
            SELECT source, max(started_at) AS last_fetch, arg_max(status, started_at) AS last_fetch_status,
                   arg_max_null(error, started_at) AS last_error
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
# From this many score and item rows on, `status` counts the unknown names per (name, source)
# before it looks them up in the registry: a per-row filter is slow on a history of millions of
# rows, where aggregating first wins.
LARGE_ROWS = 1_000_000

# The model name of a score row a person could alias: a model run's model; for an agent system
# (population `systems`, never a registry model) the one model it runs on (`underlying`; NULL
# when it names none or several, so the row names no model to alias).
# An entry the source marks adversarial or dev (`excluded_reason`) names no model to alias: NULL.
_MODEL_NAME = ("CASE WHEN excluded_reason <> '' THEN NULL "
               "WHEN population IS DISTINCT FROM 'systems' THEN model ELSE underlying END")
# The names the sources state facts about (view learned_models: not registry ids): learned,
# counted apart from the names nothing states anything about. A row's model is stated when its
# name (as identified) or the page's own name is (model_dates keeps the page's name: a statement
# about `fireworks/kimi-k2p5` is one about the row identified as `kimi-k2p5`).
# Names compare as the registry compares them (`registry.alias_key`: case, outer and repeated
# spaces; SQL's lower for casefold), nothing looser: on the grouped names, not per row.
# A stated name written as a route `<maker>/<name>` (openrouter's `openai/gpt-5.4-mini`, a Hugging
# Face repo id `Qwen/Qwen3-32B`) states facts about the bare `<name>` too (the part after the
# first `/`): the same name under its maker, never a looser match (tests/integration/test_learned_names.py).
_KEY = "lower(regexp_replace(trim({0}), '\\s+', ' ', 'g'))"
_ROUTE_TAIL = "regexp_extract(model_raw, '^[^/]+/(.+)$', 1)"
_STATED = (f"(SELECT {_KEY.format('model')} FROM model_dates WHERE source <> 'registry' "
           f"UNION SELECT {_KEY.format('model_raw')} FROM model_dates WHERE source <> 'registry' "
           f"UNION SELECT {_KEY.format(_ROUTE_TAIL)} FROM model_dates "
           f"WHERE source <> 'registry' AND model_raw LIKE '%_/_%')")
_STATED_RAW = "bool_or(model_raw IN (SELECT model_raw FROM model_dates WHERE source <> 'registry'))"
# Per row: the names no registry entry maps, then grouped (few rows: the cheapest plan to start).
_UNKNOWN_BY_ROW = f"""
            SELECT 'benchmark' AS kind, benchmark AS name, list(DISTINCT source ORDER BY source) AS sources,
                   count(*) AS rows, false AS stated
            FROM scores WHERE benchmark NOT IN (SELECT id FROM benchmarks) GROUP BY benchmark
            UNION ALL
            SELECT 'model', {_MODEL_NAME} AS m, list(DISTINCT source ORDER BY source), count(*), {_STATED_RAW}
            FROM scores WHERE {_MODEL_NAME} NOT IN (SELECT id FROM models) GROUP BY m"""
# The same rows, from one pass that counts rows per (benchmark, source) and (model, source): the
# registry filter and the source lists then see thousands of groups, not millions of rows.
_UNKNOWN_BY_GROUP = """
            SELECT 'benchmark' AS kind, benchmark AS name, list(source ORDER BY source) AS sources,
                   sum(n)::BIGINT AS rows, false AS stated
            FROM g WHERE model IS NULL AND benchmark NOT IN (SELECT id FROM benchmarks) GROUP BY benchmark
            UNION ALL
            SELECT 'model', model, list(source ORDER BY source), sum(n)::BIGINT, bool_or(stated)
            FROM g WHERE benchmark IS NULL AND model NOT IN (SELECT id FROM models) GROUP BY model"""
_UNKNOWN_SQL = """
        WITH {groups}a AS ({names})
        , u AS (SELECT kind, name, sources, rows FROM a
                WHERE kind = 'benchmark' OR NOT (stated OR """ + _KEY.format("name") + " IN " + _STATED + """))
        , n AS (
            SELECT count(*) FILTER (WHERE kind = 'benchmark') AS n_benchmarks,
                   count(*) FILTER (WHERE kind = 'model') AS n_models,
                   (SELECT count(*) FROM a WHERE kind = 'model') - count(*) FILTER (WHERE kind = 'model')
                       AS n_learned FROM u)
        SELECT u.*, n.n_benchmarks, n.n_models, n.n_learned
        FROM n LEFT JOIN u ON true ORDER BY kind, rows DESC, name LIMIT {limit}"""
_GROUPS = f"""g AS (
            SELECT benchmark, {_MODEL_NAME} AS model, source, count(*) AS n, {_STATED_RAW} AS stated FROM scores
            GROUP BY GROUPING SETS ((benchmark, source), ({_MODEL_NAME}, source))),
        """


def is_large(tables: dict[str, int]) -> bool:
    """A history big enough (`LARGE_ROWS`) for the plans of large scans (`counts_and_version`'s counts)."""
    return tables.get("scores", 0) + tables.get("item_results", 0) >= LARGE_ROWS


def unknown(con: duckdb.DuckDBPyConnection, limit: int = UNKNOWN_ROWS, *,
            large: bool = False) -> tuple[Table, dict[str, int]]:
    """Benchmark and model names in the data that no registry entry or alias maps and (models) no
    source states a fact about (add an alias or a registry row): the first `limit` rows (at least one: a row carries the counts), and how many of each kind
    there are in all, with `learned`: the model names a source states facts about (view
    learned_models), not listed — one statement (the counts joined onto every row, and onto one empty row when
    nothing is unknown), as `status` pays per statement at start-up. `large` (`is_large`): the
    rows are counted per name and source first (same result). Not window counts: DuckDB 1.5
    fails now and then ("index 0 within vector of size 0") on a filtered count() OVER () under a
    LIMIT."""
    sql = _UNKNOWN_SQL.format(groups=_GROUPS if large else "", names=_UNKNOWN_BY_GROUP if large else _UNKNOWN_BY_ROW,
                              limit=max(int(limit), 1))   # an int literal: see _table
    result = con.execute(sql)
    columns = [d[0] for d in result.description][:-3]
    rows = result.fetchall()           # never empty: `n` has one row
    counts = {"benchmarks": int(rows[0][-3]), "models": int(rows[0][-2]), "learned": int(rows[0][-1])}
    return Table(columns, [r[:-3] for r in rows if r[0] is not None]), counts


def table_counts(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    return counts_and_version(con)[1]


def counts_and_version(con: duckdb.DuckDBPyConnection) -> tuple[int, dict[str, int]]:
    """The schema version and the row count of every table: two statements (the names, then one
    count per table with the version beside them), as `status` pays per statement at start-up."""
    names = [r[0] for r in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() ORDER BY table_name").fetchall()]
    if "schema_migrations" not in names:
        return schema_version(con), {}
    counts = " UNION ALL ".join(["SELECT -1 AS i, coalesce(max(version), 0) AS n FROM schema_migrations"]
                                + [f"SELECT {i} AS i, count(*) AS n FROM {quote_ident(n)}" for i, n in enumerate(names)])
    by_index = dict(con.execute(counts).fetchall())     # one statement, not one per table
    return int(by_index[-1]), {n: int(by_index[i]) for i, n in enumerate(names)}


_SIZE_SQL = """
    WITH se AS (
        SELECT 'stderr' AS basis, source, benchmark, {version} AS table_version, score, stderr,
               NULL::BIGINT AS items
        FROM latest_scores
        WHERE metric = 'proportion' AND stderr > 0 {not_reference}),
    it AS (
        SELECT 'items' AS basis, source, benchmark, '' AS table_version, NULL::DOUBLE AS score,
               NULL::DOUBLE AS stderr, count(DISTINCT item_id) AS items
        FROM latest_item_results GROUP BY source, benchmark, model)
    SELECT x.basis, x.source, x.benchmark, x.table_version, x.score, x.stderr, x.items, b.n_items AS registry_n
    FROM (SELECT * FROM se UNION ALL SELECT * FROM it) x JOIN benchmarks b ON b.id = x.benchmark
    WHERE b.n_items IS NOT NULL"""


def size_rows(con: duckdb.DuckDBPyConnection) -> list[tuple]:
    """What `analysis.sizes.size_checks` needs, in one statement: each newest proportion row with a
    standard error (reference rows left out) and each model's distinct item count, with the
    registry's n. A file from before migration 023 (no table_version / is_reference in the view)
    is read without them."""
    try:
        return con.execute(_SIZE_SQL.format(version="coalesce(table_version, '')",
                                            not_reference="AND NOT coalesce(is_reference, false)")).fetchall()
    except duckdb.BinderException:
        return con.execute(_SIZE_SQL.format(version="''", not_reference="")).fetchall()


_DATES_SQL = """
        WITH latest AS (SELECT DISTINCT model FROM latest_scores WHERE population IS DISTINCT FROM 'systems'),
        dated AS (SELECT model, list(DISTINCT source ORDER BY source) AS sources FROM model_dates
                  WHERE release_date IS NOT NULL GROUP BY model)
        SELECT count(*) AS models, count(d.model) AS dated,
               count(*) FILTER (WHERE list_contains(d.sources, 'registry')) AS in_registry
        FROM latest l LEFT JOIN dated d USING (model)"""


def release_date_coverage(con: duckdb.DuckDBPyConnection) -> tuple[int, int, int]:
    """(models with a latest result, of them with a release date from any source, from the registry).
    Agent systems are left out: a system has no release date, its models do."""
    models, dated, registry = con.execute(_DATES_SQL).fetchone() or (0, 0, 0)
    return int(models), int(dated), int(registry)


# The one registry line that would give a table without S its index, or why there is none.
_INDEX_SQL = """
        WITH t AS (
            SELECT s.table_id, s.benchmark, s.population, s.s_index, s.scale, s.reason, s.n_models,
                   coalesce(s.metric, b.metric_kind) AS metric, b.notes, b.id IS NOT NULL AS registered
            FROM saturation_latest s LEFT JOIN benchmarks b ON b.id = s.benchmark
            WHERE s.scope = 'all' AND s.population <> 'systems_per_model')
        SELECT table_id, benchmark, population, metric, s_index IS NOT NULL AS has_s, scale,
               CASE WHEN s_index IS NOT NULL THEN NULL
                    WHEN metric = 'cost_usd' THEN 'no index: a cost, not a score with sampling noise'
                         || CASE WHEN registered THEN '' ELSE ' (add ' || benchmark || ' to registry/benchmarks.csv to name it)' END
                    WHEN reason LIKE 'no index:%' THEN reason
                    WHEN n_models < 5 AND reason LIKE 'only %' THEN reason
                    WHEN notes LIKE '%No index:%' THEN 'no index: ' || trim(split_part(split_part(notes, 'No index:', 2), '.', 1))
                    WHEN NOT registered AND metric = 'proportion'
                         THEN 'add ' || benchmark || ' to registry/benchmarks.csv (with n_items)'
                    WHEN NOT registered THEN 'add ' || benchmark || ' to registry/benchmarks.csv'
                    WHEN metric = 'proportion' THEN 'add n_items for ' || benchmark || ' in registry/benchmarks.csv'
                    ELSE 'the board publishes no stderr or interval for its ' || metric || ' scores'
               END AS action
        FROM t ORDER BY has_s, metric <> 'proportion', metric, table_id, population"""


def index_coverage(con: duckdb.DuckDBPyConnection) -> Table:
    """Per table of the newest analysis (scope all; the per-model view of systems left out): whether
    it has an S, on which scale, and for one without, the registry line that would give it one
    (`add n_items for X in registry/benchmarks.csv`) or why none can (the registry's `No index:` note,
    too few models, no published interval)."""
    try:
        return _table(con, _INDEX_SQL)
    except duckdb.CatalogException:    # no analysis view yet (a database from before migration 002)
        return Table(["table_id", "benchmark", "population", "metric", "has_s", "scale", "action"], [])


__all__ = ["Table", "is_large", "LARGE_ROWS", "source_status", "held_snapshots", "held_table", "unknown", "table_counts", "counts_and_version",
           "schema_version", "release_date_coverage", "index_coverage", "size_rows", "unread_parts"]

"""Reads shared by the jobs, in the analysis' conventions (naive UTC datetimes).

One place owns each read, so saturation, contamination and alerts see the same latest
scores, the same registry facts and the same model-date claims; collection reads the
validators of its conditional requests here too.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from common.refs import parse_refs
from common.time import naive_utc_columns
from storage.engine import duckdb


def read_latest_scores(con: duckdb.DuckDBPyConnection, benchmarks: list[str] | None = None) -> pd.DataFrame:
    """The usable rows of each current leaderboard table's newest snapshot (view latest_scores), with
    the table version that puts each row in its leaderboard table (registry.tables), without
    reference / baseline rows (is_reference: shown in the view, never in a top k).
    `benchmarks`: only those benchmarks' rows."""
    df = con.execute("""SELECT source, benchmark, model, setting, score, metric, stderr, ci_low, ci_high, n_items,
                               snapshot_id, observed_at, model_raw, variant, population, underlying, table_version
                        FROM latest_scores WHERE NOT coalesce(is_reference, false)
                          AND (? IS NULL OR list_contains(?, benchmark))""", [benchmarks, benchmarks]).df()
    return naive_utc_columns(df, "observed_at")


def read_benchmarks(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Registry facts: size, chance level, ceiling, metric kind, dynamic, material date, references."""
    df = con.execute("""SELECT id, n_items, ceiling, chance, metric_kind, dynamic, material_date,
                               reference_benchmarks, name
                        FROM benchmarks""").df()
    df["material_date"] = pd.to_datetime(df["material_date"])
    df["reference_benchmarks"] = [parse_refs(v) for v in df["reference_benchmarks"]]
    return df


def read_model_date_claims(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Every distinct date claim (view model_cutoffs) with when it was last and first observed, so a
    source's revised claim supersedes its older one in analysis.cutoffs.resolve_model_dates (and a
    sub-day jitter keeps the first value). In one order:
    the steps of an analysis resolve the claims once (jobs.contamination.resolved_dates, keyed by
    the frame), and a view's GROUP BY returns its rows in any order."""
    df = con.execute("""SELECT model, release_date, knowledge_cutoff, provenance, source,
                               last_observed_at AS observed_at, first_observed_at
                        FROM model_cutoffs ORDER BY ALL""").df()
    return naive_utc_columns(df, "observed_at", "first_observed_at")


def read_predecessors(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """(model, predecessor) pairs of the registry, for A2 jumps over a predecessor."""
    return con.execute("""SELECT id AS model, predecessor FROM models
                          WHERE predecessor IS NOT NULL AND predecessor <> '' ORDER BY id""").df()


def previous_validators(con: duckdb.DuckDBPyConnection,
                        primaries: Mapping[str, str]) -> dict[str, dict[str, tuple[str | None, str | None]]]:
    """Per source of `primaries` ({source: primary URL}): ETag/Last-Modified of its primary URL's
    last stored response ({} when none), for a conditional GET. Aux URLs are always fetched in
    full, so a changed primary is always parsed with its aux responses. One statement for every
    source: the fetch log grows by each URL of each collection (a year of hourly ones, a quarter
    of a million rows, is a scan per statement)."""
    rows = con.execute(
        """SELECT f.source, arg_max(f.etag, f.started_at), arg_max(f.last_modified, f.started_at)
           FROM fetches f
           JOIN (SELECT unnest(?::VARCHAR[]) AS source, unnest(?::VARCHAR[]) AS url) p
             ON f.source = p.source AND f.url = p.url
           WHERE f.status = 'ok' AND f.sha256 IS NOT NULL
           GROUP BY f.source""", [list(primaries), list(primaries.values())]).fetchall() if primaries else []
    found = {source: {primaries[source]: (etag, modified)} for source, etag, modified in rows
             if (etag, modified) != (None, None)}
    return {source: found.get(source, {}) for source in primaries}


def stored_releases(con: duckdb.DuckDBPyConnection, source: str) -> set[str]:
    """The releases (`meta.release` of its snapshots, held ones included) stored for a source."""
    rows = con.execute("""SELECT DISTINCT json_extract_string(meta, '$.release') FROM snapshots
                          WHERE source = ? AND json_extract_string(meta, '$.release') IS NOT NULL""",
                       [source]).fetchall()
    return {r[0] for r in rows}


def release_misses(con: duckdb.DuckDBPyConnection, source: str, url: str) -> int:
    """In how many collections the URL of a listed release answered 404 (not published)."""
    row = con.execute("""SELECT count(DISTINCT run_id) FROM fetches
                         WHERE source = ? AND url = ? AND http_status = 404""", [source, url]).fetchone()
    return int(row[0]) if row else 0


def with_display_names(con: duckdb.DuckDBPyConnection, frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with benchmark_name (and model_name, when it has a model) from the registry,
    falling back to the id (the names the alerts and reports show)."""
    benchmarks = dict(con.execute("SELECT id, name FROM benchmarks WHERE name IS NOT NULL").fetchall())
    frame["benchmark_name"] = [benchmarks.get(b, b) for b in frame["benchmark"]]
    if "model" in frame.columns:
        models = dict(con.execute("SELECT id, name FROM models WHERE name IS NOT NULL").fetchall())
        frame["model_name"] = [models.get(m, m) for m in frame["model"]]
    return frame

"""The releases a stored release list names (a source's `release_source`, e.g. LiveBench's
changelog): read from its snapshot instead of parsing the unchanged list again."""

from __future__ import annotations

from storage.engine import duckdb


def listed_releases(con: duckdb.DuckDBPyConnection, snapshot_id: int) -> list[str]:
    """`meta.releases` of the release list's snapshot `snapshot_id`, in the order the parser gave."""
    row = con.execute("SELECT json_extract_string(meta, '$.releases[*]') FROM snapshots WHERE id = ?",
                      [snapshot_id]).fetchone()
    return [str(r) for r in (row[0] or [])] if row is not None and row[0] is not None else []

"""`benchwatch migrate --to ducklake:…`: copy a benchwatch DuckDB file into a DuckLake store."""

from __future__ import annotations

import logging

from storage import lake
from storage.db import quote_ident, transaction
from storage.engine import duckdb

log = logging.getLogger("benchwatch.storage")


def copy_file_into(con: duckdb.DuckDBPyConnection, source_path: str, *, replace: bool = False) -> dict[str, tuple[int, int]]:
    """Copy every table of a benchwatch DuckDB file into this (migrated, write-locked) lake session,
    in one transaction; returns {table: (rows in the file, rows in the lake)} after the copy.

    Every table of the file (raw blobs, history, analyses, alert state, silences, registry,
    analysis fingerprint) is listed from the file itself, so a table a later migration adds is
    copied too. Refuses a lake that already holds snapshots unless `replace`; each copied table
    is emptied first. schema_migrations and schema_files (the applied view files) are the lake's
    own; the file must be at its version.
    Data files a killed copy left uncommitted are deleted first (`delete_orphaned_files`).
    """
    if not lake.is_lake(con):
        raise lake.LakeError("copy_file_into needs a DuckLake session")
    con.execute(f"ATTACH {lake.literal(str(source_path))} AS bw_source (READ_ONLY)")
    try:
        src_version = _scalar(con, "SELECT coalesce(max(version), 0) FROM bw_source.schema_migrations")
        dst_version = _scalar(con, "SELECT coalesce(max(version), 0) FROM schema_migrations")
        if src_version != dst_version:
            raise lake.LakeError(f"{source_path} has schema version {src_version}, the lake {dst_version}: "
                                 "open the file with this benchwatch once (it migrates) and retry")
        tables = [r[0] for r in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = 'bw_source' AND schema_name = 'main' "
            "AND table_name NOT IN ('schema_migrations', 'schema_files') ORDER BY table_name").fetchall()]
        lake_tables = {r[0] for r in con.execute(
            f"SELECT table_name FROM duckdb_tables() WHERE database_name = {lake.literal(lake.CATALOG_ALIAS)}").fetchall()}
        missing = [t for t in tables if t not in lake_tables]
        if missing:
            raise lake.LakeError(f"the lake lacks table(s) {missing} of {source_path}")
        held = _scalar(con, "SELECT count(*) FROM snapshots")
        if held and not replace:
            raise lake.LakeError(f"the lake already holds {held} snapshot(s); refusing to mix histories "
                                 "(copy into an empty catalog)")
        removed = delete_orphaned_files(con)
        if removed:
            log.warning("[migrate] removed %d data file(s) an interrupted copy left behind", removed)
        with transaction(con):
            for table in tables:
                ident = quote_ident(table)
                # Emptied first: a synced lake holds registry rows, and --replace everything.
                con.execute(f"DELETE FROM {ident}")
                con.execute(f"INSERT INTO {ident} BY NAME SELECT * FROM bw_source.main.{ident}")
        counts = {}
        for table in tables:
            ident = quote_ident(table)
            counts[table] = (_scalar(con, f"SELECT count(*) FROM bw_source.main.{ident}"),
                             _scalar(con, f"SELECT count(*) FROM {ident}"))
        return counts
    finally:
        con.execute("DETACH bw_source")


def delete_orphaned_files(con: duckdb.DuckDBPyConnection) -> int:
    """Remove the data files in the store's folder that no committed snapshot references (what a
    killed copy wrote before its commit); the number removed. Safe only under the writer lock:
    no other writer can have files in flight (readers write none)."""
    rows = con.execute(f"SELECT count(*) FROM ducklake_delete_orphaned_files({lake.literal(lake.CATALOG_ALIAS)}, "
                       "cleanup_all => true)").fetchone()
    return int(rows[0]) if rows else 0


def _scalar(con: duckdb.DuckDBPyConnection, sql: str) -> int:
    row = con.execute(sql).fetchone()
    return int(row[0]) if row else 0

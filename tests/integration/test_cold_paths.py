"""The cold paths of `query` and `status` (issue 23): one DuckDB instance for a query, a refusal
before any wait, one statement for the schema check, and new files in the compact storage format."""

from __future__ import annotations

import subprocess
import sys
import time

import duckdb
import pytest

from storage import db as storage_db
from storage import views
from storage.engine import duckdb as engine
from storage.query import ReadOnlyViolation, run_query
from storage.store import open_store


@pytest.fixture
def dbpath(tmp_path) -> str:
    path = str(tmp_path / "c.duckdb")
    with storage_db.connect(path):       # migrated: the views and schema_files as a release writes them
        pass
    return path


def _counting_connects(monkeypatch) -> list[object]:
    opened: list[object] = []
    real = engine.connect      # what storage/ calls (storage.engine)

    def connect(*args, **kwargs):
        opened.append(args[0] if args else kwargs.get("database", ":memory:"))
        return real(*args, **kwargs)
    monkeypatch.setattr(engine, "connect", connect)
    return opened


def test_a_query_opens_one_duckdb_instance_and_parses_there(dbpath, monkeypatch):
    opened = _counting_connects(monkeypatch)
    frame = run_query("SELECT 41 + 1 AS n; SELECT 42 AS n", open_store(dbpath), bring_current=lambda: None)
    assert frame["n"].tolist() == [42]
    assert opened == [dbpath]            # no private parser: the statements were parsed on the file's connection


def test_a_refusal_comes_first_for_a_missing_or_locked_file(dbpath, tmp_path):
    with pytest.raises(ReadOnlyViolation):
        run_query("DROP TABLE scores", open_store(str(tmp_path / "missing.duckdb")))
    holder = subprocess.Popen([sys.executable, "-c",
                               "import duckdb, sys; c = duckdb.connect(%r); c.execute('SELECT 1'); "
                               "print('held', flush=True); sys.stdin.read()" % dbpath],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        with pytest.raises(ReadOnlyViolation):      # refused at once, not after waiting for the writer
            run_query("CREATE TEMP TABLE x AS SELECT 1", open_store(dbpath), wait=30)
        assert time.monotonic() - started < 10
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)


def _behind(dbpath) -> bool:
    con = storage_db.open_connection(dbpath, read_only=True)
    try:
        return storage_db.is_behind(con)
    finally:
        con.close()


def test_the_schema_check_sees_an_old_version_and_a_changed_view_file(dbpath):
    assert not _behind(dbpath)
    path = next(iter(views.shipped_hashes()))
    raw = duckdb.connect(dbpath)
    raw.execute("UPDATE schema_files SET sha256 = 'edited' WHERE path = ?", [path])
    raw.close()
    assert _behind(dbpath)
    raw = duckdb.connect(dbpath)
    raw.execute("UPDATE schema_files SET sha256 = ? WHERE path = ?", [views.shipped_hashes()[path], path])
    raw.execute("DELETE FROM schema_migrations WHERE version = (SELECT max(version) FROM schema_migrations)")
    raw.close()
    assert _behind(dbpath)


def test_shipped_hashes_are_those_the_views_are_applied_with():
    assert views.shipped_hashes() == {f.path: f.sha256 for f in views.files()}


def test_a_new_file_has_the_compact_storage_format_and_an_old_one_keeps_its_own(dbpath, tmp_path):
    def storage_version(path: str) -> str:
        con = duckdb.connect(path, read_only=True)
        try:
            return con.execute("SELECT tags FROM duckdb_databases() WHERE database_name = current_database()"
                               ).fetchone()[0]["storage_version"]
        finally:
            con.close()
    assert storage_version(dbpath) == f"{storage_db.NEW_FILE_STORAGE_VERSION}+"
    old = str(tmp_path / "old.duckdb")
    duckdb.connect(old).close()          # DuckDB's default format
    before = storage_version(old)
    with storage_db.connect(old):
        pass
    assert storage_version(old) == before != storage_version(dbpath)

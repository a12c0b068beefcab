"""The store's interface (storage/store.py): one Protocol, a file and a DuckLake implementation
over storage.db, and `open_store` choosing between them from a `--db` value."""

from __future__ import annotations

import pandas as pd
import pytest

from storage import db, lake
from storage.db import insert_frame
from storage.store import FileStore, LakeStore, Store, open_store


pytestmark = pytest.mark.xdist_group("servers")   # starts PostgreSQL: one server test at a time

SECRET = "s3cr3t-pw"


def _write_and_read_back(store: Store) -> list[tuple]:
    """Write one silence through a write connection, read it back through `open_current`."""
    with store.connect() as con:
        assert db.schema_version(con) == db.latest_version()       # a write connection is migrated
        insert_frame(con, "silences", pd.DataFrame([{
            "id": 1, "matchers": '{"source": "csv"}', "starts_at": pd.Timestamp("2026-01-01", tz="UTC"),
            "ends_at": pd.Timestamp("2026-01-02", tz="UTC"), "author": "t", "comment": "store",
            "created_at": pd.Timestamp("2026-01-01", tz="UTC")}]))
    con = store.open_current()
    try:
        rows = con.execute("SELECT id, comment FROM silences").fetchall()
        with pytest.raises(Exception):           # open_current is read-only
            con.execute("DELETE FROM silences")
        return rows
    finally:
        con.close()
        lake.release(con)


def test_a_file_store_writes_migrated_and_reads_read_only(tmp_path):
    path = tmp_path / "bw.duckdb"
    store = open_store(path)
    assert isinstance(store, FileStore) and isinstance(store, Store)
    assert not store.is_lake and store.location == str(path) and store.target == str(path)
    assert _write_and_read_back(store) == [(1, "store")]
    assert path.exists()


def test_a_missing_file_is_a_storage_error_for_a_reader(tmp_path):
    with pytest.raises(db.StorageError, match="does not exist"):
        open_store(tmp_path / "none.duckdb").open_current()


def test_a_lake_url_is_a_lake_store_named_without_its_password():
    store = open_store(f"ducklake:postgres:dbname=bw host=127.0.0.1 user=bw password={SECRET}")
    assert isinstance(store, LakeStore) and isinstance(store, Store) and store.is_lake
    assert "dbname=bw" in store.location and SECRET not in store.location and SECRET not in repr(store)
    with pytest.raises(lake.LakeError):
        LakeStore("ducklake:sqlite:x.db")                   # only a PostgreSQL catalog
    with pytest.raises(ValueError):
        FileStore("ducklake:postgres:dbname=bw")


def test_the_default_store_is_the_default_path(monkeypatch, tmp_path):
    monkeypatch.setenv("BENCHWATCH_DB", str(tmp_path / "env.duckdb"))
    assert open_store().location == db.default_path() == str(tmp_path / "env.duckdb")


@pytest.fixture(scope="module")
def server(lake_pg):
    return lake_pg           # the session's PostgreSQL (tests/conftest.py)


@pytest.mark.slow     # starts PostgreSQL; the file store above keeps the interface in the fast lane
def test_a_lake_store_writes_and_reads_like_a_file(server, tmp_path, monkeypatch):
    server.create_database("bw_store")
    monkeypatch.setenv(lake.DATA_PATH_ENV, str(tmp_path / "lake-data"))
    store = open_store("ducklake:postgres:" + server.conninfo("bw_store"))
    assert isinstance(store, LakeStore)
    assert _write_and_read_back(store) == _write_and_read_back(FileStore(tmp_path / "twin.duckdb"))

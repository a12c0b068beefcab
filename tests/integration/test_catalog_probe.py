"""The lost-catalog rule's probe (storage.lake.catalog_reachable), for real: a fresh connection
to a PostgreSQL that is not there fails, within its bound, and a step failing on such a lake
stops the cycle with one line (jobs.cycle.reported, cli.main.environment_failure) whatever the
error's words. A reachable catalog is tests/system/test_lake_reliability.py's (a real server)."""

from __future__ import annotations

import socket
import sys
import time

import duckdb
import pytest

from cli.main import LOST_CATALOG, environment_failure
from jobs.cycle import CycleReport, reported
from storage import lake
from storage.store import FileStore, open_store


@pytest.fixture
def closed_port():
    """A loopback port nothing listens on (refused at once)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    lake.forget_probes()
    yield port
    lake.forget_probes()


@pytest.fixture
def silent_port():
    """A loopback port that accepts connections and never answers (a hung server)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(8)
    lake.forget_probes()
    yield s.getsockname()[1]
    s.close()
    lake.forget_probes()


def _conninfo(port: int) -> str:
    return f"dbname=bw host=127.0.0.1 port={port} user=bw"


def test_a_catalog_nothing_listens_for_is_unreachable(closed_port):
    assert lake.catalog_reachable(_conninfo(closed_port)) is False


def test_without_psycopg_the_probe_goes_through_duckdbs_postgres_extension(closed_port, monkeypatch):
    pytest.importorskip("duckdb_extension_postgres")
    monkeypatch.setitem(sys.modules, "psycopg", None)       # `import psycopg` fails (a reader's install)
    assert lake.catalog_reachable(_conninfo(closed_port)) is False


def test_a_catalog_that_never_answers_is_unreachable_within_the_bound(silent_port):
    started = time.monotonic()
    assert lake.catalog_reachable(_conninfo(silent_port), timeout=2) is False
    assert time.monotonic() - started < 2 + 3        # the bound, not libpq's default of forever


NOVEL = "DuckLake: a message of a future version that no rule lists"


def test_a_store_error_on_a_lake_whose_catalog_is_gone_stops_the_cycle(closed_port):
    url = "ducklake:postgres:" + _conninfo(closed_port)
    error = duckdb.IOException(NOVEL)
    lost = lake.as_catalog_lost(url, error)       # what storage.db.connect raises from the error
    assert isinstance(lost, lake.CatalogLost) and "127.0.0.1" in str(lost)
    assert lake.as_catalog_lost(url, lost) is None                 # one already: raised as it is
    report = CycleReport([])
    with pytest.raises(lake.CatalogLost) as stopped:
        with reported(report, "analyze", open_store(url)):
            raise lost from error
    assert report.failures == []
    assert environment_failure(stopped.value) == LOST_CATALOG


def test_the_same_failure_on_a_file_is_the_steps_own(tmp_path):
    error = duckdb.IOException("server closed the connection unexpectedly")
    assert lake.as_catalog_lost(str(tmp_path / "bw.duckdb"), error) is None
    report = CycleReport([])
    store = FileStore(tmp_path / "bw.duckdb")
    with reported(report, "analyze", store, log_failure=False):
        with store.connect():
            raise error
    assert report.failures == ["analyze failed: IOException: server closed the connection unexpectedly"]


def test_a_step_that_fails_opening_a_lake_whose_catalog_is_gone_stops_the_cycle(closed_port, tmp_path, monkeypatch):
    # PostgreSQL stopped between two steps: the next step fails while opening its connection,
    # before storage.db.connect's body, and is a lost catalog all the same (one line, no traceback)
    monkeypatch.setenv(lake.DATA_PATH_ENV, str(tmp_path / "data"))
    store = open_store("ducklake:postgres:" + _conninfo(closed_port))
    report = CycleReport([])
    with pytest.raises(lake.CatalogLost) as stopped:
        with reported(report, "notify", store):
            with store.connect():
                pytest.fail("opened a lake nothing listens for")
    assert report.failures == []
    assert environment_failure(stopped.value) == LOST_CATALOG


def test_the_cli_names_a_lost_catalog_of_any_lake_the_command_uses(closed_port):
    url = "ducklake:postgres:" + _conninfo(closed_port)
    exc = duckdb.IOException(NOVEL)
    assert environment_failure(exc, stores=[url]) == LOST_CATALOG
    assert environment_failure(exc) is None                     # no lake named: a bug, as before
    assert environment_failure(KeyError("x"), stores=[url]) is None


def test_the_stores_a_command_uses_include_migrates_destination_and_the_default(monkeypatch):
    from cli.main import build_parser, stores_of
    from common import settings
    target = "ducklake:postgres:dbname=bw host=127.0.0.1"
    args = build_parser("migrate").parse_args(["migrate", "--db", "old.duckdb", "--to", target])
    assert {"old.duckdb", target} <= set(stores_of(args))
    monkeypatch.setenv(settings.DB, target)
    assert target in stores_of(build_parser("status").parse_args(["status"]))

"""When a failure means the DuckLake catalog's PostgreSQL is gone (storage.lake.catalog_lost): the
cycle stops on it with one line instead of a traceback per step; any other error is a step's own
failure, reported while the cycle goes on.

The rule asks the catalog, not the message: a store error on a lake whose catalog a fresh
connection cannot reach is a lost catalog, whatever DuckDB, DuckLake or libpq said. The probe
itself (a real connection attempt) is tested in tests/integration/test_catalog_probe.py; here it
is replaced by its answer."""

import duckdb
import pytest

from storage import lake
from storage.lake import CatalogLost, catalog_lost

LAKE = "ducklake:postgres:dbname=bw host=db.invalid user=bw"


@pytest.fixture
def probe(monkeypatch):
    """The catalog's answer to a fresh connection (True: it connects), and the probes made."""
    asked: list[str] = []
    answer = {"reachable": False}

    def reachable(conninfo, timeout=lake.CATALOG_PROBE_SECONDS):
        asked.append(conninfo)
        return answer["reachable"]

    monkeypatch.setattr(lake, "catalog_reachable", reachable)
    lake.forget_probes()
    yield answer, asked
    lake.forget_probes()


@pytest.mark.parametrize("exc", [
    # words no rule listed: any message of a store error counts once the catalog is unreachable
    duckdb.IOException("DuckLake: a message nobody has seen before"),
    duckdb.TransactionException("TransactionContext Error: Failed to get global stats information from "
                                "DuckLake: Current transaction is aborted (please ROLLBACK)"),
    lake.LakeError("cannot connect to the DuckLake catalog"),
])
def test_a_store_error_on_an_unreachable_catalog_is_a_lost_catalog(exc, probe):
    answer, asked = probe
    assert catalog_lost(LAKE, exc)
    wrapped = RuntimeError("step failed")
    wrapped.__cause__ = exc
    assert catalog_lost(LAKE, wrapped)
    assert asked and all(a == "dbname=bw host=db.invalid user=bw" for a in asked)


def test_the_same_error_on_a_reachable_catalog_is_the_steps_own_failure(probe):
    answer, _ = probe
    answer["reachable"] = True
    assert not catalog_lost(LAKE, duckdb.IOException("server closed the connection unexpectedly"))


def test_a_file_store_has_no_catalog_to_lose(probe):
    _, asked = probe
    for target in ("benchwatch.duckdb", None):
        assert not catalog_lost(target, duckdb.IOException("server closed the connection unexpectedly"))
    assert asked == []


def test_an_error_not_of_the_store_is_never_a_lost_catalog(probe):
    # a bug of ours while the catalog is down is still a bug: no store error, no probe
    _, asked = probe
    assert not catalog_lost(LAKE, ValueError("from DuckLake: Current transaction is aborted"))
    assert not catalog_lost(LAKE, KeyError("x"))
    assert asked == []


def test_a_lost_catalog_once_found_is_not_probed_again(probe):
    _, asked = probe
    found = CatalogLost("lost")
    found.__cause__ = duckdb.IOException("x")
    assert catalog_lost(LAKE, found) and catalog_lost(None, found)
    assert asked == []


def test_a_failed_probe_is_remembered_a_successful_one_is_not(probe):
    # the store, the log filter and the CLI's last line ask about one failure: one probe that may
    # wait its whole timeout; a reachable catalog is asked afresh (it may go away the next moment)
    answer, asked = probe
    answer["reachable"] = True
    error = duckdb.IOException("x")
    assert not catalog_lost(LAKE, error) and not catalog_lost(LAKE, error)
    assert len(asked) == 2
    answer["reachable"] = False
    assert catalog_lost(LAKE, error) and catalog_lost(LAKE, error)
    assert len(asked) == 3

"""Which errors say the DuckLake catalog's PostgreSQL is gone (storage.lake.connection_lost): the
cycle stops on them with one line instead of a traceback per step; any other error is a step's own
failure, reported while the cycle goes on."""

import duckdb
import pytest

from storage.lake import connection_lost


@pytest.mark.parametrize("text", [
    'Failed to execute query "COMMIT": server closed the connection unexpectedly',
    "connection to server at \"127.0.0.1\", port 5432 failed: Connection refused",
    # the catalog's server stopped between two statements: DuckLake's next catalog read reports
    # only the aborted transaction the failed connection left
    "TransactionContext Error: Failed to get global stats information from DuckLake: "
    "Current transaction is aborted (please ROLLBACK)",
])
def test_a_lost_catalog_is_recognised(text):
    assert connection_lost(duckdb.TransactionException(text))
    assert not connection_lost(RuntimeError("analyze failed"))
    wrapped = RuntimeError("step failed")
    wrapped.__cause__ = duckdb.TransactionException(text)
    assert connection_lost(wrapped)


@pytest.mark.parametrize("text", [
    # DuckDB's own aborted transaction (an earlier error of ours in it), no catalog named
    "TransactionContext Error: Current transaction is aborted (please ROLLBACK)",
    "Constraint Error: Duplicate key \"id: 1\" violates primary key constraint",
    "Binder Error: Referenced column \"x\" not found",
])
def test_other_errors_are_a_steps_own_failure(text):
    assert not connection_lost(duckdb.TransactionException(text))
    # the words alone, from something that is neither DuckDB, the lake nor PostgreSQL's driver
    assert not connection_lost(ValueError("from DuckLake: Current transaction is aborted"))

"""How many threads a connection's statements run on.

A short connection of small statements (`status`, an unchanged cycle's settling and checks) runs
them faster on one thread: DuckDB hands each statement's tasks to its worker threads, which for
a lookup of a few rows costs more than the work (a third of `status`'s statement CPU time, more
of its wall time on a busy machine). The setting belongs to the connection's database instance,
which lives as long as the connection (storage.db opens one per use).
"""

from __future__ import annotations

from storage.engine import duckdb


def one_thread(con: duckdb.DuckDBPyConnection) -> None:
    """Small statements ahead: run them on one thread."""
    con.execute("SET threads = 1")


def all_threads(con: duckdb.DuckDBPyConnection) -> None:
    """Large scans ahead (`one_thread` undone): DuckDB's default, a thread per core."""
    con.execute("RESET threads")

"""How many threads a connection's statements run on.

A short connection of small statements (`status`, an unchanged cycle's settling and checks) runs
them faster on one thread: DuckDB hands each statement's tasks to its worker threads, which for
a lookup of a few rows costs more than the work (a third of `status`'s statement CPU time, more
of its wall time on a busy machine). The setting belongs to the connection's database instance,
which lives as long as the connection (storage.db opens one per use).

`$BENCHWATCH_THREADS` caps every instance's threads (DuckDB's default is one per core): for a
machine whose cores are shared by several processes that each run DuckDB — a Prefect worker
beside other jobs, or a parallel test run (tests/conftest.py gives each worker its share) —
where each process's own pool of a thread per core only competes with the others'.
"""

from __future__ import annotations

import os

from storage.engine import duckdb

THREADS_ENV = "BENCHWATCH_THREADS"


def configured_threads() -> int | None:
    """The thread count `$BENCHWATCH_THREADS` asks for; None (DuckDB's default) when it is unset or
    empty. ValueError, naming the variable, when it is not a whole number ≥ 1."""
    raw = os.environ.get(THREADS_ENV, "").strip()
    if not raw:
        return None
    try:
        count = int(raw)
    except ValueError:
        count = 0
    if count < 1:
        raise ValueError(f"{THREADS_ENV}={raw!r} is not a thread count: give a whole number ≥ 1, "
                         f"or leave it unset for one thread per core")
    return count


def one_thread(con: duckdb.DuckDBPyConnection) -> None:
    """Small statements ahead: run them on one thread."""
    con.execute("SET threads = 1")


def all_threads(con: duckdb.DuckDBPyConnection) -> None:
    """Large scans ahead (`one_thread` undone): what a new instance starts with, a thread per core
    or `$BENCHWATCH_THREADS`."""
    count = configured_threads()
    if count is None:
        con.execute("RESET threads")
    else:
        con.execute(f"SET threads = {count:d}")

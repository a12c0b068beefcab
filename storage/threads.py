"""How many threads a connection's statements run on, and statements run side by side.

A short connection of small statements (`status`, an unchanged cycle's settling and checks) runs
them faster on one thread: DuckDB hands each statement's tasks to its worker threads, which for
a lookup of a few rows costs more than the work (a third of `status`'s statement CPU time, more
of its wall time on a busy machine). The setting belongs to the connection's database instance,
which lives as long as the connection (storage.db opens one per use).

Such statements spend their time in DuckDB's parser, binder and optimizer, not in scans (~6 ms
each for a handful of rows), on the calling thread. `in_parallel` runs independent reads on two
connections at once, one per core (DuckDB releases the GIL while it works).
"""

from __future__ import annotations

import threading
from typing import Any, Callable

import duckdb

from storage import lake


def one_thread(con: duckdb.DuckDBPyConnection) -> None:
    """Small statements ahead: run them on one thread."""
    con.execute("SET threads = 1")


def all_threads(con: duckdb.DuckDBPyConnection) -> None:
    """Large scans ahead (`one_thread` undone): DuckDB's default, a thread per core."""
    con.execute("RESET threads")


Reads = Callable[[duckdb.DuckDBPyConnection], Any]


def in_parallel(con: duckdb.DuckDBPyConnection, *calls: Reads) -> list[Any]:
    """Each `call(connection)`'s result, in the order given, run by two workers at once: this
    thread on `con` and a thread on a cursor of `con`, each taking the next call when it is free.
    For reads that do not depend on each other and see the same committed data (nothing else
    writes meanwhile: DuckDB lets one process write a file, and its caller waits for these).

    An exception (SIGTERM's included) stops both workers taking calls and interrupts the other
    worker's statement; it is raised here once both have stopped (the first to happen: what failed
    after it is its consequence), and the cursor is closed before `con` can be. A DuckLake store
    runs the calls in turn on `con`: a cursor would not start in the lake's catalog (`USE` is per
    connection)."""
    from storage.db import session_cursor

    if len(calls) < 2 or lake.is_lake(con):
        return [call(con) for call in calls]
    results: list[Any] = [None] * len(calls)
    failed: list[BaseException] = []          # in the order they happened
    queue = iter(range(len(calls)))
    lock = threading.Lock()

    def take() -> int | None:
        with lock:
            return None if failed else next(queue, None)

    def work(connection: duckdb.DuckDBPyConnection, other: duckdb.DuckDBPyConnection) -> None:
        while (i := take()) is not None:
            try:
                results[i] = calls[i](connection)
            except BaseException as exc:  # noqa: BLE001 - raised by the caller's thread
                with lock:
                    failed.append(exc)
                other.interrupt()         # the other worker's statement, if any (an idle one is unaffected)

    cur = session_cursor(con)
    thread = threading.Thread(target=work, args=(cur, con), name="benchwatch-reads", daemon=True)
    thread.start()
    done = False
    try:
        work(con, cur)
        done = True
    finally:
        if not done:                # a signal's exception between calls
            cur.interrupt()
        try:
            thread.join()
        except BaseException:       # a signal's exception while waiting: stop the statement first
            cur.interrupt()
            thread.join()
            raise
        finally:
            cur.close()
    if failed:
        raise failed[0]
    return results

"""How many threads a connection's statements run on, and statements run side by side.

A short connection of small statements (`status`, an unchanged cycle's settling and checks) runs
them faster on one thread: DuckDB hands each statement's tasks to its worker threads, which for
a lookup of a few rows costs more than the work (a third of `status`'s statement CPU time, more
of its wall time on a busy machine). The setting belongs to the connection's database instance,
which lives as long as the connection (storage.db opens one per use).

Such statements spend their time in DuckDB's parser, binder and optimizer, not in scans (~6 ms
each for a handful of rows), on the calling thread. `in_parallel` runs independent groups of them
on two connections at once, one per core (DuckDB releases the GIL while it works).
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


def in_parallel(con: duckdb.DuckDBPyConnection, first: Reads, second: Reads) -> tuple[Any, Any]:
    """`first(con)` and `second(cursor)` at the same time, the second on a cursor of `con` in a
    thread: (first's result, second's). Read-only groups that do not depend on each other.

    An exception of either is raised here (the first's before the second's), after both have
    stopped: on one in `first` (SIGTERM's included), the second's statement is interrupted, and
    the cursor is closed before `con` can be. A DuckLake store runs both in turn on `con`: a
    cursor would not start in the lake's catalog (`USE` is per connection)."""
    from storage.db import session_cursor

    if lake.is_lake(con):
        return first(con), second(con)
    cur = session_cursor(con)
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["result"] = second(cur)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=work, name="benchwatch-reads", daemon=True)
    thread.start()
    done = False
    try:
        result = first(con)
        done = True
    finally:
        if not done:
            cur.interrupt()
        try:
            thread.join()
        except BaseException:       # a signal's exception while waiting: stop the statement first
            cur.interrupt()
            thread.join()
            raise
        finally:
            cur.close()
    if "error" in box:
        raise box["error"]
    return result, box["result"]

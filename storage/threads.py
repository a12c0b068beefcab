"""How many threads a DuckDB instance runs on.

`$BENCHWATCH_THREADS` (common.settings) caps every instance's threads (DuckDB's default is one
per core): for a machine whose cores are shared by several processes that each run DuckDB — a
Prefect worker beside other jobs, or a parallel test run (tests/conftest.py gives each worker
its share) — where each process's own pool of a thread per core only competes with the others'.
The setting belongs to the connection's database instance.
"""

from __future__ import annotations

from common import settings

THREADS_ENV = settings.THREADS


def configured_threads() -> int | None:
    """The thread count `$BENCHWATCH_THREADS` asks for; None (DuckDB's default) when it is unset or
    empty. ValueError, naming the variable, when it is not a whole number ≥ 1."""
    raw = settings.read().threads
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

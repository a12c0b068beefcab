"""A stop asked for by a signal (SIGTERM), visible to every layer.

The CLI's SIGTERM handler raises `Terminated` in the main thread so that `finally` blocks run.
That exception does not always arrive as itself: when the signal lands while DuckDB executes a
statement in the main thread, DuckDB interrupts the statement and raises its own error instead
(`RuntimeError: Query interrupted`, `duckdb.Error: …`), which an `except Exception` that reports
and carries on would swallow — and the cycle would go on to notify. So the handler also sets a
flag here first: the cycle checks it before each step (never notifying after a stop was asked
for), an error that follows it is re-raised as `Terminated`, and the CLI turns any exception
that ends a command after it into exit 143.
"""

from __future__ import annotations

import threading

_requested = threading.Event()


class Terminated(BaseException):
    """SIGTERM, raised in the main thread so that `finally` blocks (and Prefect's ephemeral
    server shutdown) run before the process exits."""


def request() -> None:
    """Record that the process was asked to stop (called from the signal handler)."""
    _requested.set()


def requested() -> bool:
    return _requested.is_set()


def clear() -> None:
    """Forget an earlier request (a new command in the same process, e.g. the CLI's tests)."""
    _requested.clear()


def check() -> None:
    """Raise Terminated when a stop was asked for: call before a step that must not start then."""
    if _requested.is_set():
        raise Terminated()

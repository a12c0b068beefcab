"""Read-only, bounded ad hoc SQL for people (`benchwatch query`).

Layers, so that no single one has to be perfect:

1. The statement filter: only SELECT-like statements and a plain EXPLAIN of one. `EXPLAIN
   ANALYZE` is refused because it *executes* its inner statement (which may be a `SET`, a
   `CREATE TEMP`, a `CHECKPOINT` or a `COPY`). `IMPORT DATABASE` is refused before anything
   parses the text (DuckDB's parser reads the named directory's SQL files), and the text is
   parsed on a connection without file access.
   Then the allow-list (`check_allowed`, storage/query_allow.py): every node of each statement's
   parse tree (DuckDB's own `json_serialize_sql`) must be of a listed kind, every function called
   one of the listed scalar, aggregate, window or table functions, and every table named one of
   the store's tables and views (or DuckDB's descriptions of them, e.g. `duckdb_columns()`).
   What is not listed is refused, so nested execution (`json_execute_serialized_sql`, `query()`),
   file readers, the PostgreSQL scanner of a DuckLake session, `duckdb_databases()` or
   `duckdb_settings()` need no rule of their own. `run_query` parses on the query's own
   connection (layer 2: no file access either) when the file opens at once; otherwise (a
   missing or locked file, a DuckLake store) on a connection of its own first, so that a
   refusal still comes before any wait (the table names are then judged once the store is open).
2. The connection: opened read-only, without file-system access from SQL, without spilling to
   `<db>.tmp/` (temp_directory is empty), with `memory_limit` and `threads` set, and then with
   the configuration locked, so no statement can lift a limit.
3. The clock: the statement runs in a worker thread; when `timeout` seconds pass, or on Ctrl-C,
   the connection is interrupted (`con.interrupt()`), which DuckDB honours within milliseconds
   even inside a long join, and the caller gets one line saying what happened. Any other signal
   that ends the wait (SIGTERM) interrupts and joins the worker too before it propagates: a
   process that exits with DuckDB still running in a thread aborts (SIGABRT).
4. The result: DuckDB's `memory_limit` bounds its operators but not the values a query makes
   (`repeat('a', 2000000000)`) nor the result copied into Python, so the result is streamed in
   chunks and bounded in rows and bytes (`fetch_bounded`), and the CLI's query runs under a
   data-segment limit of the process (`bound_process_memory`): an allocation beyond it is the
   same "more memory than the limit" cut-off as DuckDB's own.
"""

from __future__ import annotations

import re
import threading
import time
from contextlib import contextmanager, nullcontext
from typing import TYPE_CHECKING, Callable, Iterator, NamedTuple
import json

from storage.engine import duckdb

try:
    import resource
except ImportError:                 # not on this platform: bound_process_memory does nothing
    resource = None  # type: ignore[assignment]

if TYPE_CHECKING:       # the frame comes from duckdb's .df(); no pandas import at CLI start
    import pandas as pd

from common import shutdown
from storage.query_check import (ReadOnlyViolation, _check_before_open, check_allowed,  # noqa: F401 - re-exported
                                   check_read_only, whole_message)
from storage.db import StorageError, is_behind

if TYPE_CHECKING:
    from storage.store import Store


# Bounds of one `benchwatch query` (the CLI's --timeout / --memory / --threads defaults).
DEFAULT_TIMEOUT_SECONDS = 60.0
DEFAULT_MEMORY_LIMIT = "1GB"
DEFAULT_THREADS = 2

# The interpreter's working room beyond twice --memory (DuckDB's operators, then the result in
# Python) when the process's data segment is bounded for one query (`bound_process_memory`).
PROCESS_HEADROOM_BYTES = 256 * 1024 * 1024
RESULT_CHUNK_VECTORS = 1       # a result is fetched 2048 rows (one DuckDB vector) at a time
_UNITS = {"B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
          "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}

_MEMORY = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)\s*$", re.IGNORECASE)
class QueryCutOff(StorageError):
    """The query ran past its time limit, out of its memory limit, or was interrupted (Ctrl-C)."""

    def __init__(self, message: str, *, interrupted: bool = False):
        super().__init__(message)
        self.interrupted = interrupted


def parse_memory_limit(text: str) -> str:
    """'512MB', '2 GiB' … as DuckDB accepts them; ValueError otherwise."""
    m = _MEMORY.match(text or "")
    if not m or float(m[1]) <= 0:
        raise ValueError(f"invalid memory limit {text!r} (e.g. 512MB, 2GB)")
    return f"{m[1]}{m[2].upper().replace('IB', 'iB')}"


def memory_limit_bytes(limit: str) -> int:
    """A memory limit ('512MB', '2GiB') in bytes, with DuckDB's meaning of the units."""
    m = _MEMORY.match(parse_memory_limit(limit))
    assert m is not None
    return int(float(m[1]) * _UNITS[m[2].upper()])


class Fetched(NamedTuple):
    """A result fetched within bounds: `frame` holds at most `max_rows` rows; `more_rows` when the
    result had more; `over_bytes` when it was cut because its rows passed the byte bound."""

    frame: pd.DataFrame
    more_rows: bool = False
    over_bytes: bool = False
    rows_read: int = 0


def fetch_bounded(result: duckdb.DuckDBPyConnection, *, max_rows: int | None, max_bytes: int) -> Fetched:
    """The rows of an executed statement, fetched a chunk at a time (DuckDB streams them) until
    the result ends, passes `max_rows` rows (one more row is enough to know) or holds more than
    `max_bytes` bytes in Python: never the whole result of `range(300000000)` to show 200 rows."""
    import pandas as pd

    chunks: list[pd.DataFrame] = []
    rows = size = 0
    more = over = False
    while True:
        chunk = result.fetch_df_chunk(RESULT_CHUNK_VECTORS)
        if len(chunk) == 0 and chunks:
            break
        chunks.append(chunk)
        if len(chunk) == 0:
            break
        rows += len(chunk)
        size += int(chunk.memory_usage(index=False, deep=True).sum())
        if max_rows is not None and rows > max_rows:
            more = True
            break
        if size > max_bytes:
            over = True
            break
    frame = chunks[0] if len(chunks) == 1 else pd.concat(chunks, ignore_index=True)
    if max_rows is not None and len(frame) > max_rows:
        frame = frame.iloc[:max(max_rows, 0)].reset_index(drop=True)
    return Fetched(frame, more_rows=more, over_bytes=over, rows_read=rows)


def _data_segment_bytes() -> int | None:
    """This process's data segment (VmData) in bytes; None where /proc does not say."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("VmData:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


@contextmanager
def bound_process_memory(extra_bytes: int) -> Iterator[None]:
    """Limit the process's data segment (RLIMIT_DATA) to its present size + `extra_bytes` for the
    block, then restore the previous limit. An allocation past it fails (DuckDB: OutOfMemory,
    Python: MemoryError) instead of taking the machine's memory. No-op where unsupported."""
    if resource is None:
        yield
        return
    now = _data_segment_bytes()
    previous = None
    if now is not None:
        try:
            soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
            limit = now + extra_bytes
            if hard != resource.RLIM_INFINITY:
                limit = min(limit, hard)
            if soft == resource.RLIM_INFINITY or soft > limit:
                resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))
                previous = (soft, hard)
        except (ValueError, OSError):
            previous = None
    try:
        yield
    finally:
        if previous is not None:
            resource.setrlimit(resource.RLIMIT_DATA, previous)


def _has_schema(con: duckdb.DuckDBPyConnection) -> bool:
    """The file holds benchwatch's schema table (else it is someone else's DuckDB file)."""
    row = con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'schema_migrations'").fetchone()
    return bool(row and row[0])


JSON_TYPE = "JSON"


def _wait_uninterrupted(event: threading.Event, seconds: float, interrupt: Callable[[], None]) -> None:
    """Interrupt the worker until it lets go of the connection, a second Ctrl-C (or SIGTERM)
    notwithstanding.

    The interrupt is repeated at every tick: one sent before the worker's statement started
    (Ctrl-C right after start-up) is a no-op in DuckDB, and the query would then run to its end.
    """
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        interrupt()
        try:
            if event.wait(0.1):
                return
        except BaseException:  # noqa: BLE001 - a second signal: keep stopping the worker first
            continue


def run_query(sql: str, store: Store, *, wait: float | None = None,
              on_wait: Callable[[str], None] | None = None, timeout: float = DEFAULT_TIMEOUT_SECONDS,
              memory_limit: str = DEFAULT_MEMORY_LIMIT, threads: int = DEFAULT_THREADS,
              fetch: Callable[[duckdb.DuckDBPyConnection, str], object] | None = None,
              process_bound: bool = False,
              bring_current: Callable[[], None] | None = None) -> pd.DataFrame:
    """Run read-only SQL within `timeout` seconds and `memory_limit`; the last statement's result.

    `fetch(con, last_statement)` runs the last statement and returns its result (default: a
    DataFrame fetched by `fetch_bounded` within `memory_limit` bytes, else QueryCutOff); the CLI
    passes one that prints plain results without importing pandas. `process_bound`: the process's
    data segment is bounded meanwhile (`bound_process_memory`; the CLI, a process of its own).

    `bring_current()`: called (with no connection open) when the file's schema or view files are
    older than this code's (`db.is_behind`: one statement), e.g. migrating it on a short write
    connection as `db.open_current` does, so the query reads this release's views and comments.

    Raises ReadOnlyViolation before running anything (and before waiting for a writer's lock),
    QueryCutOff when a bound (or Ctrl-C) stops the query, StorageError for SQL errors and an
    unopenable database.
    """
    def sandboxed(wait: float | None = wait) -> duckdb.DuckDBPyConnection:   # None: the store's own wait
        return store.open(read_only=True, wait=wait, on_wait=on_wait, sandboxed=True,
                          memory_limit=parse_memory_limit(memory_limit), threads=threads)

    con = None
    if not store.is_lake:
        try:    # the usual case: the file opens at once, and the statements are parsed on its connection
            con = sandboxed(wait=0)
        except (StorageError, ValueError):   # missing, locked, unopenable, a bad limit: said below, after the filter
            con = None
    if con is None:
        statements = check_read_only(sql)
        _check_before_open(statements, lake=store.is_lake)
        limit_bytes = memory_limit_bytes(memory_limit)
        con = sandboxed()
    else:
        try:
            statements = check_read_only(sql, con)
            limit_bytes = memory_limit_bytes(memory_limit)
        except BaseException:
            con.close()
            raise
    if bring_current is not None:
        try:     # only a benchwatch file (one with its schema table) is brought current: any other
            # DuckDB file is queried as it is, never written
            behind = is_behind(con) and _has_schema(con)
        except BaseException:
            con.close()
            raise
        if behind:       # an older schema or view files: brought current first, as other read-only commands
            con.close()
            bring_current()
            con = sandboxed()
    try:
        check_allowed(con, statements)
        shutdown.check()     # a SIGTERM that DuckDB turned into its own error (or swallowed) meanwhile
    except BaseException:
        con.close()
        raise
    outcome: dict[str, object] = {}
    done = threading.Event()    # not Thread.is_alive(): an interrupted join() can make it lie (Python < 3.13)

    def work() -> None:
        try:
            for st in statements[:-1]:
                con.execute(st)
            if fetch is not None and statements:
                outcome["frame"] = fetch(con, statements[-1])
            else:
                result = con.execute(statements[-1])
                fetched = fetch_bounded(result, max_rows=None, max_bytes=limit_bytes)
                if fetched.over_bytes:
                    outcome["error"] = QueryCutOff(result_too_large(memory_limit, fetched.rows_read))
                else:
                    outcome["frame"] = with_types(fetched.frame, result.description)
        except BaseException as exc:  # noqa: BLE001 - handed to the calling thread
            outcome["error"] = exc
        finally:
            done.set()

    worker = threading.Thread(target=work, name="benchwatch-query", daemon=True)
    deadline = time.monotonic() + timeout if timeout and timeout > 0 else float("inf")
    cut: str | None = None
    bound = bound_process_memory(2 * limit_bytes + PROCESS_HEADROOM_BYTES) if process_bound else nullcontext()
    launched = False
    try:
        with bound:
            try:
                launched = True      # before start(): a signal can land inside start() once the thread exists
                worker.start()
                while not done.wait(min(0.2, max(deadline - time.monotonic(), 0.0))):
                    shutdown.check()     # SIGTERM's exception can be lost on the way (common.shutdown)
                    if time.monotonic() >= deadline:
                        cut = f"query cut off after {timeout:g} s (the --timeout limit; raise it for a longer query)"
                        break
            except KeyboardInterrupt:
                cut = "query interrupted (Ctrl-C)"
            if cut:
                raise QueryCutOff(cut, interrupted=cut.endswith("(Ctrl-C)"))
    finally:
        # every way out (a cut, another signal such as SIGTERM's exception, one inside start())
        # stops the worker first: a process exiting with DuckDB still running in a thread aborts
        if launched and not done.is_set():
            _wait_uninterrupted(done, 10, con.interrupt)
        if done.is_set() or not launched:
            con.close()
    error = outcome.get("error")
    if isinstance(error, (duckdb.OutOfMemoryException, MemoryError)) or (
            isinstance(error, duckdb.Error) and "bad_alloc" in str(error)):
        raise QueryCutOff(f"query needs more memory than the {memory_limit} limit (--memory); "
                          f"narrow it or raise the limit") from error
    if isinstance(error, duckdb.InterruptException):
        raise QueryCutOff("query interrupted") from error
    if isinstance(error, duckdb.Error):
        raise StorageError(f"query failed: {whole_message(error)}") from error
    if isinstance(error, BaseException):
        raise error
    return outcome["frame"]  # type: ignore[return-value]


def with_types(frame: pd.DataFrame, description: list | None) -> pd.DataFrame:
    """The frame with DuckDB's column types in `frame.attrs["duckdb_types"]` ({name: 'JSON', …}),
    so that an output format can tell a JSON column (a string in the frame) from text."""
    frame.attrs["duckdb_types"] = {str(d[0]): str(d[1]) for d in description or []}
    return frame


def result_too_large(memory_limit: str, rows: int) -> str:
    """The one line of a result cut by its size."""
    return (f"result cut off: larger than the {memory_limit} limit (--memory) after {rows} row(s); "
            "narrow it (fewer columns, LIMIT) or raise the limit")


def claimed_elsewhere(con: duckdb.DuckDBPyConnection, *, now) -> tuple[int, object | None]:
    """(count, latest lease end) of undelivered notifications another notify run still holds.

    They are not lost: when that run died, its lease (jobs.alerts.NOTIFY_CLAIM_LEASE) ends
    and the next notify delivers them; `benchwatch notify` says so instead of "nothing to deliver".
    """
    row = con.execute("""SELECT count(*), max(claimed_until) FROM notifications
                         WHERE delivered_at IS NULL AND claimed_until > ?""", [now]).fetchone()
    return (int(row[0]), row[1]) if row else (0, None)     # an aggregate: always one row

"""Read-only, bounded ad hoc SQL for people (`benchwatch query`).

Three layers, so that no single one has to be perfect:

1. The statement filter: only SELECT-like statements and a plain EXPLAIN of one. `EXPLAIN
   ANALYZE` is refused because it *executes* its inner statement (which may be a `SET`, a
   `CREATE TEMP`, a `CHECKPOINT` or a `COPY`). `IMPORT DATABASE` is refused before anything
   parses the text (DuckDB's parser reads the named directory's SQL files), and the text is
   parsed on a connection without file access.
   On a DuckLake store the session has the `postgres` and `ducklake` extensions loaded, whose
   functions reach any PostgreSQL server (`postgres_scan`, `postgres_query`, `postgres_execute`,
   `postgres_attach`) or maintain the store: each statement's parse tree
   (`json_serialize_sql`) is walked and a call of any function those extensions add (but the
   DuckLake read-only inspection ones), of `query`/`query_table` (they run SQL given as text) or
   a reference to the catalog's own PostgreSQL database (`__ducklake_metadata_*`) is refused.
2. The connection: opened read-only, without file-system access from SQL, without spilling to
   `<db>.tmp/` (temp_directory is empty), with `memory_limit` and `threads` set, and then with
   the configuration locked, so no statement can lift a limit.
3. The clock: the statement runs in a worker thread; when `timeout` seconds pass, or on Ctrl-C,
   the connection is interrupted (`con.interrupt()`), which DuckDB honours within milliseconds
   even inside a long join, and the caller gets one line saying what happened.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from typing import TYPE_CHECKING, Callable

import duckdb

if TYPE_CHECKING:       # the frame comes from duckdb's .df(); no pandas import at CLI start
    import pandas as pd

from storage.db import DEFAULT_WAIT_SECONDS, StorageError, open_connection
from storage.lake import is_lake

ALLOWED_STATEMENTS = {duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN}

# Bounds of one `benchwatch query` (the CLI's --timeout / --memory / --threads defaults).
DEFAULT_TIMEOUT_SECONDS = 60.0
DEFAULT_MEMORY_LIMIT = "1GB"
DEFAULT_THREADS = 2

_MEMORY = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)\s*$", re.IGNORECASE)
# Leading whitespace and comments, then EXPLAIN, then an optional "(option, ...)" list.
_SKIP = re.compile(r"(?:\s+|--[^\n]*(?:\n|$)|/\*.*?\*/)*", re.DOTALL)
_EXPLAIN = re.compile(r"EXPLAIN\b", re.IGNORECASE)
_OPTIONS = re.compile(r"\(([^()]*)\)")
_ANALYZE = re.compile(r"\bANALY[SZ]E\b", re.IGNORECASE)
# IMPORT DATABASE is expanded by the parser into the SQL files of the directory it names.
_IMPORT = re.compile(r"\bIMPORT\s+DATABASE\b", re.IGNORECASE)

# Functions the lake's extensions add that only read the store (allowed in `query` on a lake).
LAKE_READ_FUNCTIONS = frozenset({
    "ducklake_snapshots", "ducklake_table_info", "ducklake_table_changes", "ducklake_table_insertions",
    "ducklake_table_deletions", "ducklake_current_snapshot", "ducklake_last_committed_snapshot",
    "ducklake_list_files", "ducklake_options", "ducklake_settings", "murmur3_32"})
# Core table functions that run SQL given as a string (their text is not checked by the filter).
SQL_TEXT_FUNCTIONS = frozenset({"query", "query_table"})
_METADATA_CATALOG = "__ducklake_metadata"


class ReadOnlyViolation(StorageError):
    """A statement that would change something, refused before it runs."""


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


def _inner_of_explain(query: str) -> str:
    """The statement an EXPLAIN explains; ReadOnlyViolation for EXPLAIN ANALYZE in any spelling."""
    pos = _SKIP.match(query).end()
    m = _EXPLAIN.match(query, pos)
    if not m:  # DuckDB called it EXPLAIN, we cannot find the keyword: refuse rather than guess
        raise ReadOnlyViolation("refused: cannot tell what this EXPLAIN statement runs")
    pos = _SKIP.match(query, m.end()).end()
    opts = _OPTIONS.match(query, pos)
    if opts:
        if _ANALYZE.search(opts[1]):
            raise ReadOnlyViolation(_analyze_refusal())
        pos = _SKIP.match(query, opts.end()).end()
    if _ANALYZE.match(query, pos):
        raise ReadOnlyViolation(_analyze_refusal())
    return query[pos:]


def _analyze_refusal() -> str:
    return ("refused: EXPLAIN ANALYZE executes its statement; `benchwatch query` runs only SELECT "
            "and plain EXPLAIN (without ANALYZE)")


def _parse(sql: str) -> list:
    """The statements of `sql`, parsed on a connection without file access (the module-level
    parser is a connection of its own, with the defaults)."""
    parser = duckdb.connect(config={"enable_external_access": False, "autoinstall_known_extensions": False,
                                    "autoload_known_extensions": False})
    try:
        return parser.extract_statements(sql)
    finally:
        parser.close()


def check_read_only(sql: str) -> list:
    """Refuse anything but SELECT-like statements and a plain EXPLAIN of one (see the module doc);
    the parsed statements."""
    if _IMPORT.search(sql):
        raise ReadOnlyViolation("refused: `benchwatch query` is read-only and only runs SELECT/EXPLAIN "
                                "statements (got IMPORT DATABASE)")
    try:
        statements = _parse(sql)
    except duckdb.Error as exc:
        raise StorageError(f"cannot parse SQL: {_first_line(exc)}") from exc
    if not statements:
        raise StorageError("no SQL statement given")
    for st in statements:
        if st.type not in ALLOWED_STATEMENTS:
            kind = str(st.type).rsplit(".", 1)[-1]
            raise ReadOnlyViolation(
                f"refused: `benchwatch query` is read-only and only runs SELECT/EXPLAIN statements "
                f"(got {kind}: {st.query.strip()[:80]!r})")
        if st.type == duckdb.StatementType.EXPLAIN:
            inner_sql = _inner_of_explain(st.query)
            try:
                inner = _parse(inner_sql) if inner_sql.strip() else []
            except duckdb.Error:
                inner = []
            if len(inner) != 1 or inner[0].type != duckdb.StatementType.SELECT:
                raise ReadOnlyViolation("refused: `benchwatch query` explains only SELECT statements")
    return statements


def _nodes(tree: object):
    """Every dict of a json_serialize_sql tree."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            yield node
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def check_lake_sandbox(con: duckdb.DuckDBPyConnection, statements: list) -> None:
    """On a DuckLake session: refuse a statement that calls a function of the postgres/ducklake
    extensions (other than LAKE_READ_FUNCTIONS), a SQL-text function, or names the catalog's
    PostgreSQL database (module doc). Judged on DuckDB's own parse tree, not on the text."""
    plain = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    try:
        core = {r[0].lower() for r in plain.execute("SELECT function_name FROM duckdb_functions()").fetchall()}
    finally:
        plain.close()
    present = {r[0].lower() for r in con.execute("SELECT function_name FROM duckdb_functions()").fetchall()}
    forbidden = (present - core - LAKE_READ_FUNCTIONS) | SQL_TEXT_FUNCTIONS
    for st in statements:
        text = _inner_of_explain(st.query) if st.type == duckdb.StatementType.EXPLAIN else st.query
        row = con.execute("SELECT json_serialize_sql(?)", [text]).fetchone()
        tree = json.loads(row[0]) if row and row[0] else {"error": True}
        if tree.get("error"):
            raise ReadOnlyViolation(f"refused: cannot check this statement on a DuckLake store "
                                    f"({str(tree.get('error_message', ''))[:80]})")
        for node in _nodes(tree):
            name = node.get("function_name")
            if isinstance(name, str):
                low = name.lower()
                qualified = bool(node.get("catalog") or node.get("schema"))   # lake.expire_snapshots()
                if low in forbidden or (qualified and f"ducklake_{low}" in forbidden):
                    raise ReadOnlyViolation(
                        f"refused: `benchwatch query` on a DuckLake store reads the store's tables; {name}() "
                        "reaches beyond them (PostgreSQL servers, files, store maintenance)")
            for key in ("catalog_name", "schema_name", "catalog", "schema"):
                value = node.get(key)
                if isinstance(value, str) and value.lower().startswith(_METADATA_CATALOG):
                    raise ReadOnlyViolation(
                        f"refused: `benchwatch query` on a DuckLake store reads the store's tables, not the "
                        f"catalog database ({value})")


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def _wait_uninterrupted(event: threading.Event, seconds: float, interrupt: Callable[[], None]) -> None:
    """Interrupt the worker until it lets go of the connection, a second Ctrl-C notwithstanding.

    The interrupt is repeated at every tick: one sent before the worker's statement started
    (Ctrl-C right after start-up) is a no-op in DuckDB, and the query would then run to its end.
    """
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        interrupt()
        try:
            if event.wait(0.1):
                return
        except KeyboardInterrupt:
            continue


def run_query(sql: str, path: str | os.PathLike | None = None, *, wait: float = DEFAULT_WAIT_SECONDS,
              on_wait: Callable[[str], None] | None = None, timeout: float = DEFAULT_TIMEOUT_SECONDS,
              memory_limit: str = DEFAULT_MEMORY_LIMIT, threads: int = DEFAULT_THREADS,
              fetch: Callable[[duckdb.DuckDBPyConnection, str], object] | None = None) -> pd.DataFrame:
    """Run read-only SQL within `timeout` seconds and `memory_limit`; the last statement's result.

    `fetch(con, last_statement)` runs the last statement and returns its result (default: as a
    DataFrame); the CLI passes one that prints plain results without importing pandas.

    Raises ReadOnlyViolation before opening anything, QueryCutOff when a bound (or Ctrl-C) stops
    the query, StorageError for SQL errors and an unopenable database.
    """
    statements = check_read_only(sql)
    con = open_connection(path, read_only=True, wait=wait, on_wait=on_wait, sandboxed=True,
                          memory_limit=parse_memory_limit(memory_limit), threads=threads)
    if is_lake(con):
        try:
            check_lake_sandbox(con, statements)
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
                result = con.execute(statements[-1]) if statements else None
                outcome["frame"] = result.df()
        except BaseException as exc:  # noqa: BLE001 - handed to the calling thread
            outcome["error"] = exc
        finally:
            done.set()

    worker = threading.Thread(target=work, name="benchwatch-query", daemon=True)
    deadline = time.monotonic() + timeout if timeout and timeout > 0 else float("inf")
    cut: str | None = None
    try:
        worker.start()
        try:
            while not done.wait(min(0.2, max(deadline - time.monotonic(), 0.0))):
                if time.monotonic() >= deadline:
                    cut = f"query cut off after {timeout:g} s (the --timeout limit; raise it for a longer query)"
                    break
        except KeyboardInterrupt:
            cut = "query interrupted (Ctrl-C)"
        if cut:
            _wait_uninterrupted(done, 10, con.interrupt)
            raise QueryCutOff(cut, interrupted=cut.endswith("(Ctrl-C)"))
    finally:
        if done.is_set():
            con.close()
    error = outcome.get("error")
    if isinstance(error, duckdb.OutOfMemoryException):
        raise QueryCutOff(f"query needs more memory than the {memory_limit} limit (--memory); "
                          f"narrow it or raise the limit") from error
    if isinstance(error, duckdb.InterruptException):
        raise QueryCutOff("query interrupted") from error
    if isinstance(error, duckdb.Error):
        raise StorageError(f"query failed: {_first_line(error)}") from error
    if isinstance(error, BaseException):
        raise error
    return outcome["frame"]  # type: ignore[return-value]


def claimed_elsewhere(con: duckdb.DuckDBPyConnection, *, now) -> tuple[int, object | None]:
    """(count, latest lease end) of undelivered notifications another notify run still holds.

    They are not lost: when that run died, its lease (jobs.alerts.NOTIFY_CLAIM_LEASE) ends
    and the next notify delivers them; `benchwatch notify` says so instead of "nothing to deliver".
    """
    row = con.execute("""SELECT count(*), max(claimed_until) FROM notifications
                         WHERE delivered_at IS NULL AND claimed_until > ?""", [now]).fetchone()
    return int(row[0]), row[1]

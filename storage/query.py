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

if TYPE_CHECKING:       # the frame comes from duckdb's .df(); no pandas import at CLI start
    import pandas as pd

from common import shutdown
from common.redact import redact
from storage import query_allow as allow
from storage.lake import is_lake
from storage.db import StorageError, is_behind

if TYPE_CHECKING:
    from storage.store import Store

ALLOWED_STATEMENTS = {duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN}

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
# IMPORT DATABASE is expanded by the parser into the SQL files of the directory it names.
_IMPORT = re.compile(r"\bIMPORT\s+DATABASE\b", re.IGNORECASE)
# How an EXPLAIN is read (`_inner_of_explain`, compiled there: only an EXPLAIN needs them): leading
# whitespace and comments, then EXPLAIN, then an optional "(option, ...)" list.
_SKIP = r"(?:\s+|--[^\n]*(?:\n|$)|/\*.*?\*/)*"
_EXPLAIN = r"EXPLAIN\b"
_OPTIONS = r"\(([^()]*)\)"
_ANALYZE = r"\bANALY[SZ]E\b"

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
    try:
        import resource
    except ImportError:             # not on this platform
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


def _inner_of_explain(query: str) -> str:
    """The statement an EXPLAIN explains; ReadOnlyViolation for EXPLAIN ANALYZE in any spelling."""
    skip, explain = re.compile(_SKIP, re.DOTALL), re.compile(_EXPLAIN, re.IGNORECASE)
    options, analyze = re.compile(_OPTIONS), re.compile(_ANALYZE, re.IGNORECASE)

    def past_blanks(at: int) -> int:      # _SKIP matches the empty string too: always a match
        found = skip.match(query, at)
        return found.end() if found else at

    pos = past_blanks(0)
    m = explain.match(query, pos)
    if not m:  # DuckDB called it EXPLAIN, we cannot find the keyword: refuse rather than guess
        raise ReadOnlyViolation("refused: cannot tell what this EXPLAIN statement runs")
    pos = past_blanks(m.end())
    opts = options.match(query, pos)
    if opts:
        if analyze.search(opts[1]):
            raise ReadOnlyViolation(_analyze_refusal())
        pos = past_blanks(opts.end())
    if analyze.match(query, pos):
        raise ReadOnlyViolation(_analyze_refusal())
    return query[pos:]


def _analyze_refusal() -> str:
    return ("refused: EXPLAIN ANALYZE executes its statement; `benchwatch query` runs only SELECT "
            "and plain EXPLAIN (without ANALYZE)")


def _parse(sql: str, con: duckdb.DuckDBPyConnection | None = None) -> list:
    """The statements of `sql`, parsed on `con` (a sandboxed connection: no file access) or else on
    a connection of its own without file access (the module-level parser is a connection of its
    own, with the defaults)."""
    if con is not None:
        return con.extract_statements(sql)
    parser = duckdb.connect(config={"enable_external_access": False, "autoinstall_known_extensions": False,
                                    "autoload_known_extensions": False})
    try:
        return parser.extract_statements(sql)
    finally:
        parser.close()


def check_read_only(sql: str, con: duckdb.DuckDBPyConnection | None = None) -> list:
    """Refuse anything but SELECT-like statements and a plain EXPLAIN of one (see the module doc);
    the parsed statements. `con`: parse on this connection, which must be one `open_connection`
    made with `sandboxed=True` (no file access from SQL); by default a private one."""
    if _IMPORT.search(sql):
        raise ReadOnlyViolation("refused: `benchwatch query` is read-only and only runs SELECT/EXPLAIN "
                                "statements (got IMPORT DATABASE)")
    try:
        statements = _parse(sql, con)
    except duckdb.Error as exc:
        raise StorageError(f"cannot parse SQL: {whole_message(exc)}") from exc
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
                inner = _parse(inner_sql, con) if inner_sql.strip() else []
            except duckdb.Error:
                inner = []
            if len(inner) != 1 or inner[0].type != duckdb.StatementType.SELECT:
                raise ReadOnlyViolation("refused: `benchwatch query` explains only SELECT statements")
    return statements


def _internal_views(con: duckdb.DuckDBPyConnection) -> frozenset[str]:
    """DuckDB's own views that a name without `information_schema.` finds (duckdb_databases,
    pg_settings, …), lower case: refused by name in any form but query_allow.SYSTEM_VIEWS."""
    return frozenset(r[0].lower() for r in con.execute(
        "SELECT view_name FROM duckdb_views() WHERE internal AND schema_name IN ('main', 'pg_catalog')").fetchall())


# A table name that is a plain identifier: it names a table or view of the store, or DuckDB says
# it does not exist (with its "Did you mean …"); never a file (a replacement scan needs a dot).
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]*$")


class _Refused(Exception):
    """Raised inside the walk: what is not allowed, in words."""


class _Walk:
    """One statement's tree, node by node, against storage/query_allow.py (fail closed: a node of
    a kind not listed there is refused like a function that is not)."""

    def __init__(self, catalog: str | None, internal: frozenset[str], *, lake: bool, ctes: frozenset[str]):
        self.database, self.internal, self.lake, self.ctes = catalog, internal, lake, ctes   # the store's catalog name

    def node(self, node: object) -> None:
        if isinstance(node, list):
            for item in node:
                self.node(item)
            return
        if not isinstance(node, dict) or ("id" in node and "type_info" in node):
            return                   # a value or a type (DECIMAL(10, 2), STRUCT(…)): nothing to call
        kind = node.get("type")
        if "class" in node:
            self.expression(node)
        elif isinstance(kind, str) and kind.endswith("_NODE"):
            if kind not in allow.QUERY_NODES:
                raise _Refused(f"a {kind} query is not allowed")
            self.children(node)
        elif isinstance(kind, str) and "query_location" in node and "sample" in node:
            self.table_ref(node)
        elif isinstance(kind, str) and kind not in allow.STRUCTURAL_TYPES:
            raise _Refused(f"a {kind} node is not allowed")
        else:
            self.children(node)

    def children(self, node: dict, skip: tuple[str, ...] = ()) -> None:
        for key, value in node.items():
            if key not in skip:
                self.node(value)

    def expression(self, node: dict) -> None:
        cls = node.get("class")
        if cls not in allow.EXPRESSION_CLASSES:
            raise _Refused(f"a {cls} expression is not allowed")
        if cls == "CONSTANT":
            return                   # a value: data, not something to call
        if cls in ("FUNCTION", "WINDOW"):
            name = str(node.get("function_name", ""))
            allowed = allow.WINDOW_FUNCTIONS if cls == "WINDOW" else allow.FUNCTIONS
            if (name.lower() not in allowed or str(node.get("catalog") or "").lower() not in allow.BUILTIN_CATALOGS
                    or str(node.get("schema") or "").lower() not in allow.BUILTIN_SCHEMAS):
                raise _Refused(f"{_qualified(node, 'catalog', 'schema', name)}() is not allowed")
        self.children(node)

    def table_ref(self, node: dict) -> None:
        kind = node["type"]
        if kind not in allow.TABLE_REFS:
            raise _Refused(f"a {kind} table reference is not allowed")
        if kind == "BASE_TABLE":
            self.relation(node.get("catalog_name") or "", node.get("schema_name") or "", str(node.get("table_name")))
        elif kind == "TABLE_FUNCTION":
            function = node.get("function") or {}
            if function.get("class") != "FUNCTION":
                raise _Refused("a table function that is not a plain call is not allowed")
            self.table_function(function)
            self.children(function, skip=("function_name", "catalog", "schema"))
            self.children(node, skip=("function",))
            return
        elif kind == "SHOW_REF":
            if node.get("show_type") not in allow.SHOW_TYPES:
                raise _Refused(f"SHOW {node.get('show_type')} is not allowed")
            name = str(node.get("table_name") or "").strip('"')
            if node.get("query") is None and name.lower() not in allow.SHOW_NAMES:
                # SHOW databases, SHOW variables, …: DuckDB's own lists (DESCRIBE <table> describes one)
                raise _Refused(f"SHOW {name} is not allowed (SHOW TABLES and DESCRIBE <table> are)")
        self.children(node)

    def table_function(self, function: dict) -> None:
        name = str(function.get("function_name", "")).lower()
        catalog, schema = (str(function.get(k) or "").lower() for k in ("catalog", "schema"))
        if catalog in allow.BUILTIN_CATALOGS and schema in allow.BUILTIN_SCHEMAS:
            if name in allow.TABLE_FUNCTIONS or (self.lake and name in allow.LAKE_TABLE_FUNCTIONS):
                return
        elif self.lake and name in allow.LAKE_SHORT_FUNCTIONS and not catalog \
                and (self.database is None or schema == self.database.lower()):
            return          # lake.snapshots(): the store's own inspection (its alias judged once it is open)
        raise _Refused(f"{_qualified(function, 'catalog', 'schema', str(function.get('function_name')))}() is not allowed")

    def relation(self, catalog: str, schema: str, name: str) -> None:
        """A table name: a plain name in the store (a CTE, a table or view, or an unknown name
        DuckDB then reports), or one of DuckDB's descriptions of tables (query_allow.SYSTEM_VIEWS);
        never another catalog, a file, or DuckDB's other views (duckdb_databases, pg_settings)."""
        low, cat, sch = name.lower(), catalog.lower(), schema.lower()
        shown = ".".join(p for p in (catalog, schema, name) if p)
        if cat in ("", "system") and (sch or "main", low) in allow.SYSTEM_VIEWS:
            return
        if low in self.internal or sch in ("information_schema", "pg_catalog") or cat in ("system", "temp"):
            raise _Refused(f"{shown} is one of DuckDB's own views, not a table or view of the store")
        if not cat and not sch and (low in self.ctes or _IDENTIFIER.match(name)):
            return
        if not _IDENTIFIER.match(name):
            raise _Refused(f"{shown} is not a table or view of the store")
        if self.database is None:      # judged once the store is open (its catalog's name)
            return
        here = self.database.lower()
        if cat in ("", here) and sch in ("", "main", here) and not (cat and sch == here):
            return
        raise _Refused(f"{shown} is not a table or view of the store")


def _qualified(node: dict, catalog_key: str, schema_key: str, name: str) -> str:
    return ".".join(str(p) for p in (node.get(catalog_key), node.get(schema_key), name) if p)


def _cte_names(tree: object) -> frozenset[str]:
    """Every CTE name the tree defines, in any scope (DuckDB's own view names are refused before
    a CTE name is looked at, so a name used out of its CTE's scope cannot become one of them)."""
    names: set[str] = set()
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            ctes = node.get("cte_map")
            if isinstance(ctes, dict):
                names.update(str(e.get("key", "")).lower() for e in ctes.get("map") or [] if isinstance(e, dict))
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return frozenset(names)


def check_allowed(con: duckdb.DuckDBPyConnection, statements: list, *, store: bool = True,
                  lake: bool | None = None) -> None:
    """Refuse a statement whose parse tree (DuckDB's `json_serialize_sql`) holds anything not on
    the allow-list of storage/query_allow.py: a function, table function, node kind or table
    name. `store`: `con` is the store's connection, and table names are judged against its
    tables and views too; else (a private parser, before waiting for a lock) only the rest.
    `lake`: DuckLake's inspection functions are allowed (default: `con` is a lake session)."""
    lake = is_lake(con) if lake is None else lake
    current = con.execute("SELECT current_database()").fetchone() if store else None
    database = str(current[0]) if current else None
    internal = _internal_views(con)
    for st in statements:
        text = _inner_of_explain(st.query) if st.type == duckdb.StatementType.EXPLAIN else st.query
        # a literal, not a bound parameter: binding a Python value makes DuckDB import pandas
        # (`query` starts without it); a standard SQL string has no escape but the doubled quote
        row = con.execute("SELECT json_serialize_sql('" + text.replace("'", "''") + "')").fetchone()
        tree: dict = json.loads(row[0]) if row and row[0] else {"error": True}
        if tree.get("error"):
            raise ReadOnlyViolation(f"refused: `benchwatch query` cannot check this statement "
                                    f"({str(tree.get('error_message', ''))[:80]}); write it as a plain SELECT")
        try:
            walk = _Walk(database, internal, lake=lake, ctes=_cte_names(tree))
            statements_of: list = tree.get("statements") or []
            for statement in statements_of:
                walk.node(statement.get("node"))
        except _Refused as exc:
            raise ReadOnlyViolation(
                f"refused: `benchwatch query` reads only the store's tables and views, with the functions "
                f"docs/deploy.md lists; {exc}") from None


def _check_before_open(statements: list, *, lake: bool) -> None:
    """`check_allowed` without the store's table names, on a private parser (no file access), so
    that a refusal comes before any wait for a lock or a catalog; run_query judges the table
    names once the store is open."""
    parser = duckdb.connect(config={"enable_external_access": False, "autoinstall_known_extensions": False,
                                    "autoload_known_extensions": False})
    try:
        check_allowed(parser, statements, store=False, lake=lake)
    finally:
        parser.close()


def _has_schema(con: duckdb.DuckDBPyConnection) -> bool:
    """The file holds benchwatch's schema table (else it is someone else's DuckDB file)."""
    row = con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'schema_migrations'").fetchone()
    return bool(row and row[0])


def whole_message(exc: BaseException) -> str:
    """DuckDB's whole message: its first line, then its hints ("Did you mean …", "Candidate
    bindings: …") and the `LINE 1: …` pointer, trailing blank lines dropped. The caller's
    prefix ("query failed: ") and that first line make the one-line summary."""
    text = redact(str(exc)).strip("\n").rstrip()     # a connection string's password never shown
    return text or type(exc).__name__


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
    try:
        with bound:
            worker.start()
            try:
                while not done.wait(min(0.2, max(deadline - time.monotonic(), 0.0))):
                    shutdown.check()     # SIGTERM's exception can be lost on the way (common.shutdown)
                    if time.monotonic() >= deadline:
                        cut = f"query cut off after {timeout:g} s (the --timeout limit; raise it for a longer query)"
                        break
            except KeyboardInterrupt:
                cut = "query interrupted (Ctrl-C)"
            except BaseException:
                # another signal (SIGTERM's exception): stop the worker before it propagates, as a
                # process exiting with DuckDB still running in a thread aborts
                _wait_uninterrupted(done, 10, con.interrupt)
                raise
            if cut:
                _wait_uninterrupted(done, 10, con.interrupt)
                raise QueryCutOff(cut, interrupted=cut.endswith("(Ctrl-C)"))
    finally:
        if done.is_set():
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

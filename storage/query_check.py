"""Layer 1 of `benchwatch query` (storage/query.py): which statements may run. Only SELECT-like
statements and a plain EXPLAIN of one (`check_read_only`: EXPLAIN ANALYZE executes its inner
statement, IMPORT DATABASE is refused before anything parses the text), then the allow-list
(`check_allowed`, storage/query_allow.py): every node, function and table of each statement's
parse tree (DuckDB's own `json_serialize_sql`) must be listed, so what is not listed is refused.
"""

from __future__ import annotations

import json
import re

from common.redact import redact
from storage import query_allow as allow
from storage.db import StorageError
from storage.engine import duckdb
from storage.lake import is_lake

ALLOWED_STATEMENTS = {duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN}

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


def whole_message(exc: BaseException) -> str:
    """DuckDB's whole message: its first line, then its hints ("Did you mean …", "Candidate
    bindings: …") and the `LINE 1: …` pointer, trailing blank lines dropped. The caller's
    prefix ("query failed: ") and that first line make the one-line summary."""
    text = redact(str(exc)).strip("\n").rstrip()     # a connection string's password never shown
    return text or type(exc).__name__

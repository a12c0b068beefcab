"""The current definition of every view, one file each, applied when its text changes.

`<name>.sql` in this folder holds `CREATE OR REPLACE VIEW <name>` and the view's `COMMENT ON`
statements (the view and every column); `tables/<name>.sql` holds the comments of a user-facing
table (its definition stays in the numbered migrations). After the migrations, `apply` runs each
file whose SHA-256 differs from the one recorded in `schema_files` (migration 025) and records
the new hash: `CREATE OR REPLACE VIEW` drops a view's comments, so one file holds both and one
hash covers both. The same files serve a DuckDB file and a DuckLake store (which refuses comments
on a view's columns: `lake.translate_view_file` leaves those out there).

A view file may use `{{lower_is_better}}`: the metric kinds whose best value is the smallest
(`common.metrics.METRIC_DIRECTIONS`, the one place a direction is decided), as SQL literals, and
`{{entity_key}}`: the columns within which a model's best variant is chosen
(`common.naming.ENTITY_KEY`: table, population, model), and `{{source_comparisons}}`: the pairs of
tables registry/comparisons.csv declares, as the rows of a VALUES list, and
`{{table_id(benchmark, source, table_version)}}`: a table's id from three column expressions
(`common.table_ids.table_id_sql`, the one SQL spelling of `table_id`). The hash is of the text after that
substitution, so changing a constant re-applies the view.

Views are applied in dependency order (a view naming another view comes after it). A view a
release retires needs a numbered migration that drops it; its row in `schema_files` stays.
"""

from __future__ import annotations

import logging
import re
from functools import lru_cache
from hashlib import sha256
from importlib import resources
from importlib.util import find_spec
from pathlib import Path
from typing import NamedTuple

from storage import lake
from storage.engine import duckdb
from common.comparisons import FILE, parse_comparisons
from common.metrics import METRIC_DIRECTIONS
from common.table_ids import table_id_sql
from common.naming import ENTITY_KEY

log = logging.getLogger("benchwatch.storage")

# Compiled when first used (`files()`: a command that writes views): `query`/`status` only compare hashes.
_VIEW = r"^\s*CREATE\s+OR\s+REPLACE\s+VIEW\s+([a-z_][a-z0-9_]*)\b"
_COMMENT_LINE = r"--[^\n]*"
_WORD = r"[A-Za-z_][A-Za-z0-9_]*"


class SchemaFile(NamedTuple):
    path: str        # relative to this folder: 'latest_scores.sql', 'tables/trends.sql'
    name: str        # the view or table it defines or comments
    sql: str         # placeholders filled
    sha256: str
    is_view: bool


def _comparisons() -> tuple:
    """registry/comparisons.csv, read beside the registry package without importing it (its
    loaders import pandas; `query` and `status` render the views to compare their hashes)."""
    spec = find_spec("registry")
    if spec is None or not spec.submodule_search_locations:
        raise ValueError("the registry package is not installed: registry/comparisons.csv cannot be read")
    path = Path(list(spec.submodule_search_locations)[0]) / FILE
    return parse_comparisons(path.read_text(encoding="utf-8"))


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


@lru_cache(maxsize=1)
def _placeholders() -> dict[str, str]:
    lower = sorted(k for k, v in METRIC_DIRECTIONS.items() if v == "lower")
    # an empty list is one row of NULLs (VALUES needs a row; the view drops it)
    comparisons = ", ".join("(" + ", ".join(_literal(v) for v in (c.kind, c.benchmark, c.source, c.version,
                                                                   c.other_source, c.other_version, c.reason)) + ")"
                            for c in _comparisons()) or "(" + ", ".join(["NULL"] * 7) + ")"
    return {"{{lower_is_better}}": ", ".join(_literal(k) for k in lower) or "NULL",
            "{{entity_key}}": ", ".join(ENTITY_KEY),
            "{{source_comparisons}}": comparisons}


_TABLE_ID_CALL = r"\{\{table_id\(\s*([^,(){}]+?)\s*,\s*([^,(){}]+?)\s*,\s*([^,(){}]+?)\s*\)\}\}"


def _render(text: str) -> str:
    for key, value in _placeholders().items():
        text = text.replace(key, value)
    text = re.sub(_TABLE_ID_CALL, lambda m: table_id_sql(m[1], m[2], m[3]), text)
    if "{{" in text:
        raise ValueError(f"unknown placeholder in a view file: {text[text.index('{{'):][:40]!r}")
    return text


@lru_cache(maxsize=1)
def _shipped() -> tuple[SchemaFile, ...]:
    """Every shipped file in folder and name order, rendered and hashed (read once per process)."""
    root = resources.files(__name__)
    out = []
    for folder, prefix in ((root, ""), (root / "tables", "tables/")):
        for entry in sorted(folder.iterdir(), key=lambda e: e.name):
            if entry.name.endswith(".sql"):
                sql = _render(entry.read_text(encoding="utf-8"))
                out.append(SchemaFile(prefix + entry.name, entry.name[:-4], sql, sha256(sql.encode()).hexdigest(),
                                      not prefix))
    return tuple(out)


@lru_cache(maxsize=1)
def files() -> tuple[SchemaFile, ...]:
    """Every shipped file, views in dependency order first, then the tables' comments (read once
    per process)."""
    found: dict[str, SchemaFile] = {}
    tables: list[SchemaFile] = []
    for f in _shipped():
        if f.is_view:
            declared = re.findall(_VIEW, f.sql, re.IGNORECASE | re.MULTILINE)
            if declared != [f.name]:
                raise ValueError(f"storage/views/{f.path} must define exactly the view {f.name} (found {declared})")
            found[f.name] = f
        else:
            tables.append(f)
    return tuple(_dependency_order(found)) + tuple(tables)


def shipped_hashes() -> dict[str, str]:
    """{path: SHA-256} of every shipped file: what `stale` compares, without ordering the views."""
    return {f.path: f.sha256 for f in _shipped()}


def _dependency_order(views: dict[str, SchemaFile]) -> list[SchemaFile]:
    """Views so that each comes after every view its definition names (comments ignored)."""
    deps = {}
    for name, f in views.items():
        body = re.sub(_COMMENT_LINE, "", f.sql.split("COMMENT ON", 1)[0])
        deps[name] = (set(re.findall(_WORD, body)) & set(views)) - {name}
    out: list[SchemaFile] = []
    done: set[str] = set()
    while len(done) < len(views):
        ready = sorted(n for n in views if n not in done and deps[n] <= done)
        if not ready:
            raise ValueError(f"views that name each other: {sorted(set(views) - done)}")
        for n in ready:
            out.append(views[n])
            done.add(n)
    return out


def view_names() -> list[str]:
    """The views this code defines (every user-facing view)."""
    return [f.name for f in files() if f.is_view]


def commented_tables() -> list[str]:
    """The user-facing tables whose comments this code ships."""
    return [f.name for f in files() if not f.is_view]


def _recorded(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    return dict(con.execute("SELECT path, sha256 FROM schema_files").fetchall())


def stale(con: duckdb.DuckDBPyConnection) -> bool:
    """A shipped file the database has not applied in its present text (one statement)."""
    try:
        recorded = _recorded(con)
    except duckdb.CatalogException:   # before migration 025
        return True
    return changed(recorded)


def changed(recorded: dict[str, str]) -> bool:
    """A shipped file whose hash differs from `recorded` ({path: sha256} of `schema_files`)."""
    return any(recorded.get(path) != digest for path, digest in shipped_hashes().items())


def apply(con: duckdb.DuckDBPyConnection, *, every: bool = False) -> list[str]:
    """Run every file whose hash differs from the recorded one (`every`: all of them, after a
    migration, which may have rebuilt a table and lost its comments), in one transaction; the
    paths run. The views depending on a re-created view are not touched (DuckDB binds a view's
    query when it is read)."""
    recorded = _recorded(con)
    todo = [f for f in files() if every or recorded.get(f.path) != f.sha256]
    if not todo:
        return []
    on_lake = lake.is_lake(con)
    con.execute("BEGIN TRANSACTION")
    try:
        for f in todo:
            try:
                con.execute(lake.translate_view_file(f.sql) if on_lake and f.is_view else f.sql)
            except duckdb.Error as exc:
                raise duckdb.Error(f"storage/views/{f.path}: {exc}") from exc
        # the applied files' hashes in two statements, not two per file
        paths, digests = [f.path for f in todo], [f.sha256 for f in todo]
        con.execute("DELETE FROM schema_files WHERE list_contains(?, path)", [paths])
        con.execute("INSERT INTO schema_files SELECT unnest(?), unnest(?), now()", [paths, digests])
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")
    log.info("[storage] applied %s", ", ".join(f"views/{f.path}" for f in todo))
    return [f.path for f in todo]


def readme_table(con: duckdb.DuckDBPyConnection) -> str:
    """docs/query.md's table of views and user-facing tables, from their comments in `con` (a
    migrated database): `name` | what one row is. tests/integration/test_schema_comments.py keeps that page
    equal to it."""
    lines = ["| view / table | one row per |", "|---|---|"]
    views = dict(con.execute("SELECT view_name, comment FROM duckdb_views() WHERE NOT internal").fetchall())
    tables = dict(con.execute("SELECT table_name, comment FROM duckdb_tables()").fetchall())
    cell = lambda text: (text or "").replace("|", "\\|")  # noqa: E731
    for name in sorted(view_names()):
        lines.append(f"| `{name}` | {cell(views.get(name))} |")
    for name in sorted(commented_tables()):
        lines.append(f"| `{name}` (table) | {cell(tables.get(name))} |")
    return "\n".join(lines)

"""The numbered migrations shipped here, read once per process, and what is derived from them
(storage.db applies them; a DuckLake store gets them translated by storage.lake)."""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources

_MIGRATION_NAME = r"^(\d{3})_([a-z0-9_]+)\.sql$"   # compiled when first used (`re`'s cache)


@lru_cache(maxsize=1)
def migrations() -> tuple[tuple[int, str, str], ...]:
    """(version, name, sql) of every numbered migration shipped in storage/migrations/ (read
    once per process: every connection checks them)."""
    found = []
    for entry in resources.files("storage.migrations").iterdir():
        m = re.match(_MIGRATION_NAME, entry.name)
        if m:
            found.append((int(m[1]), m[2], entry.read_text(encoding="utf-8")))
    found.sort()
    versions = [v for v, _, _ in found]
    if len(versions) != len(set(versions)):
        raise RuntimeError(f"two migrations share a number: {versions}")
    return tuple(found)



_CREATE_TABLE = r"(?i)^\s*CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?([a-z_][a-z0-9_]*)\s*\("
_NEXTVAL_COLUMN = r"(?i)([a-z_][a-z0-9_]*)\s+[A-Z]+\s+PRIMARY\s+KEY\s+DEFAULT\s+nextval\s*\(\s*'([^']+)'\s*\)"


@lru_cache(maxsize=1)
def sequence_ids() -> dict[str, tuple[str, str]]:
    """{table: (id column, sequence)} of the tables whose id a sequence fills on a DuckDB file,
    read from the migrations' `CREATE TABLE … DEFAULT nextval('…')` (the one description of the
    schema); a DuckLake store has no sequences, so `next_ids` allocates there
    (tests/system/test_ducklake.py checks this against a migrated database)."""
    found: dict[str, tuple[str, str]] = {}
    for _, _, sql in migrations():
        for statement in re.sub(r"--[^\n]*", "", sql).split(";"):
            table = re.match(_CREATE_TABLE, statement)
            column = re.search(_NEXTVAL_COLUMN, statement) if table else None
            if table and column:
                found[table[1].lower()] = (column[1], column[2])
    return found


@lru_cache(maxsize=1)
def latest_version() -> int:
    """The newest migration this code ships (from the file names: nothing read)."""
    return max((int(m[1]) for entry in resources.files("storage.migrations").iterdir()
                if (m := re.match(_MIGRATION_NAME, entry.name))), default=0)

"""A leaderboard table's id, spelled once (issue 52).

A table is (benchmark, source, table_version) (registry/tables.py owns what a table is); its
id is ``benchmark:source``, or ``benchmark:source:version`` when the source states a version.
Stored rows carry the three parts as columns beside the id (migration 084), so nothing needs to
split an id; the id is built here only: `table_id` for Python, `table_id_sql` for SQL (a view
file writes ``{{table_id(benchmark, source, table_version)}}``, storage.views renders it), and
tests/integration/test_tables.py checks that both spell every key alike. `table_key` is the
inverse, for a text that arrives as an id alone (an alert's label, an analysis unit's key).
Pure: no pandas, no DuckDB.
"""

from __future__ import annotations

from typing import Any, NamedTuple

SEPARATOR = ":"


def _text(value: Any) -> str:
    """'' for a missing part (None, NaN, ''), else its text."""
    return "" if value is None or (isinstance(value, float) and value != value) else str(value)   # NaN != NaN


def table_id(benchmark: Any, source: Any, table_version: Any = "") -> str:
    """The id of the table a row belongs to: ``benchmark:source`` or ``benchmark:source:version``."""
    version = _text(table_version)
    head = f"{_text(benchmark)}{SEPARATOR}{_text(source)}"
    return f"{head}{SEPARATOR}{version}" if version else head


def table_id_sql(benchmark: str, source: str, table_version: str) -> str:
    """`table_id` as a SQL expression of three column expressions (trusted view text, never input)."""
    sep = "'" + SEPARATOR + "'"
    return (f"{benchmark} || {sep} || {source}\n"
            f"           || CASE WHEN coalesce({table_version}, '') = '' THEN '' ELSE {sep} || {table_version} END")


class TableKey(NamedTuple):
    """A table id's parts (`table_id` is their one spelling)."""
    benchmark: str
    source: str
    table_version: str


def table_key(table_id: Any) -> TableKey:
    """The parts of a table id: 'livebench:livebench:2024-11-25' -> ('livebench', 'livebench',
    '2024-11-25'); a missing part is ''. The inverse of `table_id`, the one place that splits it."""
    parts = _text(table_id).split(SEPARATOR, 2)
    parts += [""] * (3 - len(parts))
    return TableKey(*parts)

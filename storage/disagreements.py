"""The read of `source_disagreements` (storage/views/source_disagreements.sql): what status, the
report and the `source_disagreement` alert rule hand to analysis/disagreement.py."""

from __future__ import annotations

from typing import TYPE_CHECKING

from storage.engine import duckdb

if TYPE_CHECKING:      # `status` counts first: no pandas when no model has two sources
    import pandas as pd

ORDER = "ORDER BY benchmark, model, table_a, table_b"


# Every row of the view pairs two sources' rows of one benchmark (its `shared`: benchmarks two
# sources measure), so a history where no benchmark has rows from two sources has none: a grouped
# scan of one base table says so without binding the view (the larger part of a small `status`).
_TWO_SOURCES = "SELECT EXISTS (SELECT 1 FROM scores GROUP BY benchmark HAVING min(source) <> max(source))"


def count_source_disagreements(con: duckdb.DuckDBPyConnection) -> int:
    """How many rows the view has (no DataFrame; 0 without a benchmark two sources measure)."""
    shared = con.execute(_TWO_SOURCES).fetchone()
    if not (shared and shared[0]):
        return 0
    row = con.execute("SELECT count(*) FROM source_disagreements").fetchone()
    return int(row[0]) if row else 0


def read_source_disagreements(con: duckdb.DuckDBPyConnection) -> pd.DataFrame | None:
    """Every row of the view (empty, with its columns, on a database without pairs); None on a
    database from before the view (read only, not migrated)."""
    try:
        return con.execute(f"SELECT * FROM source_disagreements {ORDER}").df()
    except duckdb.CatalogException:
        return None

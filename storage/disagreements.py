"""When sources disagree: the view `source_disagreements` (storage/views/source_disagreements.sql)
that `analyze` reads, and the result it stores (migration 085, analysis/disagreement.py) that the
`source_disagreement` alert rule, `status` and the report read: one decision, read by all three."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from storage.db import insert_frame, transaction
from storage.engine import duckdb

if TYPE_CHECKING:      # `status` counts first: no pandas when nothing is stored
    import pandas as pd

    from analysis.disagreement import Disagreements

ORDER = "ORDER BY benchmark, model, table_a, table_b"
# meta's key for when an analysis last stored the decision: before any, there is none to read (an
# empty table would say "no disagreement" and resolve what an older code's analysis announced)
STORED_AT = "disagreements_stored_at"


def read_source_disagreements(con: duckdb.DuckDBPyConnection) -> pd.DataFrame | None:
    """Every row of the view, what the analysis reads (empty, with its columns, on a database
    without pairs); None on a database from before the view (read only, not migrated)."""
    try:
        return con.execute(f"SELECT * FROM source_disagreements {ORDER}").df()
    except duckdb.CatalogException:
        return None


def store_disagreements(con: duckdb.DuckDBPyConnection, rows: pd.DataFrame, offsets: pd.DataFrame, *,
                        run_at: datetime) -> int:
    """Replace the stored result by `rows` and `offsets` (analysis.disagreement.as_rows) in one
    transaction, and say when (meta `STORED_AT`); returns the rows written."""
    import pandas as pd     # here: `status` imports this module and loads no pandas without rows
    with transaction(con):
        con.execute("DELETE FROM disagreements")
        con.execute("DELETE FROM disagreement_offsets")
        if len(rows):
            insert_frame(con, "disagreements", rows.assign(run_at=run_at))
        if len(offsets):
            insert_frame(con, "disagreement_offsets", offsets.assign(run_at=run_at))
        insert_frame(con, "meta", pd.DataFrame({"key": [STORED_AT], "value": [run_at.isoformat()]}), or_replace=["key"])
    return len(rows)


def count_disagreements(con: duckdb.DuckDBPyConnection) -> int:
    """How many rows of the view the last analysis stored (no DataFrame: 0 before any)."""
    try:
        row = con.execute("SELECT count(*) FROM disagreements").fetchone()
    except duckdb.CatalogException:    # a database from before migration 085, read only
        return 0
    return int(row[0]) if row else 0


def read_disagreement_rows(con: duckdb.DuckDBPyConnection) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """The stored rows and offsets as `analyze` wrote them (analysis.disagreement.from_rows lays
    them out as its result); None before an analysis stored them (or on a database from before
    migration 085, read only)."""
    try:
        if con.execute("SELECT count(*) FROM meta WHERE key = ?", [STORED_AT]).fetchone() == (0,):
            return None
        rows = con.execute("SELECT * EXCLUDE (run_at) FROM disagreements ORDER BY role, pos").df()
        offsets = con.execute("SELECT * EXCLUDE (run_at) FROM disagreement_offsets ORDER BY pos").df()
    except duckdb.CatalogException:
        return None
    return rows, offsets


def read_disagreements(con: duckdb.DuckDBPyConnection) -> Disagreements | None:
    """The last analysis' result; None before an analysis stored one (the rule's alerts then keep
    their state)."""
    from analysis.disagreement import from_rows     # here: pandas, which `status` loads only when there are rows
    stored = read_disagreement_rows(con)
    return None if stored is None else from_rows(*stored)

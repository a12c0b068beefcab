"""The read of `source_disagreements` (storage/views/source_disagreements.sql): what status, the
report and the `source_disagreement` alert rule hand to analysis/disagreement.py."""

from __future__ import annotations

import pandas as pd

from storage.engine import duckdb

ORDER = "ORDER BY benchmark, model, table_a, table_b"


def read_source_disagreements(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Every row of the view (empty, with its columns, on a database without pairs)."""
    return con.execute(f"SELECT * FROM source_disagreements {ORDER}").df()

"""The stored committed saturation level (migration 020): read every snapshot-level row of the
level series, write back `level`, `level_since`, `pending_bin`, `pending_count`, `pending_since` (055).

The level itself is computed by analysis.hysteresis.series_levels (jobs/relations/levels.py is the relation);
a series is analysis.constants.SERIES_KEY plus k and alpha. `saturation_latest` (SELECT * of
`saturation`) shows the stored columns of each series' newest row.
"""

from __future__ import annotations

import logging
from typing import Sequence

import pandas as pd

from common.time import naive_utc_columns
from storage.db import quote_ident, registered_frame, transaction
from storage.engine import duckdb

log = logging.getLogger("benchwatch.storage")


def read_level_inputs(con: duckdb.DuckDBPyConnection, key: Sequence[str]) -> pd.DataFrame:
    """Every snapshot-level saturation row's series key, k, alpha, as_of, s_index and bin_probs."""
    cols = ", ".join(quote_ident(c) for c in (*key, "k", "alpha", "as_of", "s_index", "bin_probs"))
    df = con.execute(f"SELECT {cols} FROM saturation ORDER BY {', '.join(quote_ident(c) for c in key)}, k, alpha, "
                     "as_of").df()
    return naive_utc_columns(df, "as_of")


def store_levels(con: duckdb.DuckDBPyConnection, levels: pd.DataFrame, key: Sequence[str]) -> int:
    """Write the level columns onto the rows of `levels` (matched on key, k, alpha, as_of); returns
    how many rows changed. One transaction."""
    if not len(levels):
        return 0
    frame = levels[[*key, "k", "alpha", "as_of", "level", "level_since", "pending_bin", "pending_count",
                    "pending_since"]].copy()
    for col in ("level_since", "pending_since"):
        frame[col] = pd.to_datetime(frame[col]).astype("datetime64[us]")
    frame["as_of"] = pd.to_datetime(frame["as_of"]).astype("datetime64[us]")
    match = " AND ".join(f"t.{quote_ident(c)} IS NOT DISTINCT FROM f.{quote_ident(c)}" for c in (*key, "k", "alpha"))
    with transaction(con), registered_frame(con, frame) as rel:
        row = con.execute(f"""
            SELECT count(*) FROM saturation t JOIN {rel} f ON {match}
                AND t.as_of = CAST(f.as_of AS TIMESTAMPTZ)
            WHERE t.level IS DISTINCT FROM f.level
               OR t.level_since IS DISTINCT FROM CAST(f.level_since AS TIMESTAMPTZ)
               OR t.pending_bin IS DISTINCT FROM f.pending_bin
               OR t.pending_count IS DISTINCT FROM f.pending_count
               OR t.pending_since IS DISTINCT FROM CAST(f.pending_since AS TIMESTAMPTZ)""").fetchone()
        changed = int(row[0]) if row else 0
        if changed:
            con.execute(f"""
                UPDATE saturation t SET level = f.level, level_since = CAST(f.level_since AS TIMESTAMPTZ),
                       pending_bin = f.pending_bin, pending_count = f.pending_count,
                       pending_since = CAST(f.pending_since AS TIMESTAMPTZ)
                FROM {rel} f WHERE {match} AND t.as_of = CAST(f.as_of AS TIMESTAMPTZ)""")
    log.info("[saturation] levels: %d row(s) of %d changed", changed, len(frame))
    return int(changed)

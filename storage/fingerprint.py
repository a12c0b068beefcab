"""The input fingerprint of an analysis run (migration 014): skip an analysis whose inputs are
those of the last one (issue 12, "unchanged cycle").

The fingerprint hashes, in SQL, every stored table the analysis reads (row count and an
order-independent XOR of row hashes), the snapshots without their first/last-seen times (a
cycle that sees the same content again touches those and nothing else), and the caller's
parameters (analysis constants and the UTC day of `now`: trends and forecasts are relative to
the day, so a new day recomputes). Any insert, delete or update of an input row changes it.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any

import duckdb
import pandas as pd

from storage.db import insert_frame

# (table, columns left out): what `benchwatch analyze` reads (views derive from these)
INPUT_TABLES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("snapshots", ("first_seen", "last_seen")),
    ("scores", ()),
    ("item_results", ()),
    ("model_dates", ()),
    ("benchmarks", ()),
    ("models", ()),
    ("aliases", ()),
)


def input_fingerprint(con: duckdb.DuckDBPyConnection, parameters: dict[str, Any]) -> str:
    """sha256 hex of the analysis inputs and `parameters` (JSON-serializable, e.g. constants)."""
    parts = []
    for table, leave_out in INPUT_TABLES:
        cols = f"* EXCLUDE ({', '.join(leave_out)})" if leave_out else "*"
        count, xor = con.execute(f"SELECT count(*), coalesce(bit_xor(hash(t)), 0) "
                                 f"FROM (SELECT {cols} FROM {table}) t").fetchone()
        parts.append(f"{table}:{int(count)}:{int(xor)}")
    parts.append(json.dumps(parameters, sort_keys=True, default=str))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def stored_fingerprint(con: duckdb.DuckDBPyConnection, part: str = "analyze") -> str | None:
    row = con.execute("SELECT fingerprint FROM analysis_inputs WHERE part = ?", [part]).fetchone()
    return None if row is None else str(row[0])


def stored_summary(con: duckdb.DuckDBPyConnection, part: str = "analyze") -> list[dict] | None:
    """The summary records stored with the fingerprint (None if there are none)."""
    row = con.execute("SELECT summary FROM analysis_inputs WHERE part = ?", [part]).fetchone()
    return None if row is None or row[0] is None else json.loads(row[0])


def store_fingerprint(con: duckdb.DuckDBPyConnection, fingerprint: str, computed_at: datetime,
                      summary: list[dict] | None = None, part: str = "analyze") -> None:
    row = pd.DataFrame({"part": [part], "fingerprint": [fingerprint], "computed_at": [computed_at],
                        "summary": pd.Series([None if summary is None else json.dumps(summary, default=str)],
                                             dtype="object")})
    insert_frame(con, "analysis_inputs", row, or_replace=["part"])


def clear_fingerprint(con: duckdb.DuckDBPyConnection, part: str = "analyze") -> None:
    """Forget the fingerprint (an analysis failed or was partial: the next cycle recomputes)."""
    con.execute("DELETE FROM analysis_inputs WHERE part = ?", [part])

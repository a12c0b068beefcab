"""The responses as received: their bytes kept by SHA-256 (compressed), the fetch log, and the
responses a parse failed on, kept for a later reparse.
"""

from __future__ import annotations

import hashlib
import zlib
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import cached_property
from typing import Sequence

import pandas as pd

from storage.db import insert_frame
from storage.engine import duckdb


@dataclass(frozen=True)
class Response:
    """One response as received: its file name (URL's last path segment) and raw bytes."""

    file_name: str
    content: bytes

    @cached_property
    def sha256(self) -> str:
        return hashlib.sha256(self.content).hexdigest()


BLOB_ZLIB_LEVEL = 6
# Above this size (a large file given to `benchwatch ingest`, never a scraped page) zlib's fastest
# level: on a file that large, level 6 costs about as much as the rest of the ingest and saves little space.
LARGE_BLOB_BYTES = 8 * 1024 * 1024
LARGE_BLOB_ZLIB_LEVEL = 1


def compress_blobs(responses: Sequence[Response]) -> list[bytes]:
    """The stored form of each response's bytes (zlib releases the GIL: callers may run it in a thread)."""
    return [zlib.compress(r.content, LARGE_BLOB_ZLIB_LEVEL if len(r.content) > LARGE_BLOB_BYTES else BLOB_ZLIB_LEVEL)
            for r in responses]


def store_blobs(con: duckdb.DuckDBPyConnection, responses: Sequence[Response], now: datetime | None = None) -> None:
    """Keep raw bytes by SHA-256 (also for responses that failed to parse, for re-parsing later)."""
    blob_df = pd.DataFrame({
        "sha256": [r.sha256 for r in responses],
        "size": [len(r.content) for r in responses],
        "compression": "zlib",
        "content": compress_blobs(responses),
        "first_seen": now or datetime.now(timezone.utc),
    }).drop_duplicates("sha256")
    insert_frame(con, "blobs", blob_df, skip_existing="sha256")


def record_fetches(con: duckdb.DuckDBPyConnection, rows: pd.DataFrame) -> None:
    """Append fetch attempts (one row per HTTP attempt, replay read or ingested file)."""
    if len(rows):
        insert_frame(con, "fetches", rows)


def load_blob(con: duckdb.DuckDBPyConnection, sha256: str) -> bytes | None:
    row = con.execute("SELECT compression, content FROM blobs WHERE sha256 = ?", [sha256]).fetchone()
    if row is None:
        return None
    return zlib.decompress(row[1]) if row[0] == "zlib" else bytes(row[1])


def unparsed_responses(con: duckdb.DuckDBPyConnection, sources: Sequence[str] | None = None) -> pd.DataFrame:
    """Responses kept after a parse failure that no snapshot holds yet: source, run_id, url, sha256, started_at.

    The rows of one (source, run_id) are the primary response and its aux responses of that run.
    """
    df = con.execute("""
        WITH failed AS (
            SELECT DISTINCT source, run_id FROM fetches
            WHERE status = 'parse_error' AND sha256 IS NOT NULL)
        SELECT f.source, f.run_id, f.url, f.sha256, f.started_at, f.status
        FROM fetches f JOIN failed USING (source, run_id)
        WHERE f.sha256 IS NOT NULL AND f.status IN ('ok', 'parse_error')
          AND f.sha256 IN (SELECT sha256 FROM blobs)
        ORDER BY f.source, f.run_id, f.id""").df()
    if sources:
        df = df[df["source"].isin(list(sources))]
    return df.reset_index(drop=True)

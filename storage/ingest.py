"""Store one parsed response as a snapshot: raw bytes, scores, items, model dates, rejects.

One transaction per snapshot, so a failure leaves every table as it was. Idempotent by
content hash: the same bytes of the same source again add no rows.
"""

from __future__ import annotations

import hashlib
import json
import logging
import zlib
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Sequence

import duckdb
import pandas as pd

from scrapers.base import ParsedSnapshot
from storage.db import transaction
from storage.registry_sync import NameMapper

log = logging.getLogger("benchwatch.storage")


@dataclass(frozen=True)
class Response:
    """One response as received: its file name (URL's last path segment) and raw bytes."""

    file_name: str
    content: bytes

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.content).hexdigest()


@dataclass
class IngestResult:
    source: str
    status: str                    # new | unchanged
    snapshot_id: int
    sha256: str
    n_scores: int = 0
    n_items: int = 0
    n_models: int = 0
    n_rejects: int = 0
    warnings: list[str] = field(default_factory=list)

    def summary(self) -> str:
        if self.status == "unchanged":
            return f"[{self.source}] unchanged: content already stored as snapshot {self.snapshot_id}"
        parts = [f"{self.n_scores} scores"]
        if self.n_items:
            parts.append(f"{self.n_items} item results")
        if self.n_models:
            parts.append(f"{self.n_models} model records")
        if self.n_rejects:
            parts.append(f"{self.n_rejects} rejected rows (see the rejects table)")
        return f"[{self.source}] new snapshot {self.snapshot_id}: " + ", ".join(parts)


def snapshot_hash(responses: Sequence[Response]) -> str:
    if len(responses) == 1:
        return responses[0].sha256
    return hashlib.sha256("\n".join(r.sha256 for r in responses).encode()).hexdigest()


def find_snapshot(con: duckdb.DuckDBPyConnection, source: str, sha256: str) -> int | None:
    row = con.execute("SELECT id FROM snapshots WHERE source = ? AND sha256 = ?", [source, sha256]).fetchone()
    return None if row is None else int(row[0])


def mark_seen(con: duckdb.DuckDBPyConnection, snapshot_id: int, seen_at: datetime) -> None:
    con.execute("UPDATE snapshots SET last_seen = greatest(last_seen, ?) WHERE id = ?", [seen_at, snapshot_id])


def store_snapshot(con: duckdb.DuckDBPyConnection, parsed: ParsedSnapshot, responses: Sequence[Response], *,
                   observed_at: datetime, origin: str, parser_version: int) -> IngestResult:
    """Write a parsed snapshot (or note that its content is already stored)."""
    source = parsed.source
    sha = snapshot_hash(responses)
    now = datetime.now(timezone.utc)
    existing = find_snapshot(con, source, sha)
    if existing is not None:
        mark_seen(con, existing, now)
        return IngestResult(source, "unchanged", existing, sha)

    mapper = NameMapper.from_db(con)
    with transaction(con):
        snapshot_id = int(con.execute("SELECT nextval('snapshot_id_seq')").fetchone()[0])
        store_blobs(con, responses, now)

        scores = parsed.scores
        bench = mapper.map("benchmark", scores["benchmark"])
        tags = scores["model_tag"] if "model_tag" in scores.columns else pd.Series(None, index=scores.index, dtype="object")
        ident = mapper.identify(pd.DataFrame({"source": source, "snapshot_id": snapshot_id, "benchmark": bench,
                                              "model_raw": scores["model"], "model_tag": tags}))
        sc = pd.DataFrame({
            "snapshot_id": snapshot_id, "source": source,
            "benchmark": bench, "benchmark_raw": scores["benchmark"],
            "model": ident["model"], "model_raw": scores["model"],
            "variant": ident["variant"], "population": ident["population"], "model_tag": tags,
            "underlying": ident["underlying"],
            "setting": scores["setting"], "score": scores["score"], "raw_value": scores["raw_value"],
            "metric": scores["metric"], "stderr": scores["stderr"], "ci_low": scores["ci_low"],
            "ci_high": scores["ci_high"], "n_items": scores["n_items"],
            "model_release_date": scores["model_release_date"], "knowledge_cutoff": scores["knowledge_cutoff"],
            "evaluated_at": scores["evaluated_at"].dt.tz_localize("UTC"), "excluded_reason": scores["excluded_reason"],
        })
        if len(sc):
            con.execute("INSERT INTO scores BY NAME SELECT * FROM sc")

        items = parsed.items
        if len(items):
            it = pd.DataFrame({
                "snapshot_id": snapshot_id, "source": source, "benchmark": mapper.map("benchmark", items["benchmark"]),
                "model": mapper.map("model", items["model"]), "model_raw": items["model"],
                "item_id": items["item_id"], "item_date": items["item_date"], "difficulty": items["difficulty"],
                "platform": items["platform"], "score": items["score"],
            })
            con.execute("INSERT INTO item_results BY NAME SELECT * FROM it")

        claims = _date_claims(parsed, mapper, source, snapshot_id, observed_at)
        if len(claims):
            con.execute("INSERT INTO model_dates BY NAME SELECT * FROM claims")

        rejects = parsed.rejects
        if len(rejects):
            rj = pd.DataFrame({"snapshot_id": snapshot_id, "source": source,
                               "file_name": responses[0].file_name, "row_json": rejects["row"],
                               "reason": rejects["reason"], "created_at": now})
            con.execute("INSERT INTO rejects BY NAME SELECT * FROM rj")

        con.execute(
            """INSERT INTO snapshots (id, source, sha256, blob_sha256, file_names, observed_at, first_seen, last_seen,
                                      origin, parser_version, n_scores, n_items, n_models, n_rejects, warnings, meta)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            [snapshot_id, source, sha, [r.sha256 for r in responses], [r.file_name for r in responses],
             observed_at, now, now, origin, parser_version, len(sc), len(items), len(parsed.models),
             len(rejects), list(parsed.warnings), json.dumps(parsed.meta, default=str)])
    result = IngestResult(source, "new", snapshot_id, sha, len(sc), len(items), len(parsed.models),
                          len(rejects), list(parsed.warnings))
    log.info("%s", result.summary())
    return result


def _date_claims(parsed: ParsedSnapshot, mapper: NameMapper, source: str, snapshot_id: int,
                 observed_at: datetime) -> pd.DataFrame:
    """Model date claims from a metadata frame and from dates printed next to scores."""
    frames = []
    m = parsed.models
    if len(m):
        frames.append(pd.DataFrame({"model_raw": m["model"], "release_date": m["release_date"],
                                    "knowledge_cutoff": m["knowledge_cutoff"],
                                    "provenance": m["provenance"].fillna("leaderboard"), "org": m["org"]}))
    s = parsed.scores
    dated = s[s["model_release_date"].notna() | s["knowledge_cutoff"].notna()]
    if len(dated):
        frames.append(pd.DataFrame({"model_raw": dated["model"], "release_date": dated["model_release_date"],
                                    "knowledge_cutoff": dated["knowledge_cutoff"], "provenance": "leaderboard",
                                    "org": None}))
    if not frames:
        return pd.DataFrame()
    claims = pd.concat(frames, ignore_index=True)
    claims = claims[claims["release_date"].notna() | claims["knowledge_cutoff"].notna()]
    claims = claims.drop_duplicates(["model_raw", "release_date", "knowledge_cutoff", "provenance"])
    claims.insert(0, "model", mapper.map("model", claims["model_raw"]))
    claims["source"] = source
    claims["snapshot_id"] = snapshot_id
    claims["observed_at"] = pd.Timestamp(observed_at).tz_convert("UTC") if pd.Timestamp(observed_at).tzinfo else pd.Timestamp(observed_at, tz="UTC")
    return claims


def store_blobs(con: duckdb.DuckDBPyConnection, responses: Sequence[Response], now: datetime | None = None) -> None:
    """Keep raw bytes by SHA-256 (also for responses that failed to parse, for re-parsing later)."""
    blob_df = pd.DataFrame({
        "sha256": [r.sha256 for r in responses],
        "size": [len(r.content) for r in responses],
        "compression": "zlib",
        "content": [zlib.compress(r.content, 6) for r in responses],
        "first_seen": now or datetime.now(timezone.utc),
    }).drop_duplicates("sha256")
    con.execute("INSERT INTO blobs BY NAME SELECT * FROM blob_df WHERE sha256 NOT IN (SELECT sha256 FROM blobs)")


def record_fetches(con: duckdb.DuckDBPyConnection, rows: pd.DataFrame) -> None:
    """Append fetch attempts (one row per HTTP attempt, replay read or ingested file)."""
    if len(rows):
        con.execute("INSERT INTO fetches BY NAME SELECT * FROM rows")


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

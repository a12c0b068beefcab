"""Store one parsed response as a snapshot: raw bytes, scores, items, model dates, rejects.

One transaction per snapshot, so a failure leaves every table as it was. Idempotent by
content hash: the same bytes of the same source again add no rows.

Guards applied here, for every origin (ingest, fetch, replay, reparse):

- **observed_at** must be a real instant no later than now + `OBSERVED_AT_MAX_SKEW` (a date
  in the future would shadow every later snapshot forever) and no earlier than the release of
  every benchmark in the snapshot minus `OBSERVED_BEFORE_RELEASE_GRACE` (leaderboards often go
  live some weeks before their paper's date, which is the registry's release_date).
- **Shrink guard** (storage/shrink_guard.py): a snapshot in which some table shrank by more than
  `SHRINK_MAX_DROP` of its recent maximum is stored with status `held`; only the tables that shrank
  are kept out. Released when a later collection sees the same content again (`confirmed`) or by
  `benchwatch accept SNAPSHOT` (`accepted`).
- **One row per canonical name**: two rows of one snapshot whose names map to the same
  (benchmark, model, setting) of one table (`table_version`) — `o3` and `O3` — are both stored (distinct `model_raw`); all but
  the first get an `excluded_reason`, so the analysis sees one, and a warning says so.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Sequence

import pandas as pd

from common.snapshot import ParsedSnapshot
from storage.db import insert_frame, next_ids, transaction
from storage.engine import duckdb
from storage.registry_sync import NameMapper
from storage.responses import Response, store_blobs
from storage.shrink_guard import confirm_held, shrink_check

log = logging.getLogger("benchwatch.storage")

# A clock skew tolerated for --observed-at: a date typed in a time zone ahead of UTC.
OBSERVED_AT_MAX_SKEW = timedelta(days=1)
# How long before a benchmark's registry release_date (its paper's date) a leaderboard may
# already have published scores for it.
OBSERVED_BEFORE_RELEASE_GRACE = timedelta(days=90)
SNAPSHOT_STATUSES = ("ok", "held", "confirmed", "accepted")


class IngestRefused(ValueError):
    """Input that must not be stored (a date in the future, before the benchmark existed, …): one line."""


def parse_observed_at(value: Any, *, now: datetime | None = None) -> datetime:
    """`--observed-at` as an aware UTC datetime (None = now); refuses empty, unparseable and future values.

    Naive input is taken as UTC. Later than now + OBSERVED_AT_MAX_SKEW is refused.
    """
    now = now or datetime.now(timezone.utc)
    if value is None:
        return now
    if isinstance(value, str) and not value.strip():
        raise IngestRefused("--observed-at is empty; give a date such as 2025-11-18 or leave it out for now")
    try:
        ts = pd.Timestamp(value)
    except (ValueError, TypeError, OverflowError) as exc:
        raise IngestRefused(f"--observed-at {value!r} is not a date or timestamp (e.g. 2025-11-18)") from exc
    if ts is pd.NaT or pd.isna(ts):
        raise IngestRefused(f"--observed-at {value!r} is not a date or timestamp (e.g. 2025-11-18)")
    ts = ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")
    when = ts.to_pydatetime()
    if when > now + OBSERVED_AT_MAX_SKEW:
        raise IngestRefused(f"observed-at {when:%Y-%m-%d %H:%M} UTC is in the future (now {now:%Y-%m-%d %H:%M} UTC, "
                            f"tolerance {OBSERVED_AT_MAX_SKEW.total_seconds() / 3600:.0f} h); it would shadow every later snapshot")
    return when


def check_observed_after_release(con: duckdb.DuckDBPyConnection, benchmarks: Sequence[str],
                                 observed_at: datetime) -> None:
    """Refuse a snapshot observed before one of its benchmarks existed (registry release_date - grace)."""
    names = sorted({str(b) for b in benchmarks if b is not None})
    if not names:
        return
    row = con.execute("""SELECT id, release_date FROM benchmarks
                         WHERE list_contains(?, id) AND release_date IS NOT NULL
                         ORDER BY release_date DESC, id LIMIT 1""", [names]).fetchone()
    if row is None:
        return
    release = pd.Timestamp(row[1]).tz_localize("UTC")
    if pd.Timestamp(observed_at) < release - OBSERVED_BEFORE_RELEASE_GRACE:
        raise IngestRefused(f"observed-at {observed_at:%Y-%m-%d} is before benchmark {row[0]} existed "
                            f"(released {release:%Y-%m-%d}, grace {OBSERVED_BEFORE_RELEASE_GRACE.days} days)")


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
    held_reason: str = ""          # non-empty: stored with status 'held' (the shrink guard)
    confirmed: bool = False        # unchanged content that released a held snapshot

    def summary(self) -> str:
        if self.status == "unchanged":
            if self.confirmed:
                return (f"[{self.source}] unchanged: content of held snapshot {self.snapshot_id} seen again; "
                        "released (confirmed)")
            return f"[{self.source}] unchanged: content already stored as snapshot {self.snapshot_id}"
        parts = [f"{self.n_scores} scores"]
        if self.n_items:
            parts.append(f"{self.n_items} item results")
        if self.n_models:
            parts.append(f"{self.n_models} model records")
        if self.n_rejects:
            parts.append(f"{self.n_rejects} rejected rows (see the rejects table)")
        line = f"[{self.source}] new snapshot {self.snapshot_id}: " + ", ".join(parts)
        if self.held_reason:
            line += (f"; HELD (not used until confirmed or `benchwatch accept {self.snapshot_id}`): "
                     f"{self.held_reason}")
        return line


def snapshot_hash(responses: Sequence[Response]) -> str:
    if len(responses) == 1:
        return responses[0].sha256
    return hashlib.sha256("\n".join(r.sha256 for r in responses).encode()).hexdigest()


def known_snapshot(con: duckdb.DuckDBPyConnection, source: str, responses: Sequence[Response], *, origin: str,
                   now: datetime | None = None) -> IngestResult | None:
    """The stored snapshot of this exact content (by content hash), marked as seen again, or None.

    Called before parsing: content already stored needs no parse (an unchanged cycle).
    """
    return known_snapshots(con, [(source, responses)], origin=origin, now=now)[0]


def known_snapshots(con: duckdb.DuckDBPyConnection, contents: Sequence[tuple[str, Sequence[Response]]], *,
                    origin: str, now: datetime | None = None) -> list[IngestResult | None]:
    """`known_snapshot` of each (source, responses), in their order: two statements whatever their
    number, a third when a held snapshot is seen again (a cycle settles every unchanged source at
    once)."""
    if not contents:
        return []
    shas = [snapshot_hash(responses) for _, responses in contents]
    found = {(source, sha): (int(sid), status) for source, sha, sid, status in con.execute(
        """SELECT s.source, s.sha256, s.id, s.status FROM snapshots s
           JOIN (SELECT unnest(?::VARCHAR[]) AS source, unnest(?::VARCHAR[]) AS sha256) w
             ON s.source = w.source AND s.sha256 = w.sha256""",
        [[source for source, _ in contents], shas]).fetchall()}
    ids = [found.get((source, sha), (None, None))[0] for (source, _), sha in zip(contents, shas)]
    seen = sorted({i for i in ids if i is not None})
    if not seen:
        return [None] * len(contents)
    now = now or datetime.now(timezone.utc)
    con.execute("UPDATE snapshots SET last_seen = greatest(last_seen, ?) WHERE list_contains(?::BIGINT[], id)",
                [now, seen])
    held = sorted(sid for sid, status in found.values() if status == "held")
    confirmed = set(held) if held and origin in ("fetch", "replay") else set()
    if confirmed:
        confirm_held(con, held, now)
    return [None if i is None else IngestResult(source, "unchanged", i, sha, confirmed=i in confirmed)
            for (source, _), sha, i in zip(contents, shas, ids)]


def store_snapshot(con: duckdb.DuckDBPyConnection, parsed: ParsedSnapshot, responses: Sequence[Response], *,
                   observed_at: datetime, origin: str, parser_version: int) -> IngestResult:
    """Write a parsed snapshot (or note that its content is already stored)."""
    source = parsed.source
    sha = snapshot_hash(responses)
    now = datetime.now(timezone.utc)
    observed_at = parse_observed_at(observed_at, now=now)
    known = known_snapshot(con, source, responses, origin=origin, now=now)
    if known is not None:
        return known

    mapper = NameMapper.from_db(con, {source: parsed.naming})
    scores = parsed.scores
    benchmarks = mapper.map("benchmark", scores["benchmark"])
    models = mapper.map("model", scores["model"])
    check_observed_after_release(con, list(benchmarks) + (list(mapper.map("benchmark", parsed.items["benchmark"]))
                                                          if len(parsed.items) else []), observed_at)
    versions = scores["table_version"].fillna("") if "table_version" in scores.columns \
        else pd.Series("", index=scores.index)
    excluded, warnings = _canonical_duplicates(scores, benchmarks, models, versions)
    with transaction(con):
        snapshot_id = next_ids(con, "snapshots")[0]
        store_blobs(con, responses, now)

        tags = scores["model_tag"] if "model_tag" in scores.columns else pd.Series(None, index=scores.index, dtype="object")
        ident = mapper.identify(pd.DataFrame({"source": source, "snapshot_id": snapshot_id, "benchmark": benchmarks,
                                              "model_raw": scores["model"], "model_tag": tags,
                                              "model_release_date": scores["model_release_date"]}))
        sc = pd.DataFrame({
            "snapshot_id": snapshot_id, "source": source,
            "benchmark": benchmarks, "benchmark_raw": scores["benchmark"],
            "model": ident["model"], "model_raw": scores["model"],
            "variant": ident["variant"], "population": ident["population"], "model_tag": tags,
            "underlying": ident["underlying"],
            "setting": scores["setting"], "score": scores["score"], "raw_value": scores["raw_value"],
            "metric": scores["metric"], "stderr": scores["stderr"], "ci_low": scores["ci_low"],
            "ci_high": scores["ci_high"], "n_items": scores["n_items"],
            "model_release_date": scores["model_release_date"], "knowledge_cutoff": scores["knowledge_cutoff"],
            "evaluated_at": scores["evaluated_at"].dt.tz_localize("UTC"), "excluded_reason": excluded,
            "table_version": scores["table_version"].fillna("") if "table_version" in scores.columns else "",
            "is_reference": scores["is_reference"].fillna(False).astype(bool) if "is_reference" in scores.columns
            else False,
            "reported_by": scores["reported_by"] if "reported_by" in scores.columns else None,
        })
        if len(sc):
            insert_frame(con, "scores", sc)

        items = parsed.items
        if len(items):
            it = pd.DataFrame({
                "snapshot_id": snapshot_id, "source": source, "benchmark": mapper.map("benchmark", items["benchmark"]),
                "model": mapper.map("model", items["model"]), "model_raw": items["model"],
                "item_id": items["item_id"], "item_date": items["item_date"], "difficulty": items["difficulty"],
                "platform": items["platform"], "score": items["score"],
            })
            insert_frame(con, "item_results", it)

        claims = _date_claims(parsed, mapper, source, snapshot_id, observed_at)
        if len(claims):
            insert_frame(con, "model_dates", claims)

        rejects = parsed.rejects
        store_rejects(con, snapshot_id, source, responses[0].file_name, rejects["row"], rejects["reason"], now)

        result = finish_snapshot(con, IngestResult(source, "new", snapshot_id, sha, len(sc), len(items),
                                                   len(parsed.models), len(rejects), list(parsed.warnings) + warnings),
                                 responses, observed_at=observed_at, now=now, origin=origin,
                                 parser_version=parser_version, meta=parsed.meta, max_drop=parsed.shrink_max_drop,
                                 hold=parsed.held_reason)
    return logged(result)


def finish_snapshot(con: duckdb.DuckDBPyConnection, result: IngestResult, responses: Sequence[Response], *,
                    observed_at: datetime, now: datetime, origin: str, parser_version: int,
                    meta: dict, max_drop: float | None = None, hold: str = "") -> IngestResult:
    """The snapshot's own row, written last in its transaction (its rows are in: the shrink guard
    compares their counts); `result` gains the held reason. `max_drop`: the source's own shrink
    limit (None: SHRINK_MAX_DROP); `hold`: the parse's own reason to hold it (a fan-out cap,
    `ParsedSnapshot.held_reason`), which holds the whole snapshot (no table of it is used)."""
    shrunk, held_tables = shrink_check(con, result.source, result.snapshot_id, observed_at, max_drop=max_drop)
    held_reason = "; ".join(r for r in (hold, shrunk) if r)
    if hold:
        held_tables = []          # held whole: the NULL of held_tables (a snapshot held before 041 reads alike)
    con.execute(
        """INSERT INTO snapshots (id, source, sha256, blob_sha256, file_names, observed_at, first_seen, last_seen,
                                  origin, parser_version, n_scores, n_items, n_models, n_rejects, warnings, meta,
                                  status, held_reason, held_tables)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
        [result.snapshot_id, result.source, result.sha256, [r.sha256 for r in responses],
         [r.file_name for r in responses], observed_at, now, now, origin, parser_version, result.n_scores,
         result.n_items, result.n_models, result.n_rejects, result.warnings, json.dumps(meta, default=str),
         "held" if held_reason else "ok", held_reason or None, held_tables or None])
    result.held_reason = held_reason
    return result


def logged(result: IngestResult) -> IngestResult:
    """`result`, logged (a warning when the shrink guard held it)."""
    if result.held_reason:
        log.warning("[%s] snapshot %d held by the shrink guard: %s", result.source, result.snapshot_id,
                    result.held_reason)
    log.info("%s", result.summary())
    return result


def store_rejects(con: duckdb.DuckDBPyConnection, snapshot_id: int, source: str, file_name: str,
                  rows: Sequence[str], reasons: Sequence[str], now: datetime) -> None:
    """The rejected rows of a snapshot (row as JSON, reason), in the order validation found them
    (table reject_rows: the view `rejects` reads them)."""
    if len(rows):
        insert_frame(con, "reject_rows", pd.DataFrame({"snapshot_id": snapshot_id, "source": source, "file_name": file_name,
                                                   "row_json": rows, "reason": reasons, "created_at": now}))


def canonical_duplicate_reason(first_raw: str, canonical: str) -> str:
    """excluded_reason of a row whose name maps to the (benchmark, model, setting) of an earlier row."""
    return f"duplicate of model {first_raw!r} after name mapping (both map to {canonical!r}); first row used"


def canonical_duplicate_warning(n: int, raw: str, canonical: str) -> str:
    return (f"{n} row(s) name a model already in this snapshot after alias mapping "
            f"(e.g. {raw!r} = {canonical!r}); stored, excluded from the analysis")


def _canonical_duplicates(scores: pd.DataFrame, benchmarks: pd.Series, models: pd.Series,
                          versions: pd.Series | None = None) -> tuple[pd.Series, list[str]]:
    """excluded_reason with every row after the first of one canonical (benchmark, model, setting)
    of one table excluded. The table (its `table_version`: a split, a release, a board) is part of
    the key: one model in two splits of an ARC-AGI version is two results, not a duplicate."""
    excluded = scores["excluded_reason"].fillna("").astype("object").reset_index(drop=True)
    version = list(versions.astype(str)) if versions is not None else [""] * len(scores)
    key = pd.DataFrame({"b": list(benchmarks), "m": list(models), "s": list(scores["setting"].fillna("")),
                        "v": version})
    usable = excluded.eq("")
    dup = key[usable].duplicated(keep="first").reindex(key.index, fill_value=False)
    warnings = []
    if dup.any():
        first = key[usable].drop_duplicates(keep="first")
        raw = scores["model"].reset_index(drop=True)
        for i in dup[dup].index:
            k = key.loc[i]
            j = first[(first["b"] == k["b"]) & (first["m"] == k["m"]) & (first["s"] == k["s"])
                      & (first["v"] == k["v"])].index[0]
            excluded[i] = canonical_duplicate_reason(raw[j], k["m"])
        warnings.append(canonical_duplicate_warning(int(dup.sum()), raw[dup[dup].index[0]],
                                                    key.loc[dup[dup].index[0], "m"]))
    return excluded, warnings


def accept_snapshot(con: duckdb.DuckDBPyConnection, snapshot_id: int, *, now: datetime | None = None) -> str:
    """`benchwatch accept`: release a held snapshot. Returns its previous status; raises IngestRefused."""
    row = con.execute("SELECT status, source FROM snapshots WHERE id = ?", [snapshot_id]).fetchone()
    if row is None:
        raise IngestRefused(f"no snapshot {snapshot_id} (see `benchwatch status`)")
    if row[0] != "held":
        return str(row[0])
    con.execute("UPDATE snapshots SET status = 'accepted', released_at = ? WHERE id = ?",
                [now or datetime.now(timezone.utc), snapshot_id])
    log.info("[%s] snapshot %d accepted", row[1], snapshot_id)
    return "held"


def _date_claims(parsed: ParsedSnapshot, mapper: NameMapper, source: str, snapshot_id: int,
                 observed_at: datetime) -> pd.DataFrame:
    """Model date claims from a metadata frame and from dates printed next to scores; a metadata
    row that names only the model's organisation or its page (`link`) is kept too (a statement about the model the
    view learned_models reads; model_cutoffs, the analysis' claims, leaves it out)."""
    frames = []
    m = parsed.models
    if len(m):
        frames.append(pd.DataFrame({"model_raw": m["model"], "release_date": m["release_date"],
                                    "knowledge_cutoff": m["knowledge_cutoff"],
                                    "provenance": m["provenance"].fillna("leaderboard"), "org": m["org"],
                                    "link": m["link"] if "link" in m.columns else None}))
    s = parsed.scores
    dated = s[s["model_release_date"].notna() | s["knowledge_cutoff"].notna()]
    if len(dated):
        frames.append(pd.DataFrame({"model_raw": dated["model"], "release_date": dated["model_release_date"],
                                    "knowledge_cutoff": dated["knowledge_cutoff"], "provenance": "leaderboard",
                                    "org": None, "link": None}))
    if not frames:
        return pd.DataFrame()
    claims = pd.concat(frames, ignore_index=True)
    claims = claims[claims["release_date"].notna() | claims["knowledge_cutoff"].notna() | claims["org"].notna()
                    | claims["link"].notna()]
    claims = claims.drop_duplicates(["model_raw", "release_date", "knowledge_cutoff", "provenance", "org", "link"])
    claims.insert(0, "model", mapper.map("model", claims["model_raw"]))
    claims["source"] = source
    claims["snapshot_id"] = snapshot_id
    claims["observed_at"] = pd.Timestamp(observed_at).tz_convert("UTC") if pd.Timestamp(observed_at).tzinfo else pd.Timestamp(observed_at, tz="UTC")
    return claims



"""Reads and writes of the alert tables (migration 004) and the inputs of the alert rules.

Outbox discipline (docs/architecture.md, "Alerts"): an evaluation's states, events and notifications are written
together (`write_evaluation`, inside the caller's transaction); undelivered notifications are
claimed for one notify run with a short lease (`claim_undelivered`), then marked delivered
(`mark_delivered`) or released with the redacted error (`release_failed`). A notification is
never inserted twice: (fingerprint, transition, episode) is unique.
"""

from __future__ import annotations

import json
import logging
from datetime import datetime, timedelta
from typing import Iterable, Mapping, Sequence

import duckdb
import numpy as np
import pandas as pd

from common.time import to_utc, to_utc_or_none, utc_columns
from storage.alert_records import AlertState, Evaluation, Notification, Silence
from storage.db import insert_frame, next_ids
from storage.reads import with_display_names as _with_names
from storage.saturation import read_saturation

log = logging.getLogger("benchwatch.storage")

# Fetch attempts of one source without a run id belong to one collection run when they start
# less than this apart (retries with backoff take seconds; scheduled runs are hours apart).
RUN_SESSION_GAP = timedelta(minutes=10)
FAILED_FETCH_STATUSES = ("error", "parse_error")

_TIME_COLUMNS = ("since", "last_evaluated", "fired_at", "data_as_of")


def _relation_exists(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    row = con.execute("""SELECT count(*) FROM duckdb_tables() WHERE table_name = ? AND schema_name = 'main'
                         UNION ALL
                         SELECT count(*) FROM duckdb_views() WHERE view_name = ? AND schema_name = 'main'""",
                      [name, name]).fetchall()
    return sum(r[0] for r in row) > 0


# --- rule inputs ------------------------------------------------------------------------------

def read_states(con: duckdb.DuckDBPyConnection) -> list[AlertState]:
    rows = con.execute("""SELECT fingerprint, labels, state, since, last_evaluated, annotations, fired_at,
                                 pending_count, data_as_of, notified, muted_by
                          FROM alerts ORDER BY fingerprint""").fetchall()
    return [AlertState(fingerprint=r[0], labels=json.loads(r[1]), state=r[2], since=to_utc(r[3]),
                       last_evaluated=to_utc(r[4]), annotations=json.loads(r[5]), fired_at=to_utc_or_none(r[6]),
                       pending_count=int(r[7]), data_as_of=to_utc_or_none(r[8]), notified=r[9], muted_by=r[10])
            for r in rows]


def read_silences(con: duckdb.DuckDBPyConnection) -> list[Silence]:
    rows = con.execute("""SELECT id, matchers, starts_at, ends_at, author, comment, expired_at
                          FROM silences ORDER BY id""").fetchall()
    return [Silence(id=int(r[0]), matchers=json.loads(r[1]), starts_at=to_utc(r[2]), ends_at=to_utc(r[3]),
                    author=r[4], comment=r[5], expired_at=to_utc_or_none(r[6])) for r in rows]


def read_saturation_series(con: duckdb.DuckDBPyConnection, *, k: int, alpha: float) -> pd.DataFrame | None:
    """The snapshot-level S_index series of every table and scope (k, alpha fixed), with
    benchmark names, the table's name ("HumanEval (EvalPlus)") and its sources (one, or a
    declared pool's members).

    None when the analysis has not produced any saturation yet (no data, not "resolved").
    """
    if not _relation_exists(con, "saturation"):
        return None
    scopes = [r[0] for r in con.execute("SELECT DISTINCT scope FROM saturation ORDER BY scope").fetchall()]
    if not scopes:
        return None
    frame = pd.concat([read_saturation(con, scope=scope, k=k, alpha=alpha) for scope in scopes], ignore_index=True)
    frame = _with_names(con, frame)
    if "table_id" in frame.columns and _relation_exists(con, "benchmark_tables"):
        # a table its source no longer serves (a replaced release, a board gone): its level leaves
        current = dict(con.execute("SELECT table_id, is_current FROM benchmark_tables").fetchall())
        frame["is_current"] = [current.get(t, True) is not False for t in frame["table_id"]]
    return _with_table_names(frame)


def _with_table_names(frame: pd.DataFrame) -> pd.DataFrame:
    """Add table_name ('HumanEval (EvalPlus)', registry.tables.table_name) to rows with table_id."""
    from registry.tables import table_name
    if "table_id" not in frame.columns:
        return frame
    sources = frame["sources"] if "sources" in frame.columns else pd.Series([None] * len(frame), index=frame.index)
    frame["sources"] = [list(v) if isinstance(v, (list, tuple, np.ndarray)) else [] for v in sources]
    versions = [t.split(":", 2)[2] if isinstance(t, str) and t.count(":") >= 2 else "" for t in frame["table_id"]]
    src = frame["source"] if "source" in frame.columns else pd.Series([None] * len(frame), index=frame.index)
    frame["table_name"] = [table_name(n, s, v, ss) for n, s, v, ss in
                           zip(frame["benchmark_name"], src, versions, frame["sources"])]
    return frame


def read_frontier_holders(con: duckdb.DuckDBPyConnection, *, k: int) -> pd.DataFrame | None:
    """The current record holder of every leaderboard table (table `frontier`, newest as_of)."""
    if not _relation_exists(con, "frontier"):
        return None
    return _with_table_names(_with_names(con, con.execute("""
        SELECT table_id, benchmark, source, sources, frontier_model AS model, frontier AS score, as_of
        FROM frontier WHERE k = ? AND frontier_model IS NOT NULL
        QUALIFY row_number() OVER (PARTITION BY table_id ORDER BY as_of DESC) = 1""", [k]).df()))


def read_source_health(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Per source: failed collection runs in a row (newest first), last error, last attempt, last new snapshot.

    A run is the fetches of one run id (attempts without one are grouped by RUN_SESSION_GAP);
    it failed when the final attempt of any of its URLs is an error or a parse error.
    """
    return utc_columns(con.execute("""
        WITH f AS (
            SELECT id, source, url, status, error, started_at, nullif(run_id, '') AS run_id FROM fetches),
        gaps AS (
            SELECT id, source, started_at,
                   started_at - lag(started_at) OVER (PARTITION BY source ORDER BY started_at, id) AS gap
            FROM f WHERE run_id IS NULL),
        sessions AS (
            SELECT id, sum(CASE WHEN gap IS NULL OR gap > to_seconds(?) THEN 1 ELSE 0 END)
                           OVER (PARTITION BY source ORDER BY started_at, id) AS session
            FROM gaps),
        keyed AS (
            SELECT f.*, coalesce(f.run_id, 'session-' || CAST(s.session AS VARCHAR)) AS run
            FROM f LEFT JOIN sessions s USING (id)),
        per_url AS (
            SELECT source, run, url, arg_max(status, (started_at, id)) AS status,
                   arg_max(error, (started_at, id)) AS error, max(started_at) AS url_at
            FROM keyed GROUP BY source, run, url),
        runs AS (
            SELECT source, run, max(url_at) AS run_at, bool_or(list_contains(?, status)) AS failed,
                   arg_max(error, url_at) FILTER (WHERE list_contains(?, status)) AS error
            FROM per_url GROUP BY source, run),
        streak AS (
            SELECT *, sum(CASE WHEN failed THEN 0 ELSE 1 END)
                          OVER (PARTITION BY source ORDER BY run_at DESC, run DESC ROWS UNBOUNDED PRECEDING) AS ok_since
            FROM runs),
        health AS (
            SELECT source, count(*) FILTER (WHERE failed AND ok_since = 0) AS consecutive_failures,
                   arg_max(error, run_at) FILTER (WHERE failed AND ok_since = 0) AS last_error,
                   max(run_at) AS last_attempt_at
            FROM streak GROUP BY source),
        snaps AS (SELECT source, max(first_seen) AS last_new_snapshot_at FROM snapshots GROUP BY source)
        SELECT coalesce(h.source, s.source) AS source, coalesce(h.consecutive_failures, 0) AS consecutive_failures,
               s.last_new_snapshot_at, h.last_attempt_at, h.last_error
        FROM health h FULL JOIN snaps s ON s.source = h.source
        ORDER BY source""", [RUN_SESSION_GAP.total_seconds(), list(FAILED_FETCH_STATUSES),
                             list(FAILED_FETCH_STATUSES)]).df(), "last_new_snapshot_at", "last_attempt_at")


# --- the evaluation ---------------------------------------------------------------------------

def _states_frame(states: Sequence[AlertState]) -> pd.DataFrame:
    frame = pd.DataFrame([{
        "fingerprint": s.fingerprint, "kind": s.kind, "labels": json.dumps(s.labels, sort_keys=True),
        "state": s.state, "since": s.since, "last_evaluated": s.last_evaluated, "fired_at": s.fired_at,
        "pending_count": s.pending_count, "data_as_of": s.data_as_of, "notified": s.notified,
        "muted_by": s.muted_by, "annotations": json.dumps(s.annotations, sort_keys=True, default=str),
    } for s in states])
    return utc_columns(frame, *_TIME_COLUMNS)


def _payload(n: Notification) -> str:
    return json.dumps({"labels": n.labels, "annotations": n.annotations}, sort_keys=True, default=str)


def write_evaluation(con: duckdb.DuckDBPyConnection, evaluation: Evaluation, *, recorded_at: datetime) -> int:
    """Upsert the states, append new events and enqueue new notifications; returns how many were new.

    Call inside a transaction together with `claim_undelivered`, so a crash leaves either the
    whole evaluation or none of it.
    """
    if evaluation.states:
        insert_frame(con, "alerts", _states_frame(evaluation.states), or_replace=["fingerprint"])
    if evaluation.events:
        events = utc_columns(pd.DataFrame([{
            "key": e.key, "occurred_at": e.at, "kind": e.kind, "event": e.event, "fingerprint": e.fingerprint,
            "detail": json.dumps(e.detail, sort_keys=True, default=str), "recorded_at": recorded_at,
        } for e in evaluation.events]), "occurred_at", "recorded_at")
        insert_frame(con, "alert_events", events, ignore_conflicts=["key"])
    if not evaluation.notifications:
        return 0
    outbox = utc_columns(pd.DataFrame([{
        "fingerprint": n.fingerprint, "kind": n.kind, "transition": n.transition, "episode": n.episode,
        "payload": _payload(n), "created_at": n.created_at,
    } for n in evaluation.notifications]), "episode", "created_at")
    inserted = insert_frame(con, "notifications", outbox,
                            columns=["fingerprint", "kind", "transition", "episode", "payload", "created_at"],
                            ignore_conflicts=["fingerprint", "transition", "episode"], returning=["id"])
    return len(inserted)


def claim_undelivered(con: duckdb.DuckDBPyConnection, *, now: datetime, lease: timedelta) -> list[Notification]:
    """Every undelivered notification not claimed by another run, oldest first, now claimed until now + lease.

    Read, then claim (a DuckLake store has no UPDATE … RETURNING): call inside the caller's
    transaction, where a concurrent claim of the same rows conflicts on a DuckDB file and waits
    for the writer lock on a DuckLake store (storage/lake.py), so no row is claimed twice.
    """
    rows = con.execute("""SELECT id, fingerprint, kind, transition, episode, payload, created_at FROM notifications
                          WHERE delivered_at IS NULL AND (claimed_until IS NULL OR claimed_until <= ?)""",
                       [now]).fetchall()
    if rows:
        con.execute("UPDATE notifications SET claimed_until = ? WHERE list_contains(?, id)",
                    [now + lease, [int(r[0]) for r in rows]])
    out = []
    for r in sorted(rows):
        payload = json.loads(r[5])
        out.append(Notification(id=int(r[0]), fingerprint=r[1], kind=r[2], transition=r[3], episode=to_utc(r[4]),
                                labels=payload["labels"], annotations=payload["annotations"], created_at=to_utc(r[6])))
    return out


def claims_held(con: duckdb.DuckDBPyConnection, ids: Iterable[int], *, until: datetime) -> bool:
    """Whether every one of these notifications is still undelivered and claimed until `until` (the
    lease a run took in `claim_undelivered`): False once another run has claimed or delivered one."""
    ids = [int(i) for i in ids]
    if not ids:
        return True
    row = con.execute("""SELECT count(*) FROM notifications
                         WHERE list_contains(?, id) AND delivered_at IS NULL AND claimed_until = ?""",
                      [ids, until]).fetchone()
    return row is not None and int(row[0]) == len(set(ids))


def mark_delivered(con: duckdb.DuckDBPyConnection, ids: Iterable[int], *, at: datetime, receiver: str) -> None:
    ids = [int(i) for i in ids]
    if ids:
        con.execute("""UPDATE notifications SET delivered_at = ?, receiver = ?, claimed_until = NULL
                       WHERE list_contains(?, id) AND delivered_at IS NULL""", [at, receiver, ids])


def release_failed(con: duckdb.DuckDBPyConnection, ids: Iterable[int], *, error: str, receiver: str,
                   claimed_until: datetime | None = None) -> None:
    """Count a failed attempt and free the claim, so the next run retries at once. With
    `claimed_until`, only the rows this run still holds (a claim another run took is left alone)."""
    ids = [int(i) for i in ids]
    if ids:
        con.execute("""UPDATE notifications SET attempts = attempts + 1, last_error = ?, receiver = ?,
                              claimed_until = NULL
                       WHERE list_contains(?, id) AND delivered_at IS NULL
                             AND (?::TIMESTAMPTZ IS NULL OR claimed_until = ?::TIMESTAMPTZ)""",
                    [error, receiver, ids, claimed_until, claimed_until])


# --- people: alerts list and silences ----------------------------------------------------------

def alerts_frame(con: duckdb.DuckDBPyConnection, *, state: str | None = None) -> pd.DataFrame:
    """Alerts (optionally of one state), firing first, with labels and annotations decoded."""
    frame = con.execute("""SELECT fingerprint, kind, state, since, last_evaluated, fired_at, notified, muted_by,
                                  labels, annotations
                           FROM alerts WHERE ? IS NULL OR state = ?
                           ORDER BY state <> 'firing', state, kind, since DESC, fingerprint""",
                        [state, state]).df()
    frame["labels"] = frame["labels"].map(json.loads)
    frame["annotations"] = frame["annotations"].map(json.loads)
    return utc_columns(frame, "since", "last_evaluated", "fired_at")


def add_silence(con: duckdb.DuckDBPyConnection, *, matchers: Mapping[str, str], starts_at: datetime,
                ends_at: datetime, author: str, comment: str, created_at: datetime) -> int:
    if ends_at <= starts_at:
        raise ValueError(f"a silence must end after it starts ({starts_at:%Y-%m-%d %H:%M} → {ends_at:%Y-%m-%d %H:%M})")
    new_id = next_ids(con, "silences")[0]   # no RETURNING on a DuckLake store
    con.execute("""INSERT INTO silences (id, matchers, starts_at, ends_at, author, comment, created_at)
                   VALUES (?, ?, ?, ?, ?, ?, ?)""",
                [new_id, json.dumps(dict(matchers), sort_keys=True), starts_at, ends_at, author, comment, created_at])
    return new_id


def silences_frame(con: duckdb.DuckDBPyConnection, *, now: datetime, include_expired: bool = False) -> pd.DataFrame:
    """Silences active or scheduled at `now` (all of them with include_expired), with a status column."""
    frame = con.execute("""
        SELECT id, matchers, starts_at, ends_at, author, comment, created_at, expired_at,
               CASE WHEN expired_at IS NOT NULL AND expired_at <= ? THEN 'expired'
                    WHEN ends_at <= ? THEN 'ended'
                    WHEN starts_at > ? THEN 'scheduled' ELSE 'active' END AS status
        FROM silences ORDER BY id""", [now, now, now]).df()
    if not include_expired:
        frame = frame.loc[frame["status"].isin(["active", "scheduled"])].reset_index(drop=True)
    frame["matchers"] = frame["matchers"].map(json.loads)
    return utc_columns(frame, "starts_at", "ends_at", "created_at", "expired_at")


def expire_silence(con: duckdb.DuckDBPyConnection, silence_id: int, *, at: datetime) -> str:
    """End a silence now: 'expired', or 'unknown' / 'already expired' / 'already ended'."""
    row = con.execute("SELECT ends_at, expired_at FROM silences WHERE id = ?", [silence_id]).fetchone()
    if row is None:
        return "unknown"
    if row[1] is not None:
        return "already expired"
    if to_utc(row[0]) <= at:     # ends_at is NOT NULL
        return "already ended"
    con.execute("UPDATE silences SET expired_at = ? WHERE id = ?", [at, silence_id])
    return "expired"

"""Reads and writes of the alert tables (migration 004): alert states, silences, the outbox.
The rules' inputs are read by storage.rule_inputs.

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

import pandas as pd

from common.time import to_utc, to_utc_or_none, utc_columns
from storage.alert_records import AlertState, Evaluation, Notification, Silence
from storage.db import insert_frame, next_ids
from storage.engine import duckdb

log = logging.getLogger("benchwatch.storage")

_TIME_COLUMNS = ("since", "last_evaluated", "fired_at", "data_as_of")


# --- alert state ----------------------------------------------------------------------------

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

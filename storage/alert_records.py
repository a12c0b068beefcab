"""The alert records: the rows of the alert tables (migration 004) as frozen dataclasses.

They live in storage, beside the reads and writes that map them to rows (`storage/alerts.py`),
so that storage never imports the rule engine (`alerts.rules`, which pulls in the analysis and
scipy): the engine imports these records, not the other way round. Pure: no DuckDB, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Mapping

from common.time import to_utc

# AlertState.notified: what happened to the firing notification of the current episode
NOTIFIED_NONE, NOTIFIED_QUEUED, NOTIFIED_MUTED, NOTIFIED_BASELINE = "none", "queued", "muted", "baseline"
# announced in the day-one baseline digest instead of a message of its own (its resolution is sent)
NOTIFIED_DIGEST = "digest"


@dataclass(frozen=True)
class AlertState:
    """The stored state of one alert (one row of the `alerts` table)."""

    fingerprint: str
    labels: dict[str, str]
    state: str
    since: datetime                  # when it entered `state`
    last_evaluated: datetime
    annotations: dict[str, Any] = field(default_factory=dict)
    fired_at: datetime | None = None  # start of the current/last firing episode (outbox key)
    pending_count: int = 0           # distinct data versions seen while pending
    data_as_of: datetime | None = None  # newest data version that was counted
    notified: str = NOTIFIED_NONE    # firing notification of the episode: none|queued|muted|baseline
    muted_by: str = ""               # why notifications are muted now ('' = not muted)

    @property
    def kind(self) -> str:
        return self.labels["kind"]


@dataclass(frozen=True)
class Notification:
    """One outbox entry: a firing or resolved transition to deliver exactly once."""

    fingerprint: str
    kind: str
    transition: str                  # firing | resolved
    episode: datetime                # fired_at of the firing episode: (fingerprint, transition, episode) is unique
    labels: dict[str, str]
    annotations: dict[str, Any]
    created_at: datetime
    id: int | None = None            # assigned by storage


@dataclass(frozen=True)
class AlertEvent:
    """An immutable audit entry (state transitions, committed bin moves). `key` is unique."""

    key: str
    at: datetime
    kind: str
    event: str
    fingerprint: str
    detail: dict[str, Any]


@dataclass(frozen=True)
class Silence:
    """Mutes delivery of alerts whose labels match every matcher, between starts_at and ends_at."""

    id: int
    matchers: dict[str, str]
    starts_at: datetime
    ends_at: datetime
    author: str = ""
    comment: str = ""
    expired_at: datetime | None = None

    def is_active(self, now: datetime) -> bool:
        now = to_utc(now)
        end = self.ends_at if self.expired_at is None else min(self.ends_at, self.expired_at)
        return to_utc(self.starts_at) <= now < to_utc(end)

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(labels.get(key, "") == value for key, value in self.matchers.items())


@dataclass(frozen=True)
class Evaluation:
    """The result of one evaluation: every alert state, and what to record and enqueue."""

    states: list[AlertState]
    notifications: list[Notification]
    events: list[AlertEvent]

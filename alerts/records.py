"""The alert records: states, notifications, events, silences and conditions (no rules here).

A small module on purpose: `storage/alerts.py` reads and writes these records, and importing
them must not pull in the rules (which import the analysis and scipy). Standard library and
pandas (timestamp parsing) only.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Mapping

import pandas as pd

PENDING, FIRING, RESOLVED, INACTIVE = "pending", "firing", "resolved", "inactive"
STATES: tuple[str, ...] = (PENDING, FIRING, RESOLVED, INACTIVE)
TRANSITIONS: tuple[str, ...] = (FIRING, RESOLVED)

# AlertState.notified: what happened to the firing notification of the current episode
NOTIFIED_NONE, NOTIFIED_QUEUED, NOTIFIED_MUTED, NOTIFIED_BASELINE = "none", "queued", "muted", "baseline"


def fingerprint(labels: Mapping[str, str]) -> str:
    """Stable identity of an alert: SHA-256 of its sorted labels (empty labels ignored), 16 hex."""
    items = sorted((str(k), str(v)) for k, v in labels.items() if v not in ("", None))
    return hashlib.sha256(json.dumps(items, separators=(",", ":")).encode()).hexdigest()[:16]


def to_utc(value: Any) -> datetime:
    """A tz-aware UTC datetime; naive values are taken as UTC (DataFrames hold naive UTC)."""
    ts = pd.Timestamp(value)
    if pd.isna(ts):
        raise ValueError(f"expected a timestamp, got {value!r}")
    ts = ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")
    return ts.to_pydatetime()


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


@dataclass(frozen=True)
class Condition:
    """An alert whose condition holds in this evaluation."""

    labels: dict[str, str]
    annotations: dict[str, Any]
    data_as_of: datetime
    # distinct data versions the condition must hold before it fires; None = stays pending until
    # its input confirms it (a hysteresis proposal that is not committed yet)
    fire_after: int | None = 1
    group: tuple[str, ...] | None = None    # exclusive group (one firing member at a time)

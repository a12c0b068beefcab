"""The alert records: states, fingerprints and conditions (no rules here).

The rows of the alert tables (AlertState, Notification, AlertEvent, Silence, Evaluation) live in
`storage.alert_records`, beside the reads and writes that map them to rows, so storage never
imports this package; they are re-exported here for the rules. Standard library only.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Mapping

from common.time import to_utc
from storage.alert_records import (  # noqa: F401 - re-exported for the rules
    NOTIFIED_BASELINE,
    NOTIFIED_DIGEST,
    NOTIFIED_MUTED,
    NOTIFIED_NONE,
    NOTIFIED_QUEUED,
    AlertEvent,
    AlertState,
    Evaluation,
    Notification,
    Silence,
)

PENDING, FIRING, RESOLVED, INACTIVE = "pending", "firing", "resolved", "inactive"
STATES: tuple[str, ...] = (PENDING, FIRING, RESOLVED, INACTIVE)
TRANSITIONS: tuple[str, ...] = (FIRING, RESOLVED)


def fingerprint(labels: Mapping[str, str]) -> str:
    """Stable identity of an alert: SHA-256 of its sorted labels (empty labels ignored), 16 hex."""
    items = sorted((str(k), str(v)) for k, v in labels.items() if v not in ("", None))
    return hashlib.sha256(json.dumps(items, separators=(",", ":")).encode()).hexdigest()[:16]


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
    # the input says the alert no longer holds, and why (the annotations are merged into the
    # resolved state, so its message can name the data): a firing alert resolves, a pending
    # one goes inactive, no state is created
    resolves: bool = False

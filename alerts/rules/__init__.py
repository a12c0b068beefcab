"""Alert rules as plug-ins: one module per rule, registered below (the pattern of `scrapers.SOURCES`).

A rule module exposes `RULE = AlertRule(...)` (alerts/rules/base.py): the frame it reads, the
kinds it raises (labels, severity, grouping, headline and number lines) and the function that
turns its frame into conditions. The engine (`alerts.engine.evaluate`), the renderer
(`alerts.render`) and the settings (`alerts.config`) iterate `RULES`; adding a rule is one
module, one line here and its tests (README "Add an alert rule").

The order of `RULES` is the order of the kinds in a digest.
"""

from __future__ import annotations

from typing import Any

from alerts.records import (  # noqa: F401  (re-exported: the records used to live here)
    FIRING,
    INACTIVE,
    NOTIFIED_BASELINE,
    NOTIFIED_MUTED,
    NOTIFIED_NONE,
    NOTIFIED_QUEUED,
    PENDING,
    RESOLVED,
    STATES,
    TRANSITIONS,
    AlertEvent,
    AlertState,
    Condition,
    Evaluation,
    Notification,
    Silence,
    fingerprint,
    to_utc,
)
from alerts.matchers import parse_duration, parse_matchers  # noqa: F401
from alerts.rules import source_disagreement  # issue 54 (info, off by default)
from alerts.rules import contamination_suspect, new_frontier, saturation_bin_changed, snapshot_held, source_health
from alerts.rules.base import AlertKind, AlertRule, make_labels  # noqa: F401
from alerts.rules.contamination_suspect import (  # noqa: F401
    CONTAMINATION_SUSPECT,
    CORROBORATED,
    NOT_FLAGGED,
    PERSISTED,
    SUSPECT,
    contamination_conditions,
)
from alerts.rules.new_frontier import NEW_FRONTIER, frontier_conditions  # noqa: F401
from alerts.rules.saturation_bin_changed import (  # noqa: F401
    EVENT_BIN_CHANGED,
    SATURATION_BIN_CHANGED,
    level_series,
    saturation_conditions,
)
from alerts.rules.snapshot_held import SNAPSHOT_HELD, held_conditions  # noqa: F401
from alerts.rules.source_disagreement import SOURCE_DISAGREEMENT, disagreement_conditions  # noqa: F401
from alerts.rules.source_health import NETWORK_OUTAGE, SOURCE_FAILING, SOURCE_STALE, failure_cause, \
    source_conditions  # noqa: F401

# One line per rule. Adding an alert rule: write alerts/rules/<name>.py exposing RULE, add it here.
RULES: tuple[AlertRule, ...] = (
    source_health.RULE,
    snapshot_held.RULE,
    saturation_bin_changed.RULE,
    contamination_suspect.RULE,
    new_frontier.RULE,
    source_disagreement.RULE,
)


def kinds() -> dict[str, AlertKind]:
    """Every registered kind by name, in digest order (read at call time: tests may extend RULES)."""
    out: dict[str, AlertKind] = {}
    for rule in RULES:
        for kind in rule.kinds:
            if kind.name in out:
                raise ValueError(f"alert kind {kind.name!r} is registered twice")
            out[kind.name] = kind
    return out


def all_kinds() -> tuple[str, ...]:
    return tuple(kinds())


def info_kinds() -> tuple[str, ...]:
    """Kinds evaluated only when enabled (RuleSettings.enabled_info_kinds)."""
    return tuple(k.name for k in kinds().values() if k.severity == "info")


def source_health_kinds() -> tuple[str, ...]:
    """Kinds whose firing alerts inhibit the alerts computed from their source's data."""
    return tuple(k.name for k in kinds().values() if k.inhibits_sources)


def kind(name: str) -> AlertKind | None:
    return kinds().get(name)

"""What an alert rule plug-in declares (AlertRule, AlertKind) and the helpers rules share.

A rule module (alerts/rules/<name>.py) exposes `RULE = AlertRule(...)`; `alerts.rules.RULES`
lists them. The engine (alerts/engine.py), the renderer (alerts/render.py) and the settings
(alerts/config.py) iterate that tuple and ask each rule or kind what they need; none of them
names a kind.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from alerts.config import LABEL_KEYS, RuleSettings
from alerts.records import AlertEvent, AlertState, Condition
from common.jsonsafe import is_null as missing  # noqa: F401 - the rules' helpers
from common.jsonsafe import number as num  # noqa: F401

if TYPE_CHECKING:  # the type only: a rule module imports storage when its read runs
    from storage.store import Connection

WARNING, INFO = "warning", "info"
SEVERITIES: tuple[str, ...] = (WARNING, INFO)


@dataclass(frozen=True)
class RuleContext:
    """What a rule may use besides its frame: the evaluation time and the settings."""

    now: datetime
    settings: RuleSettings


@dataclass(frozen=True)
class RuleOutput:
    """What one rule found in its frame.

    `covered`: the data scopes the frame carried (`AlertKind.scope_of` keys); an alert whose
    scope is not covered keeps its state (no data is not resolved).
    """

    conditions: list[Condition]
    covered: set[tuple[str, ...]]
    events: list[AlertEvent] = field(default_factory=list)


def _no_numbers(labels: Mapping[str, str], annotations: Mapping[str, Any]) -> list[str]:
    return []


@dataclass(frozen=True)
class AlertKind:
    """One value of the `kind` label: identity, grouping and how it reads in a message.

    - `scope_keys`: labels that say which part of the input an alert is about; the alert has
      data this evaluation when (kind, *those label values) is in the rule's `covered`. () =
      the whole frame.
    - `group_keys`: labels of an exclusive group (one firing member at a time; a member
      entering firing folds the resolution of the one it replaces, `replaced`). () = none.
    - `inhibits_sources`: while firing, mutes every other alert whose `source` label (or
      annotation `sources`) is this alert's source.
    - `headline(transition, labels, annotations)` and `numbers(labels, annotations)`: plain
      text, escaped by the renderer.
    - `state_line(state, labels, annotations)`: how `benchwatch alerts` and the report list an
      alert of a kind that is a *state* (a benchmark has a level) rather than an event; None =
      its headline.
    - `baseline_role`: what the day-one baseline digest (alerts.baseline) counts it as: "level"
      (a watched series), "suspect" (listed as a suspect), "" (failing sources are the kinds
      with `inhibits_sources`; any other firing warning is listed as "also firing").
    - `cause_key`: the annotation that says why (source failures); notifications of one kind
      and transition with the same value are one section of the digest.
    - `inhibits_kinds`: while firing, mutes every alert of these kinds (a network outage mutes
      the per-source failures it explains).
    """

    name: str
    headline: Callable[[str, Mapping[str, str], Mapping[str, Any]], str]
    numbers: Callable[[Mapping[str, str], Mapping[str, Any]], list[str]] = _no_numbers
    severity: str = WARNING
    scope_keys: tuple[str, ...] = ()
    group_keys: tuple[str, ...] = ()
    inhibits_sources: bool = False
    replaced: Callable[[AlertState], dict[str, Any]] | None = None
    state_line: Callable[[str, Mapping[str, str], Mapping[str, Any]], str] | None = None
    baseline_role: str = ""
    cause_key: str = ""
    inhibits_kinds: tuple[str, ...] = ()
    nouns: tuple[str, ...] = ()   # (one, many) in a digest's summary line; () = the kind's name, +s

    def noun(self, n: int) -> str:
        """'1 level change', '18 sources failing': how a digest's summary line counts this kind."""
        name = self.name.replace("_", " ")
        one, many = self.nouns[:2] if len(self.nouns) >= 2 else (name, name + "s")
        return f"{n} {one if n == 1 else many}"

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"kind {self.name}: severity {self.severity!r} not in {SEVERITIES}")
        unknown = (set(self.scope_keys) | set(self.group_keys)) - set(LABEL_KEYS)
        if unknown:
            raise ValueError(f"kind {self.name}: unknown label(s) {sorted(unknown)}; labels are {LABEL_KEYS}")

    def scope_of(self, labels: Mapping[str, str]) -> tuple[str, ...]:
        """The data scope of an alert of this kind (see `RuleOutput.covered`)."""
        group = self.group_of(labels)
        if group is not None:
            return group
        return (self.name, *(labels.get(k, "") for k in self.scope_keys))

    def group_of(self, labels: Mapping[str, str]) -> tuple[str, ...] | None:
        """The exclusive group of an alert of this kind, or None."""
        if not self.group_keys:
            return None
        return (self.name, *(labels.get(k, "") for k in self.group_keys))   # a label added later: ''



# Every kind an AlertRule declares (a rule module declares its kinds when it is imported); the
# registry of rules in use is alerts.rules.RULES.
_DECLARED_KINDS: set[str] = set()


@dataclass(frozen=True)
class AlertRule:
    """One rule: the frame it reads (`input`, also the keyword of `engine.evaluate`), the kinds
    it raises, and `conditions(frame, context)`. `read(con, settings)` loads its frame from the
    database for `benchwatch notify` (None = no data this time)."""

    name: str
    input: str
    kinds: tuple[AlertKind, ...]
    conditions: Callable[[pd.DataFrame, RuleContext], RuleOutput]
    read: Callable[[Connection, RuleSettings], pd.DataFrame | None] | None = None

    def __post_init__(self) -> None:
        _DECLARED_KINDS.update(k.name for k in self.kinds)

    @property
    def info_only(self) -> bool:
        """Info rules are evaluated only when one of their kinds is enabled (RuleSettings)."""
        return all(k.severity == INFO for k in self.kinds)

    def enabled(self, settings: RuleSettings) -> bool:
        return not self.info_only or any(k.name in settings.enabled_info_kinds for k in self.kinds)


# --- helpers shared by the rules ---------------------------------------------------------------

def make_labels(kind: str, **labels: Any) -> dict[str, str]:
    """The full label set of an alert: every key of LABEL_KEYS, '' where it does not apply."""
    if kind not in _DECLARED_KINDS:
        raise ValueError(f"unknown alert kind {kind!r}; known: {tuple(sorted(_DECLARED_KINDS))}")
    unknown = set(labels) - set(LABEL_KEYS)
    if unknown:
        raise ValueError(f"unknown alert label(s) {sorted(unknown)}; known: {LABEL_KEYS}")
    out = {key: "" for key in LABEL_KEYS}
    out["kind"] = kind
    for key, value in labels.items():
        out[key] = "" if missing(value) else str(value)
    return out


def text(row: Mapping[str, Any], key: str, default: str = "") -> str:
    value = row.get(key, default)
    return default if missing(value) else str(value)


def require(frame: pd.DataFrame, columns: Sequence[str], name: str) -> None:
    absent = [c for c in columns if c not in frame.columns]
    if absent:
        raise ValueError(f"{name} frame lacks column(s) {absent}; it has {list(frame.columns)}")

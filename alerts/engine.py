"""The alert engine: advance every alert by one evaluation (pure: frames and states in, states,
notifications and events out). It knows no kind: each rule of `alerts.rules.RULES` turns its
frame into conditions, and each kind says how it groups, scopes and inhibits (AlertKind).

Modelled on Prometheus Alertmanager for a snapshot-based service:

- **Identity.** An alert is its label set (`config.LABEL_KEYS`); `fingerprint(labels)` is a
  stable hash of the sorted labels. Re-evaluating the same data re-asserts the same alerts.
- **States.** pending → firing → resolved; a pending alert whose condition stops holding
  becomes inactive without a message. `for` counts distinct *data versions* (snapshots), never
  runs, so re-running over the same data never advances an alert.
- **Exclusive groups** (AlertKind.group_keys: saturation levels, frontier holders): the first
  observation of a group sets its member without a message; a member entering firing folds
  the resolution of the member it replaces into its own message (AlertKind.replaced).
- **Inhibition.** A firing alert of a kind with `inhibits_sources` (source_failing,
  source_stale) mutes every other alert whose `source` label, or annotation `sources`, is its
  source. Such alerts never inhibit each other. A firing alert of a kind with `inhibits_kinds`
  (network_outage) mutes every alert of those kinds (the per-source failures it explains).
- **Day one** (alerts/baseline.py). The first evaluation with levels (no level alert recorded
  before) enqueues one baseline notice; alerts entering firing then are listed in it
  (`notified = 'digest'`; their resolution is sent) instead of a message each. After day one,
  a level series first seen gets one "now watching" notice, not a level-change message.
- **No data is not resolved.** A rule whose input is None, or a scope absent from its input
  (AlertKind.scope_of), keeps its alerts' state.
- **Notifications** are produced only on transitions: entering firing, and resolving after a
  firing that was queued. A transition that happens while the alert is muted (silence or
  inhibition) is recorded, not queued; if the alert is still firing when the mute ends, its
  firing is queued then. A resolution while muted is not sent.

The rules themselves are described in their modules (alerts/rules/*.py).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any, Iterable, Mapping, Sequence

import pandas as pd

from alerts import baseline
from alerts import rules as registry
from alerts.config import RuleSettings
from alerts.render import headline
from alerts.records import (
    FIRING,
    INACTIVE,
    NOTIFIED_BASELINE,
    NOTIFIED_DIGEST,
    NOTIFIED_MUTED,
    NOTIFIED_NONE,
    NOTIFIED_QUEUED,
    PENDING,
    RESOLVED,
    AlertEvent,
    AlertState,
    Condition,
    Evaluation,
    Notification,
    Silence,
    fingerprint,
    to_utc,
)
from alerts.rules.base import AlertKind, RuleContext


def evaluate(*, now: datetime, previous: Iterable[AlertState], silences: Iterable[Silence] = (),
             settings: RuleSettings = RuleSettings(), **frames: Any) -> Evaluation:
    """Advance every alert by one evaluation and say what to record and enqueue.

    `frames`: one keyword per rule input (`AlertRule.input`: saturation, suspects,
    source_health, frontier, held_snapshots, ...). A frame that is None or absent means "no data
    for that rule this time": its alerts keep their state. Info rules run only when enabled in
    `settings`. Re-evaluating the output states with the same inputs and `now` changes nothing
    and enqueues nothing.
    """
    now = to_utc(now)
    rules = registry.RULES
    not_info = set(settings.enabled_info_kinds) - set(registry.info_kinds())
    if not_info:
        raise ValueError(f"enabled_info_kinds: {sorted(not_info)} are not info kinds {registry.info_kinds()}")
    unknown = set(frames) - {rule.input for rule in rules}
    if unknown:
        raise TypeError(f"evaluate() got frame(s) {sorted(unknown)} no rule reads; "
                        f"rule inputs: {[rule.input for rule in rules]}")
    kinds = registry.kinds()
    prev = {s.fingerprint: s for s in previous}
    silences = [s for s in silences if s.is_active(now)]
    ctx = RuleContext(now=now, settings=settings)
    events: list[AlertEvent] = []
    conditions: list[Condition] = []
    # data scopes with data this time (AlertKind.scope_of keys)
    covered: set[tuple[str, ...]] = set()
    for rule in rules:
        frame = frames.get(rule.input)
        if frame is None or not rule.enabled(settings):
            continue
        out = rule.conditions(frame, ctx)
        conditions += out.conditions
        events += out.events
        covered |= out.covered

    by_fp: dict[str, Condition] = {}
    for raised in conditions:
        fp = fingerprint(raised.labels)
        if fp in by_fp:
            raise ValueError(f"two {raised.labels['kind']} conditions share the labels {raised.labels}; "
                             "the input frames have duplicate rows")
        by_fp[fp] = raised

    # Step 1: states, without notifications (those depend on the mutes computed from step 1).
    known_groups = {_group_of(s.labels, kinds) for s in prev.values()}
    stepped: dict[str, AlertState] = {}
    entered: dict[str, str] = {}  # fingerprint -> transition entered in this evaluation
    for fp in sorted(set(prev) | set(by_fp)):
        old, cond = prev.get(fp), by_fp.get(fp)
        if cond is not None and cond.resolves and old is None:
            continue
        if cond is None and (old is None or not _has_data(old.labels, covered, kinds)):
            if old is not None:
                stepped[fp] = old
            continue
        new, transition = _step(old, cond, now)
        if transition == FIRING and cond is not None and cond.group is not None \
                and cond.group not in known_groups:
            new = replace(new, notified=NOTIFIED_BASELINE)  # first observation: state, no message
        stepped[fp] = new
        if transition:
            entered[fp] = transition

    # Exclusive groups: a member entering firing folds the resolution of the member it replaces.
    replaced: dict[tuple[str, ...], AlertState] = {}
    for fp, transition in entered.items():
        group = _group_of(stepped[fp].labels, kinds)
        if transition == RESOLVED and group is not None:
            replaced[group] = prev[fp]
    folded = {fp for fp, t in entered.items() if t == RESOLVED
              and any(entered.get(f) == FIRING and _group_of(stepped[f].labels, kinds) == _group_of(stepped[fp].labels, kinds)
                      for f in entered)}

    # Day one: the first evaluation with levels sends one baseline notice (alerts.baseline) and
    # lists there what enters firing now, instead of a message each.
    day_one = baseline.is_day_one(prev.values(), stepped.values(), kinds)

    # Step 2: mutes (inhibition from firing source-health alerts, then silences) and messages.
    failing_sources = {s.labels["source"]: f"inhibited by {s.kind}{{source={s.labels['source']}}}"
                       for s in stepped.values() if _inhibits(s.kind, kinds) and s.state == FIRING}
    inhibited_kinds = {k: f"inhibited by {s.kind}" for s in stepped.values() if s.state == FIRING
                       for k in _inhibits_kinds(s.kind, kinds)}
    notifications: list[Notification] = []
    states: list[AlertState] = []
    for fp in sorted(stepped):
        state = stepped[fp]
        muted_by = _muted_by(state, failing_sources, silences, kinds, inhibited_kinds)
        transition = entered.get(fp)
        if transition == FIRING:
            group = _group_of(state.labels, kinds)
            if group in replaced:
                old_level = replaced[group]
                state = replace(state, annotations={**state.annotations, **_replaced(old_level, kinds)})
            if state.notified != NOTIFIED_BASELINE:
                state = replace(state, notified=NOTIFIED_MUTED if muted_by else
                                NOTIFIED_DIGEST if day_one else NOTIFIED_QUEUED)
        elif state.state == FIRING and state.notified == NOTIFIED_MUTED and not muted_by:
            state = replace(state, notified=NOTIFIED_QUEUED)  # the mute ended while it still fires
            transition = FIRING
        state = replace(state, muted_by=muted_by)
        if transition == FIRING and state.notified == NOTIFIED_QUEUED:
            notifications.append(_notification(state, FIRING, now))
        elif transition == RESOLVED and fp not in folded and not muted_by \
                and prev[fp].notified in (NOTIFIED_QUEUED, NOTIFIED_DIGEST):
            notifications.append(_notification(state, RESOLVED, now))
        if fp in entered:
            events.append(_transition_event(state, entered[fp], now, folded=fp in folded))
        elif transition == FIRING:
            events.append(_transition_event(state, "unmuted", now, folded=False))
        states.append(state)
    if day_one:
        notifications.insert(0, baseline.baseline_notice(states, kinds, now, headline))
    else:
        notifications += baseline.watching_notices(
            [s for s in states if entered.get(s.fingerprint) == FIRING], kinds, now)
    return Evaluation(states=states, notifications=notifications, events=events)


def _group_of(labels: Mapping[str, str], kinds: Mapping[str, AlertKind]) -> tuple[str, ...] | None:
    spec = kinds.get(labels["kind"])
    return None if spec is None else spec.group_of(labels)


def _has_data(labels: Mapping[str, str], covered: set[tuple[str, ...]], kinds: Mapping[str, AlertKind]) -> bool:
    """Does this evaluation carry data about the alert? (Without data a state is kept: NoData.)
    A kind no rule raises any more never has data: its alerts keep their state."""
    spec = kinds.get(labels["kind"])
    return spec is not None and spec.scope_of(labels) in covered


def _inhibits(kind: str, kinds: Mapping[str, AlertKind]) -> bool:
    spec = kinds.get(kind)
    return spec is not None and spec.inhibits_sources


def _step(old: AlertState | None, cond: Condition | None, now: datetime) -> tuple[AlertState, str | None]:
    """One alert, one evaluation: the new state and the transition entered (firing/resolved/...)."""
    if cond is None or cond.resolves:
        assert old is not None
        if old.state == PENDING:
            return replace(old, state=INACTIVE, since=now, last_evaluated=now, pending_count=0), INACTIVE
        if old.state == FIRING:
            why = {} if cond is None else cond.annotations
            return replace(old, state=RESOLVED, since=now, last_evaluated=now,
                           annotations={**old.annotations, **why}), RESOLVED
        return replace(old, last_evaluated=now), None

    fp = fingerprint(cond.labels)
    data_as_of: datetime | None
    if old is None or old.state in (RESOLVED, INACTIVE):
        count, data_as_of = 1, cond.data_as_of
        base = AlertState(fingerprint=fp, labels=cond.labels, state=PENDING, since=now, last_evaluated=now,
                          annotations=cond.annotations, pending_count=count, data_as_of=data_as_of)
        if cond.fire_after is not None and count >= cond.fire_after:
            return replace(base, state=FIRING, fired_at=now, notified=NOTIFIED_NONE), FIRING
        return base, PENDING
    if old.state == PENDING:
        newer = old.data_as_of is None or cond.data_as_of > old.data_as_of
        count = old.pending_count + (1 if newer else 0)
        data_as_of = cond.data_as_of if newer else old.data_as_of
        if cond.fire_after is not None and count >= cond.fire_after:
            return replace(old, state=FIRING, since=now, last_evaluated=now, annotations=cond.annotations,
                           fired_at=now, pending_count=count, data_as_of=data_as_of,
                           notified=NOTIFIED_NONE), FIRING
        return replace(old, last_evaluated=now, annotations=cond.annotations, pending_count=count,
                       data_as_of=data_as_of), None
    if cond.fire_after is None:
        # firing level, but the hysteresis now proposes it anew: it was left, and is pending again
        return replace(old, state=PENDING, since=now, last_evaluated=now, annotations=cond.annotations,
                       pending_count=1, data_as_of=cond.data_as_of), RESOLVED
    # firing: stays firing, numbers refreshed
    return replace(old, last_evaluated=now, annotations={**cond.annotations, **_from_annotations_kept(old)},
                   data_as_of=max(cond.data_as_of, old.data_as_of or cond.data_as_of)), None


def _replaced(old: AlertState, kinds: Mapping[str, AlertKind]) -> dict[str, Any]:
    """What the new member of an exclusive group replaced (a level, a record holder)."""
    spec = kinds.get(old.kind)
    return {} if spec is None or spec.replaced is None else spec.replaced(old)


def _from_annotations_kept(old: AlertState) -> dict[str, Any]:
    return {k: v for k, v in old.annotations.items() if k.startswith("from_")}


def _inhibits_kinds(kind: str, kinds: Mapping[str, AlertKind]) -> tuple[str, ...]:
    spec = kinds.get(kind)
    return () if spec is None else spec.inhibits_kinds


def _muted_by(state: AlertState, failing_sources: Mapping[str, str], silences: Sequence[Silence],
              kinds: Mapping[str, AlertKind], inhibited_kinds: Mapping[str, str] | None = None) -> str:
    """Inhibition first (a kind muted by a firing alert that explains it, e.g. per-source failures
    during a network outage; a derived alert whose source, or one of the sources its numbers come
    from, is failing or stale), then silences."""
    labels = state.labels
    if inhibited_kinds and labels["kind"] in inhibited_kinds:
        return inhibited_kinds[labels["kind"]]
    if not _inhibits(labels["kind"], kinds):
        for source in [labels["source"], *state.annotations.get("sources", [])]:
            if source in failing_sources:
                return failing_sources[source]
    for silence in silences:
        if silence.matches(labels):
            return f"silence {silence.id}"
    return ""


def _notification(state: AlertState, transition: str, now: datetime) -> Notification:
    assert state.fired_at is not None
    return Notification(fingerprint=state.fingerprint, kind=state.kind, transition=transition,
                        episode=state.fired_at, labels=dict(state.labels),
                        annotations=dict(state.annotations), created_at=now)


def _transition_event(state: AlertState, transition: str, now: datetime, *, folded: bool) -> AlertEvent:
    detail: dict[str, Any] = {"labels": state.labels, "state": state.state}
    if state.muted_by:
        detail["muted_by"] = state.muted_by
    if state.notified == NOTIFIED_BASELINE and transition == FIRING:
        detail["baseline"] = True
    if folded:
        detail["folded_into_group_move"] = True
    return AlertEvent(key=f"{state.fingerprint}|{transition}|{now.isoformat()}", at=now, kind=state.kind,
                      event=f"Alert{transition.capitalize()}", fingerprint=state.fingerprint, detail=detail)


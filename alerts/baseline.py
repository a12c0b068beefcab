"""Day one and new series: the baseline digest and "now watching" lines (issue 19).

Levels are states; only their changes notify. So that the first cycle is not silent, the first
evaluation that has levels (no level alert recorded before, some now) sends ONE baseline notice
through the same outbox: how many benchmarks are watched from how many sources, which are
saturated, which suspects and failing sources there are, and that from now on only changes are
sent. Alerts entering firing in that evaluation are listed there instead of in messages of
their own (their later resolution is sent). Tables first seen after day one get ONE "now
watching" notice per source and release ("LiveBench 2026-01-08: now watching 27 tables"), not
a level-change alert each. Saturated tables are listed strongest first (by S), and a level
whose P(level holds) is below config.LEVEL_ANNOUNCE_MIN_P is not announced as that level.

Pure: states in, notifications out (alerts.engine calls `notices`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Iterable, Mapping

from alerts.records import FIRING, NOTIFIED_BASELINE, AlertState, Notification, fingerprint
from alerts.rules.base import AlertKind
from alerts.config import LEVEL_ANNOUNCE_MIN_P
from alerts.text import clean, scope_suffix, settled, unsettled
from registry.tables import source_name

BASELINE = "baseline"
NOW_WATCHING = "now_watching"
NOTICE_KINDS: tuple[str, ...] = (BASELINE, NOW_WATCHING)
SATURATED_LEVELS = ("high", "very high")
LISTED = 12   # names listed per part of the baseline before "and N more"
TOP_LISTED = 3   # tables named in a "now watching" line (strongest saturation first)
LEVEL_ORDER = ("very high", "high", "moderate", "low", "very low")


def _role(kind: str, kinds: Mapping[str, AlertKind], labels: Mapping[str, str] | None = None) -> str:
    """What the baseline counts an alert as: its kind's `baseline_role`, else "failing" for a kind
    that inhibits its source's alerts, "suspect" for an alert about a model (a `model` label:
    a suspicion about that model's score), else ""."""
    spec = kinds.get(kind)
    if spec is None:
        return ""
    if spec.baseline_role:
        return spec.baseline_role
    if spec.inhibits_sources:
        return "failing"
    return "suspect" if labels and labels.get("model") else ""


def is_day_one(previous: Iterable[AlertState], states: Iterable[AlertState], kinds: Mapping[str, AlertKind]) -> bool:
    """No level alert recorded before this evaluation, and a level firing now."""
    if any(_role(s.kind, kinds) == "level" for s in previous):
        return False
    return any(_role(s.kind, kinds) == "level" and s.state == FIRING for s in states)


def _name(s: AlertState) -> str:
    return clean(s.annotations.get("benchmark_name") or s.labels.get("benchmark") or "?", 80) + scope_suffix(s.labels)


def _s(s: AlertState) -> float | None:
    return (s.annotations.get("numbers") or {}).get("s_index")


def _p(s: AlertState) -> float | None:
    return (s.annotations.get("numbers") or {}).get("p_level_holds")


def _by_s(levels: Iterable[AlertState]) -> list[AlertState]:
    """Strongest saturation first: by S, descending (no S last), then by name."""
    def key(s: AlertState) -> tuple[float, str, str]:
        x = _s(s)
        return (-(x if x is not None else -1.0), _name(s), s.fingerprint)
    return sorted(levels, key=key)


def _level_text(level: str, s_index: float | None, p: float | None) -> str:
    """'high, S 0.97, P(level holds) 0.93', or the stored level said not to be settled below the floor."""
    s_part = "" if s_index is None else f", S {s_index:.2f}"
    if not settled(p):
        return f"{unsettled(level, p)}{s_part}"
    return f"{level}{s_part}" + ("" if p is None else f", P(level holds) {p:.2f}")


def baseline_notice(states: Iterable[AlertState], kinds: Mapping[str, AlertKind], now: datetime,
                    headline: Any) -> Notification:
    """The one baseline notice of day one, from every state after the evaluation.

    `headline(kind, transition, labels, annotations)` words the other firing alerts."""
    firing = [s for s in states if s.state == FIRING]
    levels = _by_s(s for s in firing if _role(s.kind, kinds) == "level")
    benchmarks = sorted({s.labels.get("benchmark", "") for s in levels})
    tables = {s.labels.get("table") or s.labels.get("benchmark", "") for s in levels}   # a level per population
    sources = sorted({str(x) for s in levels for x in s.annotations.get("sources", [])})
    saturated = [f"{_name(s)} ({_level_text(s.labels.get('level', ''), _s(s), _p(s))})" for s in levels
                 if s.labels.get("level") in SATURATED_LEVELS and settled(_p(s))]
    unsettled_ = [f"{_name(s)} ({_level_text(s.labels.get('level', ''), _s(s), _p(s))})" for s in levels
                  if not settled(_p(s))]
    by_level: dict[str, int] = {}
    for s in levels:
        if settled(_p(s)):
            by_level[s.labels.get("level", "")] = by_level.get(s.labels.get("level", ""), 0) + 1
    suspects = [headline(s.kind, FIRING, s.labels, s.annotations) for s in firing
                if _role(s.kind, kinds, s.labels) == "suspect"]
    failing = sorted({src for s in firing if _role(s.kind, kinds) == "failing"
                      for src in ([s.labels["source"]] if s.labels.get("source") else
                                  s.annotations.get("outage_sources", []))})
    other = [headline(s.kind, FIRING, s.labels, s.annotations) for s in firing
             if _role(s.kind, kinds, s.labels) == "" and (kinds.get(s.kind) is None or kinds[s.kind].severity == "warning")]
    labels = {"kind": BASELINE}
    return Notification(fingerprint=fingerprint(labels), kind=BASELINE, transition=FIRING, episode=now,
                        labels=labels, created_at=now, annotations={
                            "benchmarks": len(benchmarks), "tables": len(tables), "series": len(levels),
                            "sources": sources,
                            "levels": by_level, "saturated": saturated, "unsettled": unsettled_,
                            "suspects": sorted(suspects), "failing_sources": failing, "also_firing": sorted(other)})


def release_of(s: AlertState) -> str:
    """The release a new table came with: the table's version (the rule's `table_version`
    annotation), else the day of its newest snapshot."""
    return str(s.annotations.get("table_version") or "") or str(s.annotations.get("as_of") or "")[:10]


def watching_notices(entered: Iterable[AlertState], kinds: Mapping[str, AlertKind], now: datetime) -> list[Notification]:
    """ONE "now watching" notice per source and release whose tables were first seen in this
    evaluation (after day one): the tables listed strongest saturation first."""
    by_release: dict[tuple[str, str], list[AlertState]] = {}
    for s in entered:
        if _role(s.kind, kinds) != "level" or s.notified != NOTIFIED_BASELINE:
            continue
        source = s.labels.get("source") or ",".join(sorted(str(x) for x in s.annotations.get("sources", [])))
        by_release.setdefault((source, release_of(s)), []).append(s)
    out = []
    for (source, release), members in sorted(by_release.items()):
        labels = {"kind": NOW_WATCHING, "source": source, "signal": release}
        tables = [{"name": _name(s), "level": s.labels.get("level"), "s_index": _s(s), "p_level_holds": _p(s),
                   "level_note": s.annotations.get("level_note") or ""} for s in _by_s(members)]
        out.append(Notification(fingerprint=fingerprint(labels), kind=NOW_WATCHING, transition=FIRING, episode=now,
                                labels=labels, created_at=now, annotations={
                                    "source_name": source_name(source), "release": release, "tables": tables,
                                    "sources": sorted({str(x) for s in members for x in s.annotations.get("sources", [])})}))
    return out


def _names(items: list[str]) -> str:
    if not items:
        return "none"
    shown = ", ".join(items[:LISTED])
    return shown + (f" and {len(items) - LISTED} more" if len(items) > LISTED else "")


def title(n: Notification) -> str:
    """The notice's headline (plain text): the one-line summary."""
    a = n.annotations
    if n.kind == BASELINE:
        b, m = a.get("benchmarks", 0), len(a.get("sources", []))
        sources = f" from {m} source{'s' * (m != 1)}" if m else ""
        t, sus, fail = a.get("tables", a.get("series", 0)), len(a.get("suspects", [])), len(a.get("failing_sources", []))
        parts = [f"{len(a.get('saturated', []))} saturated", f"{sus} contamination suspect{'s' * (sus != 1)}",
                 f"{fail} source{'s' * (fail != 1)} failing"]
        return (f"benchwatch now watches {b} benchmark{'s' * (b != 1)} ({t} table{'s' * (t != 1)}){sources}: "
                + ", ".join(parts))
    tables = a.get("tables") or []
    where = clean(f"{a.get('source_name') or n.labels.get('source') or ''} {a.get('release') or ''}".strip(), 80)
    if len(tables) == 1:
        return f"{where}: now watching {clean(tables[0]['name'], 80)}"
    return f"{where}: now watching {len(tables)} tables"


def lines(n: Notification) -> list[str]:
    """The notice's body lines (plain text; the renderer escapes them)."""
    a = n.annotations
    if n.kind == NOW_WATCHING:
        tables = a.get("tables") or []
        if len(tables) == 1:
            t = tables[0]
            text = _level_text(t["level"], t["s_index"], t["p_level_holds"])
            return [f"{text if text.startswith('level ') else 'level ' + text} (its level, not a change)"]
        spread: dict[str, int] = {}
        for t in tables:
            key = t["level"] if settled(t["p_level_holds"]) else "not settled"
            spread[key] = spread.get(key, 0) + 1
        counts = ", ".join(f"{spread[k]} {k}" for k in (*LEVEL_ORDER, "not settled") if spread.get(k))
        top = ", ".join(f"{clean(t['name'], 60)} ({_level_text(t['level'], t['s_index'], t['p_level_holds'])})"
                        for t in tables[:TOP_LISTED])
        return [f"levels (not changes): {counts}; strongest: {top}"]
    levels = a.get("levels", {})
    spread_ = ", ".join(f"{levels[k]} {k}" for k in LEVEL_ORDER if levels.get(k))
    unsettled_ = list(a.get("unsettled", []))
    out = [f"saturated, strongest first: {_names(list(a.get('saturated', [])))}",
           f"levels: {spread_ or 'none'}" + (f"; {len(unsettled_)} not settled (P(level holds) below "
                                                  f"{LEVEL_ANNOUNCE_MIN_P:.2f}): {_names(unsettled_)}" if unsettled_ else ""),
           f"sources: {_names(list(a.get('sources', [])))}",
           f"suspects (contamination, a suspicion, never a verdict): {_names(list(a.get('suspects', [])))}",
           f"sources failing: {_names(list(a.get('failing_sources', [])))}"]
    if a.get("also_firing"):
        out.append(f"also firing: {_names(list(a['also_firing']))}")
    out.append("This is the baseline: from now on you hear of changes (a level change, a new suspect, a source "
               "failing or recovering), not of levels that stay.")
    return out

"""Day one and new series: the baseline digest and "now watching" lines (issue 19).

Levels are states; only their changes notify. So that the first cycle is not silent, the first
evaluation that has levels (no level alert recorded before, some now) sends ONE baseline notice
through the same outbox: how many benchmarks are watched from how many sources, which are
saturated, which suspects and failing sources there are, and that from now on only changes are
sent. Alerts entering firing in that evaluation are listed there instead of in messages of
their own (their later resolution is sent). A series first seen after day one gets one
"now watching" notice (one line in the next digest), not a level-change alert.

Pure: states in, notifications out (alerts.engine calls `notices`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Iterable, Mapping

from alerts.records import FIRING, NOTIFIED_BASELINE, AlertState, Notification, fingerprint
from alerts.rules.base import AlertKind
from alerts.text import clean, scope_suffix, word_for

BASELINE = "baseline"
NOW_WATCHING = "now_watching"
NOTICE_KINDS: tuple[str, ...] = (BASELINE, NOW_WATCHING)
SATURATED_LEVELS = ("high", "very high")
LISTED = 12   # names listed per part of the baseline before "and N more"


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


def _held(s: AlertState) -> str:
    """How firm a level is, in the words of alerts.text.WORDING."""
    p = (s.annotations.get("numbers") or {}).get("p_level_holds")
    return word_for("p_hold", p) + ("" if p is None else f", P(level holds) {p:.2f}")


def baseline_notice(states: Iterable[AlertState], kinds: Mapping[str, AlertKind], now: datetime,
                    headline: Any) -> Notification:
    """The one baseline notice of day one, from every state after the evaluation.

    `headline(kind, transition, labels, annotations)` words the other firing alerts."""
    firing = [s for s in states if s.state == FIRING]
    levels = sorted((s for s in firing if _role(s.kind, kinds) == "level"), key=lambda s: (_name(s), s.fingerprint))
    benchmarks = sorted({s.labels.get("benchmark", "") for s in levels})
    sources = sorted({str(x) for s in levels for x in s.annotations.get("sources", [])})
    saturated = [f"{_name(s)} ({s.labels.get('level')}, {_held(s)})" for s in levels
                 if s.labels.get("level") in SATURATED_LEVELS]
    by_level: dict[str, int] = {}
    for s in levels:
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
                            "benchmarks": len(benchmarks), "series": len(levels), "sources": sources,
                            "levels": by_level, "saturated": saturated, "suspects": sorted(suspects),
                            "failing_sources": failing, "also_firing": sorted(other)})


def watching_notices(entered: Iterable[AlertState], kinds: Mapping[str, AlertKind], now: datetime) -> list[Notification]:
    """One "now watching" notice per series first seen in this evaluation (after day one)."""
    out = []
    for s in entered:
        if _role(s.kind, kinds) != "level" or s.notified != NOTIFIED_BASELINE:
            continue
        labels = {"kind": NOW_WATCHING, "benchmark": s.labels.get("benchmark", ""), "scope": s.labels.get("scope", "")}
        out.append(Notification(fingerprint=fingerprint(labels), kind=NOW_WATCHING, transition=FIRING, episode=now,
                                labels=labels, created_at=now, annotations={
                                    "benchmark_name": s.annotations.get("benchmark_name"),
                                    "level": s.labels.get("level"), "bin": s.annotations.get("bin"),
                                    "level_note": s.annotations.get("level_note") or "",
                                    "s_index": (s.annotations.get("numbers") or {}).get("s_index"),
                                    "p_level_holds": (s.annotations.get("numbers") or {}).get("p_level_holds"),
                                    "sources": s.annotations.get("sources", [])}))
    return out


def _names(items: list[str]) -> str:
    if not items:
        return "none"
    shown = ", ".join(items[:LISTED])
    return shown + (f" and {len(items) - LISTED} more" if len(items) > LISTED else "")


def title(n: Notification) -> str:
    """The notice's headline (plain text)."""
    a = n.annotations
    if n.kind == BASELINE:
        n, m = a.get("benchmarks", 0), len(a.get("sources", []))
        sources = f" from {m} source{'s' * (m != 1)}" if m else ""
        return f"benchwatch now watches {n} benchmark{'s' * (n != 1)}{sources}"
    name = clean(a.get("benchmark_name") or n.labels.get("benchmark") or "?", 80) + scope_suffix(n.labels)
    return f"now watching {name}: level {a.get('level')}"


def lines(n: Notification) -> list[str]:
    """The notice's body lines (plain text; the renderer escapes them)."""
    a = n.annotations
    if n.kind == NOW_WATCHING:
        s = a.get("s_index")
        p = a.get("p_level_holds")
        held = word_for("p_hold", p) + ("" if p is None else f" (P(level holds) {p:.2f})")
        out = [(f"S_index {s:.2f}" if isinstance(s, (int, float)) else "S_index n/a") + f" · {held}"]
        if a.get("level_note"):
            out.append(str(a["level_note"]))
        return out
    levels = a.get("levels", {})
    spread = ", ".join(f"{levels[k]} {k}" for k in ("very high", "high", "moderate", "low", "very low") if levels.get(k))
    out = [f"{a.get('series', 0)} level series ({spread or 'none'}); sources: {_names(list(a.get('sources', [])))}",
           f"{len(a.get('saturated', []))} saturated (level high or very high): {_names(list(a.get('saturated', [])))}",
           f"suspects (contamination, a suspicion, never a verdict): {_names(list(a.get('suspects', [])))}",
           f"sources failing: {_names(list(a.get('failing_sources', [])))}"]
    if a.get("also_firing"):
        out.append(f"also firing: {_names(list(a['also_firing']))}")
    out.append("This is the baseline: from now on you hear of changes (a level change, a new suspect, a source "
               "failing or recovering), not of levels that stay.")
    return out

"""saturation_bin_changed{benchmark, table, scope, level}: a leaderboard table's saturation *level*
(a state) and its *changes* (the events that notify).

A leaderboard table (registry.tables: `table_id`, e.g. `humaneval:evalplus`) is the unit: two
tables of one benchmark are two series and two alerts, named "HumanEval (EvalPlus)" (label
`table`). A frame without `table_id` is one series per benchmark (label `table` empty).

The level is computed and stored by `benchwatch analyze` (analysis.hysteresis.series_levels over
the stored snapshot-level rows of each series, columns `level`, `level_since`, `pending_bin`,
`pending_count` of `saturation`, migration 020); this rule only compares stored levels, so the
report, `benchwatch alerts` and Slack show one level. A series is analysis.constants.SERIES_KEY
(a population other than ``models`` is labelled scope ``<scope>:<population>``, ``all:systems``).

The alert of the stored level is firing (the benchmark *has* that level); a stored pending move
is a pending alert of its target level. The first observation of a series sets its level
without a message (the baseline digest announces it, alerts.baseline). When the stored level
changes, the new level fires ("low → moderate", with the top k before and after that caused it)
and the old one resolves inside that message (an exclusive group per benchmark and scope).
Every change of the stored level is also an immutable `SaturationBinChanged` event. Rows whose
level is not stored yet (written before migration 020, not analyzed since) are no data: the
alerts keep their state.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np
import pandas as pd

from alerts.config import ANNOUNCED_SCOPES, RuleSettings
from alerts.records import RESOLVED, AlertEvent, AlertState, Condition, fingerprint, to_utc
from alerts.rules.base import AlertKind, AlertRule, RuleContext, RuleOutput, make_labels, missing, num, \
    require, text
from alerts.text import clean, day, fixed, general, level_meaning, level_note, scope_suffix, settled, unsettled
from analysis.constants import LEVEL_DWELL_DAYS, SATURATION_BINS, SERIES_KEY, SATURATION_ALPHA, SATURATION_K
from storage import rule_inputs as store
from storage import look_queries as look

if TYPE_CHECKING:
    from storage.store import Connection

SATURATION_BIN_CHANGED = "saturation_bin_changed"
EVENT_BIN_CHANGED = "SaturationBinChanged"
TOP_SHOWN = 5   # models of a top k named in a level-change message
RETIRED = ("its source no longer serves this table (a newer release or board replaced it): its level is no "
           "longer watched; the table's history stays in saturation_history")


def scope_label(row: Mapping[str, Any]) -> str:
    """The alert's `scope` label of a series: scope, `:population` unless model runs, and
    `@value` of any other SERIES_KEY column (fingerprints of model-run series never change)."""
    scope = text(row, "scope")
    pop = text(row, "population") or "models"
    if pop != "models":
        scope += f":{pop}"
    for col in SERIES_KEY:
        if col not in ("benchmark", "table_id", "scope", "population") and text(row, col):   # table: own label
            scope += f"@{text(row, col)}"
    return scope


def level_series(history: pd.DataFrame) -> pd.DataFrame:
    """The stored rows with a `series` scope label, sorted by benchmark, label and as_of."""
    require(history, ["benchmark", "as_of", "s_index", "level"], "saturation history")
    frame = history.copy()
    for col in ("table_id", "scope", "population", "bin", "pending_bin", "pending_count", "level_since"):
        if col not in frame.columns:
            frame[col] = None
    frame["scope"] = frame["scope"].fillna("").astype(str)
    frame["series"] = [scope_label(r) for r in frame[[c for c in SERIES_KEY if c in frame.columns]]
                       .to_dict("records")] if len(frame) else pd.Series(dtype="object")
    frame["_table"] = frame["table_id"].fillna("").astype(str)
    return frame.sort_values(["benchmark", "_table", "series", "as_of"], kind="stable").reset_index(drop=True)


def p_level_holds(row: Mapping[str, Any], level: str) -> float | None:
    """P(S* in the level's bin) from the row's bin probabilities (None without draws)."""
    probs = row.get("bin_probs")
    if probs is None or (np.ndim(probs) == 0 and missing(probs)):
        return None
    p = np.asarray(probs, dtype="float64")
    if p.shape != (len(SATURATION_BINS),) or not np.isfinite(p).all():
        return None
    return float(p[SATURATION_BINS.index(level)])


def top_k(row: Mapping[str, Any]) -> str:
    """'m1 0.912, m2 0.905, …' (the row's top k, best first; names from the registry or the page)."""
    models = row.get("top_models")
    scores = row.get("top_scores")
    if models is None or (np.ndim(models) == 0 and missing(models)):
        return ""
    models = list(models)
    scores = list(scores) if scores is not None and np.ndim(scores) else [None] * len(models)
    shown = [f"{clean(m, 60)} {fixed(num(s), 3)}" if num(s) is not None else clean(m, 60)
             for m, s in zip(models[:TOP_SHOWN], scores[:TOP_SHOWN])]
    return ", ".join(shown) + (", …" if len(models) > TOP_SHOWN else "")


def saturation_conditions(history: pd.DataFrame) -> tuple[list[Condition], list[AlertEvent], set[tuple[str, ...]]]:
    """Level conditions and SaturationBinChanged events from the stored levels.

    `history`: the stored snapshot-level rows (benchmark, as_of, s_index, level, and optionally
    scope, population, bin, level_since, pending_bin, pending_count, bin_probs, top_models,
    top_scores, benchmark_name, snapshot_id, `sources` — the sources the index pools, a failing
    one inhibits the alert — and the numbers shown: r_norm, se_delta, k, alpha, n_items, n_models).
    Returns the conditions of the newest row of every series, the events of every stored level
    change, and the groups that have data.
    """
    frame = level_series(history)
    conditions: list[Condition] = []
    events: list[AlertEvent] = []
    groups: set[tuple[str, ...]] = set()
    by_group: dict[tuple[Any, Any, Any], list[dict]] = {}
    for r in frame.to_dict("records"):
        if r["scope"] not in ANNOUNCED_SCOPES:     # stored and shown, not alerted (alerts.config)
            continue
        if not (missing(r["benchmark"]) or missing(r["series"])):
            by_group.setdefault((r["benchmark"], r["_table"], r["series"]), []).append(r)
    for (bench, table, scope), rows in by_group.items():
        records = [r for r in rows if not missing(r["level"])]
        if not records:
            continue  # no level stored yet: no data
        group = (SATURATION_BIN_CHANGED, str(bench), str(table), str(scope))
        groups.add(group)
        change_at = 0   # index in records of the row that committed the newest level
        for i, (before, rec) in enumerate(zip(records, records[1:]), start=1):
            if rec["level"] != before["level"]:
                change_at = i
                events.append(_event(records, i, bench, scope))
        last = records[-1]
        as_of = to_utc(last["as_of"])
        level = str(last["level"])
        if last.get("is_current") is False:   # the source no longer serves this table: its level leaves
            conditions.append(Condition(
                labels=_saturation_labels(last, bench, scope, level),
                annotations={"retired": RETIRED}, data_as_of=as_of, group=group, resolves=True))
            continue
        cause = _cause(records, change_at) if change_at else {}
        conditions.append(Condition(
            labels=_saturation_labels(last, bench, scope, level),
            annotations={**_saturation_annotations(last, bench, scope, level, as_of), **cause},
            data_as_of=as_of, fire_after=1, group=group))
        if not missing(last.get("pending_bin")):
            target = str(last["pending_bin"])
            conditions.append(Condition(
                labels=_saturation_labels(last, bench, scope, target),
                annotations=_saturation_annotations(last, bench, scope, target, as_of),
                data_as_of=as_of, fire_after=None, group=None))
    return conditions, events, groups


def _cause(records: Sequence[Mapping[str, Any]], at: int) -> dict[str, Any]:
    """The table rows behind the level change in force after records[at]: the top k of the last
    snapshot before the move was first proposed and of the snapshot that proposed it (the one
    whose S changed; later ones that only kept proposing it add no news), with how the move was
    committed (analysis/hysteresis.py): at once (S two bins away) or after LEVEL_DWELL_DAYS."""
    start = at
    while start > 1 and not missing(records[start - 1].get("pending_bin")):
        start -= 1                       # records[start - 1] proposed the move: it belongs to it
    before, after, now = records[start - 1], records[start], records[at]
    since = records[at].get("level_since")
    committed = None if missing(since) else to_utc(since)
    dwelt = committed is not None and committed > to_utc(after["as_of"])
    return {"top_before": top_k(before), "top_before_as_of": to_utc(before["as_of"]).isoformat(),
            "s_before": num(before.get("s_index")), "level_before": text(before, "level") or None,
            "proposed_since": to_utc(after["as_of"]).isoformat() if dwelt else None,
            "committed_at": None if committed is None else committed.isoformat(),
            "top_after": top_k(after), "top_after_as_of": to_utc(after["as_of"]).isoformat(),
            "s_after": num(after.get("s_index")), "s_now": num(now.get("s_index")),
            "now_as_of": to_utc(now["as_of"]).isoformat()}


def _event(records: Sequence[Mapping[str, Any]], at: int, bench: Any, scope: Any) -> AlertEvent:
    before, rec = records[at - 1], records[at]
    # the change happened when the level was committed (a dwell may end between two snapshots)
    as_of = to_utc(rec["level_since"]) if not missing(rec.get("level_since")) else to_utc(rec["as_of"])
    level, prev_level = str(rec["level"]), str(before["level"])
    up = SATURATION_BINS.index(level) > SATURATION_BINS.index(prev_level)
    series = text(rec, "table_id") or str(bench)
    return AlertEvent(
        key=f"{EVENT_BIN_CHANGED}|{series}|{scope}|{as_of.isoformat()}", at=as_of,
        kind=SATURATION_BIN_CHANGED, event=EVENT_BIN_CHANGED,
        fingerprint=fingerprint(_saturation_labels(rec, bench, scope, level)),
        detail={"benchmark": str(bench), "table": text(rec, "table_id"), "scope": str(scope),
                "from": prev_level, "to": level,
                "direction": "up" if up else "down", "as_of": as_of.isoformat(),
                "s_index": num(rec.get("s_index")), "snapshot_id": num(rec.get("snapshot_id")),
                **_cause(records, at), **_scale_annotations(rec)})


def _saturation_labels(row: Mapping[str, Any], bench: Any, scope: Any, level: str) -> dict[str, str]:
    return make_labels(SATURATION_BIN_CHANGED, benchmark=bench, table=text(row, "table_id"), scope=scope,
                       level=level, source=text(row, "source"))


def _saturation_annotations(row: Mapping[str, Any], bench: Any, scope: Any, level: str,
                            as_of: datetime) -> dict[str, Any]:
    name = text(row, "table_name") or text(row, "benchmark_name") or str(bench)
    base_scope = text(row, "scope")
    population = text(row, "population")
    sources = row.get("sources")
    p_hold = p_level_holds(row, level)
    since = row.get("level_since")
    return {
        "benchmark_name": name,
        "table_version": text(row, "table_version") or None,     # the release a new table came with
        "sources": sorted(str(x) for x in sources) if isinstance(sources, (list, tuple, np.ndarray)) else [],
        "to_level": level,
        "as_of": as_of.isoformat(),
        "level_since": None if missing(since) else to_utc(since).isoformat(),
        "bin": text(row, "bin") or None,
        "pending_bin": text(row, "pending_bin") or None,
        "pending_since": None if missing(row.get("pending_since")) else to_utc(row["pending_since"]).isoformat(),
        "level_note": level_note(num(row.get("s_index")), text(row, "bin") or None, str(row.get("level")),
                                 text(row, "pending_bin") or None,
                                 None if missing(row.get("pending_since")) else row["pending_since"])
                      if not missing(row.get("level")) else "",
        "snapshot_id": num(row.get("snapshot_id")),
        "numbers": {**{key: num(row.get(key)) for key in
                       ("s_index", "bin_hold_prob", "r_norm", "se_delta", "k", "alpha", "z", "n_items", "n_models",
                        "resample_draws")}, "p_level_holds": p_hold},
        "resample_noise": text(row, "resample_noise") or None,
        **_scale_annotations(row),
        "why": level_meaning(level, p_hold),
        "sql": look.saturation_series(bench, scope=base_scope, table_id=text(row, "table_id"), population=population,
                                      k=num(row.get("k")), alpha=num(row.get("alpha"))),
    }


def _scale_annotations(row: Mapping[str, Any]) -> dict[str, Any]:
    """Which S scale the row is on; comparable False says its bin is not on the paper's scale."""
    comparable = row.get("comparable")
    return {"scale": text(row, "scale") or None,
            "comparable": None if missing(comparable) else bool(comparable)}


def _conditions(history: pd.DataFrame, ctx: RuleContext) -> RuleOutput:
    conditions, events, groups = saturation_conditions(history)
    return RuleOutput(conditions, groups, events)


def _name(labels: Mapping[str, str], a: Mapping[str, Any]) -> str:
    return clean(a.get("benchmark_name") or labels["benchmark"]) + scope_suffix(labels)


def _headline(transition: str, labels: Mapping[str, str], a: Mapping[str, Any]) -> str:
    name = _name(labels, a)
    if transition == RESOLVED:
        return f"{name}: level no longer {labels['level']}"
    own = " (own scale, not comparable)" if a.get("comparable") is False else ""
    p = (a.get("numbers") or {}).get("p_level_holds")
    if not settled(p):     # below the floor a level is not announced as that level
        left = f"left level {a['from_level']}; " if a.get("from_level") else ""
        return f"{name}: {left}{unsettled(labels['level'], p)}{own}"
    if a.get("from_level"):
        return f"{name}: level {a['from_level']} → {labels['level']}{own}"
    return f"{name}: level {labels['level']}{own}"


def _state_line(state: str, labels: Mapping[str, str], a: Mapping[str, Any]) -> str:
    """How `benchwatch alerts` and the report list the alert: a level the benchmark has (a state)."""
    name = _name(labels, a)
    if state == "pending":
        return f"{name}: a move to {labels['level']} waits for confirmation"
    if state in ("resolved", "inactive"):
        return f"{name}: level was {labels['level']}"
    since = f" since {day(a.get('level_since'))}" if a.get("level_since") else ""
    note = f" ({a['level_note']})" if a.get("level_note") else ""
    return f"{name}: level {labels['level']}{since}{note}"


def _numbers(labels: Mapping[str, str], a: Mapping[str, Any]) -> list[str]:
    x = a.get("numbers", {})
    p = x.get("p_level_holds")
    held = f"P(level holds) {p:.2f}" if p is not None else "P(level holds) n/a (no re-evaluation draws)"
    n_items = "n/a" if x.get("n_items") is None else f"{x['n_items']:.0f}"
    models = f", {x['n_models']:.0f} models" if x.get("n_models") is not None else ""
    lines = [f"S_index {fixed(x.get('s_index'))} · {held} · R_norm {fixed(x.get('r_norm'))} · SE_Δ {fixed(x.get('se_delta'), 3)} "
             f"· k={general(x.get('k'))}, α={general(x.get('alpha'))}, n={n_items}{models} "
             f"· as of {day(a.get('as_of'))}"]
    if a.get("level_note") and labels.get("level") == a.get("to_level"):
        lines.append(clean(a["level_note"], 400))
    if a.get("top_after"):
        was = f", level {a['level_before']}" if a.get("level_before") else ""
        before = (f"top {TOP_SHOWN} before ({day(a.get('top_before_as_of'))}, S {fixed(a.get('s_before'))}{was}): "
                  f"{clean(a.get('top_before'), 600)}") if a.get("top_before") else ""
        after = f"after ({day(a.get('top_after_as_of'))}, S {fixed(a.get('s_after'))}): {clean(a['top_after'], 600)}"
        lines.append("; ".join(p for p in (before, after) if p))
    if a.get("proposed_since") and a.get("committed_at"):
        lines.append(f"the level moved on {day(a['committed_at'])}: S stayed past the edge for {LEVEL_DWELL_DAYS} days "
                         f"after {day(a['proposed_since'])} (no newer snapshot undid it)")
    if a.get("retired"):
        lines.append(clean(a["retired"], 300))
    if a.get("comparable") is False:
        lines.append(f"Not comparable: S here uses {clean(a.get('scale') or 'another scale', 40)}, not the "
                     "paper's binomial SE at a known n; its bin is not on the same scale as other benchmarks")
    return lines


def _replaced(old: AlertState) -> dict[str, Any]:
    """The level the new one replaced."""
    return {"from_level": old.labels["level"]}


def _read(con: Connection, settings: RuleSettings) -> pd.DataFrame | None:
    return store.read_saturation_series(con, k=SATURATION_K, alpha=SATURATION_ALPHA)


RULE = AlertRule(
    name="saturation_bin_changed", input="saturation", read=_read, conditions=_conditions,
    kinds=(AlertKind(SATURATION_BIN_CHANGED, _headline, _numbers, group_keys=("benchmark", "table", "scope"),
                     replaced=_replaced, state_line=_state_line, baseline_role="level",
                     nouns=("level change", "level changes")),))

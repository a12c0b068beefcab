"""saturation_bin_changed{benchmark, table, scope, level}: a level alert per (table, scope, level).

A leaderboard table (registry.tables: `table_id`, e.g. `humaneval:evalplus`) is the unit: two
tables of one benchmark are two series and two alerts, named "HumanEval (EvalPlus)". A frame
without `table_id` is one series per benchmark (label `table` empty).

Firing while the *committed* hysteresis bin (analysis.hysteresis, docs/statistics.md) is
`level`, pending while the hysteresis proposes a move to `level` that is not committed yet. The
first observation of a (benchmark, scope) sets its level without a message. When a move is
committed the new level fires ("moderate → high"); the old level resolves in the same
evaluation and its resolution is folded into that message (an exclusive group per benchmark and
scope). Every committed move of the series is also an immutable `SaturationBinChanged` event.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Mapping

import numpy as np
import pandas as pd

from alerts.config import RuleSettings
from alerts.records import RESOLVED, AlertEvent, AlertState, Condition, fingerprint, to_utc
from alerts.rules.base import AlertKind, AlertRule, RuleContext, RuleOutput, make_labels, missing, num, \
    require, sql_literal, text
from alerts.text import clean, day, fixed, general, scope_suffix
from analysis import hysteresis
from analysis.constants import SATURATION_BINS

SATURATION_BIN_CHANGED = "saturation_bin_changed"
EVENT_BIN_CHANGED = "SaturationBinChanged"


def saturation_bin_series(history: pd.DataFrame) -> pd.DataFrame:
    """The coupling to `analysis.hysteresis`: committed (and proposed) bin after each snapshot.

    `history`: benchmark, as_of, s_index, optionally scope, population and bin_probs (one
    row per benchmark, scope, population and snapshot). A population other than ``models``
    is its own series, labelled scope ``<scope>:<population>`` (``all:systems``), so model
    runs and agent systems never share a state and model-run alerts keep their fingerprints.
    Adds `committed_bin` (the Schmitt-trigger state with its support test, analysis.hysteresis)
    and `proposed_bin` (the move the snapshot proposes while it is pending, else None).
    """
    require(history, ["benchmark", "as_of", "s_index"], "saturation history")
    frame = history.copy()
    if "scope" not in frame.columns:
        frame["scope"] = ""
    frame["scope"] = frame["scope"].fillna("").astype(str)
    if "population" in frame.columns:
        pop = frame["population"].fillna("models").astype(str)
        frame["scope"] = frame["scope"].where(pop.isin(["", "models"]), frame["scope"] + ":" + pop)
    frame["_table"] = frame["table_id"].fillna(frame["benchmark"]) if "table_id" in frame.columns \
        else frame["benchmark"]
    frame = frame.sort_values(["benchmark", "_table", "scope", "as_of"], kind="stable").reset_index(drop=True)
    committed: list[str | None] = []
    proposed: list[str | None] = []
    all_values = frame["s_index"].tolist()
    all_probs = frame["bin_probs"].tolist() if "bin_probs" in frame.columns else [None] * len(frame)
    keys = list(zip(frame["_table"].tolist(), frame["scope"].tolist()))
    start = 0
    for end in range(1, len(keys) + 1):   # sorted by key: a series is one run of rows (no groupby per series)
        if end < len(keys) and keys[end] == keys[start]:
            continue
        values, probs = all_values[start:end], all_probs[start:end]
        for x, p, st in zip(values, probs, hysteresis.states(values, probs)):
            committed.append(None if st.committed is None else SATURATION_BINS[st.committed])
            if st.pending_count and st.committed is not None:
                proposed.append(SATURATION_BINS[hysteresis.proposal(st.committed, float(x), probs=p)])
            else:
                proposed.append(None)
        start = end
    frame["committed_bin"] = pd.Series(committed, dtype="object")
    frame["proposed_bin"] = pd.Series(proposed, dtype="object")
    return frame


def saturation_conditions(history: pd.DataFrame) -> tuple[list[Condition], list[AlertEvent], set[tuple[str, ...]]]:
    """Level conditions and SaturationBinChanged events from a benchmark's S_index history.

    `history`: see `saturation_bin_series`; optionally benchmark_name, snapshot_id, `sources`
    (the sources whose scores the index uses: a failing one inhibits the alert) and the numbers
    shown in the message (r_norm, se_delta, k, alpha, z, n_items, n_models).
    Returns the conditions of the newest snapshot of every (benchmark, scope), the events of
    every committed move, and the groups that have data.
    """
    frame = saturation_bin_series(history)
    conditions: list[Condition] = []
    events: list[AlertEvent] = []
    groups: set[tuple[str, ...]] = set()
    by_group: dict[tuple[Any, Any], list[dict]] = {}   # one to_dict, not one per group (it was most of notify)
    for r in frame.to_dict("records"):
        if not (missing(r["benchmark"]) or missing(r["scope"])):   # as groupby: no group of a missing key
            by_group.setdefault((r["_table"], r["scope"]), []).append(r)
    for (_, scope), rows in by_group.items():
        bench = rows[0]["benchmark"]
        records = [r for r in rows if r["committed_bin"] is not None]
        if not records:
            continue  # no S_index yet: no data
        group = (SATURATION_BIN_CHANGED, str(bench), text(rows[0], "table_id"), str(scope))
        groups.add(group)
        for before, rec in zip(records, records[1:]):
            if rec["committed_bin"] != before["committed_bin"]:
                as_of = to_utc(rec["as_of"])
                level, prev_level = rec["committed_bin"], before["committed_bin"]
                up = SATURATION_BINS.index(level) > SATURATION_BINS.index(prev_level)
                series = text(rec, "table_id") or str(bench)
                events.append(AlertEvent(
                    key=f"{EVENT_BIN_CHANGED}|{series}|{scope}|{as_of.isoformat()}", at=as_of,
                    kind=SATURATION_BIN_CHANGED, event=EVENT_BIN_CHANGED,
                    fingerprint=fingerprint(_saturation_labels(rec, bench, scope, level)),
                    detail={"benchmark": str(bench), "table": text(rec, "table_id"), "scope": str(scope), "from": prev_level, "to": level,
                            "direction": "up" if up else "down", "as_of": as_of.isoformat(),
                            "s_index": num(rec.get("s_index")), "snapshot_id": num(rec.get("snapshot_id")),
                            **_scale_annotations(rec)}))
        last = records[-1]
        as_of = to_utc(last["as_of"])
        level = last["committed_bin"]
        conditions.append(Condition(
            labels=_saturation_labels(last, bench, scope, level),
            annotations=_saturation_annotations(last, bench, scope, level, as_of),
            data_as_of=as_of, fire_after=1, group=group))
        if last["proposed_bin"] is not None:
            target = last["proposed_bin"]
            conditions.append(Condition(
                labels=_saturation_labels(last, bench, scope, target),
                annotations=_saturation_annotations(last, bench, scope, target, as_of),
                data_as_of=as_of, fire_after=None, group=None))
    return conditions, events, groups


def _saturation_labels(row: Mapping[str, Any], bench: Any, scope: Any, level: str) -> dict[str, str]:
    return make_labels(SATURATION_BIN_CHANGED, benchmark=bench, table=text(row, "table_id"), scope=scope,
                       level=level, source=text(row, "source"))


def _saturation_why(level: str) -> str:
    """What the level means for a reader, independent of the direction of the move."""
    if level in ("high", "very high"):
        return ("the top models are statistically indistinguishable: new results on this benchmark "
                "barely separate frontier models")
    if level == "moderate":
        return ("the spread of the top models is comparable to evaluation noise: differences at the "
                "top are only partly meaningful")
    return "the top models are clearly separated: this benchmark still discriminates at the frontier"


def _saturation_annotations(row: Mapping[str, Any], bench: Any, scope: Any, level: str,
                            as_of: datetime) -> dict[str, Any]:
    name = text(row, "table_name") or text(row, "benchmark_name") or str(bench)
    base_scope, _, population = str(scope).partition(":")
    where = f"benchmark = {sql_literal(bench)}" + (f" AND scope = {sql_literal(base_scope)}" if base_scope else "")
    if text(row, "table_id"):
        where += f" AND table_id = {sql_literal(text(row, 'table_id'))}"
    if population:
        where += f" AND population = {sql_literal(population)}"
    for key in ("k", "alpha"):
        if num(row.get(key)) is not None:
            where += f" AND {key} = {num(row.get(key)):g}"
    sources = row.get("sources")
    return {
        "benchmark_name": name,
        "sources": sorted(str(x) for x in sources) if isinstance(sources, (list, tuple, np.ndarray)) else [],
        "to_level": level,
        "as_of": as_of.isoformat(),
        "snapshot_id": num(row.get("snapshot_id")),
        "numbers": {key: num(row.get(key)) for key in
                    ("s_index", "bin_hold_prob", "r_norm", "se_delta", "k", "alpha", "z", "n_items", "n_models",
                     "resample_draws")},
        "resample_noise": text(row, "resample_noise") or None,
        **_scale_annotations(row),
        "why": _saturation_why(level),
        "sql": f"SELECT as_of, s_index, bin, r_norm, se_delta, n_models FROM saturation WHERE {where} "
               "ORDER BY as_of DESC LIMIT 10",
    }


def _scale_annotations(row: Mapping[str, Any]) -> dict[str, Any]:
    """Which S scale the row is on; comparable False says its bin is not on the paper's scale."""
    comparable = row.get("comparable")
    return {"scale": text(row, "scale") or None,
            "comparable": None if missing(comparable) else bool(comparable)}


def _conditions(history: pd.DataFrame, ctx: RuleContext) -> RuleOutput:
    conditions, events, groups = saturation_conditions(history)
    return RuleOutput(conditions, groups, events)


def _headline(transition: str, labels: Mapping[str, str], a: Mapping[str, Any]) -> str:
    name = clean(a.get("benchmark_name") or labels["benchmark"]) + scope_suffix(labels)
    if transition == RESOLVED:
        return f"{name}: saturation no longer {labels['level']}"
    own = " (own scale, not comparable)" if a.get("comparable") is False else ""
    if a.get("from_level"):
        return f"{name}: saturation {a['from_level']} → {labels['level']}{own}"
    return f"{name}: saturation {labels['level']}{own}"


def _numbers(labels: Mapping[str, str], a: Mapping[str, Any]) -> list[str]:
    x = a.get("numbers", {})
    s_index = f"S_index {fixed(x.get('s_index'))}"
    if x.get("bin_hold_prob") is not None:
        draws = f", {x['resample_draws']:.0f} draws" if x.get("resample_draws") is not None else ""
        noise = clean(a.get("resample_noise") or "re-evaluation noise", 60)
        s_index += f" (P(bin holds) {x['bin_hold_prob']:.2f} under {noise}{draws})"
    n_items = "n/a" if x.get("n_items") is None else f"{x['n_items']:.0f}"
    models = f", {x['n_models']:.0f} models" if x.get("n_models") is not None else ""
    lines = [f"{s_index} · R_norm {fixed(x.get('r_norm'))} · SE_Δ {fixed(x.get('se_delta'), 3)} "
             f"· k={general(x.get('k'))}, α={general(x.get('alpha'))}, n={n_items}{models} "
             f"· as of {day(a.get('as_of'))}"]
    if a.get("comparable") is False:
        lines.append(f"Not comparable: S here uses {clean(a.get('scale') or 'another scale', 40)}, not the "
                     "paper's binomial SE at a known n; its bin is not on the same scale as other benchmarks")
    return lines


def _replaced(old: AlertState) -> dict[str, Any]:
    """The level the new one replaced."""
    return {"from_level": old.labels["level"]}


def _read(con: Any, settings: RuleSettings) -> pd.DataFrame | None:
    from analysis.constants import SATURATION_ALPHA, SATURATION_K
    from storage import alerts as store
    return store.read_saturation_series(con, k=SATURATION_K, alpha=SATURATION_ALPHA)


RULE = AlertRule(
    name="saturation_bin_changed", input="saturation", read=_read, conditions=_conditions,
    kinds=(AlertKind(SATURATION_BIN_CHANGED, _headline, _numbers, group_keys=("benchmark", "table", "scope"),
                     replaced=_replaced),))

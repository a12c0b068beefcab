"""contamination_suspect{model, benchmark, source}: one alert per flagged (model, benchmark,
source), whatever signals flagged it. The analysis decides persistence: `persisted` (two
snapshots) and `corroborated` (a second signal or source) fire, a fresh `suspect` is pending.
Never labelled "contaminated"."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Mapping

import pandas as pd

from alerts.config import RuleSettings
from alerts.records import RESOLVED, Condition, to_utc
from alerts.rules.base import AlertKind, AlertRule, RuleOutput, make_labels, missing, num, \
    require, sql_literal, text
from alerts.text import clean, day, fixed, pp
from analysis.constants import CONTAMINATION_STATUSES
from common.jsonsafe import decoded as _evidence

CONTAMINATION_SUSPECT = "contamination_suspect"

# contamination statuses of analysis.contamination (strongest first): a flag is a suspicion,
# never a verdict; `suspect` = flagged on one snapshot, not yet persisted or corroborated
CORROBORATED, PERSISTED, SUSPECT, NOT_FLAGGED = "corroborated", "persisted", "suspect", "not_flagged"
_FLAG_STRENGTH: tuple[str, ...] = (CORROBORATED, PERSISTED, SUSPECT)


def contamination_conditions(suspects: pd.DataFrame, now: datetime) -> list[Condition]:
    """One condition per flagged (model, benchmark, source) of `analysis.contamination.run_signals`.

    `suspects`: model, benchmark, signal, effect, q_value, status, evidence, and optionally
    source, se, ci_low, ci_high, p_value, as_of, model_name, benchmark_name. Persistence is
    decided by the analysis: `persisted` and `corroborated` fire, `suspect` (flagged on one
    snapshot only) is pending, `not_flagged` is no condition.
    """
    require(suspects, ["model", "benchmark", "signal", "effect", "q_value", "status", "evidence"], "suspects")
    bad = sorted(set(suspects["status"].astype(str)) - set(CONTAMINATION_STATUSES))
    if bad:
        raise ValueError(f"suspects frame: status {bad} not in {CONTAMINATION_STATUSES}")
    frame = suspects.loc[suspects["status"] != NOT_FLAGGED].copy()
    if "source" not in frame.columns:
        frame["source"] = ""
    frame["source"] = frame["source"].fillna("").astype(str)
    conditions = []
    for (model, bench, source), rows in frame.groupby(["model", "benchmark", "source"], sort=True):
        records = rows.to_dict("records")
        statuses = {str(r["status"]) for r in records}
        status = next(s for s in _FLAG_STRENGTH if s in statuses)
        # the strongest evidence first: smallest q, then largest effect
        records.sort(key=lambda r: (1.0 if num(r["q_value"]) is None else num(r["q_value"]),
                                    -(num(r["effect"]) or 0.0)))
        as_ofs = [to_utc(r["as_of"]) for r in records if not missing(r.get("as_of"))]
        as_of = max(as_ofs) if as_ofs else now
        signals = [{
            "signal": text(r, "signal"), "detail": text(r, "detail"), "status": text(r, "status"),
            **{key: num(r.get(key)) for key in ("effect", "se", "ci_low", "ci_high", "p_value", "q_value")},
            "evidence": _evidence(r.get("evidence")),
        } for r in records]
        where = f"model = {sql_literal(model)} AND benchmark = {sql_literal(bench)}"
        conditions.append(Condition(
            labels=make_labels(CONTAMINATION_SUSPECT, model=model, benchmark=bench, source=source),
            annotations={
                "model_name": text(records[0], "model_name") or str(model),
                "benchmark_name": text(records[0], "benchmark_name") or str(bench),
                "status": status,
                "as_of": as_of.isoformat(),
                "signals": signals,
                "why": "the score outruns what this model does on clean reference data, which test-set "
                       "exposure would explain; read this model's number on this benchmark with caution",
                "sql": f"SELECT * FROM suspects WHERE {where}",
            },
            data_as_of=as_of,
            fire_after=None if status == SUSPECT else 1))
    return conditions


def _headline(transition: str, labels: Mapping[str, str], a: Mapping[str, Any]) -> str:
    who = f"{clean(a.get('model_name') or labels['model'])} on {clean(a.get('benchmark_name') or labels['benchmark'])}"
    if transition == RESOLVED:
        return f"{who}: contamination suspicion cleared"
    return f"{who}: contamination suspect ({a.get('status', 'suspect')})"


def _numbers(labels: Mapping[str, str], a: Mapping[str, Any]) -> list[str]:
    lines = []
    for s in a.get("signals", []):
        name = clean(s.get("signal"), 40) + (f" ({clean(s['detail'], 80)})" if s.get("detail") else "")
        parts = [f"{name}: effect {pp(s.get('effect'), signed=True)}"]
        if s.get("se") is not None:
            parts[0] += f" ± {pp(s['se'])}"
        if s.get("ci_low") is not None and s.get("ci_high") is not None:
            parts.append(f"95% CI {pp(s['ci_low'], True)} to {pp(s['ci_high'], True)}")
        if s.get("p_value") is not None:
            parts.append(f"p={s['p_value']:.2g}")
        parts.append(f"q={fixed(s.get('q_value'), 3)}")
        if s.get("n_pre") is not None or s.get("n_post") is not None:
            parts.append(f"n {s.get('n_pre') or 'n/a'} pre / {s.get('n_post') or 'n/a'} post")
        if s.get("n_ref") is not None:
            parts.append(f"reference set {s['n_ref']} models")
        parts.append(clean(s.get("status", "suspect"), 20))
        lines.append(" · ".join(parts))
    lines.append(f"status {a.get('status', 'suspect')} (a suspicion, not a finding) · as of {day(a.get('as_of'))}")
    return lines


def _read(con: Any, settings: RuleSettings) -> pd.DataFrame | None:
    from storage import alerts as store
    return store.read_suspects(con)


RULE = AlertRule(
    name="contamination_suspect", input="suspects", read=_read,
    conditions=lambda suspects, ctx: RuleOutput(contamination_conditions(suspects, ctx.now),
                                                {(CONTAMINATION_SUSPECT,)}),
    kinds=(AlertKind(CONTAMINATION_SUSPECT, _headline, _numbers),))

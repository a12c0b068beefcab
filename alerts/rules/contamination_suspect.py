"""contamination_suspect{model, benchmark, source}: one alert per (model, benchmark, source)
with a stored contamination suspicion, whatever signals flagged it (docs/statistics.md,
"Suspicions"; README "Slack alerts").

The rule reads the stored suspicion states (table contamination_suspicions, written by the
analysis) and never recomputes a test: `confirmed` fires, `pending` stays pending (no message),
`resolved` resolves the alert with the data that resolved it. Which suspicion is confirmed is
the analysis' one first-notification rule (analysis.contamination.suspicions.confirmation):
flagged on two analyses of distinct data, or corroborated by another signal or source, or q at
most SUSPICION_CONFIRM_Q at once. A flag is delivered as confirmed only when the placebo calibration
it is judged by passes: for a signal calibrated per item set (A3: SET_CALIBRATED_SIGNALS), its own
(source, benchmark) set's calibration as `analyze` computed it on that set's data (table
contamination_set_calibrations, under the key the suspicion took when its evidence last changed,
so the verdict moves only with its own evidence); for the others, the newest `benchwatch calibrate`
(table contamination_calibrations). A miscalibrated one has its flags shown as unconfirmed, with that
reason (a firing one is withdrawn); so has one without a passing calibration on record ("not
calibrated on this data": none stored, or no placebo test was possible), since its q-values would be
unchecked on the data they run on. An unconfirmed suspicion stays open (not resolved).
An alert whose (model, benchmark, source) has no stored suspicion keeps its state. Never labelled
"contaminated".
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Mapping

import pandas as pd

from alerts.config import RuleSettings
from alerts.records import RESOLVED, Condition, to_utc
from alerts.rules.base import AlertKind, AlertRule, RuleOutput, make_labels, missing, num, \
    require, text
from alerts.text import clean, day, fixed, pp
from analysis.constants import CONTAMINATION_STATUSES, RETIRED_SIGNALS, SET_CALIBRATED_SIGNALS, SUSPICION_CONFIRM_Q, \
    SUSPICION_STATES
from common.jsonsafe import decoded as _evidence
from storage import rule_inputs as store
from storage import look_queries as look

if TYPE_CHECKING:
    from storage.store import Connection

CONTAMINATION_SUSPECT = "contamination_suspect"

# contamination statuses of analysis.contamination (strongest first), kept for the suspects view
CORROBORATED, PERSISTED, SUSPECT, NOT_FLAGGED = CONTAMINATION_STATUSES
PENDING, CONFIRMED, RESOLVED_STATE = SUSPICION_STATES
# an open suspicion of a signal that `benchwatch calibrate` last found miscalibrated (never fires)
UNCONFIRMED = "unconfirmed"

# why a suspicion was confirmed: (headline word, the rule in words)
CONFIRMED_BY_WORDS = {
    "distinct_data": ("persisted", "flagged on two analyses of distinct data"),
    "corroborated": ("corroborated", "corroborated by another signal or source"),
    "strong_q": (f"q ≤ {SUSPICION_CONFIRM_Q:g}", f"q at most {SUSPICION_CONFIRM_Q:g} at once"),
}


def _ids(v: Any) -> list[int]:
    if v is None or isinstance(v, (str, bytes)) or not hasattr(v, "__iter__"):
        return []
    return [int(i) for i in v]


def _iso(v: Any) -> str | None:
    return None if missing(v) else to_utc(v).isoformat()


def _data(ids: Any, as_of: Any) -> dict[str, Any]:
    return {"snapshot_ids": _ids(ids), "data_as_of": _iso(as_of)}


def contamination_conditions(suspicions: pd.DataFrame, now: datetime) -> RuleOutput:
    """Conditions from the stored suspicion states (storage.rule_inputs.read_suspicion_alerts).

    `suspicions`: model, benchmark, source, signal, detail, state, effect, p_value, q_value,
    evidence, distinct_data, snapshot_ids, data_as_of, and optionally se, ci_low, ci_high,
    confirmed_by, resolved_snapshot_ids, resolved_data_as_of, resolution, model_name,
    benchmark_name. Every (model, benchmark, source) in the frame is covered: an open
    suspicion is a condition (confirmed: fires; pending: waits), one with only resolved
    suspicions resolves the alert and says with which data.
    """
    require(suspicions, ["model", "benchmark", "source", "signal", "detail", "state", "effect", "p_value",
                         "q_value", "evidence", "distinct_data", "snapshot_ids", "data_as_of"], "suspicions")
    bad = sorted(set(suspicions["state"].astype(str)) - set(SUSPICION_STATES))
    if bad:
        raise ValueError(f"suspicions frame: state {bad} not in {SUSPICION_STATES}")
    frame = suspicions.copy()
    frame["source"] = frame["source"].fillna("").astype(str)
    conditions: list[Condition] = []
    covered: set[tuple[str, ...]] = set()
    for (model, bench, source), rows in frame.groupby(["model", "benchmark", "source"], sort=True):
        labels = make_labels(CONTAMINATION_SUSPECT, model=model, benchmark=bench, source=source)
        covered.add((CONTAMINATION_SUSPECT, str(model), str(bench), str(source)))
        records = rows.to_dict("records")
        names = {"model_name": text(records[0], "model_name") or str(model),
                 "benchmark_name": text(records[0], "benchmark_name") or str(bench)}
        open_ = [r for r in records if r["state"] != RESOLVED_STATE]
        if not open_:
            resolved = [_resolution(r) for r in records]
            as_ofs = [to_utc(r["resolved_data_as_of"]) for r in records if not missing(r.get("resolved_data_as_of"))]
            conditions.append(Condition(labels=labels, annotations={**names, "resolved_by": resolved},
                                        data_as_of=max(as_ofs) if as_ofs else now, resolves=True))
            continue
        # a signal whose newest placebo calibration found it miscalibrated on this data: its flags are
        # shown unconfirmed, with that reason, never delivered as confirmed (issue 50)
        unconfirmed = {text(r, "signal"): _miscalibrated(r) for r in open_ if _calibration_failed(r)}
        unconfirmed.update({text(r, "signal"): _not_calibrated(r) for r in open_ if _calibration_missing(r)})
        unconfirmed.update({text(r, "signal"): RETIRED_SIGNALS[text(r, "signal")] for r in open_
                            if text(r, "signal") in RETIRED_SIGNALS})
        confirmed = [r for r in open_ if r["state"] == CONFIRMED and text(r, "signal") not in unconfirmed]
        # the strongest evidence first: smallest q, then largest effect
        open_.sort(key=lambda r: (1.0 if num(r["q_value"]) is None else num(r["q_value"]),
                                  -(num(r["effect"]) or 0.0)))
        as_ofs = [to_utc(r["data_as_of"]) for r in open_ if not missing(r.get("data_as_of"))]
        as_of = max(as_ofs) if as_ofs else now
        signals = [{
            "signal": text(r, "signal"), "detail": text(r, "detail"), "state": text(r, "state"),
            **{key: num(r.get(key)) for key in ("effect", "se", "ci_low", "ci_high", "p_value", "q_value")},
            "distinct_data": int(num(r.get("distinct_data")) or 1),
            **_data(r.get("snapshot_ids"), r.get("data_as_of")),
            "evidence": _evidence(r.get("evidence")),
            "calibrated": text(r, "signal") not in unconfirmed,
        } for r in open_]
        why = sorted({text(r, "confirmed_by") for r in confirmed if text(r, "confirmed_by")})
        conditions.append(Condition(
            labels=labels,
            annotations={
                **names,
                "status": CONFIRMED if confirmed else UNCONFIRMED if unconfirmed else PENDING,
                "confirmed_by": why,
                "unconfirmed_because": [unconfirmed[k] for k in sorted(unconfirmed)],
                "as_of": as_of.isoformat(),
                "signals": signals,
                "why": "the score outruns what this model does on clean reference data, which test-set "
                       "exposure would explain; read this model's number on this benchmark with caution",
                "sql": look.suspicions(model, bench),
            },
            data_as_of=as_of,
            fire_after=1 if confirmed else None))
    return RuleOutput(conditions, covered)


def _calibration_failed(r: Mapping[str, Any]) -> bool:
    ok = r.get("calibration_ok")
    return ok is not None and not missing(ok) and not bool(ok)


def _calibration_missing(r: Mapping[str, Any]) -> bool:
    """No passing calibration on record for this suspicion's signal: none stored, or its newest one
    had no placebo test (`calibration_ok` NULL). A frame without the calibration columns (read
    before migration 050's reader joined them) counts as none."""
    ok = r.get("calibration_ok")
    return ok is None or missing(ok)


def _not_calibrated(r: Mapping[str, Any]) -> str:
    """Why a signal without a passing calibration on record has its flags unconfirmed."""
    c = r.get("calibration") or {}
    name = clean(text(r, "signal"), 40)
    if text(r, "signal") in SET_CALIBRATED_SIGNALS:
        where = clean(c.get("item_set") or f"{text(r, 'source')}/{text(r, 'benchmark')}", 120)
        if c and not missing(c.get("calibrated_at")):
            units = num(c.get("units"))
            return (f"{name} is not calibrated on this data: its item set {where} allows no placebo test "
                    f"({'no' if not units else int(units)} clean model(s) with items on both sides of a fake cutoff "
                    "are too few), so its q-values are unchecked")
        return (f"{name} is not calibrated on this data: no calibration of its item set {where} on record "
                "(the next analysis that reads the set's data computes one), so its q-values are unchecked")
    if c and not missing(c.get("calibrated_at")):
        return (f"{name} is not calibrated on this data: its placebo calibration of {day(c['calibrated_at'])} found no "
                "placebo test possible (too few clean models or items), so its q-values are unchecked")
    return (f"{name} is not calibrated on this data: no placebo calibration on record (run benchwatch calibrate), "
            "so its q-values are unchecked")


def _miscalibrated(r: Mapping[str, Any]) -> str:
    """Why a signal's flags are unconfirmed: the figures of the calibration they are judged by
    (storage.rule_inputs.with_calibration: their item set's, or the newest `benchwatch calibrate`)."""
    c = r.get("calibration") or {}

    def share(name: str) -> str:
        v, lo, hi = (num(c.get(k)) for k in (name, f"{name}_lo", f"{name}_hi"))
        return "n/a" if v is None else f"{v:.1%} [{lo or 0:.1%}, {hi or 0:.1%}]"
    when = f" of {day(c['calibrated_at'])}" if not missing(c.get("calibrated_at")) else ""
    figures = (f"placebo P(p < 0.01) {share('p01')}, P(p < 0.05) {share('p05')}, trials with a BH flag "
               f"{share('fw_bh')}")
    if c.get("item_set"):
        units = num(c.get("units"))
        return (f"{clean(text(r, 'signal'), 40)} is miscalibrated on its item set {clean(c['item_set'], 120)} (its "
                f"placebo calibration{when}{f' on {int(units)} clean models' if units else ''}: {figures}): "
                "its q-values there are not to be trusted")
    return (f"{clean(text(r, 'signal'), 40)} is miscalibrated on this data (benchwatch calibrate{when}: {figures}): "
            "its q-values are not to be trusted")


def _resolution(r: Mapping[str, Any]) -> dict[str, Any]:
    """What a resolved suspicion's message shows of its resolution (the evidence read once)."""
    ev = _evidence(r.get("resolution")) or {}
    return {"signal": text(r, "signal"), "detail": text(r, "detail"),
            **_data(r.get("resolved_snapshot_ids"), r.get("resolved_data_as_of")),
            **{k: num(ev.get(k)) for k in ("effect", "p_value", "q_value")},
            "why": str(ev.get("why") or ""), "tested": ev.get("tested") is not False}


def _data_words(ids: Any, as_of: Any) -> str:
    snaps = ", ".join(str(i) for i in _ids(ids)) or "n/a"
    return f"snapshot{'s' if len(_ids(ids)) != 1 else ''} {snaps} of {day(as_of)}" if as_of else f"snapshots {snaps}"


def _headline(transition: str, labels: Mapping[str, str], a: Mapping[str, Any]) -> str:
    who = f"{clean(a.get('model_name') or labels['model'])} on {clean(a.get('benchmark_name') or labels['benchmark'])}"
    if transition == RESOLVED and a.get("status") == UNCONFIRMED and not a.get("resolved_by"):
        # a firing suspicion whose signal a later calibration found miscalibrated: withdrawn, not cleared
        return f"{who}: contamination suspect withdrawn to unconfirmed ({_unconfirmed_words(a)})"
    if transition == RESOLVED:
        data = "; ".join(_data_words(r.get("snapshot_ids"), r.get("data_as_of")) for r in a.get("resolved_by", []))
        if not data:     # a notice queued before suspicions were stored
            return f"{who}: contamination suspicion cleared"
        if not any(r.get("tested", True) for r in a.get("resolved_by", [])):
            # no verdict on the new data: the test could not run there, so the suspicion is closed, not cleared
            return f"{who}: contamination suspicion closed: new data ({data}) no longer allow the test"
        return f"{who}: contamination suspicion resolved: new data ({data}) no longer flag it"
    why = ", ".join(CONFIRMED_BY_WORDS.get(w, (w, w))[0] for w in a.get("confirmed_by", [])) \
        or a.get("status", "suspect")
    if a.get("status") == UNCONFIRMED:
        why = "unconfirmed: " + _unconfirmed_words(a)
    return f"{who}: contamination suspect ({why})"


def _unconfirmed_words(a: Mapping[str, Any]) -> str:
    """The headline's short form of why an open suspicion is unconfirmed (its reasons in full follow)."""
    reasons = a.get("unconfirmed_because", [])
    if any("miscalibrated" in r for r in reasons):
        return "its signal is miscalibrated on this data"
    if any("not calibrated" in r for r in reasons):
        return "its signal is not calibrated on this data"
    return "its signal is retired from alerting"


def _numbers(labels: Mapping[str, str], a: Mapping[str, Any]) -> list[str]:
    lines = []
    for r in a.get("resolved_by", []):
        name = clean(r.get("signal"), 40) + (f" ({clean(r['detail'], 80)})" if r.get("detail") else "")
        parts = [f"{name} on {_data_words(r.get('snapshot_ids'), r.get('data_as_of'))}"]
        if r.get("effect") is not None:
            parts.append(f"effect {pp(r['effect'], signed=True)}")
        if r.get("p_value") is not None:
            parts.append(f"p={r['p_value']:.2g}")
        if r.get("q_value") is not None:
            parts.append(f"q={fixed(r['q_value'], 3)}")
        parts.append(clean(r.get("why") or "not flagged", 120))
        lines.append(" · ".join(parts))
    if a.get("resolved_by"):
        return lines
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
        ev = s.get("evidence") or {}
        if ev.get("n_pre") is not None or ev.get("n_post") is not None:
            parts.append(f"n {ev.get('n_pre') or 'n/a'} pre / {ev.get('n_post') or 'n/a'} post")
        if ev.get("n_ref") is not None:
            parts.append(f"reference set {ev['n_ref']} models")
        if ev.get("ability_clamped"):
            side = "weaker" if ev.get("ability_side", "below") == "below" else "stronger"
            parts.append(f"the model is {side} than every clean reference: the comparison extrapolates "
                         "(matched at the references' edge)")
        if s.get("snapshot_ids"):
            parts.append(f"on {_data_words(s.get('snapshot_ids'), s.get('data_as_of'))}")
            seen = int(s.get("distinct_data") or 1)
            parts.append(f"flagged on {seen} data version{'s' if seen != 1 else ''}")
        parts.append(clean(s.get("status") or s.get("state") or "suspect", 20))
        lines.append(" · ".join(parts))
    for reason in a.get("unconfirmed_because", []):
        lines.append(f"unconfirmed: {clean(reason, 400)}")
    rule = "; ".join(CONFIRMED_BY_WORDS.get(w, (w, w))[1] for w in a.get("confirmed_by", []))
    lines.append(f"status {a.get('status', 'suspect')}{f' ({rule})' if rule else ''} (a suspicion, not a finding)"
                 f" · as of {day(a.get('as_of'))}")
    return lines


def _read(con: Connection, settings: RuleSettings) -> pd.DataFrame | None:
    return store.read_suspicion_alerts(con)


RULE = AlertRule(
    name="contamination_suspect", input="suspects", read=_read,
    conditions=lambda suspicions, ctx: contamination_conditions(suspicions, ctx.now),
    kinds=(AlertKind(CONTAMINATION_SUSPECT, _headline, _numbers, scope_keys=("model", "benchmark", "source")),))

"""source_disagreement{benchmark, model, table} (info, disabled by default): two sources measure one
model on one question set and disagree (issue 54; analysis/disagreement.py, as the last `analyze`
stored it: storage.disagreements, which `status` and the report read too). It fires for

- a *finding*: a gap with |z| >= 3 against the systematic offset of the two tables, kept by
  Benjamini-Hochberg over the independent (benchmark, model) units; or
- a *transcription error*: an Epoch `*_external` copy off the board it copies by more than rounding.

A new disagreement notifies once; it resolves when the two numbers no longer disagree (a
corrected row, a new snapshot). Label `table` is "<table a> vs <table b>"; the annotation `sources`
names both sources, so a failing source mutes it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

import pandas as pd

from alerts.config import RuleSettings
from alerts.records import RESOLVED, Condition, to_utc
from alerts.rules.base import INFO, AlertKind, AlertRule, RuleContext, RuleOutput, make_labels, num
from alerts.text import clean, fixed, pp
from analysis.disagreement import Disagreements
from storage import look_queries as look
from storage.disagreements import read_disagreements

if TYPE_CHECKING:
    from storage.store import Connection

SOURCE_DISAGREEMENT = "source_disagreement"


def _score(value: Any, metric: str) -> str:
    if value is None:
        return "n/a"
    return f"{value * 100:.1f}%" if metric == "proportion" else fixed(value, 3)


def disagreement_conditions(result: Disagreements, now: Any) -> list[Condition]:
    """One condition per finding and per transcription error of the stored analysis."""
    out = []
    for what, frame in (("finding", result.findings), ("transcription", result.mismatches)):
        for r in frame.to_dict("records"):
            table = f"{r['table_a']} vs {r['table_b']}"
            days = [d for d in (r.get("date_a"), r.get("date_b")) if d is not None and d == d]
            as_of = to_utc(pd.Timestamp(max(days))) if days else to_utc(now)
            out.append(Condition(
                labels=make_labels(SOURCE_DISAGREEMENT, benchmark=r["benchmark"], model=r["model"], table=table),
                annotations={"what": what, "table_a": r["table_a"], "table_b": r["table_b"],
                             "sources": sorted({str(r["source_a"]), str(r["source_b"])}), "metric": r["metric"],
                             "numbers": {"score_a": num(r["score_a"]), "score_b": num(r["score_b"]),
                                         "diff": num(r["diff"]), "z": num(r.get("z")),
                                         "z_resid": num(r.get("z_resid")), "offset": num(r.get("table_offset")),
                                         "offset_pairs": num(r.get("offset_pairs")),
                                         "q": num(r.get("q"))},
                             "why": str(r["why"]),
                             "sql": look.disagreements(r["benchmark"], r["model"])},
                data_as_of=as_of))
    return out


def _conditions(result: Disagreements, ctx: RuleContext) -> RuleOutput:
    return RuleOutput(disagreement_conditions(result, ctx.now), {(SOURCE_DISAGREEMENT,)})


def _headline(transition: str, labels: Mapping[str, str], a: Mapping[str, Any]) -> str:
    name = f"{clean(labels['benchmark'])} · {clean(labels['model'])}"
    if transition == RESOLVED:
        return f"{name}: {clean(labels['table'])} no longer disagree"
    if a.get("what") == "transcription":
        return f"{name}: {clean(a.get('table_a'))} does not match the board it copies ({clean(a.get('table_b'))})"
    return f"{name}: {clean(a.get('table_a'))} and {clean(a.get('table_b'))} disagree"


def _numbers(labels: Mapping[str, str], a: Mapping[str, Any]) -> list[str]:
    x, metric = a.get("numbers", {}), str(a.get("metric", "proportion"))
    line = (f"{clean(a.get('table_a'))} {_score(x.get('score_a'), metric)} vs {clean(a.get('table_b'))} "
            f"{_score(x.get('score_b'), metric)}")
    if a.get("what") != "transcription":
        if x.get("offset_pairs"):
            offset = pp(x.get("offset"), signed=True) if metric == "proportion" else fixed(x.get("offset"), 3)
            line += f" · z {fixed(x.get('z_resid'), 1)} against the two sources' offset {offset}"
        else:
            line += (f" · z {fixed(x.get('z_resid'), 1)} against sampling noise alone (too few shared models to "
                     "estimate the two harnesses' offset, which could explain the gap)")
        line += f" · q {fixed(x.get('q'), 3)}"
    return [line]       # the pair's `why` is the message's own "why:" line


def _read(con: Connection, settings: RuleSettings) -> Disagreements | None:
    return read_disagreements(con)


RULE = AlertRule(
    name="source_disagreement", input="disagreements", read=_read, conditions=_conditions,
    kinds=(AlertKind(SOURCE_DISAGREEMENT, _headline, _numbers, severity=INFO,
                     nouns=("source disagreement", "source disagreements")),))

"""new_frontier{benchmark, table, scope, model} (info, disabled by default): the record holder of a
leaderboard table (and scope) changed. An exclusive group per (table, scope): the new holder's
firing folds the resolution of the old one ("new frontier X (was Y)"). A frame without
`table_id` is one table per benchmark (label `table` empty)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

import pandas as pd

from alerts.config import RuleSettings
from alerts.records import RESOLVED, AlertState, Condition, to_utc
from alerts.rules.base import INFO, AlertKind, AlertRule, RuleContext, RuleOutput, make_labels, num, require, \
    text
from alerts.text import clean, day, fixed, scope_suffix
from analysis.constants import SATURATION_K
from storage import rule_inputs as store
from storage import look_queries as look

if TYPE_CHECKING:
    from storage.store import Connection

NEW_FRONTIER = "new_frontier"


def frontier_conditions(frontier: pd.DataFrame) -> tuple[list[Condition], set[tuple[str, ...]]]:
    """new_frontier: the current record holder per (benchmark, scope); `benchmark, model, score, as_of`."""
    require(frontier, ["benchmark", "model", "score", "as_of"], "frontier")
    frame = frontier.copy()
    if "scope" not in frame.columns:
        frame["scope"] = ""
    frame["scope"] = frame["scope"].fillna("").astype(str)
    frame["_table"] = frame["table_id"].fillna("") if "table_id" in frame.columns else ""
    conditions: list[Condition] = []
    groups: set[tuple[str, ...]] = set()
    for (bench, table, scope), rows in frame.groupby(["benchmark", "_table", "scope"], sort=True):
        row = rows.sort_values("as_of", kind="stable").to_dict("records")[-1]
        group = (NEW_FRONTIER, str(bench), str(table), str(scope))
        groups.add(group)
        as_of = to_utc(row["as_of"])
        conditions.append(Condition(
            labels=make_labels(NEW_FRONTIER, benchmark=bench, table=table, scope=scope, model=row["model"],
                               source=text(row, "source")),
            annotations={"benchmark_name": text(row, "table_name") or text(row, "benchmark_name") or str(bench),
                         "model_name": text(row, "model_name") or str(row["model"]),
                         "as_of": as_of.isoformat(),
                         "numbers": {"score": num(row["score"]), "stderr": num(row.get("stderr"))},
                         "why": "a new best score on this benchmark",
                         "sql": look.frontier(bench, table)},
            data_as_of=as_of, fire_after=1, group=group))
    return conditions, groups


def _conditions(frontier: pd.DataFrame, ctx: RuleContext) -> RuleOutput:
    conditions, groups = frontier_conditions(frontier)
    return RuleOutput(conditions, groups)


def _headline(transition: str, labels: Mapping[str, str], a: Mapping[str, Any]) -> str:
    name = clean(a.get("benchmark_name") or labels["benchmark"]) + scope_suffix(labels)
    model = clean(a.get("model_name") or labels["model"])
    if transition == RESOLVED:
        return f"{name}: {model} no longer holds the record"
    before = f" (was {clean(a['from_model_name'])})" if a.get("from_model_name") else ""
    return f"{name}: new frontier {model}{before}"


def _numbers(labels: Mapping[str, str], a: Mapping[str, Any]) -> list[str]:
    x = a.get("numbers", {})
    score = fixed(x.get("score"), 3) + (f" ± {fixed(x['stderr'], 3)}" if x.get("stderr") is not None else "")
    return [f"score {score} · as of {day(a.get('as_of'))}"]


def _replaced(old: AlertState) -> dict[str, Any]:
    """The record holder the new one replaced."""
    return {"from_model": old.labels["model"],
            "from_model_name": old.annotations.get("model_name", old.labels["model"]),
            "from_numbers": old.annotations.get("numbers", {})}


def _read(con: Connection, settings: RuleSettings) -> pd.DataFrame | None:
    return store.read_frontier_holders(con, k=SATURATION_K)


RULE = AlertRule(
    name="new_frontier", input="frontier", read=_read, conditions=_conditions,
    kinds=(AlertKind(NEW_FRONTIER, _headline, _numbers, severity=INFO, group_keys=("benchmark", "table", "scope"),
                     replaced=_replaced),))

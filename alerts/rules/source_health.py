"""source_failing{source} (>= N failed collection runs in a row) and source_stale{source} (no new
snapshot for >= D days). While firing they inhibit every derived alert with the same `source`
label, or whose numbers come from that source (annotation `sources`: a benchmark's saturation
pools every source that reports it). Source alerts never inhibit each other."""

from __future__ import annotations

from typing import Any, Mapping

import pandas as pd

from alerts.config import RuleSettings
from alerts.records import RESOLVED, Condition, to_utc
from alerts.rules.base import AlertKind, AlertRule, RuleContext, RuleOutput, make_labels, missing, num, \
    require, sql_literal, text
from alerts.text import clean, day

SOURCE_FAILING = "source_failing"
SOURCE_STALE = "source_stale"


def source_conditions(health: pd.DataFrame, now: Any, settings: RuleSettings) -> list[Condition]:
    """source_failing / source_stale conditions from `source, consecutive_failures, last_new_snapshot_at`.

    With a `last_attempt_at` column, a source is stale only if it was collected after its last
    new snapshot: a source that is only ingested by hand now and then is not "stale".
    """
    require(health, ["source", "consecutive_failures", "last_new_snapshot_at"], "source health")
    now = to_utc(now)
    conditions = []
    for row in health.to_dict("records"):
        source = str(row["source"])
        failures = num(row["consecutive_failures"]) or 0
        last_new = row["last_new_snapshot_at"]
        last_new = None if missing(last_new) else to_utc(last_new)
        fetch_sql = ("SELECT started_at, status, http_status, error FROM fetches "
                     f"WHERE source = {sql_literal(source)} ORDER BY started_at DESC LIMIT 5")
        common = {"last_new_snapshot_at": last_new.isoformat() if last_new else None,
                  "consecutive_failures": int(failures), "last_error": text(row, "last_error") or None,
                  "sql": fetch_sql}
        if failures >= settings.source_failing_runs:
            conditions.append(Condition(
                labels=make_labels(SOURCE_FAILING, source=source),
                annotations={**common, "threshold_runs": settings.source_failing_runs,
                             "why": "alerts computed from this source's data are held back until it recovers"},
                data_as_of=now))
        attempted = row.get("last_attempt_at", now)
        collected_since = not missing(attempted) and (last_new is None or to_utc(attempted) > last_new)
        if last_new is not None and collected_since:
            age_days = (now - last_new).total_seconds() / 86400
            if age_days >= settings.source_stale_days:
                conditions.append(Condition(
                    labels=make_labels(SOURCE_STALE, source=source),
                    annotations={**common, "age_days": round(age_days, 1),
                                 "threshold_days": settings.source_stale_days,
                                 "why": "the leaderboard may have moved or changed format; alerts computed "
                                        "from its data are held back"},
                    data_as_of=now))
    return conditions


def _conditions(health: pd.DataFrame, ctx: RuleContext) -> RuleOutput:
    covered = {(kind, str(s)) for kind in (SOURCE_FAILING, SOURCE_STALE) for s in health["source"]}
    return RuleOutput(source_conditions(health, ctx.now, ctx.settings), covered)


def _failing_headline(transition: str, labels: Mapping[str, str], a: Mapping[str, Any]) -> str:
    source = clean(labels["source"])
    if transition == RESOLVED:
        return f"{source}: source recovered"
    return f"{source}: source failing ({a.get('consecutive_failures')} runs in a row)"


def _stale_headline(transition: str, labels: Mapping[str, str], a: Mapping[str, Any]) -> str:
    source = clean(labels["source"])
    if transition == RESOLVED:
        return f"{source}: new snapshot again"
    return f"{source}: no new snapshot for {a.get('age_days')} days"


def _numbers(labels: Mapping[str, str], a: Mapping[str, Any]) -> list[str]:
    line = (f"{a.get('consecutive_failures')} failed runs in a row · last new snapshot "
            f"{day(a.get('last_new_snapshot_at'))}")
    if a.get("last_error"):
        line += f" · last error: {clean(a['last_error'], 300)}"
    return [line]


def _read(con: Any, settings: RuleSettings) -> pd.DataFrame | None:
    from storage import alerts as store
    return store.read_source_health(con)


RULE = AlertRule(
    name="source_health", input="source_health", read=_read, conditions=_conditions,
    kinds=(AlertKind(SOURCE_FAILING, _failing_headline, _numbers, scope_keys=("source",), inhibits_sources=True),
           AlertKind(SOURCE_STALE, _stale_headline, _numbers, scope_keys=("source",), inhibits_sources=True)))

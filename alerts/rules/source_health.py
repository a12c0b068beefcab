"""source_failing{source} (>= N failed collection runs in a row) and source_stale{source} (no new
snapshot for >= D days). While firing they inhibit every derived alert with the same `source`
label, or whose numbers come from that source (annotation `sources`: a benchmark's saturation
pools every source that reports it). Source alerts never inhibit each other.

Each failure carries its cause in words (`failure_cause`: host names do not resolve, connection
refused, network unreachable, timed out, HTTP <status>, else the error itself); the digest shows
the failures (and the recoveries, without the old error) of one cause as one section.
network_outage{} fires when every source of the latest run failed with a network cause for N
runs (at least config.NETWORK_OUTAGE_MIN_SOURCES sources): one alert instead of one per source,
and it inhibits the per-source failing and stale alerts while it fires."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Mapping

import pandas as pd

from alerts.config import LATEST_RUN_WINDOW_MINUTES, NETWORK_OUTAGE_MIN_SOURCES, RuleSettings
from alerts.records import RESOLVED, Condition, to_utc
from alerts.rules.base import AlertKind, AlertRule, RuleContext, RuleOutput, make_labels, missing, num, \
    require, text
from alerts.text import clean, day
from storage import rule_inputs as store
from storage import look_queries as look

if TYPE_CHECKING:
    from storage.store import Connection

SOURCE_FAILING = "source_failing"
SOURCE_STALE = "source_stale"
NETWORK_OUTAGE = "network_outage"

# (pattern of the error text, cause in words, a network cause?) — first match wins
_CAUSES: tuple[tuple[re.Pattern, str, bool], ...] = (
    (re.compile(r"resolve|name resolution|name or service not known|nodename nor servname|getaddrinfo", re.I),
     "host names do not resolve (offline or DNS down)", True),
    (re.compile(r"network is unreachable|no route to host", re.I), "network unreachable (offline)", True),
    (re.compile(r"connection refused", re.I), "connection refused", True),
    (re.compile(r"timed out|timeout", re.I), "timed out", True),
)
_HTTP = re.compile(r"\bHTTP (\d{3})\b")


def failure_cause(error: Any) -> tuple[str, bool]:
    """(the cause of a failed fetch in words, whether it is a network cause) from its error text."""
    message = "" if missing(error) else str(error)
    for pattern, cause, network in _CAUSES:
        if pattern.search(message):
            return cause, network
    status = _HTTP.search(message)
    if status:
        return f"HTTP {status.group(1)}", False
    return (clean(message, 120) if message else "unknown error"), False


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
        fetch_sql = look.source_fetches(source)
        common = {"last_new_snapshot_at": last_new.isoformat() if last_new else None,
                  "consecutive_failures": int(failures), "last_error": text(row, "last_error") or None,
                  "sql": fetch_sql}
        if failures >= settings.source_failing_runs:
            conditions.append(Condition(
                labels=make_labels(SOURCE_FAILING, source=source),
                annotations={**common, "threshold_runs": settings.source_failing_runs,
                             "cause": failure_cause(row.get("last_error"))[0],
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
    outage = outage_condition(health, now, settings)
    return conditions + ([outage] if outage is not None else [])


def outage_condition(health: pd.DataFrame, now: Any, settings: RuleSettings) -> Condition | None:
    """network_outage: every source attempted in the latest run failed with a network cause, for at
    least `source_failing_runs` runs, and there are at least NETWORK_OUTAGE_MIN_SOURCES of them."""
    if "last_attempt_at" not in health.columns or not len(health):
        return None
    attempts = pd.to_datetime(health["last_attempt_at"], utc=True, errors="coerce")
    if attempts.isna().all():
        return None
    latest = health[attempts >= attempts.max() - timedelta(minutes=LATEST_RUN_WINDOW_MINUTES)]
    if len(latest) < NETWORK_OUTAGE_MIN_SOURCES:
        return None
    causes = [failure_cause(e) for e in latest["last_error"]] if "last_error" in latest.columns else []
    runs = [int(num(f) or 0) for f in latest["consecutive_failures"]]
    if not causes or not all(network for _, network in causes) or min(runs) < settings.source_failing_runs:
        return None
    named = sorted({cause for cause, _ in causes})
    return Condition(
        labels=make_labels(NETWORK_OUTAGE),
        annotations={"sources": [], "outage_sources": sorted(str(s) for s in latest["source"]),
                     "cause": "; ".join(named), "consecutive_failures": min(runs),
                     "why": "every source failed with a network cause: the network (or DNS) of this machine is "
                            "down, not the leaderboards; per-source failure alerts are held back while it lasts",
                     "sql": look.RECENT_FETCHES},
        data_as_of=to_utc(now))


def _conditions(health: pd.DataFrame, ctx: RuleContext) -> RuleOutput:
    covered: set[tuple[str, ...]] = {(kind, str(s)) for kind in (SOURCE_FAILING, SOURCE_STALE) for s in health["source"]}
    covered.add((NETWORK_OUTAGE,))
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


def _outage_headline(transition: str, labels: Mapping[str, str], a: Mapping[str, Any]) -> str:
    n = len(a.get("outage_sources") or [])
    if transition == RESOLVED:
        return f"network back: the {n} sources of the outage are reachable again"
    return f"network outage: all {n} sources failing ({clean(a.get('cause') or 'network', 120)})"


def _outage_numbers(labels: Mapping[str, str], a: Mapping[str, Any]) -> list[str]:
    sources = ", ".join(clean(s, 60) for s in (a.get("outage_sources") or []))
    return [f"{a.get('consecutive_failures')} failed runs in a row · sources: {sources}"]


def _read(con: Connection, settings: RuleSettings) -> pd.DataFrame | None:
    return store.read_source_health(con)


RULE = AlertRule(
    name="source_health", input="source_health", read=_read, conditions=_conditions,
    kinds=(AlertKind(NETWORK_OUTAGE, _outage_headline, _outage_numbers, inhibits_kinds=(SOURCE_FAILING, SOURCE_STALE),
                     baseline_role="failing", nouns=("network outage", "network outages")),
           AlertKind(SOURCE_FAILING, _failing_headline, _numbers, scope_keys=("source",), inhibits_sources=True,
                     cause_key="cause", nouns=("source failing", "sources failing")),
           AlertKind(SOURCE_STALE, _stale_headline, _numbers, scope_keys=("source",), inhibits_sources=True,
                     nouns=("source stale", "sources stale"))))

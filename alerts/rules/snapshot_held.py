"""snapshot_held{source}: the source's newest snapshot is held by the shrink guard (a table of it
dropped more than a fifth of its rows, or the source's own limit; storage/shrink_guard.py) and is not used until a later fetch
confirms it or `benchwatch accept` releases it. Resolves when no held snapshot of the source is
newer than its newest usable one."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

import pandas as pd

from alerts.config import RuleSettings
from alerts.records import RESOLVED, Condition, to_utc
from alerts.rules.base import AlertKind, AlertRule, RuleOutput, make_labels, require, text
from alerts.text import clean, day
from storage.status import held_snapshots
from storage import look_queries as look

if TYPE_CHECKING:
    from storage.store import Connection

SNAPSHOT_HELD = "snapshot_held"


def held_conditions(held: pd.DataFrame) -> list[Condition]:
    """snapshot_held{source}: one per source with a pending held snapshot (`source, snapshot_id, observed_at,
    held_reason`; storage.status.held_snapshots(pending_only=True)). The newest held snapshot is described."""
    require(held, ["source", "snapshot_id", "observed_at", "held_reason"], "held snapshots")
    conditions = []
    for source, rows in held.groupby("source", sort=True):
        row = rows.sort_values(["observed_at", "snapshot_id"], kind="stable").to_dict("records")[-1]
        sid = int(row["snapshot_id"])
        conditions.append(Condition(
            labels=make_labels(SNAPSHOT_HELD, source=source),
            annotations={"snapshot_id": sid, "held_snapshots": sorted(int(x) for x in rows["snapshot_id"]),
                         "observed_at": to_utc(row["observed_at"]).isoformat(),
                         "held_reason": text(row, "held_reason"),
                         "why": "a leaderboard cut short (truncated download) would otherwise replace the "
                                "full one; the previous snapshot stays in use until this one is confirmed by a "
                                f"later fetch or released with `benchwatch accept {sid}`",
                         "sql": look.source_snapshots(str(source))},
            data_as_of=to_utc(row["observed_at"])))
    return conditions


def _headline(transition: str, labels: Mapping[str, str], a: Mapping[str, Any]) -> str:
    source = clean(labels["source"])
    if transition == RESOLVED:
        return f"{source}: held snapshot released or superseded"
    return f"{source}: snapshot {a.get('snapshot_id')} held (a table dropped more rows than the shrink guard allows)"


def _numbers(labels: Mapping[str, str], a: Mapping[str, Any]) -> list[str]:
    return [f"observed {day(a.get('observed_at'))} · {clean(a.get('held_reason'), 300)}"]


def _read(con: Connection, settings: RuleSettings) -> pd.DataFrame | None:
    return held_snapshots(con, pending_only=True)


RULE = AlertRule(
    name="snapshot_held", input="held_snapshots", read=_read,
    conditions=lambda held, ctx: RuleOutput(held_conditions(held), {(SNAPSHOT_HELD,)}),
    kinds=(AlertKind(SNAPSHOT_HELD, _headline, _numbers, nouns=("snapshot held", "snapshots held")),))

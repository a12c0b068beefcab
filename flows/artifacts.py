"""What a run shows in the Prefect UI: the saturation table and the run's summary (pure helpers).

`flows.pipeline` publishes them as artifacts (`benchwatch-saturation`, `benchwatch-<flow>-summary`)
beside the report's overview and a link to the published page. Scraped text is made inert here.
"""

from __future__ import annotations

import html
from typing import Any

import pandas as pd

from analysis.level_changes import LevelChange
from jobs.cycle import CycleReport
from alerts.text import level_note

# The saturation table as people read it in the UI (the saturation_latest view has every column):
# a table is named by its table_id and population (two swebench_verified tables, or the model
# and the system rows of one table, are told apart).
SATURATION_COLUMNS = ["table_id", "population", "benchmark", "level", "bin", "s_index", "se_delta", "n_models",
                      "n_items", "uncertainty", "as_of", "stalled", "forecast_status", "level_note"]
_OPTIONAL = {"table_id", "population"}      # older frames (and the fast tests' hand-made ones) lack them
_ROUNDED = {"s_index", "se_delta"}
_COUNTS = {"n_models", "n_items"}
SUMMARY_LIST_MAX = 20                       # rows of a "what changed" list before "… and N more"


def saturation_rows(saturation: pd.DataFrame | None, levels: pd.DataFrame | None = None) -> list[dict]:
    """Leaderboard tables that have an S_index, most saturated first, as JSON-safe artifact rows: the
    stored `level` (from `levels`, saturation_latest) beside the raw `bin`, and where they differ
    why, in words (`level_note`). Only the `all` scope: the post-cutoff view is the report's."""
    if saturation is None or saturation.empty:
        return []
    frame = saturation.copy()
    if "scope" in frame.columns:
        frame = frame[frame["scope"].fillna("all") == "all"]
    key = [c for c in ("table_id" if "table_id" in frame.columns else "benchmark", "population")
           if c in frame.columns]
    if levels is not None and len(levels) and "level" in levels.columns and set(key) <= set(levels.columns):
        stored = levels[levels["scope"] == "all"] if "scope" in levels.columns else levels
        stored = stored[[*key, "level", "pending_bin", "pending_since"]].drop_duplicates(key)
        frame = frame.drop(columns=[c for c in ("level", "pending_bin", "pending_since") if c in frame.columns]) \
            .merge(stored, on=key, how="left")
    for col in ("level", "pending_bin", "pending_since"):
        if col not in frame.columns:
            frame[col] = None
    frame["level"] = frame["level"].where(frame["level"].notna(), frame["bin"])
    frame["level_note"] = [level_note(None if pd.isna(s) else float(s), b, lv, pb if isinstance(pb, str) else None,
                                      None if pd.isna(ps) else ps) or None
                           for s, b, lv, pb, ps in zip(frame["s_index"], frame["bin"], frame["level"],
                                                       frame["pending_bin"], frame["pending_since"])]
    columns = [c for c in SATURATION_COLUMNS if c in frame.columns or c not in _OPTIONAL]
    frame = frame.loc[frame["s_index"].notna(), columns].sort_values(
        "s_index", ascending=False, kind="stable")
    return [{col: _cell(col, value) for col, value in row.items()} for row in frame.to_dict(orient="records")]


def _cell(column: str, value: Any) -> Any:
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return None
    value = value.item() if hasattr(value, "item") else value      # numpy scalar -> Python
    if column in _ROUNDED:
        return round(float(value), 3)
    if column in _COUNTS:
        return int(value)
    return value


def summary_markdown(report: CycleReport, flow_name: str) -> str:
    """What a person checking the Prefect UI wants first: what changed this run (new snapshots,
    levels, alerts sent, the report), failed sources, the alert text, errors."""
    failed = [o for o in report.outcomes if o.status == "failed"]
    lines = [f"# benchwatch {flow_name}", ""]
    if report.outcomes:
        new = sum(o.status == "new" for o in report.outcomes)
        unchanged = sum(o.status == "unchanged" for o in report.outcomes)
        lines += [f"Sources: {new} new snapshot(s), {unchanged} unchanged, {len(failed)} failed.", ""]
    lines += _changes(report)
    if failed:
        lines += ["## Failed sources", "", "| source | reason |", "|---|---|"]
        lines += [f"| {o.source} | {_md_cell(o.detail)} |" for o in failed]
        lines.append("")
    if report.notification is not None:   # fenced: alert text quotes scraped names verbatim
        lines += ["## Alerts", "", "```", str(report.notification).replace("```", "'''"), "```", ""]
    if report.errors:
        lines += ["## Errors", ""] + [f"- {_md_cell(e)}" for e in report.errors] + [""]
    return "\n".join(lines)


def _changes(report: CycleReport) -> list[str]:
    """The "What changed" section: sources with a new snapshot, the analysis, levels, alerts, report."""
    out: list[str] = []
    new = [o for o in report.outcomes if o.status == "new"]
    if new:
        out.append(f"- New snapshots ({len(new)}):")
        out += [f"  - {o.source}: {_md_cell(o.detail) or 'stored'}" for o in new[:SUMMARY_LIST_MAX]]
        out += _more(len(new))
    elif report.outcomes:
        out.append("- New snapshots: none")
    analysis = report.analysis
    if analysis is not None:
        out.append("- Analysis: inputs unchanged, stored results kept" if analysis.get("skipped")
                   else "- Analysis: recomputed")
        changes: list[LevelChange] = list(analysis.get("level_changes") or [])
        moved = [c for c in changes if c.before is not None]
        first = len(changes) - len(moved)
        out.append(f"- Levels changed: {len(moved)}" + (f" ({first} table(s) got their first level)" if first else ""))
        out += [f"  - {_md_cell(c.table)}: {c.before} → {c.after}" for c in moved[:SUMMARY_LIST_MAX]]
        out += _more(len(moved))
    titles = list(getattr(report.notification, "sent_titles", None) or [])
    if report.notification is not None:
        out.append(f"- Alerts sent: {len(titles)}" + (f" to {_md_cell(report.notification.receiver)}"
                                                       if titles and hasattr(report.notification, "receiver") else ""))
        out += [f"  - {_md_cell(t)}" for t in titles[:SUMMARY_LIST_MAX]]
        out += _more(len(titles))
    published = report.published
    if published is not None and published.url:
        out.append(f"- Report: <{published.url}>")
    return (["## What changed", ""] + out + [""]) if out else []


def _more(n: int) -> list[str]:
    return [f"  - … and {n - SUMMARY_LIST_MAX} more"] if n > SUMMARY_LIST_MAX else []


def _md_cell(text: str) -> str:
    """Scraped text inside a markdown table cell: inert (no HTML, no links, no code spans)."""
    text = html.escape(" ".join(str(text).split()), quote=False)
    return text.replace("|", "\\|").replace("`", "&#96;").replace("[", "&#91;")

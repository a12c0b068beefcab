"""The cycle's analyze step: `jobs.analyze.analyze` (skipped when its inputs are unchanged) plus
the saturation levels it changed (analysis.level_changes), and how an analysis is summed up for
people.

`benchwatch run --no-prefect` (jobs.cycle.run_cycle) calls `analyze_step` directly and the
Prefect flows through their `analyze` task (flows/pipeline.py), so both do the same work.
"""

from __future__ import annotations

from datetime import datetime

import pandas as pd

from analysis.level_changes import level_changes
from jobs.analyze import analyze
from storage.store import Store


def analyze_step(store: Store, *, now: datetime | None = None,
                 skip_unchanged: bool = True, levels: bool = True) -> dict:
    """The cycle's analyze: `analyze` (skipped when its inputs are unchanged), plus the levels it
    changed (`level_changes`, for the run's summary: none when nothing was recomputed). The levels
    before are read in the analysis' own connection, and only when it recomputes. `levels=False`:
    a skipped analysis does not read the stored levels back (the CLI's summary does not show them)."""
    result = analyze(store, now=now, skip_unchanged=skip_unchanged, levels_before=True, stored_levels=levels)
    recomputed = "levels_before" in result
    before = result.pop("levels_before", None)
    result["level_changes"] = level_changes(before, result.get("levels")) if recomputed else []
    return result


def flagged_suspects(suspects: pd.DataFrame | None) -> pd.DataFrame:
    """The tests of an analysis that raised a suspicion (any status but not_flagged)."""
    if suspects is None or "status" not in suspects.columns:
        return pd.DataFrame()
    return suspects[suspects["status"] != "not_flagged"]


def analysis_counts(summary: pd.DataFrame | None) -> str:
    """One name and one count per concept: leaderboard tables, and how many of them have a saturation
    index S (a summary row is a table × scope × population; S needs a proportion-like metric with n)."""
    if summary is None or not len(summary) or "table_id" not in summary.columns:
        return "0 leaderboard tables"
    tables = summary["table_id"].nunique()
    indexed = summary.loc[summary["s_index"].notna(), "table_id"].nunique() if "s_index" in summary.columns else 0
    return f"{tables} leaderboard table(s), {indexed} with a saturation index"

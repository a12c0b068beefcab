"""Which leaderboard tables a run's analysis moved to another committed saturation level (pure):
the "what changed" of a run's summary (flows/artifacts.py), from two reads of saturation_latest."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd


@dataclass(frozen=True)
class LevelChange:
    """A leaderboard table whose committed saturation level differs after this run's analysis."""

    table: str                 # table_id, with the scope/population when not the default
    before: str | None         # None: the table had no level yet
    after: str | None


def level_changes(before: pd.DataFrame | None, after: pd.DataFrame | None) -> list[LevelChange]:
    """Tables whose stored level differs between two reads of saturation_latest."""
    old, new = _series_levels(before), _series_levels(after)
    return [LevelChange(name, old.get(name), level) for name, level in sorted(new.items())
            if level is not None and old.get(name) != level]


def _series_levels(levels: pd.DataFrame | None) -> dict[str, str | None]:
    if levels is None or not len(levels) or "level" not in levels.columns:
        return {}
    key = [c for c in ("table_id", "scope", "population") if c in levels.columns] or ["benchmark"]
    out: dict[str, str | None] = {}
    for row in levels[key + ["level"]].itertuples(index=False):
        parts = [str(v) for v in row[:-1]]
        extra = [v for v, default in zip(parts[1:], ("all", "models")) if v != default]
        name = parts[0] + (f" ({':'.join(extra)})" if extra else "")
        out[name] = None if pd.isna(row[-1]) else str(row[-1])
    return out

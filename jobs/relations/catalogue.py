"""Relation `benchmark_tables`: one row per leaderboard table (its source or pool, version, name,
question-set size, metric, models, observation span, primary flag), per table; the primary table
of a benchmark is chosen again over its kept and recomputed tables."""

from __future__ import annotations

import pandas as pd

from jobs.relations.base import TABLE, Inputs, Relation
from jobs.relations.shared import history_and_tables, no_scores, now_of
from registry.tables import primary_flags, primary_reasons
from storage import saturation as store
from storage.saturation import BENCHMARK_TABLES_COLUMNS


def compute(inputs: Inputs, units: frozenset[str] | None) -> pd.DataFrame | None:
    if no_scores(inputs):
        return None
    return history_and_tables(inputs)["catalogue"]


def write(inputs: Inputs, tables: pd.DataFrame, units: frozenset[str] | None) -> None:
    """Every table's row: the recomputed ones (stamped now) and the stored rows of the others
    (with their run_at), the primaries chosen again for the benchmarks of the tables recomputed."""
    recomputed = tables.assign(run_at=now_of(inputs).tz_localize("UTC").to_pydatetime())
    if units is None:
        store.store_benchmark_tables(inputs.con, recomputed)
        return
    kept = store.read_benchmark_tables(inputs.con)
    kept = kept[~kept["table_id"].isin(units)]
    store.store_benchmark_tables(inputs.con, all_tables(kept, recomputed, set(inputs.benchmarks or ())))


def all_tables(kept: pd.DataFrame, recomputed: pd.DataFrame, benchmarks: set[str] | None = None) -> pd.DataFrame:
    """The stored catalogue rows of the tables kept and the recomputed ones, with the primary
    table chosen again over both for each of `benchmarks` (those of the tables recomputed or
    gone; None: every benchmark). registry.tables.primary_flags decides one benchmark at a time
    from its own tables, so the others keep their stored flag."""
    cols = [*BENCHMARK_TABLES_COLUMNS, "run_at"]
    frames = [f[cols] for f in (kept, recomputed) if len(f)]
    if not frames:
        return pd.DataFrame(columns=cols)
    out = pd.concat(frames, ignore_index=True).sort_values("table_id", kind="stable", ignore_index=True)
    again = out["benchmark"].isin(benchmarks) if benchmarks is not None else pd.Series(True, index=out.index)
    if again.any():
        out.loc[again, "is_primary"] = primary_flags(out[again]).to_numpy()
        out.loc[again, "primary_reason"] = primary_reasons(out[again]).to_numpy()
    return out


RELATION = Relation("benchmark_tables", TABLE, compute, write)

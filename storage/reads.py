"""Reads shared by the analysis jobs, in the analysis' conventions (naive UTC datetimes).

One place owns each read, so saturation, contamination and alerts see the same latest
scores, the same registry facts and the same model-date claims.
"""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd


def naive_utc(df: pd.DataFrame, *columns: str) -> pd.DataFrame:
    """TIMESTAMPTZ/DATE columns as naive UTC datetime64 (the analysis' convention)."""
    for col in columns:
        df[col] = pd.to_datetime(df[col], utc=True).dt.tz_localize(None)
    return df


def read_latest_scores(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """The usable rows of each source's newest snapshot per benchmark (view latest_scores)."""
    df = con.execute("""SELECT source, benchmark, model, setting, score, metric, stderr, ci_low, ci_high, n_items,
                               snapshot_id, observed_at, model_raw, variant, population, underlying
                        FROM latest_scores""").df()
    return naive_utc(df, "observed_at")


def read_benchmarks(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Registry facts: size, chance level, ceiling, metric kind, dynamic, material date, references."""
    df = con.execute("""SELECT id, n_items, ceiling, chance, metric_kind, dynamic, material_date,
                               reference_benchmarks
                        FROM benchmarks""").df()
    df["material_date"] = pd.to_datetime(df["material_date"])
    df["reference_benchmarks"] = [tuple(v) if isinstance(v, (list, tuple, np.ndarray)) else ()
                                  for v in df["reference_benchmarks"]]
    return df


def read_model_date_claims(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Every distinct date claim (view model_cutoffs) with when it was last observed, so a source's
    revised claim supersedes its older one in analysis.cutoffs.resolve_model_dates."""
    df = con.execute("""SELECT model, release_date, knowledge_cutoff, provenance, source,
                               last_observed_at AS observed_at
                        FROM model_cutoffs""").df()
    return naive_utc(df, "observed_at")


def read_predecessors(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """(model, predecessor) pairs of the registry, for A2 jumps over a predecessor."""
    return con.execute("""SELECT id AS model, predecessor FROM models
                          WHERE predecessor IS NOT NULL AND predecessor <> '' ORDER BY id""").df()

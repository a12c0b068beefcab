"""The dating rule of the score history (issues 20, 22): a result is dated by its own source —
its evaluation date, else its first observation — and a model's release date bounds only a
first observation, never moving an evaluated result.

The rule is written once, as SQL in analysis/running_best_history.sql (storage.saturation
executes it and returns each row's `date`, `date_source`, `release_date`, `date_conflict`).
This module holds what the SQL takes and what is said about its output: the models' release
dates, and the log of which date won. tests/dating_oracle.py restates the rule in pandas as the
test oracle (tests/system/test_history_pruned.py). Pure: frames in, frames out.
"""

from __future__ import annotations

import logging

import pandas as pd

from analysis.cutoffs import resolve_model_dates

log = logging.getLogger("benchwatch.analysis.dating")

RUNNING_BEST_SQL = "running_best_history.sql"     # the SQL twin, a resource of this package


def release_dates(claims: pd.DataFrame, resolved: pd.DataFrame | None = None) -> pd.DataFrame:
    """Each model's resolved release date (analysis.cutoffs.resolve_model_dates): model, release_date.
    `resolved`: resolve_model_dates(claims) when the caller has it already."""
    if not len(claims):
        return pd.DataFrame({"model": pd.Series(dtype="object"), "release_date": pd.Series(dtype="datetime64[us]")})
    resolved = resolve_model_dates(claims) if resolved is None else resolved
    return resolved.loc[resolved["release_date"].notna(), ["model", "release_date"]].reset_index(drop=True)


def log_dates(history: pd.DataFrame) -> pd.DataFrame:
    """Say which date won for the rows of a dated history and list the conflicts (a result
    evaluated before its model's release date: an aliased name or a wrong release date, kept at
    its evaluation date); the history unchanged."""
    if not len(history):
        return history
    counts = history["date_source"].value_counts().to_dict()
    log.info("[saturation] history dates: %s (each result at its own evaluation, else first observation "
             "raised to the model's release date where that is later)", counts)
    conflict = history["date_conflict"].fillna(False).astype(bool)
    if conflict.any():
        c = history[conflict]
        log.info("[saturation] %d result(s) evaluated before their model's release date (a name aliased to "
                 "another model, or a wrong release date); kept at their evaluation date, e.g. %s",
                 len(c), c[["source", "model", "evaluated_at", "release_date"]].head(3).astype(str)
                 .to_dict("records") if "source" in c.columns else c[["model"]].head(3).to_dict("records"))
    return history

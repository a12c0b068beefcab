"""The dating rule of the score history, owned once (issues 20, 22): in pandas here, and in SQL
in analysis/running_best_history.sql (its twin, which storage.saturation only executes; both
are required to give the same results by tests/test_history_pruned.py).

A result is dated by its own source: its evaluation date, else its first observation; a
model's release date bounds only a first observation and never moves an evaluated result.
Pure: frames in, frames out.
"""

from __future__ import annotations

import logging

import numpy as np
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


def dated_history(history: pd.DataFrame, claims: pd.DataFrame | None = None, *,
                  releases: pd.DataFrame | None = None) -> pd.DataFrame:
    """Each result of the history with the date it enters the trajectory (issue 20, "a
    cross-source alias never moves a result's date").

    A result is dated by its own source: its evaluation date where the page gives one, else
    the first observation of the snapshot that showed it. The model's resolved release date
    (possibly claimed by another source for an aliased name) is a property of the model: it
    bounds from below only a result without its own evaluation date (date = max(first
    observation, release)); a result with an evaluation date keeps it, and a release later
    than that evaluation is a conflict, counted, logged and flagged (`date_conflict`), never
    used to move the result (Aider's `deepseek-chat` evaluated 2024-12-21 stays there when
    Epoch's `deepseek-chat` claims a 2025-12-01 release). The dates of one result never date
    another (a re-submission's better score enters when it was achieved, not when the name
    first appeared). `date_source` says which date won. `releases` (`release_dates`) replaces
    `claims` when already resolved. storage.saturation.read_running_best_history dates rows by
    this same rule in SQL (analysis/running_best_history.sql, this module's twin).
    """
    h = history.copy()
    release = (release_dates(claims if claims is not None else pd.DataFrame()) if releases is None
               else releases).set_index("model")["release_date"]
    release_of = {m: d for m, d in release.items() if pd.notna(d)}
    release_dates_ = pd.to_datetime(pd.Series(release_of, dtype="object"), errors="coerce")
    mapped = h["model"].map(release_dates_) if len(release_dates_) else pd.Series(None, index=h.index, dtype="object")
    h["release_date"] = pd.to_datetime(mapped, errors="coerce")
    evaluated = pd.to_datetime(h["evaluated_at"])
    has_eval = evaluated.notna()
    own = evaluated.fillna(pd.to_datetime(h["first_observed_at"]))
    own_source = np.where(has_eval, "evaluated_at", "first_observed_at")
    later_release = h["release_date"].notna() & (h["release_date"] > own)
    bounded = later_release & ~has_eval
    h["date_conflict"] = (later_release & has_eval).to_numpy()
    h["date"] = own.where(~bounded, h["release_date"])
    h["date_source"] = np.where(bounded, "release_date", own_source)
    counts = h["date_source"].value_counts().to_dict()
    log.info("[saturation] history dates: %s (each result at its own evaluation, else first observation "
             "raised to the model's release date where that is later)", counts)
    if h["date_conflict"].any():
        c = h[h["date_conflict"]]
        log.info("[saturation] %d result(s) evaluated before their model's release date (a name aliased to "
                    "another model, or a wrong release date); kept at their evaluation date, e.g. %s",
                    len(c), c[["source", "model", "evaluated_at", "release_date"]].head(3).astype(str)
                    .to_dict("records") if "source" in c.columns else c[["model"]].head(3).to_dict("records"))
    return h

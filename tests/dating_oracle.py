"""The dating rule restated in pandas over the whole history: the test oracle of
analysis/running_best_history.sql, which owns the rule (tests/system/test_history_pruned.py and the
identity/table tests compare the two).

A result is dated by its own source: its evaluation date, else its first observation raised to
its model's release date where that is later; a release later than an evaluation is a conflict,
flagged, never used to move the result.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.dating import log_dates, release_dates


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
    return log_dates(h)

"""The contract between a source's parser and storage: the frames a parse produces.

`scrapers` fills a `ParsedSnapshot`, `storage` stores it; both import the declaration from
here (storage never imports scrapers). The column maps name each frame's columns and dtypes;
`conform` coerces a frame to them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import pandas as pd

from common.naming import NO_RULES, NamingRules

# Columns of ParsedSnapshot.scores. Mandatory ones must be non-null on every kept row.
SCORE_COLUMNS: dict[str, str] = {
    "benchmark": "str",          # canonical benchmark id or the page's own name (mapped later)
    "model": "str",              # the model name as the page states it (mapped through aliases at store time)
    "setting": "str",            # what distinguishes two rows of one model on one benchmark ('' if nothing)
    "score": "float64",          # normalized: proportion in [0, 1] for metric 'proportion'
    "raw_value": "str",          # the cell as the page had it
    "metric": "str",             # a key of common.units.METRIC_RANGES
    "stderr": "float64",         # published standard error, same unit as score (NaN if none)
    "ci_low": "float64",         # published CI bounds, same unit as score (NaN if none)
    "ci_high": "float64",
    "n_items": "Int64",          # test-set size the score is a mean over (NA if unknown)
    "model_release_date": "datetime64[us]",   # as the page states it (NaT if none)
    "knowledge_cutoff": "datetime64[us]",     # as the page states it (NaT if none)
    "evaluated_at": "datetime64[us]",         # run/submission date if the page has one
    "excluded_reason": "str",    # non-empty: stored but kept out of statistics (e.g. adversarial rows)
    "model_tag": "str",          # the models an agent system names, as the page tags them ('Model: a; Model: b')
    "table_version": "str",      # version / release / board within the source that makes another question set ('' none)
    "is_reference": "boolean",   # a reference / baseline row: stored and shown, never in a top k
    "reported_by": "str",        # who produced the number when not the leaderboard's own run ('vendor'); NULL = the board
}
MANDATORY_SCORE_COLUMNS = ("benchmark", "model", "score", "metric")
N_ITEMS_MAX = 2**31 - 1          # scores.n_items is a 32-bit INTEGER column

ITEM_COLUMNS: dict[str, str] = {
    "benchmark": "str",
    "model": "str",
    "item_id": "str",
    "item_date": "datetime64[us]",   # the item's creation / contest date
    "difficulty": "str",
    "platform": "str",
    "score": "float64",              # pass fraction for this item, in [0, 1]
}

MODEL_COLUMNS: dict[str, str] = {
    "model": "str",
    "org": "str",
    "link": "str",         # the page the source gives for the model (card, repository, paper, announcement)
    "release_date": "datetime64[us]",
    "knowledge_cutoff": "datetime64[us]",
    "provenance": "str",   # vendor_doc | model_card | leaderboard | inferred | listing
    "open_weights": "boolean",
}


@dataclass
class ParsedSnapshot:
    """What one response of one source says, normalized, before name mapping and storage."""

    source: str
    scores: pd.DataFrame = field(default_factory=lambda: empty_frame(SCORE_COLUMNS))
    items: pd.DataFrame = field(default_factory=lambda: empty_frame(ITEM_COLUMNS))
    models: pd.DataFrame = field(default_factory=lambda: empty_frame(MODEL_COLUMNS))
    rejects: pd.DataFrame = field(default_factory=lambda: pd.DataFrame({"row": pd.Series(dtype="str"), "reason": pd.Series(dtype="str")}))
    warnings: list[str] = field(default_factory=list)
    meta: dict = field(default_factory=dict)
    # the source's own limit for the shrink guard (`Scraper.shrink_max_drop`), handed to storage with the rows
    shrink_max_drop: float | None = None
    # the source's naming rules (`Scraper.NAMING`): how storage identifies the rows' models
    naming: NamingRules = NO_RULES
    # non-empty: why the parse asks storage to store the snapshot held (a fan-out cap of the source:
    # `scrapers.base.MAX_TABLES`), as the shrink guard holds one
    held_reason: str = ""


_EMPTY: dict[tuple[tuple[str, str], ...], pd.DataFrame] = {}


def empty_frame(columns: Mapping[str, str]) -> pd.DataFrame:
    """A frame with `columns` and no rows: a copy of one built once per column map (every
    ParsedSnapshot starts with three)."""
    key = tuple(columns.items())
    frame = _EMPTY.get(key)
    if frame is None:
        frame = _EMPTY[key] = pd.DataFrame({c: pd.Series(dtype=t) for c, t in columns.items()})
    return frame.copy()


def conform(df: pd.DataFrame, columns: Mapping[str, str]) -> pd.DataFrame:
    """Add missing optional columns as nulls, order columns, and coerce dtypes."""
    out = {}
    for col, dtype in columns.items():
        # a missing date or text column is built null at its dtype (the conversions below would
        # give the same); a missing number or flag is converted from nulls
        if col in df.columns:
            s = df[col]
        elif dtype.startswith("datetime"):
            out[col] = pd.Series(pd.NaT, index=df.index, dtype=dtype)
            continue
        elif dtype == "str":
            out[col] = pd.Series([None] * len(df), index=df.index, dtype="object")
            continue
        else:
            s = pd.Series([None] * len(df), index=df.index, dtype="object")
        if dtype.startswith("datetime"):
            s = pd.to_datetime(s, errors="coerce", utc=True).dt.tz_localize(None).astype(dtype)
        elif dtype == "str":
            # each value's str(), None for a missing one
            missing = s.isna().to_numpy()
            s = pd.Series([None if m else str(v) for v, m in zip(s.astype("object").to_numpy(), missing)],
                          index=s.index, dtype="object")
        elif dtype == "boolean":
            s = s.astype("boolean")
        else:
            s = pd.to_numeric(s, errors="coerce").astype(dtype)
        out[col] = s
    return pd.DataFrame(out, index=df.index).reset_index(drop=True)

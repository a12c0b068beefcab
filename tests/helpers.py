"""Small helpers shared by the test modules."""

from __future__ import annotations

import pandas as pd

import scrapers


def one(df: pd.DataFrame, **where) -> pd.Series:
    """The single row matching every column=value; fails the test if there are 0 or several."""
    mask = pd.Series(True, index=df.index)
    for col, value in where.items():
        mask &= df[col] == value
    assert mask.sum() == 1, f"expected one row for {where}, got {int(mask.sum())}"
    return df[mask].iloc[0]


def fixture_scraper(source: str, *, floor: int | None = 1):
    """The source's scraper with its row floor lowered to `floor`: fixtures hold a few rows
    (the real floors are tested on the snapshot files)."""
    s = scrapers.get(source)
    if floor is not None:
        s.min_rows = floor
    return s

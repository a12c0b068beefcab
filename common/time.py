"""UTC conversions: the one definition of "UTC" for every package.

Two conventions meet in benchwatch (docs/architecture.md, "Units"): DuckDB and the alert
records hold tz-aware UTC datetimes; analysis DataFrames hold *naive* UTC datetime64
(pandas arithmetic and comparisons stay simple). Naive input is always taken as UTC.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any
from email.utils import parsedate_to_datetime

import pandas as pd


def utcnow() -> datetime:
    """The current time, tz-aware UTC (the only clock read of `common`)."""
    return datetime.now(timezone.utc)


def _missing(value: Any) -> bool:
    try:
        return value is None or bool(pd.isna(value))
    except (TypeError, ValueError):   # list-likes are not timestamps
        return False


def to_utc(value: Any) -> datetime:
    """A tz-aware UTC datetime from a datetime, Timestamp or ISO string; naive input is UTC.

    Raises ValueError on a missing value (None, NaT, NaN): a timestamp that drives a state
    must exist."""
    ts = pd.Timestamp(value) if not _missing(value) else pd.NaT
    if pd.isna(ts):
        raise ValueError(f"expected a timestamp, got {value!r}")
    ts = ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")
    return ts.to_pydatetime()


def to_utc_or_none(value: Any) -> datetime | None:
    """`to_utc`, with None for a missing value (nullable TIMESTAMPTZ columns)."""
    return None if _missing(value) else to_utc(value)


def naive_utc(value: Any) -> pd.Timestamp:
    """A naive UTC Timestamp (the analysis' convention); an aware input is converted first."""
    ts = pd.Timestamp(value)
    return ts.tz_convert("UTC").tz_localize(None) if ts.tzinfo is not None else ts


def naive_utc_columns(df: pd.DataFrame, *columns: str) -> pd.DataFrame:
    """TIMESTAMPTZ/DATE columns as naive UTC datetime64, in place (and returned)."""
    for col in columns:
        df[col] = pd.to_datetime(df[col], utc=True).dt.tz_localize(None)
    return df


def utc_columns(df: pd.DataFrame, *columns: str) -> pd.DataFrame:
    """Columns as tz-aware UTC datetime64, in place (and returned): what TIMESTAMPTZ writes expect."""
    for col in columns:
        df[col] = pd.to_datetime(df[col], utc=True)
    return df


def parse_retry_after(value: str | None, now: datetime) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP-date); None if absent or
    unreadable (not a number of seconds nor a date; NaN). One reader for the fetcher and for Slack
    delivery: an HTTP-date read as "no value" was retried after a second instead of waited out."""
    if value is None or not str(value).strip():
        return None
    text = str(value).strip()
    try:
        seconds = float(text)
    except ValueError:
        pass
    else:
        return None if seconds != seconds else max(0.0, seconds)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:  # HTTP-dates are GMT by definition
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - now).total_seconds())

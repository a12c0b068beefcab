"""numpy/pandas values as plain JSON types, so stored evidence and annotations read the same
everywhere (and `json.dumps` never meets an np.float64 or a NaN)."""

from __future__ import annotations

import json
from datetime import date, datetime
from typing import Any

import numpy as np
import pandas as pd


def is_null(value: Any) -> bool:
    """A null scalar: None, NaN, NA or NaT (`common.units.is_missing` is a blank leaderboard cell,
    which also counts tokens such as '-' or 'n/a'); containers are never missing (a list is a value, even
    an empty one or one holding a NaN)."""
    if value is None:
        return True
    if isinstance(value, (list, tuple, dict, set, str, np.ndarray, pd.Index, pd.Series)):
        return False
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def jsonable(value: Any) -> Any:
    """`value` as plain JSON types: numpy scalars -> Python, non-finite floats / NaT -> None,
    datetimes -> ISO *dates* (evidence is dated by day), dates -> ISO, containers recursively."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, np.ndarray, pd.Index)):
        return [jsonable(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if np.isfinite(value) else None
    if value is None or value is pd.NaT:
        return None
    if isinstance(value, (pd.Timestamp, datetime, date)):
        return value.date().isoformat() if isinstance(value, datetime) else value.isoformat()
    return value


def number(value: Any) -> float | int | bool | None:
    """A JSON-safe number: NaN/NA/non-numbers -> None, numpy scalars -> Python scalars."""
    if is_null(value) or isinstance(value, (str, list, dict, tuple)):
        return None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def decoded(value: Any) -> Any:
    """Stored JSON as data: a JSON string is decoded, dicts/lists round-trip through JSON
    (anything not serialisable becomes its text), other text is kept as text, missing -> None."""
    if is_null(value):
        return None
    if isinstance(value, (dict, list)):
        return json.loads(json.dumps(value, default=str))
    text = str(value)
    try:
        return json.loads(text)
    except ValueError:
        return text


def dumps_or_none(value: Any) -> str | None:
    """A JSON column value: None/NaN -> NULL, a string is taken as JSON already, else `json.dumps`."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    return value if isinstance(value, str) else json.dumps(value)

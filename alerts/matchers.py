"""Parsing of the `benchwatch silence` arguments: label matchers and durations."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Iterable

from alerts.config import LABEL_KEYS

_MATCHER = re.compile(r"^([a-z_]+)=(.*)$")
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)([smhdw])$")
_DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_matchers(items: Iterable[str]) -> dict[str, str]:
    """['benchmark=swebench_verified', 'kind=saturation_bin_changed'] -> {label: value}."""
    out: dict[str, str] = {}
    for item in items:
        m = _MATCHER.match(item.strip())
        if not m:
            raise ValueError(f"matcher {item!r} is not key=value")
        key, value = m[1], m[2]
        if key not in LABEL_KEYS:
            raise ValueError(f"matcher {item!r}: unknown label {key!r}; labels are {', '.join(LABEL_KEYS)}")
        if key in out and out[key] != value:
            raise ValueError(f"matcher {item!r}: label {key!r} already matched to {out[key]!r}")
        out[key] = value
    if not out:
        raise ValueError("a silence needs at least one matcher key=value")
    return out


def parse_duration(text: str) -> timedelta:
    """'14d', '12h', '30m', '2w', '90s' -> timedelta (positive)."""
    m = _DURATION.match(text.strip().lower())
    if not m or float(m[1]) <= 0:
        raise ValueError(f"duration {text!r} is not a positive number followed by s, m, h, d or w (e.g. 14d)")
    return timedelta(seconds=float(m[1]) * _DURATION_UNITS[m[2]])

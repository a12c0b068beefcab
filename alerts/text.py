"""Plain-text pieces the rules' headlines and number lines are made of (no Slack escaping here:
alerts/render.py escapes whatever a rule returns)."""

from __future__ import annotations

import re
from typing import Any, Mapping

from alerts import config

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def clean(text: Any, limit: int = config.MAX_NAME_CHARS) -> str:
    """Scraped text on one line, without control characters, at most `limit` characters."""
    flat = " ".join(_CONTROL.sub(" ", str(text)).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def fixed(value: Any, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def general(value: Any) -> str:
    return "n/a" if value is None else f"{value:g}"


def pp(value: Any, signed: bool = False) -> str:
    """A proportion difference in percentage points."""
    if value is None:
        return "n/a"
    return f"{value * 100:+.1f} pp" if signed else f"{value * 100:.1f} pp"


def day(iso: Any) -> str:
    return str(iso)[:10] if iso else "n/a"


def scope_suffix(labels: Mapping[str, str]) -> str:
    """' [post_cutoff]' for a scoped alert, '' for scope all (all:systems -> ' [systems]')."""
    scope_label = str(labels.get("scope") or "")
    scope_label = scope_label[len("all:"):] if scope_label.startswith("all:") else scope_label
    return f" [{scope_label}]" if scope_label and scope_label != "all" else ""

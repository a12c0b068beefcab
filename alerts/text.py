"""Plain-text pieces the rules' headlines and number lines are made of (no Slack escaping here:
alerts/render.py escapes whatever a rule returns)."""

from __future__ import annotations

import re
from typing import Any, Mapping

from alerts import config

# What a terminal or a chat client acts on instead of showing: C0 controls, DEL, C1 controls
# (CSI …), and the bidirectional overrides/isolates/marks that reorder what is shown (U+202E
# makes "gpt-4\u202efdp.exe" read "gpt-4exe.pdf").
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")

# Text Slack would turn into a link by itself: a URL with a scheme, mailto:, a www. name, an
# e-mail address, or a host name (label.tld, any tld) with an optional port and path. (No backtick inside: the Slack escape has made them
# look-alikes before this runs.)
_LINKABLE = re.compile(r"(?i)(?:\b[a-z][a-z0-9+.-]{1,15}://[^\s`]*)|(?:\bmailto:[^\s`]+)|(?:\bwww\.[^\s`]+)|"
                       r"(?:[\w.+-]+@(?:[a-z0-9-]+\.)+[a-z]{2,}\b)|"
                       r"(?:(?<![\w@.-])(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,}\b(?::\d+)?(?:/[^\s`]*)?)")


def clean(text: Any, limit: int = config.MAX_NAME_CHARS) -> str:
    """Scraped text on one line, without control characters (C0, C1, bidi overrides), at most
    `limit` characters."""
    flat = " ".join(_CONTROL.sub(" ", str(text)).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def unlinked(mrkdwn: str) -> str:
    """Slack mrkdwn (already escaped, no backticks) with every URL or host-like token in inline
    code, where Slack does not link it: `www.evil.example/login` stays text and copies as typed
    (no invisible character is inserted)."""
    return _LINKABLE.sub(lambda m: f"`{m[0]}`", mrkdwn)


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

"""Plain-text pieces the rules' headlines and number lines are made of (no Slack escaping here:
alerts/render.py escapes whatever a rule returns)."""

from __future__ import annotations

import re
from typing import Any, Mapping

import pandas as pd

from alerts import config
from analysis.constants import LEVEL_DWELL_DAYS

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


# --- Wording from the numbers (README "Slack alerts", docs/statistics.md) ---------------------------
# The one table the digest's qualifying words come from. Rows (measure, bound, word), first match
# wins: `p_hold` = P(level holds), the share of re-evaluations of the top k at the real sampling
# noise whose S stays in the level's bin, matched when p >= bound; `q` = the Benjamini-Hochberg
# q-value of a contamination test, matched when q < bound. "statistically indistinguishable" is
# said only with the word "very likely"; without re-evaluation draws (no P) the level is at most
# "likely"; below 0.7 it is "uncertain".
WORDING: tuple[tuple[str, float, str], ...] = (
    ("p_hold", 0.90, "very likely"),
    ("p_hold", 0.70, "likely"),
    ("p_hold", 0.00, "uncertain"),
    ("q", 0.001, "strong evidence"),
    ("q", 0.01, "evidence"),
    ("q", 0.05, "weak evidence"),
    ("q", float("inf"), "no evidence after false-discovery control"),
)
NO_DRAWS_WORD = "likely"   # P(level holds) unknown (no re-evaluation draws): never stronger than this


def word_for(measure: str, value: float | None) -> str:
    """The word of WORDING for `value` of `measure` ('p_hold' or 'q'); None p_hold → NO_DRAWS_WORD."""
    rows = [(bound, word) for m, bound, word in WORDING if m == measure]
    if not rows:
        raise ValueError(f"no wording for measure {measure!r}")
    if value is None:
        if measure == "p_hold":
            return NO_DRAWS_WORD
        return rows[-1][1]
    for bound, word in rows:
        if (measure == "p_hold" and value >= bound) or (measure == "q" and value < bound):
            return word
    return rows[-1][1]


_SATURATED = ("high", "very high")


def settled(p_hold: float | None) -> bool:
    """May a level with this P(level holds) be announced as that level? Not below
    config.LEVEL_ANNOUNCE_MIN_P (no draws: yes, worded at most "likely")."""
    return p_hold is None or p_hold >= config.LEVEL_ANNOUNCE_MIN_P


def unsettled(level: str, p_hold: float | None) -> str:
    """How a message names a level below the floor: the stored level, said not to be settled."""
    p = "" if p_hold is None else f", P(level holds) {p_hold:.2f}"
    return f"level not settled (stored {level}{p})"


def level_meaning(level: str, p_hold: float | None) -> str:
    """What a saturation level means for a reader, worded no stronger than P(level holds) (WORDING)."""
    word = word_for("p_hold", p_hold)
    held = " (no re-evaluation draws)" if p_hold is None else ""
    if word == "uncertain":
        return (f"uncertain{held}: another re-evaluation of the same models could move S out of this level, "
                "so read the level as a hint, not a finding")
    likely = "" if word == "very likely" else "likely "
    if level in _SATURATED:
        if word == "very likely":
            return ("the top models are statistically indistinguishable" + held + ": new results on this "
                    "benchmark barely separate frontier models")
        return ("the top models are likely indistinguishable within evaluation noise" + held
                + ": new results separate frontier models little, if at all")
    if level == "moderate":
        return (f"the spread of the top models is {likely}comparable to evaluation noise{held}: differences "
                "at the top are only partly meaningful")
    return (f"the top models are {'clearly' if not likely else 'likely'} separated{held}: this benchmark still "
            "discriminates at the frontier")


def level_note(s_index: float | None, bin_: str | None, level: str | None, pending_bin: str | None = None,
               pending_since: Any = None, dwell_days: int | None = None) -> str:
    """Where the raw bin of S differs from the committed level, why, in words ('' when they agree).

    `pending_since`: when the pending move was first proposed; `dwell_days`: how long it must
    stand (analysis.constants.LEVEL_DWELL_DAYS, the default).
    """
    if not bin_ or not level or bin_ == level or s_index is None:
        return ""
    dwell = LEVEL_DWELL_DAYS if dwell_days is None else dwell_days
    head = f"S {s_index:.2f} is in the {bin_} range"
    if pending_bin:
        towards = "" if pending_bin == bin_ else f" (a move towards {pending_bin})"
        if pending_since is None or (not isinstance(pending_since, str) and pending_since != pending_since):
            return f"{head}; the level stays {level} until the move has stood {dwell} days{towards}"
        due = (pd.Timestamp(pending_since).normalize() + pd.Timedelta(days=dwell)).strftime("%Y-%m-%d")
        return (f"{head} since {day(pd.Timestamp(pending_since).isoformat())}; the level stays {level} until "
                f"{due} ({dwell} days), unless a newer snapshot undoes the move{towards}")
    return (f"{head}, but not far enough past the edge (the hysteresis margin) or not firmly enough under "
            f"re-evaluation noise to count as {bin_}: the level is {level}")

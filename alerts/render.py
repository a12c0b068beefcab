"""Render notifications as one Slack Block Kit digest (or plain text for the console).

One section per notification, readable in two seconds: what changed (bold), the numbers with
their uncertainty, why it matters, and where to look (a `benchwatch query "…"` line). Firing
alerts come first, then resolved notices. The digest is split into several messages only when
Block Kit limits demand it (config.SLACK_MAX_BLOCKS blocks, SLACK_MAX_SECTION_TEXT characters
per section, SLACK_MAX_HEADER_TEXT per header, SLACK_MAX_MESSAGE_CHARS per message).

Anything that did not come from this code (model and benchmark names, sources, errors, SQL that
quotes them) goes through `escape`, the one Slack-escaping helper: `&`, `<`, `>` become
entities, so `<!channel>`, `<@U123>` or `<http://x|y>` in a model name arrive as inert text;
mrkdwn marks that could format (`*x*`, `_x_`, `~x~`, backticks) become look-alikes, and bare
URLs and host names are kept from being linked by putting them in inline code (nothing invisible
is inserted: the text copies as it was).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Mapping, Sequence

from alerts import config
from alerts import rules as registry
from alerts.records import FIRING, RESOLVED, Notification
from alerts.text import clean as _clean
from alerts.text import unlinked as _unlinked
_PARTIAL_ENTITY = re.compile(r"&[a-z]{0,4}$")


@dataclass(frozen=True)
class SlackMessage:
    """One chat message: the fallback `text` (shown in notifications), blocks, and its contents."""

    text: str
    blocks: list[dict[str, Any]]
    notifications: tuple[Notification, ...]


# --- text helpers -----------------------------------------------------------------------------

# Slack mrkdwn has no backslash escape. A `*`, `_` or `~` that could open or close emphasis (at a
# word boundary, next to a non-space) becomes a look-alike that Slack does not format; one inside
# a word (S_index, as_of) or between spaces (SELECT * FROM) cannot format and stays. A backtick
# always becomes a look-alike: it would open or close a code span anywhere.
_MRKDWN_LOOKALIKE = {"*": "\u2217", "_": "\u02cd", "~": "\u223c", "`": "\u02cb"}
_EMPHASIS = re.compile(r"(?:(?<![^\W_])[*_~](?=\S))|(?:(?<=\S)[*_~](?![^\W_]))|`")


def escape(text: Any, *, in_code: bool = False) -> str:
    """Slack-escape text that did not come from this code (the only place that does it): `&<>` as
    entities (no <!channel>, <@U…>, <url|label>), emphasis/code marks that could format as look-alikes,
    bare URLs and host names in inline code (alerts.text.unlinked), unless the text goes inside a
    code span already (`in_code`), where Slack links nothing."""
    out = str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    out = _EMPHASIS.sub(lambda m: _MRKDWN_LOOKALIKE[m[0]], out)
    return out if in_code else _unlinked(out)


def _fit(mrkdwn: str, limit: int) -> str:
    """Cut escaped text to `limit` characters without leaving half an entity (`&am`)."""
    if len(mrkdwn) <= limit:
        return mrkdwn
    return _PARTIAL_ENTITY.sub("", mrkdwn[: limit - 1]) + "…"


# --- per kind: what changed, the numbers (written by each rule module) ---------------------

def title(n: Notification) -> str:
    """What changed, in plain (unescaped) text."""
    return headline(n.kind, n.transition, n.labels, n.annotations)


def headline(kind: str, transition: str, labels: Mapping[str, str], a: Mapping[str, Any]) -> str:
    """One line saying what an alert is about (also used by `benchwatch alerts`); the kind's
    rule module writes it (AlertKind.headline)."""
    spec = registry.kind(kind)
    return f"{kind}: {transition}" if spec is None else spec.headline(transition, labels, a)


def numbers(n: Notification) -> list[str]:
    """The numbers with their uncertainty, one plain-text line each (scraped parts unescaped);
    the kind's rule module writes them (AlertKind.numbers)."""
    spec = registry.kind(n.kind)
    return [] if spec is None else spec.numbers(n.labels, n.annotations)


# --- the digest ----------------------------------------------------------------------------------

def _ordered(notifications: Sequence[Notification]) -> list[Notification]:
    order = registry.all_kinds()   # the order of alerts.rules.RULES

    def key(n: Notification) -> tuple:
        kind = order.index(n.kind) if n.kind in order else len(order)
        return (n.transition != FIRING, kind, n.created_at, n.fingerprint)
    return sorted(notifications, key=key)


def _section_text(n: Notification) -> str:
    icon = ":rotating_light:" if n.transition == FIRING else ":white_check_mark:"
    prefix = "" if n.transition == FIRING else "Resolved: "
    lines = [f"{icon} *{prefix}{escape(title(n))}*"]
    lines += [escape(line) for line in numbers(n)]
    if n.transition == FIRING and n.annotations.get("why"):
        lines.append(f"_Why it matters:_ {escape(n.annotations['why'])}")
    if n.annotations.get("sql"):
        lines.append(f"_Where to look:_ `{escape(query_command(n.annotations['sql']), in_code=True)}`")
    return _fit("\n".join(lines), config.SLACK_MAX_SECTION_TEXT)


def query_command(sql: str) -> str:
    """`benchwatch query "…"` with the SQL quoted for a POSIX shell."""
    quoted = re.sub(r'([\\"$`])', r"\\\1", _clean(sql, 1000))
    return f'benchwatch query "{quoted}"'


def _counts(notifications: Sequence[Notification]) -> str:
    firing = sum(n.transition == FIRING for n in notifications)
    resolved = len(notifications) - firing
    parts = []
    if firing:
        parts.append(f"{firing} new alert{'s' * (firing != 1)}")
    if resolved:
        parts.append(f"{resolved} resolved")
    return ", ".join(parts) or "nothing new"


_ANCHOR_UNSAFE = re.compile(r"[^a-z0-9_-]+")


def report_anchor(benchmark: str) -> str:
    """The HTML report's anchor of a benchmark's section (`bench-<slug>`, slug in [a-z0-9_-])."""
    return "bench-" + (_ANCHOR_UNSAFE.sub("-", str(benchmark).lower()).strip("-")[:60] or "benchmark")


def _link(url: str, label: str) -> str:
    """A Slack link to a configured URL; characters that would end the link are percent-encoded."""
    safe = url.replace("&", "%26").replace("<", "%3C").replace(">", "%3E").replace("|", "%7C").replace(" ", "%20")
    return f"<{safe}|{escape(label)}>"


def render_digest(notifications: Sequence[Notification], *, now: datetime,
                  report_url: str | None = None) -> list[SlackMessage]:
    """The digest of one notify run: one message, or more when Block Kit limits demand it.
    With `report_url` (the HTML report), the context line links to it and each benchmark's
    section links to that benchmark's part of the report."""
    if not notifications:
        return []
    ordered = _ordered(notifications)
    sections = [(n, _section_text(n)) for n in ordered]
    if report_url:
        def linked(n: Notification, text: str) -> str:
            if not n.labels.get("benchmark"):
                return text
            link = _link(f"{report_url}#{report_anchor(n.labels['benchmark'])}", "report section")
            return _fit(text, config.SLACK_MAX_SECTION_TEXT - len(link) - 1) + "\n" + link
        sections = [(n, linked(n, text)) for n, text in sections]
    budget_blocks = config.SLACK_MAX_BLOCKS - 2          # header + context
    pages: list[list[tuple[Notification, str]]] = [[]]
    chars = 0
    for n, text in sections:
        page = pages[-1]
        if page and (len(page) >= budget_blocks or chars + len(text) > config.SLACK_MAX_MESSAGE_CHARS):
            pages.append([])
            chars = 0
        pages[-1].append((n, text))
        chars += len(text)

    total = _counts(ordered)
    messages = []
    for i, page in enumerate(pages, start=1):
        part = f" ({i}/{len(pages)})" if len(pages) > 1 else ""
        header = _fit(f"benchwatch: {total}{part}", config.SLACK_MAX_HEADER_TEXT)
        blocks: list[dict[str, Any]] = [
            {"type": "header", "text": {"type": "plain_text", "text": header, "emoji": True}},
            {"type": "context", "elements": [{"type": "mrkdwn", "text":
                f"{now:%Y-%m-%d %H:%M} UTC · `benchwatch alerts --state firing` lists everything firing"
                + (f" · {_link(report_url, 'HTML report')}" if report_url else "")}]},
        ]
        blocks += [{"type": "section", "text": {"type": "mrkdwn", "text": text}} for _, text in page]
        items = [n for n, _ in page]
        fallback = f"benchwatch: {total}{part} — " + "; ".join(
            ("resolved: " if n.transition == RESOLVED else "") + escape(title(n)) for n in items)
        messages.append(SlackMessage(text=_fit(fallback, config.SLACK_MAX_SECTION_TEXT),
                                     blocks=blocks, notifications=tuple(items)))
    return messages


def render_plain(notifications: Sequence[Notification], *, now: datetime) -> str:
    """The same digest as plain text for the console or a log (no Slack escaping needed)."""
    if not notifications:
        return "benchwatch: nothing new"
    lines = [f"benchwatch: {_counts(notifications)} ({now:%Y-%m-%d %H:%M} UTC)"]
    for n in _ordered(notifications):
        mark = "FIRING  " if n.transition == FIRING else "RESOLVED"
        lines.append(f"{mark} {title(n)}")
        lines += [f"         {line}" for line in numbers(n)]
        if n.transition == FIRING and n.annotations.get("why"):
            lines.append(f"         why: {n.annotations['why']}")
        if n.annotations.get("sql"):
            lines.append(f"         look: {query_command(n.annotations['sql'])}")
    return "\n".join(lines)

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

from alerts import baseline, config
from alerts import rules as registry
from alerts.records import FIRING, RESOLVED, Notification
from alerts.text import clean as _clean
from alerts.text import unlinked as _unlinked
from storage import look_queries as look
_PARTIAL_ENTITY = re.compile(r"&[a-z]{0,4}$")
FALLBACK_CHARS = 300   # the phone-notification text: the summary line, cut here


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
    if n.kind in baseline.NOTICE_KINDS:
        return baseline.title(n)
    return headline(n.kind, n.transition, n.labels, n.annotations)


def headline(kind: str, transition: str, labels: Mapping[str, str], a: Mapping[str, Any]) -> str:
    """One line saying what an alert is about (also used by `benchwatch alerts`); the kind's
    rule module writes it (AlertKind.headline)."""
    spec = registry.kind(kind)
    return f"{kind}: {transition}" if spec is None else spec.headline(transition, labels, a)


def state_text(kind: str, state: str, labels: Mapping[str, str], a: Mapping[str, Any]) -> tuple[str, str]:
    """(state word, line) of an alert as `benchwatch alerts` and the report list it: a kind that is a
    state (a benchmark's level) reads "level" / "MMLU: level low since …", never "firing … changed"."""
    spec = registry.kind(kind)
    if spec is not None and spec.state_line is not None:
        word = {FIRING: "level"}.get(state, state)
        return word, spec.state_line(state, labels, a)
    return state, headline(kind, RESOLVED if state == RESOLVED else FIRING, labels, a)


def numbers(n: Notification) -> list[str]:
    """The numbers with their uncertainty, one plain-text line each (scraped parts unescaped);
    the kind's rule module writes them (AlertKind.numbers)."""
    if n.kind in baseline.NOTICE_KINDS:
        return baseline.lines(n)
    spec = registry.kind(n.kind)
    if spec is None or (spec.cause_key and n.transition == RESOLVED):
        return []   # a recovery does not repeat the old error
    return spec.numbers(n.labels, n.annotations)


# --- the digest ----------------------------------------------------------------------------------

def _ordered(notifications: Sequence[Notification]) -> list[Notification]:
    order = registry.all_kinds()   # the order of alerts.rules.RULES

    def key(n: Notification) -> tuple:
        notice = n.kind in baseline.NOTICE_KINDS
        kind = order.index(n.kind) if n.kind in order else len(order)
        return (n.kind != baseline.BASELINE, notice, n.transition != FIRING, kind, n.created_at, n.fingerprint)
    return sorted(notifications, key=key)


def _groups(ordered: Sequence[Notification]) -> list[list[Notification]]:
    """The digest's sections, in order: one per notification (a "now watching" notice is already
    one per source and release), except that notifications of a kind with a `cause_key` that
    share kind, transition and cause (source failures of one cause, their recoveries) are one
    section."""
    groups: list[list[Notification]] = []
    index: dict[tuple, int] = {}
    key: tuple | None
    for n in ordered:
        spec = registry.kind(n.kind)
        if spec is not None and spec.cause_key:
            key = (n.kind, n.transition, "" if n.transition == RESOLVED else str(n.annotations.get(spec.cause_key)))
        else:
            key = None
        if key is not None and key in index:
            groups[index[key]].append(n)
            continue
        if key is not None:
            index[key] = len(groups)
        groups.append([n])
    return groups


def _group_lines(group: Sequence[Notification]) -> tuple[str, list[str], str | None, str | None]:
    """(headline, number lines, why, sql) of a section, all plain text."""
    n = group[0]
    if len(group) == 1:
        return (title(n), numbers(n), n.annotations.get("why") if n.transition == FIRING else None,
                n.annotations.get("sql"))
    spec = registry.kind(n.kind)
    names = ", ".join(sorted(_clean(m.labels.get("source") or m.labels.get("benchmark") or m.fingerprint, 60)
                             for m in group))
    if n.transition == RESOLVED:
        return (f"{len(group)} sources recovered: {names}", [], None, None)
    cause = n.annotations.get(spec.cause_key) if spec is not None else None
    runs = sorted({int(m.annotations["consecutive_failures"]) for m in group if m.annotations.get("consecutive_failures")})
    detail = f"{runs[0]}" if len(runs) == 1 else f"{runs[0]}–{runs[-1]}" if runs else "several"
    return (f"{len(group)} sources failing: {_clean(cause or 'same cause', 120)}",
            [f"{names} · {detail} failed runs in a row"], n.annotations.get("why"),
            look.RECENT_FETCHES)


def _section_text(group: Sequence[Notification]) -> str:
    n = group[0]
    if n.kind in baseline.NOTICE_KINDS:
        icon = ":eyes:"
    else:
        icon = ":rotating_light:" if n.transition == FIRING else ":white_check_mark:"
    prefix = "" if n.transition == FIRING or len(group) > 1 else "Resolved: "
    head, body, why, sql = _group_lines(group)
    lines = [f"{icon} *{prefix}{escape(head)}*"]
    lines += [escape(line) for line in body]
    if why:
        lines.append(f"_Why it matters:_ {escape(why)}")
    if sql:
        lines.append(f"_Where to look:_ `{escape(query_command(sql), in_code=True)}`")
    return _fit("\n".join(lines), config.SLACK_MAX_SECTION_TEXT)


def query_command(sql: str) -> str:
    """`benchwatch query "…"` with the SQL quoted for a POSIX shell."""
    quoted = re.sub(r'([\\"$`])', r"\\\1", _clean(sql, 1000))
    return f'benchwatch query "{quoted}"'


def summary(notifications: Sequence[Notification]) -> str:
    """The digest's one-line summary (its header and the phone-notification text): the baseline's
    own summary, else counts per kind ("1 level change, 18 sources failing, 2 resolved") and the
    new tables ("LiveBench 2026-01-08: now watching 27 tables")."""
    base = [n for n in notifications if n.kind == baseline.BASELINE]
    if base:
        return "baseline: " + title(base[0]).removeprefix("benchwatch ")
    parts: list[str] = []
    counts: dict[str, int] = {}
    for n in notifications:
        if n.kind not in baseline.NOTICE_KINDS and n.transition == FIRING:
            counts[n.kind] = counts.get(n.kind, 0) + 1
    order = registry.all_kinds()
    for kind in sorted(counts, key=lambda k: order.index(k) if k in order else len(order)):
        spec = registry.kind(kind)
        if spec is None:
            parts.append(f"{counts[kind]} {kind}")
            continue
        part = spec.noun(counts[kind])
        if spec.cause_key:      # named once: "18 sources failing (HTTP 503)"
            causes = sorted({_clean(n.annotations.get(spec.cause_key) or "cause unknown", 80) for n in notifications
                             if n.kind == kind and n.transition == FIRING})
            part += f" ({causes[0]})" if len(causes) == 1 else f" ({len(causes)} causes)"
        parts.append(part)
    resolved = sum(n.kind not in baseline.NOTICE_KINDS and n.transition != FIRING for n in notifications)
    if resolved:
        parts.append(f"{resolved} resolved")
    parts += [title(n) for n in notifications if n.kind == baseline.NOW_WATCHING]
    return ", ".join(parts) or "nothing new"


def footer(notifications: Sequence[Notification]) -> str | None:
    """The one definition of P(level holds), once per digest, when a message shows it."""
    if not any("P(level holds)" in " ".join([title(n), *numbers(n)]) for n in notifications):
        return None
    return (f"{config.P_LEVEL_HOLDS_DEFINITION}; below {config.LEVEL_ANNOUNCE_MIN_P:.2f} a level is not announced "
            "as that level")


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
    sections = [(g, _section_text(g)) for g in _groups(ordered)]
    if report_url:
        def linked(g: Sequence[Notification], text: str) -> str:
            if len(g) != 1 or not g[0].labels.get("benchmark"):
                return text
            link = _link(f"{report_url}#{report_anchor(g[0].labels['benchmark'])}", "report section")
            return _fit(text, config.SLACK_MAX_SECTION_TEXT - len(link) - 1) + "\n" + link
        sections = [(g, linked(g, text)) for g, text in sections]
    total = summary(ordered)
    foot = footer(ordered)
    budget_blocks = config.SLACK_MAX_BLOCKS - 2 - (1 if foot else 0)    # header + context (+ footer)
    pages: list[list[tuple[Sequence[Notification], str]]] = [[]]
    chars = 0
    for g, text in sections:
        page = pages[-1]
        if page and (len(page) >= budget_blocks or chars + len(text) > config.SLACK_MAX_MESSAGE_CHARS):
            pages.append([])
            chars = 0
        pages[-1].append((g, text))
        chars += len(text)

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
        if foot and i == len(pages):
            blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": escape(foot)}]})
        items = [n for g, _ in page for n in g]
        # the phone notification: the summary line alone (a section's headline names the cause once)
        fallback = _fit(escape(f"benchwatch: {total}{part}"), FALLBACK_CHARS)
        messages.append(SlackMessage(text=fallback, blocks=blocks, notifications=tuple(items)))
    return messages


def render_plain(notifications: Sequence[Notification], *, now: datetime) -> str:
    """The same digest as plain text for the console or a log (no Slack escaping needed)."""
    if not notifications:
        return "benchwatch: nothing new"
    lines = [f"benchwatch: {summary(notifications)} ({now:%Y-%m-%d %H:%M} UTC)"]
    for group in _groups(_ordered(notifications)):
        n = group[0]
        head, body, why, sql = _group_lines(group)
        mark = "NOTICE  " if n.kind in baseline.NOTICE_KINDS else "FIRING  " if n.transition == FIRING else "RESOLVED"
        lines.append(f"{mark} {head}")
        lines += [f"         {line}" for line in body]
        if why:
            lines.append(f"         why: {why}")
        if sql:
            lines.append(f"         look: {query_command(sql)}")
    foot = footer(notifications)
    if foot:
        lines.append(f"-- {foot}")
    return "\n".join(lines)

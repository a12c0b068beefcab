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
URLs and host names are kept from being linked (an invisible word joiner).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Mapping, Sequence

from alerts import config
from alerts.config import (
    CONTAMINATION_SUSPECT,
    NEW_FRONTIER,
    SATURATION_BIN_CHANGED,
    SNAPSHOT_HELD,
    SOURCE_FAILING,
    SOURCE_STALE,
)
from alerts.rules import FIRING, RESOLVED, Notification

_KIND_ORDER = (SOURCE_FAILING, SOURCE_STALE, SNAPSHOT_HELD, SATURATION_BIN_CHANGED, CONTAMINATION_SUSPECT,
               NEW_FRONTIER)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
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
# Slack links bare URLs and host names itself; a word joiner (U+2060, invisible) after the scheme's
# colon or a host name's last dot keeps them text.
_SCHEME = re.compile(r"(?i)\b([a-z][a-z0-9+.-]{1,15}):(?=//)")
_HOST = re.compile(r"(?i)(?<=[a-z0-9-])\.(?=(?:com|net|org|io|ai|dev|co|app|xyz|info|me|gg|ly|sh|link|site|online|"
                   r"top|ru|cn|uk|de|fr|us|tk|to|so|cc|biz|club|page|tech|news|zip|mov)\b)")


def escape(text: Any) -> str:
    """Slack-escape text that did not come from this code (the only place that does it): `&<>` as
    entities (no <!channel>, <@U…>, <url|label>), emphasis/code marks that could format as look-alikes,
    bare URLs and host names unlinked."""
    out = str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    out = _EMPHASIS.sub(lambda m: _MRKDWN_LOOKALIKE[m[0]], out)
    out = _SCHEME.sub(lambda m: f"{m[1]}:\u2060", out)
    return _HOST.sub(".\u2060", out)


def _clean(text: Any, limit: int = config.MAX_NAME_CHARS) -> str:
    """Scraped text on one line, without control characters, at most `limit` characters."""
    flat = " ".join(_CONTROL.sub(" ", str(text)).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _fit(mrkdwn: str, limit: int) -> str:
    """Cut escaped text to `limit` characters without leaving half an entity (`&am`)."""
    if len(mrkdwn) <= limit:
        return mrkdwn
    return _PARTIAL_ENTITY.sub("", mrkdwn[: limit - 1]) + "…"


def _f(value: Any, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _g(value: Any) -> str:
    return "n/a" if value is None else f"{value:g}"


def _pp(value: Any, signed: bool = False) -> str:
    """A proportion difference in percentage points."""
    if value is None:
        return "n/a"
    return f"{value * 100:+.1f} pp" if signed else f"{value * 100:.1f} pp"


def _date(iso: Any) -> str:
    return str(iso)[:10] if iso else "n/a"


# --- per kind: what changed, the numbers -----------------------------------------------------

def title(n: Notification) -> str:
    """What changed, in plain (unescaped) text."""
    return headline(n.kind, n.transition, n.labels, n.annotations)


def headline(kind: str, transition: str, labels: Mapping[str, str], a: Mapping[str, Any]) -> str:
    """One line saying what an alert is about (also used by `benchwatch alerts`)."""
    scope_label = str(labels.get("scope") or "")
    scope_label = scope_label[len("all:"):] if scope_label.startswith("all:") else scope_label  # all:systems -> systems
    scope = f" [{scope_label}]" if scope_label and scope_label != "all" else ""
    if kind == SATURATION_BIN_CHANGED:
        name = _clean(a.get("benchmark_name") or labels["benchmark"]) + scope
        if transition == RESOLVED:
            return f"{name}: saturation no longer {labels['level']}"
        own = " (own scale, not comparable)" if a.get("comparable") is False else ""
        if a.get("from_level"):
            return f"{name}: saturation {a['from_level']} → {labels['level']}{own}"
        return f"{name}: saturation {labels['level']}{own}"
    if kind == CONTAMINATION_SUSPECT:
        who = f"{_clean(a.get('model_name') or labels['model'])} on {_clean(a.get('benchmark_name') or labels['benchmark'])}"
        if transition == RESOLVED:
            return f"{who}: contamination suspicion cleared"
        return f"{who}: contamination suspect ({a.get('status', 'suspect')})"
    if kind == SOURCE_FAILING:
        source = _clean(labels["source"])
        if transition == RESOLVED:
            return f"{source}: source recovered"
        return f"{source}: source failing ({a.get('consecutive_failures')} runs in a row)"
    if kind == SOURCE_STALE:
        source = _clean(labels["source"])
        if transition == RESOLVED:
            return f"{source}: new snapshot again"
        return f"{source}: no new snapshot for {a.get('age_days')} days"
    if kind == SNAPSHOT_HELD:
        source = _clean(labels["source"])
        if transition == RESOLVED:
            return f"{source}: held snapshot released or superseded"
        return f"{source}: snapshot {a.get('snapshot_id')} held (dropped half or more of the rows)"
    if kind == NEW_FRONTIER:
        name = _clean(a.get("benchmark_name") or labels["benchmark"]) + scope
        model = _clean(a.get("model_name") or labels["model"])
        if transition == RESOLVED:
            return f"{name}: {model} no longer holds the record"
        before = f" (was {_clean(a['from_model_name'])})" if a.get("from_model_name") else ""
        return f"{name}: new frontier {model}{before}"
    return f"{kind}: {transition}"


def numbers(n: Notification) -> list[str]:
    """The numbers with their uncertainty, one plain-text line each (scraped parts unescaped)."""
    a = n.annotations
    if n.kind == SATURATION_BIN_CHANGED:
        x = a.get("numbers", {})
        s_index = f"S_index {_f(x.get('s_index'))}"
        if x.get("bin_hold_prob") is not None:
            draws = f", {x['resample_draws']:.0f} draws" if x.get("resample_draws") is not None else ""
            noise = _clean(a.get("resample_noise") or "re-evaluation noise", 60)
            s_index += f" (P(bin holds) {x['bin_hold_prob']:.2f} under {noise}{draws})"
        n_items = "n/a" if x.get("n_items") is None else f"{x['n_items']:.0f}"
        models = f", {x['n_models']:.0f} models" if x.get("n_models") is not None else ""
        lines = [f"{s_index} · R_norm {_f(x.get('r_norm'))} · SE_Δ {_f(x.get('se_delta'), 3)} "
                 f"· k={_g(x.get('k'))}, α={_g(x.get('alpha'))}, n={n_items}{models} "
                 f"· as of {_date(a.get('as_of'))}"]
        if a.get("comparable") is False:
            lines.append(f"Not comparable: S here uses {_clean(a.get('scale') or 'another scale', 40)}, not the "
                         "paper's binomial SE at a known n; its bin is not on the same scale as other benchmarks")
        return lines
    if n.kind == CONTAMINATION_SUSPECT:
        lines = []
        for s in a.get("signals", []):
            name = _clean(s.get("signal"), 40) + (f" ({_clean(s['detail'], 80)})" if s.get("detail") else "")
            parts = [f"{name}: effect {_pp(s.get('effect'), signed=True)}"]
            if s.get("se") is not None:
                parts[0] += f" ± {_pp(s['se'])}"
            if s.get("ci_low") is not None and s.get("ci_high") is not None:
                parts.append(f"95% CI {_pp(s['ci_low'], True)} to {_pp(s['ci_high'], True)}")
            if s.get("p_value") is not None:
                parts.append(f"p={s['p_value']:.2g}")
            parts.append(f"q={_f(s.get('q_value'), 3)}")
            if s.get("n_pre") is not None or s.get("n_post") is not None:
                parts.append(f"n {s.get('n_pre') or 'n/a'} pre / {s.get('n_post') or 'n/a'} post")
            if s.get("n_ref") is not None:
                parts.append(f"reference set {s['n_ref']} models")
            parts.append(_clean(s.get("status", "suspect"), 20))
            lines.append(" · ".join(parts))
        lines.append(f"status {a.get('status', 'suspect')} (a suspicion, not a finding) · as of {_date(a.get('as_of'))}")
        return lines
    if n.kind in (SOURCE_FAILING, SOURCE_STALE):
        line = (f"{a.get('consecutive_failures')} failed runs in a row · last new snapshot "
                f"{_date(a.get('last_new_snapshot_at'))}")
        if a.get("last_error"):
            line += f" · last error: {_clean(a['last_error'], 300)}"
        return [line]
    if n.kind == SNAPSHOT_HELD:
        return [f"observed {_date(a.get('observed_at'))} · {_clean(a.get('held_reason'), 300)}"]
    if n.kind == NEW_FRONTIER:
        x = a.get("numbers", {})
        score = _f(x.get("score"), 3) + (f" ± {_f(x['stderr'], 3)}" if x.get("stderr") is not None else "")
        return [f"score {score} · as of {_date(a.get('as_of'))}"]
    return []


# --- the digest ----------------------------------------------------------------------------------

def _ordered(notifications: Sequence[Notification]) -> list[Notification]:
    def key(n: Notification) -> tuple:
        kind = _KIND_ORDER.index(n.kind) if n.kind in _KIND_ORDER else len(_KIND_ORDER)
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
        lines.append(f"_Where to look:_ `{escape(query_command(n.annotations['sql']))}`")
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

"""The one digest message that says which leaderboard tables were corrected (issue 49).

Kept apart from the rules and the level wording (alerts/render.py): a rule change that rebuilt
stored tables (migration 040: the table is the unit) would otherwise surface as a burst of level
changes; the digest says once which tables were corrected, and the level changes of those tables
in that run are folded into it (jobs/alerts.py).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Sequence

from alerts import config
from alerts.render import SlackMessage, escape
from storage import look_queries as look

HEADER = "benchwatch: leaderboard tables corrected"
WHY = ("Rebuilt under the per-table rule (issue 49): a model in several splits of one version is no "
       "duplicate, the newest release is current by its own date, a top-N page never replaces the full "
       "board. A level that moved with the correction is the correction, not a change on the board.")


def correction_lines(corrections: Sequence[tuple[str, str]]) -> list[str]:
    """'table: what changed', one per corrected table (plain text, for the console and the log)."""
    return [f"corrected {table}: {detail}" for table, detail in corrections]


def correction_message(corrections: Sequence[tuple[str, str]], *, now: datetime) -> SlackMessage:
    """One message listing each corrected table (table_id, detail) once; long lists are cut with a count."""
    lines: list[str] = []
    chars = 0
    for table, detail in corrections:
        line = f"• `{escape(table, in_code=True)}`: {escape(detail)}"
        if chars + len(line) > config.SLACK_MAX_SECTION_TEXT - 200:
            lines.append(f"… and {len(corrections) - len(lines)} more (`benchwatch query \"{look.CORRECTIONS}\"`)")
            break
        lines.append(line)
        chars += len(line) + 1
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": HEADER, "emoji": True}},
        {"type": "context", "elements": [{"type": "mrkdwn", "text": f"{now:%Y-%m-%d %H:%M} UTC · {WHY}"}]},
        {"type": "section", "text": {"type": "mrkdwn", "text": "\n".join(lines)}},
    ]
    return SlackMessage(text=f"{HEADER}: {len(corrections)}", blocks=blocks, notifications=())

"""Replay the real snapshot history day by day, as a daily schedule sees it, and write what Slack got.

    python docs/alert_timeline.py [--snapshots ../shared/snapshots] [--out docs/alert-timeline.md] [--db FILE] [--check]

For each distinct file date of --snapshots, oldest first: backfill that day's files (the command
`benchwatch backfill` on a folder holding only them), `analyze` with now = that day 06:00 UTC,
and `notify`; and on the day a level move proposed by a file has stood its dwell time, `analyze`
and `notify` alone, as the daily schedule would then commit and announce it (to the console here; tests/system/test_alert_replay.py sends to tests/fake_slack.py).
Source folders benchwatch does not know are skipped, as `backfill` skips them. The timeline
(docs/alert-timeline.md) lists every message of every day as the console digest shows it, so a
person can read each one against its evidence. tests/system/test_alert_replay.py runs the same replay
and checks the rules the issue states (no crash, one baseline, levels equal to the stored ones,
level changes name their top k, no contamination alert resolved without new data) and that the
timeline it renders is the document, message for message (`timeline_diff`, as `--check` does).
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import io
import os
import sys
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parents[1]
DEFAULT_SNAPSHOTS = REPO.parent / "shared" / "snapshots"
DOC = REPO / "docs" / "alert-timeline.md"
SCHEDULE_HOUR = 6      # the pipeline/daily deployment runs at 06:00 UTC

if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


@dataclass
class Day:
    """One replayed day: what ran, what it returned, and what was delivered."""

    date: str
    files: list[str]
    backfill_rc: int
    analyze_rc: int
    notify_rc: int
    errors: list[str] = field(default_factory=list)
    messages: list[Any] = field(default_factory=list)        # alerts.render.SlackMessage, delivered
    firing_levels: list[tuple[str, str, str]] = field(default_factory=list)   # (table, scope label, level)
    stored_levels: dict[tuple[str, str], str] = field(default_factory=dict)   # (table, scope label) -> level
    stored_bins: dict[tuple[str, str], str] = field(default_factory=dict)     # (table, scope label) -> bin of S
    suspects: Any = None                                     # the suspects view after analyze

    @property
    def notifications(self) -> list[Any]:
        return [n for m in self.messages for n in m.notifications]


class Recording:
    """A notifier that keeps what it was given, then hands it to `inner` (Slack or the console)."""

    def __init__(self, inner: Any):
        self.inner = inner
        self.receiver = inner.receiver
        self.sent: list[Any] = []

    def send(self, messages, **options: Any):
        result = self.inner.send(messages, **options)    # still_claimed: the outbox's lease check
        self.sent += list(messages[:result.sent])
        return result


def _day_folder(files: list[Any], root: Path) -> Path:
    """A folder `root/<source folder>/<file>` of links to one day's files (and LiveBench's
    category files, which `backfill` pairs with a table by release)."""
    for item in files:
        folder = root / item.path.parent.name
        folder.mkdir(parents=True, exist_ok=True)
        for path in (item.path, *item.aux):
            link = folder / path.name
            if not link.exists():
                link.symlink_to(path.resolve())
    return root


def replay_dates(file_dates: list[str]) -> list[str]:
    """The days the replay runs: every day a file arrives, and the day a level move proposed then
    has stood its dwell time (LEVEL_DWELL_DAYS; a file is observed at its date's midnight, the run is
    at 06:00): the day a daily schedule would commit and announce it. The days between change
    nothing a message could say (no data, no level due)."""
    from analysis.constants import LEVEL_DWELL_DAYS
    out = set(file_dates)
    for d in file_dates:
        out.add((datetime.fromisoformat(d) + timedelta(days=LEVEL_DWELL_DAYS)).date().isoformat())
    return sorted(out)


def replay(snapshots: Path, db: Path, notifier: Any, *, on_day: Callable[[Day], None] | None = None,
           limit_days: int | None = None) -> list[Day]:
    """Replay `snapshots` into `db` day by day (see the module docstring); `notifier` delivers."""
    from cli import main as cli
    from jobs.alerts import run_notify
    from jobs.backfill import plan_backfill
    from jobs.analyze import analyze
    from storage.store import open_store
    from storage import alerts as alert_store
    from storage import db as dbm

    plan = plan_backfill(snapshots)
    dates = replay_dates(sorted({f.date for f in plan})[:limit_days])
    recording = Recording(notifier)
    days: list[Day] = []
    for date in dates:
        files = [f for f in plan if f.date == date]
        now = datetime.fromisoformat(date).replace(tzinfo=timezone.utc) + timedelta(hours=SCHEDULE_HOUR)
        errors: list[str] = []
        backfill_rc = 0
        if files:       # a day without files: the schedule still analyses (levels move with time) and notifies
            with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(io.StringIO()), \
                    contextlib.redirect_stderr(io.StringIO()) as err:
                backfill_rc = cli.main(["backfill", str(_day_folder(files, Path(tmp))), "--db", str(db)])
            if backfill_rc:
                errors.append(f"backfill exit {backfill_rc}: {err.getvalue().strip()[-500:]}")
        analyze_rc = notify_rc = 0
        try:
            analyze(open_store(db), now=now)
        except Exception as exc:   # a crash is what the replay looks for: recorded as exit 70
            analyze_rc = 70
            errors.append(f"analyze: {type(exc).__name__}: {exc}")
        before = len(recording.sent)
        try:
            summary = run_notify(open_store(db), now=now, notifier=recording)
            notify_rc = 0 if summary.ok else 1
        except Exception as exc:
            notify_rc = 70
            errors.append(f"notify: {type(exc).__name__}: {exc}")
        day = Day(date=date, files=[f"{f.source}/{f.path.name}" for f in files], backfill_rc=backfill_rc,
                  analyze_rc=analyze_rc, notify_rc=notify_rc, errors=errors, messages=recording.sent[before:])
        with dbm.connect(db, read_only=True) as con:
            for state in alert_store.read_states(con):
                if state.kind == "saturation_bin_changed" and state.state == "firing":
                    day.firing_levels.append((state.labels.get("table") or state.labels["benchmark"], state.labels["scope"],
                                              state.labels["level"]))
            rows = con.execute("""SELECT table_id, scope, population, level, bin FROM saturation_latest
                                  WHERE k = 5 AND alpha = 0.5 AND level IS NOT NULL""").fetchall()
            day.stored_levels = {(b, s if (p or "models") == "models" else f"{s}:{p}"): lv for b, s, p, lv, _ in rows}
            day.stored_bins = {(b, s if (p or "models") == "models" else f"{s}:{p}"): bn for b, s, p, _, bn in rows
                               if bn is not None}
            day.suspects = con.execute("SELECT * FROM suspects").df()
        days.append(day)
        if on_day:
            on_day(day)
    return days


def timeline_markdown(days: list[Day]) -> str:
    """The alert timeline: every delivered message, per day, as the console digest words it."""
    from alerts.render import render_plain
    from collections import Counter
    kinds = Counter((n.kind, n.transition) for d in days for n in d.notifications)
    lines = ["# Alert timeline of the real snapshot history", "",
             "Generated by `python docs/alert_timeline.py` (do not edit): a folder of dated copies of the real "
             "leaderboards (`--snapshots`, one file per source and date) replayed day by day as the daily schedule sees them — each day's files "
             "backfilled, `analyze` at 06:00 UTC that day, `notify`; also the days a level move has stood its dwell time "
             "— and every message delivered, as the "
             "console digest words it. tests/system/test_alert_replay.py checks the same replay.", "",
             f"{len(days)} days replayed, {sum(len(d.files) for d in days)} files, "
             f"{sum(len(d.messages) for d in days)} messages on {sum(1 for d in days if d.messages)} days. "
             "Notifications by kind: " + ", ".join(f"{k} {t} {n}" for (k, t), n in sorted(kinds.items())) + ".", ""]
    for d in days:
        if not d.messages and not d.errors:
            continue
        lines += [f"## {d.date}", "", f"Files: {', '.join(d.files)}" if d.files
                  else "Files: none (the daily run on which a level move proposed earlier has stood its dwell time)", ""]
        for e in d.errors:
            lines += [f"**Error:** {e}", ""]
        for m in d.messages:
            lines += ["```text", render_plain(list(m.notifications), now=datetime.fromisoformat(d.date)
                                              .replace(tzinfo=timezone.utc) + timedelta(hours=SCHEDULE_HOUR)), "```", ""]
    return "\n".join(lines).rstrip() + "\n"


def timeline_diff(days: list[Day], doc: Path = DOC) -> list[str]:
    """What differs between `doc` and the timeline of `days` (a unified diff; empty when the
    document is what the replay delivered): a message changed, added or lost fails the check."""
    old = doc.read_text(encoding="utf-8") if doc.exists() else ""
    return list(difflib.unified_diff(old.splitlines(True), timeline_markdown(days).splitlines(True),
                                     str(doc), "replayed"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--snapshots", type=Path, default=DEFAULT_SNAPSHOTS)
    ap.add_argument("--out", type=Path, default=DOC)
    ap.add_argument("--db", type=Path, default=None, help="keep the replayed database here (overwritten)")
    ap.add_argument("--check", action="store_true", help="do not write; exit 1 when --out differs from the replay")
    args = ap.parse_args(argv)
    if not args.snapshots.is_dir():
        print(f"alert_timeline: no snapshots folder at {args.snapshots}", file=sys.stderr)
        return 2
    from common import settings
    for name in (settings.SLACK_WEBHOOK_URL, settings.SLACK_BOT_TOKEN):    # the replay's digests stay on the console
        os.environ.pop(name, None)
    from alerts.slack import ConsoleNotifier
    with tempfile.TemporaryDirectory() as tmp:
        db = args.db or Path(tmp) / "replay.duckdb"
        if db.exists():
            db.unlink()
        days = replay(args.snapshots, db, ConsoleNotifier(lambda text: None),
                      on_day=lambda d: print(f"{d.date}: {len(d.files)} file(s), {len(d.messages)} message(s)"
                                             + (f", errors: {d.errors}" if d.errors else ""), file=sys.stderr))
        if args.check:
            diff = timeline_diff(days, args.out)
            sys.stdout.writelines(diff)
            print(f"alert_timeline: {args.out} " + ("differs from the replay; run python docs/alert_timeline.py"
                                                    if diff else "is up to date"), file=sys.stderr)
            return 1 if diff else 0
        args.out.write_text(timeline_markdown(days), encoding="utf-8")
    print(f"alert_timeline: wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

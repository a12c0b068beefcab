"""`benchwatch report`: what the database says now, for a person (text) or a page (HTML)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING
import os
import sys
from datetime import datetime, timezone
from pathlib import Path
import stat
import tempfile

if TYPE_CHECKING:
    import pandas as pd

from cli.main import add_db_argument, open_read_only
from storage.db import DEFAULT_WAIT_SECONDS


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="saturation levels, trends, contamination suspects and firing alerts",
                       description="Summarize what the database says now: saturation level of every benchmark "
                                   "(with the probability that its bin holds under re-evaluation noise, its scale, trend and forecast), contamination-suspect flags with "
                                   "their effect and q-value, and firing alerts. Read-only.")
    p.add_argument("--format", choices=("text", "html"), default=None,
                   help="text for the terminal, html for a self-contained page with charts, a table of contents "
                        "and #bench-<id> anchors (default: html when --out ends in .html or .htm, else text)")
    p.add_argument("--out", metavar="FILE", default=None,
                   help="write the report to FILE instead of stdout (html: one self-contained page with charts)")
    p.add_argument("--wait", type=float, default=DEFAULT_WAIT_SECONDS, metavar="SECONDS",
                   help="how long to wait while another process writes")
    add_db_argument(p)
    p.set_defaults(func=run)


def out_refusal(out: str) -> str | None:
    """Why `--out` may not be written (None when it may): the report replaces only a regular file or
    creates a new one in an existing folder; a symlink, device, FIFO or folder at the path, or a
    missing folder, is refused rather than replaced or created."""
    path = Path(out)
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        return f"cannot use {out}: {exc.strerror}"
    if mode is not None and not stat.S_ISREG(mode):
        kind = ("a symbolic link" if stat.S_ISLNK(mode) else "a directory" if stat.S_ISDIR(mode)
                else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file")
        return f"{out} is {kind}; --out replaces only a regular file (or creates one)"
    parent = path.parent
    if not parent.is_dir():
        return f"the folder of {out} does not exist; create it first (--out does not create folders)"
    return None


def report_format(fmt: str | None, out: str | None) -> str:
    """The format asked for, else the one `--out`'s suffix names (`page.html` is a page, not text)."""
    if fmt is not None:
        return fmt
    return "html" if out is not None and Path(out).suffix.lower() in (".html", ".htm") else "text"


UNANALYSED = ("this database has scores but no analysis yet: run `benchwatch analyze` "
              "(a backfill or an ingest stores data; analyze computes the levels, trends and suspects)")


def run(args: argparse.Namespace) -> int:
    import pandas as pd

    from storage.report import read_report, unanalysed

    if args.out is not None:
        from cli.main import EXIT_USAGE, output_refused
        from jobs.outputs import database_inputs, own_inputs
        from cli.main import store_of
        if output_refused("report", args.out, database_inputs(store_of(args)) + own_inputs()):
            return EXIT_USAGE
        refusal = out_refusal(args.out)
        if refusal:
            print(f"benchwatch: {refusal}", file=sys.stderr)
            return 1
    con = open_read_only(args)
    if con is None:
        return 1
    now = datetime.now(timezone.utc)
    args.format = report_format(args.format, args.out)
    try:
        not_analysed = unanalysed(con)
        if not_analysed:
            print(f"benchwatch: {UNANALYSED}", file=sys.stderr)
        if args.format == "html":   # charts and sections: report/html.py (imported only here)
            from report.html import render_report
            from storage.report import read_html_report
            return _emit(render_report(read_html_report(con), now=now), args.out)
        frames = read_report(con)
        from storage.contamination import read_not_tested, read_suspicions
        not_tested = read_not_tested(con)
        suspicions = read_suspicions(con)
    finally:
        con.close()
    from report.text import SATURATION_TITLE, frame_text, levels_text, render_text, suspects_text
    empty = f"(none: {UNANALYSED})" if not_analysed else "(none)"
    from report.base import with_track_record
    sections = [(SATURATION_TITLE, levels_text(with_track_record(frames["levels"], frames.get("backtest")))
                 if len(frames["levels"]) else empty),
                ("Contamination suspects (a suspicion, never a verdict)", suspects_text(frames["suspects"], suspicions)),
                ("Not tested for contamination (with the reason)",
                 frame_text(not_tested[["signal", "benchmark", "model", "reason"]], wrap=("reason",))
                 if len(not_tested) else "(none)"),
                ("Alerts firing (a table's level is a state, in the table above; a level change notifies)",
                 frame_text(_events_firing(frames["firing"])))]
    if len(frames["disagreements"]):
        from report.disagreements import TITLE, disagreements_text, of_frames
        sections.append((TITLE, disagreements_text(of_frames(frames))))
    notes = _level_notes(frames["levels"]) if len(frames["levels"]) else []
    return _emit(render_text(sections, now, notes), args.out)


def _level_notes(levels: pd.DataFrame) -> list[str]:
    """One line per benchmark whose S lies in another bin than its level: why, in words."""
    from alerts.text import level_note
    if "level" not in levels.columns:
        return []
    out = []
    for r in levels.to_dict("records"):
        pending = r.get("pending_bin") if isinstance(r.get("pending_bin"), str) else None
        since = r.get("pending_since")
        note = level_note(r.get("s_index"), r.get("bin"), r.get("level") if isinstance(r.get("level"), str) else None,
                          pending, None if since is None or since != since else since)
        if note:
            out.append(f"  {r.get('name')} [{r.get('scope')}]: {note}")
    return out


def _events_firing(firing: pd.DataFrame) -> pd.DataFrame:
    """Firing alerts other than the kinds that are states (a benchmark's level, shown as a level)."""
    if not len(firing) or "kind" not in firing.columns:
        return firing
    from alerts import rules
    states = [name for name, kind in rules.kinds().items() if kind.state_line is not None]
    return firing[~firing["kind"].isin(states)].reset_index(drop=True)


def _emit(text: str, out: str | None) -> int:
    """Print, or write to `out` (UTF-8, replaced atomically so a served file is never half written)."""
    if out is None:
        print(text)
        return 0
    refusal = out_refusal(out)      # checked again: the path may have changed during the report
    if refusal is None:
        try:
            _write_new_then_replace(Path(out), text)
        except OSError as exc:
            refusal = f"cannot write {out}: {exc.strerror or exc}"
    if refusal:
        print(f"benchwatch: {refusal}", file=sys.stderr)
        return 1
    print(f"benchwatch: report written to {out}", file=sys.stderr)
    return 0


def _write_new_then_replace(path: Path, text: str) -> None:
    """Write a new temporary file beside `path` (created exclusively: never through a link left at
    its name) and rename it over `path`; the temporary file is removed when anything fails."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        try:       # the mode of the file it replaces, else readable as a served page (mkstemp: 0600)
            os.fchmod(fd, os.stat(path).st_mode & 0o7777)
        except FileNotFoundError:
            os.fchmod(fd, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise

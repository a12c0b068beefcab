"""`benchwatch report`: what the database says now, for a person (text) or a page (HTML)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING
import os
import sys
from datetime import datetime, timezone
from pathlib import Path

if TYPE_CHECKING:
    import pandas as pd

from cli.main import add_db_argument, open_read_only
from storage.db import DEFAULT_WAIT_SECONDS

LEVEL_COLUMNS = {"name": "table", "scope": "scope", "population": "population", "level": "level",
                 "S": "S_index", "bin": "bin of S",
                 "hold": "P(bin holds)", "scale": "scale", "n": "n",
                 "models": "models", "trend": "frontier trend (per month, 95% CI, to last result)",
                 "forecast": "forecast", "uncertainty": "uncertainty", "top": "top models"}


SATURATION_TITLE = ("Saturation (S_index, k=5, α=0.5; level = the bin committed after hysteresis, bin of S = "
                    "the bin of this S alone; P(bin holds) = share of re-evaluations at the real "
                    "sampling noise of n items whose S keeps the bin; ranked within the paper's scale, rows on "
                    "another scale last)")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="saturation levels, trends, contamination suspects and firing alerts",
                       description="Summarize what the database says now: saturation level of every benchmark "
                                   "(with the probability that its bin holds under re-evaluation noise, its scale, trend and forecast), contamination-suspect flags with "
                                   "their effect and q-value, and firing alerts. Read-only.")
    p.add_argument("--format", choices=("text", "html"), default="text",
                   help="text for the terminal, html for a self-contained page with charts, a table of contents "
                        "and #bench-<id> anchors (default: text)")
    p.add_argument("--out", metavar="FILE", default=None,
                   help="write the report to FILE instead of stdout (html: one self-contained page with charts)")
    p.add_argument("--wait", type=float, default=DEFAULT_WAIT_SECONDS, metavar="SECONDS",
                   help="how long to wait while another process writes")
    add_db_argument(p)
    p.set_defaults(func=run)


def _levels_table(levels: pd.DataFrame) -> pd.DataFrame:
    import pandas as pd

    from jobs.report_html import trend_text

    def trend(r) -> str:
        return trend_text(r.trend_status, r.slope_per_month, r.slope_ci_low, r.slope_ci_high, r.stalled,
                          r.trend_end, r.stale_days)

    def forecast(r) -> str:
        if isinstance(r.forecast_date, pd.Timestamp) and not pd.isna(r.forecast_date):
            return f"{r.forecast_status} {r.forecast_date:%Y-%m}"
        return r.forecast_status or ""

    return pd.DataFrame({
        "name": levels["name"], "scope": levels["scope"],
        "population": levels["population"] if "population" in levels.columns else "models",
        "level": levels["level"].where(levels["level"].notna(), levels["bin"]) if "level" in levels.columns
        else levels["bin"],
        "S": levels["s_index"].map(lambda s: f"{s:.3f}"),
        "bin": levels["bin"] + levels["stagnation"].map(lambda v: " (stagnation)" if v is True else ""),
        "hold": levels["bin_hold_prob"].map(lambda p: "n/a" if pd.isna(p) else f"{p:.2f}"),
        "scale": [("paper" if c is True else f"not comparable: {sc}") if isinstance(sc, str) else ""
                  for c, sc in zip(levels["comparable"], levels["scale"])],
        "n": levels["n_items"].map(lambda v: "" if pd.isna(v) else f"{int(v)}"),
        "models": levels["n_models"],
        "trend": [trend(r) for r in levels.itertuples()],
        "forecast": [forecast(r) for r in levels.itertuples()],
        "uncertainty": levels["uncertainty"],
        "top": [_top(m) for m in (levels["top_models"] if "top_models" in levels.columns else [None] * len(levels))],
    }).rename(columns=LEVEL_COLUMNS)


def _top(models) -> str:
    """The first three of the top-k entities, for a glance ('a, b, c, …')."""
    if models is None or (not isinstance(models, (list, tuple)) and not hasattr(models, "__len__")):
        return ""
    names = [str(m) for m in list(models)]
    return ", ".join(names[:3]) + (", …" if len(names) > 3 else "")


def _suspects_table(suspects: pd.DataFrame, suspicions: pd.DataFrame | None = None) -> pd.DataFrame:
    """The flagged tests with their suspicion state (pending / confirmed, since when; the q of the
    newest analysis, which may move while the test's data, p and effect stay)."""
    import pandas as pd

    state: dict[tuple, str] = {}
    if suspicions is not None and len(suspicions):
        for r in suspicions.itertuples():
            state[(r.model, r.benchmark, r.signal, r.source, r.detail)] = (
                f"{r.state} since {pd.Timestamp(r.first_flagged_at):%Y-%m-%d}, {r.distinct_data} data version(s)")
    keys = zip(suspects["model"], suspects["benchmark"], suspects["signal"],
               suspects["source"] if "source" in suspects.columns else [""] * len(suspects),
               suspects["detail"] if "detail" in suspects.columns else [""] * len(suspects))
    return pd.DataFrame({
        "model": suspects["model"], "benchmark": suspects["benchmark"], "signal": suspects["signal"],
        "effect": [f"{e * 100:+.1f} pp" + ("" if pd.isna(se) else f" ± {se * 100:.1f}")
                   for e, se in zip(suspects["effect"], suspects["se"])],
        "p": suspects["p_value"].map(lambda p: f"{p:.2g}") if "p_value" in suspects.columns else "",
        "q": suspects["q_value"].map(lambda q: f"{q:.2g}"), "status": suspects["status"],
        "suspicion": [state.get(tuple("" if v is None else v for v in k), "") for k in keys],
    })


def out_refusal(out: str) -> str | None:
    """Why `--out` may not be written (None when it may): the report replaces only a regular file or
    creates a new one in an existing folder; a symlink, device, FIFO or folder at the path, or a
    missing folder, is refused rather than replaced or created."""
    import stat
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


def run(args: argparse.Namespace) -> int:
    import pandas as pd

    from storage.report import read_report

    if args.out is not None:
        refusal = out_refusal(args.out)
        if refusal:
            print(f"benchwatch: {refusal}", file=sys.stderr)
            return 1
    con = open_read_only(args)
    if con is None:
        return 1
    now = datetime.now(timezone.utc)
    try:
        if args.format == "html":   # charts and sections: jobs/report_html.py (imported only here)
            from jobs.report_html import render_report
            from storage.report import read_html_report
            return _emit(render_report(read_html_report(con), now=now), args.out)
        frames = read_report(con)
        from storage.contamination import read_not_tested, read_suspicions
        not_tested = read_not_tested(con)
        suspicions = read_suspicions(con)
    finally:
        con.close()
    levels = _levels_table(frames["levels"]) if len(frames["levels"]) else pd.DataFrame()
    suspects = _suspects_table(frames["suspects"], suspicions) if len(frames["suspects"]) else pd.DataFrame()
    firing = _events_firing(frames["firing"])
    skipped = not_tested[["signal", "benchmark", "model", "reason"]] if len(not_tested) else pd.DataFrame()
    sections = [(SATURATION_TITLE, levels),
                ("Contamination suspects (a suspicion, never a verdict)", suspects),
                ("Not tested for contamination (with the reason)", skipped),
                ("Alerts firing (a table's level is a state, in the table above; a level change notifies)",
                 firing)]
    text = _text(sections, now)
    notes = _level_notes(frames["levels"]) if len(frames["levels"]) else []
    if notes:
        text = text.replace("\n\nContamination suspects", "\n" + "\n".join(notes) + "\n\nContamination suspects", 1)
    return _emit(text, args.out)


def _level_notes(levels: pd.DataFrame) -> list[str]:
    """One line per benchmark whose S lies in another bin than its level: why, in words."""
    from alerts.text import level_note
    from analysis.constants import HYSTERESIS_PENDING
    if "level" not in levels.columns:
        return []
    out = []
    for r in levels.to_dict("records"):
        pending = r.get("pending_bin") if isinstance(r.get("pending_bin"), str) else None
        count = r.get("pending_count")
        note = level_note(r.get("s_index"), r.get("bin"), r.get("level") if isinstance(r.get("level"), str) else None,
                          pending, None if count is None or count != count else int(count), HYSTERESIS_PENDING)
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
    import tempfile
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


def _text(sections, now: datetime) -> str:
    import pandas as pd

    out = [f"benchwatch report, {now:%Y-%m-%d %H:%M} UTC"]
    with pd.option_context("display.width", 220, "display.max_rows", 1000, "display.max_colwidth", 50):
        for title, frame in sections:
            out += ["", title, "-" * len(title), frame.to_string(index=False) if len(frame) else "(none)"]
    return "\n".join(out)

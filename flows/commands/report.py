"""`benchwatch report`: what the database says now, for a person (text) or a page (HTML)."""

from __future__ import annotations

import argparse
import html
from datetime import datetime, timezone

import pandas as pd

from flows.cli import add_db_argument, open_read_only
from storage.db import DEFAULT_WAIT_SECONDS
from storage.report import read_report

LEVEL_COLUMNS = {"name": "benchmark", "scope": "scope", "population": "population", "S": "S_index", "bin": "bin",
                 "hold": "P(bin holds)", "scale": "scale", "n": "n",
                 "models": "models", "trend": "frontier trend (per month, 95% CI, to last result)",
                 "forecast": "forecast", "uncertainty": "uncertainty", "top": "top models"}


SATURATION_TITLE = ("Saturation (S_index, k=5, α=0.5; P(bin holds) = share of re-evaluations at the real "
                    "sampling noise of n items whose S keeps the bin; ranked within the paper's scale, rows on "
                    "another scale last)")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="saturation levels, trends, contamination suspects and firing alerts",
                       description="Summarize what the database says now: saturation level of every benchmark "
                                   "(with the probability that its bin holds under re-evaluation noise, its scale, trend and forecast), contamination-suspect flags with "
                                   "their effect and q-value, and firing alerts. Read-only.")
    p.add_argument("--format", choices=("text", "html"), default="text",
                   help="text for the terminal, html for a self-contained page (default: text)")
    p.add_argument("--wait", type=float, default=DEFAULT_WAIT_SECONDS, metavar="SECONDS",
                   help="how long to wait while another process writes")
    add_db_argument(p)
    p.set_defaults(func=run)


def trend_text(status, slope, low, high, stalled, end, stale_days) -> str:
    """A trend as a person reads it: slope [95% CI] up to its end date, how stale, or why there is none.

    Never "+0.00 [+0.00, +0.00]": a window without data says so, a flat window says "no record",
    and a slope without a CI is marked as such.
    """
    if status is None or (not isinstance(status, str) and pd.isna(status)):
        return ""
    if status == "no_data_in_window":
        text = "no data in window"
    elif status == "no_record_in_window":
        text = "flat (no record in window)"
    elif pd.isna(low) or pd.isna(high):
        text = f"{slope:+.2f} (too few points for a CI)"
    else:
        text = f"{slope:+.2f} [{low:+.2f}, {high:+.2f}]"
    if stalled is True:
        text += " stalled"
    if isinstance(end, pd.Timestamp) and not pd.isna(end):
        text += f" to {end:%Y-%m-%d}"
        if not pd.isna(stale_days) and stale_days > 0:
            text += f" ({int(stale_days)} d stale)"
    return text


def _levels_table(levels: pd.DataFrame) -> pd.DataFrame:
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


def _suspects_table(suspects: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({
        "model": suspects["model"], "benchmark": suspects["benchmark"], "signal": suspects["signal"],
        "effect": [f"{e * 100:+.1f} pp" + ("" if pd.isna(se) else f" ± {se * 100:.1f}")
                   for e, se in zip(suspects["effect"], suspects["se"])],
        "q": suspects["q_value"].map(lambda q: f"{q:.2g}"), "status": suspects["status"],
    })


def run(args: argparse.Namespace) -> int:
    con = open_read_only(args)
    if con is None:
        return 1
    try:
        frames = read_report(con)
    finally:
        con.close()
    now = datetime.now(timezone.utc)
    levels = _levels_table(frames["levels"]) if len(frames["levels"]) else pd.DataFrame()
    suspects = _suspects_table(frames["suspects"]) if len(frames["suspects"]) else pd.DataFrame()
    firing = frames["firing"]
    sections = [(SATURATION_TITLE, levels),
                ("Contamination suspects (a suspicion, never a verdict)", suspects),
                ("Firing alerts", firing)]
    print(_html(sections, now) if args.format == "html" else _text(sections, now))
    return 0


def _text(sections, now: datetime) -> str:
    out = [f"benchwatch report, {now:%Y-%m-%d %H:%M} UTC"]
    with pd.option_context("display.width", 220, "display.max_rows", 1000, "display.max_colwidth", 50):
        for title, frame in sections:
            out += ["", title, "-" * len(title), frame.to_string(index=False) if len(frame) else "(none)"]
    return "\n".join(out)


def _html(sections, now: datetime) -> str:
    """A self-contained page; every cell is escaped (names come from scraped pages)."""
    def table(frame: pd.DataFrame) -> str:
        if not len(frame):
            return "<p>(none)</p>"
        head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
        rows = "".join("<tr>" + "".join(f"<td>{html.escape('' if pd.isna(v) else str(v))}</td>" for v in row) + "</tr>"
                       for row in frame.itertuples(index=False))
        return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"

    body = "".join(f"<h2>{html.escape(title)}</h2>{table(frame)}" for title, frame in sections)
    return ("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>benchwatch report</title>"
            "<style>body{font-family:sans-serif}table{border-collapse:collapse}td,th{border:1px solid #ccc;"
            "padding:2px 6px;font-size:13px}</style></head><body>"
            f"<h1>benchwatch report</h1><p>{now:%Y-%m-%d %H:%M} UTC</p>{body}</body></html>")

"""The HTML report: one self-contained page (inline CSS and SVG, no script, no external fetch).

`render_report(frames, now=...)` takes the plain DataFrames of `storage.report.read_html_report`
and returns the page; it does no I/O and reads no clock. It lives in `jobs/` beside the job that
publishes it because it is presentation for people (like `alerts/render.py` is for Slack), not
statistics: it computes nothing that drives an alert, only formats and draws the numbers the
analysis stored, with the labels and parameters they were stored with.

The page leads with the headline: the overview as a chart (every indexed table a dot on S,
grouped by area), then the benchmarks whose level changed or whose S sits near a bin edge, then
every other benchmark folded by family; the contents list only what has an index or a change.
The parts: `report_overview` (headline, overview chart/table, Prefect artifact rows),
`report_sections` and `report_charts` (a benchmark's section and charts), `report_items`
(item-level view and the time-window control), `report_common` (formats, palette).

Tolerant of optional columns: the renderer shows a column when the frame has it and leaves it
out otherwise (OPTIONAL_LEVEL_COLUMNS). Every string that came from a scraped page (model and
benchmark names, sources, errors) is HTML-escaped, in tables and in SVG text and tooltips alike;
anchors derived from benchmark ids are slugs of [a-z0-9_-] only (`#bench-<slug>`), unique on the page.

Anchored links (`report.html#bench-<id>`) work in headless Chromium's `--screenshot`, which paints
a blank page when the document itself is scrolled to a fragment: the page scrolls inside `main`
(a scroll container filling the viewport) instead, and prints whole (`@media print`). `main` takes
the focus on load (`autofocus`), so the keyboard scrolls it as it would scroll a page; nothing
absolutely positioned may escape it (the window control's radios sit in a positioned box), or
the document would scroll again.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Mapping

import pandas as pd

from alerts import rules
from analysis.constants import SATURATION_ALPHA, SATURATION_BIN_EDGES, SATURATION_BINS, SATURATION_K
from common.jsonsafe import is_null as _missing
from report.base import (OPTIONAL_LEVEL_COLUMNS, as_int, clip, date, default_params, esc, evidence, frame,
                                g2, names, naive, pp, slugs, table, trend_text)
from report.backtest import backtest_section, live_forecast_text
from report.base import with_track_record
from report.items import WINDOW_CSS, post_cutoff
from report.disagreements import disagreements_html, of_frames
from registry.tables import source_name
from report.overview import headline, now_block, overview_chart, overview_markdown, overview_rows, overview_table
from report.sections import benchmark_sections, toc_entries

__all__ = ["render_report", "overview_rows", "overview_markdown", "trend_text", "slugs", "write_atomic",
           "OPTIONAL_LEVEL_COLUMNS"]


def write_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` through a temporary file in the same folder, then rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


# --- suspects, alerts, sources ----------------------------------------------------------------------

def _suspects(signals: pd.DataFrame) -> str:
    if not len(signals) or "status" not in signals:
        return '<p class="none">No contamination run yet.</p>'
    s = signals[signals["status"] != "not_flagged"]
    rows = []
    for r in s.to_dict("records"):
        ev = evidence(r.get("evidence"))
        what = {"A1": "above what its other benchmarks predict", "A2": "jump beyond its reference benchmarks",
                "A3": "accuracy drops after its cutoff more than references"}.get(str(r.get("signal")), "")
        ci = (f"[{pp(r.get('ci_low'))}, {pp(r.get('ci_high'))}]"
              if not (_missing(r.get("ci_low")) or _missing(r.get("ci_high"))) else "")
        facts = ", ".join(f"{k} {ev[k]}" for k in ("n_pre", "n_post", "n_reference_models", "n_items", "link", "method")
                             if k in ev and not _missing(ev[k]))
        corroborated = names(ev.get("corroborated_by"))
        if corroborated:
            facts += "; corroborated by " + ", ".join(str(c) for c in corroborated)
        rows.append([esc(r["model"]), esc(r["benchmark"]), esc(source_name(r.get("source"))),
                     esc(r.get("signal")) + (f" ({esc(r['detail'])})" if not _missing(r.get("detail")) and r.get("detail") else ""), esc(what),
                     pp(r.get("effect")) + (f" ± {pp(r.get('se'), False)}" if not _missing(r.get("se")) else ""),
                     ci, esc(g2(r.get("p_value"))), esc(g2(r.get("q_value"))), esc(r.get("status")), esc(facts)])
    n_tests = len(signals)
    intro = (f"<p>{len(s)} of {n_tests} tests of the newest run are flagged (Benjamini–Hochberg q over every test "
             "of the run). A flag is a <b>suspicion</b> that needs a look, never a finding that a model was trained "
             "on the benchmark.</p>")
    return intro + table(["model", "benchmark", "source", "signal", "what it means", "effect ± SE", "95% CI", "p", "q",
                           "status", "evidence"], rows, wrap=("what it means", "evidence"))


def _source_health(sources: pd.DataFrame, now: pd.Timestamp) -> str:
    if not len(sources):
        return '<p class="none">No fetches or snapshots yet.</p>'
    rows = []
    for r in sources.to_dict("records"):
        last = naive(r.get("last_success_at"))
        age = "" if last is None else f" ({max((now - last) / pd.Timedelta(days=1), 0):.0f} d ago)"
        failing = int(r.get("consecutive_failures") or 0) if not _missing(r.get("consecutive_failures")) else 0
        rows.append([esc(source_name(r["source"])), (date(last) + age) if last is not None else "never",
                     f'<span class="{"bad" if failing else ""}">{failing}</span>',
                     esc(f"{as_int(r.get('failed_fetches'))} of {as_int(r.get('fetches'))}"),
                     esc(as_int(r.get("snapshots"))), date(r.get("newest_observed_at")),
                     esc(f"{as_int(r.get('rows_scores'))} scores" + (f", {as_int(r.get('rows_items'))} items"
                                                                 if (r.get("rows_items") or 0) else "")),
                     esc(f"{as_int(r.get('rejects_latest'))} / {as_int(r.get('rejects_total'))}"),
                     esc(clip(r.get("last_error"), 160))])
    return table(["source", "last success", "failed runs in a row", "failed fetches", "snapshots",
                   "newest observation", "rows (newest snapshot)", "rejects (newest / all)", "last error"], rows,
                  wrap=("last error",))


def _firing(firing: pd.DataFrame) -> str:
    if len(firing) and "kind" in firing.columns:   # a benchmark's level is a state, shown in the overview
        states = [name for name, kind in rules.kinds().items() if kind.state_line is not None]
        firing = firing[~firing["kind"].isin(states)]
    if not len(firing):
        return '<p class="none">(none)</p>'
    cols = [c for c in ("kind", "benchmark", "model", "source", "scope", "level", "since", "muted_by") if c in firing]
    rows = [[date(r[c]) if c == "since" else esc(r[c]) for c in cols] for r in firing.to_dict("records")]
    return table(cols, rows, wrap=("muted_by",))



CSS = """
html,body{height:100%;margin:0}
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;color:#222;background:#fafafa}
main{height:100%;overflow-y:auto;box-sizing:border-box;padding:16px 24px}main:focus{outline:none}
main>*{max-width:1500px;margin-left:auto;margin-right:auto}
@media print{html,body,main{height:auto;overflow:visible}}
h1{margin:8px auto 2px}h2{margin-top:36px;border-bottom:2px solid #ddd;padding-bottom:4px}
h3{margin:22px 0 4px}h4{margin:12px 0 4px}
table{border-collapse:collapse;background:#fff;margin:6px 0;font-size:13px}
td,th{border:1px solid #ddd;padding:3px 7px;text-align:left;vertical-align:top;white-space:nowrap}
td.wrap{white-space:normal;min-width:140px}
th{background:#f0f0f0;white-space:normal;min-width:48px}
.scroll{overflow-x:auto;max-width:100%}
table.overview td:nth-child(4){font-variant-numeric:tabular-nums;font-weight:600}
.bin{padding:1px 7px;border-radius:9px;font-size:12px;white-space:nowrap;color:#222;border:1px solid #b9a27a}
.none,.note,.facts{color:#555}.note{font-size:12px;max-width:1000px}
.why{font-weight:600;color:#7a3b00;margin:2px 0}
.src{font-weight:normal;color:#777;font-size:13px}
.charts,.strips{display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start}
svg.chart,svg.strip{background:#fff;border:1px solid #e3e3e3;max-width:100%;height:auto}
svg .frame{fill:none;stroke:#bbb}svg .grid{stroke:#eee}svg .axis{stroke:#999}
svg .tick,svg .band,svg .legend{font:11px system-ui,sans-serif;fill:#555}
svg .mark,svg .lbl{font:11px system-ui,sans-serif}
svg .area{font:bold 12px system-ui,sans-serif;fill:#222}svg .rl{font:11px system-ui,sans-serif;fill:#0b4f8a}
svg a:hover .rl{text-decoration:underline}
section.bench{border-top:1px solid #e5e5e5}
a.anchor{color:#999;text-decoration:none;font-weight:normal}
nav{background:#fff;border:1px solid #e3e3e3;padding:6px 14px;margin:12px auto;font-size:13px}
nav>a{display:inline-block;margin-right:14px}nav>b{margin-right:10px}
nav details.toc{columns:4 220px}nav details.toc a{display:block}nav details.toc b{display:block;break-after:avoid;margin-top:6px}
nav details.toc>summary{cursor:pointer;font-weight:600;margin:4px 0}
#now ol,#now ul{margin:4px 0 8px;padding-left:22px}#now li{margin:2px 0}
@media (max-width:700px){
 main{padding:8px 10px}
 .charts,.strips{display:block;overflow-x:auto}
 svg.chart,svg.strip{max-width:none;display:block;margin-bottom:10px}
 td,th{white-space:normal}td.wrap{min-width:0}
 nav details.toc{columns:1}
}
.bad{color:#b00;font-weight:600}
details{margin:6px 0}details.family>summary{font-weight:600;cursor:pointer;padding:4px 0}
.win{position:relative;background:#fff;border:1px solid #e3e3e3;padding:6px 10px;margin:8px 0}
.wintitle{margin:0 0 4px;font-weight:600}
.win>input{position:absolute;opacity:0;width:1px;height:1px}
.win>label{display:inline-block;padding:2px 9px;margin:2px;border:1px solid #999;border-radius:4px;cursor:pointer;
 font-size:12px;background:#f4f4f4}
.win>input:checked+label{background:#0072B2;color:#fff;border-color:#0072B2}
.win>input:focus-visible+label{outline:2px solid #000;outline-offset:1px}
.win .pane{display:none}
""" + WINDOW_CSS


def render_report(frames: Mapping[str, pd.DataFrame], *, now: datetime, title: str = "benchwatch report") -> str:
    """The whole page from `storage.report.read_html_report`'s frames, as of `now`."""
    now_ts = naive(now if now.tzinfo else now.replace(tzinfo=timezone.utc))
    assert now_ts is not None
    levels = default_params(frame(frames, "levels"))
    history = default_params(frame(frames, "history"))
    trends = frame(frames, "trends")
    if "k" in trends.columns and (trends["k"] == SATURATION_K).any():
        trends = trends[trends["k"] == SATURATION_K]
    frontier, signals = frame(frames, "frontier"), frame(frames, "signals")
    changes = default_params(frame(frames, "level_changes"))
    anchors = slugs(sorted(levels["benchmark"].unique())) if len(levels) else {}
    lead_why = headline(levels, changes, now_ts) if len(levels) else {}

    n_flagged = int((signals["status"] != "not_flagged").sum()) if len(signals) and "status" in signals else 0
    toc_bench = "".join(f"<b>{esc(group)}</b>" + "".join(f'<a href="#bench-{anchors[b]}">{esc(n)}</a>' for b, n in items)
                        for group, items in toc_entries(levels, lead_why, frame(frames, "tables")))
    n_toc = sum(len(items) for _, items in toc_entries(levels, lead_why, frame(frames, "tables")))
    nav = ('<nav><b>Contents</b><a href="#now">Saturated now</a><a href="#overview">Overview</a>'
           f'<a href="#headline">Changed or near a bin edge ({len(lead_why)})</a>'
           '<a href="#benchmarks">Other benchmarks, by family</a><a href="#forecast-record">Forecast track record</a>'
           '<a href="#post-cutoff">Post-cutoff view</a>'
           f'<a href="#suspects">Contamination suspects ({n_flagged})</a><a href="#alerts">Firing alerts</a>'
           '<a href="#sources">Source health</a><a href="#disagreements">When sources disagree</a>'
           f'<details class="toc"><summary>Every benchmark with an index or a change ({n_toc})</summary>'
           f'{toc_bench}</details></nav>')
    trends = with_track_record(trends, frame(frames, "backtest"))   # each forecast line carries its kind's record
    trends["live_forecast"] = [live_forecast_text(t, frame(frames, "backtest")) for t in trends.to_dict("records")]
    lead, rest = benchmark_sections(levels, history, frontier, trends, anchors, now_ts, frame(frames, "tables"),
                                    lead_why)
    bins = ", ".join(f"{b}" for b in SATURATION_BINS)
    body = (
        f"<h1>{esc(title)}</h1><p class=\"note\">Generated {now_ts:%Y-%m-%d %H:%M} UTC. Saturation index S "
        f"(Akhtar, Reuel et al. 2026) with k={SATURATION_K}, α={SATURATION_ALPHA} (n_eff = n^α); bins {esc(bins)} "
        f"at edges {esc(', '.join(str(e) for e in SATURATION_BIN_EDGES))}. Every number is the stored analysis; "
        "the uncertainty column says which noise model produced it. Accuracies are in %, differences of "
        "accuracies in pp (percentage points).</p>" + now_block(levels, changes, anchors, now_ts)
        + '<h2 id="overview">Overview</h2>' + overview_chart(levels, anchors) + nav
        + "<details><summary>The overview as a table (every row, its parameters and trend)</summary>"
        + overview_table(levels, trends, anchors, now_ts) + "</details>"
        + '<h2 id="headline">Changed or near a bin edge</h2>' + lead
        + '<h2 id="benchmarks">Other benchmarks, by family</h2>' + rest
        + '<h2 id="forecast-record">Forecast track record</h2>' + backtest_section(frame(frames, "backtest"))
        + '<h2 id="post-cutoff">Post-cutoff view</h2>'
        + post_cutoff(frame(frames, "item_months"), frame(frames, "cutoffs"), signals, frame(frames, "post_cutoff"),
                      frame(frames, "item_windows"))
        + '<h2 id="suspects">Contamination suspects</h2>' + _suspects(signals)
        + '<h2 id="alerts">Firing alerts</h2>' + _firing(frame(frames, "firing"))
        + '<h2 id="sources">Source health</h2>' + _source_health(frame(frames, "sources"), now_ts)
        + '<h2 id="disagreements">When sources disagree</h2>' + disagreements_html(of_frames(frames)))
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
            "img-src data:\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{esc(title)}</title>"
            f"<style>{CSS}</style></head><body><main tabindex=\"-1\" autofocus>{body}</main></body></html>")

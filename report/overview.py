"""The report's headline: every indexed table as a dot on S (grouped by area), what changed or sits
near a bin edge, and the overview as a table, as JSON rows and as markdown (Prefect artifacts).

Presentation only: the dot is the stored S, its colour the stored bin, its bar the stored bin
probabilities (the bins that hold 95 % of re-evaluations at the real noise), nothing recomputed.
"""

from __future__ import annotations

import html
from datetime import datetime
from typing import Any, Mapping

import pandas as pd

from common.jsonsafe import is_null as _missing
from report.base import (BUNCHED_LABEL, BIN_COLORS, OPTIONAL_LEVEL_COLUMNS, bin_badge, default_params, esc, frame, level_of,
                                is_stale, names, naive, num, STALE_AFTER_DAYS, staleness_days, table, table_name, tabled,
                                top_names, trend_cell)
from alerts.rules.saturation_bin_changed import p_level_holds
from analysis.constants import SATURATION_ALPHA, SATURATION_BIN_EDGES, SATURATION_BINS, SATURATION_K, SATURATED_BINS
from registry.tables import source_name

# A change of committed level this recent (days before the report) puts a benchmark in the headline.
CHANGED_WITHIN_DAYS = 30
# Saturated tables named by the page's opening lines before "and N more" (each a link to its section).
NOW_SHOWN = 10
# Recent level changes named by the opening lines, newest first.
CHANGES_SHOWN = 8
# S sits near a bin edge relative to its noise when a re-evaluation keeps its bin less often than
# this (stored P(bin holds)); without that probability, when S is this close to an edge.
NEAR_EDGE_HOLD_PROB = 0.4
NEAR_EDGE_DISTANCE = 0.02
# The share of re-evaluations the overview's bar spans (central, over the stored bin probabilities).
BIN_RANGE_MASS = 0.95
# Model names shown in an overview cell before "+N more".
TOP_MODELS_SHOWN = 5
# Overview strip charts: pixels per row, label column width, characters of a label before "…".
ROW_PX, LABEL_PX, LABEL_CHARS, STRIP_WIDTH = 15, 330, 54, 600


def bin_range(probs: Any) -> tuple[float, float] | None:
    """(low edge, high edge) of the bins that hold the central BIN_RANGE_MASS of the stored bin
    probabilities; None without them."""
    p = names(probs)
    if len(p) != len(SATURATION_BINS):
        return None
    vals = [float(x) for x in p]
    edges = (0.0, *SATURATION_BIN_EDGES, 1.0)
    tail = (1.0 - BIN_RANGE_MASS) / 2
    cum, lo, hi = 0.0, None, None
    for i, v in enumerate(vals):
        if lo is None and cum + v > tail:
            lo = i
        cum += v
        if hi is None and cum >= 1.0 - tail:
            hi = i
    if lo is None or hi is None:
        return None
    return edges[lo], edges[hi + 1]


def _indexed_rows(levels: pd.DataFrame) -> pd.DataFrame:
    """One row per (table, population) with an index at scope all, its post-cutoff S beside."""
    lv = tabled(levels)
    if not len(lv) or "s_index" not in lv.columns:
        return pd.DataFrame()
    pop = lv["population"] if "population" in lv.columns else pd.Series("models", index=lv.index)
    lv = lv.assign(_pop=pop.fillna("models"))
    main = lv[(lv["scope"] == "all") & lv["s_index"].notna()].copy()
    post = lv[(lv["scope"] == "post_cutoff") & lv["s_index"].notna()]
    post_s = {(r["table_id"], r["_pop"]): float(r["s_index"]) for r in post.to_dict("records")}
    main["post_s"] = [post_s.get((t, p)) for t, p in zip(main["table_id"], main["_pop"])]
    return main


def headline(levels: pd.DataFrame, changes: pd.DataFrame, now: pd.Timestamp) -> dict[str, str]:
    """Benchmark -> why it leads the page: a level that changed within CHANGED_WITHIN_DAYS, a move
    awaiting confirmation, or S near a bin edge (P(bin holds) below NEAR_EDGE_HOLD_PROB)."""
    out: dict[str, str] = {}
    if len(changes):
        recent = changes[changes["changed_at"].map(naive) >= now - pd.Timedelta(days=CHANGED_WITHIN_DAYS)]
        for r in recent.to_dict("records"):
            out.setdefault(str(r["benchmark"]), f"level changed {r['from_level']} → {r['to_level']} "
                                                f"on {naive(r['changed_at']):%Y-%m-%d}")
    for r in _indexed_rows(levels).to_dict("records"):
        bench = str(r["benchmark"])
        if bench in out or is_stale(r, now):      # an old board's S is not news: it stays in its family
            continue
        if not _missing(r.get("pending_bin")):
            out[bench] = f"{table_name(r)}: a move to {r['pending_bin']} awaits confirmation"
        elif not _missing(r.get("bin_hold_prob")):
            if float(r["bin_hold_prob"]) < NEAR_EDGE_HOLD_PROB:
                n = "" if _missing(r.get("n_items")) else f", n={int(r['n_items'])}"
                out[bench] = (f"{table_name(r)}: near a bin edge for its noise: P(bin holds) "
                              f"{float(r['bin_hold_prob']):.2f} (S {float(r['s_index']):.3f}{n})")
        elif min(abs(float(r["s_index"]) - e) for e in SATURATION_BIN_EDGES) < NEAR_EDGE_DISTANCE:
            out[bench] = f"{table_name(r)}: near a bin edge (S {float(r['s_index']):.3f})"
    return out


def _age(days: float | None) -> str:
    if days is None:
        return ""
    return "today" if days < 1 else f"{days:.0f} day{'s' if round(days) != 1 else ''} ago"


def now_block(levels: pd.DataFrame, changes: pd.DataFrame, anchors: Mapping[str, str], now: pd.Timestamp) -> str:
    """The page's opening lines, the answer first: the saturated tables observed recently, strongest
    first (by S), each linking to its section; the level changes of the last CHANGED_WITHIN_DAYS,
    newest first; then, demoted, how many saturated tables are stale and how old they are."""
    rows = _indexed_rows(levels)
    if not len(rows):
        return ""
    rows = rows.assign(_level=[level_of(r) for r in rows.to_dict("records")],
                       _age=[staleness_days(r, now) for r in rows.to_dict("records")])
    saturated = rows[rows["_level"].isin(SATURATED_BINS)].sort_values(["s_index", "table_id"], ascending=[False, True])
    stale = saturated[[is_stale(r, now) for r in saturated.to_dict("records")]]
    fresh = saturated.drop(stale.index).drop_duplicates("benchmark")   # one line per benchmark: its strongest table

    def link(r: Mapping[str, Any]) -> str:
        return f'<a href="#bench-{anchors[r["benchmark"]]}">{esc(table_name(r))}</a>'

    items = []
    for r in fresh.head(NOW_SHOWN).to_dict("records"):
        p_hold = p_level_holds(r, str(r["_level"]))
        hold = "" if p_hold is None else f", P(level holds) {p_hold:.2f}"
        pop = "" if r["_pop"] == "models" else f", {esc(r['_pop'])}"
        items.append(f"<li>{link(r)}: S {float(r['s_index']):.2f} · {bin_badge(r['_level'])}{hold}{pop}"
                     f" · observed {_age(r['_age'])}</li>")
    more = len(fresh) - NOW_SHOWN
    out = [f'<section id="now"><h2>Saturated now ({len(fresh)} benchmark{"s" if len(fresh) != 1 else ""})</h2>']
    out.append(f"<ol>{''.join(items)}</ol>" if items else '<p class="none">No recently observed table is saturated.</p>')
    if more > 0:
        out.append(f'<p class="note">and {more} more: <a href="#overview">the overview</a> shows every table.</p>')
    recent = changes[changes["changed_at"].map(naive) >= now - pd.Timedelta(days=CHANGED_WITHIN_DAYS)] \
        if len(changes) and "changed_at" in changes.columns else pd.DataFrame()
    if len(recent):
        recent = recent.assign(_at=recent["changed_at"].map(naive)).sort_values("_at", ascending=False)
        named = {str(r["table_id"]): r for r in rows.to_dict("records")}
        lines = []
        for r in recent.head(CHANGES_SHOWN).to_dict("records"):
            row = named.get(str(r.get("table_id")), {"benchmark": r["benchmark"], "name": r["benchmark"]})
            target = row if str(row.get("benchmark")) in anchors else None
            name = link(target) if target is not None else esc(table_name(row))
            lines.append(f"<li>{r['_at']:%Y-%m-%d}: {name} {esc(r['from_level'] or 'new')} → {esc(r['to_level'])}</li>")
        extra = len(recent) - CHANGES_SHOWN
        out.append(f"<h3>Changed in the last {CHANGED_WITHIN_DAYS} days</h3><ul>{''.join(lines)}</ul>"
                   + (f'<p class="note">and {extra} more below.</p>' if extra > 0 else ""))
    else:
        out.append(f'<p class="note">No level changed in the last {CHANGED_WITHIN_DAYS} days.</p>')
    if len(stale):
        ages = [a for a in stale["_age"] if a is not None]
        sources = sorted({source_name(str(s)) for s in stale.get("source", pd.Series(dtype=str)).dropna()})
        whence = f"; {', '.join(sources)}" if sources else ""
        out.append(f'<p class="note">Not counted above: {len(stale)} saturated table(s) not observed for more than '
                   f"{STALE_AFTER_DAYS} days (up to {max(ages):.0f} days{esc(whence)}): their S "
                   "describes an old board. Each keeps its section below, its age said.</p>")
    return "".join(out) + "</section>"


def _strip(area: str, rows: list[dict], anchors: Mapping[str, str]) -> str:
    """One area's tables as rows of a dot plot over S in [0, 1], bins shaded."""
    top, bottom = 34, 8
    height = top + bottom + ROW_PX * len(rows)
    x0, x1 = LABEL_PX + 8, STRIP_WIDTH - 12

    def px(s: float) -> float:
        return x0 + min(max(s, 0.0), 1.0) * (x1 - x0)

    out = [f'<text x="4" y="14" class="area">{esc(area)} ({len(rows)})</text>']
    edges = (0.0, *SATURATION_BIN_EDGES, 1.0)
    for lo, hi, b in zip(edges, edges[1:], SATURATION_BINS):
        out.append(f'<rect x="{px(lo):.1f}" y="{top - 4}" width="{px(hi) - px(lo):.1f}" '
                   f'height="{ROW_PX * len(rows) + 4}" fill="{BIN_COLORS[b]}" fill-opacity="0.35"><title>{esc(b)}: '
                   f'S {lo} to {hi}</title></rect>')
    for v in (0.0, 0.3, 0.7, 0.9, 1.0):
        out.append(f'<text x="{px(v):.1f}" y="{top - 8}" text-anchor="middle" class="tick">{v:g}</text>')
    for i, r in enumerate(rows):
        y = top + ROW_PX * i + ROW_PX / 2
        name = table_name(r) + ("" if r["_pop"] == "models" else f" ({r['_pop']})")
        short = name if len(name) <= LABEL_CHARS else name[: LABEL_CHARS - 1] + "…"
        s = float(r["s_index"])
        rng = bin_range(r.get("bin_probs"))
        tip = (f"{name}: S {s:.3f}, bin {r.get('bin')}, level {level_of(r)}"
               + (f", P(bin holds) {float(r['bin_hold_prob']):.2f}" if not _missing(r.get("bin_hold_prob")) else "")
               + (f"; 95% of re-evaluations in S {rng[0]:g} to {rng[1]:g}" if rng else "")
               + (f"; post-cutoff S {r['post_s']:.3f}" if not _missing(r.get("post_s")) else ""))
        out.append(f'<a href="#bench-{anchors[r["benchmark"]]}"><text x="4" y="{y + 4:.1f}" class="rl">'
                   f'{esc(short)}<title>{esc(tip)}</title></text></a>')
        if rng:
            out.append(f'<path d="M{px(rng[0]):.1f},{y - 3:.1f}V{y + 3:.1f}M{px(rng[0]):.1f},{y:.1f}H{px(rng[1]):.1f}'
                       f'M{px(rng[1]):.1f},{y - 3:.1f}V{y + 3:.1f}" stroke="#555" stroke-width="1" fill="none"/>')
        if not _missing(r.get("post_s")):
            ps = px(float(r["post_s"]))
            out.append(f'<path d="M{ps:.1f},{y - 4:.1f}L{ps + 4:.1f},{y:.1f}L{ps:.1f},{y + 4:.1f}L{ps - 4:.1f},{y:.1f}Z" '
                       f'fill="#0072B2"><title>{esc(tip)}</title></path>')
        color = BIN_COLORS.get(str(r.get("bin")), "#ccc")
        out.append(f'<circle cx="{px(s):.1f}" cy="{y:.1f}" r="4.5" fill="{color}" stroke="#222" stroke-width="1">'
                   f'<title>{esc(tip)}</title></circle>')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="strip" viewBox="0 0 {STRIP_WIDTH} {height}" '
            f'width="{STRIP_WIDTH}" height="{height}" role="img" aria-label="S of each {esc(area)} table">'
            f"<title>S of each {esc(area)} table</title>{''.join(out)}</svg>")


def overview_chart(levels: pd.DataFrame, anchors: Mapping[str, str]) -> str:
    """Every table with an index as a dot on S, its bin's colour, its bin range, grouped by area."""
    main = _indexed_rows(levels)
    if not len(main):
        return '<p class="none">No saturation index yet: run <code>benchwatch analyze</code>.</p>'
    area = main["area"] if "area" in main.columns else pd.Series(None, index=main.index)
    main = main.assign(_area=area.fillna("other").astype(str).str.replace("_", " "))
    groups = sorted(main.groupby("_area"), key=lambda kv: (-kv[1]["s_index"].median(), kv[0]))
    charts = "".join(_strip(a, g.sort_values(["s_index", "table_id"], ascending=[False, True]).to_dict("records"),
                            anchors) for a, g in groups)
    legend = ('<p class="note">Each row is a leaderboard table with an index (scope all): the dot is S, '
              "coloured by the bin of S; the bar spans the bins that hold "
              f"{BIN_RANGE_MASS:.0%} of re-evaluations at the real sampling noise (stored bin probabilities); "
              "the blue diamond is S on post-cutoff items only. Areas most saturated first (median S); "
              "a row links to its section.</p>")
    return legend + f'<div class="strips">{charts}</div>'


def overview_table(levels: pd.DataFrame, trends: pd.DataFrame, anchors: dict[str, str], now: pd.Timestamp) -> str:
    """The overview as a table (folded under the chart): every row with its parameters."""
    if not len(levels):
        return '<p class="none">No saturation rows yet: run <code>benchwatch analyze</code>.</p>'
    optional = [c for c in OPTIONAL_LEVEL_COLUMNS if c in levels.columns and levels[c].notna().any()]
    headers = ["benchmark", "scope", "level", "S_index"] + [OPTIONAL_LEVEL_COLUMNS[c][0] for c in optional] + [
        "R_norm (SE_Δ)", "n items", "models", "top-k", BUNCHED_LABEL, "days since last obs.",
        "frontier trend", "uncertainty"]
    trend_by = {r["table_id"]: r for r in tabled(trends).to_dict("records")} \
        if len(trends) and "benchmark" in trends else {}
    levels = tabled(levels)
    rows, empty = [], []
    comparable = (levels["comparable"].fillna(False).astype(bool) if "comparable" in levels.columns
                  else pd.Series(True, index=levels.index))
    ordered = levels.assign(_c=comparable, _s=levels["s_index"].fillna(-1.0)).sort_values(
        ["_c", "_s", "benchmark"], ascending=[False, False, True])
    for r in ordered.to_dict("records"):
        link = f'<a href="#bench-{anchors[r["benchmark"]]}">{esc(table_name(r))}</a>'
        if _missing(r.get("s_index")):
            empty.append([link, esc(r.get("scope")), esc(r.get("reason") or "no index")])
            continue
        top = top_names(r)
        if top:
            shown = ", ".join(esc(m) for m in top[:TOP_MODELS_SHOWN])
            top_cell = shown + (f" +{len(top) - TOP_MODELS_SHOWN} more" if len(top) > TOP_MODELS_SHOWN else "")
        else:
            top_cell = " ".join(num(s) for s in names(r.get("top_scores")))
        stale = staleness_days(r, now)
        t = trend_by.get(r["table_id"]) if r.get("scope") == "all" else None
        rows.append([link, esc(r.get("scope")), bin_badge(level_of(r)), num(r.get("s_index"))]
                    + [esc(OPTIONAL_LEVEL_COLUMNS[c][1](r[c])) if not _missing(r.get(c)) else "" for c in optional]
                    + [f"{num(r.get('r_norm'), 2)} ({num(r.get('se_delta'), 3)})",
                       esc("" if _missing(r.get("n_items")) else int(r["n_items"])),
                       esc("" if _missing(r.get("n_models")) else int(r["n_models"])),
                       top_cell, "yes" if r.get("stagnation") is True else "",
                       "" if stale is None else f"{stale:.0f}", trend_cell(t), esc(r.get("uncertainty"))])
    out = table(headers, rows, "overview", wrap=("benchmark", "top-k", "frontier trend"))
    if empty:
        out += (f"<details><summary>{len(empty)} benchmark row(s) without an index</summary>"
                + table(["benchmark", "scope", "why"], empty) + "</details>")
    return out


# --- the overview for Prefect artifacts ------------------------------------------------------------

def overview_rows(frames: Mapping[str, pd.DataFrame], *, now: datetime) -> list[dict]:
    """The overview as JSON-safe rows (a Prefect table artifact): benchmarks with an index, most saturated first."""
    now_ts = naive(now)
    levels = default_params(frame(frames, "levels"))
    if not len(levels):
        return []
    rows = []
    for r in levels[levels["s_index"].notna()].sort_values(["s_index", "benchmark"], ascending=[False, True]).to_dict("records"):
        stale = staleness_days(r, now_ts)
        row = {"benchmark": str(r["benchmark"]), "table": table_name(r),
               "scope": str(r.get("scope")), "level": str(level_of(r)), "bin": str(r.get("bin")),
               "s_index": round(float(r["s_index"]), 3)}
        for c in OPTIONAL_LEVEL_COLUMNS:
            if c in r and not _missing(r[c]):
                v = r[c]
                row[c] = round(float(v), 3) if isinstance(v, float) else (v.item() if hasattr(v, "item") else v)
        row.update({"n_items": None if _missing(r.get("n_items")) else int(r["n_items"]),
                    "top_k": ", ".join(names(r.get("top_models"))) or " ".join(num(s) for s in names(r.get("top_scores"))),
                    "stagnation": bool(r.get("stagnation") is True),
                    "days_since_last_observation": None if stale is None else round(stale),
                    "uncertainty": None if _missing(r.get("uncertainty")) else str(r["uncertainty"])})
        rows.append(row)
    return rows


def _md_cell(text: Any) -> str:
    """Scraped text inside a markdown table cell: inert (no HTML, links, code spans or column breaks)."""
    text = html.escape(" ".join(str(text).split()), quote=False)
    return text.replace("|", "\\|").replace("`", "&#96;").replace("[", "&#91;").replace("*", "\\*").replace("_", "\\_")


def overview_markdown(frames: Mapping[str, pd.DataFrame], *, now: datetime) -> str:
    """The overview as markdown (a Prefect markdown artifact), every scraped string made inert."""
    rows = overview_rows(frames, now=now)
    lines = [f"# benchwatch report, {naive(now):%Y-%m-%d %H:%M} UTC", "",
             f"Saturation index S with k={SATURATION_K}, α={SATURATION_ALPHA}; most saturated first.", ""]
    if not rows:
        return "\n".join(lines + ["No saturation rows yet."])
    lines += [f"| table | scope | level | S | top-k | {BUNCHED_LABEL} | days since last observation | uncertainty |",
              "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {_md_cell(r['table'])} | {_md_cell(r['scope'])} | {_md_cell(r['level'])} | {r['s_index']:.3f} | "
              f"{_md_cell(r['top_k'])} | {'yes' if r['stagnation'] else ''} | "
              f"{'' if r['days_since_last_observation'] is None else r['days_since_last_observation']} | "
              f"{_md_cell(r['uncertainty'] or '')} |" for r in rows]
    signals = frame(frames, "signals")
    if len(signals) and "status" in signals:
        flagged = signals[signals["status"] != "not_flagged"]
        lines += ["", f"Contamination suspects: {len(flagged)} of {len(signals)} tests flagged (a suspicion, never a verdict)."]
    return "\n".join(lines)

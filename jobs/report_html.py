"""The HTML report: one self-contained page (inline CSS and SVG, no script, no external fetch).

`render_report(frames, now=...)` takes the plain DataFrames of `storage.report.read_html_report`
and returns the page; it does no I/O and reads no clock. It lives in `flows/` beside the CLI
command that prints it because it is presentation for people (like `alerts/render.py` is for
Slack), not statistics: it computes nothing that drives an alert, only formats and draws the
numbers the analysis stored, with the labels and parameters they were stored with.

Tolerant of optional columns: the renderer shows a column when the frame has it and leaves it
out otherwise (OPTIONAL_LEVEL_COLUMNS), so columns other branches add to the saturation rows
(`top_models`, `population`, a bin-hold probability, `staleness_days`) appear once the views
carry them.

Every string that came from a scraped page (model and benchmark names, sources, errors) is
HTML-escaped, in tables and in SVG text and tooltips alike; anchors derived from benchmark ids
are slugs of [a-z0-9_-] only (`#bench-<slug>`), made unique on the page.
"""

from __future__ import annotations

import html
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import pandas as pd

from alerts.render import report_anchor
from analysis.constants import SATURATION_ALPHA, SATURATION_BIN_EDGES, SATURATION_BINS, SATURATION_K
from common.jsonsafe import decoded
from common.jsonsafe import is_null as _missing
from jobs.svg import TimeChart

# Display choices (not statistics): how many lines one post-cutoff chart draws, and the fewest
# items a model-month needs to be drawn (a month of 3 problems is noise, not a trend).
POST_CUTOFF_MAX_MODELS = 8
POST_CUTOFF_MIN_ITEMS_PER_MONTH = 10
# Width of a benchmark's two charts (side by side on a 1280-pixel screen).
CHART_WIDTH = 600
# Model names shown in an overview cell before "+N more".
TOP_MODELS_SHOWN = 5
# Which population of a benchmark heads its section (model runs, then agent systems, then systems per model).
POPULATION_ORDER = {"models": 0, "systems": 1, "systems_per_model": 2}

BIN_COLORS = {"very low": "#d9f0d3", "low": "#a6dba0", "moderate": "#fee08b", "high": "#fdae61", "very high": "#e8665a"}
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2")

# Optional saturation columns: column -> (header, formatter). Shown when present and not all empty.
OPTIONAL_LEVEL_COLUMNS: dict[str, tuple[str, Any]] = {
    "population": ("population", str),
    "bin_hold_prob": ("P(bin holds)", lambda v: f"{float(v):.2f}"),
    "scale": ("scale", lambda v: "paper" if v == "paper_binomial" else f"own ({v}): not comparable"),
}


def write_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` through a temporary file in the same folder, then rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


# --- small helpers --------------------------------------------------------------------------------

def esc(value: Any) -> str:
    """Escaped text of a cell; empty for None/NaN."""
    return "" if _missing(value) else html.escape(str(value), quote=True)


def slugs(ids: Iterable[str]) -> dict[str, str]:
    """Benchmark id -> a unique anchor-safe slug ([a-z0-9_-], never empty)."""
    out: dict[str, str] = {}
    used: set[str] = set()
    for bid in ids:
        if bid in out:
            continue
        base = report_anchor(bid).removeprefix("bench-")   # the Slack digest links to the same anchors
        slug, i = base, 2
        while slug in used:
            slug, i = f"{base}-{i}", i + 1
        used.add(slug)
        out[bid] = slug
    return out


def _naive(value: Any) -> pd.Timestamp | None:
    """A naive-UTC Timestamp (aware values converted), None when missing."""
    if _missing(value):
        return None
    ts = pd.Timestamp(value)
    return ts.tz_convert("UTC").tz_localize(None) if ts.tzinfo is not None else ts


def _date(value: Any) -> str:
    ts = _naive(value)
    return "" if ts is None else f"{ts:%Y-%m-%d}"


def _f(value: Any, digits: int = 3) -> str:
    return "" if _missing(value) else f"{float(value):.{digits}f}"


def _pp(value: Any, signed: bool = True) -> str:
    if _missing(value):
        return ""
    return f"{float(value) * 100:+.1f} pp" if signed else f"{float(value) * 100:.1f} pp"


def _names(value: Any) -> list[str]:
    if _missing(value):
        return []
    return [str(v) for v in list(value)]


def _bin_badge(level: Any) -> str:
    if _missing(level):
        return ""
    color = BIN_COLORS.get(str(level), "#ddd")
    return f'<span class="bin" style="background:{color}">{esc(level)}</span>'


def _table(headers: list[str], rows: list[list[str]], cls: str = "", wrap: Iterable[str] = ()) -> str:
    """Rows of already-escaped HTML cells; cells do not wrap except in the `wrap` columns (free text)."""
    if not rows:
        return '<p class="none">(none)</p>'
    wide = {headers.index(h) for h in wrap if h in headers}
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f'<td class="wrap">{c}</td>' if i in wide else f"<td>{c}</td>"
                                    for i, c in enumerate(r)) + "</tr>" for r in rows)
    return f'<div class="scroll"><table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def _frame(frames: Mapping[str, pd.DataFrame], key: str) -> pd.DataFrame:
    df = frames.get(key)
    return df if isinstance(df, pd.DataFrame) else pd.DataFrame()


def _default_params(levels: pd.DataFrame) -> pd.DataFrame:
    """The rows of the default parameters (k, alpha) when the frame has several."""
    if {"k", "alpha"} <= set(levels.columns) and len(levels):
        keep = (levels["k"] == SATURATION_K) & (levels["alpha"] == SATURATION_ALPHA)
        if keep.any():
            return levels[keep]
    return levels


def _tabled(df: pd.DataFrame) -> pd.DataFrame:
    """Frames are per leaderboard table (`table_id`, registry.tables); a frame without one has one
    table per benchmark."""
    if len(df) and "table_id" not in df.columns and "benchmark" in df.columns:
        return df.assign(table_id=df["benchmark"])
    return df


def _version(table_id: Any) -> str:
    """The version part of a table id ('livebench:livebench:2024-11-25' -> '2024-11-25'), '' without one."""
    parts = str(table_id).split(":", 2)
    return parts[2] if len(parts) == 3 else ""


def _bench_tables(bench: str, levels: pd.DataFrame, hist: pd.DataFrame, frontier: pd.DataFrame,
                  tables: pd.DataFrame) -> tuple[str, list[str], list[str]]:
    """(primary table, the releases of its source oldest first, the benchmark's other tables).

    The primary is benchmark_tables' (registry.tables: the owner's leaderboard, the newest
    release of a versioned source), else the level row flagged primary, else the first."""
    seen: list[str] = []
    for df in (tables, levels, hist, frontier):
        if len(df) and "table_id" in df.columns:
            seen += [str(t) for t in df.loc[df["benchmark"] == bench, "table_id"] if str(t) not in seen]
    t = tables[tables["benchmark"] == bench] if len(tables) else tables
    lv = levels[levels["benchmark"] == bench]
    if len(t) and t["is_primary"].fillna(False).astype(bool).any():
        primary = str(t.loc[t["is_primary"].fillna(False).astype(bool), "table_id"].iloc[0])
    elif "is_primary" in lv.columns and lv["is_primary"].fillna(False).astype(bool).any():
        primary = str(lv.loc[lv["is_primary"].fillna(False).astype(bool), "table_id"].iloc[0])
    else:
        primary = seen[0] if seen else bench
    source = primary.split(":")[1] if primary.count(":") >= 1 else None
    family = sorted((x for x in seen if source is not None and x.count(":") >= 1 and x.split(":")[1] == source),
                    key=lambda x: (_version(x), x)) or [primary]
    others = [x for x in seen if x not in family]
    return primary, family, others


# --- sections -------------------------------------------------------------------------------------

def _staleness_days(row: Mapping[str, Any], now: pd.Timestamp) -> float | None:
    """Days from the benchmark's newest observation to `now` (a stored `staleness_days` wins)."""
    stored = row.get("staleness_days")
    if not _missing(stored):
        return float(stored)
    as_of = _naive(row.get("as_of"))
    return None if as_of is None else max((now - as_of) / pd.Timedelta(days=1), 0.0)


def _overview(levels: pd.DataFrame, trends: pd.DataFrame, anchors: dict[str, str], now: pd.Timestamp) -> str:
    if not len(levels):
        return '<p class="none">No saturation rows yet: run <code>benchwatch analyze</code>.</p>'
    optional = [c for c in OPTIONAL_LEVEL_COLUMNS if c in levels.columns and levels[c].notna().any()]
    headers = ["benchmark", "scope", "level", "S_index"] + [OPTIONAL_LEVEL_COLUMNS[c][0] for c in optional] + [
        "R_norm (SE_Δ)", "n items", "models", "top-k", "stagnation", "days since last obs.",
        "frontier trend", "uncertainty"]
    trend_by = {r["table_id"]: r for r in _tabled(trends).to_dict("records")} \
        if len(trends) and "benchmark" in trends else {}
    levels = _tabled(levels)
    rows, empty = [], []
    # One scale per ranking: rows on the paper's scale first, then the rest, each by S.
    comparable = (levels["comparable"].fillna(False).astype(bool) if "comparable" in levels.columns
                  else pd.Series(True, index=levels.index))
    ordered = levels.assign(_c=comparable, _s=levels["s_index"].fillna(-1.0)).sort_values(
        ["_c", "_s", "benchmark"], ascending=[False, False, True])
    for r in ordered.to_dict("records"):
        bench = r["benchmark"]
        shown_name = r.get("table_name") if not _missing(r.get("table_name")) else r.get("name")
        link = f'<a href="#bench-{anchors[bench]}">{esc(shown_name or bench)}</a>'
        if _missing(r.get("s_index")):
            empty.append([link, esc(r.get("scope")), esc(r.get("reason") or "no index")])
            continue
        top = _names(r.get("top_models"))
        if top:
            shown = ", ".join(esc(m) for m in top[:TOP_MODELS_SHOWN])
            top_cell = shown + (f" +{len(top) - TOP_MODELS_SHOWN} more" if len(top) > TOP_MODELS_SHOWN else "")
        else:
            top_cell = " ".join(_f(s) for s in _names(r.get("top_scores")))
        stale = _staleness_days(r, now)
        t = trend_by.get(r["table_id"]) if r.get("scope") == "all" else None
        rows.append([link, esc(r.get("scope")), _bin_badge(_level(r)), _f(r.get("s_index"))]
                    + [esc(OPTIONAL_LEVEL_COLUMNS[c][1](r[c])) if not _missing(r.get(c)) else "" for c in optional]
                    + [f"{_f(r.get('r_norm'), 2)} ({_f(r.get('se_delta'), 3)})",
                       esc("" if _missing(r.get("n_items")) else int(r["n_items"])),
                       esc("" if _missing(r.get("n_models")) else int(r["n_models"])),
                       top_cell, "yes" if r.get("stagnation") is True else "",
                       "" if stale is None else f"{stale:.0f}", _trend_text(t), esc(r.get("uncertainty"))])
    out = _table(headers, rows, "overview", wrap=("benchmark", "top-k", "frontier trend"))
    if empty:
        out += (f"<details><summary>{len(empty)} benchmark row(s) without an index</summary>"
                + _table(["benchmark", "scope", "why"], empty) + "</details>")
    return out


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


def _trend_text(t: Mapping[str, Any] | None) -> str:
    """The stored trend as `trend_text` words it (escaped); empty without a trend row."""
    if t is None:
        return ""
    unit = t.get("slope_unit")
    text = trend_text(t.get("trend_status"), t.get("slope_per_month"), t.get("slope_ci_low"),
                      t.get("slope_ci_high"), t.get("stalled"), _naive(t.get("trend_end")), t.get("stale_days"))
    return esc(f"{text} ({unit})" if text and isinstance(unit, str) and unit else text)


def _series_keys(df: pd.DataFrame) -> list[str]:
    """Columns that split a benchmark's history into separate lines (scope, and population when present)."""
    return [c for c in ("scope", "population") if c in df.columns]


def _time_span(bench: str, hist: pd.DataFrame, frontier: pd.DataFrame, level_rows: pd.DataFrame
               ) -> tuple[pd.Timestamp, pd.Timestamp] | None:
    """One calendar range for a benchmark's two charts: first dated point to newest observation."""
    times = [_naive(t) for df in (hist, frontier) if len(df) for t in df.loc[df["benchmark"] == bench, "as_of"]]
    times += [_naive(t) for t in level_rows.get("as_of", [])]
    times = [t for t in times if t is not None]
    if not times:
        return None
    x0, x1 = min(times), max(times)
    return x0, max(x1, x0 + pd.Timedelta(days=30))


def _release_breaks(chart: TimeChart, g: pd.DataFrame) -> None:
    """A marked break where each later release of a table starts (its own question set)."""
    if "table_id" not in g.columns or g["table_id"].nunique() < 2:
        return
    starts = g.groupby("table_id")["t"].min().sort_values()
    for tid, t0 in list(starts.items())[1:]:
        chart.vline(t0, "#444", f"release {_version(tid) or tid}", dash="1 3",
                    tooltip=f"new release {_version(tid) or tid}: another question set; no series crosses it")


def _s_history_chart(bench: str, name: str, hist: pd.DataFrame, level_rows: pd.DataFrame,
                     span: tuple[pd.Timestamp, pd.Timestamp] | None, tables: Sequence[str] | None = None) -> str:
    """S over calendar time of `tables` (default: every row of `bench`), one series per table
    (release), scope and population, a marked break where a release starts."""
    h = hist[hist["benchmark"] == bench].copy() if len(hist) else hist
    if tables is not None and len(h):
        h = h[_tabled(h)["table_id"].isin(tables)].copy()
    if not len(h) or h["s_index"].notna().sum() == 0:
        return '<p class="none">No S_index history (too few dated models).</p>'
    h["t"] = h["as_of"].map(_naive)
    x0, x1 = span or (h["t"].min(), h["t"].max() + pd.Timedelta(days=30))
    chart = TimeChart(x_range=(x0, x1 + (x1 - x0) * 0.02), y_range=(0.0, 1.0), width=CHART_WIDTH,
                      title=f"S_index of {name} over calendar time", y_format=lambda v: f"{v:.1f}")
    edges = (0.0, *SATURATION_BIN_EDGES, 1.0)
    for lo, hi, label in zip(edges, edges[1:], SATURATION_BINS):
        chart.hband(lo, hi, BIN_COLORS[label], label, opacity=0.35)
    h = _tabled(h)
    releases = h["table_id"].nunique() > 1
    keys = (["table_id"] if releases else []) + _series_keys(h)
    _release_breaks(chart, h)
    for i, (key, g) in enumerate(h.groupby(keys, sort=True, dropna=False) if keys else [("", h)]):
        key = key if isinstance(key, tuple) else (key,)
        if releases:
            key = (_version(key[0]) or key[0], *key[1:])
        label = " / ".join(str(k) for k in key if not _missing(k)) or "S_index"
        color = PALETTE[i % len(PALETTE)]
        g = g.sort_values("t")
        dash = "" if key[1 if releases else 0:][:1] in (("all",), ("",), ()) else "5 3"
        chart.line(list(zip(g["t"], g["s_index"])), color, step=True, dash=dash, legend=f"S_index ({label})")
        chart.dots([(t, s, f"{label} {t:%Y-%m-%d}: S={s:.3f}, {int(n)} models dated by then"
                     + (f"; top: {', '.join(_names(tm))}" if "top_models" in g and not _missing(tm) else ""))
                    for t, s, n, tm in zip(g["t"], g["s_index"], g["n_models"],
                                           g["top_models"] if "top_models" in g else [None] * len(g))], color, r=2.2)
    for j, r in enumerate(level_rows.to_dict("records")):
        t = _naive(r.get("as_of"))
        if t is not None and not _missing(r.get("s_index")):
            chart.dots([(t, r["s_index"], f"latest snapshot ({r.get('scope')}): S={r['s_index']:.3f}, {r.get('bin')}")],
                       "#000", r=4, hollow=True, legend="latest snapshot (each scope)" if j == 0 else "")
    return chart.render()


def _frontier_chart(bench: str, name: str, frontier: pd.DataFrame, trend: Mapping[str, Any] | None,
                    level: Mapping[str, Any] | None, span: tuple[pd.Timestamp, pd.Timestamp] | None,
                    tables: Sequence[str] | None = None) -> str:
    """The frontier of `tables` (default: every row of `bench`), each release its own step line
    with a marked break where it starts; the trend and forecast are those of `trend` (the
    newest release's)."""
    f = frontier[frontier["benchmark"] == bench].copy() if len(frontier) else frontier
    if tables is not None and len(f):
        f = f[_tabled(f)["table_id"].isin(tables)].copy()
    if "k" in f.columns and (f["k"] == SATURATION_K).any():
        f = f[f["k"] == SATURATION_K]
    if not len(f):
        return '<p class="none">No frontier (no dated models).</p>'
    f["t"] = f["as_of"].map(_naive)
    f = _tabled(f).sort_values("t")
    metric = (trend or {}).get("metric") or (level or {}).get("metric") or ""
    proportion = metric == "proportion"
    scale = 100.0 if proportion else 1.0
    end = max(f["t"].max(), _naive((level or {}).get("as_of")) or f["t"].max())
    series = [f["frontier"] * scale]
    if "topk_mean" in f:
        series.append(f["topk_mean"] * scale)
    x_hi = end
    fc = _naive((trend or {}).get("forecast_date")) if trend else None
    if trend and fc is not None and (trend.get("forecast_status") == "ok"):
        x_hi = max(end, min(fc, end + pd.Timedelta(days=3 * 365)))
    lo_y = min(float(s.min()) for s in series if s.notna().any())
    hi_y = max(float(s.max()) for s in series if s.notna().any())
    thr = (trend or {}).get("forecast_threshold")
    if not _missing(thr):   # the threshold is always drawn inside the range, never clamped to an edge
        hi_y, lo_y = max(hi_y, float(thr) * scale), min(lo_y, float(thr) * scale)
    pad = max((hi_y - lo_y) * 0.08, 1.0 if proportion else 0.01 * max(abs(hi_y), 1.0))
    if proportion:
        y_range = (max(0.0, lo_y - pad), min(100.0, hi_y + pad))
    else:
        y_range = (lo_y - pad, hi_y + pad)
    x0 = span[0] if span else f["t"].min()
    x_hi = max(x_hi, span[1]) if span else x_hi
    chart = TimeChart(x_range=(x0, x_hi + max((x_hi - x0) * 0.02, pd.Timedelta(days=5))), y_range=y_range,
                      width=CHART_WIDTH,
                      title=f"frontier of {name}", y_format=(lambda v: f"{v:.0f}%") if proportion else (lambda v: f"{v:g}"))
    unit = "%" if proportion else ""
    _release_breaks(chart, f)
    order = f.groupby("table_id")["t"].min().sort_values().index.tolist()
    for i, tid in enumerate(order):      # one step line per release: no frontier crosses a release
        g = f[f["table_id"] == tid]
        last = i == len(order) - 1
        tag = f" {_version(tid)}" if len(order) > 1 else ""
        pts = list(zip(g["t"], g["frontier"] * scale)) + ([(end, float(g["frontier"].iloc[-1]) * scale)] if last else [])
        chart.line(pts, PALETTE[0] if last else PALETTE[(i + 3) % len(PALETTE)], step=True,
                   legend=f"frontier{tag} (best dated model)")
        if "topk_mean" in g and g["topk_mean"].notna().any():
            chart.line(list(zip(g["t"], g["topk_mean"] * scale)), PALETTE[2], step=True, dash="4 2",
                       legend=f"top-{SATURATION_K} mean" if last else "")
        rec = g[g["is_record"] == True] if "is_record" in g else g   # noqa: E712 (nullable booleans)
        chart.dots([(t, v * scale, f"{t:%Y-%m-%d}: {m} {v * scale:.3g}{unit}{tag}")
                    for t, v, m in zip(rec["t"], rec["frontier"], rec.get("frontier_model", [""] * len(rec)))],
                   PALETTE[0] if last else PALETTE[(i + 3) % len(PALETTE)], legend="record" if last else "")
    newest = f[f["table_id"] == order[-1]]
    if trend and not _missing(trend.get("slope_per_month")):
        _trend_fan(chart, newest, trend, end, scale)
    if trend and not _missing(thr):
        chart.hline(float(thr) * scale, "#555", "threshold")
        if fc is not None and trend.get("forecast_status") == "ok":
            lo, hi = _naive(trend.get("forecast_ci_low")), _naive(trend.get("forecast_ci_high"))
            if lo is not None and hi is not None:
                chart.vband(lo, hi, "#9467bd", opacity=0.18,
                            tooltip=f"forecast 95% CI {lo:%Y-%m} to {hi:%Y-%m} ({trend.get('forecast_method')})")
            chart.vline(fc, "#9467bd", f"forecast {fc:%Y-%m}", tooltip=f"threshold reached {fc:%Y-%m-%d} "
                        f"({trend.get('forecast_method')})")
    return chart.render()


def _trend_fan(chart: TimeChart, f: pd.DataFrame, trend: Mapping[str, Any], end: pd.Timestamp, scale: float) -> None:
    """The stored slope and its CI as a fan over the trend window, anchored at the frontier's
    value at the window's end (the stored trend has a slope, not an intercept)."""
    window_end = _naive(trend.get("trend_end")) or _naive(trend.get("last_observation_at")) or end
    start = window_end - pd.Timedelta(days=365)
    start = max(start, f["t"].min())
    anchor = float(f.loc[f["t"] <= window_end, "frontier"].iloc[-1]) * scale if (f["t"] <= window_end).any() \
        else float(f["frontier"].iloc[-1]) * scale
    months = (window_end - start) / pd.Timedelta(days=365.25 / 12)
    # proportions: slopes are stored in pp/month and the axis is in percent, so one unit either way
    slope, lo, hi = (float(trend[c]) for c in ("slope_per_month", "slope_ci_low", "slope_ci_high"))
    xs = [start, window_end]
    chart.area(xs, [anchor - hi * months, anchor], [anchor - lo * months, anchor], "#ff7f0e", opacity=0.25,
               tooltip=f"slope 95% CI {trend['slope_ci_low']:+.2f} to {trend['slope_ci_high']:+.2f} "
                       f"{trend.get('slope_unit') or ''}", legend="trend 95% CI")
    chart.line([(start, anchor - slope * months), (window_end, anchor)], "#ff7f0e", dash="6 3",
               tooltip=f"Theil-Sen slope {trend['slope_per_month']:+.2f} {trend.get('slope_unit') or ''}",
               legend="trend")


def _benchmark_sections(levels: pd.DataFrame, hist: pd.DataFrame, frontier: pd.DataFrame, trends: pd.DataFrame,
                        anchors: dict[str, str], now: pd.Timestamp, tables: pd.DataFrame | None = None) -> str:
    """One section per benchmark: its primary table's level, S history and frontier (every
    release of the primary source as its own series, a marked break between them), then each
    other table of the benchmark beside it with its own level and charts."""
    levels, hist, frontier, trends = (_tabled(x) for x in (levels, hist, frontier, trends))
    tables = pd.DataFrame() if tables is None else tables
    trend_by = {r["table_id"]: r for r in trends.to_dict("records")} if len(trends) else {}
    out = []
    order = levels.assign(_s=levels["s_index"].fillna(-1.0)).sort_values(["_s", "benchmark"], ascending=[False, True])
    seen: set[str] = set()
    for bench in order["benchmark"]:
        if bench in seen:
            continue
        seen.add(bench)
        primary, family, others = _bench_tables(bench, levels, hist, frontier, tables)
        bench_rows = levels[levels["benchmark"] == bench]
        rows = bench_rows[bench_rows["table_id"] == primary]
        if not len(rows):
            rows = bench_rows[bench_rows["table_id"] == bench_rows["table_id"].iloc[0]]
        main = rows[rows["scope"] == "all"] if (rows["scope"] == "all").any() else rows
        if "population" in main.columns:   # the primary population heads the section; the others follow
            main = main.assign(_p=main["population"].map(POPULATION_ORDER).fillna(len(POPULATION_ORDER))) \
                       .sort_values("_p", kind="stable")
        r = main.iloc[0].to_dict()
        name = r.get("table_name") if not _missing(r.get("table_name")) else (r.get("name") or bench)
        stale = _staleness_days(r, now)
        pop = r.get("population")
        label = "S_index" if _missing(pop) or pop == "models" else f"S_index ({esc(pop)})"
        facts = [f"{label} {_f(r.get('s_index'))}" if not _missing(r.get("s_index")) else esc(r.get("reason") or "no index"),
                 *[f"S_index ({esc(o.get('population'))}) {_f(o.get('s_index'))} {esc(o.get('bin'))}"
                   for o in main.iloc[1:].to_dict("records") if not _missing(o.get("s_index"))],
                 f"k={esc(r.get('k'))}, α={esc(r.get('alpha'))}, n={esc('' if _missing(r.get('n_items')) else int(r['n_items']))}",
                 f"uncertainty {esc(r.get('uncertainty'))}" if not _missing(r.get("uncertainty")) else "",
                 f"newest observation {_date(r.get('as_of'))}" + ("" if stale is None else f" ({stale:.0f} days ago)")]
        note = _level_note(r)
        if note:
            facts.append(esc(note))
        span = _time_span(bench, hist, frontier, rows)
        top = _names(r.get("top_models"))
        if top:
            facts.append("top-k: " + ", ".join(esc(m) for m in top))
        t = trend_by.get(primary)
        if len(family) > 1:
            facts.append(f"{len(family)} releases, each its own table: " + ", ".join(esc(_version(x) or x) for x in family))
        if t is not None and not _missing(t.get("frontier_model")):
            facts.append(f"frontier {esc(t['frontier_model'])} {_f(t.get('frontier'))}")
        if t is not None:
            facts.append(f"trend {_trend_text(t)}")
            fs = t.get("forecast_status")
            if not _missing(fs):
                fd = _date(t.get("forecast_date"))
                facts.append(f"forecast {esc(fs)}" + (f" {fd}" if fd else "")
                             + (f" ({esc(t.get('forecast_reason'))})" if not _missing(t.get("forecast_reason")) else ""))
        out.append(
            f'<section id="bench-{anchors[bench]}" class="bench"><h3>{esc(name)} {_bin_badge(_level(r))}'
            f' <a class="anchor" href="#bench-{anchors[bench]}">#</a></h3>'
            f'<p class="facts"><code>{esc(bench)}</code> · ' + " · ".join(x for x in facts if x) + "</p>"
            f'<div class="charts">{_s_history_chart(bench, str(name), hist, rows, span, family)}'
            f'{_frontier_chart(bench, str(name), frontier, t, r, span, family)}</div>'
            + "".join(_other_table(bench, other, levels, hist, frontier, trend_by.get(other), tables, span)
                      for other in others) + "</section>")
    return "".join(out)


def _other_table(bench: str, table: str, levels: pd.DataFrame, hist: pd.DataFrame, frontier: pd.DataFrame,
                 trend: Mapping[str, Any] | None, tables: pd.DataFrame,
                 span: tuple[pd.Timestamp, pd.Timestamp] | None) -> str:
    """Another leaderboard table of a benchmark, beside its primary: its own level and charts."""
    rows = levels[levels["table_id"] == table] if len(levels) else levels
    main = rows[rows["scope"] == "all"] if len(rows) and (rows["scope"] == "all").any() else rows
    r = main.iloc[0].to_dict() if len(main) else {}
    t = tables[tables["table_id"] == table] if len(tables) else tables
    name = (r.get("table_name") if not _missing(r.get("table_name")) else None) or \
        (str(t["name"].iloc[0]) if len(t) and "name" in t else table)
    level = (f"S_index {_f(r.get('s_index'))} {_bin_badge(r.get('bin'))}" if not _missing(r.get("s_index"))
             else esc(r.get("reason") or "no current level (a past release or no snapshot-level index)"))
    trend_txt = f" · trend {_trend_text(trend)}" if trend is not None else ""
    return (f'<h4>{esc(name)} <span class="src">another table of this benchmark</span></h4>'
            f'<p class="facts"><code>{esc(table)}</code> · {level}{trend_txt}</p>'
            f'<div class="charts">{_s_history_chart(bench, str(name), hist, rows, span, [table])}'
            f'{_frontier_chart(bench, str(name), frontier, trend, r or None, span, [table])}</div>')


def _post_cutoff(item_months: pd.DataFrame, cutoffs: pd.DataFrame, signals: pd.DataFrame,
                 post_cutoff: pd.DataFrame) -> str:
    if not len(item_months):
        return '<p class="none">No item-level data with release dates.</p>'
    cut = {r["model"]: r for r in cutoffs.to_dict("records")} if len(cutoffs) else {}
    a3 = signals[signals["signal"] == "A3"] if len(signals) and "signal" in signals else pd.DataFrame()
    out = []
    for (source, bench), g in item_months.groupby(["source", "benchmark"], sort=True):
        g = g.copy()
        g["t"] = g["month"].map(_naive) + pd.Timedelta(days=14)     # mid-month
        flagged = set(a3.loc[(a3["benchmark"] == bench) & (a3["status"] != "not_flagged"), "model"]) if len(a3) else set()
        tested = set(a3.loc[a3["benchmark"] == bench, "model"]) if len(a3) else set()
        size = g.groupby("model")["n_items"].sum()
        acc = (g["accuracy"] * g["n_items"]).groupby(g["model"]).sum() / size
        rank = sorted(size.index, key=lambda m: (m not in flagged, m not in tested, -acc[m], m))
        shown = rank[:POST_CUTOFF_MAX_MODELS]
        x0, x1 = g["t"].min() - pd.Timedelta(days=20), g["t"].max() + pd.Timedelta(days=20)
        chart = TimeChart(x_range=(x0, x1), y_range=(0.0, min(1.0, max(0.2, float(g["accuracy"].max()) * 1.1))),
                          title=f"{bench}: accuracy per item release month", y_format=lambda v: f"{v * 100:.0f}%",
                          height=280)
        for i, m in enumerate(shown):
            color = PALETTE[i % len(PALETTE)]
            mg = g[(g["model"] == m) & (g["n_items"] >= POST_CUTOFF_MIN_ITEMS_PER_MONTH)].sort_values("t")
            label = m + (" (suspect)" if m in flagged else "")
            chart.line(list(zip(mg["t"], mg["accuracy"])), color, width=2.2 if m in flagged else 1.4,
                       legend=label)
            chart.dots([(t, a, f"{m} {t:%Y-%m}: {a * 100:.1f}% of {int(n)} items")
                        for t, a, n in zip(mg["t"], mg["accuracy"], mg["n_items"])], color, r=2)
            c = cut.get(m)
            c_hi = _naive(c.get("c_hi")) if c else None
            if c_hi is not None and x0 <= c_hi <= x1:
                chart.vline(c_hi, color, tooltip=f"{m}: cutoff {c_hi:%Y-%m-%d} ({c.get('cutoff_provenance') or 'unknown'})")
        note = (f"{len(shown)} of {len(size)} models drawn (suspects first, then tested, then by accuracy); "
                f"months with fewer than {POST_CUTOFF_MIN_ITEMS_PER_MONTH} items of a model are left out; "
                "dashed verticals: each model's knowledge cutoff (upper end of its interval), in its colour.")
        out.append(f'<h3>{esc(bench)} <span class="src">({esc(source)})</span></h3>{chart.render()}'
                   f'<p class="note">{esc(note)}</p>{_gap_table(a3[a3["benchmark"] == bench] if len(a3) else a3, post_cutoff, bench)}')
    return "".join(out)


def _evidence(value: Any) -> dict:
    """The evidence of a test as a dict ({} when absent or not a JSON object)."""
    ev = decoded(value)
    return ev if isinstance(ev, dict) else {}


def _gap_table(a3: pd.DataFrame, post_cutoff: pd.DataFrame, bench: str) -> str:
    """Pre/post accuracy gap of each tested model against its ability-matched reference models (A3)."""
    rows = []
    for r in a3.sort_values("q_value", na_position="last").to_dict("records") if len(a3) else []:
        ev = _evidence(r.get("evidence"))
        rows.append([esc(r["model"]), _date(ev.get("c_hi")), _pp(ev.get("p_pre"), False), _pp(ev.get("p_post"), False),
                     _pp(ev.get("gap_model")), _pp(ev.get("gap_ref")),
                     f"{_pp(r.get('effect'))}" + (f" ± {_pp(r.get('se'), False)}" if not _missing(r.get("se")) else ""),
                     esc(f"{ev.get('n_pre', '')} / {ev.get('n_post', '')}"),
                     esc(len(ev.get("reference_models") or [])), esc(_g(r.get("q_value"))), esc(r.get("status"))])
    head = ["model", "cutoff", "pre acc.", "post acc.", "gap (pre − post)", "reference gap", "excess gap E ± SE",
            "items pre / post", "reference models", "q", "status"]
    out = ("<h4>Pre/post gap against reference models (A3)</h4>" + _table(head, rows)) if rows else ""
    pc = post_cutoff[post_cutoff["benchmark"] == bench] if len(post_cutoff) else post_cutoff
    if len(pc):
        pc_rows = [[esc(r["model"]), _pp(r.get("score_pre"), False), esc(_int(r.get("n_pre"))), _pp(r.get("score"), False),
                    esc(_int(r.get("n_items"))) + (" (low n)" if r.get("low_n") is True else ""),
                    _date(r.get("window_start"))] for r in pc.to_dict("records")]
        out += ("<details><summary>post-cutoff slices of every model</summary>"
                + _table(["model", "S_pre", "n pre", "S_post", "n post", "post window starts"], pc_rows) + "</details>")
    return out


def _int(v: Any) -> str:
    return "" if _missing(v) else str(int(v))


def _g(v: Any) -> str:
    return "" if _missing(v) else f"{float(v):.2g}"


def _suspects(signals: pd.DataFrame) -> str:
    if not len(signals) or "status" not in signals:
        return '<p class="none">No contamination run yet.</p>'
    s = signals[signals["status"] != "not_flagged"]
    rows = []
    for r in s.to_dict("records"):
        ev = _evidence(r.get("evidence"))
        what = {"A1": "above what its other benchmarks predict", "A2": "jump beyond its reference benchmarks",
                "A3": "accuracy drops after its cutoff more than references"}.get(str(r.get("signal")), "")
        ci = (f"[{_pp(r.get('ci_low'))}, {_pp(r.get('ci_high'))}]"
              if not (_missing(r.get("ci_low")) or _missing(r.get("ci_high"))) else "")
        evidence = ", ".join(f"{k} {ev[k]}" for k in ("n_pre", "n_post", "n_reference_models", "n_items", "link", "method")
                             if k in ev and not _missing(ev[k]))
        corroborated = _names(ev.get("corroborated_by"))
        if corroborated:
            evidence += "; corroborated by " + ", ".join(str(c) for c in corroborated)
        rows.append([esc(r["model"]), esc(r["benchmark"]), esc(r.get("source")),
                     esc(r.get("signal")) + (f" ({esc(r['detail'])})" if r.get("detail") else ""), esc(what),
                     _pp(r.get("effect")) + (f" ± {_pp(r.get('se'), False)}" if not _missing(r.get("se")) else ""),
                     ci, esc(_g(r.get("p_value"))), esc(_g(r.get("q_value"))), esc(r.get("status")), esc(evidence)])
    n_tests = len(signals)
    intro = (f"<p>{len(s)} of {n_tests} tests of the newest run are flagged (Benjamini–Hochberg q over every test "
             "of the run). A flag is a <b>suspicion</b> that needs a look, never a finding that a model was trained "
             "on the benchmark.</p>")
    return intro + _table(["model", "benchmark", "source", "signal", "what it means", "effect ± SE", "95% CI", "p", "q",
                           "status", "evidence"], rows, wrap=("what it means", "evidence"))


def _source_health(sources: pd.DataFrame, now: pd.Timestamp) -> str:
    if not len(sources):
        return '<p class="none">No fetches or snapshots yet.</p>'
    rows = []
    for r in sources.to_dict("records"):
        last = _naive(r.get("last_success_at"))
        age = "" if last is None else f" ({max((now - last) / pd.Timedelta(days=1), 0):.0f} d ago)"
        failing = int(r.get("consecutive_failures") or 0) if not _missing(r.get("consecutive_failures")) else 0
        rows.append([esc(r["source"]), (_date(last) + age) if last is not None else "never",
                     f'<span class="{"bad" if failing else ""}">{failing}</span>',
                     esc(f"{_int(r.get('failed_fetches'))} of {_int(r.get('fetches'))}"),
                     esc(_int(r.get("snapshots"))), _date(r.get("newest_observed_at")),
                     esc(f"{_int(r.get('rows_scores'))} scores" + (f", {_int(r.get('rows_items'))} items"
                                                                 if (r.get("rows_items") or 0) else "")),
                     esc(f"{_int(r.get('rejects_latest'))} / {_int(r.get('rejects_total'))}"),
                     esc(_clip(r.get("last_error"), 160))])
    return _table(["source", "last success", "failed runs in a row", "failed fetches", "snapshots",
                   "newest observation", "rows (newest snapshot)", "rejects (newest / all)", "last error"], rows,
                  wrap=("last error",))


def _level(r: Mapping[str, Any]) -> Any:
    """The stored committed level of a saturation row (migration 020), else its raw bin."""
    level = r.get("level")
    return r.get("bin") if _missing(level) else level


def _level_note(r: Mapping[str, Any]) -> str:
    """Where S lies in another bin than the stored level: why, in words (alerts.text.level_note)."""
    from alerts.text import level_note
    from analysis.constants import HYSTERESIS_PENDING
    if _missing(r.get("level")) or _missing(r.get("s_index")):
        return ""
    pending = None if _missing(r.get("pending_bin")) else str(r["pending_bin"])
    count = None if _missing(r.get("pending_count")) else int(r["pending_count"])
    return level_note(float(r["s_index"]), None if _missing(r.get("bin")) else str(r["bin"]), str(r["level"]),
                      pending, count, HYSTERESIS_PENDING)


def _firing(firing: pd.DataFrame) -> str:
    if len(firing) and "kind" in firing.columns:   # a benchmark's level is a state, shown in the overview
        from alerts import rules
        states = [name for name, kind in rules.kinds().items() if kind.state_line is not None]
        firing = firing[~firing["kind"].isin(states)]
    if not len(firing):
        return '<p class="none">(none)</p>'
    cols = [c for c in ("kind", "benchmark", "model", "source", "scope", "level", "since", "muted_by") if c in firing]
    rows = [[_date(r[c]) if c == "since" else esc(r[c]) for c in cols] for r in firing.to_dict("records")]
    return _table(cols, rows, wrap=("muted_by",))


def _clip(v: Any, n: int) -> str:
    if _missing(v):
        return ""
    text = " ".join(str(v).split())
    return text if len(text) <= n else text[: n - 1] + "…"


CSS = """
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;color:#222;background:#fafafa}
main{max-width:1500px;margin:0 auto;padding:16px 24px}
h1{margin:8px 0 2px}h2{margin-top:36px;border-bottom:2px solid #ddd;padding-bottom:4px}
h3{margin:22px 0 4px}h4{margin:12px 0 4px}
table{border-collapse:collapse;background:#fff;margin:6px 0;font-size:13px}
td,th{border:1px solid #ddd;padding:3px 7px;text-align:left;vertical-align:top;white-space:nowrap}
td.wrap{white-space:normal;min-width:140px}
th{background:#f0f0f0;white-space:normal;min-width:48px}
.scroll{overflow-x:auto;max-width:100%}
table.overview td:nth-child(4){font-variant-numeric:tabular-nums;font-weight:600}
.bin{padding:1px 7px;border-radius:9px;font-size:12px;white-space:nowrap;color:#222}
.none,.note,.facts{color:#666}.note{font-size:12px;max-width:1000px}
.src{font-weight:normal;color:#888;font-size:13px}
.charts{display:flex;flex-wrap:wrap;gap:12px}
svg.chart{background:#fff;border:1px solid #e3e3e3;max-width:100%;height:auto}
svg .frame{fill:none;stroke:#bbb}svg .grid{stroke:#eee}svg .axis{stroke:#999}
svg .tick,svg .band,svg .legend,svg .mark{font:11px system-ui,sans-serif;fill:#555}
section.bench{border-top:1px solid #e5e5e5}
a.anchor{color:#bbb;text-decoration:none;font-weight:normal}
nav{background:#fff;border:1px solid #e3e3e3;padding:8px 14px;margin:12px 0;columns:4 220px;font-size:13px}
nav a{display:block}nav b{display:block;break-after:avoid}
.bad{color:#b00;font-weight:600}
details{margin:6px 0}
"""


def render_report(frames: Mapping[str, pd.DataFrame], *, now: datetime, title: str = "benchwatch report") -> str:
    """The whole page from `storage.report.read_html_report`'s frames, as of `now`."""
    now_ts = _naive(now if now.tzinfo else now.replace(tzinfo=timezone.utc))
    levels = _default_params(_frame(frames, "levels"))
    history = _default_params(_frame(frames, "history"))
    trends = _frame(frames, "trends")
    if "k" in trends.columns and (trends["k"] == SATURATION_K).any():
        trends = trends[trends["k"] == SATURATION_K]
    frontier, signals = _frame(frames, "frontier"), _frame(frames, "signals")
    anchors = slugs(sorted(levels["benchmark"].unique())) if len(levels) else {}

    n_flagged = int((signals["status"] != "not_flagged").sum()) if len(signals) and "status" in signals else 0
    toc_bench = "".join(
        f'<a href="#bench-{anchors[b]}">{esc(n)}</a>'
        for b, n in levels.assign(_s=levels["s_index"].fillna(-1.0))
        .sort_values(["_s", "benchmark"], ascending=[False, True])
        .drop_duplicates("benchmark")[["benchmark", "name"]].itertuples(index=False)) if len(levels) else ""
    nav = ('<nav><b>Contents</b><a href="#overview">Overview</a><a href="#post-cutoff">Post-cutoff view</a>'
           f'<a href="#suspects">Contamination suspects ({n_flagged})</a><a href="#alerts">Firing alerts</a>'
           '<a href="#sources">Source health</a>'
           f'<b>Benchmarks</b>{toc_bench}</nav>')
    bins = ", ".join(f"{b}" for b in SATURATION_BINS)
    body = (
        f"<h1>{esc(title)}</h1><p class=\"note\">Generated {now_ts:%Y-%m-%d %H:%M} UTC. Saturation index S "
        f"(Akhtar, Reuel et al. 2026) with k={SATURATION_K}, α={SATURATION_ALPHA} (n_eff = n^α); bins {esc(bins)} "
        f"at edges {esc(', '.join(str(e) for e in SATURATION_BIN_EDGES))}. Every number is the stored analysis; "
        "the uncertainty column says which noise model produced it.</p>" + nav
        + '<h2 id="overview">Overview</h2>' + _overview(levels, trends, anchors, now_ts)
        + '<h2 id="post-cutoff">Post-cutoff view</h2>'
        + _post_cutoff(_frame(frames, "item_months"), _frame(frames, "cutoffs"), signals, _frame(frames, "post_cutoff"))
        + '<h2 id="suspects">Contamination suspects</h2>' + _suspects(signals)
        + '<h2 id="alerts">Firing alerts</h2>' + _firing(_frame(frames, "firing"))
        + '<h2 id="sources">Source health</h2>' + _source_health(_frame(frames, "sources"), now_ts)
        + '<h2 id="benchmarks">Benchmarks</h2>'
        + _benchmark_sections(levels, history, frontier, trends, anchors, now_ts, _frame(frames, "tables")))
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
            "img-src data:\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{esc(title)}</title>"
            f"<style>{CSS}</style></head><body><main>{body}</main></body></html>")


# --- the overview for Prefect artifacts ------------------------------------------------------------

def overview_rows(frames: Mapping[str, pd.DataFrame], *, now: datetime) -> list[dict]:
    """The overview as JSON-safe rows (a Prefect table artifact): benchmarks with an index, most saturated first."""
    now_ts = _naive(now)
    levels = _default_params(_frame(frames, "levels"))
    if not len(levels):
        return []
    rows = []
    for r in levels[levels["s_index"].notna()].sort_values(["s_index", "benchmark"], ascending=[False, True]).to_dict("records"):
        stale = _staleness_days(r, now_ts)
        table = r.get("table_name") if not _missing(r.get("table_name")) else r.get("name")
        row = {"benchmark": str(r["benchmark"]), "table": str(table or r["benchmark"]),
               "scope": str(r.get("scope")), "level": str(_level(r)), "bin": str(r.get("bin")),
               "s_index": round(float(r["s_index"]), 3)}
        for c in OPTIONAL_LEVEL_COLUMNS:
            if c in r and not _missing(r[c]):
                v = r[c]
                row[c] = round(float(v), 3) if isinstance(v, float) else (v.item() if hasattr(v, "item") else v)
        row.update({"n_items": None if _missing(r.get("n_items")) else int(r["n_items"]),
                    "top_k": ", ".join(_names(r.get("top_models"))) or " ".join(_f(s) for s in _names(r.get("top_scores"))),
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
    lines = [f"# benchwatch report, {_naive(now):%Y-%m-%d %H:%M} UTC", "",
             f"Saturation index S with k={SATURATION_K}, α={SATURATION_ALPHA}; most saturated first.", ""]
    if not rows:
        return "\n".join(lines + ["No saturation rows yet."])
    lines += ["| table | scope | level | S | top-k | stagnation | days since last observation | uncertainty |",
              "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {_md_cell(r['table'])} | {_md_cell(r['scope'])} | {_md_cell(r['level'])} | {r['s_index']:.3f} | "
              f"{_md_cell(r['top_k'])} | {'yes' if r['stagnation'] else ''} | "
              f"{'' if r['days_since_last_observation'] is None else r['days_since_last_observation']} | "
              f"{_md_cell(r['uncertainty'] or '')} |" for r in rows]
    signals = _frame(frames, "signals")
    if len(signals) and "status" in signals:
        flagged = signals[signals["status"] != "not_flagged"]
        lines += ["", f"Contamination suspects: {len(flagged)} of {len(signals)} tests flagged (a suspicion, never a verdict)."]
    return "\n".join(lines)

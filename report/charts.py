"""A benchmark's two charts in the HTML report: S over calendar time and the frontier with its trend.

Both are drawn from one table family (the primary table and every release of its source, a
marked break where a release starts), on an axis spanning that family's own data, not the
benchmark's other tables. Stored numbers only: the trend fan is the stored slope and its CI.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import pandas as pd

from analysis.constants import SATURATION_BIN_EDGES, SATURATION_BINS, SATURATION_K
from common.jsonsafe import is_null as _missing
from report.base import (BIN_COLORS, PALETTE, ci_uninformative, metric_is_proportion, names, naive, tabled,
                                versions)
from report.svg import TimeChart

# Width of a benchmark's two charts (side by side on a 1280-pixel screen).
CHART_WIDTH = 600
# Record points labelled with their model on a frontier (the newest ones; every record has a tooltip).
RECORD_LABELS = 5
# How far a forecast may stretch a frontier chart's time axis past its data.
FORECAST_AXIS_DAYS = 3 * 365


def family_span(frames: Sequence[pd.DataFrame], tables: Sequence[str]) -> tuple[pd.Timestamp, pd.Timestamp] | None:
    """First to newest date of `tables` in `frames` (at least 30 days): the axis of their charts."""
    stamps = [naive(t) for df in frames if len(df) and "as_of" in df.columns
              for t in tabled(df).loc[tabled(df)["table_id"].isin(tables), "as_of"]]
    times = [t for t in stamps if t is not None]
    if not times:
        return None
    x0, x1 = min(times), max(times)
    return x0, max(x1, x0 + pd.Timedelta(days=30))


def _release_breaks(chart: TimeChart, g: pd.DataFrame) -> None:
    """A marked break where each later release of a table starts (its own question set)."""
    if "table_id" not in g.columns or g["table_id"].nunique() < 2:
        return
    starts = g.groupby("table_id")["t"].min().sort_values()
    version = versions(g)
    for tid, t0 in list(starts.items())[1:]:
        release = version.get(tid) or tid
        chart.vline(t0, "#444", f"release {release}", dash="1 3",
                    tooltip=f"new release {release}: another question set; no series crosses it")


def _series_keys(df: pd.DataFrame) -> list[str]:
    """Columns that split a benchmark's history into separate lines (scope, and population when present)."""
    return [c for c in ("scope", "population") if c in df.columns]


def s_history_chart(bench: str, name: str, hist: pd.DataFrame, level_rows: pd.DataFrame,
                    span: tuple[pd.Timestamp, pd.Timestamp] | None, tables: Sequence[str] | None = None) -> str:
    """S over calendar time of `tables` (default: every row of `bench`), one series per table
    (release), scope and population, a marked break where a release starts; the latest
    snapshot's S of each series is a labelled point."""
    h = hist[hist["benchmark"] == bench].copy() if len(hist) else hist
    if tables is not None and len(h):
        h = h[tabled(h)["table_id"].isin(tables)].copy()
    if not len(h) or h["s_index"].notna().sum() == 0:
        return '<p class="none">No S_index history (too few dated models).</p>'
    h["t"] = h["as_of"].map(naive)
    x0, x1 = span or (h["t"].min(), h["t"].max() + pd.Timedelta(days=30))
    chart = TimeChart(x_range=(x0, x1 + (x1 - x0) * 0.02), y_range=(0.0, 1.0), width=CHART_WIDTH,
                      title=f"S_index of {name} over calendar time", y_format=lambda v: f"{v:.1f}")
    edges = (0.0, *SATURATION_BIN_EDGES, 1.0)
    for lo, hi, label in zip(edges, edges[1:], SATURATION_BINS):
        chart.hband(lo, hi, BIN_COLORS[label], label, opacity=0.35)
    h = tabled(h)
    releases = h["table_id"].nunique() > 1
    keys = (["table_id"] if releases else []) + _series_keys(h)
    _release_breaks(chart, h)
    version = versions(h)
    for i, (key, g) in enumerate(h.groupby(keys, sort=True, dropna=False) if keys else [("", h)]):
        key = key if isinstance(key, tuple) else (key,)
        if releases:
            key = (version.get(key[0]) or key[0], *key[1:])
        label = " / ".join(str(k) for k in key if not _missing(k)) or "S_index"
        color = PALETTE[i % len(PALETTE)]
        g = g.sort_values("t")
        dash = "" if key[1 if releases else 0:][:1] in (("all",), ("",), ()) else "5 3"
        chart.line(list(zip(g["t"], g["s_index"])), color, step=True, dash=dash, legend=f"S_index ({label})")
        chart.dots([(t, s, f"{label} {t:%Y-%m-%d}: S={s:.3f}, {int(n)} models dated by then"
                     + (f"; top: {', '.join(names(tm))}" if "top_models" in g and not _missing(tm) else ""))
                    for t, s, n, tm in zip(g["t"], g["s_index"], g["n_models"],
                                           g["top_models"] if "top_models" in g else [None] * len(g))], color, r=2.2)
    for r in level_rows.to_dict("records"):      # the latest snapshot's S, labelled (not a bare marker)
        t = naive(r.get("as_of"))
        if t is not None and not _missing(r.get("s_index")):
            series = " / ".join(str(v) for v in (r.get("scope"), r.get("population"))
                                if not _missing(v) and v != "models")
            tip = f"latest snapshot ({series}): S={r['s_index']:.3f}, {r.get('bin')}"
            chart.dots([(t, r["s_index"], tip)], "#000", r=3.2)
            chart.label(t, float(r["s_index"]), f"now {r['s_index']:.2f} ({series})", "#000",
                        above=float(r["s_index"]) < 0.85)
    return chart.render()


def frontier_chart(bench: str, name: str, frontier: pd.DataFrame, trend: Mapping[str, Any] | None,
                   level: Mapping[str, Any] | None, span: tuple[pd.Timestamp, pd.Timestamp] | None,
                   tables: Sequence[str] | None = None) -> str:
    """The frontier of `tables` (default: every row of `bench`), each release its own step line
    with a marked break where it starts, the newest records labelled with their model; the trend
    and forecast are those of `trend` (the newest release's)."""
    f = frontier[frontier["benchmark"] == bench].copy() if len(frontier) else frontier
    if tables is not None and len(f):
        f = f[tabled(f)["table_id"].isin(tables)].copy()
    if "k" in f.columns and (f["k"] == SATURATION_K).any():
        f = f[f["k"] == SATURATION_K]
    if not len(f):
        return '<p class="none">No frontier (no dated models).</p>'
    f["t"] = f["as_of"].map(naive)
    f = tabled(f).sort_values("t")
    proportion = metric_is_proportion(trend, level)
    scale = 100.0 if proportion else 1.0
    unit = "%" if proportion else ""
    end = max(f["t"].max(), naive((level or {}).get("as_of")) or f["t"].max())
    series = [f["frontier"] * scale] + ([f["topk_mean"] * scale] if "topk_mean" in f else [])
    x_hi = end
    fc = naive((trend or {}).get("forecast_date")) if trend else None
    forecast_ok = bool(trend) and fc is not None and trend.get("forecast_status") == "ok"   # type: ignore[union-attr]
    if forecast_ok:
        x_hi = max(end, min(fc, end + pd.Timedelta(days=FORECAST_AXIS_DAYS)))
    lo_y = min(float(s.min()) for s in series if s.notna().any())
    hi_y = max(float(s.max()) for s in series if s.notna().any())
    thr_value = (trend or {}).get("forecast_threshold")
    thr = 0.0 if thr_value is None or _missing(thr_value) else float(thr_value)
    show_thr = not _missing(thr_value) and (trend or {}).get("forecast_status") in ("ok", "reached")
    if show_thr:   # a threshold forecast or reached is drawn inside the range
        hi_y, lo_y = max(hi_y, thr * scale), min(lo_y, thr * scale)
    pad = max((hi_y - lo_y) * 0.08, 1.0 if proportion else 0.01 * max(abs(hi_y), 1.0))
    y_range = (max(0.0, lo_y - pad), min(100.0, hi_y + pad)) if proportion else (lo_y - pad, hi_y + pad)
    x0 = f["t"].min() if span is None else min(span[0], f["t"].min())
    x_hi = max(x_hi, span[1]) if span else x_hi
    chart = TimeChart(x_range=(x0, x_hi + max((x_hi - x0) * 0.02, pd.Timedelta(days=5))), y_range=y_range,
                      width=CHART_WIDTH, title=f"frontier of {name}" + (" (accuracy, %)" if proportion else ""),
                      y_format=(lambda v: f"{v:.0f}%") if proportion else (lambda v: f"{v:g}"))
    _release_breaks(chart, f)
    order = f.groupby("table_id")["t"].min().sort_values().index.tolist()
    version = versions(f)
    for i, tid in enumerate(order):      # one step line per release: no frontier crosses a release
        g = f[f["table_id"] == tid]
        last = i == len(order) - 1
        tag = f" {version.get(tid, '')}" if len(order) > 1 else ""
        color = PALETTE[0] if last else PALETTE[(i + 2) % len(PALETTE)]
        pts = list(zip(g["t"], g["frontier"] * scale)) + ([(end, float(g["frontier"].iloc[-1]) * scale)] if last else [])
        chart.line(pts, color, step=True, legend=f"frontier{tag} (best dated model)")
        if "topk_mean" in g and g["topk_mean"].notna().any():
            chart.line(list(zip(g["t"], g["topk_mean"] * scale)), PALETTE[2], step=True, dash="4 2",
                       legend=f"top-{SATURATION_K} mean" if last else "")
        rec = g[g["is_record"] == True] if "is_record" in g else g   # noqa: E712 (nullable booleans)
        models = rec["frontier_model"] if "frontier_model" in rec else pd.Series([""] * len(rec), index=rec.index)
        chart.dots([(t, v * scale, f"{t:%Y-%m-%d}: {m} {v * scale:.3g}{unit}{tag}")
                    for t, v, m in zip(rec["t"], rec["frontier"], models)],
                   color, legend="record (labelled: newest)" if last else "")
        for t, v, m in reversed(list(zip(rec["t"], rec["frontier"], models))[-RECORD_LABELS:]):
            if not _missing(m):     # newest first: the newest record's label is never the one skipped
                chart.label(t, float(v) * scale, str(m), color)
    newest = f[f["table_id"] == order[-1]]
    if trend and not _missing(trend.get("slope_per_month")):
        _trend_fan(chart, newest, trend, end, scale)
    if trend and show_thr:
        chart.hline(thr * scale, "#555", "threshold")
    if trend and forecast_ok:
        lo, hi = naive(trend.get("forecast_ci_low")), naive(trend.get("forecast_ci_high"))
        if lo is not None and hi is not None:
            chart.vband(lo, hi, "#CC79A7", opacity=0.18,
                        tooltip=f"forecast 95% CI {lo:%Y-%m} to {hi:%Y-%m} ({trend.get('forecast_method')})")
        chart.vline(fc, "#CC79A7", f"forecast {fc:%Y-%m}", tooltip=f"threshold reached {fc:%Y-%m-%d} "
                    f"({trend.get('forecast_method')})")
    return chart.render()


def _trend_fan(chart: TimeChart, f: pd.DataFrame, trend: Mapping[str, Any], end: pd.Timestamp, scale: float) -> None:
    """The stored slope and its CI as a fan over the trend window, anchored at the frontier's
    value at the window's end (the stored trend has a slope, not an intercept). An interval too
    wide to say anything is not drawn (the text says so)."""
    window_end = naive(trend.get("trend_end")) or naive(trend.get("last_observation_at")) or end
    start = max(naive(trend.get("trend_start")) or window_end - pd.Timedelta(days=365), f["t"].min())
    before = f["t"] <= window_end
    anchor = float(f.loc[before, "frontier"].iloc[-1] if before.any() else f["frontier"].iloc[-1]) * scale
    months = (window_end - start) / pd.Timedelta(days=365.25 / 12)
    # proportions: slopes are stored in pp/month and the axis is in percent, so one unit either way
    slope = float(trend["slope_per_month"])
    unit = trend.get("slope_unit") or ""
    ci = (trend.get("slope_ci_low"), trend.get("slope_ci_high"))
    xs = [start, window_end]
    if not (_missing(ci[0]) or _missing(ci[1])):
        lo, hi = float(ci[0]), float(ci[1])    # type: ignore[arg-type]   # checked just above
        if not ci_uninformative(slope, lo, hi, unit):
            chart.area(xs, [anchor - hi * months, anchor], [anchor - lo * months, anchor], "#E69F00",
                       opacity=0.25, tooltip=f"slope 95% CI {lo:+.2f} to {hi:+.2f} {unit}", legend="trend 95% CI")
    chart.line([(start, anchor - slope * months), (window_end, anchor)], "#E69F00", dash="6 3",
               tooltip=f"Theil-Sen slope {slope:+.2f} {unit}", legend="trend")

"""The report's "Forecast track record" section: the last `benchwatch backtest` by horizon
(forecast_backtest_summary; docs/statistics.md, "Forecasts with a track record").

Per metric kind a chart of the MAE by horizon, the method the kind's forecasts use against the
no-change forecast, each with its table-clustered 90 % CI, and a table of every method: forecasts,
tables, MAE, bias, the share inside the 80 % interval. Formatting only; every text is escaped.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from analysis.constants import BACKTEST_COVERAGE_TARGET, DAYS_PER_MONTH
from analysis.live_forecast import PERSISTENCE, kind_of, live_forecast
from common.jsonsafe import is_null as _missing
from report.base import METHOD_NAMES, PALETTE, esc, naive, score_text, table
from report.svg import TimeChart, from_days


def _x(h: Any):
    """A horizon in months as the chart's x (days from 1970: the SVG writer's x is a date)."""
    return from_days(float(h) * DAYS_PER_MONTH)


def _num(v: Any, spec: str = ".1f") -> str:
    return "—" if _missing(v) else format(float(v), spec)


def _ci(v: Any, lo: Any, hi: Any, pct: bool = False) -> str:
    if _missing(v):
        return "—"
    f = (lambda x: f"{float(x) * 100:.0f}") if pct else (lambda x: f"{float(x):.1f}")
    ci = "" if _missing(lo) or _missing(hi) else f" [{f(lo)}, {f(hi)}]"
    return f"{f(v)}{' %' if pct else ''}{ci}"


def _chart(kind: str, unit: str, g: pd.DataFrame, marked: pd.DataFrame) -> str:
    """MAE by horizon: the method chosen at each horizon (`marked`, where one beat no change) and
    no change, with their 90 % CIs."""
    hs = sorted(int(h) for h in g["horizon_months"].unique())
    top = max([float(v) for v in pd.concat([g["mae_high"], g["mae"], g["naive_mae_high"], g["naive_mae"]])
               if not _missing(v)] or [1.0])
    chart = TimeChart(x_range=(_x(0), _x(max(hs) + 1)), y_range=(0.0, top * 1.08),
                      title=f"{kind}: forecast error by horizon ({unit})", y_format=lambda v: f"{v:g}",
                      x_ticks=[(_x(h), f"{h} mo") for h in hs])
    used = marked[marked["method"] != PERSISTENCE].sort_values("horizon_months")
    names = " / ".join(dict.fromkeys(METHOD_NAMES.get(str(x), str(x)) for x in used["method"]))
    # no change is scored on the same forecasts as the chosen method; where none was chosen, on its own
    base = used if len(used) else g[g["method"] == PERSISTENCE].sort_values("horizon_months")
    shown = [(names, PALETTE[0], "mae", used)] if len(used) else []
    shown.append(("no change", PALETTE[1], "naive_mae", base))
    for name, color, col, m in shown:
        records = m.to_dict("records")
        points = [(_x(r["horizon_months"]), r[col], f"{name}, {int(r['horizon_months'])} months: MAE "
                   f"{_num(r[col])} {unit}, n = {int(r['n'])} from {int(r['n_tables'])} tables") for r in records]
        chart.line([(x, y) for x, y, _ in points], color, legend=f"{name} (MAE, 90 % CI)")
        chart.dots(points, color)
        chart.errorbars([(_x(r["horizon_months"]), r[f"{col}_low"], r[f"{col}_high"], f"{name}: 90 % CI")
                         for r in records], color)
    return chart.render()


def backtest_section(summary: pd.DataFrame) -> str:
    """The section's HTML (escaped): per kind, the chart and the table; a note without a backtest."""
    if summary is None or not len(summary):
        return ('<p class="none">No backtest stored: <code>benchwatch backtest</code> scores the forecasts '
                "against what the frontier did.</p>")
    lo, hi = BACKTEST_COVERAGE_TARGET
    parts = ['<p class="note">At monthly past origins of every table with enough dated history, each method forecast '
             "the frontier 3, 6 and 12 months ahead from the results dated on or before the origin, and was scored "
             "against the frontier the table showed then. MAE with its 90 % CI (whole tables resampled: a table's "
             f"origins are correlated) beside the no-change forecast's; an 80 % interval is calibrated when "
             f"{lo * 100:.0f}–{hi * 100:.0f} % of outcomes fall inside it. At each horizon a kind's forecasts use "
             "the method marked *, the best that beats no change there, else none.</p>"]
    for kind, g in summary.groupby("kind", sort=True):
        unit = str(g["unit"].iat[0])
        marked = g[g["chosen"].fillna(False).astype(bool)].sort_values("horizon_months")
        use = "; ".join(f"{int(h)} months: " + ("no forecast (none beat no change)" if m == PERSISTENCE
                                                 else METHOD_NAMES.get(str(m), str(m)))
                        for h, m in zip(marked["horizon_months"], marked["method"])) or "no forecast"
        star = {True: " *", False: ""}
        rows = [[esc(METHOD_NAMES.get(str(r["method"]), str(r["method"])))
                 + star[not _missing(r["chosen"]) and bool(r["chosen"])],
                 esc(f"{int(r['horizon_months'])} mo"), esc(int(r["n"])), esc(int(r["n_tables"])),
                 esc(_ci(r["mae"], r["mae_low"], r["mae_high"])), esc(_num(r["naive_mae"])),
                 esc(_num(r["bias"], "+.1f")), esc(_ci(r["coverage"], r["coverage_low"], r["coverage_high"], pct=True))]
                for r in g.sort_values(["method", "horizon_months"]).to_dict("records")]
        parts.append(f"<h3>{esc(kind)} tables ({esc(unit)}): {esc(use)}</h3>"
                     f'<div class="charts">{_chart(str(kind), unit, g, marked)}</div>'
                     + table(["method", "horizon", "forecasts", "tables", f"MAE [90 % CI] ({unit})",
                              "no-change MAE", "bias", "inside 80 % interval [90 % CI]"], rows))
    return "".join(parts)


def live_forecast_text(trend: dict, summary: pd.DataFrame | None) -> str:
    """The frontier at the longest backtest horizon after the table's last result, by the method its
    kind's backtest chose, with the interval the backtest calibrated (analysis.live_forecast);
    "" when no method earned a forecast, or the trend has no slope."""
    metric = trend.get("metric")
    if summary is None or not len(summary) or _missing(metric) or _missing(trend.get("slope_per_month")) \
            or _missing(trend.get("frontier")) or trend.get("direction") == "lower":
        return ""
    kind, _, scale = kind_of(str(metric))
    record = summary[(summary["kind"] == kind) & summary["chosen"].fillna(False).astype(bool)]
    ceiling = 1.0 if kind == "proportion" else None
    slope = float(trend["slope_per_month"]) / scale / DAYS_PER_MONTH
    got = live_forecast(float(trend["frontier"]), slope, ceiling, record, metric=str(metric))
    end = naive(trend.get("trend_end"))
    if not len(got) or end is None:
        return ""
    r = got.iloc[-1]
    when = end + pd.Timedelta(days=float(r["horizon_months"]) * DAYS_PER_MONTH)
    prop = kind == "proportion"
    return (f"frontier by {when:%Y-%m} ({int(r['horizon_months'])} months after its last result): "
            f"{score_text(r['forecast'], prop)} [{score_text(r['low'], prop)}, {score_text(r['high'], prop)}], "
            f"{METHOD_NAMES.get(str(r['method']), str(r['method']))}, 80 % interval calibrated on "
            f"{int(r['n'])} backtest forecasts")

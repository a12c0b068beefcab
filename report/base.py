"""Shared pieces of the HTML report (report/html.py): display constants, escaping, cell formats.

Formatting only: every function turns a stored number or label into text, none computes a
statistic. Every string that may come from a scraped page goes through `esc`.
"""

from __future__ import annotations

import html
from typing import Any, Iterable, Mapping

import pandas as pd

from alerts.render import report_anchor
from analysis.constants import SATURATION_ALPHA, SATURATION_K
from analysis.live_forecast import DAMPED, LOGISTIC, PERSISTENCE, THEIL_SEN, kind_of
from analysis.saturation import PROPORTION
from common.jsonsafe import decoded
from common.jsonsafe import is_null as _missing
from common.naming import POPULATION_SYSTEMS

# Okabe & Ito (2008), "Color Universal Design": distinguishable with every common colour-vision
# deficiency. Yellow is left out (invisible as a thin line on white); black is the seventh colour.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
# Saturation bins on a single-hue light-to-dark ramp (ColorBrewer YlOrBr): ordered by lightness,
# so the order survives colour-blindness and greyscale printing; the bin is also always named.
BIN_COLORS = {"very low": "#fff7bc", "low": "#fee391", "moderate": "#fec44f", "high": "#fe9929",
              "very high": "#d95f0e"}
# Which population of a benchmark heads its section (model runs, then agent systems, then systems per model).
POPULATION_ORDER = {"models": 0, "systems": 1, "systems_per_model": 2}
# A trend interval wider than this many times its slope (or, for accuracies, wider than this many
# pp/month) says nothing about the slope: the text says so instead of printing the bounds.
UNINFORMATIVE_CI_FACTOR = 10.0
UNINFORMATIVE_CI_PP = 50.0

# Optional saturation columns: column -> (header, formatter). Shown when present and not all empty.
OPTIONAL_LEVEL_COLUMNS: dict[str, tuple[str, Any]] = {
    "population": ("population", str),
    "bin_hold_prob": ("P(bin holds)", lambda v: f"{float(v):.2f}"),
    "scale": ("scale", lambda v: "paper" if v == "paper_binomial" else f"own ({v}): not comparable"),
}


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


def naive(value: Any) -> pd.Timestamp | None:
    """A naive-UTC Timestamp (aware values converted), None when missing."""
    if _missing(value):
        return None
    ts = pd.Timestamp(value)
    return ts.tz_convert("UTC").tz_localize(None) if ts.tzinfo is not None else ts


def date(value: Any) -> str:
    ts = naive(value)
    return "" if ts is None else f"{ts:%Y-%m-%d}"


def num(value: Any, digits: int = 3) -> str:
    return "" if _missing(value) else f"{float(value):.{digits}f}"


def pp(value: Any, signed: bool = True) -> str:
    """A difference of two proportions, in percentage points."""
    if _missing(value):
        return ""
    return f"{float(value) * 100:+.1f} pp" if signed else f"{float(value) * 100:.1f} pp"


def pct(value: Any) -> str:
    """A proportion (an accuracy), in percent."""
    return "" if _missing(value) else f"{float(value) * 100:.1f}%"


def as_int(v: Any) -> str:
    return "" if _missing(v) else str(int(v))


def g2(v: Any) -> str:
    return "" if _missing(v) else f"{float(v):.2g}"


def names(value: Any) -> list[str]:
    if _missing(value):
        return []
    return [str(v) for v in list(value)]


# After a top model's name that is a page's, not the registry's (`top_known` false): a reader
# tells 'Claude 3.5 Sonnet' (a page's undated name) from 'Claude 3.5 Sonnet (2024-06-20)'.
UNLISTED = " (unlisted)"


def top_names(row: Any) -> list[str]:
    """A level row's top models as people read them (issue 51): the registry's display names, and
    the pages' names of the models it does not know marked `UNLISTED` (the views' `top_names`,
    `top_known`; an agent system's own name is never a registry model: not marked); the ids
    (`top_models`) for a frame without them."""
    shown, known = names(row.get("top_names")), row.get("top_known")
    if not shown:
        return names(row.get("top_models"))
    systems = row.get("population") == POPULATION_SYSTEMS
    flags = [True] * len(shown) if systems or _missing(known) else [bool(k) for k in list(known)]
    return [n if k else n + UNLISTED for n, k in zip(shown, flags)]


def clip(v: Any, n: int) -> str:
    if _missing(v):
        return ""
    text = " ".join(str(v).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def evidence(value: Any) -> dict:
    """The evidence of a test as a dict ({} when absent or not a JSON object)."""
    ev = decoded(value)
    return ev if isinstance(ev, dict) else {}


def bin_badge(level: Any) -> str:
    if _missing(level):
        return ""
    color = BIN_COLORS.get(str(level), "#ddd")
    return f'<span class="bin" style="background:{color}">{esc(level)}</span>'


def table(headers: list[str], rows: list[list[str]], cls: str = "", wrap: Iterable[str] = ()) -> str:
    """Rows of already-escaped HTML cells; cells do not wrap except in the `wrap` columns (free text)."""
    if not rows:
        return '<p class="none">(none)</p>'
    wide = {headers.index(h) for h in wrap if h in headers}
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f'<td class="wrap">{c}</td>' if i in wide else f"<td>{c}</td>"
                                    for i, c in enumerate(r)) + "</tr>" for r in rows)
    cls_attr = f' class="{cls}"' if cls else ""
    return f'<div class="scroll"><table{cls_attr}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def frame(frames: Mapping[str, pd.DataFrame], key: str) -> pd.DataFrame:
    df = frames.get(key)
    return df if isinstance(df, pd.DataFrame) else pd.DataFrame()


def default_params(levels: pd.DataFrame) -> pd.DataFrame:
    """The rows of the default parameters (k, alpha) when the frame has several."""
    if {"k", "alpha"} <= set(levels.columns) and len(levels):
        keep = (levels["k"] == SATURATION_K) & (levels["alpha"] == SATURATION_ALPHA)
        if keep.any():
            return levels[keep]
    return levels


def tabled(df: pd.DataFrame) -> pd.DataFrame:
    """Frames are per leaderboard table (`table_id`, registry.tables); a frame without one has one
    table per benchmark."""
    if len(df) and "table_id" not in df.columns and "benchmark" in df.columns:
        return df.assign(table_id=df["benchmark"])
    return df


def table_keys(*frames: pd.DataFrame) -> dict[str, tuple[str, str]]:
    """table_id -> (source, table_version) from the frames' key columns (stored beside the id:
    migration 084), the first frame that has a table first; a table no frame keys is absent."""
    out: dict[str, tuple[str, str]] = {}
    for df in frames:
        if len(df) and {"table_id", "source", "table_version"} <= set(df.columns):
            for t, s, v in zip(df["table_id"], df["source"], df["table_version"]):
                out.setdefault(str(t), ("" if _missing(s) else str(s), "" if _missing(v) else str(v)))
    return out


def versions(*frames: pd.DataFrame) -> dict[str, str]:
    """table_id -> its version ('2024-11-25'; '' without one) from the frames' key columns."""
    return {t: v for t, (_, v) in table_keys(*frames).items()}


def level_of(r: Mapping[str, Any]) -> Any:
    """The stored committed level of a saturation row (migration 020), else its raw bin."""
    level = r.get("level")
    return r.get("bin") if _missing(level) else level


def table_name(r: Mapping[str, Any]) -> str:
    """'HumanEval (EvalPlus)': the table's name, else the benchmark's, else its id."""
    for key in ("table_name", "name", "benchmark"):
        if not _missing(r.get(key)):
            return str(r[key])
    return ""


# A table not observed for longer than this is stale: it leaves the page's headline and "saturated now"
# list (its S describes an old board), is named with its age, and shows no trend or forecast.
STALE_AFTER_DAYS = 180


def staleness_days(row: Mapping[str, Any], now: pd.Timestamp) -> float | None:
    """Days from the benchmark's newest observation to `now` (a stored `staleness_days` wins)."""
    stored = row.get("staleness_days")
    if stored is not None and not _missing(stored):
        return float(stored)
    as_of = naive(row.get("as_of"))
    return None if as_of is None else max((now - as_of) / pd.Timedelta(days=1), 0.0)


def is_stale(row: Mapping[str, Any], now: pd.Timestamp) -> bool:
    """Not observed for more than STALE_AFTER_DAYS (an unknown age is not stale)."""
    age = staleness_days(row, now)
    return age is not None and age > STALE_AFTER_DAYS


def _slope(v: float) -> str:
    """A slope with sensible precision: two decimals below 10, three significant digits above."""
    return f"{v:+.2f}" if abs(v) < 10 else f"{v:+.3g}" if abs(v) < 1000 else f"{v:+.0f}"


def ci_uninformative(slope: float, low: float, high: float, unit: str | None = None) -> bool:
    """True when a slope's interval is too wide to say anything about it (printed as such)."""
    width = high - low
    if unit == "pp/month" and width > UNINFORMATIVE_CI_PP:
        return True
    return width > UNINFORMATIVE_CI_FACTOR * max(abs(slope), 1e-9)


def trend_text(status, slope, low, high, stalled, end, stale_days, unit: str | None = None, points=None) -> str:
    """A trend as a person reads it: slope [95% CI] up to its end date, how stale, or why there is none.

    Never "+0.00 [+0.00, +0.00]" nor "NaN": a window without data says so, a flat window says
    "no record", a slope without a CI is marked as such, and an interval too wide to mean
    anything ("+14.78 [+0.00, +446.45]") is called uninformative instead of printed.
    """
    if _missing(status):
        return ""
    suffix = f" {unit}" if isinstance(unit, str) and unit else ""
    n = "" if _missing(points) else f", {int(points)} records"
    if status == "no_data_in_window":
        text = "no data in window"
    elif status == "no_record_in_window":
        text = "flat (no record in window)"
    elif _missing(slope):
        text = str(status).replace("_", " ")
    elif _missing(low) or _missing(high):
        text = f"{_slope(slope)}{suffix} (too few points for an interval{n})"
    elif ci_uninformative(float(slope), float(low), float(high), unit):
        text = f"{_slope(slope)}{suffix} (interval uninformative{n})"
    else:
        text = f"{_slope(slope)}{suffix} [{_slope(low)}, {_slope(high)}]"
    if stalled is True:
        text += " stalled"
    end = naive(end)
    if end is not None:
        text += f" to {end:%Y-%m-%d}"
        if not _missing(stale_days) and stale_days > 0:
            text += f" ({int(stale_days)} d stale)"
    return text


def trend_cell(t: Mapping[str, Any] | None) -> str:
    """The stored trend as `trend_text` words it (escaped); empty without a trend row."""
    if t is None:
        return ""
    return esc(trend_text(t.get("trend_status"), t.get("slope_per_month"), t.get("slope_ci_low"),
                          t.get("slope_ci_high"), t.get("stalled"), t.get("trend_end"), t.get("stale_days"),
                          t.get("slope_unit"), t.get("slope_points")))


def forecast_text(status: Any, when: Any, reason: Any = None, reached_at: Any = None) -> str:
    """A forecast whose date agrees with its status: a date only when the status has one
    ('ok': `when`, the forecast date; 'reached': `reached_at`, the observed date), never
    "insufficient_data 2026-03"."""
    if _missing(status):
        return ""
    day = naive(when) if status == "ok" else naive(reached_at) if status == "reached" else None
    if status == "ok" and day is not None:
        text = f"threshold forecast {day:%Y-%m}"
    elif status == "reached" and day is not None:
        text = f"threshold reached {day:%Y-%m}"
    else:
        text = str(status).replace("_", " ")
    if not _missing(reason) and status not in ("ok", "reached"):
        text += f" ({reason})"
    return text


# The paper's "stagnation" flag (saturated while the frontier is far below the ceiling: the top k are
# statistically tied there), as the report words it: a statement about bunching at one date, never a
# trend word that could contradict a rising slope printed beside it (issue 53).
BUNCHED_LABEL = "top-k tied far below ceiling"


# The backtest's methods as the report names them (analysis/backtest.py).
METHOD_NAMES = {PERSISTENCE: "no change", THEIL_SEN: "Theil–Sen line", DAMPED: "damped Theil–Sen line",
                LOGISTIC: "logistic"}


def track_record_text(summary: pd.DataFrame, metric: Any, method: Any = None) -> str:
    """The backtest's record on this kind of table (forecast_backtest_summary) at its longest
    horizon: of `method` (the method that made a forecast) where the backtest scored it, else of
    the method the kind's forecasts use, or that no method beat no change; "" without a backtest."""
    if summary is None or not len(summary) or _missing(metric):
        return ""
    kind, unit, _ = kind_of(str(metric))
    same = summary[summary["kind"] == kind]
    rows = same[same["method"] == method] if not _missing(method) and (same["method"] == method).any() \
        else same[same["chosen"].fillna(False).astype(bool)]
    if not len(rows):
        return ""
    r = rows.sort_values("horizon_months").iloc[-1]
    unit = unit if kind == PROPORTION else str(r.get("unit") or unit)   # the stored unit of a kind of its own
    h, n, tables = int(r["horizon_months"]), int(r["n"]), int(r["n_tables"])
    if r["method"] == PERSISTENCE:
        return (f"backtest: no method beat no change on this kind of table ({h}-month no-change MAE "
                f"{float(r['naive_mae']):.1f} {unit}, n = {n} from {tables} tables): no forecast earned")
    cov = "" if _missing(r.get("coverage")) else f", {float(r['coverage']) * 100:.0f} % inside their 80 % interval"
    worse = "" if float(r["mae"]) < float(r["naive_mae"]) else "; no better than no change"
    name = METHOD_NAMES.get(str(r["method"]), str(r["method"]))
    return (f"{h}-month {name} forecasts on this kind of table: MAE {float(r['mae']):.1f} {unit} "
            f"(no change {float(r['naive_mae']):.1f}){cov}, n = {n} from {tables} tables{worse}")


def with_track_record(frame: pd.DataFrame, summary: pd.DataFrame | None) -> pd.DataFrame:
    """`frame` (rows with a `metric`, optionally forecast_status and forecast_method) with
    `track_record`: `track_record_text` of its kind, for a row with a forecast to make (not one
    reached or unavailable); a dated forecast quotes its own method's record."""
    out = frame.copy()
    if summary is None or not len(summary) or "metric" not in out.columns:
        out["track_record"] = ""
        return out
    status = out["forecast_status"] if "forecast_status" in out.columns else pd.Series(None, index=out.index)
    method = out["forecast_method"] if "forecast_method" in out.columns else pd.Series(None, index=out.index)
    out["track_record"] = [
        "" if _missing(m) or st in ("reached", "unavailable") else
        track_record_text(summary, m, meth if st == "ok" else None)
        for m, st, meth in zip(out["metric"], status, method)]
    return out


def metric_is_proportion(*rows: Mapping[str, Any] | None) -> bool:
    """Scores stored as proportions (accuracies), drawn and printed in %."""
    return any((r or {}).get("metric") == "proportion" for r in rows)


def score_text(value: Any, proportion: bool) -> str:
    """A score in its unit: % for an accuracy, the stored number otherwise."""
    if _missing(value):
        return ""
    return pct(value) if proportion else f"{float(value):.4g}"

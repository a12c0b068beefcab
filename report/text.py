"""The text report (`benchwatch report`): what the database says now, at most TEXT_WIDTH columns wide.

Pure: frames in, a string out. Each table fits the width (free-text columns wrap inside their
column, other cells are shortened with "…"); a missing value is an empty cell, never "NaN"; a
forecast prints a date only when its status has one (`report_common.forecast_text`).
"""

from __future__ import annotations

import textwrap
from datetime import datetime
from typing import Any, Sequence

import pandas as pd

from analysis.constants import SATURATION_ALPHA, SATURATION_K
from common.jsonsafe import is_null as _missing
from report.base import BUNCHED_LABEL, forecast_text, level_of, names, trend_text, top_names

TEXT_WIDTH = 120
GAP = 2          # spaces between columns
MIN_COLUMN = 6   # a shortened column keeps at least this many characters

SATURATION_TITLE = (f"Saturation (S_index, k={SATURATION_K}, α={SATURATION_ALPHA}; level = the bin committed after "
                    "hysteresis, bin of S = the bin of this S alone; P(bin holds) = share of re-evaluations at the "
                    "real sampling noise of n items whose S keeps the bin; ranked within the paper's scale, rows on "
                    "another scale last). Under each row: trend of the frontier (per month, 95% CI, to its last "
                    "result), forecast, top models, noise model.")


def cell(value: Any) -> str:
    """A value as table text: empty when missing (never 'NaN'), one line."""
    if _missing(value):
        return ""
    if isinstance(value, float):
        return f"{value:g}"
    return " ".join(str(value).split())


def _shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def fit_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], *, wrap: Sequence[str] = (),
              details: Sequence[str] | None = None, width: int = TEXT_WIDTH) -> str:
    """A fixed-width table at most `width` columns wide: the widest columns give way first; a
    column in `wrap` wraps inside its width, the others are shortened with "…". `details`: one
    free line per row, printed indented and wrapped under it."""
    if not rows:
        return "(none)"
    text = [[cell(c) for c in r] for r in rows]
    widths = [max([len(h)] + [len(r[i]) for r in text]) for i, h in enumerate(headers)]
    floor = [min(w, max(MIN_COLUMN, len(h) if h in wrap else MIN_COLUMN)) for w, h in zip(widths, headers)]
    while sum(widths) + GAP * (len(widths) - 1) > width:
        i = max(range(len(widths)), key=lambda j: (widths[j] - floor[j], headers[j] in wrap))
        if widths[i] <= floor[i]:
            break
        widths[i] -= 1
    numeric = [all(_numberish(r[i]) for r in text) for i in range(len(headers))]
    sep = " " * GAP

    def line(values: Sequence[str]) -> str:
        out = [v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric)]
        return sep.join(out).rstrip()

    out = [line([_shorten(h, w) for h, w in zip(headers, widths)]), line(["-" * w for w in widths])]
    for k, r in enumerate(text):
        parts = [textwrap.wrap(v, w) or [""] if h in wrap else [_shorten(v, w)]
                 for v, w, h in zip(r, widths, headers)]
        for j in range(max(len(p) for p in parts)):
            out.append(line([p[j] if j < len(p) else "" for p in parts]))
        if details is not None and details[k]:
            out += textwrap.wrap(details[k], width, initial_indent="    ", subsequent_indent="      ")
    return "\n".join(out)


def _numberish(v: str) -> bool:
    try:
        float(v.replace("%", "").replace("pp", ""))
        return True
    except ValueError:
        return v == ""


def _population(v: Any) -> str:
    return {"systems_per_model": "sys/model"}.get(str(v), str(v)) if not _missing(v) else "models"


def levels_text(levels: pd.DataFrame) -> str:
    """One row per table and scope with its numbers; trend, forecast, top models and noise model under it."""
    headers = ["table", "scope", "population", "level", "S", "bin of S", "P(bin holds)", "scale", "n", "models"]
    rows, details = [], []
    for r in levels.to_dict("records"):
        comparable, scale = r.get("comparable"), r.get("scale")
        scale_text = ("paper" if comparable is True else "own") if isinstance(scale, str) else ""
        bin_text = cell(r.get("bin"))
        rows.append([r.get("name"), "post" if r.get("scope") == "post_cutoff" else r.get("scope"),
                     _population(r.get("population")), level_of(r),
                     "" if _missing(r.get("s_index")) else f"{float(r['s_index']):.3f}", bin_text,
                     "n/a" if _missing(r.get("bin_hold_prob")) else f"{float(r['bin_hold_prob']):.2f}", scale_text,
                     "" if _missing(r.get("n_items")) else str(int(r["n_items"])),
                     "" if _missing(r.get("n_models")) else str(int(r["n_models"]))])
        trend = trend_text(r.get("trend_status"), r.get("slope_per_month"), r.get("slope_ci_low"),
                           r.get("slope_ci_high"), r.get("stalled"), r.get("trend_end"), r.get("stale_days"),
                           r.get("slope_unit"))
        forecast = forecast_text(r.get("forecast_status"), r.get("forecast_date"), reached_at=r.get("reached_at"))
        top = top_names(r)
        facts = [BUNCHED_LABEL if r.get("stagnation") is True else "",
                 f"scale {scale}: not comparable with the paper's" if scale_text == "own" else "",
                 f"trend {trend}" if trend else "",
                 f"forecast: {forecast}" + (f" ({r['track_record']})" if r.get("track_record") else "")
                 if forecast else "",
                 ("top: " + ", ".join(top[:3]) + (", …" if len(top) > 3 else "")) if top else "",
                 f"noise: {r['uncertainty']}" if not _missing(r.get("uncertainty")) else ""]
        details.append("; ".join(f for f in facts if f))
    return fit_table(headers, rows, details=details)


def suspects_text(suspects: pd.DataFrame, suspicions: pd.DataFrame | None = None) -> str:
    """The flagged tests with their suspicion state (pending / confirmed, since when; the q of the
    newest analysis, which may move while the test's data, p and effect stay)."""
    if not len(suspects):
        return "(none)"
    state: dict[tuple, str] = {}
    if suspicions is not None and len(suspicions):
        for r in suspicions.itertuples():
            state[(r.model, r.benchmark, r.signal, r.source, r.detail)] = (
                f"{r.state} since {pd.Timestamp(r.first_flagged_at):%Y-%m-%d}, {r.distinct_data} data version(s)")
    rows = []
    for r in suspects.to_dict("records"):
        key = tuple("" if v is None else v for v in (r["model"], r["benchmark"], r["signal"], r.get("source", ""),
                                                    r.get("detail", "")))
        effect = "" if _missing(r.get("effect")) else f"{float(r['effect']) * 100:+.1f} pp" + (
            "" if _missing(r.get("se")) else f" ± {float(r['se']) * 100:.1f}")
        rows.append([r["model"], r["benchmark"], r["signal"], effect,
                     "" if _missing(r.get("p_value")) else f"{float(r['p_value']):.2g}",
                     "" if _missing(r.get("q_value")) else f"{float(r['q_value']):.2g}", r.get("status"),
                     state.get(key, "")])
    return fit_table(["model", "benchmark", "signal", "effect", "p", "q", "status", "suspicion"], rows,
                     wrap=("suspicion",))


def frame_text(df: pd.DataFrame, wrap: Sequence[str] = ()) -> str:
    """Any frame as a fitted table (dates as days)."""
    if not len(df):
        return "(none)"
    rows = [[v.strftime("%Y-%m-%d") if isinstance(v, (pd.Timestamp, datetime)) and not _missing(v) else v
             for v in r] for r in df.itertuples(index=False)]
    return fit_table([str(c) for c in df.columns], rows, wrap=wrap)


def render_text(sections: Sequence[tuple[str, str]], now: datetime, notes: Sequence[str] = ()) -> str:
    """The report: a dated header, then each (title, body) with its title wrapped to the width;
    `notes` (why a level differs from its bin) follow the first section."""
    out = [f"benchwatch report, {now:%Y-%m-%d %H:%M} UTC"]
    for i, (title, body) in enumerate(sections):
        lines = textwrap.wrap(title, TEXT_WIDTH)
        out += ["", *lines, "-" * max(len(x) for x in lines), body]
        if i == 0 and notes:
            out += [""] + [x for n in notes for x in textwrap.wrap(n, TEXT_WIDTH, initial_indent="  ",
                                                                   subsequent_indent="    ")]
    return "\n".join(out)

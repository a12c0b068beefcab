"""The HTML and text reports' parts on small frames written here: what leads the page, chart axes and
labels, trend and forecast wording, the palette, the text report's width (issue 25)."""

from __future__ import annotations

import re
from datetime import datetime, timezone

import pandas as pd
import pytest

from report.base import PALETTE, forecast_text, trend_text
from report.html import render_report
from report.overview import bin_range, headline
from report.text import TEXT_WIDTH, fit_table, levels_text

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)
T = pd.Timestamp


def _level(bench: str, table_id: str, s: float, bin_: str, hold: float | None = None, **kw) -> dict:
    return {"benchmark": bench, "table_id": table_id, "scope": "all", "population": "models", "k": 5, "alpha": 0.5,
            "s_index": s, "bin": bin_, "level": bin_, "bin_hold_prob": hold, "metric": "proportion",
            "as_of": T("2026-05-01", tz="UTC"), "name": bench.upper(), "table_name": f"{bench.upper()} ({table_id})",
            "n_items": 500, "n_models": 20, "bin_probs": [0.0, 0.0, 0.05, 0.15, 0.8], **kw}


def _frontier(table_id: str, bench: str, days: list[str], values: list[float], models: list[str]) -> pd.DataFrame:
    return pd.DataFrame({"table_id": table_id, "benchmark": bench, "k": 5, "as_of": [T(d, tz="UTC") for d in days],
                         "frontier": values, "frontier_model": models, "is_record": True,
                         "topk_mean": [v - 0.02 for v in values]})


def test_trend_text_says_when_an_interval_is_uninformative_and_never_prints_nan():
    wide = trend_text("ok", 14.78, 0.0, 446.45, None, None, None, "pp/month", 4)
    assert wide == "+14.8 pp/month (interval uninformative, 4 records)" and "446" not in wide
    assert trend_text("ok", 1.0, 0.49, 1.5, None, None, None, "pp/month") == "+1.00 pp/month [+0.49, +1.50]"
    assert "interval uninformative" in trend_text("ok", 0.5, -40.0, 41.0, None, None, None, "elo/month")
    assert trend_text("ok", float("nan"), float("nan"), float("nan"), None, None, None) == "ok"
    assert "nan" not in trend_text("too_few_points", 2.0, float("nan"), float("nan"), None, pd.NaT, float("nan")).lower()
    assert trend_text(None, 1, 0, 2, None, None, None) == ""


def test_forecast_dates_agree_with_their_status():
    assert forecast_text("insufficient_data", T("2026-03-09")) == "insufficient data"
    assert forecast_text("reached", None, reached_at=T("2025-06-02")) == "threshold reached 2025-06"
    assert forecast_text("reached", T("2025-06-02")) == "reached"      # a forecast date is no reached date
    assert forecast_text("ok", T("2027-01-02")) == "threshold forecast 2027-01"
    assert forecast_text("unavailable", T("2026-03-09"), "flat") == "unavailable (flat)"
    assert forecast_text(float("nan"), None) == ""


def test_the_palette_is_colour_blind_safe_and_has_no_near_twins():
    okabe_ito = {"#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000"}
    assert set(PALETTE) <= okabe_ito and len(set(PALETTE)) == len(PALETTE)
    rgb = [tuple(int(c[i:i + 2], 16) for i in (1, 3, 5)) for c in PALETTE]
    gaps = [sum((a - b) ** 2 for a, b in zip(x, y)) ** 0.5 for i, x in enumerate(rgb) for y in rgb[i + 1:]]
    assert min(gaps) > 60     # the old palette had two reds 43 apart


def test_bin_range_spans_the_central_95_percent_of_the_stored_bin_probabilities():
    assert bin_range([0.0, 0.0, 0.05, 0.15, 0.8]) == (0.3, 1.0)       # 5 % in moderate: more than the 2.5 % tail
    assert bin_range([0.0, 0.0, 0.0, 0.0, 1.0]) == (0.9, 1.0)
    assert bin_range([0.0, 0.5, 0.5, 0.0, 0.0]) == (0.01, 0.7)
    assert bin_range(None) is None and bin_range([1.0]) is None


def test_the_headline_is_what_changed_recently_or_sits_near_a_bin_edge():
    levels = pd.DataFrame([_level("steady", "steady:src", 0.95, "very high", 0.9),
                           _level("edgy", "edgy:src", 0.905, "very high", 0.3),
                           _level("moved", "moved:src", 0.5, "moderate", 0.9),
                           _level("old", "old:src", 0.5, "moderate", 0.9),
                           _level("waits", "waits:src", 0.5, "moderate", 0.9, pending_bin="high")])
    changes = pd.DataFrame({"table_id": ["moved:src", "old:src"], "benchmark": ["moved", "old"],
                            "from_level": ["low", "low"], "to_level": ["moderate", "moderate"],
                            "changed_at": [T("2026-05-20", tz="UTC"), T("2025-01-01", tz="UTC")]})
    why = headline(levels, changes, T("2026-06-01"))
    assert set(why) == {"edgy", "moved", "waits"}
    assert why["moved"] == "level changed low → moderate on 2026-05-20"
    assert "near a bin edge" in why["edgy"] and "0.30" in why["edgy"]
    assert "awaits confirmation" in why["waits"]


def test_page_order_contents_folding_and_a_frontier_on_its_own_data_with_labelled_records():
    levels = pd.DataFrame([_level("bx", "bx:src", 0.905, "very high", 0.3, area="coding",
                                  as_of=T("2025-07-01", tz="UTC"),   # the primary's newest observation
                                  staleness_days=20.0),                # observed recently: not stale
                           _level("calm", "calm:src", 0.5, "moderate", 0.95, area="math"),
                           {**_level("none", "none:src", float("nan"), None), "reason": "fewer than k models"}])
    frontier = pd.concat([_frontier("bx:src", "bx", ["2025-01-10", "2025-03-10", "2025-06-10"], [0.6, 0.7, 0.8],
                                    ["model-a", "model-<b>", "model-c"]),
                          _frontier("bx:other", "bx", ["2026-01-10", "2026-03-10"], [0.5, 0.55], ["o1", "o2"])])
    tables = pd.DataFrame({"table_id": ["bx:src", "bx:other", "calm:src", "none:src"],
                           "benchmark": ["bx", "bx", "calm", "none"], "is_primary": [True, False, True, True],
                           "name": ["BX (src)", "BX (other)", "CALM (src)", "NONE (src)"],
                           "primary_reason": ["the longest dated <history>", None, "its only table", "its only table"]})
    page = render_report({"levels": levels, "frontier": frontier, "tables": tables}, now=NOW)
    order = [page.index(x) for x in ('id="now"', 'id="overview"', 'class="strips"', "<nav>", 'id="headline"',
                                     'id="bench-bx"',
                                     'id="benchmarks"', '<details class="family">', 'id="bench-calm"')]
    assert order == sorted(order)
    nav = page[page.index("<nav>"):page.index("</nav>")]
    assert '#bench-bx"' in nav and '#bench-calm"' in nav and '#bench-none"' not in nav   # no index, no change
    assert 'id="bench-none"' in page                    # its section is still there (the digest links to it)
    # the primary table's frontier is drawn on its own data (2025), not on the other table's 2026
    section = page[page.index('id="bench-bx"'):]
    assert "primary table bx:src (the longest dated &lt;history&gt;)" in section     # which and why, escaped
    first_frontier = section[section.index("frontier of BX (bx:src)"):]
    first_frontier = first_frontier[:first_frontier.index("</svg>")]
    ticks = re.findall(r'class="tick">([^<]*)<', first_frontier)
    assert ticks and not [t for t in ticks if t.startswith("2026")], ticks
    assert any(t.endswith("%") for t in ticks)              # an accuracy axis in %
    labels = re.findall(r'class="lbl" fill="[^"]*">([^<]*)<', first_frontier)
    assert "model-c" in labels and "model-&lt;b&gt;" in labels    # records named, escaped
    other = section[section.index("frontier of BX (other)"):]
    assert "2026" in other[:other.index("</svg>")]
    # the overview dot of bx: S, its bin colour, a link to the section
    strips = page[page.index('class="strips"'):page.index('id="headline"')]
    assert 'href="#bench-bx"' in strips and "S 0.905, bin very high" in strips


def test_the_text_report_fits_120_columns_without_nan():
    long = "A very long leaderboard table name that a source made up (with its version 2026-01-08)"
    levels = pd.DataFrame([{**_level("bx", "bx:src", 0.905, "very high", 0.3), "name": long,
                            "trend_status": "ok", "slope_per_month": 14.78, "slope_ci_low": 0.0,
                            "slope_ci_high": 446.45, "slope_unit": "pp/month", "forecast_status": "insufficient_data",
                            "forecast_date": T("2026-03-09"), "top_models": ["m" * 60, "b", "c", "d"],
                            "uncertainty": "binomial(n_eff=n^alpha)", "comparable": True, "scale": "paper_binomial"},
                           {**_level("gap", "gap:src", 0.2, "low"), "n_models": float("nan"), "n_items": float("nan"),
                            "trend_status": float("nan"), "forecast_status": float("nan")}])
    text = levels_text(levels)
    lines = text.splitlines()
    assert max(len(x) for x in lines) <= TEXT_WIDTH
    assert "nan" not in text.lower() and "NaN" not in text
    assert "interval uninformative" in text and "forecast: insufficient data;" in text
    assert "2026-03" not in text
    assert lines[0].startswith("table") and "P(bin holds)" in lines[0]
    wide = fit_table(["a", "free text"], [["x" * 200, "word " * 80]], wrap=("free text",))
    assert max(len(x) for x in wide.splitlines()) <= TEXT_WIDTH and "…" in wide
    assert fit_table(["a"], []) == "(none)"


@pytest.mark.parametrize("status", ["no_data_in_window", "no_record_in_window"])
def test_trend_text_without_a_slope_names_the_reason(status):
    text = trend_text(status, float("nan"), float("nan"), float("nan"), None, T("2025-01-01"), 5)
    assert text.endswith("to 2025-01-01 (5 d stale)") and "nan" not in text


def test_the_page_opens_with_what_is_saturated_now_strongest_first_and_stale_tables_demoted():
    """The answer first: recently observed saturated tables by S (one line per benchmark, at most
    NOW_SHOWN, each linking to its section), the recent level changes newest first, and the stale
    saturated tables only counted, with their age; no more than 25 benchmark links before the first chart."""
    from report.base import STALE_AFTER_DAYS
    from report.overview import NOW_SHOWN
    rows = [_level(f"b{i:02d}", f"b{i:02d}:src", 0.70 + i * 0.01, "high" if i < 20 else "very high", 0.8)
            for i in range(25)]
    rows.append(_level("old", "old:src", 0.999, "very high", 0.99, as_of=NOW - pd.Timedelta(days=STALE_AFTER_DAYS + 600)))
    rows.append(_level("low", "low:src", 0.2, "low", 0.9))
    changes = pd.DataFrame({"table_id": ["b03:src", "b24:src", "low:src"], "benchmark": ["b03", "b24", "low"],
                            "from_level": ["moderate", "high", "moderate"], "to_level": ["high", "very high", "low"],
                            "changed_at": [T("2026-05-20", tz="UTC"), T("2026-05-28", tz="UTC"), T("2026-01-01", tz="UTC")]})
    page = render_report({"levels": pd.DataFrame(rows), "level_changes": changes}, now=NOW)
    now = page[page.index('<section id="now">'):page.index("</section>", page.index('<section id="now">'))]
    first = re.findall(r'<li><a href="#bench-([a-z0-9_-]+)"', now)
    assert first[:NOW_SHOWN] == [f"b{i:02d}" for i in range(24, 24 - NOW_SHOWN, -1)]   # strongest S first
    assert "bench-old" not in now and "not observed for more than 180 days" in now and "up to 780 days" in now
    assert "and 15 more" in now
    changed = now[now.index("Changed in the last"):]
    assert changed.index("b24") < changed.index("b03") and "low:src" not in changed and "LOW" not in changed
    before_chart = page[:page.index("<svg")]
    assert len(re.findall(r'href="#bench-', before_chart)) <= 25


def test_the_window_control_opens_on_its_most_recent_informative_window():
    """Not on "all items" (most cutoffs fall after its start): on the newest window that still ranks
    WINDOW_OPEN_MIN_RANKED models; a window ranking fewer is offered but not opened."""
    from report.items import WINDOW_OPEN_MIN_RANKED, window_control
    n = WINDOW_OPEN_MIN_RANKED
    starts = [T("2024-01-01")] * (n + 1) + [T("2024-04-01")] * n + [T("2024-07-01")] * (n - 1)
    models = [f"m{i}" for i in range(n + 1)] + [f"m{i}" for i in range(n)] + [f"m{i}" for i in range(n - 1)]
    w = pd.DataFrame({"window_start": starts, "model": models, "accuracy": 0.5, "se": 0.01, "n_items": 30})
    page = window_control(w, {}, "win-x")
    assert re.findall(r'id="(win-x-\d)"( checked)?', page) == [("win-x-0", ""), ("win-x-1", " checked"), ("win-x-2", "")]
    # accuracy right after the model: on a phone the number is never the column scrolled out of view
    assert "<th>model</th><th>accuracy</th>" in page.replace("\n", "")

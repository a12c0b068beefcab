"""The backtest where people look (issue 53): each forecast line carries its kind's track record,
and the report has a section with the backtest by horizon as a chart (escaped, self-contained)."""

from __future__ import annotations

from datetime import datetime, timezone

import pandas as pd

from report.backtest import backtest_section
from report.base import track_record_text, with_track_record
from report.html import render_report
from report.text import levels_text

NOW = datetime(2026, 3, 1, tzinfo=timezone.utc)
EVIL = '"><img src=x onerror=alert(1)>'


def _summary(chosen: str = "damped_theil_sen", kind: str = "proportion") -> pd.DataFrame:
    rows = []
    for method, mae in (("persistence", 20.0), ("damped_theil_sen", 5.1), ("logistic", 25.0)):
        for h, scale in ((3, 0.25), (6, 0.5), (12, 1.0)):
            rows.append({"kind": kind, "unit": "pp" if kind == "proportion" else kind, "horizon_months": h,
                         "method": method, "n": int(240 * scale), "n_tables": 31, "mae": mae * scale,
                         "mae_low": mae * scale * 0.8, "mae_high": mae * scale * 1.2, "naive_mae": 20.0 * scale,
                         "naive_mae_low": 16.0 * scale, "naive_mae_high": 24.0 * scale, "bias": -0.4,
                         "coverage": 0.81, "coverage_low": 0.74, "coverage_high": 0.88, "raw_coverage": None,
                         "n_raw": 0, "q_low": -1.0, "q_high": 2.0, "nominal": 0.8, "chosen": method == chosen})
    return pd.DataFrame(rows)


def test_a_forecast_line_quotes_the_record_of_its_kind():
    s = _summary()
    assert track_record_text(s, "proportion") == ("12-month damped Theil–Sen line forecasts on this kind of table: "
                                                  "MAE 5.1 pp (no change 20.0), 81 % inside their 80 % interval, "
                                                  "n = 240 from 31 tables")
    # a dated logistic forecast quotes the logistic's own record, and says it is no better than no change
    assert track_record_text(s, "proportion", "logistic").startswith("12-month logistic forecasts")
    assert track_record_text(s, "proportion", "logistic").endswith("no better than no change")
    assert "no method beat no change" in track_record_text(_summary("persistence"), "proportion")
    assert track_record_text(s, "elo") == "" and track_record_text(pd.DataFrame(), "proportion") == ""
    rows = pd.DataFrame({"metric": ["proportion", "proportion", "proportion", None],
                         "forecast_status": ["insufficient_data", "reached", "ok", "insufficient_data"],
                         "forecast_method": ["theil_sen", "observed", "logistic", None]})
    got = with_track_record(rows, s)["track_record"].tolist()
    assert got[0].startswith("12-month damped") and got[1] == "" and got[2].startswith("12-month logistic")
    assert got[3] == ""


def test_the_text_report_prints_the_record_beside_the_forecast():
    level = {"benchmark": "b", "table_id": "b:s", "name": "B", "scope": "all", "population": "models",
             "s_index": 0.5, "bin": "moderate", "level": "moderate", "bin_hold_prob": 0.9, "n_items": 300,
             "n_models": 20, "stagnation": False, "trend_status": "ok", "slope_per_month": 1.0,
             "slope_ci_low": 0.5, "slope_ci_high": 1.5, "slope_unit": "pp/month", "forecast_status": "insufficient_data",
             "forecast_method": "theil_sen", "forecast_date": None, "metric": "proportion", "top_models": ["a"],
             "uncertainty": "binomial", "comparable": True, "scale": "paper_binomial"}
    text = levels_text(with_track_record(pd.DataFrame([level]), _summary()))
    flat = " ".join(text.split())
    assert "forecast: insufficient data (12-month damped Theil–Sen line forecasts on this kind of table: MAE 5.1 pp" \
        in flat


def test_the_section_charts_the_backtest_by_horizon_and_escapes_every_text():
    html = backtest_section(_summary(kind=EVIL))
    assert "<img" not in html and "&lt;img src=x" in html
    assert html.count("<svg") == 1 and "3 mo" in html and "12 mo" in html
    # the chosen method and no change, a dot per horizon each, with their 90 % CIs as error bars
    svg = html[html.index("<svg"):html.index("</svg>")]
    assert svg.count("<circle") == 6 and svg.count("<path") == 6
    assert "damped Theil–Sen line *" in html and "5.1 [4.1, 6.1]" in html and "81 % [74, 88]" in html
    assert "No backtest stored" in backtest_section(pd.DataFrame())


def test_each_horizon_says_which_method_its_forecasts_use():
    """A method is used only at the horizons where it beat no change: the heading names each
    horizon's choice, the table stars those rows, the chart draws the chosen ones beside no change."""
    s = _summary()
    s.loc[s["horizon_months"] == 3, "chosen"] = s.loc[s["horizon_months"] == 3, "method"] == "persistence"
    html = backtest_section(s)
    assert "3 months: no forecast (none beat no change); 6 months: damped Theil–Sen line; 12 months: damped" in html
    assert html.count(" *</td>") == 3                          # no change at 3 months, the damped line at 6 and 12
    svg = html[html.index("<svg"):html.index("</svg>")]
    assert svg.count("<circle") == 4                           # the line at 6 and 12 months, no change beside it
    assert track_record_text(s, "proportion").startswith("12-month damped")


def test_the_page_links_the_section():
    page = render_report({"backtest": _summary()}, now=NOW)
    assert 'href="#forecast-record"' in page and 'id="forecast-record"' in page
    assert page.index('id="forecast-record"') < page.index('id="post-cutoff"')


def test_a_section_shows_the_frontier_forecast_the_backtest_calibrated():
    from report.backtest import live_forecast_text
    s = _summary().assign(damping=lambda d: d["method"].map({"damped_theil_sen": 0.5}))
    trend = {"metric": "proportion", "frontier": 0.60, "slope_per_month": 1.0, "slope_unit": "pp/month",
             "trend_end": pd.Timestamp("2026-01-01"), "direction": "higher"}
    text = live_forecast_text(trend, s)
    # the line rises 12 pp in 12 months, half is kept: 66 %; q_low/q_high of the 12-month row: -1/+2 pp
    assert text.startswith("frontier by 2027-01 (12 months after its last result): 66.0% [65.0%, 68.0%]"), text
    assert "damped Theil–Sen line, 80 % interval calibrated on 240 backtest forecasts" in text
    assert live_forecast_text(trend, _summary("persistence")) == ""          # no method earned a forecast
    assert live_forecast_text({**trend, "slope_per_month": float("nan")}, s) == ""

"""A stored forecast never contradicts its status (issue 53): a date only where the status has one
('ok'), the date a threshold was reached under its own name (`reached_at`), old rows repaired by
migration 075; and the paper's "stagnation" flag is never worded as a trend beside a rising slope."""

from __future__ import annotations

import math

import duckdb
import numpy as np
import pandas as pd
import pytest

from analysis.trends import trends_table
from tests.helpers import file_at_version

DAY = pd.Timedelta(days=1)
NOW = pd.Timestamp("2025-01-01")
DATED = ("forecast_date", "forecast_ci_low", "forecast_ci_high")


def _frame(scores, dates, metric=None) -> pd.DataFrame:
    df = pd.DataFrame({"benchmark": "b", "model": [f"m{i}" for i in range(len(scores))],
                       "score": scores, "date": pd.to_datetime(dates)})
    if metric:
        df["metric"] = metric
    return df


def _cases() -> dict[str, pd.DataFrame]:
    n = 12
    return {
        # 4 records: the line alone would reach .9 150 days after the last (insufficient data)
        "few_records": _frame([0.5, 0.55, 0.6, 0.65], [NOW - 90 * DAY, NOW - 60 * DAY, NOW - 30 * DAY, NOW]),
        # concave, still rising: L pinned at the last record, the line takes over (insufficient data)
        "pinned": _frame([0.3 + 0.4 * math.log1p(i) / math.log(n) for i in range(n)],
                         [NOW - 30 * (n - 1 - i) * DAY for i in range(n)]),
        "reached": _frame([0.5, 0.93, 0.95], [NOW - 20 * DAY, NOW - 10 * DAY, NOW]),
        "elo": _frame([1200.0, 1250.0, 1300.0], [NOW - 60 * DAY, NOW - 30 * DAY, NOW], metric="elo"),
    }


@pytest.mark.parametrize("case", sorted(_cases()))
def test_a_forecast_date_only_where_the_status_has_one(case):
    t = trends_table(_cases()[case], now=NOW).iloc[0]
    if t["forecast_status"] != "ok":
        for col in DATED:
            assert pd.isna(t.get(col)), (case, col, t["forecast_status"], t.get(col))
    if t["forecast_status"] == "reached":
        assert t["reached_at"] == NOW - 10 * DAY
    else:
        assert pd.isna(t.get("reached_at"))


def test_the_line_that_would_cross_still_says_why_there_is_no_date():
    t = trends_table(_cases()["few_records"], now=NOW).iloc[0]
    assert t["forecast_status"] == "insufficient_data" and t["forecast_method"] == "theil_sen"
    assert "fewer than 5" in t["forecast_reason"] and pd.isna(t["forecast_date"])


def test_migration_075_moves_reached_dates_and_drops_dates_of_statuses_without_one(tmp_path):
    from storage import db
    path = tmp_path / "old.duckdb"
    file_at_version(path, 60)
    con = duckdb.connect(str(path))
    con.execute("SET TimeZone = 'UTC'")
    rows = [("a:s", "ok", "2027-01-01"), ("b:s", "reached", "2024-06-01"), ("c:s", "insufficient_data", "2023-02-01"),
            ("d:s", "beyond_horizon", None)]
    for table, status, when in rows:
        con.execute("INSERT INTO trends (table_id, benchmark, k, as_of, run_at, forecast_status, forecast_date, forecast_ci_low) "
                    "VALUES (?, 'b', 5, now(), now(), ?, CAST(? AS TIMESTAMPTZ), CAST(? AS TIMESTAMPTZ))",
                    [table, status, when, when])
    db.migrate(con)
    got = con.execute("SELECT table_id, forecast_status, strftime(forecast_date, '%Y-%m-%d'), "
                      "strftime(forecast_ci_low, '%Y-%m-%d'), strftime(reached_at, '%Y-%m-%d') "
                      "FROM trends ORDER BY table_id").fetchall()
    assert got == [("a:s", "ok", "2027-01-01", "2027-01-01", None),
                   ("b:s", "reached", None, None, "2024-06-01"),
                   ("c:s", "insufficient_data", None, None, None),
                   ("d:s", "beyond_horizon", None, None, None)]
    comment = con.execute("SELECT comment FROM duckdb_columns() WHERE table_name = 'trends' "
                          "AND column_name = 'forecast_date'").fetchone()[0]
    assert "reached_at" in comment and "always after the last observation" not in comment
    con.close()


def test_the_report_words_the_papers_flag_as_bunching_never_as_a_trend():
    from report.base import BUNCHED_LABEL
    from report.text import levels_text
    level = {"benchmark": "fm", "table_id": "fm:epoch", "name": "FrontierMath", "scope": "all", "population": "models",
             "s_index": 0.95, "bin": "very high", "level": "very high", "bin_hold_prob": 0.9, "n_items": 300,
             "n_models": 20, "stagnation": True, "trend_status": "ok", "slope_per_month": 3.98,
             "slope_ci_low": 2.19, "slope_ci_high": 8.61, "slope_unit": "pp/month", "forecast_status": "insufficient_data",
             "forecast_date": None, "top_models": ["a", "b"], "uncertainty": "binomial", "comparable": True,
             "scale": "paper_binomial"}
    text = levels_text(pd.DataFrame([level]))
    assert "stagnation" not in text.lower() and "stagnat" not in text.lower()
    assert BUNCHED_LABEL in text and "+3.98 pp/month" in text

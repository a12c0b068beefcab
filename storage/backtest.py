"""Reads for the forecast backtest and writes of its results (tables of migration 076).

The backtest reads the stored frontier of the last analysis (built by the dating rule, one
population per table) and each table's metric, floor and ceiling; every run replaces all three
result tables in one transaction.
"""

from __future__ import annotations

import logging
from datetime import datetime

import pandas as pd

from common.time import naive_utc_columns
from storage.db import insert_frame, transaction
from storage.engine import duckdb
from storage.saturation import stamped_frame

log = logging.getLogger("benchwatch.storage")

ROW_COLUMNS = ["table_id", "benchmark", "source", "table_version", "metric", "origin", "horizon_months", "method", "frontier_at_origin",
               "forecast", "low", "high", "raw_low", "raw_high", "observed", "inside", "n_records"]
SUMMARY_COLUMNS = ["kind", "unit", "horizon_months", "method", "n", "n_tables", "mae", "mae_low", "mae_high",
                   "naive_mae", "naive_mae_low", "naive_mae_high", "bias", "coverage", "coverage_low", "coverage_high",
                   "raw_coverage", "n_raw", "q_low", "q_high", "q_low_per_rise", "q_high_per_rise", "nominal", "chosen",
                   "damping"]
CROSSING_COLUMNS = ["table_id", "benchmark", "source", "table_version", "metric", "origin", "method", "threshold", "forecast_crossing",
                    "actual_crossing", "error_months"]


def read_backtest_inputs(con: duckdb.DuckDBPyConnection, k: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(frontier, tables) of the last analysis at top-k `k`: the frontier points (table_id,
    benchmark, as_of, frontier, is_record), oldest first; per table its key, metric, the registry's
    chance level (floor) and ceiling, and its last observation (observed_until)."""
    frontier = con.execute("""SELECT table_id, benchmark, as_of, frontier, is_record FROM frontier
                              WHERE k = ? ORDER BY table_id, as_of""", [k]).df()
    tables = con.execute("""SELECT t.table_id, t.benchmark, t.source, t.table_version, t.metric,
                                   b.chance AS floor, b.ceiling,
                                   bt.last_observed_at AS observed_until
                            FROM trends t LEFT JOIN benchmarks b ON b.id = t.benchmark
                            LEFT JOIN benchmark_tables bt ON bt.table_id = t.table_id
                            WHERE t.k = ? ORDER BY t.table_id""", [k]).df()
    return naive_utc_columns(frontier, "as_of"), naive_utc_columns(tables, "observed_until")



def read_undated_results(con: duckdb.DuckDBPyConnection, k: int) -> pd.DataFrame:
    """The results of the last analysis that the dating rule placed at their first observation
    (table_id, score, date, release_date: NULL where unknown), in each table's frontier population:
    what the backtest needs to tell an outcome it knows from one a later observed result may have
    changed (analysis.backtest.undetermined_outcomes). From the kept running-best rows
    (storage.history_kept): a row left out there had a better earlier score of the same model."""
    frame = con.execute("""SELECT bt.table_id, h.score, h.date, h.release_date
                           FROM history_kept h
                           JOIN benchmark_tables bt ON bt.benchmark = h.benchmark AND bt.source = h.source
                                AND coalesce(bt.table_version, '') = coalesce(h.table_version, '')
                           JOIN trends t ON t.table_id = bt.table_id AND t.k = ?
                                AND t.population = coalesce(h.population, 'models')
                           WHERE h.date_source = 'first_observed_at' AND h.score IS NOT NULL AND NOT isnan(h.score)
                           ORDER BY bt.table_id, h.date""", [k]).df()
    return naive_utc_columns(frame, "date", "release_date")


def store_backtest(con: duckdb.DuckDBPyConnection, *, rows: pd.DataFrame, summary: pd.DataFrame,
                   crossings: pd.DataFrame, run_at: datetime) -> None:
    """Replace the stored backtest (forecasts, summary, crossings) in one transaction."""
    frames = {"forecast_backtest": stamped_frame(rows, ROW_COLUMNS, run_at, "forecast_backtest"),
              "forecast_backtest_summary": stamped_frame(summary, SUMMARY_COLUMNS, run_at, "forecast_backtest_summary"),
              "forecast_backtest_crossings": stamped_frame(crossings, CROSSING_COLUMNS, run_at, "forecast_backtest_crossings")}
    with transaction(con):
        for table, frame in frames.items():
            con.execute(f"DELETE FROM {table}")      # the names are the constants above, never input
            if len(frame):
                insert_frame(con, table, frame)
    log.info("[backtest] stored %d forecast(s), %d summary row(s), %d crossing row(s)",
             len(rows), len(summary), len(crossings))


def read_backtest_summary(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """The stored summary, kind by kind, shortest horizon first (empty before the first backtest
    or on a database without migration 076)."""
    exists = con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'forecast_backtest_summary'")
    row = exists.fetchone()
    if not row or not row[0]:
        return pd.DataFrame(columns=[*SUMMARY_COLUMNS, "run_at"])
    return naive_utc_columns(con.execute("""SELECT * FROM forecast_backtest_summary
                                            ORDER BY kind, method, horizon_months""").df(), "run_at")

"""`benchwatch backtest`: how good the frontier forecasts would have been (issue 53).

Glue only: the stored frontier of the last analysis (storage.backtest), the backtest itself
(analysis.backtest: monthly origins, horizons 3/6/12 months, persistence / Theil-Sen / logistic,
outcomes a later observed result may have changed left unscored, cross-fitted 80 % intervals,
table-clustered CIs, the method each metric kind uses at each horizon), stored back
(forecast_backtest, forecast_backtest_summary, forecast_backtest_crossings).
"""

from __future__ import annotations

import logging
from datetime import datetime

import pandas as pd

from analysis.backtest import (backtest, calibrate, crossing_summary, summarize, undetermined_crossings,
                               undetermined_outcomes, with_damped)
from analysis.constants import SATURATION_K
from common.time import naive_utc
from storage import backtest as store
from storage.report import unanalysed
from storage.engine import duckdb

log = logging.getLogger("benchwatch.jobs.backtest")


class NoFrontier(RuntimeError):
    """The database holds no analysed frontier to backtest (no `benchwatch analyze` yet, or no
    dated score to forecast from)."""


def run_backtest(con: duckdb.DuckDBPyConnection, *, now: datetime | str, k: int = SATURATION_K,
                 write: bool = True) -> dict[str, pd.DataFrame]:
    """Backtest every table's frontier forecasts and store the result (`write`, else the caller
    stores it with `record_backtest`); returns the frames: rows (each scored forecast), summary
    (per kind, horizon, method), crossings and crossing_summary. Raises NoFrontier when there is
    nothing analysed."""
    frontier, tables = store.read_backtest_inputs(con, k)
    if not len(frontier):
        if unanalysed(con):
            raise NoFrontier("no analysed frontier in the database: run `benchwatch analyze` first")
        raise NoFrontier("no table has a frontier to backtest: no score in the database has a date to "
                         "forecast from")
    rows, crossings = backtest(frontier, tables)
    undated = store.read_undated_results(con, k)
    unknown = undetermined_outcomes(rows, undated)
    unknown_crossings = undetermined_crossings(crossings, undated)
    # counted once per table, origin and horizon (every method forecast the same outcome)
    n_unknown = len(rows.loc[unknown, ["table_id", "origin", "horizon_months"]].drop_duplicates())
    n_unknown_crossings = len(crossings.loc[unknown_crossings, ["table_id", "origin"]].drop_duplicates())
    if n_unknown or n_unknown_crossings:
        log.info("[backtest] %d outcome(s) and %d crossing(s) not scored: a result first observed later may "
                 "have been achieved by then", n_unknown, n_unknown_crossings)
    rows = rows[~unknown].reset_index(drop=True)
    crossings = crossings[~unknown_crossings].reset_index(drop=True)
    rows = calibrate(with_damped(rows))
    summary = summarize(rows)
    key = tables.set_index("table_id")        # the table's key, stored beside its id (migration 084)
    for column in ("benchmark", "source", "table_version"):
        rows[column] = rows["table_id"].map(key[column].to_dict())
        crossings[column] = crossings["table_id"].map(key[column].to_dict())
    log.info("[backtest] %d forecast(s) from %d table(s); %d crossing forecast(s)", len(rows),
             rows["table_id"].nunique() if len(rows) else 0, len(crossings))
    result = {"rows": rows, "summary": summary, "crossings": crossings,
              "crossing_summary": crossing_summary(crossings),
              "unscored": pd.DataFrame({"outcomes": [n_unknown], "crossings": [n_unknown_crossings]})}
    if write:
        record_backtest(con, result, now=now)
    return result


def record_backtest(con: duckdb.DuckDBPyConnection, result: dict[str, pd.DataFrame], *, now: datetime | str) -> None:
    """Store a `run_backtest` result (replacing the last one)."""
    store.store_backtest(con, rows=result["rows"], summary=result["summary"], crossings=result["crossings"],
                         run_at=naive_utc(now).tz_localize("UTC").to_pydatetime())


def horizons_json(summary: pd.DataFrame) -> dict:
    """`benchwatch backtest --format json`: per kind, one entry per horizon of the method its
    forecasts use at that horizon (each entry names it; `persistence`: no forecast there),
    proportions in pp, shares as fractions; `horizons` is the proportion tables' (the figures the
    report quotes) and `method` the one at their longest horizon, `other_kinds` the rest in their
    units, `methods` every method's entry."""
    def entry(r: dict, unit_key: str) -> dict:
        def num(v):
            return None if v is None or pd.isna(v) else round(float(v), 4)
        return {"horizon_months": int(r["horizon_months"]), "method": r["method"], "n": int(r["n"]),
                "n_tables": int(r["n_tables"]), f"mae_{unit_key}": num(r["mae"]),
                f"mae_{unit_key}_ci90": [num(r["mae_low"]), num(r["mae_high"])],
                f"naive_mae_{unit_key}": num(r["naive_mae"]), f"bias_{unit_key}": num(r["bias"]),
                "coverage": num(r["coverage"]), "coverage_ci90": [num(r["coverage_low"]), num(r["coverage_high"])],
                "raw_coverage": num(r["raw_coverage"]), "nominal": num(r["nominal"])}

    out: dict = {"horizons": [], "method": None, "other_kinds": [], "methods": []}
    for kind, g in summary.groupby("kind", sort=True):
        unit_key = "pp" if kind == "proportion" else "units"
        chosen = g[g["chosen"].astype(bool)].sort_values("horizon_months")
        method = str(chosen["method"].iat[-1]) if len(chosen) else None
        entries = [entry(r, unit_key) for r in chosen.to_dict("records")]
        every = [{"kind": kind, **entry(r, unit_key)} for r in g.sort_values(["method", "horizon_months"])
                 .to_dict("records")]
        out["methods"] += every
        if kind == "proportion":
            out["horizons"], out["method"] = entries, method
        else:
            out["other_kinds"].append({"kind": kind, "unit": str(g["unit"].iat[0]), "method": method,
                                       "horizons": entries})
    return out

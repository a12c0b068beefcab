"""`benchwatch backtest` end to end (issue 53): a dated history ingested the ordinary way, analysed,
backtested; the JSON's shape and units, the stored tables, the exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

from cli.main import main
from common.table_ids import table_id

HEADER = ["Model version", "mean_score", "Best score (across scorers)", "Release date", "Organization", "Country",
          "Training compute (FLOP)", "Training compute notes", "stderr", "Log viewer", "Logs", "Started at", "id"]


def _epoch_gpqa(path: Path, n: int = 60, seed: int = 0) -> Path:
    """An Epoch GPQA Diamond file of `n` models released over three years on a rising S-curve."""
    rng = np.random.default_rng(seed)
    start = pd.Timestamp("2022-01-01")
    released = start + pd.to_timedelta(np.sort(rng.uniform(0, 3 * 365, n)), unit="D")
    t = (released - start).days.to_numpy() / 365.25
    score = 0.25 + 0.7 / (1 + np.exp(-2 * (t - 1.5))) - np.abs(rng.normal(0, 0.04, n))
    rows = pd.DataFrame({h: "" for h in HEADER}, index=range(n))
    rows["Model version"] = [f"synth-model-{i}" for i in range(n)]
    rows["mean_score"] = rows["Best score (across scorers)"] = score.round(4)
    rows["Release date"] = released.strftime("%Y-%m-%d")
    rows["stderr"] = 0.02
    rows["Started at"] = (released + pd.Timedelta(days=3)).strftime("%Y-%m-%dT00:00:00.000Z")
    rows["id"] = [f"id{i}" for i in range(n)]
    rows.to_csv(path, index=False)
    return path


def test_backtest_without_an_analysis_says_what_to_run(tmp_path, capsys):
    db = tmp_path / "empty.duckdb"
    assert main(["ingest", "epoch", str(_epoch_gpqa(tmp_path / "gpqa_diamond.csv")), "--db", str(db)]) == 0
    capsys.readouterr()
    assert main(["backtest", "--db", str(db)]) == 1
    err = capsys.readouterr().err
    assert "benchwatch analyze" in err and err.count("\n") == 1
    assert main(["backtest", "--db", str(tmp_path / "missing.duckdb")]) == 1


def test_backtest_of_an_analysed_database_without_scores_does_not_ask_for_analyze(tmp_path, capsys):
    # a store holding only what has no score (knowledge cutoffs), analysed: `analyze` again would
    # not help, and the report and backtest must not say it would
    db = str(tmp_path / "cutoffs.duckdb")
    replay = Path(__file__).resolve().parents[1] / "fixtures" / "replay"    # written by tests/conftest.py
    assert main(["run", "--no-prefect", "--sources", "knowledge_cutoffs", "--replay", str(replay), "--db", db]) == 0
    capsys.readouterr()
    assert main(["report", "--db", db]) == 0
    out, err = capsys.readouterr()
    assert "benchwatch analyze" not in out + err
    assert main(["backtest", "--db", db]) == 1
    err = capsys.readouterr().err
    assert "benchwatch analyze" not in err and "no score" in err and err.count("\n") == 1


@pytest.mark.slow
def test_backtest_json_and_stored_tables(tmp_path, capsys):
    db = tmp_path / "bt.duckdb"
    assert main(["ingest", "epoch", str(_epoch_gpqa(tmp_path / "gpqa_diamond.csv")), "--db", str(db)]) == 0
    assert main(["analyze", "--db", str(db)]) == 0
    capsys.readouterr()
    assert main(["backtest", "--db", str(db), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [h["horizon_months"] for h in out["horizons"]] == [3, 6, 12]
    for h in out["horizons"]:
        assert {"n", "n_tables", "mae_pp", "naive_mae_pp", "bias_pp", "coverage", "nominal"} <= set(h)
        assert h["nominal"] == 0.8 and h["n_tables"] == 1 and h["n"] > 0
        assert h["coverage"] is None or 0 <= h["coverage"] <= 1         # a fraction
    assert {m["method"] for m in out["methods"]} == {"persistence", "theil_sen", "logistic"}
    con = duckdb.connect(str(db), read_only=True)
    try:
        n12 = con.execute("SELECT count(*) FROM forecast_backtest WHERE horizon_months = 12 "
                          "AND method = 'persistence'").fetchone()[0]
        stored = con.execute("SELECT n, mae FROM forecast_backtest_summary WHERE kind = 'proportion' "
                             "AND method = 'persistence' AND horizon_months = 12").fetchone()
        # the persistence MAE in pp is the mean |F(o) - observed| of the stored forecasts, x 100
        mae = con.execute("SELECT 100 * avg(abs(frontier_at_origin - observed)) FROM forecast_backtest "
                          "WHERE horizon_months = 12 AND method = 'persistence'").fetchone()[0]
        late = con.execute("SELECT count(*) FROM forecast_backtest f JOIN benchmark_tables bt USING (table_id) "
                           "WHERE f.origin + to_days(CAST(round(f.horizon_months * 30.4375) AS INTEGER)) "
                           "> bt.last_observed_at + INTERVAL 1 DAY").fetchone()[0]
        keys = con.execute("SELECT DISTINCT table_id, benchmark, source, table_version FROM forecast_backtest "
                           "UNION SELECT DISTINCT table_id, benchmark, source, table_version "
                           "FROM forecast_backtest_crossings").fetchall()
    finally:
        con.close()
    assert stored[0] == n12 > 0 and stored[1] == pytest.approx(mae)
    assert keys and all(table_id(*key) == tid for tid, *key in keys), keys   # the key beside the id (084)
    assert late == 0                         # no outcome beyond the table's last observation
    assert main(["backtest", "--db", str(db)]) == 0
    text = capsys.readouterr().out
    assert "proportion tables (pp)" in text and "no-change MAE" in text


@pytest.mark.slow
def test_results_dated_at_their_first_observation_are_read_for_the_outcome_check(tmp_path, capsys):
    """storage.backtest.read_undated_results on a real analysed database: the rows the dating rule
    placed at their first observation (no `Started at`), in the table's frontier population, with
    their model's release date; the rows with an evaluation date are not among them."""
    from storage.backtest import read_undated_results
    path = _epoch_gpqa(tmp_path / "gpqa_diamond.csv", n=30)
    frame = pd.read_csv(path, dtype=str)
    frame.loc[frame.index[-5:], "Started at"] = ""            # five results without a date of their own
    frame.to_csv(path, index=False)
    db = tmp_path / "u.duckdb"
    assert main(["ingest", "epoch", str(path), "--db", str(db)]) == 0
    assert main(["analyze", "--db", str(db)]) == 0
    capsys.readouterr()
    con = duckdb.connect(str(db), read_only=True)
    try:
        undated = read_undated_results(con, 5)
        observed = con.execute("SELECT max(observed_at) FROM snapshots").fetchone()[0]
    finally:
        con.close()
    assert set(undated["table_id"]) == {"gpqa_diamond:epoch"}
    assert 1 <= len(undated) <= 5                              # a model's worse later row is not kept
    want = pd.to_datetime(frame["Release date"].iloc[-5:])
    assert undated["release_date"].isin(want).all() and undated["release_date"].notna().all()
    assert (undated["date"] >= undated["release_date"]).all()
    observed = pd.Timestamp(observed)
    assert (undated["date"] == (observed.tz_convert(None) if observed.tzinfo else observed)).all()
    # the command leaves out, and says so, the outcomes those results may have changed
    assert main(["backtest", "--db", str(db)]) == 0
    assert "not scored: a result first observed later" in capsys.readouterr().out
    from analysis.backtest import undetermined_outcomes
    con = duckdb.connect(str(db), read_only=True)
    try:
        stored = con.execute("SELECT table_id, origin, horizon_months, observed FROM forecast_backtest").df()
    finally:
        con.close()
    stored["origin"] = pd.to_datetime(stored["origin"], utc=True).dt.tz_localize(None)
    assert len(stored) and not undetermined_outcomes(stored, undated).any()

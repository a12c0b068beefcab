"""`run_saturation` on a temporary DuckDB file filled through the ingest path: stored rows, views, idempotency."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from analysis.saturation import saturation_index
from jobs.ingest import ingest_file
from jobs.saturation import run_saturation
from jobs.sync import connect_synced
from storage.saturation import read_saturation
from storage.store import open_store

HEADER = "model,benchmark,score,n_items,stderr,metric,model_release_date\n"
# math_500 is in the registry (n = 500); toy_bench states its n in the scores; no_n has none; toy_elo publishes SEs.
FIRST = HEADER + "\n".join([
    "model-a,math_500,99.2,,,accuracy,2024-01-10",
    "model-b,math_500,99.0,,,accuracy,2024-02-10",
    "model-c,math_500,98.3,,,accuracy,2024-03-10",
    "model-d,math_500,98.2,,,accuracy,2024-04-10",
    "model-e,math_500,98.2,,,accuracy,2024-05-10",
    "model-a,toy_bench,60,1000,,accuracy,2024-01-10",
    "model-b,toy_bench,55,1000,,accuracy,2024-02-10",
    "model-c,toy_bench,50,1000,,accuracy,2024-03-10",
    "model-d,toy_bench,45,1000,,accuracy,2024-04-10",
    "model-e,toy_bench,40,1000,,accuracy,2024-05-10",
    "model-a,no_n,60,,,accuracy,2024-01-10",
    "model-b,no_n,55,,,accuracy,2024-02-10",
    "model-c,no_n,50,,,accuracy,2024-03-10",
    "model-d,no_n,45,,,accuracy,2024-04-10",
    "model-e,no_n,40,,,accuracy,2024-05-10",
    "model-a,toy_elo,1300,,5,elo,2024-01-10",
    "model-b,toy_elo,1290,,5,elo,2024-02-10",
    "model-c,toy_elo,1285,,5,elo,2024-03-10",
    "model-d,toy_elo,1280,,5,elo,2024-04-10",
    "model-e,toy_elo,1270,,5,elo,2024-05-10",
]) + "\n"
# A month later: a new model, released in between, tops math_500.
SECOND = FIRST + "model-f,math_500,99.6,,,accuracy,2024-12-01\n"


@pytest.fixture()
def dbpath(synced_db, tmp_path):
    (tmp_path / "first.csv").write_text(FIRST)
    (tmp_path / "second.csv").write_text(SECOND)
    path = synced_db
    ingest_file(open_store(path), "csv", tmp_path / "first.csv", observed_at="2025-01-01")
    return path


def _count(con, table: str) -> int:
    return con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def test_run_saturation_stores_snapshot_history_and_trends(dbpath, tmp_path):
    with connect_synced(open_store(dbpath)) as con:
        summary = run_saturation(con, now="2025-01-02T00:00:00Z").set_index("benchmark")
        assert summary.loc["math_500", "s_index"] == pytest.approx(0.916397111, abs=1e-9)
        assert summary.loc["math_500", "n_items"] == 500          # from the registry
        assert summary.loc["math_500", "as_of"] == "2025-01-01"
        # toy_bench: n = 1000 from the scores. SE(.6)^2 = .24/31.623, SE(.4)^2 = .24/31.623,
        # SE_delta = sqrt(.015179) = .12320, R = .2/.1232 = 1.6233, S = exp(-2.6352) = .07171 (low)
        assert summary.loc["toy_bench", "s_index"] == pytest.approx(0.07171, abs=1e-5)
        assert summary.loc["toy_bench", "bin"] == "low"
        assert pd.isna(summary.loc["no_n", "s_index"]) and "n unknown" in summary.loc["no_n", "reason"]
        assert summary.loc["toy_elo", "s_index"] == pytest.approx(math.exp(-18))
        assert summary.loc["toy_elo", "uncertainty"] == "published_stderr"

        latest = con.execute("SELECT benchmark, s_index, bin, r_norm, se_delta, n_items, k, alpha, as_of, scope "
                             "FROM saturation_latest ORDER BY benchmark").df()
        assert latest["benchmark"].tolist() == ["math_500", "no_n", "toy_bench", "toy_elo"]
        assert (latest["scope"] == "all").all() and (latest["k"] == 5).all() and (latest["alpha"] == 0.5).all()
        hist = con.execute("SELECT benchmark, as_of, s_index, bin, scope FROM saturation_history "
                           "WHERE benchmark = 'math_500' ORDER BY as_of").df()
        # the csv gives release dates, no evaluation dates: each result enters when the snapshot showing
        # it was first observed (2025-01-01); the release dates (all earlier) only bound it from below
        assert hist["as_of"].dt.strftime("%Y-%m-%d").tolist() == ["2025-01-01"]
        assert hist["s_index"].iat[0] == pytest.approx(0.916397111, abs=1e-9)
        trend = con.execute("SELECT * FROM trends WHERE benchmark = 'toy_bench'").df().iloc[0]
        assert trend["frontier"] == pytest.approx(0.6) and trend["frontier_model"] == "model-a"
        assert trend["n_records"] == 1 and trend["forecast_status"] == "insufficient_data"
        assert _count(con, "frontier") == 4           # 4 benchmarks x 1 result date

        # the same data again: nothing new anywhere
        before = {t: _count(con, t) for t in ("saturation", "saturation_trajectory", "frontier", "trends")}
        run_saturation(con, now="2025-01-03T00:00:00Z")
        assert {t: _count(con, t) for t in before} == before

    ingest_file(open_store(dbpath), "csv", tmp_path / "second.csv", observed_at="2025-02-01")
    with connect_synced(open_store(dbpath)) as con:
        summary = run_saturation(con, now="2025-02-02T00:00:00Z").set_index("benchmark")
        want = saturation_index([0.996, 0.992, 0.99, 0.983, 0.982, 0.982], 500)
        assert summary.loc["math_500", "s_index"] == pytest.approx(want.s_index)
        series = read_saturation(con, k=5, alpha=0.5)
        math500 = series[series["benchmark"] == "math_500"]
        assert math500["as_of"].dt.strftime("%Y-%m-%d").tolist() == ["2025-01-01", "2025-02-01"]
        # the reconstructed history gains model-f's result when it was first observed (not its Dec release)
        hist = con.execute("SELECT as_of, s_index, n_models FROM saturation_history "
                           "WHERE benchmark = 'math_500' ORDER BY as_of").df()
        assert hist["as_of"].dt.strftime("%Y-%m-%d").tolist() == ["2025-01-01", "2025-02-01"]
        assert hist["n_models"].tolist() == [5, 6]
        assert hist["s_index"].iat[1] == pytest.approx(want.s_index)
        # the second snapshot re-states every benchmark of the source: one new point each, same values
        assert series.groupby("benchmark").size().to_dict() == {"math_500": 2, "no_n": 2, "toy_bench": 2, "toy_elo": 2}
        toy = series[series["benchmark"] == "toy_bench"]["s_index"]
        assert toy.iat[0] == toy.iat[1]


# AlpacaEval 1 rows typed from the 2024-05-17 docs CSV (name, LC, win rate, length, link, samples, filter):
# three models above the reference model, which is listed against itself at exactly 50 %, and six below.
ALPACA_V1 = """name,length_controlled_winrate,win_rate,avg_length,link,samples,filter
Mistral Medium,91.54314285144824,96.83229813664596,1500,,,minimal
LLaMA 33B OASST SFT,,54.9689441,748,,,verified
Guanaco 13B,,52.60869565,1774,,,verified
Davinci003,,50.0,307,,,minimal
MiniChat 3B,31.963518903280573,48.818407960199,868,,,community
ChatGLM2-6B,,47.12858926,1027,,,community
Guanaco 7B,,46.58385093,1364,,,verified
Falcon 40B Instruct,39.14246411706998,45.71428571428572,662,,,minimal
Falcon 7B Instruct,39.14246411706998,45.71428571428572,478,,,minimal
Alpaca Farm PPO Sim (GPT-4) 7B,,44.09937888,511,,,minimal
"""


def test_a_reference_row_is_shown_but_never_in_a_top_k(synced_db, tmp_path):
    # issue 20: AlpacaEval's reference model (50 % against itself) ranked in the top 5 and set an early "low"
    csv = tmp_path / "alpacaeval_v1_2024-05-17.csv"
    csv.write_text(ALPACA_V1)
    path = synced_db
    ingest_file(open_store(path), "alpacaeval", csv, observed_at="2024-05-17")
    with connect_synced(open_store(path)) as con:
        shown = con.execute("SELECT model_raw, is_reference, reported_by FROM latest_scores "
                            "WHERE benchmark = 'alpacaeval_1' ORDER BY score DESC").df()
        assert len(shown) == 10 and shown["is_reference"].tolist() == [False] * 3 + [True] + [False] * 6
        assert shown.loc[shown["is_reference"], "model_raw"].tolist() == ["Davinci003"]
        from storage.reads import read_latest_scores
        assert "Davinci003" not in set(read_latest_scores(con)["model_raw"])
        run_saturation(con, now="2024-05-18T00:00:00Z")
        for view in ("saturation_latest", "saturation_history"):
            tops = con.execute(f"SELECT top_variants, top_models FROM {view} WHERE benchmark = 'alpacaeval_1'").df()
            assert len(tops)
            for variants, models in zip(tops["top_variants"], tops["top_models"]):
                assert len(models) == 5 and not any("davinci" in str(m).lower() for m in list(models) + list(variants))
        scores = con.execute("SELECT top_scores FROM saturation_trajectory WHERE benchmark = 'alpacaeval_1' "
                             "ORDER BY as_of DESC LIMIT 1").fetchone()[0]
        assert 0.5 not in [round(s, 6) for s in scores]


def test_the_latest_tables_are_computed_in_the_callers_thread_and_context(dbpath, monkeypatch):
    """run_saturation computes the latest tables in the caller's thread, before the history read (a
    thread beside that read did not clear issue 52's bar for keeping an optimisation), so in the
    caller's context (a Prefect run's logger is a context variable); an error there is the caller's."""
    import contextvars
    import threading

    import jobs.relations.shared as js
    probe_var: contextvars.ContextVar[str] = contextvars.ContextVar("probe_var", default="unset")
    seen = []
    real = js.saturation_table

    def probe(*args, **kwargs):
        seen.append((probe_var.get(), threading.current_thread() is threading.main_thread()))
        return real(*args, **kwargs)
    monkeypatch.setattr(js, "saturation_table", probe)
    probe_var.set("run-42")
    with connect_synced(open_store(dbpath)) as con:
        summary = run_saturation(con, now="2025-01-02T00:00:00Z")
    assert len(summary) and seen[0] == ("run-42", True)

    def broken(*args, **kwargs):
        raise RuntimeError("tables failed")
    monkeypatch.setattr(js, "saturation_table", broken)
    with connect_synced(open_store(dbpath)) as con, pytest.raises(RuntimeError, match="tables failed"):
        run_saturation(con, now="2025-01-03T00:00:00Z")


def test_the_run_line_counts_tables_once():
    """`run` says how many leaderboard tables and how many have an S, not how many summary rows
    (a table × scope × population) — "saturation for 134 benchmark(s)" counted rows without an S."""
    import pandas as pd

    from jobs.analyze_step import analysis_counts
    summary = pd.DataFrame({"table_id": ["a:x", "a:x", "a:x", "b:y", "c:z"],
                            "scope": ["all", "post_cutoff", "all", "all", "all"],
                            "population": ["models", "models", "systems", "models", "models"],
                            "s_index": [0.5, 0.2, None, None, 0.9]})
    assert analysis_counts(summary) == "3 leaderboard table(s), 2 with a saturation index"
    assert analysis_counts(None) == "0 leaderboard tables"

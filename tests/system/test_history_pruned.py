"""The saturation job reads only the history rows that can change a running top k
(storage.saturation.read_running_best_history, dated in SQL); its stored results must be
exactly those of the full history dated in pandas (tests/dating_oracle.py, the oracle of the rule analysis/running_best_history.sql owns), on random
histories built to hit every case (re-observations, ties, release dates after or before the
first observation, evaluation dates, settings and aliases of one model, agent systems with and
without an underlying model, a cost metric, a benchmark whose metric changed, held snapshots)
and on the real leaderboard copies."""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest

import jobs.relations.shared as shared
import jobs.saturation as job
from jobs.relations.shared import read_dated_history
from dating_oracle import dated_history
from helpers import SNAPSHOTS, docs_figures, needs
from storage import reads
from storage import saturation as store
from storage.db import insert_frame
from jobs.sync import connect_synced
from storage.store import open_store

NOW = pd.Timestamp("2025-06-01")
TABLES = {"saturation": ["table_id", "scope", "population", "as_of"],
          "saturation_trajectory": ["table_id", "scope", "population", "as_of"],
          "frontier": ["table_id", "as_of"], "trends": ["table_id", "k"], "benchmark_tables": ["table_id"]}


def full_history(con, benchmarks=None, **_) -> pd.DataFrame:
    """The reference: every stored result, dated in pandas (what `read_dated_history` returns;
    its storing and reuse of kept rows are not the reference's business)."""
    assert benchmarks is None
    return dated_history(store.read_score_history(con), reads.read_model_date_claims(con))


def random_db(path, seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_snap, models = 9, [f"rm-{i}" for i in range(24)]
    benches = {"rb_prop": "proportion", "rb_ties": "proportion", "rb_cost": "cost_usd", "rb_mixed": "proportion",
               "rb_sys": "proportion"}
    with connect_synced(open_store(path)) as con:
        obs = pd.Timestamp("2024-01-07", tz="UTC") + pd.to_timedelta(np.sort(rng.choice(120, n_snap, replace=False)), "D")
        obs = obs.insert(3, obs[3])       # two snapshots observed at the same time
        snaps = pd.DataFrame({"id": np.arange(1, len(obs) + 1), "source": ["csv"] * len(obs),
                              "sha256": [f"r{i}" for i in range(len(obs))],
                              "blob_sha256": [[f"r{i}"] for i in range(len(obs))],
                              "file_names": [["r.csv"]] * len(obs), "observed_at": obs, "first_seen": obs,
                              "last_seen": obs, "origin": "ingest", "parser_version": 1, "n_scores": 0, "n_items": 0,
                              "n_models": 0, "n_rejects": 0, "status": "ok"})
        snaps.loc[5, "status"] = "held"
        insert_frame(con, "snapshots", snaps)
        rows, level = [], {}
        for sid, t in zip(snaps["id"], obs):
            for b, metric in benches.items():
                for m in models:
                    for raw, setting in ((m, ""), (m + "-preview", ""), (m, "whole")):
                        if rng.random() < 0.45:
                            continue
                        key = (b, raw, setting)
                        if key not in level or rng.random() < 0.35:     # else a re-observation
                            v = rng.uniform(0.2, 0.95)
                            level[key] = round(v, 1 if b == "rb_ties" else 3)
                        score, met, se = level[key], metric, np.nan
                        if b == "rb_cost":
                            score = round(level[key] * 40, 1)
                        if b == "rb_mixed" and sid <= 4:
                            met, score, se = "elo", 1000 + 400 * level[key], 5.0
                        pop, under = "models", None
                        if b == "rb_sys":
                            pop = "systems"
                            under = None if m.endswith(("3", "7")) else f"rm-{int(m.split('-')[1]) % 5}"
                        ev = t - pd.Timedelta(days=int(rng.integers(0, 40))) if rng.random() < 0.3 else pd.NaT
                        rows.append({"snapshot_id": sid, "source": "csv", "benchmark": b, "benchmark_raw": b,
                                     "model": m if pop == "models" else f"{m} agent", "model_raw": raw,
                                     "setting": setting, "score": score, "metric": met, "stderr": se,
                                     "n_items": 200 if met == "proportion" else None, "excluded_reason": "",
                                     "evaluated_at": ev, "variant": "" if raw == m else "preview",
                                     "population": pop, "underlying": under})
        scores = pd.DataFrame(rows)
        scores["evaluated_at"] = pd.to_datetime(scores["evaluated_at"], utc=True)
        insert_frame(con, "scores", scores)
        rel = pd.Timestamp("2024-01-01") + pd.to_timedelta(rng.integers(0, 160, len(models)), "D")
        dates = pd.DataFrame({"model": models, "model_raw": models, "source": "csv", "snapshot_id": 1,
                              "release_date": rel.date, "knowledge_cutoff": None, "provenance": "leaderboard",
                              "org": None, "observed_at": obs[0]})
        insert_frame(con, "model_dates", dates.iloc[::2])        # half the models have a release date


def stored(path) -> dict[str, pd.DataFrame]:
    with connect_synced(open_store(path)) as con:
        return {t: con.execute(f"SELECT * EXCLUDE (run_at) FROM {t}").df().sort_values(keys).reset_index(drop=True)
                for t, keys in TABLES.items()}


def assert_same_as_full_history(path, tmp_path, monkeypatch, now: pd.Timestamp = NOW) -> None:
    monkeypatch.setattr(store, "HISTORY_CHUNK_ROWS", 2000)       # several ranges of benchmarks per read
    full = tmp_path / "full.duckdb"
    shutil.copy(path, full)
    rows: dict[str, int] = {}      # the rows each run's history read returned (counted as they read)

    def counted(name: str, read):
        def read_and_count(con, *args, **kwargs):
            frame = read(con, *args, **kwargs)
            rows[name] = rows.get(name, 0) + len(frame)
            return frame
        return read_and_count
    # where the saturation relations read it: the pruned read, then the full history in its place
    for name, read, db in (("pruned", read_dated_history, path), ("full", full_history, full)):
        with monkeypatch.context() as m:
            m.setattr(shared, "read_dated_history", counted(name, read))
            with connect_synced(open_store(db)) as con:
                job.run_saturation(con, now=now)
    got, want = stored(path), stored(full)
    for table in TABLES:
        assert len(want[table]), table
        pd.testing.assert_frame_equal(got[table], want[table], check_exact=True, obj=table)
    assert 0 < rows["pruned"] < rows["full"]


@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow), pytest.param(2, marks=pytest.mark.slow)])
def test_running_best_history_gives_the_full_history_results(synced_db, tmp_path, monkeypatch, seed):
    path = synced_db
    random_db(path, seed)
    assert_same_as_full_history(path, tmp_path, monkeypatch)


@pytest.mark.xdist_group("real-history")   # reads the session's real-history backfill
@needs(SNAPSHOTS)
@pytest.mark.slow
def test_running_best_history_on_the_real_snapshots(real_history_copy, tmp_path, monkeypatch):
    path = real_history_copy            # the backfilled real history (tests/conftest.py), a private copy
    assert_same_as_full_history(path, tmp_path, monkeypatch, docs_figures().history_now(path))


# --- contamination: A2 reads the last two snapshots of each series, and the references' rows ---

def recent_history_oracle(history: pd.DataFrame, reference_benchmarks: list[str]) -> pd.DataFrame:
    """The pruning rule of analysis/contamination/recent_history.sql in pandas (its test oracle):
    every row of a reference benchmark or without a model, and of each other (source, benchmark,
    model, setting) series the rows from its second-to-last usable snapshot on (a proportion
    score, not NaN, with n_items; snapshots ordered by observed_at, snapshot_id)."""
    h = history.assign(_setting=history["setting"].fillna(""))
    keys = ["source", "benchmark", "model", "_setting"]
    usable = (h["metric"].fillna("proportion").eq("proportion") & h["score"].notna() & h["n_items"].notna())
    snaps = (h.loc[usable, [*keys, "observed_at", "snapshot_id"]].drop_duplicates()
             .sort_values([*keys, "observed_at", "snapshot_id"], ascending=[True] * 4 + [False, False]))
    second = snaps.groupby(keys, sort=False).nth(1).rename(columns={"observed_at": "_s_at", "snapshot_id": "_s_id"})
    m = h.merge(second, on=keys, how="left")
    at_or_after = (m["observed_at"] > m["_s_at"]) | ((m["observed_at"] == m["_s_at"]) & (m["snapshot_id"] >= m["_s_id"]))
    keep = m["benchmark"].isin(reference_benchmarks) | m["model"].isna() | m["_s_at"].isna() | at_or_after
    return m.loc[keep.to_numpy(), list(history.columns)].reset_index(drop=True)


@pytest.mark.parametrize("seed", [0, 1])
def test_recent_history_sql_keeps_the_rows_of_its_pandas_oracle(synced_db, tmp_path, monkeypatch, seed):
    """storage executes the pruning rule (SQL owned by analysis/); it keeps exactly the rows the
    pandas twin keeps from the full history, across several ranges of benchmarks."""
    import jobs.contamination as cjob
    from storage import contamination as cstore

    path = synced_db
    monkeypatch.setattr(store, "HISTORY_CHUNK_ROWS", 1500)
    a2_db(path, seed)
    with connect_synced(open_store(path)) as con:
        con.execute("UPDATE scores SET score = 'NaN'::DOUBLE WHERE snapshot_id = 6 AND model = 'am-3'")
        con.execute("UPDATE scores SET metric = 'elo' WHERE snapshot_id = 7 AND model = 'am-4'")
        benchmarks = cjob.slice_inputs(con)["benchmarks"]
        refs, linked = cjob.reference_benchmarks(benchmarks), sorted(cjob.linked_benchmarks(benchmarks))
        full = cstore.read_snapshot_history(con)
        got = cstore.read_snapshot_history(con, refs)
        got_linked = cstore.read_snapshot_history(con, refs, linked)
        none = cstore.read_snapshot_history(con, refs, [])
    want = recent_history_oracle(full, refs)
    assert 0 < len(want) < len(full) and refs
    order = ["snapshot_id", "source", "benchmark", "model", "setting"]
    pd.testing.assert_frame_equal(got.sort_values(order, ignore_index=True), want.sort_values(order, ignore_index=True),
                                  check_exact=True, check_dtype=False)
    # only the linked benchmarks' rows (the analysis' read): those of the rule, no other
    want_linked = want[want["benchmark"].isin(linked)]
    assert "rb_other" not in linked and 0 < len(want_linked) < len(want)
    pd.testing.assert_frame_equal(got_linked.sort_values(order, ignore_index=True),
                                  want_linked.sort_values(order, ignore_index=True), check_exact=True, check_dtype=False)
    assert none.empty and list(none.columns) == list(got.columns)

A1_REPLICATES = 100     # A1's bootstrap in the contamination comparison (the analysis' default: 2000)
A2_BENCHES = ["math_500", "livebench_mathematics", "aime_2025", "gpqa_diamond", "humanitys_last_exam", "rb_other"]


def a2_db(path, seed: int) -> None:
    rng = np.random.default_rng(seed)
    models = [f"am-{i}" for i in range(40)]
    ability = dict(zip(models, rng.normal(0, 1.2, len(models))))
    with connect_synced(open_store(path)) as con:
        obs = pd.Timestamp("2024-03-01", tz="UTC") + pd.to_timedelta(np.arange(7) * 9, "D")
        snaps = pd.DataFrame({"id": np.arange(1, 8), "source": "csv", "sha256": [f"a{i}" for i in range(7)],
                              "blob_sha256": [[f"a{i}"] for i in range(7)], "file_names": [["a.csv"]] * 7,
                              "observed_at": obs, "first_seen": obs, "last_seen": obs, "origin": "ingest",
                              "parser_version": 1, "n_scores": 0, "n_items": 0, "n_models": 0, "n_rejects": 0,
                              "status": "ok"})
        insert_frame(con, "snapshots", snaps)
        rows, level = [], {}
        for sid in snaps["id"]:
            for b in A2_BENCHES:
                for m in models:
                    for setting in ("", "cot"):
                        if rng.random() < 0.25:
                            continue
                        key = (b, m, setting)
                        if key not in level or rng.random() < 0.2:
                            jump = 1.5 if rng.random() < 0.15 else 0.0
                            level[key] = float(1 / (1 + np.exp(-(ability[m] + jump + rng.normal(0, 0.2)))))
                        rows.append({"snapshot_id": sid, "source": "csv", "benchmark": b, "benchmark_raw": b,
                                     "model": m, "model_raw": m, "setting": setting, "score": round(level[key], 3),
                                     "metric": "proportion", "n_items": None if rng.random() < 0.1 else 400,
                                     "stderr": None, "excluded_reason": "", "variant": "", "population": "models"})
        insert_frame(con, "scores", pd.DataFrame(rows))


@pytest.mark.slow   # two full contamination runs per seed; the fast lane keeps the saturation case above
@pytest.mark.parametrize("seed", [0, 1])
def test_contamination_history_of_the_last_snapshots_gives_the_full_history_results(tmp_path, monkeypatch, seed):
    """Every signal of both runs is compared, A1's too. A1 reads the latest scores, never the
    history, so the pruned read cannot change its numbers: its bootstrap, most of a run's cost,
    runs with fewer replicates than the analysis' default, the same in both runs."""
    import jobs.contamination as cjob
    from analysis.contamination import Thresholds
    from storage import contamination as cstore

    path, full = tmp_path / "a2.duckdb", tmp_path / "a2_full.duckdb"
    th = Thresholds(bootstrap_b=A1_REPLICATES)
    monkeypatch.setattr(store, "HISTORY_CHUNK_ROWS", 1500)       # several ranges of benchmarks per read
    a2_db(path, seed)
    shutil.copy(path, full)
    with connect_synced(open_store(path)) as con:
        refs = cjob.reference_benchmarks(cjob.slice_inputs(con)["benchmarks"])
        assert len(cstore.read_snapshot_history(con, refs)) < len(cstore.read_snapshot_history(con))
        cjob.run_contamination(con, now=NOW, th=th)
        got = con.execute("SELECT * FROM contamination_signals ORDER BY ALL").df()
    with monkeypatch.context() as m:
        m.setattr(cstore, "read_snapshot_history", lambda con, *args, f=cstore.read_snapshot_history: f(con))
        with connect_synced(open_store(full)) as con:
            cjob.run_contamination(con, now=NOW, th=th)
            want = con.execute("SELECT * FROM contamination_signals ORDER BY ALL").df()
    assert want["detail"].str.startswith("rescore").any()
    pd.testing.assert_frame_equal(got, want, check_exact=True)

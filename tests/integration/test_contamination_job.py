"""The contamination glue on a real DuckDB file: storage reads, analysis, storage writes, views,
idempotence per run, persistence across snapshots, post-cutoff saturation, `benchwatch calibrate`."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cli import main as cli
from jobs.contamination import run_contamination
from jobs.saturation import run_saturation
from scrapers.base import ITEM_COLUMNS, MODEL_COLUMNS, SCORE_COLUMNS, ParsedSnapshot, conform
from jobs.sync import connect_synced
from storage.ingest import store_snapshot
from storage.responses import Response
from tests.unit.test_contamination import synth_items
from helpers import SNAPSHOTS, lane, needs
from storage.store import open_store

LCB = SNAPSHOTS / "livecodebench"


def synthetic_snapshot(seed: int, source: str = "synthlcb", benchmark: str = "synth",
                       **synth) -> tuple[ParsedSnapshot, list[Response]]:
    """A dated item-level source ('synthlcb'): test0 contaminated, everything else clean."""
    items, cut = synth_items(seed, **({"boost": {0: 1.0}} | synth))
    items["benchmark"] = benchmark
    agg = items.groupby("model")["score"].agg(["mean", "count", "std"]).reset_index()
    scores = pd.DataFrame({"benchmark": benchmark, "model": agg["model"], "setting": "", "score": agg["mean"],
                           "raw_value": agg["mean"].astype(str), "metric": "proportion",
                           "stderr": agg["std"] / np.sqrt(agg["count"]), "n_items": agg["count"],
                           "excluded_reason": ""})
    models = pd.DataFrame({"model": cut["model"], "knowledge_cutoff": cut["c_hi"], "release_date": pd.NaT,
                           "provenance": "vendor_doc"})
    parsed = ParsedSnapshot(source=source, scores=conform(scores, SCORE_COLUMNS),
                            items=conform(items.assign(difficulty="easy", platform="x"), ITEM_COLUMNS),
                            models=conform(models, MODEL_COLUMNS))
    return parsed, [Response(f"{source}_{seed}.json", f"{source} seed {seed}".encode())]


def ingest(path, seed: int, observed: str, **synth) -> None:
    parsed, responses = synthetic_snapshot(seed, **synth)
    with connect_synced(open_store(path)) as con:
        store_snapshot(con, parsed, responses, observed_at=datetime.fromisoformat(observed).replace(tzinfo=timezone.utc),
                       origin="ingest", parser_version=1)


def test_run_is_stored_idempotent_and_flags_persist(synced_db):
    path = synced_db
    # seeds whose null models draw no chance flag (seed 11's test3 does, z = 3.1: the ~0.5 % null rate)
    ingest(path, 12, "2024-06-01")
    with connect_synced(open_store(path)) as con:
        first = run_contamination(con, now="2024-06-02T00:00:00Z")
        again = run_contamination(con, now="2024-06-03T00:00:00Z")      # same data: same run, replaced
        runs = con.execute("SELECT count(*) FROM contamination_runs").fetchone()[0]
        n_signals = con.execute("SELECT count(*) FROM contamination_signals").fetchone()[0]
        sus = con.execute("SELECT model, benchmark, signal, effect, q_value, status, evidence, source "
                          "FROM suspects").df().set_index("model")
        post = con.execute("SELECT model, benchmark, score, n_items, stderr, window_start, window_end, low_n "
                           "FROM post_cutoff_scores").df().set_index("model")
        # the post-cutoff scope's saturation is the saturation job's, on the same slices
        assert not con.execute("SELECT count(*) FROM saturation_latest WHERE scope = 'post_cutoff'").fetchone()[0]
        run_saturation(con, now="2024-06-03T00:00:00Z")
        sat = con.execute("SELECT scope, n_models FROM saturation_latest WHERE benchmark = 'synth'").df()
    assert runs == 1 and n_signals == len(first) == len(again) == 6
    assert first["effect"].tolist() == again["effect"].tolist()
    assert sus.at["test0", "status"] == "suspect" and sus.at["test0", "signal"] == "A3"
    assert sus.drop(index="test0")["status"].eq("not_flagged").all()
    ev = json.loads(sus.at["test0", "evidence"])
    assert ev["snapshot_ids"] == [1] and ev["n_pre"] >= 50
    # the post-cutoff mean of the stored slice equals the items of the window, by hand
    items, _ = synth_items(12, boost={0: 1.0})
    mine = items[(items["model"] == "test1") & (items["item_date"] > pd.Timestamp("2023-10-15"))]
    assert post.at["test1", "n_items"] == len(mine)
    assert post.at["test1", "score"] == pytest.approx(mine["score"].mean())
    assert post.at["test1", "window_start"] == pd.Timestamp("2023-10-15")
    # clean scope: only the 8 clean models (cutoff 2022-12-01) have 'synth' post-cutoff
    assert sat.set_index("scope").at["post_cutoff", "n_models"] == 8

    ingest(path, 5, "2024-07-01")                                         # new data, same models
    with connect_synced(open_store(path)) as con:
        third = run_contamination(con, now="2024-07-02T00:00:00Z").set_index("model")
        runs = con.execute("SELECT count(*) FROM contamination_runs").fetchone()[0]
    assert runs == 2
    assert third.at["test0", "status"] == "persisted"
    assert third.at["test0", "evidence"]["persisted_from_snapshots"] == [1]


def test_a_cutoff_that_jitters_between_snapshots_moves_no_test(synced_db):
    """Issue 50, the DSCoder-6.7b-Ins case on a fixture of our own: the item results are the same in
    every snapshot, only the re-serialised file gives the tested model's date as 07:00 or as 22:00 of
    the day before (one instant read in two time zones). With the newest claim winning, the cutoff
    moved a day, an item day crossed the post window's edge and the suspicion resolved and fired
    again. The first value is kept: the test is the same in every snapshot, and the suspicion neither
    gains a data version (no confirmation "on distinct data") nor resolves."""
    from storage.contamination import read_suspicions
    path = synced_db
    items, _ = synth_items(12, boost={0: 1.0})
    # test0's cutoff: the post window (c_hi + 30 days) starts on an item day, at 07:00 or the day before
    day = pd.Timestamp(sorted(set(items["item_date"]))[len(set(items["item_date"])) * 3 // 4]) - pd.Timedelta(days=30)
    a, b = day + pd.Timedelta(hours=7), day - pd.Timedelta(hours=2)

    def ingest_with(cut: pd.Timestamp, observed: str, tag: str) -> None:
        parsed, _ = synthetic_snapshot(12)
        models = parsed.models.copy()
        models.loc[models["model"] == "test0", "knowledge_cutoff"] = cut
        parsed = ParsedSnapshot(source=parsed.source, scores=parsed.scores, items=parsed.items, models=models)
        with connect_synced(open_store(path)) as con:
            store_snapshot(con, parsed, [Response("synthlcb_12.json", f"synthlcb {tag}".encode())],
                           observed_at=datetime.fromisoformat(observed).replace(tzinfo=timezone.utc),
                           origin="ingest", parser_version=1)

    seen = []
    for i, (cut, observed) in enumerate([(a, "2024-06-01"), (b, "2024-06-02"), (a, "2024-06-03"), (b, "2024-06-04")]):
        ingest_with(cut, observed, f"serialised {i}")
        with connect_synced(open_store(path)) as con:
            res = run_contamination(con, now=f"{observed}T12:00:00Z").set_index("model").loc["test0"]
            state = read_suspicions(con).set_index("model").loc["test0"]
            c_hi = con.execute("SELECT c_hi FROM resolved_cutoffs WHERE model = 'test0'").fetchone()[0]
        seen.append((res["effect"], res["p_value"], res["evidence"]["n_post"], res["evidence"]["data_hash"]))
        assert pd.Timestamp(c_hi) == a.normalize()           # the first value (stored by day), whatever the newest file says
        assert state["state"] != "resolved" and state["distinct_data"] == 1
        assert res["flagged"]
    assert len(set(seen)) == 1 and len({len(set(v)) for v in seen}) == 1
    with connect_synced(open_store(path)) as con:
        snaps = con.execute("SELECT count(*) FROM snapshots WHERE source = 'synthlcb'").fetchone()[0]
    assert snaps == 4                                        # four stored snapshots, one piece of evidence


@pytest.mark.slow   # three analyses and notifies; the fast lane keeps the logic in test_contamination.py
#                     (test_unchanged_data_keep_their_stored_p_effect_and_flag_and_only_q_moves, ..._resolution_only_on_new_data)
def test_suspicion_holds_through_an_unrelated_source_and_resolves_only_on_new_data(synced_db, fake_slack):
    """The LiveCodeBench story of issue 19: a suspect fires; an unrelated source's snapshot triggers
    an analysis (its tests even join A3's BH family, so the q moves): the suspicion keeps firing with
    the same p and effect; only a new snapshot of the suspect's own source that no longer flags it
    resolves it, and the message names that snapshot. Both item sets pass their own calibration (the
    analysis computes it; seed 12's set would not: its 8 clean models' placebo lands at P(p < .05)
    8.6 % [7.1, 10]): this story is about the suspicion's life, and without one nothing fires."""
    from alerts.slack import SlackWebhookNotifier
    from jobs.alerts import run_notify
    from storage.contamination import read_suspicions
    path, slack = synced_db, SlackWebhookNotifier(fake_slack.webhook_url)

    def analyze(day):
        with connect_synced(open_store(path)) as con:
            res = run_contamination(con, now=f"{day}T00:00:00Z").set_index(["benchmark", "model"])
            return res, read_suspicions(con).set_index(["benchmark", "model"])

    def contamination_titles(summary):
        return [t for t in summary.sent_titles if "contamination" in t]

    ingest(path, 5, "2024-06-01")
    first, states = analyze("2024-06-02")
    t0 = first.loc[("synth", "test0")]
    assert t0["flagged"] and t0["q_value"] <= 0.01                      # strong at once: confirmed
    assert states.loc[("synth", "test0"), "state"] == "confirmed"
    assert states.loc[("synth", "test0"), "confirmed_by"] == "strong_q"
    assert contamination_titles(run_notify(open_store(path), now=datetime(2024, 6, 2, 1, tzinfo=timezone.utc),
                                           notifier=slack)) == ["test0 on synth: contamination suspect (q ≤ 0.01)"]

    # another dated source with its own contaminated model: its tests join A3's family
    ingest(path, 3, "2024-06-10", source="othersrc", benchmark="synth_other", boost={1: 1.0, 2: 1.0})
    second, states = analyze("2024-06-11")
    t0b = second.loc[("synth", "test0")]
    assert len(second) == 12 and second.loc[("synth_other", "test1"), "flagged"]
    assert (t0b["p_value"], t0b["effect"], t0b["se"]) == (t0["p_value"], t0["effect"], t0["se"])
    from analysis.contamination import benjamini_hochberg     # its q: recomputed within this run's family
    a3 = second[second["signal"] == "A3"]
    assert t0b["q_value"] == pytest.approx(benjamini_hochberg(a3["p_value"])[list(a3.index).index(("synth", "test0"))])
    assert t0b["flagged"]
    assert t0b["evidence"]["held"] is not None and t0b["evidence"]["snapshot_ids"] == t0["evidence"]["snapshot_ids"]
    assert states.loc[("synth", "test0"), "state"] == "confirmed"
    assert states.loc[("synth", "test0"), "q_value"] == pytest.approx(t0b["q_value"])
    summary = run_notify(open_store(path), now=datetime(2024, 6, 11, 1, tzinfo=timezone.utc), notifier=slack)
    assert [t for t in contamination_titles(summary) if "test0" in t] == []          # neither resolved nor re-sent

    # new data of the suspect's own source, test0 clean now: resolved, naming the snapshot and its date
    ingest(path, 13, "2024-07-01", boost=None)
    third, states = analyze("2024-07-02")
    assert not third.loc[("synth", "test0"), "flagged"]
    row = states.loc[("synth", "test0")]
    new_snaps = third.loc[("synth", "test0"), "evidence"]["snapshot_ids"]
    assert row["state"] == "resolved" and row["resolved_snapshot_ids"] == new_snaps != t0["evidence"]["snapshot_ids"]
    summary = run_notify(open_store(path), now=datetime(2024, 7, 2, 1, tzinfo=timezone.utc), notifier=slack)
    assert [t for t in contamination_titles(summary) if "test0" in t] == [
        f"resolved: test0 on synth: contamination suspicion resolved: new data (snapshot {new_snaps[0]} of "
        "2024-07-01) no longer flag it"]


def test_models_with_a_placeholder_cutoff_are_listed_not_dropped(synced_db, capsys):
    """Six models whose only cutoff is 2023-01-01 (a year boundary many models share: a placeholder)
    are not tested by A3; `status` and the report say which and why."""
    from dataclasses import replace
    parsed, responses = synthetic_snapshot(12)
    models = parsed.models.copy()
    models.loc[models["model"].str.startswith("test"), "knowledge_cutoff"] = pd.Timestamp("2023-01-01")
    with connect_synced(open_store(synced_db)) as con:
        store_snapshot(con, replace(parsed, models=models), responses,
                       observed_at=datetime(2024, 6, 1, tzinfo=timezone.utc), origin="ingest", parser_version=1)
        res = run_contamination(con, now="2024-06-02T00:00:00Z")
        skipped = con.execute("SELECT model, cutoff_trust, reason FROM contamination_not_tested ORDER BY model").df()
    assert not res["model"].str.startswith("test").any()
    placeholder = skipped[skipped["cutoff_trust"] == "placeholder"]
    assert placeholder["model"].tolist() == [f"test{i}" for i in range(6)]
    # the clean models (cutoff before every item) are listed too, for their empty pre window
    assert set(skipped["model"]) - set(placeholder["model"]) == {f"clean{i}" for i in range(8)}
    assert skipped.set_index("model").at["clean0", "reason"].startswith("window below floor (pre 0")
    assert placeholder["reason"].iloc[0].startswith("its only cutoff, 2023-01-01 (synthlcb), is a placeholder date")
    assert cli.main(["status", "--db", str(synced_db)]) == 0
    out = capsys.readouterr().out
    assert "not tested for contamination (6)" in out
    assert "  A3 synth (synthlcb): test0: its only cutoff, 2023-01-01 (synthlcb), is a placeholder date" in out
    assert cli.main(["report", "--db", str(synced_db)]) == 0
    out = capsys.readouterr().out
    assert "Not tested for contamination (with the reason)" in out and "test5" in out


def test_migration_022_seeds_suspicions_from_the_newest_run(synced_db):
    """An upgrade neither resolves nor re-fires: the flags of the newest run become suspicion states
    (the migration's INSERT, run again here on a database whose table was emptied)."""
    sql = (Path(__file__).resolve().parents[2] / "storage" / "migrations" / "022_contamination_suspicions.sql").read_text()
    seed = sql[sql.index("INSERT INTO contamination_suspicions"):]
    seed = seed[:seed.index(";") + 1]
    ingest(synced_db, 12, "2024-06-01")
    with connect_synced(open_store(synced_db)) as con:
        res = run_contamination(con, now="2024-06-02T00:00:00Z").set_index("model")
        con.execute("UPDATE contamination_signals SET status = 'persisted' WHERE model = 'test0'")
        con.execute("DELETE FROM contamination_suspicions")
        con.execute("ALTER TABLE contamination_suspicions DROP COLUMN calibration_key")   # the table as 022 left it
        con.execute(seed)
        rows = con.execute("SELECT model, state, confirmed_by, distinct_data, snapshot_ids, p_value "
                           "FROM contamination_suspicions").df()
    assert rows["model"].tolist() == ["test0"]
    row = rows.iloc[0]
    assert (row["state"], row["confirmed_by"], row["distinct_data"]) == ("confirmed", "distinct_data", 2)
    assert list(row["snapshot_ids"]) == res.at["test0", "evidence"]["snapshot_ids"]
    assert row["p_value"] == pytest.approx(res.at["test0", "p_value"])


def _store_passing_calibration(path) -> None:
    from jobs.contamination import record_calibration
    row = {"signal": "A3", "trials": 200, "tests": 1200, "p01": 0.01, "p01_lo": 0.005, "p01_hi": 0.015, "p05": 0.05,
           "p05_lo": 0.04, "p05_hi": 0.06, "fw_bh": 0.05, "fw_bh_lo": 0.03, "fw_bh_hi": 0.08, "fw_rule": 0.05,
           "fw_rule_lo": 0.03, "fw_rule_hi": 0.08, "ok": True}
    with connect_synced(open_store(path)) as con:
        record_calibration(con, pd.DataFrame([row]), calibrated_at="2024-01-01T00:00:00Z", seed=0)


@pytest.mark.slow   # three analyses on a real file; the fast lane keeps the logic in
#                     test_contamination_set_calibration.py
def test_analysis_calibrates_each_item_set_and_an_unrelated_snapshot_changes_no_verdict(synced_db):
    """Issue 50: `analyze` calibrates A3 on each item set's own data (no `benchwatch calibrate` run),
    and a flag is delivered as confirmed only on a passing calibration of its own set. One pooled
    calibration made five suspicions fire twice: another set's clean models moved it between pass
    and fail. Here a second source whose set fails its calibration leaves the first set's calibration,
    verdict and alert as they were (no re-fire), and is itself shown unconfirmed with its figures;
    analysing the same data again computes nothing and changes nothing."""
    from alerts.engine import evaluate
    from analysis.contamination.set_calibration import item_set_calibrations
    from storage.contamination import read_item_results, read_latest_calibration, read_set_calibrations, read_suspicions
    from storage.rule_inputs import read_suspicion_alerts
    path = synced_db
    ingest(path, 5, "2024-06-01")
    with connect_synced(open_store(path)) as con:
        res = run_contamination(con, now="2024-06-02T06:00:00Z").set_index("model")
        cal = read_set_calibrations(con)
        states = read_suspicions(con).set_index("model")
        suspicions = read_suspicion_alerts(con)
        assert read_latest_calibration(con).empty                            # nobody ran `benchwatch calibrate`
    assert res.at["test0", "flagged"] and res.at["test0", "q_value"] <= 0.01
    assert cal[["signal", "source", "benchmark"]].values.tolist() == [["A3", "synthlcb", "synth"]]
    first = cal.iloc[0]
    assert first["trials"] == 200 and first["tests"] > 0 and first["units"] == 8 and first["ok"]
    assert states.at["test0", "calibration_key"] == first["input_key"]
    ev1 = evaluate(now=datetime(2024, 6, 2, 7, tzinfo=timezone.utc), previous=[], suspects=suspicions)
    assert [n.labels["model"] for n in ev1.notifications if n.transition == "firing"] == ["test0"]

    # another source, its own contaminated models, a set whose clean models fail the placebo
    ingest(path, 21, "2024-06-10", source="othersrc", benchmark="synth_other", boost={1: 1.0, 2: 1.0})
    with connect_synced(open_store(path)) as con:
        second = run_contamination(con, now="2024-06-11T06:00:00Z").set_index(["benchmark", "model"])
        cal2 = read_set_calibrations(con).set_index("benchmark")
        states2 = read_suspicions(con).set_index(["benchmark", "model"])
        suspicions2 = read_suspicion_alerts(con)
    assert len(cal2) == 2 and cal2.at["synth", "input_key"] == first["input_key"]       # set one untouched
    assert cal2.at["synth", "calibrated_at"] == first["calibrated_at"]
    assert not cal2.at["synth_other", "ok"] and cal2.at["synth_other", "p05_lo"] > 0.05
    other = [m for m in ("test1", "test2") if ("synth_other", m) in second.index and second.loc[("synth_other", m), "flagged"]]
    assert other and states2.loc[("synth", "test0"), "calibration_key"] == first["input_key"]
    assert {states2.loc[("synth_other", m), "calibration_key"] for m in other} == {cal2.at["synth_other", "input_key"]}
    ev2 = evaluate(now=datetime(2024, 6, 11, 7, tzinfo=timezone.utc), previous=ev1.states, suspects=suspicions2)
    assert [n for n in ev2.notifications if n.kind == "contamination_suspect"] == []     # no re-fire, no withdrawal
    by_model = {s.labels["model"]: s for s in ev2.states if s.labels.get("kind", "contamination_suspect")}
    assert by_model["test0"].annotations["status"] == "confirmed"
    for m in other:
        a = by_model[m].annotations
        assert a["status"] == "unconfirmed"
        assert a["unconfirmed_because"][0].startswith("A3 is miscalibrated on its item set othersrc/synth_other")

    # the same data analysed again: nothing recomputed, the same verdicts; the stored figures are the
    # ones a fresh computation on these inputs gives (seeded by the inputs' key)
    with connect_synced(open_store(path)) as con:
        run_contamination(con, now="2024-06-12T06:00:00Z")
        cal3 = read_set_calibrations(con).set_index("benchmark")
        states3 = read_suspicions(con).set_index(["benchmark", "model"])
        items = read_item_results(con)
        cutoffs = con.execute("SELECT * FROM resolved_cutoffs").df()
    assert cal3.drop(columns="calibrated_at").equals(cal2.drop(columns="calibrated_at"))
    assert states3["calibration_key"].equals(states2["calibration_key"])
    _, fresh = item_set_calibrations(items, cutoffs, now=pd.Timestamp("2024-06-12 06:00"), trials=200, seed=0)
    fresh = fresh.set_index("benchmark")
    for col in ("input_key", "tests", "p01", "p05", "fw_bh", "ok"):
        assert fresh[col].tolist() == cal3.loc[fresh.index, col].tolist(), col


def test_calibrate_command(synced_db, tmp_path, capsys):
    path = synced_db
    ingest(path, 5, "2024-06-01")
    assert cli.main(["calibrate", "--db", str(path), "--trials", "10", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.strip().startswith("A3"))
    # 8 clean models x 10 trials, less the strongest at each cutoff (above the others' range: untestable)
    assert 70 <= int(line.split()[1]) < 80
    assert "n/a (no placebo test possible)" in out   # A1/A2: no reference benchmarks here
    # the result is stored: the alert rule reads each signal's newest calibration (issue 50)
    from storage.contamination import read_latest_calibration
    from storage.rule_inputs import read_suspicion_alerts
    with connect_synced(open_store(path)) as con:
        cal = read_latest_calibration(con).set_index("signal")
        run_contamination(con, now="2024-06-02T00:00:00Z")
        alerts_in = read_suspicion_alerts(con)
    assert sorted(cal.index) == ["A1", "A2", "A3"] and bool(cal.at["A3", "ok"]) and pd.isna(cal.at["A1", "ok"])
    assert 70 <= cal.at["A3", "tests"] < 80 and cal.at["A3", "trials"] == 10
    assert alerts_in is not None and bool(alerts_in.set_index("model").at["test0", "calibration_ok"])
    assert cli.main(["calibrate", "--db", str(path), "--trials", "10", "--seed", "3", "--power"]) == 0
    out = capsys.readouterr().out
    assert "placebo P(p < 0.05) =" in out and "placebo P(p < 0.01) =" in out
    rows = [x.split() for x in out.splitlines() if x.strip().startswith("synth ")]
    assert [r[1] for r in rows] == ["+10", "+20"]                     # benchmark, planted gain, items, ...
    assert any(x.strip().startswith("synth: P(p < 0.05) at +10 pp =") for x in out.splitlines())
    assert any(x.strip().startswith("synth: P(flagged) at +20 pp =") for x in out.splitlines())
    # A3 per item set: the first `calibrate` stored the set's calibration, the analysis judged test0 by
    # that very row (same inputs, same key), and this run read it back instead of drawing it again
    from storage.contamination import read_set_calibrations, read_suspicions
    assert "A3 per item set (the calibration each set's flags are judged by; 200 trials" in out
    with connect_synced(open_store(path)) as con:
        stored = read_set_calibrations(con)
        judged_by = read_suspicions(con).set_index("model").at["test0", "calibration_key"]
    assert len(stored) == 1 and stored.at[0, "input_key"] == judged_by
    line = next(x for x in out.splitlines() if x.strip().startswith("synthlcb/synth"))
    assert line.split()[1:3] == ["8", str(stored.at[0, "tests"])] and line.rstrip().endswith("yes")
    assert cli.main(["calibrate", "--db", str(tmp_path / "absent.duckdb")]) == 1
    assert cli.main(["calibrate", "--db", str(path), "--trials", "1"]) == 2


@pytest.mark.slow   # placebo calibration runs, several times
def test_calibrate_exit_code_contract(synced_db, tmp_path, monkeypatch, capsys):
    """Exit 1 when a signal's placebo p-values exceed nominal beyond their CI: the former
    item-independent A3 test on contest-dependent data must fail; the current one passes."""
    import jobs.contamination as job
    from analysis.contamination import Thresholds
    path = synced_db
    ingest(path, 11, "2024-06-01", boost=None, n_items=480, n_clean=12, n_test=0, contest_size=4, contest_sd=0.6)
    assert cli.main(["calibrate", "--db", str(path), "--trials", "40"]) == 0
    original = job.run_calibration
    monkeypatch.setattr(job, "run_calibration",
                        lambda con, **kw: original(con, **kw, th=Thresholds(a3_null="item_normal")))
    assert cli.main(["calibrate", "--db", str(path), "--trials", "40"]) == 1
    captured = capsys.readouterr()
    assert "miscalibrated: A3" in captured.err
    assert "NO" in captured.out.splitlines()[-1]


@pytest.mark.slow   # real data; the fast lane keeps test_run_is_stored_idempotent_and_flags_persist (suspect -> persisted)
@needs(LCB / "livecodebench_generation_2024-02-26.json")
@needs(LCB / "livecodebench_generation_2024-03-17.json")
def test_livecodebench_snapshots_end_to_end(synced_db, tmp_path):
    from jobs.ingest import ingest_file
    path = synced_db
    ingest_file(open_store(path), "livecodebench", LCB / "livecodebench_generation_2024-02-26.json", observed_at="2024-02-26")
    with connect_synced(open_store(path)) as con:
        first = run_contamination(con, now="2024-02-27T00:00:00Z")
    ingest_file(open_store(path), "livecodebench", LCB / "livecodebench_generation_2024-03-17.json", observed_at="2024-03-17")
    with connect_synced(open_store(path)) as con:
        second = run_contamination(con, now="2024-03-18T00:00:00Z")
        sus = con.execute("SELECT * FROM suspects").df()
    flagged_first = set(first.loc[first["flagged"], "model"])
    flagged = second[second["flagged"]].set_index("model")
    assert flagged_first and flagged_first <= set(flagged.index)
    assert (flagged.loc[sorted(flagged_first), "status"] == "persisted").all()
    assert not any(m.lower().startswith(("gpt", "claude")) for m in flagged.index)
    assert all("deepseek" in m.lower() or "dscoder" in m.lower() or "magicoder" in m.lower()
               or "wcoder" in m.lower() for m in flagged.index)
    assert len(sus) == len(second) and set(sus["run_id"]) == {sus["run_id"].iloc[0]}


# --- issue 11: one source alone in a fresh database -----------------------------------------------

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SINGLE_SOURCES = {
    "alpacaeval": ("alpacaeval/alpacaeval_v2_2024-12-27.csv", ()),
    "evalplus": ("evalplus/results_2024-12-26.json", ()),
    "livebench": ("livebench/table_2024_11_25.csv", ("livebench/categories_2024_11_25.json",)),
    "swebench": ("swebench/leaderboards_2025-11-24.json", ()),    # item results without item dates
}


# the fast lane keeps swebench (item results without item dates); the full suite runs every source
@pytest.mark.parametrize("source", lane(sorted(SINGLE_SOURCES), ("swebench",)))
def test_analyze_survives_a_single_source(synced_db, monkeypatch, capsys, source):
    """The post-cutoff slice is empty (no model is dated after this source's material):
    `benchwatch analyze` used to end in `TypeError: Cannot cast DatetimeArray to dtype float64`."""
    import scrapers
    from jobs.ingest import ingest_file
    monkeypatch.setattr(type(scrapers.get(source)), "min_rows", 1)   # fixtures hold a few rows
    primary, aux = SINGLE_SOURCES[source]
    path = synced_db
    ingest_file(open_store(path), source, FIXTURES / primary, aux_paths=[FIXTURES / a for a in aux], observed_at="2025-12-01")
    assert cli.main(["analyze", "--db", str(path)]) == 0
    assert "contamination signals:" in capsys.readouterr().out
    with connect_synced(open_store(path)) as con:
        runs = con.execute("SELECT count(*) FROM contamination_runs").fetchone()[0]
        scoped = con.execute("SELECT count(*), count(s_index) FROM saturation_latest WHERE scope = 'post_cutoff'"
                             ).fetchone()
    assert runs == 1
    assert scoped[1] <= scoped[0]


def test_post_cutoff_saturation_on_an_empty_scope():
    from jobs.contamination import with_item_dates
    from jobs.relations.post_cutoff import post_cutoff_saturation
    latest = pd.DataFrame({"source": "s", "benchmark": "b", "model": ["m1", "m2"], "score": [0.5, 0.6],
                           "n_items": 100, "stderr": np.nan, "metric": "proportion", "snapshot_id": 1,
                           "observed_at": pd.Timestamp("2025-01-01")})
    slices = pd.DataFrame({"benchmark": ["b", "b"], "model": ["m1", "m2"], "status": ["pre", "unknown"]})
    registry = pd.DataFrame({"id": ["b"], "n_items": [100], "ceiling": [1.0], "chance": [0.0],
                             "metric_kind": ["proportion"], "dynamic": [False],
                             "material_date": [pd.Timestamp("2024-01-01")], "reference_benchmarks": [None]})
    sat = post_cutoff_saturation(latest, slices, registry)
    assert sat["as_of"].isna().all() and str(sat["as_of"].dtype).startswith("datetime64")
    undated = pd.DataFrame({"source": "s", "benchmark": "b", "model": "m1", "item_id": ["i1"],
                            "item_date": pd.Series([pd.NaT], dtype="datetime64[us]"), "score": [1.0]})
    out = with_item_dates(registry.rename(columns={"id": "benchmark"}), undated)
    assert out["material_start"].isna().all() and out.at[0, "material_date"] == pd.Timestamp("2024-01-01")


def _last_run_tests(path: Path) -> pd.DataFrame:
    with connect_synced(open_store(path)) as con:
        return con.execute("""SELECT signal, source, benchmark, model, effect, se, p_value, flagged
                              FROM contamination_signals WHERE run_id =
                                  (SELECT run_id FROM contamination_runs ORDER BY run_at DESC, run_id LIMIT 1)
                              ORDER BY ALL""").df()


def test_an_item_set_whose_stored_tests_cannot_stand_in_is_tested_again(synced_db, tmp_path):
    """An incremental analysis keeps the tests of an item set whose inputs did not change, unless
    a stored one cannot stand in (here a p-value that is not finite): that set is tested again,
    on its item rows, and the run equals a full analysis'. (Before, the set was counted as
    recomputed but its rows were not read: its tests were lost.)"""
    import shutil
    from jobs.analyze import analyze
    ingest(synced_db, 12, "2024-06-01")                                   # item set synthlcb/synth
    ingest(synced_db, 5, "2024-06-01", source="synthlcb2", benchmark="synth2")
    assert analyze(open_store(synced_db), now=datetime(2024, 6, 2, tzinfo=timezone.utc))["plan"] == "full"
    before = _last_run_tests(synced_db)
    assert {("synthlcb", "synth"), ("synthlcb2", "synth2")} <= set(zip(before["source"], before["benchmark"]))
    with connect_synced(open_store(synced_db)) as con:
        con.execute("UPDATE contamination_signals SET p_value = 'NaN' WHERE source = 'synthlcb' AND model = 'test1'")
    ingest(synced_db, 7, "2024-07-01", source="synthlcb2", benchmark="synth2")   # only the other set changes
    full = tmp_path / "full.duckdb"
    shutil.copyfile(synced_db, full)
    now = datetime(2024, 7, 2, tzinfo=timezone.utc)
    incremental = analyze(open_store(synced_db), now=now)
    assert incremental["plan"] == "1 table(s), 1 A3 item group(s) recomputed", incremental["plan"]   # synthlcb2's
    assert analyze(open_store(full), now=now, incremental=False)["plan"] == "full"
    got, want = _last_run_tests(synced_db), _last_run_tests(full)
    assert len(got[got["source"] == "synthlcb"]) == len(before[before["source"] == "synthlcb"])
    pd.testing.assert_frame_equal(got, want, check_exact=True)

"""The shrink guard: a snapshot that drops half or more of a benchmark's rows is held back."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
import pytest

import scrapers

from alerts.rules import SNAPSHOT_HELD
from alerts.render import render_plain
from alerts.engine import evaluate
from alerts.rules import FIRING, RESOLVED
from cli.main import main
from jobs.cycle import collect_source, ingest_file
from storage.registry_sync import connect_synced
from storage.ingest import SHRINK_HOLD_FRACTION
from storage.query import run_query
from storage.status import held_snapshots

FIX = Path(__file__).parent / "fixtures"
REPLAY = FIX / "replay"


@pytest.fixture
def dbpath(synced_db):
    return str(synced_db)


def board(n: int, bench: str = "gpqa_diamond", offset: int = 0) -> str:
    rows = "".join(f"model-{i},{bench},{0.5 + 0.004 * i:.3f}\n" for i in range(offset, offset + n))
    return "model,benchmark,score\n" + rows


def latest_models(dbpath: str) -> set[str]:
    return set(run_query("SELECT model_raw FROM latest_scores", dbpath)["model_raw"])


# the fast lane keeps the boundary (6 kept: not held, 5: held); the full suite every count
@pytest.mark.parametrize("kept,held", [pytest.param(10, False, marks=pytest.mark.slow), (6, False), (5, True),
                                       pytest.param(4, True, marks=pytest.mark.slow),
                                       pytest.param(1, True, marks=pytest.mark.slow)])
def test_threshold(dbpath, tmp_path, kept, held):
    """10 rows, then `kept` of them: held iff kept <= SHRINK_HOLD_FRACTION * 10."""
    (tmp_path / "a.csv").write_text(board(10))
    (tmp_path / "b.csv").write_text(board(kept) + ("x-extra,math_500,0.5\n" if kept == 10 else ""))
    ingest_file(dbpath, "csv", tmp_path / "a.csv", observed_at="2025-01-01")
    res = ingest_file(dbpath, "csv", tmp_path / "b.csv", observed_at="2025-02-01")
    assert bool(res.held_reason) == held == (kept <= SHRINK_HOLD_FRACTION * 10)
    expected = {f"model-{i}" for i in range(10 if held else kept)} | ({"x-extra"} if kept == 10 else set())
    assert latest_models(dbpath) == expected


def test_line_boundary_truncation_of_a_real_leaderboard_is_held(dbpath, tmp_path, monkeypatch):
    """A real CSV (bfcl) cut in half at a line boundary never becomes the latest."""
    src = REPLAY / "bfcl" / "data_overall.csv"
    lines = src.read_text().splitlines(keepends=True)
    cut = tmp_path / "data_overall.csv"
    cut.write_text("".join(lines[: len(lines) // 2]))
    ingest_file(dbpath, "bfcl", src, observed_at="2025-12-16")
    before = run_query("SELECT benchmark, model, score FROM latest_scores ORDER BY ALL", dbpath)
    # the fixture is trimmed: lower the real floor, which would refuse the half file outright
    monkeypatch.setattr(type(scrapers.get("bfcl")), "min_rows", 1)
    res = ingest_file(dbpath, "bfcl", cut, observed_at="2025-12-17")
    assert res.status == "new" and res.held_reason
    after = run_query("SELECT benchmark, model, score FROM latest_scores ORDER BY ALL", dbpath)
    pd.testing.assert_frame_equal(before, after)


def test_held_snapshot_is_out_of_the_analysis_history(dbpath, tmp_path):
    from storage.saturation import read_score_history
    (tmp_path / "a.csv").write_text(board(10))
    (tmp_path / "b.csv").write_text(board(3).replace("0.500", "0.999"))
    ingest_file(dbpath, "csv", tmp_path / "a.csv", observed_at="2025-01-01")
    ingest_file(dbpath, "csv", tmp_path / "b.csv", observed_at="2025-02-01")
    with connect_synced(dbpath) as con:
        hist = read_score_history(con)
    assert 0.999 not in set(hist["score"]) and len(hist) == 10


def test_backfill_of_an_older_smaller_snapshot_is_not_held(dbpath, tmp_path):
    """Compared with its predecessor in time, not with a newer snapshot."""
    (tmp_path / "a.csv").write_text(board(10))
    (tmp_path / "old.csv").write_text(board(3))
    ingest_file(dbpath, "csv", tmp_path / "a.csv", observed_at="2025-06-01")
    assert not ingest_file(dbpath, "csv", tmp_path / "old.csv", observed_at="2025-01-01").held_reason


def test_accept_releases_and_status_and_alert_show_it(dbpath, tmp_path, capsys):
    (tmp_path / "a.csv").write_text(board(10))
    (tmp_path / "b.csv").write_text(board(2))
    ingest_file(dbpath, "csv", tmp_path / "a.csv", observed_at="2025-01-01")
    assert main(["ingest", "csv", str(tmp_path / "b.csv"), "--observed-at", "2025-02-01", "--db", dbpath]) == 0
    out = capsys.readouterr().out
    assert "HELD" in out and "benchwatch accept 2" in out

    assert main(["status", "--db", dbpath]) == 0
    out = capsys.readouterr().out
    assert "held snapshots (1)" in out and "benchwatch accept" in out

    now = datetime(2025, 2, 2, tzinfo=timezone.utc)
    with connect_synced(dbpath) as con:
        held = held_snapshots(con, pending_only=True)
    assert held["snapshot_id"].tolist() == [2]
    ev = evaluate(now=now, previous=[], held_snapshots=held)
    [n] = ev.notifications
    assert (n.kind, n.transition, n.labels["source"]) == (SNAPSHOT_HELD, FIRING, "csv")
    assert "snapshot 2 held" in render_plain(ev.notifications, now=now)

    assert main(["accept", "2", "--db", dbpath]) == 0
    assert "accepted" in capsys.readouterr().out
    assert latest_models(dbpath) == {"model-0", "model-1"}
    with connect_synced(dbpath) as con:
        held = held_snapshots(con, pending_only=True)
    assert len(held) == 0
    ev2 = evaluate(now=now, previous=ev.states, held_snapshots=held)
    assert [(n.kind, n.transition) for n in ev2.notifications] == [(SNAPSHOT_HELD, RESOLVED)]
    # accepting again, or an unknown snapshot
    assert main(["accept", "2", "--db", dbpath]) == 0 and "not held" in capsys.readouterr().out
    assert main(["accept", "99", "--db", dbpath]) == 1


def test_same_content_on_a_later_fetch_confirms(dbpath, tmp_path, monkeypatch):
    """Replay = a collection: the truncated content seen twice is what the source serves."""
    replay = tmp_path / "replay"
    (replay / "bfcl").mkdir(parents=True)
    full = (REPLAY / "bfcl" / "data_overall.csv").read_text()
    target = replay / "bfcl" / "data_overall.csv"
    target.write_text(full)
    assert collect_source(dbpath, "bfcl", replay_dir=replay).status == "new"
    lines = full.splitlines(keepends=True)
    target.write_text("".join(lines[: len(lines) // 2 + 1]))
    monkeypatch.setattr(type(scrapers.get("bfcl")), "min_rows", 1)
    first = collect_source(dbpath, "bfcl", replay_dir=replay)
    before = latest_models(dbpath)
    # ingesting the same file by hand is not a later fetch: stays held
    ingest_file(dbpath, "bfcl", target)
    assert run_query("SELECT status FROM snapshots WHERE id = 2", dbpath).iloc[0, 0] == "held"
    second = collect_source(dbpath, "bfcl", replay_dir=replay)
    assert first.status == "new" and second.status == "unchanged"
    assert run_query("SELECT status FROM snapshots WHERE id = 2", dbpath).iloc[0, 0] == "confirmed"
    assert latest_models(dbpath) < before


def test_item_results_are_guarded_too(dbpath, tmp_path):
    """LiveCodeBench: the same models with half the problems is held (item_results shrink)."""
    import json
    src = REPLAY / "livecodebench" / "performances_generation.json"
    data = json.loads(src.read_text())
    ingest_file(dbpath, "livecodebench", src, observed_at="2024-03-17")
    items_before = run_query("SELECT count(*) FROM latest_item_results", dbpath).iloc[0, 0]
    probs = sorted({p["question_id"] for p in data["performances"]})
    keep = set(probs[: len(probs) // 3])
    data["performances"] = [p for p in data["performances"] if p["question_id"] in keep]
    cut = tmp_path / "performances_generation.json"
    cut.write_text(json.dumps(data))
    res = ingest_file(dbpath, "livecodebench", cut, observed_at="2024-03-18")
    assert res.held_reason and "item results" in res.held_reason
    assert run_query("SELECT count(*) FROM latest_item_results", dbpath).iloc[0, 0] == items_before

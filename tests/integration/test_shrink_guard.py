"""The shrink guard: a snapshot that drops more than a fifth of a table's rows is held back."""

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
from jobs.collect import collect_source
from jobs.ingest import ingest_file
from jobs.sync import connect_synced
from storage.shrink_guard import SHRINK_MAX_DROP
from storage.query import run_query
from storage.status import held_snapshots
from storage.store import open_store

FIX = Path(__file__).resolve().parents[1] / "fixtures"
REPLAY = FIX / "replay"


@pytest.fixture
def dbpath(synced_db):
    return str(synced_db)


def board(n: int, bench: str = "gpqa_diamond", offset: int = 0) -> str:
    rows = "".join(f"model-{i},{bench},{0.5 + 0.004 * i:.3f}\n" for i in range(offset, offset + n))
    return "model,benchmark,score\n" + rows


def latest_models(dbpath: str) -> set[str]:
    return set(run_query("SELECT model_raw FROM latest_scores", open_store(dbpath))["model_raw"])


# the fast lane keeps the boundary (8 kept: a drop of 20 %, not held; 7: held) and the new user's
# truncated CSV (11 of 20, 55 %: the guard let it through when it held only at <= 50 %); the full suite every count
@pytest.mark.parametrize("total,kept,held", [pytest.param(10, 10, False, marks=pytest.mark.slow), (10, 8, False),
                                             (10, 7, True), (20, 11, True),
                                             pytest.param(10, 5, True, marks=pytest.mark.slow),
                                             pytest.param(10, 1, True, marks=pytest.mark.slow)])
def test_threshold(dbpath, tmp_path, total, kept, held):
    """`total` rows, then `kept` of them: held iff more than SHRINK_MAX_DROP of them were dropped."""
    (tmp_path / "a.csv").write_text(board(total))
    (tmp_path / "b.csv").write_text(board(kept) + ("x-extra,math_500,0.5\n" if kept == total else ""))
    ingest_file(open_store(dbpath), "csv", tmp_path / "a.csv", observed_at="2025-01-01")
    res = ingest_file(open_store(dbpath), "csv", tmp_path / "b.csv", observed_at="2025-02-01")
    assert bool(res.held_reason) == held == (total - kept > SHRINK_MAX_DROP * total)
    total = 10 if total == 20 and not held else total
    expected = {f"model-{i}" for i in range(total if held else kept)} | ({"x-extra"} if kept == total else set())
    assert latest_models(dbpath) == expected


def test_line_boundary_truncation_of_a_real_leaderboard_is_held(dbpath, tmp_path, monkeypatch):
    """A real CSV (bfcl) cut in half at a line boundary never becomes the latest."""
    src = REPLAY / "bfcl" / "data_overall.csv"
    lines = src.read_text().splitlines(keepends=True)
    cut = tmp_path / "data_overall.csv"
    cut.write_text("".join(lines[: len(lines) // 2]))
    ingest_file(open_store(dbpath), "bfcl", src, observed_at="2025-12-16")
    before = run_query("SELECT benchmark, model, score FROM latest_scores ORDER BY ALL", open_store(dbpath))
    # the fixture is trimmed: lower the real floor, which would refuse the half file outright
    monkeypatch.setattr(type(scrapers.get("bfcl")), "min_rows", 1)
    res = ingest_file(open_store(dbpath), "bfcl", cut, observed_at="2025-12-17")
    assert res.status == "new" and res.held_reason
    after = run_query("SELECT benchmark, model, score FROM latest_scores ORDER BY ALL", open_store(dbpath))
    pd.testing.assert_frame_equal(before, after)


def test_held_snapshot_is_out_of_the_analysis_history(dbpath, tmp_path):
    from storage.saturation import read_score_history
    (tmp_path / "a.csv").write_text(board(10))
    (tmp_path / "b.csv").write_text(board(3).replace("0.500", "0.999"))
    ingest_file(open_store(dbpath), "csv", tmp_path / "a.csv", observed_at="2025-01-01")
    ingest_file(open_store(dbpath), "csv", tmp_path / "b.csv", observed_at="2025-02-01")
    with connect_synced(open_store(dbpath)) as con:
        hist = read_score_history(con)
    assert 0.999 not in set(hist["score"]) and len(hist) == 10


def test_backfill_of_an_older_smaller_snapshot_is_not_held(dbpath, tmp_path):
    """Compared with its predecessor in time, not with a newer snapshot."""
    (tmp_path / "a.csv").write_text(board(10))
    (tmp_path / "old.csv").write_text(board(3))
    ingest_file(open_store(dbpath), "csv", tmp_path / "a.csv", observed_at="2025-06-01")
    assert not ingest_file(open_store(dbpath), "csv", tmp_path / "old.csv", observed_at="2025-01-01").held_reason


def test_accept_releases_and_status_and_alert_show_it(dbpath, tmp_path, capsys):
    (tmp_path / "a.csv").write_text(board(10))
    (tmp_path / "b.csv").write_text(board(2))
    ingest_file(open_store(dbpath), "csv", tmp_path / "a.csv", observed_at="2025-01-01")
    assert main(["ingest", "csv", str(tmp_path / "b.csv"), "--observed-at", "2025-02-01", "--db", dbpath]) == 0
    out = capsys.readouterr().out
    assert "HELD" in out and "benchwatch accept 2" in out

    assert main(["status", "--db", dbpath]) == 0
    out = capsys.readouterr().out
    assert "held snapshots (1)" in out and "benchwatch accept" in out

    now = datetime(2025, 2, 2, tzinfo=timezone.utc)
    with connect_synced(open_store(dbpath)) as con:
        held = held_snapshots(con, pending_only=True)
    assert held["snapshot_id"].tolist() == [2]
    ev = evaluate(now=now, previous=[], held_snapshots=held)
    [n] = ev.notifications
    assert (n.kind, n.transition, n.labels["source"]) == (SNAPSHOT_HELD, FIRING, "csv")
    assert "snapshot 2 held" in render_plain(ev.notifications, now=now)

    assert main(["accept", "2", "--db", dbpath]) == 0
    assert "accepted" in capsys.readouterr().out
    assert latest_models(dbpath) == {"model-0", "model-1"}
    with connect_synced(open_store(dbpath)) as con:
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
    assert collect_source(open_store(dbpath), "bfcl", replay_dir=replay).status == "new"
    lines = full.splitlines(keepends=True)
    target.write_text("".join(lines[: len(lines) // 3 + 1]))      # past bfcl's own limit (half)
    monkeypatch.setattr(type(scrapers.get("bfcl")), "min_rows", 1)
    first = collect_source(open_store(dbpath), "bfcl", replay_dir=replay)
    before = latest_models(dbpath)
    # ingesting the same file by hand is not a later fetch: stays held
    ingest_file(open_store(dbpath), "bfcl", target)
    assert run_query("SELECT status FROM snapshots WHERE id = 2", open_store(dbpath)).iloc[0, 0] == "held"
    second = collect_source(open_store(dbpath), "bfcl", replay_dir=replay)
    assert first.status == "new" and second.status == "unchanged"
    assert run_query("SELECT status FROM snapshots WHERE id = 2", open_store(dbpath)).iloc[0, 0] == "confirmed"
    assert latest_models(dbpath) < before


def test_item_results_are_guarded_too(dbpath, tmp_path):
    """LiveCodeBench: the same models with half the problems is held (item_results shrink)."""
    import json
    src = REPLAY / "livecodebench" / "performances_generation.json"
    data = json.loads(src.read_text())
    ingest_file(open_store(dbpath), "livecodebench", src, observed_at="2024-03-17")
    items_before = run_query("SELECT count(*) FROM latest_item_results", open_store(dbpath)).iloc[0, 0]
    probs = sorted({p["question_id"] for p in data["performances"]})
    keep = set(probs[: len(probs) // 3])
    data["performances"] = [p for p in data["performances"] if p["question_id"] in keep]
    cut = tmp_path / "performances_generation.json"
    cut.write_text(json.dumps(data))
    res = ingest_file(open_store(dbpath), "livecodebench", cut, observed_at="2024-03-18")
    assert res.held_reason and "item results" in res.held_reason
    assert run_query("SELECT count(*) FROM latest_item_results", open_store(dbpath)).iloc[0, 0] == items_before


def arena_page(n: int, intro: str) -> str:
    """A page in the layout of the LMArena markdown mirror (tests/fixtures/lmarena/cherry_*.md)."""
    rows = "".join(f"| {i + 1} | {i + 1} | model-{i} | {1500 - 3 * i} (±5) | 1,000 |\n" for i in range(n))
    return (f"# 文本榜单\n\n{intro}\n\n> **数据更新时间**: 2026-07-29 04:46:45 UTC\n\n"
            "| 排名 | 排名区间 | 模型 | 分数 | 票数 |\n|---:|---:|:---|:---|---:|\n" + rows)


def test_a_board_of_its_own_is_no_shrink_of_the_full_board(dbpath, tmp_path):
    """The LMArena mirror's later page lists only a top 30 (table_version 'top30'): compared with
    itself, never held as a shrink of the full board it follows (issue 21)."""
    (tmp_path / "full.md").write_text(arena_page(40, "每日快照。"))
    (tmp_path / "top.md").write_text(arena_page(12, "本页展示榜单前 12 名的每日快照。"))
    full = ingest_file(open_store(dbpath), "lmarena", tmp_path / "full.md", observed_at="2026-02-10")
    top = ingest_file(open_store(dbpath), "lmarena", tmp_path / "top.md", observed_at="2026-07-29")
    assert full.status == top.status == "new"
    assert not top.held_reason
    snaps = run_query("SELECT s.status, sc.table_version, count(*) n FROM scores sc JOIN snapshots s "
                      "ON s.id = sc.snapshot_id WHERE s.source = 'lmarena' GROUP BY ALL ORDER BY n DESC", open_store(dbpath))
    assert snaps.values.tolist() == [["ok", "", 40], ["ok", "top12", 12]]


def test_a_move_to_the_legacy_list_is_not_a_shrink(dbpath, tmp_path):
    """tau2_bench: the tau^3 manifest moves the tau2 submissions to `legacy_submissions`; that list
    is the same table as the old single list, so nothing shrinks; a legacy list cut to one of two
    submissions is held (issue 21)."""
    subs = [FIX / "tau2_bench" / f"sub_{d}.json" for d in ("gemini-3-pro_google_2025-11-18", "gpt-5_sierra_2025-08-09",
                                                            "glm5-2_zai_2026-06-21")]
    old = tmp_path / "tau2_bench_manifest_2025-12-17.json"
    old.write_text('{"submissions": ["gemini-3-pro_google_2025-11-18", "gpt-5_sierra_2025-08-09"]}')
    new = tmp_path / "tau2_bench_manifest_2026-03-18.json"
    new.write_text('{"submissions": ["glm5-2_zai_2026-06-21"], "voice_submissions": [],'
                   ' "legacy_submissions": ["gemini-3-pro_google_2025-11-18", "gpt-5_sierra_2025-08-09"]}')
    cut = tmp_path / "tau2_bench_manifest_2026-04-01.json"
    cut.write_text('{"submissions": ["glm5-2_zai_2026-06-21"], "legacy_submissions": ["gpt-5_sierra_2025-08-09"]}')
    assert not ingest_file(open_store(dbpath), "tau2_bench", old, aux_paths=subs, observed_at="2025-12-17").held_reason
    moved = ingest_file(open_store(dbpath), "tau2_bench", new, aux_paths=subs, observed_at="2026-03-18")
    assert moved.status == "new" and not moved.held_reason
    legacy = run_query(f"SELECT count(*) n FROM scores WHERE snapshot_id = {moved.snapshot_id} "
                       "AND benchmark = 'tau2_bench' AND table_version = 'legacy'", open_store(dbpath))["n"][0]
    assert legacy == 2
    assert "tau2_bench (legacy)" in ingest_file(open_store(dbpath), "tau2_bench", cut, aux_paths=subs,
                                              observed_at="2026-04-01").held_reason


def _store(dbpath: str, rows: list[tuple[str, str, float, str]], observed_at: str, name: str):
    """A csv-source snapshot of (benchmark, model, score, table_version) rows, stored as a parser's
    output would be (the generic CSV has no table_version column)."""
    from scrapers.base import ParsedSnapshot, validate
    from storage.ingest import store_snapshot
    from storage.responses import Response
    parsed = ParsedSnapshot(source="csv")
    parsed.scores = pd.DataFrame(rows, columns=["benchmark", "model", "score", "table_version"]).assign(
        metric="proportion", setting="")
    parsed = validate("csv", parsed, min_rows=1, produces="scores")
    with connect_synced(open_store(dbpath)) as con:
        return store_snapshot(con, parsed, [Response(name, name.encode())], observed_at=observed_at,
                              origin="ingest", parser_version=1)


def test_a_top_30_board_is_its_own_table_not_a_shrink(dbpath):
    """A source that also publishes only its top 30 of a benchmark labels that list with its own
    table_version: compared with earlier top-30 lists, never with the full table."""
    full = [("gpqa_diamond", f"m{i}", 0.3 + 0.005 * i, "") for i in range(100)]
    top = [("gpqa_diamond", f"m{i}", 0.3 + 0.005 * i, "top30") for i in range(70, 100)]
    assert not _store(dbpath, full, "2025-01-01", "a").held_reason
    assert not _store(dbpath, full + top, "2025-02-01", "b").held_reason
    assert not _store(dbpath, top, "2025-03-01", "c").held_reason           # the full table not in this response
    shrunk = _store(dbpath, full[:50] + top, "2025-04-01", "d")             # the full table cut in half: held
    assert shrunk.held_reason and "gpqa_diamond" in shrunk.held_reason and "top30" not in shrunk.held_reason


def test_a_source_that_prunes_sets_its_own_limit(dbpath, tmp_path, monkeypatch):
    """A board that drops retired models on purpose raises its own limit (Scraper.shrink_max_drop)."""
    (tmp_path / "a.csv").write_text(board(10))
    (tmp_path / "b.csv").write_text(board(6))
    (tmp_path / "c.csv").write_text(board(2))
    monkeypatch.setattr(type(scrapers.get("csv")), "shrink_max_drop", 0.5)
    ingest_file(open_store(dbpath), "csv", tmp_path / "a.csv", observed_at="2025-01-01")
    assert not ingest_file(open_store(dbpath), "csv", tmp_path / "b.csv", observed_at="2025-02-01").held_reason   # 40 %
    assert ingest_file(open_store(dbpath), "csv", tmp_path / "c.csv", observed_at="2025-03-01").held_reason       # 67 %

"""The leaderboard table (benchmark, source, table_version) is the unit wherever rows are compared
(issue 49): duplicate detection, the newest snapshot, the shrink guard and `latest_scores`.

Each bug is reproduced from a small file of our own: a model seen in two splits of one ARC-AGI
file, an older LiveBench release stored after the newest, a top-30 LMArena page after the full
board, a table shrinking a little at a time.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

import jobs.saturation as job
from jobs.cycle import ingest_file
from jobs.sync import connect_synced
from storage.ingest import SHRINK_MAX_DROP
from storage.query import run_query

NOW = pd.Timestamp("2026-06-10")


# --- ARC-AGI: one model in several splits of one version --------------------------------------

def arc_file(path, models: int = 8) -> None:
    """ARC-AGI-2 in two splits and ARC-AGI-1 in one; every model in every split (as the real board)."""
    rows = []
    for i in range(models):
        for dataset, base in (("v2_Semi_Private", 0.10), ("v2_Public_Eval", 0.12), ("v1_Semi_Private", 0.40)):
            rows.append({"datasetId": dataset, "modelId": f"model-{i}", "score": round(base + 0.05 * i, 3),
                         "costPerTask": 0.5 + i, "display": True})
    path.write_text(json.dumps({"generatedAt": "2026-06-01T00:00:00Z", "evaluations": rows}))


def test_a_model_in_two_splits_of_one_version_is_no_duplicate(synced_db, tmp_path):
    arc_file(tmp_path / "evaluations.json")
    res = ingest_file(synced_db, "arc_agi", tmp_path / "evaluations.json", observed_at="2026-06-02")
    assert not any("after alias mapping" in w for w in res.warnings)
    counts = run_query("SELECT table_id, count(DISTINCT model) AS n FROM latest_scores GROUP BY table_id "
                       "ORDER BY table_id", synced_db)
    got = dict(zip(counts["table_id"], counts["n"]))
    for table in ("arc_agi_2:arc_agi:semi_private", "arc_agi_2:arc_agi:public_eval", "arc_agi:arc_agi:semi_private",
                  "arc_agi_2_cost_per_task:arc_agi:semi_private", "arc_agi_2_cost_per_task:arc_agi:public_eval"):
        assert got[table] == 8, table
    excluded = run_query("SELECT count(*) AS n FROM scores WHERE excluded_reason LIKE 'duplicate%'", synced_db)
    assert int(excluded["n"][0]) == 0


def test_two_names_of_one_model_in_one_split_are_still_one(synced_db, tmp_path):
    """The rule the table key keeps: two names of one model in one table (o3 and its dated id, an
    alias) are one model, the first row used; in another split the same model is its own row."""
    rows = [{"datasetId": "v2_Semi_Private", "modelId": f"model-{i}", "score": 0.1 + 0.01 * i} for i in range(9)]
    rows += [{"datasetId": "v2_Semi_Private", "modelId": "o3", "score": 0.5},
             {"datasetId": "v2_Semi_Private", "modelId": "o3-2025-04-16", "score": 0.9},
             {"datasetId": "v2_Public_Eval", "modelId": "o3-2025-04-16", "score": 0.6}]
    (tmp_path / "e.json").write_text(json.dumps(rows))
    res = ingest_file(synced_db, "arc_agi", tmp_path / "e.json", observed_at="2026-06-02")
    assert any("after alias mapping" in w for w in res.warnings)
    n = run_query("SELECT count(*) AS n FROM latest_scores WHERE table_id = 'arc_agi_2:arc_agi:semi_private'", synced_db)
    assert int(n["n"][0]) == 10
    pub = run_query("SELECT count(*) AS n FROM latest_scores WHERE table_id = 'arc_agi_2:arc_agi:public_eval'", synced_db)
    assert int(pub["n"][0]) == 1


# --- LiveBench: an older release stored after the newest ----------------------------------------

def livebench_rows(release: str, scores: list[float]) -> str:
    tasks = ("task_a", "task_b")
    lines = ["model," + ",".join(tasks)]
    lines += [f"model-{i}," + ",".join(f"{100 * s:.1f}" for _ in tasks) for i, s in enumerate(scores)]
    return "\n".join(lines) + "\n"


def test_an_older_release_stored_last_never_becomes_current(synced_db, tmp_path, monkeypatch):
    """Release discovery stores the older release after the newest (a first live run): the
    newest release stays the current table, by its own date, not by the order of storing."""
    import scrapers
    monkeypatch.setattr(type(scrapers.get("livebench")), "min_rows", 1)
    for release, scores in (("2026_01_08", [0.80, 0.79, 0.78, 0.77, 0.76, 0.5]),
                            ("2025_03_25", [0.60, 0.50, 0.40, 0.30, 0.20, 0.1])):
        (tmp_path / f"table_{release}.csv").write_text(livebench_rows(release, scores))
        (tmp_path / f"categories_{release}.json").write_text(json.dumps({"Reasoning": ["task_a", "task_b"]}))
    for release in ("2026_01_08", "2025_03_25"):   # the newest first, the older after it (same run)
        ingest_file(synced_db, "livebench", tmp_path / f"table_{release}.csv",
                    aux_paths=[tmp_path / f"categories_{release}.json"], observed_at="2026-06-01")
    versions = run_query("SELECT DISTINCT table_version FROM latest_scores", synced_db)["table_version"].tolist()
    assert versions == ["2026-01-08"]
    with connect_synced(synced_db) as con:
        job.run_saturation(con, now=NOW)
        current = dict(con.execute("SELECT table_id, is_current FROM benchmark_tables "
                                   "WHERE benchmark = 'livebench'").fetchall())
        primary = [r[0] for r in con.execute("SELECT table_id FROM benchmark_tables "
                                             "WHERE benchmark = 'livebench' AND is_primary").fetchall()]
        latest = {r[0] for r in con.execute("SELECT table_id FROM saturation_latest").fetchall()}
        board = {r[0] for r in con.execute("SELECT table_id FROM leaderboard").fetchall()}
    assert current == {"livebench:livebench:2026-01-08": True, "livebench:livebench:2025-03-25": False}
    assert primary == ["livebench:livebench:2026-01-08"]
    assert "livebench:livebench:2026-01-08" in latest and "livebench:livebench:2025-03-25" not in latest
    assert "livebench:livebench:2026-01-08" in board and "livebench:livebench:2025-03-25" not in board


# --- LMArena: a top-30 page after the full board ------------------------------------------------

def catalogue(n: int) -> str:
    full = {f"model-{i}": {"rating": 1500 - 3 * i, "rating_q025": 1495 - 3 * i, "rating_q975": 1505 - 3 * i}
            for i in range(n)}
    coding = dict(list(full.items())[: n // 2])
    return json.dumps({"full": full, "coding": coding})


def top_page(n: int) -> str:
    rows = "\n".join(f"| {i + 1} | model-{i} | {1501 - 3 * i} | +5/-4 | 1000 |" for i in range(n))
    return (f"# 文本榜单\n\n本页展示榜单前 {n} 名的每日快照。\n\n> **数据更新时间**: 2026-07-29 04:46:45 UTC\n\n"
            f"## 前 {n} 名\n\n| 排名 | 模型 | 分数 | 置信区间 | 票数 |\n|---|---|---|---|---|\n{rows}\n")


def test_a_top_page_never_replaces_the_full_board(synced_db, tmp_path):
    (tmp_path / "leaderboard-text.json").write_text(catalogue(60))
    (tmp_path / "text.md").write_text(top_page(30))
    ingest_file(synced_db, "lmarena", tmp_path / "leaderboard-text.json", observed_at="2026-06-01")
    res = ingest_file(synced_db, "lmarena", tmp_path / "text.md", observed_at="2026-07-29")
    assert not res.held_reason                      # another table: never a shrink of the full board
    overall = run_query("SELECT table_id, count(*) AS n FROM latest_scores WHERE benchmark = 'arena_elo' "
                        "GROUP BY table_id", synced_db)
    assert dict(zip(overall["table_id"], overall["n"])) == {"arena_elo:lmarena": 60}
    # the catalogue's other categories stay in use
    assert run_query("SELECT count(*) AS n FROM latest_scores WHERE benchmark = 'arena_elo_text_coding'",
                     synced_db)["n"][0] == 30
    with connect_synced(synced_db) as con:
        job.run_saturation(con, now=pd.Timestamp("2026-07-30"))
        tables = con.execute("SELECT table_id, is_current, is_primary, n_models FROM benchmark_tables "
                             "WHERE benchmark = 'arena_elo' ORDER BY table_id").fetchall()
    assert tables == [("arena_elo:lmarena", True, True, 60), ("arena_elo:lmarena:top30", False, False, 30)]


def test_a_new_full_board_after_a_page_is_used(synced_db, tmp_path):
    (tmp_path / "text.md").write_text(top_page(30))
    (tmp_path / "leaderboard-text.json").write_text(catalogue(60))
    ingest_file(synced_db, "lmarena", tmp_path / "text.md", observed_at="2026-05-01")
    ingest_file(synced_db, "lmarena", tmp_path / "leaderboard-text.json", observed_at="2026-06-01")
    overall = run_query("SELECT DISTINCT table_id FROM latest_scores WHERE benchmark = 'arena_elo'", synced_db)
    assert overall["table_id"].tolist() == ["arena_elo:lmarena"]


# --- the shrink guard: against the table's recent maximum ---------------------------------------

def board(n: int) -> str:
    return "model,benchmark,score\n" + "".join(f"model-{i},gpqa_diamond,{0.5 + 0.004 * i:.3f}\n" for i in range(n))


def test_gradual_shrinking_is_held_against_the_recent_maximum(synced_db, tmp_path):
    """100 -> 81 -> 66 -> 54 -> 44: each step drops less than the guard's share of the previous
    snapshot, the whole more than half of the table; held from the step that passes the guard's
    share of the recent maximum on."""
    held = []
    for day, n in enumerate((100, 81, 66, 54, 44), start=1):
        (tmp_path / f"{n}.csv").write_text(board(n))
        res = ingest_file(synced_db, "csv", tmp_path / f"{n}.csv", observed_at=f"2025-01-0{day}")
        held.append(bool(res.held_reason))
    assert held == [False, False, True, True, True]
    assert 100 - 66 > SHRINK_MAX_DROP * 100 and 81 - 66 <= SHRINK_MAX_DROP * 81
    n = run_query("SELECT count(*) AS n FROM latest_scores", synced_db)["n"][0]
    assert n == 81


def test_an_accepted_size_is_the_new_reference(synced_db, tmp_path):
    """Once a person accepts a smaller table, later snapshots compare with it, not with the old maximum."""
    from storage.ingest import accept_snapshot
    (tmp_path / "a.csv").write_text(board(100))
    (tmp_path / "b.csv").write_text(board(60))
    (tmp_path / "c.csv").write_text(board(55))
    ingest_file(synced_db, "csv", tmp_path / "a.csv", observed_at="2025-01-01")
    res = ingest_file(synced_db, "csv", tmp_path / "b.csv", observed_at="2025-01-02")
    assert res.held_reason
    with connect_synced(synced_db) as con:
        accept_snapshot(con, res.snapshot_id)
    res = ingest_file(synced_db, "csv", tmp_path / "c.csv", observed_at="2025-01-03")
    assert not res.held_reason

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
from jobs.ingest import ingest_file
from jobs.sync import connect_synced
from storage.shrink_guard import SHRINK_MAX_DROP
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
    res = ingest_file(open_store(synced_db), "arc_agi", tmp_path / "evaluations.json", observed_at="2026-06-02")
    assert not any("after alias mapping" in w for w in res.warnings)
    counts = run_query("SELECT table_id, count(DISTINCT model) AS n FROM latest_scores GROUP BY table_id "
                       "ORDER BY table_id", open_store(synced_db))
    got = dict(zip(counts["table_id"], counts["n"]))
    for table in ("arc_agi_2:arc_agi:semi_private", "arc_agi_2:arc_agi:public_eval", "arc_agi:arc_agi:semi_private",
                  "arc_agi_2_cost_per_task:arc_agi:semi_private", "arc_agi_2_cost_per_task:arc_agi:public_eval"):
        assert got[table] == 8, table
    excluded = run_query("SELECT count(*) AS n FROM scores WHERE excluded_reason LIKE 'duplicate%'", open_store(synced_db))
    assert int(excluded["n"][0]) == 0


def test_two_names_of_one_model_in_one_split_are_still_one(synced_db, tmp_path):
    """The rule the table key keeps: two names of one model in one table (o3 and its dated id, an
    alias) are one model, the first row used; in another split the same model is its own row."""
    rows = [{"datasetId": "v2_Semi_Private", "modelId": f"model-{i}", "score": 0.1 + 0.01 * i} for i in range(9)]
    rows += [{"datasetId": "v2_Semi_Private", "modelId": "o3", "score": 0.5},
             {"datasetId": "v2_Semi_Private", "modelId": "o3-2025-04-16", "score": 0.9},
             {"datasetId": "v2_Public_Eval", "modelId": "o3-2025-04-16", "score": 0.6}]
    (tmp_path / "e.json").write_text(json.dumps(rows))
    res = ingest_file(open_store(synced_db), "arc_agi", tmp_path / "e.json", observed_at="2026-06-02")
    assert any("after alias mapping" in w for w in res.warnings)
    n = run_query("SELECT count(*) AS n FROM latest_scores WHERE table_id = 'arc_agi_2:arc_agi:semi_private'", open_store(synced_db))
    assert int(n["n"][0]) == 10
    pub = run_query("SELECT count(*) AS n FROM latest_scores WHERE table_id = 'arc_agi_2:arc_agi:public_eval'", open_store(synced_db))
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
        ingest_file(open_store(synced_db), "livebench", tmp_path / f"table_{release}.csv",
                    aux_paths=[tmp_path / f"categories_{release}.json"], observed_at="2026-06-01")
    versions = run_query("SELECT DISTINCT table_version FROM latest_scores", open_store(synced_db))["table_version"].tolist()
    assert versions == ["2026-01-08"]
    with connect_synced(open_store(synced_db)) as con:
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
    ingest_file(open_store(synced_db), "lmarena", tmp_path / "leaderboard-text.json", observed_at="2026-06-01")
    res = ingest_file(open_store(synced_db), "lmarena", tmp_path / "text.md", observed_at="2026-07-29")
    assert not res.held_reason                      # another table: never a shrink of the full board
    overall = run_query("SELECT table_id, count(*) AS n FROM latest_scores WHERE benchmark = 'arena_elo' "
                        "GROUP BY table_id", open_store(synced_db))
    assert dict(zip(overall["table_id"], overall["n"])) == {"arena_elo:lmarena": 60}
    # the catalogue's other categories stay in use
    assert run_query("SELECT count(*) AS n FROM latest_scores WHERE benchmark = 'arena_elo_text_coding'",
                     open_store(synced_db))["n"][0] == 30
    with connect_synced(open_store(synced_db)) as con:
        job.run_saturation(con, now=pd.Timestamp("2026-07-30"))
        tables = con.execute("SELECT table_id, is_current, is_primary, n_models FROM benchmark_tables "
                             "WHERE benchmark = 'arena_elo' ORDER BY table_id").fetchall()
    assert tables == [("arena_elo:lmarena", True, True, 60), ("arena_elo:lmarena:top30", False, False, 30)]


def test_a_new_full_board_after_a_page_is_used(synced_db, tmp_path):
    (tmp_path / "text.md").write_text(top_page(30))
    (tmp_path / "leaderboard-text.json").write_text(catalogue(60))
    ingest_file(open_store(synced_db), "lmarena", tmp_path / "text.md", observed_at="2026-05-01")
    ingest_file(open_store(synced_db), "lmarena", tmp_path / "leaderboard-text.json", observed_at="2026-06-01")
    overall = run_query("SELECT DISTINCT table_id FROM latest_scores WHERE benchmark = 'arena_elo'", open_store(synced_db))
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
        res = ingest_file(open_store(synced_db), "csv", tmp_path / f"{n}.csv", observed_at=f"2025-01-0{day}")
        held.append(bool(res.held_reason))
    assert held == [False, False, True, True, True]
    assert 100 - 66 > SHRINK_MAX_DROP * 100 and 81 - 66 <= SHRINK_MAX_DROP * 81
    n = run_query("SELECT count(*) AS n FROM latest_scores", open_store(synced_db))["n"][0]
    assert n == 81


def test_an_accepted_size_is_the_new_reference(synced_db, tmp_path):
    """Once a person accepts a smaller table, later snapshots compare with it, not with the old maximum."""
    from storage.ingest import accept_snapshot
    (tmp_path / "a.csv").write_text(board(100))
    (tmp_path / "b.csv").write_text(board(60))
    (tmp_path / "c.csv").write_text(board(55))
    ingest_file(open_store(synced_db), "csv", tmp_path / "a.csv", observed_at="2025-01-01")
    res = ingest_file(open_store(synced_db), "csv", tmp_path / "b.csv", observed_at="2025-01-02")
    assert res.held_reason
    with connect_synced(open_store(synced_db)) as con:
        accept_snapshot(con, res.snapshot_id)
    res = ingest_file(open_store(synced_db), "csv", tmp_path / "c.csv", observed_at="2025-01-03")
    assert not res.held_reason


def test_version_kind_in_sql_is_the_registry_rule(synced_db):
    """latest_scores repeats registry.tables.version_kind; both must say the same of every form."""
    from registry import tables as rt
    versions = ["", "2026-01-08", "2024-11-25", "top30", "top5", "semi_private", "v0.1", "2026-01", "top",
                "xtop30", "2026-01-08b"]
    with connect_synced(open_store(synced_db)) as con:
        sql = con.execute("""
            SELECT v, CASE WHEN regexp_full_match(v, '\\d{4}-\\d{2}-\\d{2}') THEN 'release'
                           WHEN regexp_full_match(v, 'top\\d+') THEN 'partial' ELSE 'board' END
            FROM unnest(?::VARCHAR[]) t(v)""", [versions]).fetchall()
        view = con.execute("SELECT sql FROM duckdb_views() WHERE view_name = 'latest_scores'"
                           ).fetchone()[0]
    assert dict(sql) == {v: rt.version_kind(v) for v in versions}
    assert "\\d{4}-\\d{2}-\\d{2}" in view and "top\\d+" in view


# --- real copies: every table's models, counted independently from the raw file -----------------

from helpers import SNAPSHOTS, needs   # noqa: E402
from storage.store import open_store


def _slug(text: str) -> str:
    import re
    return re.sub(r"[^a-z0-9]+", "_", str(text).strip().lower()).strip("_")


def arc_counts(path) -> dict[tuple[str, str], set[str]]:
    """(benchmark, split) -> the raw model ids of the rows the board shows with a score in [0, 1],
    read from an evaluations JSON or the wide CSV export (this test's own reader)."""
    import csv
    import re
    out: dict[tuple[str, str], set[str]] = {}

    def add(dataset: str, model: str, score, display) -> None:
        m = re.match(r"^v(\d+)[_-](.+)$", str(dataset).strip(), re.I)
        try:
            value = float(score)
        except (TypeError, ValueError):
            return
        if not m or not 0 <= value <= 1 or str(display).lower() == "false":
            return
        bench = "arc_agi" if m[1] == "1" else f"arc_agi_{m[1]}"
        out.setdefault((bench, _slug(m[2])), set()).add(str(model).strip())

    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith(("[", "{")):
        data = json.loads(text)
        rows = data.get("evaluations", []) if isinstance(data, dict) else data
        for r in rows:
            add(r.get("datasetId"), r.get("modelId"), r.get("score"), r.get("display"))
    else:
        for r in csv.DictReader(text.splitlines()):
            for col, cell in r.items():
                if col and col.endswith("_Score") and str(cell or "").strip():
                    add(col[: -len("_Score")], r.get("Config"), cell, r.get("display"))
    return out


def catalogue_counts(path, identity: dict[str, str]) -> list[int]:
    """The number of rated models of each category of an LMArena catalogue JSON (two keys of one
    model by the stored identity once)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    counts = []
    for board in data.values():
        if isinstance(board, dict):
            rated = {identity.get(k.strip(), k.strip()) for k, e in board.items()
                     if isinstance(e, dict) and isinstance(e.get("rating"), (int, float))}
            counts.append(len(rated))
    return sorted(c for c in counts if c)


def markdown_rows(path) -> int:
    """Data rows of the page's first markdown table whose score cell starts with a number."""
    import re
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(r"^\s*\|[\s:|-]+\|\s*$", line) and "-" in line)
    header = [c.strip() for c in lines[start - 1].strip().strip("|").split("|")]
    score = next(i for i, h in enumerate(header) if "分数" in h or h.lower().startswith("score"))
    n = 0
    for line in lines[start + 1:]:
        if not line.strip().startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) > score and re.match(r"^-?\d", cells[score]):
            n += 1
    return n


def _real_files():
    if not SNAPSHOTS.exists():
        return []
    files = sorted(p for p in (SNAPSHOTS / "arc_agi").glob("*") if "_evaluations_" in p.name or p.suffix == ".csv")
    files += sorted(p for p in (SNAPSHOTS / "lmarena_history").glob("*catalog_*.json"))
    files += sorted(p for p in (SNAPSHOTS / "lmarena_history").glob("*.md"))
    return files


@needs(SNAPSHOTS)
@pytest.mark.slow
@pytest.mark.parametrize("path", _real_files(), ids=lambda p: p.name)
def test_each_real_table_holds_every_model_of_its_file(path, synced_db):
    """Each ARC-AGI and LMArena copy alone: each table of latest_scores has as many distinct models
    as this test counts in the raw file (two raw names of one model, by the stored identity, once)."""
    source = "arc_agi" if path.parent.name == "arc_agi" else "lmarena"
    aux = []
    if "_evaluations_" in path.name:
        date = path.name.rsplit("_", 1)[1]
        aux = [p for p in path.parent.glob(f"*_models_{date}")]
    ingest_file(open_store(synced_db), source, path, aux_paths=aux, observed_at="2026-06-01")
    latest = run_query("SELECT table_id, benchmark, table_version, model, model_raw FROM latest_scores", open_store(synced_db))
    stored = run_query("SELECT benchmark, table_version, model, model_raw FROM scores", open_store(synced_db))
    per_table = latest.groupby("table_id")["model"].nunique().to_dict()
    identity = dict(zip(stored["model_raw"], stored["model"]))
    if source == "arc_agi":
        want = {(f"{b}:arc_agi:{v}"): len({identity.get(m, m) for m in models})
                for (b, v), models in arc_counts(path).items()}
        got = {t: n for t, n in per_table.items() if "_cost_per_task" not in t}
        assert got == want
    elif path.suffix == ".json":
        assert sorted(per_table.values()) == catalogue_counts(path, identity)
    else:
        rows = markdown_rows(path)
        stored_rows = len(stored)
        assert stored_rows == rows
        assert len(per_table) == 1 and list(per_table.values())[0] == stored["model"].nunique()


# --- an existing file is corrected, and the next digest says so once ---------------------------

def _snap(sid: int, source: str, observed: str, file_name: str) -> dict:
    t = pd.Timestamp(observed, tz="UTC")
    return {"id": sid, "source": source, "sha256": f"s{sid}", "blob_sha256": [f"s{sid}"], "file_names": [file_name],
            "observed_at": t, "first_seen": t, "last_seen": t, "origin": "ingest", "parser_version": 1,
            "n_scores": 0, "n_items": 0, "n_models": 0, "n_rejects": 0, "status": "ok"}


def _row(sid: int, source: str, bench: str, model: str, value: float, version: str, excluded: str = "") -> dict:
    return {"snapshot_id": sid, "source": source, "benchmark": bench, "benchmark_raw": bench, "model": model,
            "model_raw": model, "setting": "", "score": value, "metric": "proportion", "n_items": 120,
            "excluded_reason": excluded, "variant": "", "population": "models", "table_version": version}


def test_migration_040_corrects_an_old_file_and_the_digest_says_it_once(tmp_path, monkeypatch):
    """A file the previous release left: ARC-AGI-2 public_eval rows dropped as duplicates of the
    semi-private ones, an older LiveBench release stored last and shown, an ARC-AGI-3 run cost
    stored as a cost per task. Migration 040 restores the rows and moves the cost, the new view
    shows the newest release, and the first notify says once which tables were corrected."""
    from pathlib import Path
    from jobs.alerts import run_notify
    from storage import db
    from storage.db import insert_frame
    from storage.ingest import canonical_duplicate_reason
    path = tmp_path / "old.duckdb"
    shipped = db.migrations()
    monkeypatch.setattr(db, "migrations", lambda: tuple(m for m in shipped if m[0] < 40))
    old_view = Path(db.__file__).parent / "migrations" / "023_latest_scores_semantics.sql"
    with db.connect(path) as con:                       # a file as the previous release left it
        insert_frame(con, "snapshots", pd.DataFrame([
            _snap(1, "arc_agi", "2026-06-01", "evaluations.json"),
            _snap(2, "livebench", "2026-06-01", "table_2026_01_08.csv"),
            _snap(3, "livebench", "2026-06-01", "table_2025_03_25.csv"),
            dict(_snap(4, "lmarena", "2025-05-14", "elo_data.json"),
                 meta='{"kinds": {"elo_data.json": "elo_max_derived"}}')]))
        rows = [_row(1, "arc_agi", "arc_agi_2", f"m{i}", 0.1 * i, "semi_private") for i in range(6)]
        rows += [_row(1, "arc_agi", "arc_agi_2", f"m{i}", 0.1 * i, "public_eval",
                      canonical_duplicate_reason(f"m{i}", f"m{i}")) for i in range(6)]
        rows += [dict(_row(1, "arc_agi", "arc_agi_3_cost_per_task", f"m{i}", 100.0 + i, "semi_private"),
                      metric="cost_usd") for i in range(6)]
        rows += [_row(2, "livebench", "livebench", f"m{i}", 0.5, "2026-01-08") for i in range(6)]
        rows += [_row(3, "livebench", "livebench", f"m{i}", 0.4, "2025-03-25") for i in range(5)]
        rows += [dict(_row(4, "lmarena", "arena_elo_text_coding", "m0", 1400.0 + i, ""), metric="elo",
                      setting=f"2025-05-0{i + 1}") for i in range(3)]
        insert_frame(con, "scores", pd.DataFrame(rows))
        con.execute(old_view.read_text())               # the view the previous release applied
        con.execute("UPDATE schema_files SET sha256 = 'previous' WHERE path = 'latest_scores.sql'")
        before = dict(con.execute("SELECT table_id, count(*) FROM latest_scores GROUP BY 1").fetchall())
    assert before == {"arc_agi_2:arc_agi:semi_private": 6, "livebench:livebench:2025-03-25": 5,
                      "arc_agi_3_cost_per_task:arc_agi:semi_private": 6, "arena_elo_text_coding:lmarena": 3}
    monkeypatch.undo()
    with db.connect(path) as con:
        after = dict(con.execute("SELECT table_id, count(*) FROM latest_scores GROUP BY 1").fetchall())
    assert after == {"arc_agi_2:arc_agi:semi_private": 6, "arc_agi_2:arc_agi:public_eval": 6,
                     "livebench:livebench:2026-01-08": 6, "arc_agi_3_run_cost:arc_agi:semi_private": 6,
                     "arena_elo_text_coding:lmarena:top1": 3}
    lines: list[str] = []
    from alerts.slack import ConsoleNotifier
    first = run_notify(open_store(path), now=pd.Timestamp("2026-06-02", tz="UTC").to_pydatetime(),
                       notifier=ConsoleNotifier(lines.append))
    assert sorted(first.corrected) == [
        "corrected arc_agi_2:arc_agi:public_eval: now in use (6 models)",
        "corrected arc_agi_3_cost_per_task:arc_agi:semi_private: no longer in use (was 6 models)",
        "corrected arc_agi_3_run_cost:arc_agi:semi_private: now in use (6 models)",
        "corrected arena_elo_text_coding:lmarena: no longer in use (was 1 model)",
        "corrected arena_elo_text_coding:lmarena:top1: now in use (1 model)",
        "corrected livebench:livebench:2025-03-25: no longer in use (was 5 models)",
        "corrected livebench:livebench:2026-01-08: now in use (6 models)"]
    second = run_notify(open_store(path), now=pd.Timestamp("2026-06-03", tz="UTC").to_pydatetime(),
                        notifier=ConsoleNotifier(lines.append))
    assert second.corrected == []


def test_an_arc_agi_3_run_cost_is_no_cost_per_task(synced_db, tmp_path):
    rows = [{"datasetId": "v3_Semi_Private", "modelId": f"m{i}", "score": 0.1 + 0.01 * i, "cost": 100.0 + i}
            for i in range(6)]
    rows += [{"datasetId": "v2_Semi_Private", "modelId": f"m{i}", "score": 0.2, "cost": 1.5} for i in range(6)]
    (tmp_path / "e.json").write_text(json.dumps(rows))
    ingest_file(open_store(synced_db), "arc_agi", tmp_path / "e.json", observed_at="2026-06-01")
    got = run_query("SELECT benchmark, count(*) AS n FROM latest_scores WHERE metric = 'cost_usd' GROUP BY 1",
                    open_store(synced_db))
    assert dict(zip(got["benchmark"], got["n"])) == {"arc_agi_3_run_cost": 6, "arc_agi_2_cost_per_task": 6}


def test_a_corrected_tables_level_move_is_said_by_the_correction_not_as_a_change(synced_db, fake_slack):
    """The first digest after a correction: one message names the corrected table; that table's
    level move is folded into it (delivered, not sent as a change); another table's move is sent."""
    from datetime import timedelta
    from alerts.slack import SlackWebhookNotifier
    from analysis.constants import LEVEL_DWELL_DAYS
    from jobs.alerts import run_notify
    from storage import db
    from test_notify import T0, add_saturation, outbox, sections
    slack = SlackWebhookNotifier(fake_slack.webhook_url)
    path = str(synced_db)

    def day(i: float):
        return T0 + timedelta(days=i)

    for bench, source in (("swebench_verified", "swebench"), ("gpqa_diamond", "epoch")):
        add_saturation(path, day(0), 0.50, bench=bench, source=source)
    run_notify(open_store(path), now=day(0.1), notifier=slack)              # the baseline
    stood = 1 + LEVEL_DWELL_DAYS + 1          # the move proposed on day 1 has stood its dwell time
    for d, s in ((1, 0.80), (stood, 0.81)):
        for bench, source in (("swebench_verified", "swebench"), ("gpqa_diamond", "epoch")):
            add_saturation(path, day(d), s, bench=bench, source=source)
        if d == 1:
            run_notify(open_store(path), now=day(1.1), notifier=slack)      # pending
    with db.connect(path) as con:
        con.execute("INSERT INTO table_corrections (table_id, detail, corrected_at) VALUES (?, ?, ?)",
                    ["swebench_verified:swebench", "12 -> 148 models in use", day(stood)])
    summary = run_notify(open_store(path), now=day(stood + 0.1), notifier=slack)
    assert summary.corrected == ["corrected swebench_verified:swebench: 12 -> 148 models in use"]
    assert [t for t in summary.sent_titles] == ["GPQA Diamond (Epoch AI): level moderate → high"]
    texts = sections(fake_slack)
    assert any("swebench_verified:swebench" in t and "12 -&gt; 148 models in use" in t for t in texts) or \
        any("swebench_verified:swebench" in t and "12 -> 148" in t for t in texts)
    assert not any("SWE-bench Verified (SWE-bench): level" in t for t in texts)
    box = outbox(path)
    folded = box[box["receiver"].fillna("").str.contains("folded")]
    assert folded["kind"].tolist() == ["saturation_bin_changed"] and folded["delivered_at"].notna().all()
    assert run_notify(open_store(path), now=day(stood + 0.2), notifier=slack).corrected == []   # said once


@needs(SNAPSHOTS)
@pytest.mark.slow
def test_the_real_lmarena_history_keeps_the_full_board_in_use_after_a_top_page(synced_db):
    """The LMArena history copies in date order: the overall table in use is the newest full board
    (this test's own reading: a page whose text says it lists the top N is not one), never a newer
    top-N page; its rows are the rows that file holds."""
    import re
    folder = SNAPSHOTS / "lmarena_history"
    dated = sorted((re.search(r"_(\d{4}-\d{2}-\d{2})\.", p.name)[1], p) for p in folder.glob("*")
                   if re.search(r"_(\d{4}-\d{2}-\d{2})\.", p.name))
    if not any(re.search(r"前\s*\d+\s*名|top\s*\d+", p.read_text(encoding="utf-8", errors="replace")[:3000],
                         re.IGNORECASE) for _, p in dated if p.suffix == ".md"):
        pytest.skip("no top-N page among the copies")
    for date, p in dated:
        ingest_file(open_store(synced_db), "lmarena", p, observed_at=date)

    def partial(p) -> bool:
        head = p.read_text(encoding="utf-8", errors="replace")
        head = head[: head.find("|")] if "|" in head else head
        return p.suffix == ".md" and bool(re.search(r"前\s*\d+\s*名|\btop[ -]?\d+\b", head, re.IGNORECASE))
    full = [p for _, p in dated if not partial(p)]
    newest = full[-1]
    used = run_query("SELECT DISTINCT s.file_names[1] AS f FROM latest_scores l JOIN snapshots s "
                     "ON s.id = l.snapshot_id WHERE l.table_id = 'arena_elo:lmarena'", open_store(synced_db))["f"].tolist()
    assert used == [newest.name]
    if newest.suffix == ".md":
        n = run_query("SELECT count(*) AS n FROM scores sc JOIN snapshots s ON s.id = sc.snapshot_id "
                      "WHERE s.file_names[1] = ? AND sc.benchmark = 'arena_elo'".replace("?", f"'{newest.name}'"),
                      open_store(synced_db))["n"][0]
        assert n == markdown_rows(newest)


def test_a_shrunk_table_is_held_but_the_snapshots_other_tables_are_used(synced_db, tmp_path):
    """A catalogue whose language board shrank (the real 2025-11-05 copy: 229 -> 130) and which adds
    a category: the shrunk board is held (the older one stays in use), the new category and the
    full board are used at once; accepting the snapshot releases the shrunk board too."""
    from storage.ingest import accept_snapshot

    def cat(n_full: int, n_spanish: int, extra: bool) -> str:
        full = {f"model-{i}": {"rating": 1500 - i, "rating_q025": 1495 - i, "rating_q975": 1505 - i}
                for i in range(n_full)}
        doc = {"full": full, "spanish": dict(list(full.items())[:n_spanish])}
        if extra:
            doc["expert"] = dict(list(full.items())[:20])
        return json.dumps(doc)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "leaderboard-text.json").write_text(cat(50, 40, False))
    (tmp_path / "b" / "leaderboard-text.json").write_text(cat(55, 20, True))
    ingest_file(open_store(synced_db), "lmarena", tmp_path / "a" / "leaderboard-text.json", observed_at="2025-11-01")
    res = ingest_file(open_store(synced_db), "lmarena", tmp_path / "b" / "leaderboard-text.json", observed_at="2025-11-05")
    assert "arena_elo_text_spanish" in res.held_reason and "expert" not in res.held_reason
    got = run_query("SELECT table_id, count(*) AS n, min(snapshot_id) AS s FROM latest_scores GROUP BY 1", open_store(synced_db))
    tables = {t: (int(n), int(s)) for t, n, s in zip(got["table_id"], got["n"], got["s"])}
    assert tables == {"arena_elo:lmarena": (55, res.snapshot_id), "arena_elo_text_expert:lmarena": (20, res.snapshot_id),
                      "arena_elo_text_spanish:lmarena": (40, res.snapshot_id - 1)}
    with connect_synced(open_store(synced_db)) as con:
        accept_snapshot(con, res.snapshot_id)
    n = run_query("SELECT count(*) AS n FROM latest_scores WHERE benchmark = 'arena_elo_text_spanish'", open_store(synced_db))
    assert n["n"][0] == 20

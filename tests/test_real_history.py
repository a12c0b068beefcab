"""The real leaderboard copies of ../shared/snapshots, end to end: backfill, analyze, read the views.

Skipped when the folder is absent. Figures were checked by hand (see docs/statistics.md).
"""

from __future__ import annotations

import importlib.util
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from flows.jobs import analyze, ingest_file
from storage.query import run_query

SNAPSHOTS = Path(__file__).resolve().parents[2] / "shared" / "snapshots"
pytestmark = pytest.mark.skipif(not SNAPSHOTS.is_dir(), reason="../shared/snapshots not present")


def backfill_module():
    path = Path(__file__).resolve().parents[1] / "scripts" / "backfill_snapshots.py"
    spec = importlib.util.spec_from_file_location("backfill_snapshots", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def history(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("real") / "history.duckdb"
    jobs = backfill_module().plan(SNAPSHOTS)
    assert len(jobs) >= 45
    for source, path, aux, date in jobs:
        ingest_file(db, source, path, aux_paths=aux, observed_at=date)   # raises on any failure
    analyze(db, now=datetime(2026, 11, 29, tzinfo=timezone.utc))
    return db


def level(db: Path, benchmark: str, scope: str = "all") -> dict:
    df = run_query(f"SELECT * FROM saturation_latest WHERE benchmark = '{benchmark}' AND scope = '{scope}'", db)
    assert len(df) == 1, benchmark
    return df.iloc[0].to_dict()


def test_every_snapshot_file_is_stored_once(history):
    per_source = dict(run_query("SELECT source, count(*) FROM snapshots GROUP BY source", history)
                      .itertuples(index=False))
    assert per_source["swebench"] == 5 and per_source["livecodebench"] == 4 and per_source["epoch"] == 6
    assert run_query("SELECT count(*) n FROM snapshots", history)["n"][0] == len(backfill_module().plan(SNAPSHOTS))
    # the newest SWE-bench board: 2025-11-24 JSON (the 2025-11-18 HTML page is older)
    latest = run_query("SELECT DISTINCT observed_at FROM latest_scores WHERE source = 'swebench' "
                       "AND benchmark = 'swebench_verified'", history)
    assert str(latest["observed_at"][0])[:10] == "2025-11-24"


def test_saturation_levels_match_a_hand_computation(history):
    # SWE-bench Verified, pooled over the swebench board and Epoch's runs, n = 500:
    # top-5 .788, .787, .774, .769, .768 -> SE_delta ~ .124 with n_eff = sqrt(500): very high,
    # and "stagnation": indistinguishable at ~79%, far below the ceiling.
    swe = level(history, "swebench_verified")
    assert swe["bin"] == "very high" and swe["stagnation"]
    assert swe["s_index"] == pytest.approx(0.974, abs=0.005)
    # MMLU (simple-evals + LMArena's column), n = 14042: top-5 .933 ... .908 -> R = .71, S = .60
    mmlu = level(history, "mmlu")
    assert mmlu["bin"] == "moderate" and mmlu["s_index"] == pytest.approx(0.602, abs=0.005)
    # LiveBench's global average: the registry's nominal n (dynamic benchmark) -> "assumed"
    live = level(history, "livebench")
    assert live["uncertainty"] == "assumed" and live["bin"] == "very high"
    assert level(history, "livecodebench")["s_index"] == pytest.approx(0.75, abs=0.01)   # paper: 0.77


def test_livecodebench_deepseek_models_are_suspect_and_gpt_claude_are_not(history):
    sus = run_query("SELECT model, signal, status, effect FROM suspects WHERE benchmark = 'livecodebench' "
                    "AND signal = 'A3'", history)
    flagged = set(sus.loc[sus["status"] != "not_flagged", "model"])
    assert {"deepseek-coder-33b-instruct", "DSCoder-33b-Base", "DSCoder-6.7b-Base"} <= flagged
    assert not any(m.lower().startswith(("gpt", "claude")) for m in flagged)
    assert all(s in ("suspect", "persisted", "corroborated") for s in sus.loc[sus["model"].isin(flagged), "status"])


def test_a2_compares_registry_successors_with_their_predecessors(history):
    a2 = run_query("SELECT model, detail, effect FROM suspects WHERE signal = 'A2'", history)
    pairs = set(zip(a2["model"], a2["detail"]))
    assert ("gpt-4o-2024-08-06", "predecessor gpt-4o-2024-05-13") in pairs
    # dated GPT-4o snapshots on MMLU: no excess jump (|effect| around 1 pp), nothing flagged
    row = a2[(a2["model"] == "gpt-4o-2024-08-06")].iloc[0]
    assert abs(row["effect"]) < 0.03

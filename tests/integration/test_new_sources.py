"""The sources of issue 21 on their real copies: the paper's τ²-bench row reproduced from the raw
submissions, and each new folder of ../shared/snapshots backfilled alone into a fresh database
(exit 0) with scores, an index and a level."""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path

import pytest

import scrapers
from cli.main import main
from jobs.backfill import plan_with_skips
from helpers import SNAPSHOTS, needs
from storage.query import run_query
from storage.store import open_store

FIX = Path(__file__).resolve().parents[1] / "fixtures"
AT = datetime(2026, 1, 1)
PAPER_TOP5 = [85.4, 84.7, 80.8, 80.4, 80.0]     # Akhtar, Reuel et al. 2026, τ²-bench row


def tau2(manifest: Path, subs: list[Path]):
    scraper = scrapers.get("tau2_bench")
    return scraper.parse_checked(manifest.read_bytes(), fetched_at=AT, aux={p.name: p.read_bytes() for p in subs},
                                 filename=manifest.name)


def test_tau2_paper_figure_is_the_unweighted_mean_of_three_domains():
    """`tau2_bench` = mean of retail, airline, telecom pass^1 (not task-weighted); absent when a
    domain is missing; never from pass^k > 1 or banking."""
    subs = sorted((FIX / "tau2_bench").glob("sub_*.json"))
    p = tau2(FIX / "tau2_bench" / "manifest_2026-07-01.json", subs)
    s = p.scores
    one = lambda b, m: float(s[(s.benchmark == b) & (s.model == m)]["score"].iloc[0])  # noqa: E731
    for model in ("GPT-5", "GLM-5.2", "gpt-realtime-1.5"):
        parts = [one(f"tau2_bench_{d}", model) for d in ("retail", "airline", "telecom")]
        assert one("tau2_bench", model) == pytest.approx(sum(parts) / 3)
        weighted = (114 * parts[0] + 50 * parts[1] + 114 * parts[2]) / 278
        assert one("tau2_bench", model) != pytest.approx(weighted)
    assert s[(s.benchmark == "tau2_bench") & (s.model == "GPT-5.4")].empty     # banking only
    assert set(s[s.benchmark == "tau2_bench"]["n_items"].dropna()) == set()   # n comes from the registry (279)


@needs(SNAPSHOTS)
def test_tau2_paper_top5_reproduced_from_the_2025_12_17_snapshot():
    folder = SNAPSHOTS / "tau2_bench"
    p = tau2(folder / "tau2_bench_manifest_2025-12-17.json", sorted(folder.glob("tau2_bench_sub_*_2025-12-17.json")))
    top = p.scores[p.scores.benchmark == "tau2_bench"].sort_values("score", ascending=False).head(5)
    assert [round(100 * v, 1) for v in top["score"]] == PAPER_TOP5
    assert top["model"].tolist() == ["Gemini 3.0 Pro", "Claude-Sonnet-4.5", "Qwen3-Max-Thinking-Preview",
                                     "DeepSeek-V3.2", "GPT-5"]


NEW_FOLDERS = ("tau2_bench", "lmarena_history", "livebench_releases")


@pytest.mark.slow      # a backfill and an analysis per folder
@needs(SNAPSHOTS)
@pytest.mark.parametrize("folder", NEW_FOLDERS)
def test_each_new_folder_backfills_alone_into_a_fresh_database(folder, tmp_path, capsys):
    """`benchwatch backfill DIR` with DIR/<folder>/… as laid out in ../shared: exit 0, what it skips
    named, and (for score folders) scores, an index and a level after `analyze`."""
    root = tmp_path / "archive"
    shutil.copytree(SNAPSHOTS / folder, root / folder)
    db = tmp_path / "h.duckdb"
    assert main(["backfill", str(root), "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "0 failed" in out.splitlines()[-1]
    snaps = run_query("SELECT count(*) n, sum(n_scores) s FROM snapshots", open_store(db))
    assert snaps["n"][0] >= 2
    if folder == "livebench_releases":
        assert snaps["s"][0] == 0
        assert "skipped" not in out
        return
    if folder == "tau2_bench":   # manifests without their submissions and the schemas: one line each
        skipped = [line for line in out.splitlines() if line.startswith("skipped ")]
        planned, left_out = plan_with_skips(root)
        assert len(skipped) == len(left_out) >= 1 and any("schema" in line for line in skipped)
        assert all(any(s.path.name in line for line in skipped) for s in left_out)
    assert main(["analyze", "--db", str(db)]) == 0
    levels = run_query("SELECT benchmark, s_index, bin FROM saturation_latest WHERE s_index IS NOT NULL", open_store(db))
    assert len(levels) and levels["bin"].notna().all()


def test_a_new_arena_category_is_a_new_benchmark_listed_as_unknown(synced_db, tmp_path, capsys):
    """A category the catalogue adds (the real one added `expert`, `industry_*` on 2025-11-06)
    becomes its own benchmark, stored, and `status` lists it until the registry has it."""
    import json
    data = json.loads((FIX / "lmarena" / "leaderboard-text.json").read_text())
    data["expert"] = data["math"]
    path = tmp_path / "leaderboard-text.json"
    path.write_text(json.dumps(data))
    db = synced_db
    assert main(["ingest", "lmarena", str(path), "--db", str(db)]) == 0
    assert main(["status", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    unknown = out[out.index("unknown names"):]
    assert "arena_elo_text_expert" in unknown and "arena_elo_text_math" not in unknown
    assert run_query("SELECT count(*) n FROM scores WHERE benchmark = 'arena_elo_text_expert'", open_store(db))["n"][0] == 4

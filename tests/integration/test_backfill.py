"""`benchwatch backfill DIR`: a folder of dated copies becomes one snapshot per file, observed on
the file's date, oldest first; failures are reported and skipped; a second run adds nothing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cli.main import main
from jobs.backfill import plan_backfill
from storage.query import run_query
from storage.store import open_store

REPLAY = Path(__file__).resolve().parents[1] / "fixtures" / "replay"


@pytest.fixture
def archive(tmp_path) -> Path:
    """A small archive in the documented layout, from the replay copies (real rows)."""
    root = tmp_path / "archive"
    files = {   # replay file -> archive name (dates deliberately not in path order)
        "aider_polyglot/polyglot_leaderboard.yml": "aider_polyglot/aider_polyglot_2025-10-04.yml",
        "evalplus/results.json": "evalplus/evalplus_2024-12-26.json",
        "livebench/table_2026_01_08.csv": "livebench/livebench_table_2026_01_08_2026-01-20.csv",
        "livebench/categories_2026_01_08.json": "livebench/livebench_categories_2026_01_08_2026-01-19.json",
        "knowledge_cutoffs/README.md": "model_metadata/model_metadata_cutoff_dates_readme_2026-05-04.md",
    }
    for src, dst in files.items():
        (root / dst).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPLAY / src, root / dst)
    (root / "notes").mkdir()
    (root / "notes" / "notes_2025-01-01.txt").write_text("not a source folder\n")
    (root / "evalplus" / "README.md").write_text("no date in the name: not planned\n")
    (root / "model_metadata" / "model_metadata_modelsdev_firstparty_2025-08-31.csv").write_text("a,b\n1,2\n")
    return root


def test_plan_routes_dates_and_livebench_categories(archive):
    planned = plan_backfill(archive)
    assert [f.date for f in planned] == sorted(f.date for f in planned)
    assert {f.source: f.date for f in planned} == {"evalplus": "2024-12-26", "aider_polyglot": "2025-10-04",
                                                  "livebench": "2026-01-20", "knowledge_cutoffs": "2026-05-04"}
    lb = next(f for f in planned if f.source == "livebench")
    assert [p.name for p in lb.aux] == ["livebench_categories_2026_01_08_2026-01-19.json"]
    assert all(not f.aux for f in planned if f.source != "livebench")


def test_backfill_stores_each_file_on_its_date_and_is_idempotent(synced_db, archive, tmp_path, capsys):
    db = synced_db
    assert main(["backfill", str(archive), "--db", str(db)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "backfill: 4 file(s): 4 new snapshot(s), 0 unchanged, 0 failed, 3 skipped"
    assert [line.split()[0] for line in out[:-1] if not line.startswith("skipped ")] == \
        ["2024-12-26", "2025-10-04", "2026-01-20", "2026-05-04"]
    snaps = run_query("SELECT source, strftime(observed_at, '%Y-%m-%d') d FROM snapshots ORDER BY source", open_store(db))
    assert dict(zip(snaps.source, snaps.d)) == {"aider_polyglot": "2025-10-04", "evalplus": "2024-12-26",
                                               "knowledge_cutoffs": "2026-05-04", "livebench": "2026-01-20"}
    # the categories file was used: LiveBench category means exist, not only task scores
    n = run_query("SELECT count(*) n FROM scores WHERE source = 'livebench' AND benchmark = 'livebench'", open_store(db))["n"][0]
    assert n > 0
    assert main(["backfill", str(archive), "--db", str(db)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == \
        "backfill: 4 file(s): 0 new snapshot(s), 4 unchanged, 0 failed, 3 skipped"
    assert run_query("SELECT count(*) n FROM snapshots", open_store(db))["n"][0] == 4


def test_a_broken_file_is_reported_and_the_others_stored(synced_db, archive, tmp_path, capsys):
    (archive / "aider_polyglot" / "aider_polyglot_2025-10-04.yml").write_text("- model: [unterminated\n")
    db = synced_db
    assert main(["backfill", str(archive), "--db", str(db)]) == 1
    captured = capsys.readouterr()
    assert "2025-10-04 aider_polyglot_2025-10-04.yml: FAILED [aider_polyglot] malformed YAML" in captured.err
    assert captured.out.splitlines()[-1].endswith("3 new snapshot(s), 0 unchanged, 1 failed, 3 skipped")
    assert run_query("SELECT count(*) n FROM snapshots", open_store(db))["n"][0] == 3


def test_what_no_source_ingests_is_named_one_line_each(synced_db, archive, tmp_path, capsys):
    """A folder that is no source is one line (not one per file), a file no source claims one line
    each with its reason; the backfill still succeeds (issue 21)."""
    (archive / "notes" / "more_2025-01-02.txt").write_text("a second file of the same foreign folder\n")
    (archive / "livebench" / "livebench_categories_2024_11_25_2024-11-25.json").write_text('{"Coding": []}')
    (archive / "README.md").write_text("about the archive\n")
    db = synced_db
    assert main(["backfill", str(archive), "--db", str(db)]) == 0
    out = capsys.readouterr().out.splitlines()
    skipped = sorted(line for line in out if line.startswith("skipped "))
    assert skipped == sorted([
        "skipped README.md: not in a <source>/ folder",
        "skipped evalplus/README.md: no _YYYY-MM-DD date before the extension",
        "skipped livebench/livebench_categories_2024_11_25_2024-11-25.json: categories of a release with no table "
        "in the folder",
        "skipped model_metadata/model_metadata_modelsdev_firstparty_2025-08-31.csv: a models.dev conversion for "
        "curating the registry, not a scrape format",
        "skipped notes/: not a source folder (2 file(s); known sources: see `benchwatch ingest --help`)",
    ])
    assert out[-1].endswith("0 failed, 5 skipped")


def test_a_source_folder_that_is_a_link_is_followed(synced_db, archive, tmp_path, capsys):
    """An archive assembled from links (`ln -s /archive/evalplus dir/evalplus`) backfills as the
    folders it points to, each link by its own name (a second link to the same folder under a name
    that is no source is that, named); a link back up the tree is named and not followed again."""
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "evalplus").symlink_to(archive / "evalplus", target_is_directory=True)
    (linked / "a_copy").symlink_to(archive / "evalplus", target_is_directory=True)      # sorts first
    (archive / "evalplus" / "up").symlink_to(linked, target_is_directory=True)         # a loop
    planned = plan_backfill(linked)
    assert [(f.source, f.path) for f in planned] == [("evalplus", linked / "evalplus" / "evalplus_2024-12-26.json")]
    assert main(["backfill", str(linked), "--db", str(synced_db)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert sorted(line for line in out if line.startswith("skipped ")) == [
        "skipped a_copy/: not a source folder (2 file(s); known sources: see `benchwatch ingest --help`)",
        "skipped a_copy/up/: a link to a folder above it, read there (not followed again)",
        "skipped evalplus/README.md: no _YYYY-MM-DD date before the extension",
        "skipped evalplus/up/: a link to a folder above it, read there (not followed again)"]
    assert out[-1] == "backfill: 1 file(s): 1 new snapshot(s), 0 unchanged, 0 failed, 4 skipped"


def test_a_folder_that_cannot_be_read_is_named_and_the_others_backfill(synced_db, archive, capsys, monkeypatch):
    import os
    real_scandir = os.scandir

    def scandir(path):
        if os.path.basename(path) == "livebench":
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    assert main(["backfill", str(archive), "--db", str(synced_db)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "skipped livebench/: cannot be read: Permission denied" in out
    assert out[-1].startswith("backfill: 3 file(s): 3 new snapshot(s)")


@pytest.mark.parametrize("make", ["missing", "empty"])
def test_a_folder_without_dated_copies_is_a_usage_error(tmp_path, capsys, make):
    root = tmp_path / "dir"
    if make == "empty":
        (root / "swebench").mkdir(parents=True)
        (root / "swebench" / "leaderboards.json").write_text("{}")   # no date: nothing planned
    assert main(["backfill", str(root), "--db", str(tmp_path / "h.duckdb")]) == 2
    assert "benchwatch backfill:" in capsys.readouterr().err
    assert not (tmp_path / "h.duckdb").exists()


# --- issue 21, second set (src2): each new folder backfills as laid out in ../shared/snapshots ----
def test_arc_agi_models_and_datasets_copies_go_with_their_evaluations(tmp_path):
    root = tmp_path / "archive" / "arc_agi"
    root.mkdir(parents=True)
    for rel, dst in {"evaluations.json": "arc_agi_evaluations_2025-04-16.json",
                     "models.json": "arc_agi_models_2025-04-16.json", "datasets.json": "arc_agi_datasets_2025-04-16.json"}.items():
        shutil.copy(REPLAY / "arc_agi" / rel, root / dst)
    (root / "arc_agi_models_2025-05-01.json").write_text("[]")      # a later models copy: not this evaluation's
    (root / "arc_agi_providers_2025-04-16.json").write_text("[]")
    planned = plan_backfill(root.parent)
    assert [(f.path.name, [a.name for a in f.aux]) for f in planned] == [
        ("arc_agi_evaluations_2025-04-16.json", ["arc_agi_models_2025-04-16.json", "arc_agi_datasets_2025-04-16.json"])]


NEW_FOLDERS = ("terminal_bench", "arc_agi", "artificial_analysis", "matharena")


@pytest.mark.slow
@pytest.mark.parametrize("folder", NEW_FOLDERS)
def test_each_new_source_folder_backfills_alone_into_a_fresh_database(folder, tmp_path, capsys):
    from helpers import SNAPSHOTS, require
    src = require(SNAPSHOTS / folder)
    root = tmp_path / "dir"
    shutil.copytree(src, root / folder)     # the folder alone, as laid out there
    db = tmp_path / "h.duckdb"
    assert main(["backfill", str(root), "--db", str(db)]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out.splitlines()
    assert out[-1].endswith(" 0 failed") and " 0 new snapshot(s)" not in out[-1]
    assert run_query(f"SELECT count(*) n FROM scores WHERE source = '{folder}'", open_store(db))["n"][0] > 0

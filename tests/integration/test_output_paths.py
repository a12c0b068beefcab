"""No output path may be an input (issue 55, item 3): `report --out db.duckdb --db db.duckdb`
replaced the database with a page ("report written", exit 0). Every command that writes a file
refuses the database, its WAL, benchwatch's configuration and the command's own inputs, with one
line and exit 2, whatever the spelling of the path (relative, a symbolic or hard link)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from cli.main import main
from storage.store import open_store

ROOT = Path(__file__).resolve().parents[2]
REPLAY = ROOT / "tests" / "fixtures" / "replay"
CSV = ROOT / "tests" / "fixtures" / "csv" / "scores_proportion.csv"


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _refused(capsys, argv: list[str]) -> str:
    code = main(argv)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line]
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, (argv, code, err)
    assert "may not be a file benchwatch reads" in lines[0], lines[0]
    return lines[0]


def test_report_out_never_replaces_the_database_however_it_is_spelled(synced_db, tmp_path, capsys, monkeypatch):
    db = Path(synced_db)
    before = _digest(db)
    link = tmp_path / "link.html"
    link.symlink_to(db)
    hard = tmp_path / "hard.html"
    os.link(db, hard)
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    for out in (str(db), "../bw.duckdb", f"{tmp_path}/sub/../bw.duckdb", str(hard)):
        line = _refused(capsys, ["report", "--out", out, "--db", str(db)])
        assert "the database" in line
    for fmt in ("text", "html"):
        _refused(capsys, ["report", "--format", fmt, "--out", "../bw.duckdb", "--db", "../bw.duckdb"])
    monkeypatch.setenv("BENCHWATCH_DB", str(db))         # the default database, not named on the line
    _refused(capsys, ["report", "--out", "../bw.duckdb"])
    assert "the database" in _refused(capsys, ["report", "--out", str(link), "--db", str(db)])
    assert "write-ahead log" in _refused(capsys, ["report", "--out", f"{db}.wal", "--db", str(db)])
    assert "spill folder" in _refused(capsys, ["report", "--out", f"{db}.tmp/x.html", "--db", str(db)])
    assert "registry" in _refused(capsys, ["report", "--out", str(ROOT / "registry" / "models.csv"), "--db", str(db)])
    assert _digest(db) == before and link.is_symlink()
    assert main(["report", "--out", str(tmp_path / "page.txt"), "--db", str(db)]) == 0    # elsewhere: written
    assert (tmp_path / "page.txt").read_text().strip()
    assert main(["status", "--db", str(db)]) == 0


def test_a_writing_command_never_takes_one_of_its_inputs_as_the_database(tmp_path, capsys):
    data = tmp_path / "scores.csv"
    data.write_bytes(CSV.read_bytes())
    before = _digest(data)
    assert "the file to ingest" in _refused(capsys, ["ingest", "csv", str(data), "--db", str(data)])
    aux = tmp_path / "aux.json"
    aux.write_text("{}")
    assert "--aux" in _refused(capsys, ["ingest", "csv", str(data), "--aux", str(aux), "--db", str(aux)])
    archive = tmp_path / "archive"
    (archive / "csv").mkdir(parents=True)
    (archive / "csv" / "csv_2025-01-01.csv").write_bytes(CSV.read_bytes())
    assert "backfill folder" in _refused(capsys, ["backfill", str(archive), "--db", str(archive / "bw.duckdb")])
    assert "--replay folder" in _refused(capsys, ["run", "--no-prefect", "--replay", str(REPLAY), "--sources",
                                                  "swebench", "--db", str(REPLAY / "bw.duckdb")])
    assert "registry" in _refused(capsys, ["ingest", "csv", str(data), "--db", str(ROOT / "registry" / "x.duckdb")])
    assert _digest(data) == before and not (archive / "bw.duckdb").exists() and not (REPLAY / "bw.duckdb").exists()


def test_run_never_writes_its_report_page_over_the_database(tmp_path, capsys, monkeypatch):
    """$BENCHWATCH_REPORT_DIR/report.html is the page a run writes after analyze."""
    db = tmp_path / "report.html"
    monkeypatch.setenv("BENCHWATCH_REPORT_DIR", str(tmp_path))
    assert "the database" in _refused(capsys, ["run", "--no-prefect", "--replay", str(REPLAY), "--sources",
                                               "swebench", "--db", str(db)])
    assert not db.exists()


def test_the_publish_step_refuses_the_database_too(synced_db, caplog):
    """A flow run (no CLI in front): the page is not written, a warning says why, the run goes on."""
    from jobs.publish import publish_report
    db = Path(synced_db)
    before = _digest(db)
    page_dir = db.parent
    (page_dir / "report.html").symlink_to(db)
    assert publish_report(open_store(str(page_dir / "report.html")), report_dir=page_dir) is None
    assert _digest(db) == before
    assert any("may not be a file benchwatch reads" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("out, inputs, refused", [
    ("a/b.duckdb", [("the database", "a/b.duckdb", False)], True),
    ("a/./c/../b.duckdb", [("the database", "a/b.duckdb", False)], True),
    ("a/b.duckdb.wal", [("the database", "a/b.duckdb", False)], False),
    ("a/x/y.html", [("the folder", "a", True)], True),
    ("ab/y.html", [("the folder", "a", True)], False),
    ("a", [("the folder", "a", True)], True),
])
def test_refusal_compares_resolved_paths(tmp_path, monkeypatch, out, inputs, refused):
    from jobs.outputs import Input, refusal
    monkeypatch.chdir(tmp_path)
    assert (refusal(out, [Input(*i) for i in inputs]) is not None) == refused

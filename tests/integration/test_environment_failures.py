"""Failures of the machine, not of benchwatch (issue 24, item 13): a full disk, a file size limit,
a read-only file system, PostgreSQL gone (tests/integration/test_catalog_probe.py), a bad
--max-rows. Each is exit 1 (2 for usage) with one line that says what happened, never the "bug" code 70; and a database left behind still opens.

The disk and the read-only file system are real: a small tmpfs and a read-only bind mount (root
only; the tests skip where `mount` is refused). The size limit is RLIMIT_FSIZE of a child process.
"""

from __future__ import annotations

import errno
import json
import os
import resource
import shutil
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import duckdb
import pytest

from cli.main import EXIT_BUG, environment_failure, main
from storage import db as storage_db
from storage.store import open_store

ROOT = Path(__file__).resolve().parents[2]
REPLAY = ROOT / "tests" / "fixtures" / "replay"


def _cli(*argv: str, limit_bytes: int | None = None, env: dict | None = None,
         timeout: float = 300) -> subprocess.CompletedProcess:
    def limit() -> None:
        if limit_bytes is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))
    return subprocess.run([sys.executable, "-m", "cli", *argv], capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT, preexec_fn=limit, env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})


def _last_line(err: str) -> str:
    assert "Traceback" not in err, err
    lines = [line for line in err.strip().splitlines() if line.startswith("benchwatch")]
    assert len(lines) == 1, err
    return lines[0]


@contextmanager
def _mounted(target: Path, *args: str):
    target.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a test file system needs root and mount(8)")
    done = subprocess.run(["mount", *args, str(target)], capture_output=True, text=True)
    if done.returncode:
        pytest.skip(f"cannot mount a test file system here: {done.stderr.strip()}")
    try:
        yield target
    finally:
        subprocess.run(["umount", "-l", str(target)], capture_output=True)


def _archive(root: Path, n: int) -> Path:
    """n distinct dated copies of the SWE-bench replay file (each a new snapshot)."""
    folder = root / "archive" / "swebench"
    folder.mkdir(parents=True)
    text = (REPLAY / "swebench" / "leaderboards.json").read_text()
    for i in range(n):
        (folder / f"swebench_2025-{1 + i // 28:02d}-{1 + i % 28:02d}.json").write_text(text + " " * (i + 1))
    return root / "archive"


# --- the mapping, without a machine to break ------------------------------------------------------

@pytest.mark.parametrize("exc, words", [
    (OSError(errno.ENOSPC, "No space left on device"), "disk is full"),
    (duckdb.TransactionException('Failed to commit: Could not write file "x.wal": No space left on device'),
     "disk is full"),
    (duckdb.IOException('Could not write file "x.wal": File too large'), "file size limit"),
    (OSError(errno.EROFS, "Read-only file system"), "read-only"),
    (duckdb.IOException('Cannot open file "/ro/x.duckdb": Read-only file system'), "read-only"),
])
def test_environment_failures_are_named(exc, words):
    assert words in (environment_failure(exc) or "")
    wrapped = RuntimeError("while storing")
    wrapped.__cause__ = exc
    assert words in (environment_failure(wrapped) or "")


def test_a_bug_is_still_a_bug():
    assert environment_failure(KeyError("x")) is None
    assert environment_failure(duckdb.BinderException("Referenced column x not found")) is None


def test_a_bad_max_rows_is_a_usage_error_and_a_small_one_shows_the_rows(tmp_path, capsys):
    path = tmp_path / "bw.duckdb"
    with storage_db.connect(str(path)):
        pass
    for bad in ("-2", "-1", "0", "x"):
        with pytest.raises(SystemExit) as stop:
            main(["query", "SELECT 1 AS a", "--max-rows", bad, "--db", str(path)])
        assert stop.value.code == 2
        assert "--max-rows" in capsys.readouterr().err
    assert main(["query", "SELECT 1.5 AS a", "--max-rows", "1", "--db", str(path)]) == 0
    assert "1.5" in capsys.readouterr().out


# --- a real full disk, size limit, read-only file system ---------------------------------------------

@pytest.mark.slow
def test_a_full_disk_during_backfill_is_one_line_and_the_database_still_opens(tmp_path):
    archive = _archive(tmp_path, 30)
    with _mounted(tmp_path / "disk", "-t", "tmpfs", "-o", "size=4m", "tmpfs") as disk:
        done = _cli("backfill", str(archive), "--db", str(disk / "bw.duckdb"))
        assert done.returncode == 1, done.stderr
        assert "the disk is full" in _last_line(done.stderr)
        stored = done.stdout.count("new snapshot")
        assert 0 < stored < 30
        subprocess.run(["mount", "-o", "remount,size=64m", str(disk)], check=True)
        status = _cli("query", "SELECT count(*) AS n FROM snapshots", "--format", "csv", "--db", str(disk / "bw.duckdb"))
        assert status.returncode == 0, status.stderr
        assert int(status.stdout.split()[1]) == stored       # what was committed is kept


@pytest.mark.slow
def test_a_file_size_limit_during_analyze_is_one_line(tmp_path):
    path = tmp_path / "bw.duckdb"
    from jobs.collect import collect
    outcomes = collect(open_store(str(path)), ["swebench", "aider_polyglot", "livecodebench"], replay_dir=str(REPLAY))
    assert all(o.status == "new" for o in outcomes)
    done = _cli("analyze", "--db", str(path), limit_bytes=16 * 1024)
    assert done.returncode == 1, done.stderr
    assert "file size limit" in _last_line(done.stderr)
    assert _cli("status", "--db", str(path)).returncode == 0


def test_a_new_database_on_a_read_only_file_system_is_one_line(tmp_path, capsys):
    folder = tmp_path / "ro"
    folder.mkdir()
    with _mounted(folder, "--bind", "-o", "ro", str(folder)):
        for argv in (["ingest", "csv", str(ROOT / "tests" / "fixtures" / "csv" / "scores_proportion.csv")],
                     ["analyze"], ["silence", "add", "--match", "benchmark=x", "--for", "1d", "--comment", "c"],
                     ["notify"]):
            code = main([*argv, "--db", str(folder / "new" / "bw.duckdb")])
            err = capsys.readouterr().err
            assert code == 1, (argv, err)
            assert code != EXIT_BUG
            line = _last_line(err)
            assert "read-only" in line or "Read-only" in line, line
        assert not list(folder.iterdir())


def test_a_process_killed_after_migrating_leaves_a_file_that_opens(tmp_path):
    """DuckDB cannot replay an ALTER of a table with a nextval default from its WAL: a kill (or a
    full disk) between the migrations and the next checkpoint left a file that never opened again."""
    path = tmp_path / "bw.duckdb"
    code = ("import os, sys; from storage import db; con = db.open_connection(sys.argv[1]); db.migrate(con); "
            "os._exit(0)")
    subprocess.run([sys.executable, "-c", code, str(path)], check=True, cwd=ROOT,
                   env={**os.environ, "PYTHONPATH": str(ROOT)})
    con = duckdb.connect(str(path))
    assert con.execute("SELECT count(*) FROM schema_migrations").fetchone()[0] == len(storage_db.migrations())
    con.close()

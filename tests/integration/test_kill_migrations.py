"""A kill during migrations never leaves a file that cannot open (issue 55, item 2).

DuckDB cannot replay an ALTER of a table with a nextval default from its WAL: a process killed
(SIGKILL, SIGTERM) or stopped by a file size limit (`ulimit -f`) after a migration's commit and
before the next checkpoint left a file on which every command failed with "INTERNAL Error:
Failure while replaying WAL file". storage.db now changes a schema only beside the file
(storage/beside.py). Each trial here kills a real process at a seeded point of the first open of
a new file, or of the upgrade of a file with history, and then the next command must open the
file, with every history row and the whole schema.
"""

from __future__ import annotations

import os
import random
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import duckdb
import pytest

from cli.main import main
from helpers import file_at_version, lane, stratified
from storage import beside, db, views

ROOT = Path(__file__).resolve().parents[2]
REPLAY = ROOT / "tests" / "fixtures" / "replay"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
for _name in ("SLACK_WEBHOOK_URL", "SLACK_BOT_TOKEN", "SLACK_CHANNEL", "PREFECT_API_URL", "BENCHWATCH_DB"):
    ENV.pop(_name, None)
OLD_VERSION = 4          # the upgrades below apply 005 on, which ALTER tables with nextval defaults
HISTORY_ROWS = 40

# The first write open of `path` (what every command does first), killed by the signal `sig` at
# the n-th applied migration ("after", arg "n"; "n:s" s seconds later) or `arg` seconds into the
# open ("timer"). With SIGTERM the CLI's handler is installed, as in `benchwatch run`.
CHILD = """
import logging, os, signal, sys, threading, time
from cli.main import _on_sigterm
from storage import db
path, how, arg, sig = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
signal.signal(signal.SIGTERM, _on_sigterm)
if how == "after":
    n, _, later = arg.partition(":")
    seen = [0]
    class Kill(logging.Handler):
        def emit(self, record):
            if record.getMessage().startswith("[storage] applied migration"):
                seen[0] += 1
                if seen[0] == int(n) and later:
                    threading.Timer(float(later), os.kill, (os.getpid(), sig)).start()
                elif seen[0] == int(n):
                    os.kill(os.getpid(), sig)
                    time.sleep(5)
    log = logging.getLogger("benchwatch.storage")
    log.setLevel(logging.INFO)
    log.addHandler(Kill())
elif how == "timer":
    threading.Timer(float(arg), os.kill, (os.getpid(), sig)).start()
with db.connect(path):
    pass
"""


def _history(path: Path) -> None:
    """A file of schema OLD_VERSION with HISTORY_ROWS score rows of one snapshot."""
    file_at_version(path, OLD_VERSION)
    con = duckdb.connect(str(path))
    con.execute("""INSERT INTO snapshots VALUES (1, 'csv', 'abc', ['abc'], ['f.csv'], '2025-01-01', '2025-01-01',
                   '2025-01-01', 'ingest', 1, 1, 0, 1, 0, [], NULL)""")
    con.execute("""INSERT INTO scores (snapshot_id, source, benchmark, benchmark_raw, model, model_raw, setting,
                   score, metric, excluded_reason)
                   SELECT 1, 'csv', 'mmlu', 'mmlu', 'm' || i, 'm' || i, '', i / 100, 'proportion', ''
                   FROM range(?) t(i)""", [HISTORY_ROWS])
    con.close()


def _child(path: Path, how: str, arg: float | int | str, sig: int, fsize: int | None = None) -> int:
    def limit() -> None:
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    proc = subprocess.run([sys.executable, "-c", CHILD, str(path), how, str(arg), str(int(sig))], cwd=ROOT, env=ENV,
                          capture_output=True, text=True, timeout=120, preexec_fn=limit)
    return proc.returncode


def _assert_opens(path: Path, *, history: bool) -> None:
    """What the next command finds: a file that opens, the whole schema, the history rows, and no
    private file of the interrupted attempt beyond, at most, a second name of the database."""
    with db.connect(path, wait=30) as con:
        assert db.schema_version(con) == db.latest_version()
        present = {r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}
        assert set(views.view_names()) <= present
        assert not views.stale(con)
        if history:
            assert con.execute("SELECT count(*) FROM scores").fetchone()[0] == HISTORY_ROWS
            assert con.execute("SELECT count(*) FROM snapshots").fetchone()[0] == 1
    for item in beside.leftovers(path):
        assert item.exists() and os.path.samefile(item, path), item


def _migration_count() -> int:
    return len(db.migrations())


# --- the fast lane: a kill right after a migration's commit, the point the WAL could not replay --

@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_a_new_file_killed_after_a_migration_opens_at_the_next_command(tmp_path, sig):
    n = random.Random(55 + sig).randrange(6, _migration_count())
    path = tmp_path / "bw.duckdb"
    code = _child(path, "after", n, sig)
    assert code in (-sig, 143, 1), code       # killed, or stopped by the CLI's handler
    _assert_opens(path, history=False)


@pytest.mark.parametrize("sig", lane([signal.SIGKILL, signal.SIGTERM], fast=[signal.SIGKILL]))
def test_an_upgrade_killed_after_a_migration_keeps_the_file_and_its_history(tmp_path, sig):
    n = random.Random(56 + sig).randrange(2, _migration_count() - OLD_VERSION)
    path = tmp_path / "bw.duckdb"
    _history(path)
    code = _child(path, "after", n, sig)
    assert code in (-sig, 143, 1), code
    con = duckdb.connect(str(path), read_only=True)      # untouched: still the old schema, every row
    assert con.execute("SELECT max(version) FROM schema_migrations").fetchone()[0] == OLD_VERSION
    assert con.execute("SELECT count(*) FROM scores").fetchone()[0] == HISTORY_ROWS
    con.close()
    _assert_opens(path, history=True)


@pytest.mark.parametrize("case", ["new", "upgrade"])
def test_a_file_size_limit_during_migrations_leaves_a_file_that_opens(tmp_path, case):
    path = tmp_path / "bw.duckdb"
    if case == "upgrade":
        _history(path)
    size = path.stat().st_size if path.exists() else 0
    limit = size + random.Random(57).randrange(64 << 10, 1 << 20)      # stops a write of the migrations
    code = _child(path, "none", 0, 0, fsize=limit)
    assert code != 0
    _assert_opens(path, history=case == "upgrade")


def test_leftovers_of_a_killed_attempt_are_removed_by_the_next_upgrade(tmp_path):
    path = tmp_path / "bw.duckdb"
    _history(path)
    stale = beside.temp_beside(path, beside.UPGRADING)
    stale.write_bytes(b"half a copy")
    Path(f"{stale}.wal").write_bytes(b"x")
    orphan_wal = Path(f"{beside.temp_beside(path, beside.CREATING)}.wal")   # its main file already gone
    orphan_wal.write_bytes(b"x")
    unrelated = tmp_path / ".bw.duckdb.new-1-1"          # storage.db.new_database's: not ours to remove
    unrelated.write_bytes(b"y")
    _assert_opens(path, history=True)
    assert {p.name for p in tmp_path.iterdir()} == {"bw.duckdb", unrelated.name}


def test_an_upgrade_keeps_the_files_mode_and_a_symlink(tmp_path):
    """The copy takes the file's permissions, and a database reached through a symlink is upgraded
    where it lives (the link stays a link)."""
    real = tmp_path / "data" / "bw.duckdb"
    real.parent.mkdir()
    _history(real)
    real.chmod(0o640)
    link = tmp_path / "bw.duckdb"
    link.symlink_to(real)
    _assert_opens(link, history=True)
    assert link.is_symlink() and os.path.samefile(link, real)
    assert real.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in real.parent.iterdir()) == ["bw.duckdb"]


@pytest.mark.parametrize("case", lane(["new", "upgrade"], fast=["upgrade"]))
def test_two_processes_migrating_one_file_at_once(tmp_path, case):
    """Two first opens at once: one builds or upgrades the file (under the directory lock), the
    other waits and then finds it current; both succeed and nothing is lost."""
    path = tmp_path / "bw.duckdb"
    if case == "upgrade":
        _history(path)
    procs = [subprocess.Popen([sys.executable, "-c", CHILD, str(path), "none", "0", "0"], cwd=ROOT, env=ENV,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    _assert_opens(path, history=case == "upgrade")
    assert beside.leftovers(path) == []


def test_a_current_file_is_opened_in_place(tmp_path, monkeypatch):
    """No copy, no private file, when nothing needs migrating (the cost of opening stays one query)."""
    path = tmp_path / "bw.duckdb"
    with db.connect(path):
        pass
    inode = path.stat().st_ino

    def no_copy(*args, **kwargs):
        raise AssertionError("a current file was copied")
    monkeypatch.setattr(db, "_upgrade_beside", no_copy)
    monkeypatch.setattr(beside, "temp_beside", no_copy)
    with db.connect(path) as con:
        assert db.schema_version(con) == db.latest_version()
    assert path.stat().st_ino == inode


def test_an_unreplayable_wal_is_one_line_that_says_what_to_do(tmp_path, capsys):
    """A WAL DuckDB cannot replay (here made as the old in-place migrations made it: an ALTER of a
    table with a nextval default, killed before the checkpoint): one line, exit 1, nothing moved."""
    path = tmp_path / "bw.duckdb"
    code = ("import os, sys, duckdb; from storage import db; con = duckdb.connect(sys.argv[1]); "
            "sql = dict((v, s) for v, _, s in db.migrations()); con.execute(sql[1]); con.execute('CHECKPOINT'); "
            "con.execute(\"ALTER TABLE snapshots ADD COLUMN extra BIGINT DEFAULT nextval('snapshot_id_seq')\"); "
            "os._exit(0)")
    subprocess.run([sys.executable, "-c", code, str(path)], check=True, cwd=ROOT, env=ENV)
    wal = Path(f"{path}.wal")
    assert wal.exists()
    before = (path.read_bytes(), wal.read_bytes())
    for argv in (["status"], ["run", "--no-prefect", "--collect-only", "--replay", str(REPLAY), "--sources", "swebench"]):
        assert main([*argv, "--db", str(path)]) == 1
        lines = capsys.readouterr().err.strip().splitlines()
        assert len(lines) == 1, lines
        assert "write-ahead log" in lines[0] and "Back up both files" in lines[0]
        assert f"mv {wal} {wal}.unreplayable" in lines[0]
        assert "Traceback" not in lines[0]
    assert (path.read_bytes(), wal.read_bytes()) == before          # nothing moved or rewritten
    wal.rename(f"{wal}.unreplayable")                               # what the line says to do
    _assert_opens(path, history=False)


# --- the slow lane: kills at random moments of real commands ----------------------------------------

def _run_cli_then_kill(path: Path, sig: int, *, nth: int = 0, delay: float = 0.0, fsize: int | None = None) -> int:
    """`benchwatch -v run` on `path`, sent `sig` `delay` s after its `nth` applied migration (its
    log line), or `delay` s after its start when `nth` is 0; or run under a file size limit."""
    def limit() -> None:
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    proc = subprocess.Popen([sys.executable, "-m", "cli.main", "-v", "run", "--no-prefect", "--collect-only", "--replay",
                             str(REPLAY), "--sources", "swebench", "--db", str(path)], cwd=ROOT, env=ENV,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, preexec_fn=limit)
    assert proc.stderr is not None
    if fsize is None:
        seen = 0
        if nth:
            for line in proc.stderr:
                seen += "applied migration" in line
                if seen == nth:
                    break
        if not nth or seen == nth:
            time.sleep(delay)
            if proc.poll() is None:
                proc.send_signal(sig)
    proc.communicate(timeout=300)
    return proc.returncode


def _pending(case: str) -> int:
    return _migration_count() - (OLD_VERSION if case == "upgrade" else 0)


def _trial_files(folder: Path, case: str, trials: int) -> Iterator[Path]:
    """The file of each trial, in a folder of its own: absent for a new file, an older
    benchwatch's file with history for an upgrade."""
    for trial in range(trials):
        path = folder / f"{trial}" / "bw.duckdb"
        path.parent.mkdir()
        if case == "upgrade":
            _history(path)
        yield path


def cli_trials(folder: Path, case: str, trials: int = 4) -> Iterator[tuple[str, Path]]:
    """Seeded trials of `benchwatch run` on a new file or an upgrade of one with history, killed
    (SIGKILL, SIGTERM) within its migrations (one in each stretch of the migrations, plus up to
    50 ms) or anywhere in its first seconds ("late"), or stopped by a file size limit; each kind
    as often as another (once each by default: the migrations' stretches are covered finely by
    the first open alone, `open_trials`). (what was done, the file) of each."""
    rng = random.Random(f"55-{case}")
    kinds = (["kill", "term", "fsize", "late"] * trials)[:trials]
    rng.shuffle(kinds)
    nths = iter(_migration_strata(rng, kinds.count("kill") + kinds.count("term"), case))
    lates = iter(stratified(rng, kinds.count("late"), 0.5, 6.0))
    for kind, path in zip(kinds, _trial_files(folder, case, trials)):
        sig = signal.SIGTERM if kind == "term" or (kind == "late" and rng.random() < 0.5) else signal.SIGKILL
        if kind == "fsize":
            base = path.stat().st_size if path.exists() else 0     # from within the copy to past the migrations
            _run_cli_then_kill(path, 0, fsize=rng.randrange(max(base // 2, 16 << 10), base + (3 << 20)))
        elif kind == "late":
            _run_cli_then_kill(path, sig, delay=next(lates))
        else:
            _run_cli_then_kill(path, sig, nth=next(nths), delay=rng.uniform(0.0, 0.05))
        yield kind, path


def open_trials(folder: Path, case: str, trials: int = 8) -> Iterator[tuple[str, Path]]:
    """Seeded trials of the first write open alone, killed after one migration of each stretch of
    the migrations (plus up to 50 ms), SIGKILL and SIGTERM alternately."""
    rng = random.Random(f"55-open-{case}")
    for trial, (nth, path) in enumerate(zip(_migration_strata(rng, trials, case), _trial_files(folder, case, trials))):
        sig = (signal.SIGKILL, signal.SIGTERM)[trial % 2]
        _child(path, "after", f"{nth}:{rng.uniform(0.0, 0.05):.3f}", sig)
        yield signal.Signals(sig).name, path


def _migration_strata(rng: random.Random, n: int, case: str) -> list[int]:
    """`n` seeded migration numbers in 1.._pending(case), one in each of `n` equal stretches (the
    first migrations and the last are both reached with few trials; `stratified`)."""
    return [int(x) for x in stratified(rng, n, 1, _pending(case) + 1)]


@pytest.mark.slow
@pytest.mark.parametrize("case", ["new", "upgrade"])
def test_random_kills_of_a_first_run_and_of_an_upgrade(tmp_path, case):
    """Every trial's file opens afterwards, whole, with its history (`cli_trials`)."""
    for _, path in cli_trials(tmp_path, case):
        _assert_opens(path, history=case == "upgrade")


@pytest.mark.slow
@pytest.mark.parametrize("case", ["new", "upgrade"])
def test_random_moments_of_the_migrations_of_a_first_open(tmp_path, case):
    for _, path in open_trials(tmp_path, case):
        _assert_opens(path, history=case == "upgrade")

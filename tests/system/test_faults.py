"""Faults (issue 11): killed runs, concurrent runs, a writer waiting on a reader, the ephemeral server.

Subprocess tests: each starts `python -m cli.main …` from the repository root, so they are slow
(Python + pandas + Prefect imports take seconds on a loaded machine).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

import storage.db as storage_db
from cli.main import main

pytestmark = pytest.mark.xdist_group("test_faults")   # its module fixture is built once

ROOT = Path(__file__).resolve().parents[2]
REPLAY = ROOT / "tests" / "fixtures" / "replay"
SOURCES = "swebench,livebench,simple_evals,lmarena,evalplus,livecodebench,knowledge_cutoffs"
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "PREFECT_SERVER_ANALYTICS_ENABLED": "false"}
for _secret in ("SLACK_WEBHOOK_URL", "SLACK_BOT_TOKEN", "SLACK_CHANNEL", "PREFECT_API_URL"):
    ENV.pop(_secret, None)


def cli(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "cli.main", *args], cwd=ROOT, env=ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def finish(proc: subprocess.Popen, timeout: float = 300) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def content(path: Path) -> dict[str, object]:
    """What a database holds, independent of ids and times: snapshots by content, score rows."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        snaps = sorted(con.execute("SELECT source, sha256 FROM snapshots").fetchall())
        scores = con.execute("SELECT count(*) FROM scores").fetchone()[0]
        per_snapshot = con.execute("""SELECT count(*) FROM snapshots s
                                      WHERE NOT EXISTS (SELECT 1 FROM scores x WHERE x.snapshot_id = s.id)
                                        AND NOT EXISTS (SELECT 1 FROM item_results i WHERE i.snapshot_id = s.id)
                                        AND s.source NOT IN ('knowledge_cutoffs', 'openrouter',
                                                             'livebench_releases')""").fetchone()[0]
        # (metadata sources and the release list hold no score rows by design)
        return {"snapshots": snaps, "scores": scores, "empty_snapshots": per_snapshot}
    finally:
        con.close()


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dict[str, object]:
    path = tmp_path_factory.mktemp("ref") / "bw.duckdb"
    code, out, err = finish(cli("run", "--no-prefect", "--collect-only", "--replay", str(REPLAY),
                                "--sources", SOURCES, "--db", str(path)))
    assert code == 0, err
    return content(path)


def _wait_for(predicate, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.2)
    return False


@pytest.mark.slow
@pytest.mark.parametrize("delay", [4.0, 6.0, 8.0])
def test_sigkill_during_ingest_leaves_a_consistent_database_and_the_rerun_is_exact(tmp_path, reference, delay):
    path = tmp_path / "bw.duckdb"
    proc = cli("run", "--no-prefect", "--collect-only", "--replay", str(REPLAY), "--sources", SOURCES, "--db", str(path))
    time.sleep(delay)
    proc.kill()
    proc.wait(30)
    if path.exists():
        partial = content(path)
        assert partial["empty_snapshots"] == 0          # no half-stored snapshot
        assert set(partial["snapshots"]) <= set(reference["snapshots"])
    code, out, err = finish(cli("run", "--no-prefect", "--collect-only", "--replay", str(REPLAY),
                                "--sources", SOURCES, "--db", str(path)))
    assert code == 0, err
    assert content(path) == reference


@pytest.mark.slow
def test_sigkill_during_analyze_then_rerun_gives_the_same_analysis(tmp_path):
    path = tmp_path / "bw.duckdb"
    assert finish(cli("run", "--no-prefect", "--collect-only", "--replay", str(REPLAY), "--sources", SOURCES,
                      "--db", str(path)))[0] == 0
    clean = tmp_path / "clean.duckdb"
    clean.write_bytes(path.read_bytes())
    assert finish(cli("analyze", "--db", str(clean)))[0] == 0
    proc = cli("analyze", "--db", str(path))
    time.sleep(5)
    proc.kill()
    proc.wait(30)
    code, out, err = finish(cli("analyze", "--db", str(path)))
    assert code == 0, err

    def levels(p: Path):
        con = duckdb.connect(str(p), read_only=True)
        try:
            return con.execute("""SELECT benchmark, scope, round(s_index, 9), bin, n_models FROM saturation_latest
                                  ORDER BY ALL""").fetchall()
        finally:
            con.close()
    assert levels(path) == levels(clean)


@pytest.mark.slow
def test_two_runs_at_once_never_corrupt_the_database(tmp_path, reference):
    path = tmp_path / "bw.duckdb"
    args = ("run", "--no-prefect", "--collect-only", "--replay", str(REPLAY), "--sources", SOURCES, "--db", str(path))
    first, second = cli(*args), cli(*args)
    results = [finish(first), finish(second)]
    for code, out, err in results:
        assert code == 0, err
        assert "Traceback" not in err
    assert content(path) == reference          # each snapshot once: the second saw the same content


def test_a_writer_waiting_on_a_reader_gives_one_line_not_a_traceback(synced_db, tmp_path, capsys, monkeypatch):
    """Before: a long `benchwatch query` held the file and `run --no-prefect` died with a traceback."""
    path = synced_db
    with storage_db.connect(str(path)):
        pass
    holder = subprocess.Popen([sys.executable, "-c",
                               "import duckdb, time; c = duckdb.connect(%r, read_only=True); "
                               "print('held', flush=True); time.sleep(6)" % str(path)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        # `run` has no --wait: its store waits DEFAULT_WAIT_SECONDS (read when the store is made), here
        # short enough to give up while the reader still holds the file
        monkeypatch.setattr(storage_db, "DEFAULT_WAIT_SECONDS", 0.3)
        code = main(["run", "--no-prefect", "--replay", str(REPLAY), "--sources", "swebench", "--db", str(path)])
        err = capsys.readouterr().err
        assert code == 1
        lines = [line for line in err.strip().splitlines() if not line.startswith("WARNING")]
        assert "Traceback" not in err and len(lines) == 1, err
        assert "is locked by another process" in lines[0]
    finally:
        holder.kill()
        holder.wait()


def _server_children(pid: int) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(pid), "-f", "uvicorn"], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead for our purpose
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split()[2] != "Z"


@pytest.mark.xdist_group("servers")   # starts Prefect's ephemeral server
@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_killing_run_never_orphans_the_ephemeral_prefect_server(tmp_path, sig):
    """Before: each killed `benchwatch run` left a ~185 MB uvicorn server behind."""
    proc = cli("run", "--replay", str(REPLAY), "--sources", "swebench", "--db", str(tmp_path / "bw.duckdb"))
    children: list[int] = []
    assert _wait_for(lambda: bool(children.extend(_server_children(proc.pid)) or children), 120), "no server started"
    time.sleep(2)
    os.kill(proc.pid, sig)
    proc.wait(60)
    assert _wait_for(lambda: not any(_alive(c) for c in children), 30), f"orphaned server(s) {children}"
    if sig == signal.SIGTERM:
        assert proc.returncode == 143
        assert "benchwatch run: terminated (SIGTERM)" in proc.stderr.read()


def test_notify_says_how_many_claimed_notifications_wait_and_until_when(synced_db, tmp_path, capsys, monkeypatch):
    """Before: "nothing to deliver" while notifications claimed by a dead notify run waited out
    their lease. Now the count and the lease end are said."""
    for name in ("SLACK_WEBHOOK_URL", "SLACK_BOT_TOKEN", "SLACK_CHANNEL", "PREFECT_API_URL"):
        monkeypatch.delenv(name, raising=False)
    path = str(synced_db)
    with storage_db.connect(path) as con:
        con.executemany(
            """INSERT INTO notifications (fingerprint, kind, transition, episode, payload, created_at, claimed_until)
               VALUES (?, 'source_failing', 'firing', now(), '{}', now(), TIMESTAMPTZ '2999-01-01 06:30:00+00')""",
            [[f"fp{i}"] for i in range(120)])
    assert main(["notify", "--db", path]) == 0
    out = capsys.readouterr().out
    assert "nothing to deliver" in out
    assert ("120 undelivered notification(s) are claimed by another notify run (still delivering, or it died) "
            "until 2999-01-01 06:30 UTC") in out

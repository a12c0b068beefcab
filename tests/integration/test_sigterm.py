"""SIGTERM during `benchwatch run` (issue 24, item 6): exit 143 and nothing sent after the signal.

The signal's exception (`Terminated`, raised in the main thread) does not arrive as itself when
DuckDB is executing a statement there: DuckDB interrupts the statement and raises
`RuntimeError: Query interrupted`, which the cycle's "analysis failed, notify anyway" handler
caught — notify then delivered and the run ended with 1 (3 of 20 tries in the report). The
database here has every replay source collected and one undelivered notification in the outbox,
so a run that reaches notify posts it to the fake Slack.
"""

from __future__ import annotations

import gc
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from alerts.rules import Notification, fingerprint, make_labels
from cli.main import main
from helpers import stratified
from jobs.collect import collect
from storage import alerts as store
from storage import db
from storage.alert_records import Evaluation
from storage.store import open_store

pytestmark = pytest.mark.xdist_group("test_sigterm")   # its module fixture is built once

ROOT = Path(__file__).resolve().parents[2]
REPLAY = ROOT / "tests" / "fixtures" / "replay"
NOW = datetime(2026, 3, 2, 9, 30, tzinfo=timezone.utc)


def _note() -> Notification:
    labels = make_labels("contamination_suspect", model="gpt-x", benchmark="gpqa_diamond", source="epoch")
    return Notification(fingerprint=fingerprint(labels), kind="contamination_suspect", transition="firing",
                        episode=NOW, labels=labels, created_at=NOW,
                        annotations={"model_name": "gpt-x", "status": "persisted",
                                     "signals": [{"signal": "A1", "effect": 0.07, "q_value": 0.01}],
                                     "why": "caution", "sql": "SELECT * FROM suspects"})


def _seed(path: Path, sources: list[str] | None) -> Path:
    collect(open_store(path), sources, replay_dir=REPLAY)
    with db.connect(path) as con, db.transaction(con):
        store.write_evaluation(con, Evaluation(states=[], notifications=[_note()], events=[]), recorded_at=NOW)
    return path


@pytest.fixture(scope="module")
def seeded(tmp_path_factory) -> Path:
    """Every replay source collected (unchanged on the next run, not analysed yet) and one
    undelivered notification."""
    return _seed(tmp_path_factory.mktemp("sigterm") / "seed.duckdb", None)


@pytest.fixture
def seeded_small(tmp_path) -> Path:
    """One source collected and one undelivered notification (for runs with `--sources swebench`)."""
    return _seed(tmp_path / "seed-small.duckdb", ["swebench"])


@pytest.fixture
def slack_env(fake_slack, monkeypatch):
    monkeypatch.setenv("SLACK_WEBHOOK_URL", fake_slack.webhook_url)
    for name in ("SLACK_BOT_TOKEN", "SLACK_CHANNEL", "PREFECT_API_URL"):
        monkeypatch.delenv(name, raising=False)
    return fake_slack


def test_sigterm_turned_into_a_duckdb_error_stops_the_run(seeded_small, tmp_path, slack_env, monkeypatch, capsys):
    """Deterministic: the signal arrives during the analysis and, as DuckDB does with the handler's
    exception when it lands inside a statement, comes back as `RuntimeError: Query interrupted`
    (whether DuckDB checks for signals during a statement depends on timing: the subprocess tests
    below send real signals to real runs)."""
    path = seeded_small
    ran = []

    def analysis_interrupted(db_path, **kwargs):
        ran.append(1)
        try:
            os.kill(os.getpid(), signal.SIGTERM)     # the CLI's handler runs at the next bytecode
            time.sleep(5)
        except BaseException:                         # what DuckDB makes of it inside a statement
            raise RuntimeError("Query interrupted") from None
    monkeypatch.setattr("jobs.analyze_step.analyze", analysis_interrupted)
    code = main(["run", "--no-prefect", "--replay", str(REPLAY), "--sources", "swebench", "--db", str(path)])
    assert ran and code == 143
    assert capsys.readouterr().err.strip().splitlines()[-1] == "benchwatch run: terminated (SIGTERM)"
    assert slack_env.requests == []
    with db.connect(path, read_only=True) as con:             # still in the outbox for the next run
        assert con.execute("SELECT count(*) FROM notifications WHERE delivered_at IS NULL").fetchone()[0] == 1


def _run_then_sigterm(seeded: Path, tmp_path: Path, slack, delay: float) -> tuple[int, str, float | None]:
    """`run --no-prefect --replay` over a copy of `seeded`; SIGTERM `delay` s after its analysis starts
    (its first log line). (exit code, stderr, when the signal was sent; None if the run ended first)."""
    path = tmp_path / f"bw-{delay:.3f}.duckdb"
    shutil.copy(seeded, path)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SLACK_WEBHOOK_URL": slack.webhook_url}
    for name in ("SLACK_BOT_TOKEN", "SLACK_CHANNEL", "PREFECT_API_URL"):
        env.pop(name, None)
    proc = subprocess.Popen([sys.executable, "-m", "cli.main", "-v", "run", "--no-prefect", "--replay", str(REPLAY),
                             "--db", str(path)], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    started = threading.Event()

    def read() -> None:
        for line in proc.stderr:
            lines.append(line)
            if "[saturation]" in line or "[cutoffs]" in line:
                started.set()
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    sent = None
    if started.wait(120):
        time.sleep(delay)
        if proc.poll() is None:
            sent = time.time()
            proc.send_signal(signal.SIGTERM)
    proc.wait(60)
    reader.join(10)
    return proc.returncode, "".join(lines), sent


def _check(code: int, err: str, sent: float | None, slack) -> None:
    assert sent is not None, "the run ended before the signal"
    assert code == 143, err[-2000:]
    assert "terminated (SIGTERM)" in err.strip().splitlines()[-1]
    late = [r for r in slack.requests if r.accepted and r.at >= sent]
    assert late == [], "delivered after the signal"


def test_a_block_whose_enter_sigterm_cut_short_ends_quietly_after_its_connection(tmp_path):
    """SIGTERM inside a `with` block's `__enter__`, after its generator's `yield` (CI: 1 run in 10
    random SIGTERMs): the block's `__exit__` never runs, the connection's block closes the
    connection, and the garbage collector closes the generator later. Its ROLLBACK (or setting
    put back) on the closed connection printed a traceback after `terminated (SIGTERM)`."""
    from storage.saturation import memory_limit
    from common.shutdown import Terminated
    ignored: list = []
    hook, sys.unraisablehook = sys.unraisablehook, ignored.append
    try:
        with db.connect(tmp_path / "bw.duckdb") as con:
            left = [db.transaction(con), memory_limit(con, "500MB")]
            for block in left:
                block.__enter__()            # as if the signal landed right after: no __exit__
        del block, left                      # the generators are closed now, the connection first
        gc.collect()
    finally:
        sys.unraisablehook = hook
    assert [f"{u.exc_type.__name__}: {u.exc_value}" for u in ignored] == []
    with db.connect(tmp_path / "bw.duckdb") as con:   # a block whose __exit__ runs after the close
        block = db.transaction(con)
        block.__enter__()
    # the stop goes on (not suppressed), and the closed connection's error does not replace it
    assert block.__exit__(Terminated, Terminated(), None) is False


@pytest.mark.slow   # two real runs; the fast lane keeps the deterministic test above
def test_sigterm_during_the_analysis_of_a_real_run(seeded, tmp_path, fake_slack):
    for delay in (0.0, 0.4):
        code, err, sent = _run_then_sigterm(seeded, tmp_path, fake_slack, delay)
        _check(code, err, sent, fake_slack)
    assert fake_slack.requests == []


@pytest.mark.slow   # 10 real runs (the fast lane keeps the deterministic test above)
def test_sigterm_at_random_points_of_a_real_run(seeded, tmp_path, fake_slack):
    """SIGTERM at seeded random moments of the first 2.5 s of the analysis, one in each tenth of
    that window (`stratified`: every step of the analysis and notify is reached with 10 runs;
    20 independent draws left gaps)."""
    rng = random.Random(24)
    hit = 0
    for delay in stratified(rng, 10, 0.0, 2.5):
        code, err, sent = _run_then_sigterm(seeded, tmp_path, fake_slack, delay)
        if sent is None:                    # the run had finished: nothing to stop
            continue
        if code in (-signal.SIGTERM, 0):
            # The signal came after `main()` had returned: its handler restored, the interpreter
            # exiting (killed: -15), or the process already past the interpreter, in the kernel's
            # exit or waiting to be reaped, where a signal no longer acts (0: a run whose end
            # moved into the delays drawn here). Either way the whole run was over, so there was
            # nothing to stop; then its last step must have been logged and nothing sent after
            # the signal.
            assert "[alerts]" in err.strip().splitlines()[-1], err[-2000:]
            assert [r for r in fake_slack.requests if r.accepted and r.at >= sent] == []
            continue
        hit += 1
        _check(code, err, sent, fake_slack)
    assert hit >= 5                         # at least half of the signals landed in a running run

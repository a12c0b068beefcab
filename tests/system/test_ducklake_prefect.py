"""End to end at scale (marked e2e): PostgreSQL from the machine's binaries holding both the
Prefect server's database and a DuckLake catalog; two process workers; two collect deployments
at once on disjoint replayed sources into the one lake, then analyze and notify; a
`benchwatch query` loop answering meanwhile. Modelled on tests/system/test_e2e_prefect.py (same
Slack expectation: two earlier simple-evals pages are collected first; MGSM's two-bin move
commits on the second of them, so exactly one digest goes out and it does not announce MGSM again).
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest
import requests

import scrapers
from test_ducklake import _counts, _table
from test_e2e_prefect import (PREFECT, REPLAY, SIMPLE_EVALS_HISTORY, Api, background, fake_slack_process,  # noqa: F401
                              free_port, prefect_env, run, slack_messages, message_text)
from storage.store import open_store

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.xdist_group("servers")]

ROOT = Path(__file__).resolve().parents[2]
RUN_TIMEOUT = 600
QUERY_PAUSE = 4         # seconds between the reader's queries
# as_of (a replayed fetch's time) and the times taken from it (level_since, pending_since) differ
# between the runs; their order does not.
SATURATION = """SELECT * EXCLUDE (run_at, as_of, level_since, pending_since) FROM saturation
                ORDER BY table_id, benchmark, scope, population, k, alpha, as_of"""


@pytest.fixture(scope="module")
def postgres(lake_pg):
    return lake_pg           # the session's PostgreSQL (tests/conftest.py)


def test_two_workers_two_collects_one_lake(postgres, fake_slack_process, tmp_path, monkeypatch):
    lake_conninfo = postgres.create_database("lake")
    postgres.create_database("prefect")
    lake_url = "ducklake:postgres:" + lake_conninfo
    data_path = tmp_path / "lake-data"
    monkeypatch.setenv("BENCHWATCH_DATA_PATH", str(data_path))

    # The same input, run as plain functions into one DuckDB file: the reference.
    for name in ("SLACK_WEBHOOK_URL", "SLACK_BOT_TOKEN", "PREFECT_API_URL"):
        monkeypatch.delenv(name, raising=False)
    from jobs.analyze import analyze
    from jobs.collect import collect
    from jobs.cycle import run_cycle
    history = []
    for i, readme in enumerate(SIMPLE_EVALS_HISTORY):
        step = tmp_path / f"history{i}" / "simple_evals"
        step.mkdir(parents=True)
        shutil.copy(readme, step / "README.md")
        history.append(tmp_path / f"history{i}")
    enabled = scrapers.enabled_sources()
    half_a = [s for i, s in enumerate(enabled) if i % 2 == 0 or s == "simple_evals"]
    half_b = [s for s in enabled if s not in half_a]
    file_db = str(tmp_path / "one.duckdb")
    for h in history:
        seeded = run_cycle(open_store(file_db), ["simple_evals"], replay_dir=h)
        assert seeded.ok, seeded.text()
    # The lake starts from the same two cycles: the seeded file copied in (`benchwatch migrate --to`,
    # every table verified by count; running the cycles on the lake is test_ducklake.py's).
    from jobs.migrate import migrate_to_lake
    assert migrate_to_lake(open_store(file_db), open_store(lake_url)).ok
    collect(open_store(file_db), half_a, replay_dir=REPLAY)
    collect(open_store(file_db), half_b, replay_dir=REPLAY)
    analyze(open_store(file_db))

    # Prefect server on PostgreSQL, two process workers.
    port = free_port()
    api_url = f"http://127.0.0.1:{port}/api"
    env = prefect_env(tmp_path / "home", api_url)
    env["BENCHWATCH_DATA_PATH"] = str(data_path)
    server_env = {**env, "PREFECT_SERVER_DATABASE_CONNECTION_URL":
                  f"postgresql+asyncpg://postgres@127.0.0.1:{postgres.port}/prefect"}
    api = Api(api_url)
    with background(PREFECT + ["server", "start", "--host", "127.0.0.1", "--port", str(port), "--analytics-off"],
                    server_env, tmp_path / "server.log", cwd=tmp_path, stop_signals=(signal.SIGTERM,)) as server:
        started = time.monotonic()
        while True:
            assert server.poll() is None, (tmp_path / "server.log").read_text()
            try:
                if requests.get(f"{api_url}/health", timeout=2).ok:
                    break
            except requests.RequestException:
                pass
            assert time.monotonic() - started < 180, (tmp_path / "server.log").read_text()
            time.sleep(0.5)
        api.create_process_pool("benchwatch")
        run(PREFECT + ["--no-prompt", "deploy", "--all"], {**env, "PWD": str(ROOT)}, cwd=ROOT)
        assert api.pause_all_schedules() == 2
        # With the lake, whole runs may overlap: the advisory lock serializes their writes.
        api.create_concurrency_limit("benchwatch-duckdb-writer", 2)

        worker_env = {**env, "SLACK_WEBHOOK_URL": fake_slack_process["webhook_url"],
                      "PREFECT_WORKER_QUERY_SECONDS": "1"}
        answers: list[tuple[float, int]] = []
        stop = threading.Event()

        def query_loop() -> None:
            while not stop.is_set():
                t0 = time.monotonic()
                done = subprocess.run([sys.executable, "-m", "cli", "query", "SELECT count(*) FROM scores",
                                       "--format", "csv", "--db", lake_url], env=env, cwd=ROOT,
                                      capture_output=True, text=True, timeout=120)
                assert done.returncode == 0, done.stderr
                answers.append((time.monotonic() - t0, int(done.stdout.split()[-1])))
                # A pause between queries: each is a process that imports benchwatch and attaches the
                # catalog, and back to back they took CPU from the workers they are meant to overlap.
                stop.wait(QUERY_PAUSE)

        with background(PREFECT + ["worker", "start", "--pool", "benchwatch", "--name", "w1", "--limit", "1"],
                        worker_env, tmp_path / "w1.log", cwd=tmp_path, stop_signals=(signal.SIGINT, signal.SIGINT)), \
             background(PREFECT + ["worker", "start", "--pool", "benchwatch", "--name", "w2", "--limit", "1"],
                        worker_env, tmp_path / "w2.log", cwd=tmp_path, stop_signals=(signal.SIGINT, signal.SIGINT)):
            reader = threading.Thread(target=query_loop)
            reader.start()
            t1 = time.monotonic()
            try:
                a = api.run_deployment("collect/hourly",
                             {"db_path": lake_url, "sources": half_a, "replay_dir": str(REPLAY)})
                b = api.run_deployment("pipeline/daily",
                             {"db_path": lake_url, "sources": half_b, "replay_dir": str(REPLAY), "collect_only": True})
                states = api.wait([a, b], RUN_TIMEOUT)
            finally:
                stop.set()
                reader.join()
            collect_s = time.monotonic() - t1
            logs = {n: (tmp_path / f"{n}.log").read_text(errors="replace") for n in ("w1", "w2")}
            assert states == {a: "COMPLETED", b: "COMPLETED"}, logs
            # The two collects ran at the same time, on the two workers.
            runs = {r["id"]: r for r in api.flow_runs()}
            spans = sorted((pd.Timestamp(runs[i]["start_time"]), pd.Timestamp(runs[i]["end_time"])) for i in (a, b))
            overlap_s = (min(spans[0][1], spans[1][1]) - spans[1][0]).total_seconds()
            assert overlap_s > 0, spans
            ran_on = [n for n, text in logs.items() if "Executing deployment step" in text]
            assert ran_on == ["w1", "w2"], logs
            for dep in ("analyze/manual", "notify/manual"):
                rid = api.run_deployment(dep, {"db_path": lake_url})
                assert api.wait([rid], RUN_TIMEOUT) == {rid: "COMPLETED"}

    lake_counts, file_counts = _counts(lake_url), _counts(file_db)
    for table in ("snapshots", "scores", "item_results", "model_dates", "reject_rows", "blobs", "saturation"):
        assert lake_counts[table] == file_counts[table], (table, lake_counts[table], file_counts[table])
    dup = _table(lake_url, "SELECT count(*) - count(DISTINCT (source, sha256)) AS d FROM snapshots")["d"].iloc[0]
    assert dup == 0
    # Ties in a top k are broken by model id, so the lake's scan order cannot change the table.
    pd.testing.assert_frame_equal(_table(lake_url, SATURATION), _table(file_db, SATURATION))
    messages = slack_messages(fake_slack_process["record"])
    assert len(messages) == 1, messages
    text = message_text(messages[0])
    assert "now watching" in text and "MGSM (simple-evals): level" not in text, text
    assert answers, "no query answered during the collects"
    print(f"\n[ducklake-prefect] two collects on two workers in {collect_s:.0f} s, overlapping {overlap_s:.0f} s; "
          f"{len(answers)} queries meanwhile, slowest {max(s for s, _ in answers):.1f} s; "
          f"{lake_counts['snapshots']} snapshots, {lake_counts['scores']} scores (file: {file_counts['scores']})")

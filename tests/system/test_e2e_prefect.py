"""End to end against a real Prefect server and process worker (marked `e2e`).

What docs/deploy.md tells a newcomer to do, done by the test: start `prefect server` on
127.0.0.1 with a temporary PREFECT_HOME, create the work pool named in prefect.yaml,
`prefect --no-prompt deploy --all` from the repository root (the repo's own prefect.yaml,
untouched: paths are run parameters), pause the schedules (the server runs without its
scheduler service, so no scheduled run can race the pause), start a process worker, trigger the
pipeline deployment on recorded pages with SLACK_WEBHOOK_URL pointing at a fake Slack, and
check the run state, the DuckDB file and the Slack message. Then `benchwatch serve` against the
same server, and `benchwatch run` in ephemeral mode (no server configured).

Why a Slack message is expected: the first observation of a benchmark only sets its
saturation level, and a move must hold on 2 consecutive snapshots (METHODS D, P = 2). So two
earlier versions of the simple-evals README are collected first (plain functions, console
alerts): 2024-09-11 (baseline: MGSM "low") and 2025-07-09 (MGSM proposes "very high", pending).
The deployment run then replays tests/fixtures/replay, whose simple-evals README is the
2025-07-09 page with more of its rows (MGSM S_index 0.89, "high"): the move is committed and
one digest goes to Slack with "MGSM: saturation low → high" among its alerts.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import duckdb
import pytest
import requests
import yaml

import scrapers
from jobs.cycle import run_cycle
from storage.store import open_store

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("servers")]

ROOT = Path(__file__).resolve().parents[2]
REPLAY = ROOT / "tests" / "fixtures" / "replay"
SIMPLE_EVALS_HISTORY = [ROOT / "tests" / "fixtures" / "simple_evals" / f"readme_{d}.md"
                        for d in ("2024-09-11", "2025-07-09")]
PREFECT = [sys.executable, "-m", "prefect"]
SERVER_START_TIMEOUT = 120      # a fresh SQLite database on a loaded 2-core machine took 28 s
RUN_TIMEOUT = 300


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def prefect_env(home: Path, api_url: str | None) -> dict[str, str]:
    """The environment of every Prefect process here: its own home, no telemetry, no Slack."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PREFECT_", "SLACK_")) and k != "BENCHWATCH_DB"}
    env.update(PREFECT_HOME=str(home), DO_NOT_TRACK="1", PREFECT_SERVER_ANALYTICS_ENABLED="false",
               PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="90", PYTHONUNBUFFERED="1")
    if api_url:
        env["PREFECT_API_URL"] = api_url
    return env


def run(cmd: list[str], env: dict[str, str], *, cwd: Path, timeout: float = 180) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{' '.join(cmd)} exited {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


def stop(proc: subprocess.Popen, signals: tuple[int, ...], grace: float = 20) -> list[str]:
    """Send the signals one second apart, wait; SIGKILL if it is still running. Returns what was needed."""
    used = []
    for sig in signals:
        if proc.poll() is not None:
            break
        proc.send_signal(sig)
        used.append(signal.Signals(sig).name)
        try:
            proc.wait(timeout=1)
        except subprocess.TimeoutExpired:
            pass
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)
        used.append("SIGKILL")
    return used


@contextmanager
def background(cmd: list[str], env: dict[str, str], log: Path, *, cwd: Path,
               stop_signals: tuple[int, ...]) -> Iterator[subprocess.Popen]:
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
        try:
            yield proc
        finally:
            proc.stopped_with = stop(proc, stop_signals)  # type: ignore[attr-defined]


class Api:
    """The few REST calls the assertions need (the same API the UI uses)."""

    # Prefect's own client retries these, with a growing wait (prefect.client.base): the server
    # answers 503 while its SQLite database is locked by a concurrent write (a served run, a worker).
    RETRY_CODES = (429, 502, 503)
    RETRIES = 5

    def __init__(self, url: str):
        self.url = url

    def send(self, method: str, path: str, body: dict | None = None) -> requests.Response:
        for attempt in range(self.RETRIES + 1):
            resp = requests.request(method, f"{self.url}{path}", json=body, timeout=30)
            if resp.status_code not in self.RETRY_CODES or attempt == self.RETRIES:
                break
            time.sleep(0.5 * 2 ** attempt)
        resp.raise_for_status()
        return resp

    def post(self, path: str, body: dict | None = None) -> list | dict:
        return self.send("POST", path, body or {}).json()

    def flow_runs(self) -> list[dict]:
        return self.post("/flow_runs/filter", {"sort": "EXPECTED_START_TIME_DESC"})

    def deployment(self, name: str) -> dict:
        flow, dep = name.split("/")
        return self.send("GET", f"/deployments/name/{flow}/{dep}").json()

    # What `prefect work-pool create`, `prefect deployment schedule pause --all` and `prefect
    # global-concurrency-limit create` ask the server for, without a Prefect CLI process (its
    # import) each: for a test that checks the runs, not those commands (the e2e test runs them).

    def create_process_pool(self, name: str) -> None:
        from prefect.workers.process import ProcessWorker
        self.post("/work_pools/", {"name": name, "type": "process",
                                   "base_job_template": ProcessWorker.get_default_base_job_template()})

    def pause_all_schedules(self) -> int:
        paused = 0
        for dep in self.post("/deployments/filter"):
            for schedule in dep["schedules"]:
                if schedule["active"]:
                    self.send("PATCH", f"/deployments/{dep['id']}/schedules/{schedule['id']}", {"active": False})
                    paused += 1
        return paused

    def create_concurrency_limit(self, name: str, limit: int) -> None:
        self.post("/v2/concurrency_limits/", {"name": name, "limit": limit})

    def run_deployment(self, name: str, params: dict) -> str:
        """A run of deployment `name` (what `prefect deployment run` asks for); its id."""
        return self.post(f"/deployments/{self.deployment(name)['id']}/create_flow_run", {"parameters": params})["id"]

    def wait(self, ids: list[str], timeout: float) -> dict[str, str]:
        """{id: final state type} once every run of `ids` has ended."""
        deadline = time.monotonic() + timeout
        while True:
            states = {r["id"]: r["state_type"] for r in self.flow_runs() if r["id"] in ids}
            if len(states) == len(ids) and all(s in ("COMPLETED", "FAILED", "CRASHED", "CANCELLED")
                                               for s in states.values()):
                return states
            assert time.monotonic() < deadline, states
            time.sleep(0.5)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """`prefect server start` on a free 127.0.0.1 port with a temporary PREFECT_HOME."""
    base = tmp_path_factory.mktemp("prefect-e2e")
    port = free_port()
    api_url = f"http://127.0.0.1:{port}/api"
    env = prefect_env(base / "home", api_url)         # the parent (base) exists: ENGINEERING-NOTES §2.3
    log = base / "server.log"
    started = time.monotonic()
    # The server's scheduler is off: right after `deploy` it creates a schedule's next runs, and
    # under load it did so after the test had paused the schedules (3 stray daily runs). The
    # deployments, their schedules and the pause are still the server's own; no run is timed.
    server_env = {**env, "PREFECT_SERVER_SERVICES_SCHEDULER_ENABLED": "false"}
    with background(PREFECT + ["server", "start", "--host", "127.0.0.1", "--port", str(port), "--analytics-off"],
                    server_env, log, cwd=base, stop_signals=(signal.SIGTERM,)) as proc:
        while True:
            assert proc.poll() is None, f"prefect server exited {proc.returncode}:\n{log.read_text()}"
            try:
                if requests.get(f"{api_url}/health", timeout=2).ok:
                    break
            except requests.RequestException:
                pass
            assert time.monotonic() - started < SERVER_START_TIMEOUT, f"server not healthy:\n{log.read_text()}"
            time.sleep(0.25)
        print(f"server healthy after {time.monotonic() - started:.1f} s")
        yield {"api": Api(api_url), "env": env, "dir": base, "log": log}
    assert proc.stopped_with == ["SIGTERM"], f"server needed {proc.stopped_with}"


@pytest.fixture
def fake_slack_process(tmp_path):
    """tests/fake_slack.py as its own process (the flow runs in a worker subprocess)."""
    from fake_slack import WEBHOOK_PATH
    record = tmp_path / "slack.jsonl"
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "fake_slack.py"), "--port", "0",
                             "--record", str(record)], stdout=subprocess.PIPE, text=True)
    try:
        base_url = proc.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:"), base_url
        yield {"webhook_url": base_url + WEBHOOK_PATH, "record": record}
    finally:
        stop(proc, (signal.SIGINT,), grace=5)


def slack_messages(record: Path) -> list[dict]:
    if not record.exists():
        return []
    rows = [json.loads(line) for line in record.read_text().splitlines() if line.strip()]
    return [r["body"] for r in rows if r["accepted"]]


def message_text(body: dict) -> str:
    return json.dumps(body, ensure_ascii=False)


def db_rows(path: Path, sql: str, params: list | None = None) -> list[tuple]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


def test_pipeline_deployment_on_a_process_worker(server, fake_slack_process, tmp_path, monkeypatch):
    api, env = server["api"], server["env"]
    spec = yaml.safe_load((ROOT / "prefect.yaml").read_text())
    pool = spec["deployments"][0]["work_pool"]["name"]
    db_path = tmp_path / "bw.duckdb"
    stray_db = ROOT / spec["deployments"][0]["work_pool"]["job_variables"]["env"]["BENCHWATCH_DB"]
    stray_existed = stray_db.exists()

    t0 = time.monotonic()
    run(PREFECT + ["work-pool", "create", pool, "--type", "process"], env, cwd=tmp_path)
    # PWD: what a shell sets after `cd` to the checkout; prefect.yaml's pull step uses it.
    deployed = run(PREFECT + ["--no-prompt", "deploy", "--all"], {**env, "PWD": str(ROOT)}, cwd=ROOT)
    for name in ("pipeline/daily", "collect/hourly", "analyze/manual", "notify/manual"):
        assert f"Deployment '{name}' successfully created" in deployed.stdout
    paused = run(PREFECT + ["--no-prompt", "deployment", "schedule", "pause", "--all"], env, cwd=tmp_path)
    assert "Paused 2 deployment schedule(s)" in paused.stdout
    daily = api.deployment("pipeline/daily")
    assert daily["pull_steps"] == [{"prefect.deployments.steps.set_working_directory": {"directory": str(ROOT)}}]
    assert [s["active"] for s in daily["schedules"]] == [False]
    assert daily["global_concurrency_limit"]["limit"] == 1
    print(f"pool + deploy + pause: {time.monotonic() - t0:.1f} s")

    # Two earlier versions of one page, collected and analyzed as plain functions (console alerts).
    for i, readme in enumerate(SIMPLE_EVALS_HISTORY):
        step = tmp_path / f"history{i}" / "simple_evals"
        step.mkdir(parents=True)
        shutil.copy(readme, step / "README.md")
    monkeypatch.delenv("SLACK_WEBHOOK_URL", raising=False)
    monkeypatch.delenv("SLACK_BOT_TOKEN", raising=False)
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    for i in range(len(SIMPLE_EVALS_HISTORY)):
        seeded = run_cycle(open_store(db_path), ["simple_evals"], replay_dir=tmp_path / f"history{i}")
        assert seeded.ok, seeded.text()

    worker_env = {**env, "SLACK_WEBHOOK_URL": fake_slack_process["webhook_url"], "PREFECT_WORKER_QUERY_SECONDS": "2"}
    worker_dir = tmp_path / "worker"        # not the checkout: the pull step must take the run there
    worker_dir.mkdir()
    with background(PREFECT + ["worker", "start", "--pool", pool, "--name", "e2e-worker", "--limit", "1"],
                    worker_env, tmp_path / "worker.log", cwd=worker_dir,
                    stop_signals=(signal.SIGINT, signal.SIGINT)) as worker:
        t1 = time.monotonic()
        params = {"db_path": str(db_path), "replay_dir": str(REPLAY)}
        triggered = subprocess.run(
            PREFECT + ["deployment", "run", "pipeline/daily", "--params", json.dumps(params),
                       "--watch", "--watch-timeout", str(RUN_TIMEOUT)],
            env=env, cwd=tmp_path, capture_output=True, text=True, timeout=RUN_TIMEOUT + 60)
        print(f"trigger -> Completed: {time.monotonic() - t1:.1f} s")
        assert triggered.returncode == 0, (f"{triggered.stdout}\n{triggered.stderr}\n--- worker log ---\n"
                                           f"{(tmp_path / 'worker.log').read_text()}")
        assert "Flow run finished successfully in 'Completed'" in triggered.stdout
        # the same pages again: nothing new, the analysis skipped as `run` skips it (issue 22);
        # triggered through the API (the command's request) without a second Prefect CLI process
        t2 = time.monotonic()
        again = api.run_deployment("pipeline/daily", params)
        assert api.wait([again], RUN_TIMEOUT) == {again: "COMPLETED"}, (tmp_path / "worker.log").read_text()
        print(f"unchanged: trigger -> Completed: {time.monotonic() - t2:.1f} s")
    # prefect 3.9.1 workers may ignore the first SIGINT (ENGINEERING-NOTES §2.3): two must do.
    assert "SIGKILL" not in worker.stopped_with, f"worker needed {worker.stopped_with}"
    worker_log = (tmp_path / "worker.log").read_text(errors="replace")
    assert "Executing deployment step: set_working_directory" in worker_log

    # Only the triggered runs ran (the server's scheduler is off: see the `server` fixture).
    runs = api.flow_runs()
    assert [(r["state_type"], r["parameters"]) for r in runs] == [("COMPLETED", {**params, "sources": None,
                                                                                  "collect_only": False})] * 2
    run_id = min(runs, key=lambda r: r["expected_start_time"])["id"]
    second = max(runs, key=lambda r: r["expected_start_time"])["id"]
    summary = [a["data"] for a in api.post("/artifacts/filter", {"flow_runs": {"id": {"any_": [second]}}})
               if a["key"] == "benchwatch-pipeline-summary"]
    assert summary and "- Analysis: inputs unchanged, stored results kept" in summary[0], summary
    assert "- New snapshots: none" in summary[0]
    keys = {a["key"]: a["type"] for a in api.post("/artifacts/filter", {"flow_runs": {"id": {"any_": [run_id]}}})}
    assert keys == {"benchwatch-saturation": "table", "benchwatch-pipeline-summary": "markdown",
                    "benchwatch-report-overview": "table", "benchwatch-report": "markdown"}
    # benchwatch's own log records reach the UI (PREFECT_LOGGING_EXTRA_LOGGERS in prefect.yaml)
    logs = api.post("/logs/filter", {"logs": {"flow_run_id": {"any_": [run_id]}}, "sort": "TIMESTAMP_ASC",
                                     "limit": 200})
    assert any(log["name"] == "benchwatch.jobs" and log["message"] == "[swebench] new: 64 scores" for log in logs)

    # The database: every enabled source replayed once in this run; simple-evals has three versions.
    enabled = scrapers.enabled_sources()
    listed = sorted({scrapers.get(s).release_source for s in enabled} - {""})   # release lists discovery reads
    latest = dict(db_rows(db_path, "SELECT source, count(*) FROM snapshots GROUP BY source"))
    assert latest == {s: (3 if s == "simple_evals" else 1) for s in [*enabled, *listed]}
    assert db_rows(db_path, "SELECT count(DISTINCT source) FROM fetches WHERE run_id = ? AND status = 'ok'",
                   [run_id]) == [(len(enabled) + len(listed),)]
    # counts checked by hand against the replay files (tests/fixtures/replay/README.md)
    assert dict(db_rows(db_path, "SELECT source, n_scores FROM snapshots WHERE source IN "
                                 "('swebench', 'simple_evals', 'livebench') AND origin = 'replay' "
                                 "QUALIFY row_number() OVER (PARTITION BY source ORDER BY id DESC) = 1")) == {
        "swebench": 64, "simple_evals": 103, "livebench": 312}
    mgsm = db_rows(db_path, "SELECT bin FROM saturation WHERE benchmark = 'mgsm' AND scope = 'all' ORDER BY as_of")
    # 2025-07-09: o3 and o3-high are one model (its best row counts once): top 5 = .923 .916 .916
    # .908 .903 -> S 0.876, high (it read "very high" while the effort variant took a second seat)
    assert [b for (b,) in mgsm] == ["low", "high", "high"]

    # low -> high is two bins: it committed at once (analysis/hysteresis.py, LEVEL_MAX_LAG_BINS), on the
    # second seeded version (announced then, on the console), so the stored level is high, nothing pending
    levels = db_rows(db_path, "SELECT level, pending_bin FROM saturation_latest WHERE table_id = 'mgsm:simple_evals' "
                              "AND scope = 'all' AND population = 'models'")
    assert levels == [("high", None)], levels
    # Slack: one digest, which does not announce again a level committed before it.
    messages = slack_messages(fake_slack_process["record"])
    assert len(messages) == 1, messages
    text = message_text(messages[0])
    assert "now watching" in text and "MGSM (simple-evals): level" not in text, text

    assert stray_db.exists() == stray_existed, "a run wrote the deployment's default database in the checkout"


def test_benchwatch_serve_runs_the_same_deployments_without_a_worker(server, tmp_path):
    api, env = server["api"], server["env"]
    db_path = tmp_path / "served.duckdb"
    log = tmp_path / "serve.log"
    with background([sys.executable, "-m", "cli.main", "serve", "--db", str(db_path)], env, log, cwd=tmp_path,
                    stop_signals=(signal.SIGINT,)) as served:
        deadline = time.monotonic() + 120
        while "Your deployments are being served" not in log.read_text():
            assert served.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.5)
        hourly = api.deployment("collect/hourly")
        assert [(s["schedule"]["cron"], s["schedule"]["timezone"], s["active"]) for s in hourly["schedules"]] == [
            ("15 * * * *", "UTC", True)]
        assert hourly["parameters"]["db_path"] == str(db_path)
        # triggered through the API (`prefect deployment run` is the worker test's), the served
        # deployment's parameters merged by the server as for the command
        triggered = api.run_deployment("collect/hourly",
                                       {"replay_dir": str(REPLAY), "sources": ["swebench", "lmarena"]})
        assert api.wait([triggered], RUN_TIMEOUT) == {triggered: "COMPLETED"}, log.read_text()
    assert served.stopped_with == ["SIGINT"], f"serve needed {served.stopped_with}"
    assert "All deployments have been paused" in log.read_text()
    assert api.deployment("collect/hourly")["paused"] is True
    assert dict(db_rows(db_path, "SELECT source, n_scores FROM snapshots")) == {"swebench": 64, "lmarena": 12}


def test_benchwatch_run_in_ephemeral_mode_needs_no_setup(tmp_path):
    """No server configured: Prefect starts a temporary one in a brand-new PREFECT_HOME."""
    env = prefect_env(tmp_path / "home", None)
    db_path = tmp_path / "eph.duckdb"
    done = subprocess.run([sys.executable, "-m", "cli.main", "run", "--replay", str(REPLAY), "--db", str(db_path)],
                          env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    assert (tmp_path / "home" / "prefect.db").is_file()      # the temporary server's database
    # without -v the terminal shows the command's summary, not Prefect's INFO run lines
    assert not [line for line in done.stderr.splitlines() if line.startswith("INFO ")], done.stderr
    out = done.stdout.splitlines()
    rows = [line.split() for line in out if line.startswith("  ")]
    collected = {r[0]: r[1] for r in rows if r[0] in scrapers.SOURCES}
    assert collected == {s: "new" for s in scrapers.enabled_sources()}
    assert any(line.startswith("analyze: ") and "leaderboard table" in line for line in out)
    assert any(line.startswith("notify: ") for line in out)      # first run: levels set, nothing to send
    listed = {scrapers.get(s).release_source for s in scrapers.enabled_sources()} - {""}   # release lists read
    assert db_rows(db_path, "SELECT count(*) FROM snapshots") == [(len(scrapers.enabled_sources()) + len(listed),)]
    assert db_rows(db_path, "SELECT count(DISTINCT benchmark) > 20 FROM saturation") == [(True,)]

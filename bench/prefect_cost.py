"""The bench's `prefect` line (issue 23, "Prefect costs what its work costs"): a deployed
`pipeline` run on a running process worker, against the same cycle without Prefect.

A Prefect server and a process worker on 127.0.0.1 with a temporary PREFECT_HOME, set up as
docs/deploy.md says (tests/system/test_e2e_prefect.py does the same): `work-pool create`, `deploy
--all` from the checkout, schedules paused, `worker start` with PREFECT_WORKER_QUERY_SECONDS=1.
A run is created through the REST API (what `prefect deployment run` and the UI call) and its
state is polled: trigger -> Completed, without a CLI's own start-up in the figure.

    first      the pipeline deployment on tests/fixtures/replay into a new database, vs
               `benchwatch run --no-prefect --replay` (a whole process) into another, one right
               after the other: <= 2x
    unchanged  the same deployment run again (same day, nothing new), and once more as on a new
               UTC day (the stored fingerprint one of the day before, nothing new: only the
               day-relative columns move), each vs an unchanged `run --no-prefect` right before
               it: shown (what Prefect adds to a run with nothing to do), no goal
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterator

import requests

from storage import db, fingerprint

REPO = Path(__file__).resolve().parents[1]
REPLAY = REPO / "tests" / "fixtures" / "replay"
PREFECT = [sys.executable, "-m", "prefect"]
POOL = "benchwatch"                 # prefect.yaml's work pool
DEPLOYMENT = "pipeline/daily"
WORKER_QUERY_SECONDS = "1"          # docs/deploy.md: how often the worker asks the server for runs
TERMINAL = {"COMPLETED", "FAILED", "CRASHED", "CANCELLED"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def prefect_env(base: dict[str, str], home: Path, api_url: str) -> dict[str, str]:
    env = {k: v for k, v in base.items() if not k.startswith(("PREFECT_", "SLACK_")) and k != "BENCHWATCH_DB"}
    env.update(PREFECT_HOME=str(home), PREFECT_API_URL=api_url, DO_NOT_TRACK="1",
               PREFECT_SERVER_ANALYTICS_ENABLED="false", PYTHONUNBUFFERED="1")
    return env


def _stop(proc: subprocess.Popen, signals: tuple[int, ...]) -> None:
    for sig in signals:
        if proc.poll() is None:
            proc.send_signal(sig)
            try:
                proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextmanager
def background(cmd: list[str], env: dict[str, str], log: Path, cwd: Path,
               signals: tuple[int, ...]) -> Iterator[subprocess.Popen]:
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
        try:
            yield proc
        finally:
            _stop(proc, signals)


class Deployed:
    """A server, the repository's deployments and a worker; runs triggered through the API."""

    def __init__(self, api_url: str, env: dict[str, str], worker_pid: int):
        self.api, self.env, self.worker_pid = api_url, env, worker_pid
        flow, name = DEPLOYMENT.split("/")
        resp = requests.get(f"{api_url}/deployments/name/{flow}/{name}", timeout=30)
        resp.raise_for_status()
        self.deployment_id = resp.json()["id"]

    def _busy(self) -> bool:
        """Whether the worker still has a child: a flow-run process that has not exited yet."""
        try:
            tasks = Path(f"/proc/{self.worker_pid}/task")
            return any((t / "children").read_text().strip() for t in tasks.iterdir())
        except OSError:
            return False

    def run(self, parameters: dict, timeout: float = 600) -> tuple[float, str]:
        """(seconds from creating the run to its terminal state, that state's type), triggered on
        an idle worker (the previous run's process gone, as for a daily run)."""
        idle_by = time.monotonic() + 60
        while self._busy() and time.monotonic() < idle_by:
            time.sleep(0.1)
        t = time.perf_counter()
        for _ in range(20):    # the server answers 503 while its SQLite database is busy: the time counts
            resp = requests.post(f"{self.api}/deployments/{self.deployment_id}/create_flow_run",
                                 json={"parameters": parameters}, timeout=30)
            if resp.status_code != 503:
                break
            time.sleep(0.5)
        resp.raise_for_status()
        run_id = resp.json()["id"]
        while time.perf_counter() - t < timeout:
            state = requests.get(f"{self.api}/flow_runs/{run_id}", timeout=30).json()["state_type"]
            if state in TERMINAL:
                return time.perf_counter() - t, state
            time.sleep(0.1)
        raise TimeoutError(f"flow run {run_id} not finished after {timeout} s")


@contextmanager
def deployed(base_env: dict[str, str], tmp: Path) -> Iterator[Deployed]:
    port = _free_port()
    api_url = f"http://127.0.0.1:{port}/api"
    (tmp / "prefect").mkdir()
    env = prefect_env(base_env, tmp / "prefect" / "home", api_url)
    with background(PREFECT + ["server", "start", "--host", "127.0.0.1", "--port", str(port), "--analytics-off"],
                    env, tmp / "prefect" / "server.log", tmp, (signal.SIGTERM,)) as server:
        deadline = time.monotonic() + 180
        while True:
            if server.poll() is not None:
                raise RuntimeError(f"prefect server exited: {(tmp / 'prefect' / 'server.log').read_text()[-800:]}")
            try:
                if requests.get(f"{api_url}/health", timeout=2).ok:
                    break
            except requests.RequestException:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("prefect server not healthy after 180 s")
            time.sleep(0.25)
        for cmd, cwd, extra in ((["work-pool", "create", POOL, "--type", "process"], tmp, {}),
                                (["--no-prompt", "deploy", "--all"], REPO, {"PWD": str(REPO)}),
                                (["--no-prompt", "deployment", "schedule", "pause", "--all"], tmp, {})):
            subprocess.run(PREFECT + cmd, env={**env, **extra}, cwd=cwd, check=True, capture_output=True)
        worker_env = {**env, "PREFECT_WORKER_QUERY_SECONDS": WORKER_QUERY_SECONDS}
        with background(PREFECT + ["worker", "start", "--pool", POOL, "--name", "bench", "--limit", "1"],
                        worker_env, tmp / "prefect" / "worker.log", tmp, (signal.SIGINT, signal.SIGINT)) as worker:
            yield Deployed(api_url, env, worker.pid)


def _as_if_yesterday(path: Path) -> None:
    """What a new UTC day does to an unchanged store: the stored analysis fingerprint (which hashes
    the day) is one of another day, its summary kept; the fingerprint without the day still matches,
    so the next cycle moves the day-relative columns only (jobs/analyze.py)."""
    with db.connect(path) as con:
        summary = fingerprint.stored_summary(con)
        fingerprint.store_fingerprint(con, "the fingerprint of the day before", datetime.now(timezone.utc),
                                      summary=summary)


def bench_prefect(tmp: Path, env: dict[str, str], line: Callable[..., None], repeat: int = 1,
                  measured: Callable[..., bool] | None = None) -> None:
    """The `prefect` lines (see the module docstring); `measured` records each goal's median."""
    def goal(label: str, values: list[float], limit: float, unit: str) -> bool:
        """Every run's figure to the summary (which takes their median); this line judges the median."""
        for v in values:
            if measured:
                measured(label, v, limit, unit)
        return sorted(values)[len(values) // 2] <= limit

    subprocess.run([sys.executable, str(REPO / "tests" / "replay_files.py")], check=True,
                   capture_output=True)  # generated copies
    cli = [sys.executable, "-m", "cli", "run", "--no-prefect", "--replay", str(REPLAY)]
    runs: dict[str, list[float]] = {"plain": [], "first": [], "plain unchanged": [], "unchanged": [],
                                    "new day": []}
    with deployed(env, tmp) as dep:
        for i in range(repeat):
            t = time.perf_counter()
            subprocess.run([*cli, "--db", str(tmp / f"plain{i}.duckdb")], env=env, cwd=tmp, capture_output=True,
                           check=True)
            runs["plain"].append(time.perf_counter() - t)
            db_path = tmp / f"flow{i}.duckdb"
            params = {"db_path": str(db_path), "replay_dir": str(REPLAY)}
            for kind in ("first", "unchanged", "new day"):
                if kind == "new day":
                    _as_if_yesterday(db_path)
                if kind == "unchanged":      # the plain side of the unchanged runs, right before them
                    t = time.perf_counter()
                    subprocess.run([*cli, "--db", str(tmp / f"plain{i}.duckdb")], env=env, cwd=tmp,
                                   capture_output=True, check=True)
                    runs["plain unchanged"].append(time.perf_counter() - t)
                took, state = dep.run(params)
                if state != "COMPLETED":
                    raise RuntimeError(f"{kind} deployment run ended {state}")
                runs[kind].append(took)
    med = {k: sorted(v)[len(v) // 2] for k, v in runs.items()}
    ratio = med["first"] / med["plain"]
    load = os.getloadavg()[0]
    line("prefect", f"first full cycle: deployed run {med['first']:5.1f} s vs run --no-prefect {med['plain']:5.1f} s "
         f"-> {ratio:4.2f}x (goal <= 2x; median of {repeat}, load {load:.1f})",
         goal("prefect: first deployed run vs no Prefect",
              [f / p for f, p in zip(runs["first"], runs["plain"])], 2, "x"))
    for kind in ("unchanged", "new day"):
        what = "same day" if kind == "unchanged" else "new day: day-relative columns moved"
        shown = [d / p for d, p in zip(runs[kind], runs["plain unchanged"])]
        line("prefect", f"unchanged cycle ({what}): deployed run trigger->Completed vs an unchanged run --no-prefect "
             f"-> {sorted(shown)[len(shown) // 2]:4.1f}x (shown, no goal; median of {repeat})")
    print(json.dumps({**runs, "load": load}))

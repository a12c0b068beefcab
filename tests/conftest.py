"""Shared pytest fixtures and the suite's lanes.

Lanes: `python -m pytest` (the README's and .ci/run's command) runs everything; the fast lane
`python -m pytest -m "not slow and not e2e"` leaves out the heavy tests. `slow` is set by hand
on Monte Carlo power studies, the browser test, command matrices, kill faults, real-history
backfills, Prefect imports and the repeats of a parametrised check beyond the slice the fast
lane keeps (each says which fast test keeps the capability), and here on every test that
starts Prefect's test server (the `harness` fixture),
so a new flow test cannot land in the fast lane by accident. Test modules import nothing
heavy at module level (Prefect is imported inside the tests that need it), so collecting the
fast lane stays cheap.

Parallel runs (pytest-xdist, `-n 2`; README "Run the tests"): each module runs whole on one worker
(its module fixtures are built once) and the modules that could disturb each other run in one
group, one after another (`PARALLEL_GROUPS`); the longest units start first (`LONGEST_FIRST`).
Each worker has its own PREFECT_HOME, so two workers never share Prefect's SQLite database.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from storage.store import open_store

SLOW_FIXTURES = ("harness",)   # fixtures that start a Prefect test server (seconds, a subprocess)

# --- parallel runs: which tests share a worker, and in what order --------------------------------
# A group runs on one worker, its tests in file order; every other module is a group of its own.
# Keys are test files, or "file::test" prefixes for single tests (parametrisations included).
PARALLEL_GROUPS = {
    # Start PostgreSQL or a Prefect server (a test server, the ephemeral one, or a real server and
    # worker) on a free 127.0.0.1 port, or time a kill of such a process: one at a time, as before.
    "servers": (
        "test_ducklake.py", "test_ducklake_prefect.py", "test_e2e_prefect.py", "test_flows.py",
        "test_lake_reliability.py", "test_prefect_secrets.py", "test_store.py",
        "test_command_matrix.py::test_every_command_survives_each_state_of_a_lake",
        "test_faults.py::test_killing_run_never_orphans_the_ephemeral_prefect_server",
        "test_slack.py::test_webhook_from_a_prefect_secret_block",
        # and the fast tests that import Prefect in-process beside test_flows: one worker pays the import
        "test_slack.py::test_real_prefect_lookup_without_an_api_falls_back_to_console",
    ),
    # Read the real history backfilled and analyzed once a session (the fixtures below): one worker
    # builds it once, instead of each worker building its own.
    "real-history": ("test_disagreements_real.py", "test_docs_figures.py", "test_history_pruned.py",
                     "test_paper_agreement.py", "test_real_history.py"),
}
# The longest units go first, so that none of them starts late and ends the run alone (the alert
# replay's setup is the longest; then the largest modules of the whole suite and of the fast
# lane, by their summed --durations, waits included: test_query's SIGTERMs, test_slack's
# Retry-Afters); the rest follow in file order.
LONGEST_FIRST = ("test_alert_replay.py", "servers", "real-history", "test_command_matrix.py", "test_bad_inputs.py",
                 "test_report_html.py", "test_csv_ingest.py", "test_collect.py", "test_incremental_analysis.py",
                 "test_query.py", "test_slack.py", "test_unchanged_cycle.py", "test_storage.py", "test_shrink_guard.py",
                 "test_notify.py")


def parallel_group(nodeid: str) -> str:
    """The group (a PARALLEL_GROUPS key, or the test's file) a test runs in under xdist."""
    rel = nodeid.split("tests/", 1)[-1]
    for group, members in PARALLEL_GROUPS.items():
        if any(rel == m or rel.startswith(m + ("::" if m.endswith(".py") else "")) for m in members):
            return group
    return rel.split("::", 1)[0]


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """`-n N` (xdist's default `--dist load`): schedule by `parallel_group`, in LONGEST_FIRST order.
    An explicit other `--dist` mode is xdist's own."""
    if config.getoption("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return parallel_group(nodeid)

    config.option.loadscopereorder = False       # keep the order pytest_collection_modifyitems set
    return GroupScheduling(config, log)


def _worker() -> str | None:
    return os.environ.get("PYTEST_XDIST_WORKER")


def pytest_configure(config: pytest.Config) -> None:
    """The replay files generated from the scraper cases (tests/replay_files.py) exist before any
    test reads tests/fixtures/replay (written once, by the main process); an xdist worker gets a
    PREFECT_HOME of its own (the ephemeral server's database is a file in it) and its share of the
    cores for DuckDB (`$BENCHWATCH_THREADS`, unless set already); SIGINT is handled."""
    import signal
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        # started in the background of a shell without job control (`cmd &` in a script, nohup):
        # SIGINT ignored, and inherited so by the xdist workers and every `benchwatch` subprocess,
        # so the Ctrl-C tests (test_query, test_e2e_prefect's serve) would fail; a test run takes
        # Ctrl-C as Python does by default
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if _worker() is None:
        from replay_files import write
        write()
    else:
        home = tempfile.mkdtemp(prefix=f"benchwatch-prefect-{_worker()}-")
        config.stash[_PREFECT_HOME] = home
        os.environ["PREFECT_HOME"] = home
        # each worker's DuckDB runs on its share of the cores (`-n 2` on 2 cores: one thread each),
        # not a thread per core in every worker, competing for the same cores. The tests that need
        # DuckDB's threads set their own count.
        workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 1)
        os.environ.setdefault("BENCHWATCH_THREADS", str(max(1, (os.cpu_count() or 1) // workers)))


_PREFECT_HOME = pytest.StashKey[str]()


def pytest_unconfigure(config: pytest.Config) -> None:
    home = config.stash.get(_PREFECT_HOME, None)
    if home:
        shutil.rmtree(home, ignore_errors=True)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if any(f in getattr(item, "fixturenames", ()) for f in SLOW_FIXTURES):
            item.add_marker(pytest.mark.slow)
    rank = {g: i for i, g in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(parallel_group(item.nodeid), len(rank)))   # stable: file order kept


def pytest_collection_finish(session: pytest.Session) -> None:
    """The objects alive once the tests are collected (the modules imported, the items) go out of
    the cyclic garbage collector's reach (`gc.freeze`): they live as long as the process, yet each
    full collection walked them all again, many times per worker. Objects made later are collected
    as before."""
    import gc
    gc.freeze()


@pytest.fixture(autouse=True)
def _no_stop_requested():
    """Every test starts without a pending SIGTERM: a test that sends one to a `main()` in this
    process leaves common.shutdown's flag set (the CLI clears it when its next command starts, but
    a test that calls the jobs directly would stop at their first check)."""
    from common import shutdown
    shutdown.clear()
    yield


@pytest.fixture
def fake_slack():
    """A started fake Slack (tests/fake_slack.py) on 127.0.0.1; stopped after the test."""
    from fake_slack import FakeSlack

    with FakeSlack() as server:
        yield server


@pytest.fixture(scope="session")
def _synced_template(tmp_path_factory) -> Path:
    """One database as the first job leaves it (migrated, registry loaded), made once a session."""
    from jobs.sync import connect_synced

    path = tmp_path_factory.mktemp("template") / "synced.duckdb"
    with connect_synced(open_store(path)):
        pass
    return path


@pytest.fixture
def synced_db(_synced_template, tmp_path) -> Path:
    """A fresh database file as the first job leaves it, copied from the session's template:
    creating one runs every migration, the registry sync and a checkpoint; a copy is a file copy.
    Tests of creating or migrating a file use a path that does not exist yet instead."""
    path = tmp_path / "bw.duckdb"
    shutil.copyfile(_synced_template, path)
    return path


@pytest.fixture
def one_utc_day(monkeypatch):
    """The analysis's clock held at the instant the test starts, for a test whose cycles must see
    one UTC day: the analysis fingerprint holds the day, so a second cycle after midnight is a new
    day and recomputes (CI once ran such a test across 00:00 UTC)."""
    import jobs.analyze
    from common.time import utcnow

    start = utcnow()
    monkeypatch.setattr(jobs.analyze, "utcnow", lambda: start)
    return start


@pytest.fixture
def new_synced_db(_synced_template, tmp_path):
    """Make fresh databases as the first job leaves them: `new_synced_db("a.duckdb")` copies the
    session's template to tmp_path / "a.duckdb" (for a test that needs more than one)."""
    def make(name: str) -> Path:
        path = tmp_path / name
        shutil.copyfile(_synced_template, path)
        return path
    return make


# --- the real snapshot history (../shared/snapshots), built once a session ----------------------
# Several slow tests read the whole real history backfilled (and analyzed at its newest
# observation): building it once and sharing it (read-only, or a copy for a test that writes)
# saves a backfill and an analysis per module.

@pytest.fixture(scope="session")
def real_history_backfilled(tmp_path_factory) -> Path:
    """../shared/snapshots backfilled as a user does it (docs/figures.py's `backfill`: the
    `benchwatch backfill DIR` command in a subprocess), not analyzed. Read it, or copy it
    (`real_history_copy`) to write; skipped, with the reason, without ../shared."""
    from helpers import SNAPSHOTS, docs_figures, require
    require(SNAPSHOTS)
    path = tmp_path_factory.mktemp("real-history") / "backfilled.duckdb"
    docs_figures().backfill(SNAPSHOTS, path)            # raises on any failed file
    return path


@pytest.fixture(scope="session")
def real_history(real_history_backfilled, tmp_path_factory) -> Path:
    """The backfilled real history analyzed with now = its newest observation (as docs/figures.py
    does). Shared by every test that asks for it: only read it (storage.query.run_query,
    read-only connections)."""
    from helpers import copy_db, docs_figures
    from jobs.cycle import analyze
    path = tmp_path_factory.mktemp("real-history-analyzed") / "history.duckdb"
    copy_db(real_history_backfilled, path)
    analyze(open_store(path), now=docs_figures().history_now(path))
    return path


@pytest.fixture
def real_history_copy(real_history_backfilled, tmp_path) -> Path:
    """A private copy of the backfilled (not analyzed) real history, for a test that writes."""
    from helpers import copy_db
    return copy_db(real_history_backfilled, tmp_path / "real.duckdb")

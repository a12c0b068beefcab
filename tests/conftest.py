"""Shared pytest fixtures and the suite's lanes.

Tiers, by folder (docs/contributing.md, "Test tiers"): tests/unit (pure and in-memory: the fast
lane, `python -m pytest tests/unit`), tests/integration (the CLI, database files, subprocesses,
the replay folder, the fake Slack), tests/system (Prefect and PostgreSQL servers, the browser,
the whole real history); `python -m pytest` (the README's and .ci/run's command) runs all three.
This file, helpers.py, fake_slack.py, pg.py, the oracles and fixtures/ serve every tier.
`-m "not slow and not e2e"` leaves out the heavy tests of any tier: `slow` is set by hand on
Monte Carlo power studies, the browser test, command matrices, kill faults, real-history
backfills, Prefect imports and the repeats of a parametrised check beyond its representative
slice (each says which fast test keeps the capability), and here on every test that starts
Prefect's test server (the `harness` fixture). Test modules import nothing heavy at module level
(Prefect is imported inside the tests that need it), so collecting a tier stays cheap.

Parallel runs (pytest-xdist, `-n 2`; README "Run the tests"): pyproject's addopts choose xdist's
`--dist loadgroup`: a test is a unit of its own unless it carries `pytest.mark.xdist_group(name)`,
and the tests of one group run on one worker, one after another. The groups (test_suite_rules
checks them): SERVERS, every test that starts PostgreSQL or a Prefect server, one at a time;
REAL_HISTORY, the tests that read the session's real-history backfill (built once, by the worker
that runs them); REPLAY, the tests that read the session's day-by-day replay of the real history
(`real_history_replay`, likewise); and each module with a module-scoped fixture, named after its file, so the
fixture is built once. Each worker has its own PREFECT_HOME, so two workers never share Prefect's
SQLite database.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from storage.store import open_store

SLOW_FIXTURES = ("harness",)   # fixtures that start a Prefect test server (seconds, a subprocess)
SERVERS = "servers"            # xdist_group of the tests that start PostgreSQL or a Prefect server
REAL_HISTORY = "real-history"  # xdist_group of the tests that read the session's real-history backfill
REPLAY = "replay"              # xdist_group of the tests that read the session's day-by-day replay


def _worker() -> str | None:
    return os.environ.get("PYTEST_XDIST_WORKER")


def pytest_configure(config: pytest.Config) -> None:
    """The replay files generated from the scraper cases (tests/replay_files.py) exist before any
    test reads tests/fixtures/replay (written once, by the main process); an xdist worker gets a
    PREFECT_HOME of its own (the ephemeral server's database is a file in it); SIGINT is handled."""
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
        _build_known_snapshots(config)
    else:
        home = tempfile.mkdtemp(prefix=f"benchwatch-prefect-{_worker()}-")
        config.stash[_PREFECT_HOME] = home
        os.environ["PREFECT_HOME"] = home


_PREFECT_HOME = pytest.StashKey[str]()
_KNOWN_VIEW = pytest.StashKey[str]()
_UNKNOWN_FILES = pytest.StashKey[list]()


def _build_known_snapshots(config: pytest.Config) -> None:
    """The view of ../shared/snapshots the tests read (helpers.known_snapshots): built once, by
    the main process, before any test module imports helpers; its path is in the environment, so
    the xdist workers started after this read the same view. Nothing without ../shared."""
    import helpers
    if not helpers.REAL_SNAPSHOTS.is_dir() or os.environ.get(helpers.KNOWN_SNAPSHOTS_ENV):
        return
    view = Path(tempfile.mkdtemp(prefix="benchwatch-known-snapshots-"))
    config.stash[_KNOWN_VIEW] = str(view)
    config.stash[_UNKNOWN_FILES] = helpers.known_snapshots(helpers.REAL_SNAPSHOTS, view)
    os.environ[helpers.KNOWN_SNAPSHOTS_ENV] = str(view)
    helpers.SNAPSHOTS = view            # for this process too (helpers is imported already)


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    """Real copies the suite does not know yet: named, never failed (declare a case in the
    source's CASES to test them, as docs/contributing.md says)."""
    unknown = config.stash.get(_UNKNOWN_FILES, [])
    if unknown:
        terminalreporter.section("real snapshot files the suite does not know yet (left out of its tests)")
        for rel in unknown:
            terminalreporter.line(f"../shared/snapshots/{rel}")


def pytest_unconfigure(config: pytest.Config) -> None:
    home = config.stash.get(_PREFECT_HOME, None)
    if home:
        shutil.rmtree(home, ignore_errors=True)
    view = config.stash.get(_KNOWN_VIEW, None)
    if view:
        shutil.rmtree(view, ignore_errors=True)
        import helpers
        os.environ.pop(helpers.KNOWN_SNAPSHOTS_ENV, None)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if any(f in getattr(item, "fixturenames", ()) for f in SLOW_FIXTURES):
            item.add_marker(pytest.mark.slow)


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
    """A started fake Slack (tests/fake_slack.py) on 127.0.0.1, new for every test (so nothing a
    test scripts, a 429 or an outage, reaches the next: test_notify's fake-state pair); stopped after it."""
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


@pytest.fixture(scope="session")
def lake_pg():
    """One throwaway PostgreSQL (tests/pg.py) for the session's DuckLake and Prefect-on-PostgreSQL
    tests, which all run in the SERVERS group (one worker, one at a time): each test or module
    creates databases of its own names in it. Skipped, with the reason, without the binaries or
    the DuckLake extensions. A test that stops PostgreSQL starts its own (pg.start())."""
    import pg
    yield from pg.lake_server()


@pytest.fixture(scope="session")
def lake_store_template(lake_pg, tmp_path_factory) -> tuple[str, Path]:
    """One empty, migrated DuckLake store in `lake_pg`, created once a session (loading the
    extensions and migrating cost more than a copy); `lake_store_url` copies it. Its data
    directory is shared by the copies: DuckLake records the data path in the catalog, never
    rewrites a file, and names new files uniquely."""
    from storage import db, lake
    data = tmp_path_factory.mktemp("template-lake-data")
    name = "bw_store_template"
    url = "ducklake:postgres:" + lake_pg.create_database(name)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(lake.DATA_PATH_ENV, str(data))
        with db.connect(url):
            pass
    return name, data


@pytest.fixture
def lake_store_url(lake_pg, lake_store_template, monkeypatch, request) -> str:
    """A database holding an empty store, for a test about what a store does rather than about its
    creation: a copy of the session's template (CREATE DATABASE … TEMPLATE), with
    $BENCHWATCH_DATA_PATH set to the template's data directory."""
    from storage import lake
    template, data = lake_store_template
    # the test's name for whoever reads the cluster, made unique (PostgreSQL cuts names at 63 bytes,
    # and two parametrized ids can share their first 40 characters)
    name = ("st_" + request.node.name.lower().replace("[", "_").replace("]", "").replace("-", "_")[:40]
            + "_" + uuid.uuid4().hex[:8])
    lake_pg.psql(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    monkeypatch.setenv(lake.DATA_PATH_ENV, str(data))
    return "ducklake:postgres:" + lake_pg.conninfo(name)


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
    from jobs.analyze import analyze
    path = tmp_path_factory.mktemp("real-history-analyzed") / "history.duckdb"
    copy_db(real_history_backfilled, path)
    analyze(open_store(path), now=docs_figures().history_now(path))
    return path


@pytest.fixture
def real_history_copy(real_history_backfilled, tmp_path) -> Path:
    """A private copy of the backfilled (not analyzed) real history, for a test that writes."""
    from helpers import copy_db
    return copy_db(real_history_backfilled, tmp_path / "real.duckdb")


# --- the real snapshot history replayed day by day (docs/alert_timeline.py), once a session ---------

@dataclass
class Replay:
    """What the day-by-day replay of the real history left: each day (docs/alert_timeline.py's
    `Day`), the requests the fake Slack accepted, the database, and after each day with files the
    stored S of every table in scope "all" (`saturation`: table_id, population, s_index) and how
    the scores named each page's model (`names`: (source, model_raw, model) triples)."""

    days: list
    accepted: list
    db: Path
    saturation: dict = field(default_factory=dict)     # date -> DataFrame
    names: dict = field(default_factory=dict)          # date -> [(source, model_raw, model)]


@pytest.fixture(scope="session")
def real_history_replay(tmp_path_factory) -> Replay:
    """../shared/snapshots replayed day by day as the daily schedule sees it (backfill that day's
    files, analyze at 06:00 UTC, notify to the fake Slack: docs/alert_timeline.py's `replay`),
    built once a session and only read (tests/system/test_alert_replay.py checks the messages,
    tests/system/test_tables_real.py the stored S of each date); skipped without ../shared."""
    from alerts.slack import SlackWebhookNotifier
    from fake_slack import FakeSlack
    from helpers import SNAPSHOTS, alert_timeline, require
    from storage import db as dbm
    require(SNAPSHOTS)
    db = tmp_path_factory.mktemp("replay") / "replay.duckdb"
    replay = Replay(days=[], accepted=[], db=db)
    pool: dict[tuple, tuple] = {}          # one tuple per name triple, shared by the days

    def after(day) -> None:
        if not day.files:
            return
        with dbm.connect(db, read_only=True) as con:
            replay.saturation[day.date] = con.execute(
                "SELECT table_id, population, s_index FROM saturation_latest WHERE scope = 'all'").df()
            replay.names[day.date] = [pool.setdefault(t, t) for t in con.execute(
                "SELECT DISTINCT source, model_raw, model FROM scores").fetchall()]

    with FakeSlack() as slack:
        replay.days = alert_timeline().replay(SNAPSHOTS, db, SlackWebhookNotifier(slack.webhook_url), on_day=after)
        replay.accepted = [r for r in slack.requests if r.accepted]
    return replay

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
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

SLOW_FIXTURES = ("harness",)   # fixtures that start a Prefect test server (seconds, a subprocess)


def pytest_configure(config: pytest.Config) -> None:
    """The replay files generated from the scraper cases (tests/replay_files.py) exist before any
    test reads tests/fixtures/replay."""
    from replay_files import write
    write()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if any(f in getattr(item, "fixturenames", ()) for f in SLOW_FIXTURES):
            item.add_marker(pytest.mark.slow)


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
    with connect_synced(path):
        pass
    return path


@pytest.fixture
def synced_db(_synced_template, tmp_path) -> Path:
    """A fresh database file as the first job leaves it, copied from the session's template:
    creating one (14 migrations, the registry sync, a checkpoint) costs ~0.2 s, a copy ~1 ms.
    Tests of creating or migrating a file use a path that does not exist yet instead."""
    path = tmp_path / "bw.duckdb"
    shutil.copyfile(_synced_template, path)
    return path


# --- the real snapshot history (../shared/snapshots), built once a session ----------------------
# Several slow tests read the whole real history backfilled (and analyzed at its newest
# observation): building it once and sharing it (read-only, or a copy for a test that writes)
# saves a backfill and an analysis per module (~1 min each on 2 cores).

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
    analyze(path, now=docs_figures().history_now(path))
    return path


@pytest.fixture
def real_history_copy(real_history_backfilled, tmp_path) -> Path:
    """A private copy of the backfilled (not analyzed) real history, for a test that writes."""
    from helpers import copy_db
    return copy_db(real_history_backfilled, tmp_path / "real.duckdb")

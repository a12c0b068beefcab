"""No connection is held while a source is fetched or parsed or Slack is called: the jobs open
short connections through the store (storage/store.py), and storage keeps no instance open
between them (the registry of held instances is gone, issue 52)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

import alerts.slack
import jobs.cycle as cycle
import scrapers
from scrapers.http import ReplayFetcher
from storage import db
from storage.store import open_store

REPLAY = Path(__file__).resolve().parents[1] / "fixtures" / "replay"
# a source with a release list (its listed releases have no recorded files)
SOURCES = ["livebench"]


def open_here(path: Path) -> bool:
    """This process has a connection to the file open: DuckDB refuses a read-only instance beside
    the process's own writing one ("different configuration"), and opens one when none is open."""
    try:
        duckdb.connect(str(path), read_only=True).close()
    except duckdb.Error:
        return True
    return False


def test_the_probe_sees_an_open_connection(synced_db):
    """The check the cycle test below relies on can fail: it sees a write connection of the store."""
    store = open_store(synced_db)
    assert not open_here(synced_db)
    with store.connect() as con:
        con.execute("SELECT 1")
        assert open_here(synced_db)
    assert not open_here(synced_db)


def test_storage_keeps_no_instance_between_connections(synced_db):
    """No registry of held instances: each connection of the store is closed, with its checkpoint,
    when its block ends (nothing lost, and another process may open the file at once)."""
    store = open_store(synced_db)
    with store.connect() as con:
        con.execute("CREATE TABLE probe AS SELECT 1 AS x")
    assert not hasattr(db, "held") and not hasattr(db, "unheld")
    assert not Path(f"{synced_db}.wal").exists()
    with duckdb.connect(str(synced_db), read_only=True) as con:
        assert con.execute("SELECT x FROM probe").fetchall() == [(1,)]


def _replay_with_a_recorded_release(tmp_path: Path) -> Path:
    """The replay folder of SOURCES, with files for one more LiveBench release: fetched (and
    parsed) after collect has settled the unchanged sources."""
    folder = tmp_path / "replay"
    for name in SOURCES + ["livebench_releases"]:
        shutil.copytree(REPLAY / name, folder / name)
    for kind, ext in (("table", "csv"), ("categories", "json")):
        shutil.copyfile(folder / "livebench" / f"{kind}_2026_01_08.{ext}", folder / "livebench" / f"{kind}_2025_11_25.{ext}")
    return folder


def test_a_cycle_fetches_parses_and_notifies_with_no_database_held(synced_db, tmp_path, monkeypatch):
    """Every fetch, parse and delivery of a first and an unchanged cycle runs with no connection
    to the file open, also a release fetched after collect's settling connection."""
    seen: list[tuple[str, bool]] = []
    release_fetches: list[bool] = []

    def watch(kind, real):
        def wrapper(*args, **kwargs):
            seen.append((kind, open_here(synced_db)))
            if kind == "fetch" and "2025_11_25" in str(args[1]):
                release_fetches.append(open_here(synced_db))
            return real(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(ReplayFetcher, "fetch", watch("fetch", ReplayFetcher.fetch))
    for name in SOURCES + ["livebench_releases"]:
        cls = type(scrapers.get(name))
        monkeypatch.setattr(cls, "parse_checked", watch("parse", cls.parse_checked))
    monkeypatch.setattr(alerts.slack.ConsoleNotifier, "send", watch("send", alerts.slack.ConsoleNotifier.send))
    replay = _replay_with_a_recorded_release(tmp_path)

    first = cycle.run_cycle(open_store(synced_db), SOURCES, replay_dir=replay)
    assert first.ok and {o.status for o in first.outcomes} == {"new"}, first.text()
    assert "2 listed release(s) without recorded responses" in first.text()   # the third one was read
    assert {kind for kind, _ in seen} == {"fetch", "parse", "send"}, seen   # the baseline digest is delivered
    assert not any(held for _, held in seen), seen

    seen.clear()
    again = cycle.run_cycle(open_store(synced_db), SOURCES, replay_dir=replay)
    assert again.ok and {o.status for o in again.outcomes} == {"unchanged"}, again.text()
    assert not any(held for _, held in seen), seen
    assert release_fetches == [False, False, False, False], release_fetches   # table and categories, twice
    assert not open_here(synced_db)


@pytest.mark.parametrize("name", ["2025_11_25", ".."])
def test_replay_missing_is_what_fetch_answers(tmp_path, name):
    (tmp_path / "src").mkdir()
    url = f"https://example.org/{name}"
    fetcher = ReplayFetcher(tmp_path)
    assert fetcher.missing(url, source="src", name=name)
    assert fetcher.fetch(url, source="src", name=name).not_recorded
    (tmp_path / "src" / "here.json").write_text("{}")
    assert not fetcher.missing("https://example.org/here.json", source="src")

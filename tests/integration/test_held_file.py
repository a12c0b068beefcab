"""One DuckDB instance held open across a cycle's database steps (`storage.db.held`), and the
rule it must not break: no database is held while a source is fetched or parsed or Slack is
called (`storage.db.unheld`)."""

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

REPLAY = Path(__file__).resolve().parents[1] / "fixtures" / "replay"
# a source with a release list (its listed releases have no recorded files)
SOURCES = ["livebench"]


def opens(monkeypatch) -> list[str]:
    """Every DuckDB instance storage.db opens from now on (its path)."""
    opened: list[str] = []
    real = duckdb.connect

    def counted(database=":memory:", *args, **kwargs):
        opened.append(str(database))
        return real(database, *args, **kwargs)

    monkeypatch.setattr(db.duckdb, "connect", counted)
    return opened


def _locked_for_others(path: Path) -> bool:
    """Another process cannot open the file (this one holds its writer lock)."""
    code = f"import duckdb; duckdb.connect({str(path)!r}, read_only=True).close()"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    return done.returncode != 0 and "lock" in done.stderr.lower()


def test_held_connections_share_one_instance_until_unheld_or_the_end(synced_db, monkeypatch):
    opened = opens(monkeypatch)
    with db.held(synced_db):
        assert not db.is_held(synced_db)            # opened by the first connection, not before
        with db.connect(synced_db) as con:
            con.execute("CREATE TABLE held_probe AS SELECT 1 AS x")
        with db.connect(synced_db) as con:          # a cursor of the same instance: no second open
            assert con.execute("SELECT x FROM held_probe").fetchall() == [(1,)]
        assert opened == [str(synced_db)] and db.is_held(synced_db)
        assert _locked_for_others(synced_db)        # held between the steps: the writer lock stays
        with db.unheld():
            assert not db.is_held() and not _locked_for_others(synced_db)
            with db.connect(synced_db) as con:      # inside unheld: an instance of its own, closed after
                con.execute("INSERT INTO held_probe VALUES (2)")
            assert not db.is_held()
        with db.connect(synced_db) as con:          # reopened after unheld
            assert con.execute("SELECT count(*) FROM held_probe").fetchone() == (2,)
        assert len(opened) == 3
    assert not db.is_held()
    # closed with its checkpoint (a read-only open beside a live writing instance of this process
    # would be refused): nothing lost
    with duckdb.connect(str(synced_db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM held_probe").fetchone() == (2,)


@pytest.mark.parametrize("cap", [None, "3"])      # DuckDB's default threads, or $BENCHWATCH_THREADS
def test_each_held_connection_starts_as_a_new_instance_would(synced_db, tmp_path, monkeypatch, cap):
    if cap is None:
        monkeypatch.delenv("BENCHWATCH_THREADS", raising=False)
    else:
        monkeypatch.setenv("BENCHWATCH_THREADS", cap)
    with db.held(synced_db):
        with db.connect(synced_db) as con:
            con.execute("SET threads = 1")          # an instance-wide setting of one user …
            con.execute("SET TimeZone = 'America/New_York'")
        with db.connect(synced_db) as con:          # … is not what the next one starts with
            threads, zone = con.execute("SELECT current_setting('threads'), current_setting('TimeZone')").fetchone()
    fresh = db.open_connection(tmp_path / "fresh.duckdb")    # an instance of its own
    try:
        assert (threads, zone) == fresh.execute("SELECT current_setting('threads'), current_setting('TimeZone')").fetchone()
    finally:
        fresh.close()
    with duckdb.connect() as plain:
        assert threads == (int(cap) if cap else plain.execute("SELECT current_setting('threads')").fetchone()[0])
    assert zone == "UTC"


def test_a_read_only_open_lets_the_held_instance_go(synced_db):
    """DuckDB refuses a read-only instance beside the process's own writing one ("different
    configuration"): a read-only open (the report's) closes the held one first."""
    with db.held(synced_db):
        with db.connect(synced_db) as con:
            con.execute("CREATE TABLE ro_probe AS SELECT 7 AS x")
        assert db.is_held(synced_db)
        with db.connect(synced_db, read_only=True) as ro:
            assert ro.execute("SELECT x FROM ro_probe").fetchall() == [(7,)]
            assert not db.is_held(synced_db)
        with db.connect(synced_db) as con:
            assert con.execute("SELECT x FROM ro_probe").fetchall() == [(7,)]


def test_nested_held_blocks_are_one_and_a_lake_url_is_never_held(synced_db):
    with db.held(synced_db):
        with db.held(synced_db):
            with db.connect(synced_db):
                pass
        assert db.is_held(synced_db)                # the outer block still holds it
    assert not db.is_held()
    with db.held("ducklake:postgres:dbname=x"):
        assert not db.is_held()


def test_an_in_use_connection_is_never_closed_under_its_user(synced_db, caplog):
    with db.held(synced_db):
        with db.connect(synced_db) as con:
            with db.unheld():                       # a bug: a fetch inside an open connection
                pass
            assert con.execute("SELECT 1").fetchone() == (1,)
    assert "still in use" in caplog.text


def _replay_with_a_recorded_release(tmp_path: Path) -> Path:
    """The replay folder of SOURCES, with files for one more LiveBench release: fetched (and
    parsed) after collect has settled the unchanged sources, in the held file's connection."""
    folder = tmp_path / "replay"
    for name in SOURCES + ["livebench_releases"]:
        shutil.copytree(REPLAY / name, folder / name)
    for kind, ext in (("table", "csv"), ("categories", "json")):
        shutil.copyfile(folder / "livebench" / f"{kind}_2026_01_08.{ext}", folder / "livebench" / f"{kind}_2025_11_25.{ext}")
    return folder


def test_a_cycle_fetches_parses_and_notifies_with_no_database_held(synced_db, tmp_path, monkeypatch):
    """Every fetch, parse and delivery of a first and an unchanged cycle runs with no database
    held, also a release fetched after collect's settling connection (the one open of an
    unchanged cycle: tests/integration/test_unchanged_cycle.py)."""
    seen: list[tuple[str, bool]] = []
    release_fetches: list[bool] = []

    def watch(kind, real):
        def wrapper(*args, **kwargs):
            seen.append((kind, db.is_held()))
            if kind == "fetch" and "2025_11_25" in str(args[1]):
                release_fetches.append(db.is_held())
            return real(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(ReplayFetcher, "fetch", watch("fetch", ReplayFetcher.fetch))
    for name in SOURCES + ["livebench_releases"]:
        cls = type(scrapers.get(name))
        monkeypatch.setattr(cls, "parse_checked", watch("parse", cls.parse_checked))
    monkeypatch.setattr(alerts.slack.ConsoleNotifier, "send", watch("send", alerts.slack.ConsoleNotifier.send))
    replay = _replay_with_a_recorded_release(tmp_path)

    first = cycle.run_cycle(synced_db, SOURCES, replay_dir=replay)
    assert first.ok and {o.status for o in first.outcomes} == {"new"}, first.text()
    assert "2 listed release(s) without recorded responses" in first.text()   # the third one was read
    assert {kind for kind, _ in seen} == {"fetch", "parse", "send"}, seen   # the baseline digest is delivered
    assert not any(held for _, held in seen), seen

    seen.clear()
    again = cycle.run_cycle(synced_db, SOURCES, replay_dir=replay)
    assert again.ok and {o.status for o in again.outcomes} == {"unchanged"}, again.text()
    assert not any(held for _, held in seen), seen
    assert release_fetches == [False, False, False, False], release_fetches   # table and categories, twice
    assert not db.is_held()
    duckdb.connect(str(synced_db), read_only=True).close()    # refused beside a live writing instance


@pytest.mark.parametrize("name", ["2025_11_25", ".."])
def test_replay_missing_is_what_fetch_answers(tmp_path, name):
    (tmp_path / "src").mkdir()
    url = f"https://example.org/{name}"
    fetcher = ReplayFetcher(tmp_path)
    assert fetcher.missing(url, source="src", name=name)
    assert fetcher.fetch(url, source="src", name=name).not_recorded
    (tmp_path / "src" / "here.json").write_text("{}")
    assert not fetcher.missing("https://example.org/here.json", source="src")

"""Collection: live HTTP against a loopback server, replay, failures kept, re-parse after a fix."""

from __future__ import annotations

import shutil
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

import scrapers
from cli.main import main
from jobs.collect import collect, collect_source
from jobs.ingest import reparse
from jobs.collect import collect_source as collect_one
from scrapers.base import ScrapeError
from scrapers.http import Fetcher
from storage.query import run_query
from helpers import LIVEBENCH_CURRENT, file_site, lane, livebench_files, point_livebench_at
from test_http import ScriptedServer, etagged
from storage.store import open_store

FIX = Path(__file__).resolve().parents[1] / "fixtures"
REPLAY_DIR = FIX / "replay"


def swebench_fixture() -> bytes:
    files = sorted((FIX / "swebench").glob("*.json"))
    assert files, "swebench fixtures missing"
    return files[-1].read_bytes()


class Board:
    """What the loopback server answers for /data/leaderboards.json (mutable per test)."""

    def __init__(self):
        self.body = b""
        self.status = 200
        self.etag = '"v1"'
        self.requests = []


@pytest.fixture()
def server():
    board = Board()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            board.requests.append(dict(self.headers))
            if board.status != 200:
                self.send_response(board.status)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if self.headers.get("If-None-Match") == board.etag:
                self.send_response(304)
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("ETag", board.etag)
            self.send_header("Content-Length", str(len(board.body)))
            self.end_headers()
            self.wfile.write(board.body)

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True)   # stops within 20 ms
    thread.start()
    board.url = f"http://127.0.0.1:{httpd.server_address[1]}/data/leaderboards.json"
    yield board
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(autouse=True)
def small_fixture_floors(monkeypatch):
    """Fixtures hold a few real rows; production row floors are tested in the scraper tests."""
    for name in ("swebench", "aider_polyglot"):
        monkeypatch.setattr(type(scrapers.get(name)), "min_rows", 1)


@pytest.fixture()
def swebench_at(server, monkeypatch):
    cls = type(scrapers.get("swebench"))
    monkeypatch.setattr(cls, "urls", (server.url,))
    return server


def fast_fetcher() -> Fetcher:
    return Fetcher(max_attempts=2, backoff_base=0.0, politeness_delay=0.0, sleep=lambda s: None)


def test_live_collect_new_then_not_modified_then_failing(synced_db, tmp_path, swebench_at):
    db = synced_db
    swebench_at.body = swebench_fixture()
    first = collect_source(open_store(db), "swebench", run_id="r1", fetcher=fast_fetcher())
    assert first.status == "new" and first.counts["scores"] > 0
    # second run sends the ETag and gets 304: unchanged, nothing added
    second = collect_source(open_store(db), "swebench", run_id="r2", fetcher=fast_fetcher())
    assert second.status == "unchanged" and "304" in second.detail
    assert swebench_at.requests[-1].get("If-None-Match") == '"v1"'
    # the server breaks: failed with the reason, other tables untouched
    swebench_at.status = 503
    third = collect_source(open_store(db), "swebench", run_id="r3", fetcher=fast_fetcher())
    assert third.status == "failed" and "503" in third.detail
    fetches = run_query("SELECT run_id, status, http_status FROM fetches ORDER BY id", open_store(db))
    assert list(fetches["status"]) == ["ok", "not_modified", "error", "error"]
    assert list(fetches["run_id"]) == ["r1", "r2", "r3", "r3"]          # every attempt recorded
    assert run_query("SELECT count(*) n FROM snapshots", open_store(db))["n"][0] == 1


def test_parse_failure_keeps_raw_bytes_and_reparse_recovers(synced_db, tmp_path, swebench_at, monkeypatch):
    db = synced_db
    swebench_at.body = swebench_fixture()
    cls = type(scrapers.get("swebench"))
    good_parse = cls.parse

    def broken(self, content, **kw):
        raise ScrapeError("swebench", "layout changed: no 'leaderboards' key")

    monkeypatch.setattr(cls, "parse", broken)
    out = collect_source(open_store(db), "swebench", run_id="r1", fetcher=fast_fetcher())
    assert out.status == "failed" and "layout changed" in out.detail and "kept" in out.detail
    assert run_query("SELECT count(*) n FROM snapshots", open_store(db))["n"][0] == 0
    kept = run_query("SELECT status, error, sha256 FROM fetches", open_store(db))
    assert kept["status"][0] == "parse_error" and "layout changed" in kept["error"][0]
    assert run_query("SELECT count(*) n FROM blobs", open_store(db))["n"][0] == 1

    monkeypatch.setattr(cls, "parse", good_parse)       # the parser is fixed: no refetch needed
    swebench_at.status = 500
    outcomes = reparse(open_store(db))
    assert [o.status for o in outcomes] == ["new"]
    assert run_query("SELECT origin FROM snapshots", open_store(db))["origin"][0] == "reparse"
    assert [o.status for o in reparse(open_store(db))] == ["unchanged"]   # idempotent


def test_replay_collects_every_recorded_source_and_reports_the_missing(synced_db, tmp_path):
    replay = tmp_path / "replay"
    (replay / "swebench").mkdir(parents=True)
    (replay / "swebench" / "leaderboards.json").write_bytes(swebench_fixture())
    (replay / "aider_polyglot").mkdir()
    shutil.copy(next((FIX / "aider_polyglot").glob("*.yml")), replay / "aider_polyglot" / "polyglot_leaderboard.yml")
    db = synced_db
    outcomes = {o.source: o for o in collect(open_store(db), ["swebench", "aider_polyglot", "bfcl"], replay_dir=replay, run_id="x")}
    assert outcomes["swebench"].status == "new"
    assert outcomes["aider_polyglot"].status == "new"
    assert outcomes["bfcl"].status == "failed" and "no recorded response" in outcomes["bfcl"].detail
    again = {o.source: o.status for o in collect(open_store(db), ["swebench", "aider_polyglot"], replay_dir=replay)}
    assert again == {"swebench": "unchanged", "aider_polyglot": "unchanged"}
    origins = run_query("SELECT DISTINCT origin FROM snapshots", open_store(db))["origin"].tolist()
    assert origins == ["replay"]


def test_run_collect_only_without_prefect_reports_per_source(synced_db, tmp_path, capsys):
    replay = tmp_path / "replay"
    (replay / "swebench").mkdir(parents=True)
    (replay / "swebench" / "leaderboards.json").write_bytes(swebench_fixture())
    db = synced_db
    code = main(["run", "--no-prefect", "--collect-only", "--replay", str(replay), "--sources", "swebench,bfcl",
                 "--db", str(db)])
    out = capsys.readouterr().out
    assert code == 0
    assert "swebench" in out and "new" in out
    assert "bfcl" in out and "failed" in out
    with pytest.raises(SystemExit) as exit_:
        main(["run", "--sources", "nope", "--db", str(db)])
    assert exit_.value.code == 2
    assert "unknown source(s) nope; known: csv, swebench" in capsys.readouterr().err


def test_offline_sources_fail_fast_and_the_report_says_offline(tmp_path):
    import requests
    from test_http import _UnresolvableAdapter
    from jobs.cycle import CycleReport
    session = requests.Session()
    session.mount("https://", _UnresolvableAdapter())
    fetcher = Fetcher(session=session, politeness_delay=0.0, sleep=lambda s: None)
    outcomes = [collect_source(open_store(tmp_path / "bw.duckdb"), name, fetcher=fetcher) for name in ("swebench", "bfcl")]
    assert all(o.status == "failed" and o.unreachable and o.offline for o in outcomes)
    assert "looks offline" in CycleReport(outcomes).text()
    assert run_query("SELECT count(*) n FROM fetches WHERE status = 'error'", open_store(tmp_path / "bw.duckdb"))["n"][0] == 2
    # with every source enabled, one whose key is not configured is skipped: still offline, still the hint
    skipped = collect_source(open_store(tmp_path / "bw.duckdb"), "artificial_analysis", fetcher=fetcher, secrets={})
    assert skipped.status == "skipped"
    assert "looks offline" in CycleReport([*outcomes, skipped]).text()


def source_failures(db, source: str) -> int:
    from storage.rule_inputs import read_source_health
    from storage.db import connect
    with connect(db) as con:
        health = read_source_health(con)
    row = health[health["source"] == source]
    return int(row["consecutive_failures"].iloc[0]) if len(row) else 0


@pytest.fixture()
def tau2_bucket(monkeypatch):
    """A loopback copy of the τ²-bench bucket: manifest.json and <dir>/submission.json from the
    fixtures; the manifest lists one directory that does not exist (404), as the real 2025-10-03 one did."""
    files = {"/submissions/manifest.json": (FIX / "tau2_bench" / "manifest_2026-07-01.json").read_bytes()}
    for p in (FIX / "tau2_bench").glob("sub_*.json"):
        files[f"/submissions/{p.stem[len('sub_'):]}/submission.json"] = p.read_bytes()
    import scrapers.tau2_bench as tau
    with file_site(files) as (site, seen):
        base = f"{site}/submissions"
        monkeypatch.setattr(tau, "BASE", base)
        monkeypatch.setattr(tau.Tau2BenchScraper, "urls", (f"{base}/manifest.json",))
        yield seen


def test_discovered_submissions_are_fetched_and_a_missing_one_is_a_warning(new_synced_db, tmp_path, tau2_bucket, monkeypatch):
    """τ²-bench: the manifest names the submissions (`Scraper.discover`); each is fetched under its
    own name; a listed one that 404s is recorded and skipped with one warning, not a failure; a
    parse failure keeps every response for `reparse` (issue 21)."""
    db = new_synced_db("bw.duckdb")
    first = collect_source(open_store(db), "tau2_bench", run_id="r1", fetcher=fast_fetcher())
    assert first.status == "new" and first.counts["scores"] == 39, first
    assert "/submissions/gemini-2-5-flash_google_2025-02-01/submission.json" in tau2_bucket
    fetches = run_query("SELECT status, http_status, url FROM fetches WHERE run_id = 'r1' ORDER BY id", open_store(db))
    assert fetches["status"].tolist().count("ok") == 6
    assert fetches[fetches["status"] == "missing"]["http_status"].tolist() == [404]
    assert source_failures(db, "tau2_bench") == 0        # a listed file the server lacks: no failed run
    warnings = run_query("SELECT warnings FROM snapshots", open_store(db))["warnings"][0]
    assert "gemini-2-5-flash_google_2025-02-01" in str(warnings)
    again = collect_source(open_store(db), "tau2_bench", run_id="r2", fetcher=fast_fetcher())
    assert again.status == "unchanged"

    cls = scrapers.get("tau2_bench").__class__
    good = cls.parse
    monkeypatch.setattr(cls, "parse", lambda self, content, **kw: (_ for _ in ()).throw(ScrapeError("tau2_bench", "x")))
    db2 = new_synced_db("bw2.duckdb")
    assert collect_source(open_store(db2), "tau2_bench", run_id="r1", fetcher=fast_fetcher()).status == "failed"
    monkeypatch.setattr(cls, "parse", good)
    outcomes = reparse(open_store(db2))
    assert [o.status for o in outcomes] == ["new"]
    assert run_query("SELECT count(*) n FROM scores", open_store(db2))["n"][0] == 39    # every submission found again


@pytest.fixture()
def livebench_site(monkeypatch):
    """A loopback LiveBench: the current release's files, an older release found only through the
    changelog, and a release the changelog lists whose table is never published (404)."""
    changelog = b"## Changelog\n\n### 2026-06-25\nannounced\n\n### 2024-11-25\nrefresh\n\n### 2025-04-0\ntruncated\n"
    files = {"/changelog.md": changelog,
             **livebench_files(*LIVEBENCH_CURRENT, "table_2024_11_25.csv", "categories_2024_11_25.json")}
    with file_site(files) as (base, seen):
        point_livebench_at(monkeypatch, base)
        yield seen


# the fast lane keeps `collect`, the path a cycle takes (collect_source: the same discovery, one source)
@pytest.mark.parametrize("whole", lane([False, True], (True,)), ids=["collect_source", "collect"])
def test_release_discovery_fetches_unstored_releases_and_gives_up_on_unpublished(synced_db, tmp_path, livebench_site, whole,
                                                                                   monkeypatch):
    """LiveBench: each cycle reads the changelog; a listed release not stored is fetched and stored
    as its own table (table_version = release); a release whose table 404s is reported, tried in
    RELEASE_MAX_MISSES collections, then no more (issue 21). The same through `collect`, which
    settles an unchanged changelog with the sources and reads its releases from the store."""
    from jobs.collect import RELEASE_MAX_MISSES

    # `collect` builds its own Fetcher: the fast one here too (no politeness waits on 127.0.0.1)
    monkeypatch.setattr("jobs.collect.Fetcher", fast_fetcher)

    def collect_source(store, source, *, run_id, fetcher):   # noqa: F811 - the path under test
        if whole:
            return collect(store, [source], run_id=run_id)[0]
        return collect_one(store, source, run_id=run_id, fetcher=fetcher)

    db = synced_db
    first = collect_source(open_store(db), "livebench", run_id="r1", fetcher=fast_fetcher())
    assert first.status == "new"
    assert "release 2024_11_25: new" in first.detail
    assert f"release 2026_06_25: listed, no table published (HTTP 404, 1/{RELEASE_MAX_MISSES})" in first.detail
    versions = run_query("SELECT DISTINCT table_version FROM scores WHERE source = 'livebench' ORDER BY 1", open_store(db))
    assert versions["table_version"].tolist() == ["2024-11-25", "2026-01-08"]
    assert run_query("SELECT status FROM snapshots WHERE source = 'livebench'", open_store(db))["status"].tolist() == ["ok", "ok"]
    assert run_query("SELECT count(*) n FROM snapshots WHERE source = 'livebench_releases'", open_store(db))["n"][0] == 1
    for i in range(2, RELEASE_MAX_MISSES + 1):
        out = collect_source(open_store(db), "livebench", run_id=f"r{i}", fetcher=fast_fetcher())
        assert out.status == "unchanged" and "release 2024_11_25" not in out.detail   # stored: not fetched again
    assert "not tried again" in out.detail
    assert source_failures(db, "livebench") == 0           # an unpublished release is no failing source
    livebench_site.clear()
    last = collect_source(open_store(db), "livebench", run_id="rz", fetcher=fast_fetcher())
    assert "/table_2026_06_25.csv" not in livebench_site           # no longer fetched
    assert "1 listed release(s) never published a table, not tried again: 2026_06_25" in last.detail
    assert last.status == "unchanged"


def test_release_discovery_under_replay_reports_unrecorded_releases_once(synced_db, tmp_path):
    """--replay: a listed release with no recorded files is one line, not a fetch failure, and
    nothing is recorded for it (issue 21)."""
    db = synced_db
    out = collect(open_store(db), ["livebench"], replay_dir=REPLAY_DIR, run_id="x")[0]
    assert out.status == "new"
    assert out.detail.count("without recorded responses") == 1
    assert "2025_11_25" in out.detail
    errors = run_query("SELECT count(*) n FROM fetches WHERE status = 'error'", open_store(db))["n"][0]
    assert errors == 0
    again = collect(open_store(db), ["livebench"], replay_dir=REPLAY_DIR, run_id="y")[0]    # unchanged: the same line
    assert again.status == "unchanged" and again.detail.count("without recorded responses") == 1
    assert "2025_11_25" in again.detail
    assert run_query("SELECT count(*) n FROM fetches WHERE run_id = 'y' AND source = 'livebench_releases'",
                     open_store(db))["n"][0] == 1


@pytest.fixture()
def two_boards(monkeypatch):
    """SWE-bench and Aider's polyglot board on one loopback server, each with its own ETag."""
    s = ScriptedServer()
    s.thread.start()
    monkeypatch.setattr(type(scrapers.get("swebench")), "urls",
                        (s.on("/swebench.json", etagged(swebench_fixture(), '"swe-1"')),))
    monkeypatch.setattr(type(scrapers.get("aider_polyglot")), "urls",
                        (s.on("/polyglot.yml", etagged(next((FIX / "aider_polyglot").glob("*.yml")).read_bytes(),
                                                       '"aider-1"')),))
    monkeypatch.setattr("jobs.collect.Fetcher", fast_fetcher)
    yield s
    s.httpd.shutdown()
    s.httpd.server_close()


def test_a_live_collect_sends_each_source_its_own_stored_validator(synced_db, two_boards):
    """The validators of every source are read in one statement (storage.reads.previous_validators):
    each source's conditional GET carries its own primary URL's last ETag, and both are unchanged."""
    def validators() -> list[tuple[str, str | None]]:
        return sorted((path, headers.get("If-None-Match")) for path, headers, _ in two_boards.requests)

    first = {o.source: o.status for o in collect(open_store(synced_db), ["swebench", "aider_polyglot"], run_id="r1")}
    assert first == {"swebench": "new", "aider_polyglot": "new"}
    assert validators() == [("/polyglot.yml", None), ("/swebench.json", None)]
    two_boards.requests.clear()
    second = {o.source: o.status for o in collect(open_store(synced_db), ["swebench", "aider_polyglot"], run_id="r2")}
    assert second == {"swebench": "unchanged", "aider_polyglot": "unchanged"}
    assert validators() == [("/polyglot.yml", '"aider-1"'), ("/swebench.json", '"swe-1"')]


def test_previous_validators_are_the_newest_stored_response_of_each_primary(synced_db):
    from storage import db as storage_db
    from storage.reads import previous_validators
    rows = [  # source, url, started_at (hours), status, sha256, etag, last_modified
        ("a", "u/a", 1, "ok", "s1", '"a1"', None), ("a", "u/a", 2, "ok", "s2", '"a2"', "Mon"),
        ("a", "u/a", 3, "error", None, None, None), ("a", "u/a", 4, "ok", None, '"not stored"', None),
        ("a", "u/aux", 5, "ok", "s3", '"aux"', None),            # an aux URL: never a validator
        ("b", "u/b", 1, "ok", "s4", None, None),                  # stored, but no validator
        ("c", "u/c", 1, "not_modified", None, '"c"', None)]       # nothing stored from it
    with storage_db.connect(synced_db) as con:
        con.executemany("""INSERT INTO fetches (source, url, started_at, status, sha256, etag, last_modified)
                           VALUES (?, ?, TIMESTAMPTZ '2026-01-01 00:00:00+00' + to_hours(?), ?, ?, ?, ?)""",
                        [list(r) for r in rows])
        got = previous_validators(con, {"a": "u/a", "b": "u/b", "c": "u/c", "d": "u/d"})
        assert previous_validators(con, {}) == {}
    assert got == {"a": {"u/a": ('"a2"', "Mon")}, "b": {}, "c": {}, "d": {}}

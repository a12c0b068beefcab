"""Secrets a source needs (issue 22: one resolver in flows, values handed down): the Artificial
Analysis API key. Without a key the source is skipped in one line, never failed; with one, the
key goes out as the source's header to a real HTTP server on 127.0.0.1 and is stored nowhere."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

import scrapers
from common import redact
from jobs.collect import SourceOutcome, collect, collect_source
from jobs.cycle import CycleReport
from scrapers.http import Fetcher
from storage.query import run_query
from storage.store import open_store

FIX = Path(__file__).resolve().parents[1] / "fixtures"
KEY = "aa-test-key-0123456789abcdef"


def test_environment_first_then_the_secret_block_and_nothing_when_neither():
    from flows.secrets import resolve_secrets
    asked: list[str] = []

    def blocks(name: str) -> str | None:
        asked.append(name)
        return {"artificial-analysis-api-key": "from-block"}.get(name)

    wanted = {"ARTIFICIAL_ANALYSIS_API_KEY": "artificial-analysis-api-key"}
    assert resolve_secrets(wanted, env={"ARTIFICIAL_ANALYSIS_API_KEY": " from-env "}, block_lookup=blocks) == \
        {"ARTIFICIAL_ANALYSIS_API_KEY": "from-env"}
    assert asked == []                       # the environment wins: no block is read
    assert resolve_secrets(wanted, env={}, block_lookup=blocks) == {"ARTIFICIAL_ANALYSIS_API_KEY": "from-block"}
    assert resolve_secrets(wanted, env={}, block_lookup=lambda name: None) == {}
    assert "from-block" not in redact.redact("the key is from-block")   # registered: redacted wherever it shows


def test_source_secrets_reads_what_the_sources_declare():
    from flows.secrets import source_secrets
    env = {"ARTIFICIAL_ANALYSIS_API_KEY": KEY}
    assert source_secrets(["artificial_analysis", "swebench"], env=env, block_lookup=lambda n: None) == \
        {"ARTIFICIAL_ANALYSIS_API_KEY": KEY}
    assert source_secrets(["swebench", "no_such_source"], env=env, block_lookup=lambda n: None) == {}


def test_without_a_key_the_live_source_is_skipped_in_one_line_and_the_run_is_not_failed(synced_db, tmp_path):
    db = synced_db
    out = collect(open_store(db), ["artificial_analysis"], secrets={})
    assert [o.status for o in out] == ["skipped"]
    assert "ARTIFICIAL_ANALYSIS_API_KEY" in out[0].detail and "\n" not in out[0].detail
    assert CycleReport(out).ok
    assert not CycleReport(out + [SourceOutcome("swebench", "failed", "HTTP 503")]).ok
    one = collect_source(open_store(db), "artificial_analysis", secrets=None)
    assert one.status == "skipped"
    assert run_query("SELECT count(*) n FROM fetches", open_store(db))["n"][0] == 0      # nothing was fetched


def test_a_replay_needs_no_key(synced_db, tmp_path):
    out = collect(open_store(synced_db), ["artificial_analysis"], replay_dir=FIX / "replay", secrets={})
    assert [o.status for o in out] == ["new"], out[0].detail


@pytest.fixture()
def api(monkeypatch):
    seen: list[dict] = []
    body = (FIX / "replay" / "artificial_analysis" / "models").read_bytes()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            seen.append(dict(self.headers))
            if self.headers.get("x-api-key") != KEY:
                self.send_response(401)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    cls = type(scrapers.get("artificial_analysis"))
    monkeypatch.setattr(cls, "urls", (f"http://127.0.0.1:{httpd.server_address[1]}/api/v2/data/llms/models",))
    yield seen
    httpd.shutdown()
    httpd.server_close()


def test_with_a_key_the_header_is_sent_and_the_key_stored_nowhere(synced_db, tmp_path, api, caplog):
    db = synced_db
    fetcher = Fetcher(max_attempts=1, backoff_base=0.0, politeness_delay=0.0, sleep=lambda s: None)
    out = collect_source(open_store(db), "artificial_analysis", fetcher=fetcher, secrets={"ARTIFICIAL_ANALYSIS_API_KEY": KEY})
    assert out.status == "new", out.detail
    assert api[-1].get("x-api-key") == KEY
    stored = run_query("SELECT url, coalesce(error, '') e FROM fetches", open_store(db))
    assert not any(KEY in u or KEY in e for u, e in zip(stored.url, stored.e))
    assert KEY not in caplog.text
    wrong = collect_source(open_store(db), "artificial_analysis", fetcher=fetcher,
                           secrets={"ARTIFICIAL_ANALYSIS_API_KEY": "not-the-key"})
    assert wrong.status == "failed" and "401" in wrong.detail


# --- issue 24: a lake's PostgreSQL password never becomes a flow parameter ------------------------

def test_split_conninfo_password_keeps_everything_but_the_password():
    from common.redact import split_conninfo_password as split
    pw = "Pw-0a1b2c3d"
    cases = {
        f"ducklake:postgres:dbname=x password={pw} host=h": "ducklake:postgres:dbname=x host=h",
        f"ducklake:postgres:password={pw} dbname=x": "ducklake:postgres:dbname=x",
        f"ducklake:postgres:dbname=x PASSWORD = '{pw} \\' q' host=h": "ducklake:postgres:dbname=x host=h",
        f"ducklake:postgres:postgresql://bw:{pw}@h:5432/db": "ducklake:postgres:postgresql://bw@h:5432/db",
        f"ducklake:postgres:postgresql://bw@h/db?password={pw}&sslmode=require":
            "ducklake:postgres:postgresql://bw@h/db?sslmode=require",
        f"ducklake:postgres:postgresql://bw@h/db?sslmode=require&password={pw}":
            "ducklake:postgres:postgresql://bw@h/db?sslmode=require",
    }
    for text, without in cases.items():
        rest, password = split(text)
        assert rest == without and password is not None and password.startswith(pw), (text, rest, password)
    assert split("ducklake:postgres:postgresql://bw:P%40ss-word@h/db")[1] == "P@ss-word"
    for unchanged in ("ducklake:postgres:dbname=x host=h user=u", "ducklake:postgres:postgresql://bw@h:5432/db",
                      "/var/lib/bw.duckdb"):
        assert split(unchanged) == (unchanged, None)


def test_run_moves_a_lake_password_into_pgpassword_and_leaves_a_file_path_alone():
    from flows.secrets import PG_PASSWORD_ENV, db_password, password_to_environment
    env: dict[str, str] = {}
    url = "ducklake:postgres:postgresql://bw:Pw-5e6f7a8b@h:5432/db"
    assert password_to_environment(url, env=env) == "ducklake:postgres:postgresql://bw@h:5432/db"
    assert env == {PG_PASSWORD_ENV: "Pw-5e6f7a8b"}
    assert db_password(url) == "Pw-5e6f7a8b" and db_password("ducklake:postgres:dbname=x") is None
    env2: dict[str, str] = {}
    assert password_to_environment("/data/password=odd.duckdb", env=env2) == "/data/password=odd.duckdb"
    assert env2 == {} and db_password("/data/password=odd.duckdb") is None


def test_a_flow_run_on_a_lake_takes_the_password_from_its_secret_block_when_the_environment_has_none():
    from common.redact import redact
    from flows.secrets import PG_PASSWORD_BLOCK, PG_PASSWORD_ENV, lake_password_from_block
    blocks = {PG_PASSWORD_BLOCK: "Pw-block-9f8e7d6c"}
    env: dict[str, str] = {}
    lake_password_from_block("ducklake:postgres:dbname=x host=h user=u", env=env, block_lookup=blocks.get)
    assert env == {PG_PASSWORD_ENV: "Pw-block-9f8e7d6c"} and "Pw-block-9f8e7d6c" not in redact("x Pw-block-9f8e7d6c")
    kept = {PG_PASSWORD_ENV: "from-the-worker"}             # the worker's own setting wins
    lake_password_from_block("ducklake:postgres:dbname=x", env=kept, block_lookup=blocks.get)
    assert kept == {PG_PASSWORD_ENV: "from-the-worker"}
    untouched: dict[str, str] = {}                           # a DuckDB file needs no password
    lake_password_from_block("/data/bw.duckdb", env=untouched, block_lookup=blocks.get)
    assert untouched == {}

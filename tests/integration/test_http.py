"""scrapers.http against a scripted HTTP server on 127.0.0.1 (no internet), and replay from a temp dir."""

from __future__ import annotations

import gzip
import hashlib
import importlib.metadata
import socket
import threading
import time
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

import pytest
import requests
import urllib3

from scrapers.base import Scraper, ScrapeError
from scrapers.csv import CsvScraper
from scrapers.http import (CHUNK_SIZE, default_user_agent, Fetcher, ReplayFetcher, fetch_source, parse_retry_after,
                           FileRefused, read_capped, redact_url)
from storage.store import open_store

Handler = Callable[[BaseHTTPRequestHandler], None]


# --- scripted server -----------------------------------------------------------------------
def reply(status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> Handler:
    def handle(h: BaseHTTPRequestHandler) -> None:
        h.send_response(status)
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        if "Content-Length" not in (headers or {}) and status != 304:
            h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)
    return handle


def etagged(body: bytes, etag: str, headers: dict[str, str] | None = None) -> Handler:
    """A resource that answers a conditional GET carrying its current ETag with 304 (and the
    ETag), any other GET with the body, its ETag and `headers`."""
    def handle(h: BaseHTTPRequestHandler) -> None:
        if h.headers.get("If-None-Match") == etag:
            reply(304, headers={"ETag": etag})(h)
        else:
            reply(200, body, {"ETag": etag, **(headers or {})})(h)
    return handle


def slow(seconds: float, then: Handler) -> Handler:
    def handle(h: BaseHTTPRequestHandler) -> None:
        time.sleep(seconds)
        then(h)
    return handle


def truncated(declared: int, sent: int) -> Handler:
    """Promise `declared` bytes, send `sent`, then close the connection."""
    return reply(200, b"x" * sent, {"Content-Length": str(declared)})


def endless(total: int) -> Handler:
    """A close-delimited body (no Content-Length) of `total` bytes, written in chunks."""
    def handle(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.end_headers()
        for _ in range(total // CHUNK_SIZE):
            h.wfile.write(b"7" * CHUNK_SIZE)
    return handle


class ScriptedServer:
    """Per path, a list of handlers used in order (the last one repeats); records every request."""

    def __init__(self) -> None:
        self.scripts: dict[str, list[Handler]] = {}
        self.requests: list[tuple[str, dict[str, str], float]] = []   # (path with query, headers, monotonic time)
        server = self

        class H(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.requests.append((self.path, dict(self.headers), time.monotonic()))
                script = server.scripts.get(self.path.split("?", 1)[0])
                if not script:
                    reply(404, b"not found")(self)
                    return
                (script.pop(0) if len(script) > 1 else script[0])(self)

            def log_message(self, *args: object) -> None:
                pass

        class S(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: object, client_address: object) -> None:
                pass   # clients that hang up early (timeouts, size cap) are part of the tests

        self.httpd = S(("127.0.0.1", 0), H)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)

    def on(self, path: str, *handlers: Handler) -> str:
        self.scripts[path] = list(handlers)
        return self.url(path)

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def hits(self, path: str) -> list[dict[str, str]]:
        return [h for p, h, _ in self.requests if p.split("?", 1)[0] == path]


@pytest.fixture()
def server():
    s = ScriptedServer()
    s.thread.start()
    yield s
    s.httpd.shutdown()
    s.httpd.server_close()


class Sleeps(list):
    """An injected `sleep` that records the requested delays and returns at once."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def fetcher(**kw) -> tuple[Fetcher, Sleeps]:
    sleeps = Sleeps()
    kw.setdefault("politeness_delay", 0.0)
    kw.setdefault("backoff_base", 0.01)
    kw.setdefault("jitter", lambda: 0.5)      # backoff factor (0.5 + 0.5) = 1: delays are exact
    return Fetcher(sleep=sleeps, **kw), sleeps


# --- success, conditional GET ------------------------------------------------------------------
def test_200_returns_content_hash_validators_and_one_attempt(server):
    body = b'{"leaderboards": []}'
    url = server.on("/data/leaderboards.json",
                    reply(200, body, {"ETag": '"abc"', "Last-Modified": "Wed, 01 Jan 2025 00:00:00 GMT"}))
    f, sleeps = fetcher()
    r = f.fetch(url, source="swebench")
    assert r.status == "ok" and r.ok and r.http_status == 200 and r.error is None
    assert r.content == body
    assert r.sha256 == hashlib.sha256(body).hexdigest()
    assert r.file_name == "leaderboards.json"
    assert (r.etag, r.last_modified) == ('"abc"', "Wed, 01 Jan 2025 00:00:00 GMT")
    assert r.started_at.tzinfo is timezone.utc and r.started_at <= r.finished_at
    [a] = r.attempts
    assert (a.url, a.http_status, a.bytes, a.status, a.error) == (url, 200, len(body), "ok", None)
    assert sleeps == []
    assert server.hits("/data/leaderboards.json")[0]["User-Agent"] == default_user_agent()


def test_user_agent_names_project_version_and_operator_contact(monkeypatch):
    monkeypatch.delenv("BENCHWATCH_CONTACT", raising=False)
    assert default_user_agent() == f"benchwatch/{importlib.metadata.version('benchwatch')} (leaderboard monitor)"
    # read when a fetcher is made, not when the module was imported
    monkeypatch.setenv("BENCHWATCH_CONTACT", "ops@example.org")
    assert default_user_agent().endswith("(leaderboard monitor; +ops@example.org)")
    with Fetcher() as fetcher:
        assert fetcher.session.headers["User-Agent"] == default_user_agent()


def test_conditional_get_304_is_not_modified(server):
    url = server.on("/table.csv", etagged(b"a,b\n1,2\n", '"v1"', {"Last-Modified": "Tue, 02 Sep 2025 10:00:00 GMT"}))
    f, _ = fetcher()
    first = f.fetch(url, source="bfcl")
    assert first.status == "ok" and first.etag == '"v1"'
    second = f.fetch(url, source="bfcl", etag=first.etag, last_modified=first.last_modified)
    assert second.status == "not_modified" and second.http_status == 304
    assert second.content is None and second.sha256 is None and second.error is None
    assert (second.etag, second.last_modified) == ('"v1"', "Tue, 02 Sep 2025 10:00:00 GMT")
    assert [a.status for a in second.attempts] == ["not_modified"]
    sent = server.hits("/table.csv")[1]
    assert sent["If-None-Match"] == '"v1"' and sent["If-Modified-Since"] == "Tue, 02 Sep 2025 10:00:00 GMT"
    assert "If-None-Match" not in server.hits("/table.csv")[0]


def test_304_to_an_unconditional_request_is_an_error(server):
    url = server.on("/odd.json", reply(304))
    r = fetcher()[0].fetch(url, source="t")
    assert r.status == "error" and "not conditional" in r.error and len(r.attempts) == 1


# --- retries -----------------------------------------------------------------------------------
def test_429_then_200_honours_retry_after(server):
    url = server.on("/limited.json", reply(429, b"slow down", {"Retry-After": "2"}), reply(200, b"[1]"))
    f, sleeps = fetcher()
    r = f.fetch(url, source="lmarena")
    assert r.status == "ok" and r.content == b"[1]"
    assert sleeps == [2.0]
    assert [(a.http_status, a.status) for a in r.attempts] == [(429, "error"), (200, "ok")]
    assert r.attempts[0].error.startswith("HTTP 429")


def test_retry_after_beyond_the_budget_stops_at_once(server):
    url = server.on("/limited.json", reply(503, headers={"Retry-After": "3600"}))
    f, sleeps = fetcher(max_total_wait=10)
    r = f.fetch(url, source="lmarena")
    assert r.status == "error" and r.http_status == 503 and sleeps == []
    assert "3600" in r.error and "budget" in r.error and url in r.error
    assert len(server.hits("/limited.json")) == 1


def test_parse_retry_after_seconds_and_http_date():
    now = datetime(2015, 10, 21, 7, 27, 30, tzinfo=timezone.utc)
    assert parse_retry_after("120", now) == 120.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now) == 30.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:00:00 GMT", now) == 0.0   # in the past: retry now
    assert parse_retry_after("soon", now) is None
    assert parse_retry_after(None, now) is None


def test_persistent_500_records_every_attempt_with_exponential_backoff(server):
    url = server.on("/boom.json", reply(500, b"<h1>oops</h1>"))
    f, sleeps = fetcher(max_attempts=3)
    r = f.fetch(url, source="evalplus")
    assert r.status == "error" and r.http_status == 500 and r.content is None
    assert sleeps == [0.01, 0.02]
    assert [(a.http_status, a.status) for a in r.attempts] == [(500, "error")] * 3
    assert len(server.hits("/boom.json")) == 3
    assert r.error == f"GET {url} failed after 3 attempts: HTTP 500 Internal Server Error"
    assert "\n" not in r.error


def test_backoff_is_capped_and_the_total_wait_budget_stops_retries(server):
    url = server.on("/boom.json", reply(502))
    f, sleeps = fetcher(max_attempts=4, backoff_base=1.0, backoff_max=1.5, max_total_wait=100)
    assert f.fetch(url, source="t").status == "error"
    assert sleeps == [1.0, 1.5, 1.5]                      # 1, 2 -> 1.5, 4 -> 1.5
    budget, sleeps2 = fetcher(max_attempts=4, backoff_base=1.0, max_total_wait=2.5)
    r = budget.fetch(url, source="t")
    assert sleeps2 == [1.0]                               # the next (2 s) would exceed the 1.5 s left
    assert len(r.attempts) == 2 and "retry budget of 2.5 s used up" in r.error


def test_jitter_spreads_the_backoff():
    low = Fetcher(backoff_base=1.0, jitter=lambda: 0.0)
    high = Fetcher(backoff_base=1.0, jitter=lambda: 0.999)
    from scrapers.http import _AttemptFailed
    assert low._next_delay(_AttemptFailed("x", retryable=True), 2, 0.0) == pytest.approx(1.0)
    assert high._next_delay(_AttemptFailed("x", retryable=True), 2, 0.0) == pytest.approx(2.998)
    assert low._next_delay(_AttemptFailed("x", retryable=False), 1, 0.0) is None


def test_404_is_not_retried(server):
    url = server.on("/gone.json", reply(404, b"nope"))
    f, sleeps = fetcher()
    r = f.fetch(url, source="t")
    assert r.status == "error" and r.http_status == 404 and sleeps == []
    assert r.error == f"GET {url} failed after 1 attempt: HTTP 404 Not Found"
    assert len(server.hits("/gone.json")) == 1


def test_read_timeout_is_retried_then_reported(server):
    url = server.on("/slow.json", slow(0.6, reply(200, b"late")))
    f, sleeps = fetcher(read_timeout=0.1, max_attempts=2)
    t0 = time.monotonic()
    r = f.fetch(url, source="livebench")
    assert time.monotonic() - t0 < 0.55                   # gave up long before the server answered
    assert r.status == "error" and r.http_status is None
    assert [a.error for a in r.attempts] == ["read timed out after 0.1 s"] * 2
    assert sleeps == [0.01] and url in r.error


def test_body_that_stalls_midway_is_a_read_timeout(server):
    def stall(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Length", "100")
        h.end_headers()
        h.wfile.write(b"x" * 10)
        h.wfile.flush()
        time.sleep(0.5)
        h.wfile.write(b"x" * 90)

    url = server.on("/stall.json", stall)
    r = fetcher(read_timeout=0.1, max_attempts=1)[0].fetch(url, source="t")
    assert r.status == "error" and r.http_status == 200
    assert r.error == f"GET {url} failed after 1 attempt: error while reading body: read timed out after 0.1 s"


def test_slow_then_fast_recovers(server):
    url = server.on("/slow.json", slow(0.4, reply(200, b"late")), reply(200, b"fast"))
    r = fetcher(read_timeout=0.1)[0].fetch(url, source="t")
    assert r.status == "ok" and r.content == b"fast" and len(r.attempts) == 2


def test_connection_refused_is_retried_and_reported(server):
    with socket.socket() as s:                            # a port with nobody listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/x.json"
    r = fetcher(max_attempts=2)[0].fetch(url, source="t")
    assert r.status == "error" and r.http_status is None and len(r.attempts) == 2
    assert "connection failed" in r.error and "Connection refused" in r.error and url in r.error


def test_truncated_body_is_an_error_and_retried(server):
    url = server.on("/cut.json", truncated(declared=1000, sent=100))
    f, sleeps = fetcher(max_attempts=2)
    r = f.fetch(url, source="epoch")
    assert r.status == "error" and r.content is None and r.http_status == 200
    assert [a.error for a in r.attempts] == ["truncated body: connection closed after 100 of 1000 bytes"] * 2
    assert sleeps == [0.01]
    url2 = server.on("/cut2.json", truncated(declared=1000, sent=100), reply(200, b"y" * 1000))
    r2 = f.fetch(url2, source="epoch")
    assert r2.status == "ok" and r2.content == b"y" * 1000
    assert [a.status for a in r2.attempts] == ["error", "ok"]


# --- size cap ------------------------------------------------------------------------------------
def test_declared_oversize_is_refused_before_reading(server):
    url = server.on("/big.json", reply(200, b"z" * 5000))
    r = fetcher(max_bytes=1000)[0].fetch(url, source="t")
    assert r.status == "error" and r.content is None
    assert r.error.endswith("response larger than 1000 bytes (Content-Length 5000)")
    [a] = r.attempts                                      # not retried
    assert a.bytes == 0


def test_streamed_oversize_stops_reading_past_the_cap(server):
    total = 64 * CHUNK_SIZE                                # 4 MiB, no Content-Length
    url = server.on("/stream.json", endless(total))
    r = fetcher(max_bytes=1000)[0].fetch(url, source="t")
    assert r.status == "error" and r.error.endswith("response larger than 1000 bytes")
    [a] = r.attempts
    assert 1000 < a.bytes <= 1000 + CHUNK_SIZE < total


def test_cap_applies_to_decompressed_bytes(server):
    bomb = gzip.compress(b"\0" * 2_000_000)                # ~2 KB on the wire, 2 MB decoded
    url = server.on("/bomb.json", reply(200, bomb, {"Content-Encoding": "gzip"}))
    f = fetcher(max_bytes=100_000)[0]
    r = f.fetch(url, source="t")
    assert len(bomb) < 100_000
    assert r.status == "error" and "larger than 100000 bytes" in r.error
    ok = server.on("/small.json", reply(200, gzip.compress(b'{"a": 1}'), {"Content-Encoding": "gzip"}))
    assert f.fetch(ok, source="t").content == b'{"a": 1}'


# --- content checks belong to the scraper ----------------------------------------------------------
def test_html_error_page_served_as_200_fails_in_parse_checked(server):
    page = b"<!DOCTYPE html><html><body><h1>Service unavailable</h1></body></html>"
    url = server.on("/scores.csv", reply(200, page, {"Content-Type": "text/html"}))
    r = fetcher()[0].fetch(url, source="csv")
    assert r.status == "ok"                               # HTTP-wise a success
    with pytest.raises(ScrapeError, match=r"\[csv\] expected data but got an HTML page"):
        CsvScraper().parse_checked(r.content, fetched_at=r.finished_at, filename=r.file_name)
    good = server.on("/good.csv", reply(200, b"model,benchmark,score\nm1,mmlu,71.5\nm2,mmlu,80\n"))
    parsed = CsvScraper().parse_checked(fetcher()[0].fetch(good, source="csv").content,
                                        fetched_at=r.finished_at)
    assert parsed.scores["score"].tolist() == [0.715, 0.80]


# --- refusals and redaction --------------------------------------------------------------------
@pytest.mark.parametrize("bad", ["file:///etc/passwd", "ftp://127.0.0.1/x.csv", "data:text/plain,hi", "http:///nohost"])
def test_non_http_urls_are_refused_without_a_request(server, bad):
    f, sleeps = fetcher()
    r = f.fetch(bad, source="t")
    assert r.status == "error" and r.content is None and sleeps == []
    assert "refusing to fetch" in r.error and bad.split("?")[0] in r.error
    [a] = r.attempts
    assert a.http_status is None and a.status == "error"
    assert server.requests == []


def test_credentials_in_query_strings_never_reach_logs_or_errors(server, caplog):
    url = server.on("/api.json", reply(500)) + "?token=s3cret&page=2&api_key=k3y"
    caplog.set_level("DEBUG")
    r = fetcher(max_attempts=2)[0].fetch(url, source="openrouter")
    assert "token=s3cret" in server.requests[0][0]        # the server still gets the real URL
    for text in (caplog.text, r.error, *(a.url for a in r.attempts)):
        assert "s3cret" not in text and "k3y" not in text
    assert "token=REDACTED" in caplog.text and "[openrouter] GET" in caplog.text
    assert (redact_url("https://h/p?key=1&author=me&x=2&apiKey=abc&sig=z#f")
            == "https://h/p?key=REDACTED&author=me&x=2&apiKey=REDACTED&sig=REDACTED#f")
    assert redact_url("https://h/monkey/p?page=2") == "https://h/monkey/p?page=2"


# --- politeness ------------------------------------------------------------------------------------
def test_politeness_delay_between_requests_to_the_same_host(server):
    a, b = server.on("/a.json", reply(200, b"a")), server.on("/b.json", reply(200, b"b"))
    now = [100.0]
    sleeps = Sleeps()

    def sleep(s: float) -> None:
        sleeps(s)
        now[0] += s

    f = Fetcher(politeness_delay=0.5, sleep=sleep, clock=lambda: now[0])
    f.fetch(a, source="t")
    assert sleeps == []
    f.fetch(b, source="t")                                # same host, no time passed: wait the full delay
    assert sleeps == [0.5]
    now[0] += 0.3
    f.fetch(a, source="t")                                # 0.3 s passed: wait the remaining 0.2 s
    assert sleeps == [0.5, pytest.approx(0.2)]
    now[0] += 5
    f.fetch(a, source="t")                                # long enough ago: no wait
    f.fetch(server.url("/b.json", host="localhost"), source="t")   # another host name: no wait
    assert len(sleeps) == 2


def test_politeness_delay_really_spaces_requests(server):
    url = server.on("/a.json", reply(200, b"a"))
    with Fetcher(politeness_delay=0.2) as f:
        f.fetch(url, source="t")
        f.fetch(url, source="t")
    t1, t2 = (t for _, _, t in server.requests)
    assert t2 - t1 >= 0.19


# --- replay and fetch_source ----------------------------------------------------------------------
def test_replay_reads_recorded_files_with_the_live_hash(server, tmp_path):
    body = b'[{"name": "Verified", "results": []}]'
    (tmp_path / "swebench").mkdir()
    (tmp_path / "swebench" / "leaderboards.json").write_bytes(body)
    replay = ReplayFetcher(tmp_path)
    r = replay.fetch("https://www.swebench.com/data/leaderboards.json", source="swebench")
    assert r.status == "ok" and r.content == body and r.file_name == "leaderboards.json"
    live = fetcher()[0].fetch(server.on("/data/leaderboards.json", reply(200, body)), source="swebench")
    assert r.sha256 == live.sha256 == hashlib.sha256(body).hexdigest()
    assert [a.status for a in r.attempts] == ["ok"] and r.attempts[0].bytes == len(body)

    missing = replay.fetch("https://www.swebench.com/data/other.json", source="swebench")
    path = tmp_path / "swebench" / "other.json"
    assert missing.status == "error" and missing.content is None
    assert missing.error == f"no recorded response for https://www.swebench.com/data/other.json at {path}"
    assert replay.fetch("file:///etc/passwd", source="swebench").status == "error"
    assert replay.fetch("https://h/a/..", source="swebench").status == "error"


class TwoFiles(Scraper):
    name = "twofiles"

    def __init__(self, urls: tuple[str, ...]):
        self.urls = urls


def test_fetch_source_fetches_primary_first_with_previous_validators(server):
    primary, aux = server.on("/board.json", etagged(b"{}", '"p1"')), server.on("/extra.csv", reply(200, b"a\n1\n"))
    f, _ = fetcher()
    results = fetch_source(TwoFiles((primary, aux)), f, {primary: ('"p1"', None)})
    assert [(r.file_name, r.status) for r in results] == [("board.json", "not_modified"), ("extra.csv", "ok")]
    assert [p for p, _, _ in server.requests] == ["/board.json", "/extra.csv"]
    assert [r.status for r in fetch_source(TwoFiles((primary, aux)), f)] == ["ok", "ok"]


def test_fetch_source_rejects_unfetchable_plans():
    f, _ = fetcher()
    with pytest.raises(ScrapeError, match=r"\[csv\] has no URLs to fetch"):
        fetch_source(CsvScraper(), f)
    with pytest.raises(ScrapeError, match="same file name: data.json"):
        fetch_source(TwoFiles(("https://a/x/data.json", "https://a/y/data.json")), f)


class _UnresolvableAdapter(requests.adapters.BaseAdapter):
    """A transport whose DNS lookup fails, as on a machine without network (no real lookup made)."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def send(self, request, **kwargs):
        self.calls += 1
        host = urllib3.util.parse_url(request.url).host
        reason = urllib3.exceptions.NameResolutionError(host, None, OSError("[Errno -2] Name or service not known"))
        raise requests.exceptions.ConnectionError(urllib3.exceptions.MaxRetryError(None, request.url, reason))

    def close(self):
        pass


def test_an_unresolvable_host_fails_at_once_and_says_so():
    session = requests.Session()
    adapter = _UnresolvableAdapter()
    session.mount("https://", adapter)
    sleeps = []
    fetcher = Fetcher(session=session, sleep=sleeps.append, politeness_delay=0.0)
    result = fetcher.fetch("https://leaderboard.example/data.json", source="t")
    assert result.status == "error" and result.unresolved
    assert adapter.calls == 1 and sleeps == []          # retrying within seconds cannot fix DNS
    assert "Failed to resolve" in result.error or "resolve" in result.error.lower()


def test_replay_does_not_follow_links_out_of_its_folder_nor_read_procfs(synced_db, tmp_path, monkeypatch):
    """A recorded file linked to /proc/self/environ (or /etc/shadow, or any file outside the replay
    folder) was read, refused for its NUL bytes and kept in `blobs` "for re-parsing" with the
    environment's SLACK_BOT_TOKEN in it (issue 24, item 12)."""
    import os
    from jobs.collect import collect
    from storage.query import run_query
    token = "xoxb-1111-2222-" + "s3cr3tT0k3n"
    monkeypatch.setenv("SLACK_BOT_TOKEN", token)
    outside = tmp_path / "outside.md"
    outside.write_text(f"secret {token}\n")
    replay = tmp_path / "replay"
    for source, name, target in (("simple_evals", "README.md", "/proc/self/environ"),
                                 ("swebench", "leaderboards.json", str(outside))):
        (replay / source).mkdir(parents=True)
        os.symlink(target, replay / source / name)
    r = ReplayFetcher(replay)
    for url, source in (("https://github.com/openai/simple-evals/README.md", "simple_evals"),
                        ("https://www.swebench.com/data/leaderboards.json", "swebench")):
        got = r.fetch(url, source=source)
        assert got.status == "error" and "refusing recorded response" in got.error and got.content is None
    # the whole cycle: nothing of the token stored anywhere
    db = synced_db
    collect(open_store(str(db)), ["simple_evals", "swebench"], replay_dir=str(replay))
    assert run_query("SELECT count(*) AS n FROM blobs", open_store(str(db)))["n"][0] == 0
    # a link inside the folder is fine; a procfs file named directly is refused by read_capped too
    real = tmp_path / "replay2" / "swebench"
    real.mkdir(parents=True)
    (real / "data.json").write_bytes(b"{}")
    os.symlink(real / "data.json", real / "leaderboards.json")
    assert ReplayFetcher(tmp_path / "replay2").fetch("https://www.swebench.com/data/leaderboards.json",
                                                     source="swebench").status == "ok"
    with pytest.raises(FileRefused, match="/proc"):
        read_capped("/proc/self/environ")


def test_a_replayed_file_that_fails_to_parse_is_not_kept(synced_db, tmp_path):
    from jobs.collect import collect
    from storage.query import run_query
    replay = tmp_path / "replay" / "swebench"
    replay.mkdir(parents=True)
    (replay / "leaderboards.json").write_bytes(b"\x00\x01 not json SECRET-IN-A-LOCAL-FILE")
    db = synced_db
    (out,) = collect(open_store(str(db)), ["swebench"], replay_dir=str(tmp_path / "replay"))
    assert out.status == "failed" and "not kept" in out.detail
    assert run_query("SELECT count(*) AS n FROM blobs", open_store(str(db)))["n"][0] == 0

"""Fetching a source's URLs over HTTP (`Fetcher`) or from a recorded directory (`ReplayFetcher`).

Scraper modules never fetch; this module does, politely and defensively:
one `requests.Session`, a descriptive User-Agent, connect/read timeouts, retries with
exponential backoff and jitter on connection errors, timeouts, truncated bodies, 408/429
and 5xx (honouring `Retry-After`, within a total-wait budget), a per-host politeness delay,
conditional GET (ETag / Last-Modified, 304 -> ``not_modified``) and a response size cap.

Network problems never raise: `fetch` returns a `FetchResult` whose `status` is ``"error"``
and whose `error` is one line naming the URL. Every attempt, including refused URLs and
replays, is in `FetchResult.attempts`, so storage can record each one in `fetches`.
"""

from __future__ import annotations

import logging
import os
import random
import re
import threading
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping
from urllib.parse import urlsplit

from common import settings
from common import console, redact   # console.REPORTED: the caller reports a failed fetch in its summary
from common.redact import redact_url
from common.time import parse_retry_after, utcnow  # noqa: F401 - parse_retry_after: re-exported
from scrapers.base import Scraper, ScrapeError
from scrapers.fetch_result import Attempt, FetchResult, Status, _finish, _one_line, _refused  # noqa: F401
from scrapers import files
from scrapers.files import FileRefused, human_size, pseudo_file_system  # noqa: F401

if TYPE_CHECKING:   # imported where a live fetch uses them: a replay (and `benchwatch run`'s start) needs neither
    import requests

log = logging.getLogger("benchwatch.scrapers.http")

DEFAULT_CONNECT_TIMEOUT = 10.0      # seconds to establish the TCP/TLS connection
DEFAULT_READ_TIMEOUT = 60.0         # seconds of silence tolerated while reading
DEFAULT_MAX_ATTEMPTS = 4            # first try + 3 retries
DEFAULT_BACKOFF_BASE = 2.0          # seconds before the first retry (doubled each retry, jittered)
DEFAULT_BACKOFF_MAX = 60.0          # no single computed backoff is longer than this
DEFAULT_MAX_TOTAL_WAIT = 180.0      # retry sleeps of one fetch never add up to more than this
DEFAULT_POLITENESS_DELAY = 1.0      # minimum gap between two requests to the same host
# The largest response (or file read by ingest / replay) accepted: the largest real leaderboard
# is a few MB; past this a body is refused, never buffered whole.
DEFAULT_MAX_BYTES = 64 * 1024 * 1024

CHUNK_SIZE = 64 * 1024
RETRYABLE_STATUS = frozenset({408, 429}) | frozenset(range(500, 600))


def read_capped(path: str | os.PathLike, max_bytes: int | None = None) -> bytes:
    """A local file's bytes, at most `max_bytes` (default DEFAULT_MAX_BYTES, read at call time):
    regular files only (`scrapers.files.read_capped`); raises FileRefused (one line) or OSError."""
    return files.read_capped(path, DEFAULT_MAX_BYTES if max_bytes is None else max_bytes)


def _package_version() -> str:
    try:
        return version("benchwatch")
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "0+unknown"


def default_user_agent() -> str:
    """`benchwatch/<version> (leaderboard monitor[; +<contact>])`; the operator's contact (URL or
    e-mail) comes from $BENCHWATCH_CONTACT so site owners can reach whoever runs the scraper."""
    contact = settings.read().contact
    return f"benchwatch/{_package_version()} (leaderboard monitor{'; +' + contact if contact else ''})"


# urllib3 logs every request line with its query string at DEBUG: its records are redacted
# (common.redact covers the urllib3 hierarchy), from the moment this module is used.
redact.install()


def url_refusal(url: str) -> str | None:
    """Why a URL must not be fetched (not http/https, no host), or None if it is fine."""
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        return f"malformed URL {url!r}: {exc}"
    if parts.scheme.lower() not in ("http", "https"):
        return f"refusing to fetch {redact_url(url)}: only http and https URLs are allowed"
    if not parts.hostname:
        return f"refusing to fetch {redact_url(url)}: no host"
    return None


class _AttemptFailed(Exception):
    """Internal: one attempt went wrong; `retryable` says whether trying again can help."""

    def __init__(self, reason: str, *, retryable: bool, http_status: int | None = None,
                 nbytes: int = 0, retry_after: float | None = None):
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable
        self.http_status = http_status
        self.nbytes = nbytes
        self.retry_after = retry_after
        self.unresolved = False          # the host name did not resolve (offline / DNS)


class Fetcher:
    """Live HTTP fetching with one session, retries, politeness, conditional GET and a size cap.

    `sleep` and `clock` (monotonic seconds) are injectable so tests neither sleep nor race;
    `jitter` returns a float in [0, 1) and scales each backoff by (0.5 + jitter).
    Safe to share between threads: the per-host schedule is kept under a lock.
    """

    def __init__(self, *, connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
                 read_timeout: float = DEFAULT_READ_TIMEOUT, max_attempts: int = DEFAULT_MAX_ATTEMPTS,
                 backoff_base: float = DEFAULT_BACKOFF_BASE, backoff_max: float = DEFAULT_BACKOFF_MAX,
                 max_total_wait: float = DEFAULT_MAX_TOTAL_WAIT,
                 politeness_delay: float = DEFAULT_POLITENESS_DELAY, max_bytes: int = DEFAULT_MAX_BYTES,
                 user_agent: str | None = None, session: requests.Session | None = None,
                 sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic,
                 jitter: Callable[[], float] = random.random):
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, got {max_attempts}")
        if max_bytes < 1:
            raise ValueError(f"max_bytes must be >= 1, got {max_bytes}")
        import requests
        self.timeout = (connect_timeout, read_timeout)
        self.max_attempts = max_attempts
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.max_total_wait = max_total_wait
        self.politeness_delay = politeness_delay
        self.max_bytes = max_bytes
        self.session = session or requests.Session()
        self.session.headers["User-Agent"] = default_user_agent() if user_agent is None else user_agent
        self.session.max_redirects = 10
        self._sleep = sleep
        self._clock = clock
        self._jitter = jitter
        self._lock = threading.Lock()
        self._host_next: dict[str, float] = {}   # host -> earliest monotonic time of its next request

    def close(self) -> None:
        self.session.close()

    def __enter__(self) -> Fetcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- public -------------------------------------------------------------------------
    def fetch(self, url: str, *, source: str, etag: str | None = None,
              last_modified: str | None = None, headers: Mapping[str, str] | None = None,
              name: str | None = None) -> FetchResult:
        """GET one URL; conditional when `etag`/`last_modified` of the previous fetch are given.
        `headers`: the source's own request headers (an API key: never logged, never stored).
        `name` is the response's name (`Scraper.response_name`; default the URL's last segment)."""
        refusal = url_refusal(url)
        if refusal:
            return _refused(url, source, refusal, name)
        shown = redact_url(url)
        headers = dict(headers or {})
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        attempts: list[Attempt] = []
        waited = 0.0
        while True:
            n = len(attempts) + 1
            self._polite_wait(url)
            started = utcnow()
            t0 = self._clock()
            try:
                resp_status, content, new_etag, new_lm = self._attempt(url, headers)
            except _AttemptFailed as failure:
                attempts.append(Attempt(shown, started, utcnow(), failure.http_status, failure.nbytes,
                                        failure.reason, "error"))
                self._polite_done(url)
                delay = self._next_delay(failure, n, waited)
                if delay is None:
                    error = f"GET {shown} failed after {n} attempt{'s' if n > 1 else ''}: {failure.reason}"
                    log.error("[%s] %s", source, error, extra=console.REPORTED)
                    result = _finish(url, "error", attempts, http_status=failure.http_status, error=error,
                                     name=name)
                    result.unresolved = failure.unresolved
                    return result
                log.warning("[%s] GET %s attempt %d/%d: %s; retrying in %.3g s",
                            source, shown, n, self.max_attempts, failure.reason, delay)
                self._sleep(delay)
                waited += delay
                continue
            self._polite_done(url)
            elapsed = self._clock() - t0
            if resp_status == 304:
                attempts.append(Attempt(shown, started, utcnow(), 304, 0, None, "not_modified"))
                log.info("[%s] GET %s -> 304 not modified (%.1f s)", source, shown, elapsed)
                return _finish(url, "not_modified", attempts, http_status=304,
                               etag=new_etag or etag, last_modified=new_lm or last_modified, name=name)
            attempts.append(Attempt(shown, started, utcnow(), resp_status, len(content), None, "ok"))
            log.info("[%s] GET %s -> %d (%s, %.1f s)", source, shown, resp_status, human_size(len(content)), elapsed)
            return _finish(url, "ok", attempts, http_status=resp_status, content=content,
                           etag=new_etag, last_modified=new_lm, name=name)

    # --- one attempt ----------------------------------------------------------------------
    def _attempt(self, url: str, headers: Mapping[str, str]) -> tuple[int, bytes, str | None, str | None]:
        """One GET: (status, body, etag, last_modified), or `_AttemptFailed`."""
        import requests
        try:
            resp = self.session.get(url, headers=dict(headers), timeout=self.timeout, stream=True)
        except requests.exceptions.RequestException as exc:
            failure = _AttemptFailed(self._describe(exc), retryable=self._retryable(exc))
            failure.unresolved = is_name_resolution_failure(exc)
            raise failure from exc
        with resp:
            status = resp.status_code
            etag = resp.headers.get("ETag")
            last_modified = resp.headers.get("Last-Modified")
            if status == 304:
                if "If-None-Match" not in headers and "If-Modified-Since" not in headers:
                    raise _AttemptFailed("HTTP 304 to a request that was not conditional", retryable=False,
                                         http_status=304)
                return status, b"", etag, last_modified
            if status in RETRYABLE_STATUS:
                raise _AttemptFailed(f"HTTP {status} {resp.reason or ''}".strip(), retryable=True, http_status=status,
                                     retry_after=parse_retry_after(resp.headers.get("Retry-After"), utcnow()))
            if not 200 <= status < 300:
                raise _AttemptFailed(f"HTTP {status} {resp.reason or ''}".strip(), retryable=False, http_status=status)
            content = self._read_body(resp)
            return status, content, etag, last_modified

    def _read_body(self, resp: requests.Response) -> bytes:
        """The body, streamed: stops past `max_bytes`; a short read is a retryable error."""
        import requests
        declared = resp.headers.get("Content-Length")
        expected = int(declared) if declared and declared.strip().isdigit() else None
        status = resp.status_code
        encoded = resp.headers.get("Content-Encoding", "identity").strip().lower() not in ("", "identity")
        if expected is not None and expected > self.max_bytes and not encoded:
            raise _AttemptFailed(f"response larger than {self.max_bytes} bytes (Content-Length {expected})",
                                 retryable=False, http_status=status)
        chunks: list[bytes] = []
        total = 0
        try:
            for chunk in resp.iter_content(CHUNK_SIZE):
                chunks.append(chunk)
                total += len(chunk)
                if total > self.max_bytes:
                    raise _AttemptFailed(f"response larger than {self.max_bytes} bytes", retryable=False,
                                         http_status=status, nbytes=total)
        except requests.exceptions.RequestException as exc:
            if isinstance(exc, requests.exceptions.ChunkedEncodingError) and expected is not None:
                reason = f"truncated body: connection closed after {resp.raw.tell()} of {expected} bytes"
            else:
                reason = f"error while reading body: {self._describe(exc)}"
            raise _AttemptFailed(reason, retryable=True, http_status=status, nbytes=total) from exc
        # urllib3 enforces Content-Length itself; this guards against a transport that does not.
        if expected is not None and resp.raw is not None and resp.raw.tell() < expected:
            raise _AttemptFailed(f"truncated body: {resp.raw.tell()} of {expected} bytes", retryable=True,
                                 http_status=status, nbytes=total)
        return b"".join(chunks)

    def _describe(self, exc: BaseException) -> str:
        import requests
        import urllib3
        if isinstance(exc, requests.exceptions.ConnectTimeout):
            return f"connect timed out after {self.timeout[0]:g} s"
        if isinstance(exc, requests.exceptions.ReadTimeout) or (
                exc.args and isinstance(exc.args[0], urllib3.exceptions.ReadTimeoutError)):
            return f"read timed out after {self.timeout[1]:g} s"
        if isinstance(exc, requests.exceptions.TooManyRedirects):
            return "too many redirects"
        if isinstance(exc, requests.exceptions.ConnectionError):
            return "connection failed: " + _one_line(_root_cause(exc))
        return f"{type(exc).__name__}: {_one_line(str(exc))}"

    @staticmethod
    def _retryable(exc: BaseException) -> bool:
        import requests
        return isinstance(exc, (requests.exceptions.ConnectionError, requests.exceptions.Timeout,
                                requests.exceptions.ChunkedEncodingError)) and not isinstance(
            exc, (requests.exceptions.SSLError, requests.exceptions.TooManyRedirects)) \
            and not is_name_resolution_failure(exc)

    def _next_delay(self, failure: _AttemptFailed, n: int, waited: float) -> float | None:
        """Seconds to sleep before attempt n+1, or None when no retry follows (reason in `failure`).

        Backoff: min(backoff_max, backoff_base * 2**(n-1) * (0.5 + jitter)); a Retry-After
        header replaces it. The sum of sleeps of one fetch never exceeds `max_total_wait`.
        """
        if not failure.retryable or n >= self.max_attempts:
            return None
        remaining = max(self.max_total_wait - waited, 0.0)
        if failure.retry_after is not None:
            if failure.retry_after > remaining:
                failure.reason += (f" (server asked to retry after {failure.retry_after:g} s, beyond the"
                                   f" remaining retry budget of {remaining:g} s)")
                return None
            return failure.retry_after
        delay = min(self.backoff_max, self.backoff_base * 2 ** (n - 1) * (0.5 + self._jitter()))
        if delay > remaining:
            failure.reason += f" (retry budget of {self.max_total_wait:g} s used up)"
            return None
        return delay

    # --- politeness --------------------------------------------------------------------------
    def _polite_wait(self, url: str) -> None:
        host = (urlsplit(url).hostname or "").lower()
        with self._lock:
            now = self._clock()
            start = max(now, self._host_next.get(host, now))
            self._host_next[host] = start + self.politeness_delay   # reserve the slot for concurrent callers
        if start > now:
            self._sleep(start - now)

    def _polite_done(self, url: str) -> None:
        host = (urlsplit(url).hostname or "").lower()
        with self._lock:
            self._host_next[host] = max(self._host_next.get(host, 0.0), self._clock() + self.politeness_delay)


def _innermost(exc: BaseException) -> BaseException:
    seen: BaseException = exc
    while True:
        nxt = getattr(seen, "reason", None)
        if nxt is None and seen.args and isinstance(seen.args[0], BaseException):
            nxt = seen.args[0]
        if not isinstance(nxt, BaseException) or nxt is seen:
            return seen
        seen = nxt


def is_name_resolution_failure(exc: BaseException) -> bool:
    """The host name did not resolve: offline or DNS down, which retrying within seconds won't fix."""
    import urllib3
    return isinstance(_innermost(exc), urllib3.exceptions.NameResolutionError)


def _root_cause(exc: BaseException) -> str:
    """The innermost reason of a requests/urllib3 connection error (e.g. 'Connection refused')."""
    seen = _innermost(exc)
    # urllib3 prefixes the connection object: "HTTPConnection(host=..., port=...): Failed to establish ..."
    text = re.sub(r"^(<[^>]*>|\w*Connection(Pool)?\([^)]*\)):\s*", "", str(seen))
    return text or type(seen).__name__


class ReplayFetcher:
    """The `Fetcher` interface over a recorded directory: `DIR/<source>/<file_name(url)>`.

    Never touches the network. The URL is checked exactly as a live fetch would check it,
    so a plan that would be refused live is refused in replay too. `etag`/`last_modified`
    are accepted for interface parity and ignored: a recorded file is always returned whole.
    """

    def __init__(self, directory: str | Path):
        self.directory = Path(directory)

    def missing(self, url: str, *, source: str, name: str | None = None) -> bool:
        """`fetch` would answer "no recorded response" for `url` (it reads nothing)."""
        return not url_refusal(url) and self._absent(source, name or Scraper.file_name(url))

    def _absent(self, source: str, name: str) -> bool:
        return name in (".", "..") or not (self.directory / source / name).exists()

    def fetch(self, url: str, *, source: str, etag: str | None = None,
              last_modified: str | None = None, headers: Mapping[str, str] | None = None,
              name: str | None = None) -> FetchResult:
        refusal = url_refusal(url)
        if refusal:
            return _refused(url, source, refusal, name)
        shown = redact_url(url)
        name = name or Scraper.file_name(url)
        path = self.directory / source / name
        started = utcnow()
        if self._absent(source, name):     # (refused URLs were answered above)
            error = f"no recorded response for {shown} at {path}"
            log.error("[%s] %s", source, error, extra=console.REPORTED)
            result = _finish(url, "error", [Attempt(shown, started, utcnow(), None, 0, error, "error")], error=error,
                             name=name)
            result.not_recorded = True
            return result
        outside = self._outside(path)
        if outside:
            error = f"refusing recorded response for {shown} at {path}: {outside}"
            log.error("[%s] %s", source, error, extra=console.REPORTED)
            return _finish(url, "error", [Attempt(shown, started, utcnow(), None, 0, error, "error")], error=error,
                           name=name)
        try:
            content = read_capped(path)
        except OSError as exc:
            detail = str(exc) if isinstance(exc, FileRefused) else (exc.strerror or str(exc))
            error = f"cannot read recorded response for {shown} at {path}: {detail}"
            log.error("[%s] %s", source, error, extra=console.REPORTED)
            return _finish(url, "error", [Attempt(shown, started, utcnow(), None, 0, error, "error")], error=error,
                           name=name)
        log.info("[%s] REPLAY %s <- %s (%s)", source, shown, path, human_size(len(content)))
        return _finish(url, "ok", [Attempt(shown, started, utcnow(), None, len(content), None, "ok")],
                       content=content, name=name)

    def _outside(self, path: Path) -> str | None:
        """Why a recorded file may not be read: a link that leads out of the replay folder (to
        /proc/self/environ, /etc/shadow, …) or a file on procfs/sysfs; None when it may."""
        try:
            real, root = path.resolve(strict=True), self.directory.resolve(strict=True)
        except (OSError, RuntimeError) as exc:     # a dangling link or a loop
            return f"cannot resolve it ({getattr(exc, 'strerror', None) or exc})"
        if real != root and root not in real.parents:
            return f"it links out of the replay folder (to {real})"
        pseudo = pseudo_file_system(real)
        return f"it is in {pseudo}" if pseudo else None

    def close(self) -> None:
        """Nothing to release; present so callers can treat both fetchers alike."""


def fetch_source(scraper: Scraper, fetcher: Fetcher | ReplayFetcher,
                 previous: Mapping[str, tuple[str | None, str | None]] | None = None,
                 urls: list[str] | None = None, *, secret: str | None = None) -> list[FetchResult]:
    """Fetch every URL of `scraper.plan()`, primary first, conditionally when `previous` has validators,
    then the URLs the primary response names (`scraper.discover`, marked `discovered`).

    `previous` maps a URL to the (etag, last_modified) of its last successful fetch; `urls` replaces
    the plan (a release found by discovery). A source that
    discovers URLs is fetched unconditionally (an unchanged manifest says nothing about its entries).
    `secret`: the value of `scraper.secret` (resolved by flows/cli), sent as the source's
    `request_headers`.
    Raises ScrapeError only for a plan that cannot be fetched at all (no URLs, or two URLs
    with the same response name, which would collide in `aux` and in replay directories).
    """
    urls = list(urls) if urls is not None else scraper.plan()     # `urls`: one release's (Scraper.release_urls)
    if not urls:
        raise ScrapeError(scraper.name, "has no URLs to fetch (local files only: use `benchwatch ingest`)")
    _check_names(scraper, urls)
    discovers = type(scraper).discover is not Scraper.discover
    previous = {} if discovers else (previous or {})
    headers = scraper.request_headers(secret) if secret else {}
    results = []
    for url in urls:
        etag, last_modified = previous.get(url, (None, None))
        results.append(fetcher.fetch(url, source=scraper.name, etag=etag, last_modified=last_modified,
                                     name=scraper.response_name(url), headers=headers))
    if discovers and results[0].ok and results[0].content is not None:
        try:
            extra = [u for u in scraper.discover(results[0].content) if u not in urls]
        except ScrapeError as exc:       # a malformed primary: its parse reports it
            log.warning("[%s] nothing discovered: %s", scraper.name, exc.reason)
            extra = []
        _check_names(scraper, urls + extra)
        for url in extra:
            result = fetcher.fetch(url, source=scraper.name, name=scraper.response_name(url),
                                   headers=headers)
            result.discovered = True
            results.append(result)
    return results


def _check_names(scraper: Scraper, urls: list[str]) -> None:
    names = [scraper.response_name(u) for u in urls]
    clashes = sorted({n for n in names if names.count(n) > 1})
    if clashes:
        raise ScrapeError(scraper.name, f"plan has several URLs with the same file name: {', '.join(clashes)}")

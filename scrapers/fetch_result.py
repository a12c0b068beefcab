"""What fetching one URL returns (`FetchResult`, one `Attempt` per request): shared by the live
fetcher and the replay reader of `scrapers.http`, and recorded by storage in `fetches`."""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from common import console   # console.REPORTED: the caller reports a failed fetch in its summary
from common.redact import redact_url
from common.time import utcnow
from scrapers.base import Scraper

log = logging.getLogger("benchwatch.scrapers.http")

Status = Literal["ok", "not_modified", "error"]


@dataclass(frozen=True)
class Attempt:
    """One request (or one refusal / one replay read), as the `fetches` table records it.

    `url` is redacted (`redact_url`) because it is stored and shown; `FetchResult.url` is the real one.
    """

    url: str
    started_at: datetime
    finished_at: datetime
    http_status: int | None
    bytes: int                      # body bytes received (decoded), 0 if none
    error: str | None
    status: Status


@dataclass
class FetchResult:
    """The outcome of fetching one URL, after retries."""

    url: str
    file_name: str                  # `Scraper.file_name(url)`: the key of `aux` and of replay files
    status: Status
    http_status: int | None
    content: bytes | None           # None unless status == "ok"
    etag: str | None
    last_modified: str | None
    sha256: str | None              # hex digest of content
    error: str | None
    started_at: datetime
    finished_at: datetime
    attempts: list[Attempt] = field(default_factory=list)
    unresolved: bool = False        # failed because the host name did not resolve (offline / DNS down)
    discovered: bool = False        # named by the primary response (`Scraper.discover`): a failure is not the source's
    not_recorded: bool = False      # replay only: the directory has no file for this URL (not a fetch)

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def _one_line(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _finish(url: str, status: Status, attempts: list[Attempt], *, http_status: int | None = None,
            content: bytes | None = None, etag: str | None = None, last_modified: str | None = None,
            error: str | None = None, name: str | None = None) -> FetchResult:
    return FetchResult(
        url=url, file_name=name or Scraper.file_name(url), status=status, http_status=http_status,
        content=content, etag=etag, last_modified=last_modified,
        sha256=hashlib.sha256(content).hexdigest() if content is not None else None,
        error=error, started_at=attempts[0].started_at,
        finished_at=attempts[-1].finished_at, attempts=attempts)


def _refused(url: str, source: str, reason: str, name: str | None = None) -> FetchResult:
    now = utcnow()
    log.error("[%s] %s", source, reason, extra=console.REPORTED)
    return _finish(url, "error", [Attempt(redact_url(url), now, now, None, 0, reason, "error")], error=reason,
                   name=name)

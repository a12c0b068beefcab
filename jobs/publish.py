"""The cycle's publish step: the HTML report written where people read it, after each analysis.

One step for `benchwatch run --no-prefect` and the Prefect `pipeline` flow alike (jobs.cycle):
when `BENCHWATCH_REPORT_DIR` (or `report_dir`) is set, the page is written there as
alerts.config.REPORT_FILE_NAME, replaced atomically (the Slack digest links to it through
BENCHWATCH_REPORT_BASE_URL). With `overview=True` (the flow, which shows it as Prefect artifacts)
it also returns the overview rows and markdown. A report is a by-product: it never fails a run.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from common import settings
from alerts.config import REPORT_FILE_NAME, report_url_from_env

if TYPE_CHECKING:
    from storage.store import Store

log = logging.getLogger("benchwatch.jobs.publish")


@dataclass
class PublishedReport:
    """What the publish step produced: the page's path (None: no report folder configured), its URL
    for people (BENCHWATCH_REPORT_BASE_URL, else a file:// URL of the path), and the overview."""

    path: Path | None = None
    url: str | None = None
    overview_rows: list[dict] = field(default_factory=list)
    overview_markdown: str | None = None


def report_dir_from_env() -> str | None:
    return settings.read().report_dir


def report_page_from_env() -> Path | None:
    """The page a run writes ($BENCHWATCH_REPORT_DIR/report.html), None without that folder."""
    folder = report_dir_from_env()
    return Path(folder) / REPORT_FILE_NAME if folder else None


def publish_report(store: Store, *, now: datetime | None = None,
                   report_dir: str | os.PathLike | None = None, overview: bool = False,
                   unchanged: bool = False) -> PublishedReport | None:
    """Write the report page (see the module docstring); None when there is nothing to publish
    (no report folder and no overview asked for) or the report could not be made (logged).

    `unchanged`: the analysis was skipped (its inputs, the UTC day included, are those of the last
    one), so the page already written says the same: it is kept as it is (its path and URL
    returned, nothing read), and no overview is made (Prefect keeps the last one under its key).
    """
    folder = report_dir or report_dir_from_env()
    if not folder and not overview:
        return None
    if unchanged:
        page = Path(folder) / REPORT_FILE_NAME if folder else None
        if page is None:
            return PublishedReport()
        if page.is_file():
            return PublishedReport(path=page, url=report_url_from_env() or page.resolve().as_uri())
    now = now or datetime.now(timezone.utc)
    try:
        from report.html import overview_markdown, overview_rows, render_report, write_atomic
        from storage.report import read_html_report, read_overview_frames
        con = store.open(read_only=True)
        try:   # the overview alone (no page to write) draws two of the page's frames
            frames = read_html_report(con) if folder else read_overview_frames(con)
        finally:
            store.close(con)
        published = PublishedReport()
        if overview:
            published.overview_rows = overview_rows(frames, now=now)
            published.overview_markdown = overview_markdown(frames, now=now)
        if folder:
            path = Path(folder) / REPORT_FILE_NAME
            from jobs.outputs import database_inputs, own_inputs, refusal
            why = refusal(path, database_inputs(store) + own_inputs())
            if why:        # never over the database or a file benchwatch reads (the CLI refuses it first)
                raise ValueError(why)
            write_atomic(path, render_report(frames, now=now))
            published.path = path
            published.url = report_url_from_env() or path.resolve().as_uri()
            log.info("[report] written to %s", path)
        return published
    except Exception as exc:   # the report is a by-product: the run's outcome does not depend on it
        log.warning("[report] not published: %s: %s", type(exc).__name__, exc)
        return None

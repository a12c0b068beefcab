"""One cycle: collect, analyze (skipped when its inputs are unchanged), publish the report,
notify; and what both of its compositions share.

`run_cycle` is the plain composition (`benchwatch run --no-prefect`): each step is one plain
function of the jobs module that owns it (jobs.collect, jobs.analyze_step, jobs.publish,
jobs.alerts). The Prefect `pipeline` flow (flows/pipeline.py) writes the same order with each
step a task wrapping the same function. What a step's outcome means is written once, here, and
both use it: `CycleReport` (what a run did; `errors`, Slack refusing the digest included, and
`ok`, the exit code's rule) and `reported` (a failed step is reported and the cycle goes on; a
stop is raised).
Every step takes the store the caller made once (`storage.store`: cli/ and flows/) and opens a
short connection through it for each read or write: none is open while a source is fetched or
parsed or while Slack is called, so a slow fetch never holds the file lock (DuckDB allows one
writing process).
"""

from __future__ import annotations

import logging
import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, Mapping, Sequence

import scrapers
from common import shutdown
from common.time import utcnow
from jobs.alerts import run_notify
from jobs.analyze_step import analysis_counts, analyze_step, flagged_suspects
from jobs.collect import SourceOutcome, collect, requested_sources
from jobs.publish import PublishedReport, publish_report
from scrapers.base import Scraper, ScrapeError
from storage.db import DatabaseLocked  # noqa: F401 - re-exported: flows retry on it without reaching storage
from storage.lake import as_catalog_lost, raised_catalog_lost
from storage.store import Store

if TYPE_CHECKING:
    from alerts.slack import SlackSettings

log = logging.getLogger("benchwatch.jobs")


@dataclass
class CycleReport:
    """What one `benchwatch run` did, for people (text) and for exit codes (ok)."""

    outcomes: list[SourceOutcome]
    analysis: dict | None = None
    notification: object | None = None
    failures: list[str] = field(default_factory=list)    # the steps that raised (`reported`)
    published: PublishedReport | None = None

    @property
    def analysis_skipped(self) -> bool:
        """The analysis was skipped (its inputs unchanged): the published page still says the same."""
        return bool(self.analysis and self.analysis.get("skipped"))

    @property
    def errors(self) -> list[str]:
        """Why the run did not do its job: the steps that raised, then Slack refusing the digest.
        A refusal is not raised (the notifications stay queued for the next run), but nobody was
        told: the cycle must not look fine."""
        refused = self.notification is not None and getattr(self.notification, "ok", True) is False
        return self.failures + ([f"notify: {str(self.notification).splitlines()[0]}"] if refused else [])

    @property
    def ok(self) -> bool:
        tried = [o for o in self.outcomes if o.status != "skipped"]   # a skipped source is no failure
        collected = any(o.status != "failed" for o in tried) or not tried
        return collected and not self.errors

    def text(self) -> str:
        lines = ["collect:"] + ["  " + o.line() for o in self.outcomes]
        unreachable = [o.source for o in self.outcomes if o.unreachable]
        tried = [o for o in self.outcomes if o.status != "skipped"]
        if tried and all(o.offline for o in tried):   # a source skipped for its key is no evidence
            lines.append("  no source host name resolved: this machine looks offline "
                         "(try `benchwatch run --replay tests/fixtures/replay`)")
        elif unreachable:
            lines.append(f"  unreachable: {', '.join(unreachable)}")
        if self.analysis is not None:
            sat = self.analysis.get("saturation")
            flagged = flagged_suspects(self.analysis.get("suspects"))
            kept = " (inputs unchanged: stored results kept)" if self.analysis.get("skipped") else ""
            lines.append(f"analyze: {analysis_counts(sat)}; {len(flagged)} contamination-suspect flag(s){kept}")
        if self.published is not None and self.published.path is not None:
            lines.append(f"report: {self.published.path}")
        if self.notification is not None:
            lines.append(f"notify: {self.notification}")
        lines += [f"error: {e}" for e in self.errors]
        return "\n".join(lines)


def run_cycle(store: Store, sources: Sequence[str] | None = None, *,
              replay_dir: str | os.PathLike | None = None, collect_only: bool = False,
              secrets: Mapping[str, str] | None = None,
              slack: Callable[[], SlackSettings] | None = None) -> CycleReport:
    """collect, analyze (skipped when unchanged), publish the report, notify, as plain calls.
    `secrets`: the sources' secrets and `slack` the Slack settings' resolver (called when notify
    runs), both from the caller (flows.secrets): nothing below flows looks a secret up in Prefect.
    Notify still runs after a failed analyze (source alerts go out); Slack refusing the digest
    fails the cycle (it stays queued)."""
    report = CycleReport(collect(store, sources, replay_dir=replay_dir, secrets=secrets))
    shutdown.check()
    if collect_only:
        return report
    with reported(report, "analyze", store):
        report.analysis = analyze_step(store, levels=False)   # the text summary needs no levels (artifacts do)
    shutdown.check()
    # before notify (the digest links to the page); never fails; a skipped analysis keeps the page
    report.published = publish_report(store, unchanged=report.analysis_skipped)
    shutdown.check()                # never notify after a stop was asked for
    with reported(report, "notify", store):
        report.notification = run_notify(store, now=utcnow(), settings=slack() if slack is not None else None)
    return report


@contextmanager
def reported(report: CycleReport, step: str, store: Store, *, log_failure: bool = True) -> Iterator[None]:
    """Run one step (the body) on `store`; its failure is reported in `report` and the cycle goes
    on (notify still runs for source alerts), a stop (SIGTERM) is raised, and so is a lost catalog
    (`CatalogLost`: a lake whose PostgreSQL a fresh connection cannot reach, so no later step
    reaches it either; the CLI says so in one line, what was committed is kept). The store raises
    it for a failure inside a connection; a step that fails while opening one (PostgreSQL stopped
    between two steps) is judged here by the same rule. `log_failure=False`: the step was a
    Prefect task, and Prefect has logged its failure with its traceback already."""
    try:
        yield
    except Exception as exc:  # noqa: BLE001 - reported; notify still runs for source alerts
        if shutdown.requested():    # SIGTERM, turned by DuckDB into "Query interrupted": a stop, not a failure
            raise shutdown.Terminated() from exc
        if raised_catalog_lost(exc):
            raise
        lost = as_catalog_lost(store.target, exc)
        if lost is not None:
            raise lost from exc
        if log_failure:
            log.error("[%s] failed", step, exc_info=exc)
        report.failures.append(f"{step} failed: {type(exc).__name__}: {exc}")


def replay_dir_problem(path: str | os.PathLike | None, sources: Sequence[str] | None = None) -> str | None:
    """Why `path` cannot be a replay directory for `sources` (None when it can, or when no replay).

    Checked before anything runs: a mistyped directory, or `<source>/` folders without their
    recorded files, would otherwise fail every source (the cycle records no fetch for a missing
    recording, so it never counts towards `source_failing`), and an empty string would silently
    fall back to the network.
    """
    if path is None:
        return None
    if not str(path).strip():
        return "--replay needs a directory (an empty value would fetch live)"
    directory = Path(path)
    if not directory.is_dir():
        return f"--replay {path}: not a directory (expected DIR/<source>/<file>, e.g. tests/fixtures/replay)"
    names = requested_sources(sources)
    missing: list[str] = []       # <source>/<file> of folders that lack a planned file
    complete = 0
    for name in names:
        if not (directory / name).is_dir():
            continue
        try:
            files = [Scraper.file_name(u) for u in scrapers.get(name).plan()]
        except ScrapeError:
            continue                    # the cycle reports an unplannable source itself
        absent = [f for f in files if not (directory / name / f).is_file()]
        missing += [f"{name}/{f}" for f in absent]
        complete += not absent
    if missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        return (f"--replay {path}: no recorded response {shown} "
                f"(expected DIR/<source>/<file>, e.g. tests/fixtures/replay)")
    if not complete:
        return (f"--replay {path}: no recorded responses for {', '.join(names)} "
                f"(expected DIR/<source>/<file>, e.g. tests/fixtures/replay)")
    return None

"""The cycle's steps, defined once: collect, analyze (skipped when its inputs are unchanged),
publish the report, notify; and the plain functions behind the CLI (ingest a file, reparse).

`run_cycle` composes the steps (their order and what a failed step means); `benchwatch run
--no-prefect` calls it with `CycleSteps` (plain calls) and the Prefect `pipeline` flow with its
subclass that runs each step as a task (flows/pipeline.py), so both do the same work.
Every step takes the store the caller made once (`storage.store`: cli/ and flows/) and opens a
short connection through it for each read or write: none is open while a source is fetched or
parsed or while Slack is called, so a slow fetch never holds the file lock (DuckDB allows one
writing process).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import pandas as pd

import scrapers
from common import shutdown
from common.naming import NO_RULES, NamingRules
from common.time import utcnow
from jobs.collect import (MISSING, RELEASE_MAX_MISSES, SourceOutcome, collect, collect_releases,  # noqa: F401
                          collect_source, new_run_id, skipped_for_secret)
from scrapers.base import Scraper, ScrapeError
from scrapers.http import FileRefused, read_capped
from storage import db
from storage.lake import connection_lost
from storage.db import DatabaseLocked  # noqa: F401 - re-exported: flows retry on it without reaching storage
from storage.store import FileStore, Store
from jobs.sync import connect_synced
from storage.csv_ingest import FileStamp, ingest_csv
from scrapers.csv import CsvLayout, native_layout
from jobs.analyze import analyze as run_analyze
from storage.ingest import IngestResult, parse_observed_at, store_snapshot
from storage.responses import Response, load_blob, record_fetches, unparsed_responses

if TYPE_CHECKING:
    from alerts.slack import SlackSettings
    from jobs.publish import PublishedReport

CSV_SOURCE = "csv"     # the generic long-format CSV: read and validated inside DuckDB when it can be

log = logging.getLogger("benchwatch.jobs")


def ingest_file(store: Store, source: str, path: str | os.PathLike, *,
                aux_paths: Sequence[str | os.PathLike] = (), observed_at: datetime | str | None = None,
                native: bool = True, wait: float = db.DEFAULT_WAIT_SECONDS) -> IngestResult:
    """Parse a saved copy of a source's response and store it as a snapshot (waiting up to `wait`
    seconds while another process writes).

    Raises ScrapeError (database untouched) when the file cannot be parsed. A `csv` file is read
    and validated inside DuckDB (`storage.csv_ingest`) when that path reproduces the pandas one
    exactly; `native=False` forces the pandas path (the reference its tests compare against).
    """
    scraper = scrapers.get(source)
    primary = Path(path)
    when = parse_observed_at(observed_at)    # refuses empty, unparseable and future dates (IngestRefused)
    try:   # at most the HTTP layer's size cap, regular files only
        stamp = FileStamp.of(primary)
        responses = [Response(primary.name, read_capped(primary))]
        responses += [Response(Path(p).name, read_capped(p)) for p in aux_paths]
    except FileRefused as exc:
        raise ScrapeError(source, f"refused: {exc}") from exc
    except OSError as exc:
        raise ScrapeError(source, f"cannot read {exc.filename}: {exc.strerror}") from exc
    layout = native_layout(responses[0].content) if native and source == CSV_SOURCE and not aux_paths else None
    if layout is not None:
        result = _ingest_csv(store, primary, stamp, layout, responses, when, scraper.parser_version,
                             scraper.shrink_max_drop, scraper.NAMING, wait=wait)
        if result is not None:
            return result
    parsed = scraper.parse_checked(responses[0].content, fetched_at=when,
                                   aux={r.file_name: r.content for r in responses[1:]},
                                   filename=responses[0].file_name)
    with connect_synced(store, wait=wait) as con:
        result = store_snapshot(con, parsed, responses, observed_at=when, origin="ingest",
                                parser_version=scraper.parser_version)
        if result.status == "new":
            _record_ingest(con, source, primary, responses[0], when, result)
    return result


def _ingest_csv(store: Store, primary: Path, stamp: FileStamp, layout: CsvLayout,
                responses: list[Response], when: datetime, parser_version: int,
                shrink_max_drop: float | None = None, naming: NamingRules = NO_RULES,
                wait: float = db.DEFAULT_WAIT_SECONDS) -> IngestResult | None:
    """`storage.csv_ingest` into the database; None when the pandas path must read the file (nothing
    written). A database that does not exist yet is created beside its path and put in place only
    when the file was stored: a file that fails creates nothing, as on the pandas path (which
    parses before it opens the database)."""
    def write(con) -> IngestResult | None:
        result = ingest_csv(con, primary, stamp, layout, responses, observed_at=when, origin="ingest",
                            parser_version=parser_version, shrink_max_drop=shrink_max_drop,
                            naming=naming)
        if result is not None and result.status == "new":
            _record_ingest(con, CSV_SOURCE, primary, responses[0], when, result)
        return result

    if isinstance(store, FileStore) and not store.file.exists():   # a lake catalog is never "created" by a file
        try:
            with db.new_database(store.file) as new:
                try:
                    with connect_synced(store.beside(new.path), wait=wait) as con:
                        result = write(con)
                except BaseException:    # past parsing (a refused date, …): the pandas path had opened it too
                    new.keep()
                    raise
                if result is not None:
                    new.keep()
            return result
        except FileExistsError:      # another process created it meanwhile: store into that one
            pass
    with connect_synced(store, wait=wait) as con:
        return write(con)


def _record_ingest(con, source: str, primary: Path, response: Response, when: datetime, result: IngestResult) -> None:
    record_fetches(con, pd.DataFrame([{
        "source": source, "url": f"file://{primary.resolve()}", "started_at": when, "finished_at": utcnow(),
        "status": "ok", "bytes": len(response.content), "sha256": result.sha256}]))


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
    names = list(sources) if sources else scrapers.enabled_sources()
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



def analyze(store: Store, *, now: datetime | None = None,
            skip_unchanged: bool = False, incremental: bool = True, **options: bool) -> dict:
    """Recompute the analysis from the stored data: skipped when nothing changed (`skip_unchanged`),
    else only the tables whose inputs changed (jobs/analyze.py, which holds the step and its
    `options`)."""
    return run_analyze(store, now=now, skip_unchanged=skip_unchanged, incremental=incremental, **options)



def notify(store: Store, *, now: datetime | None = None,
           slack: SlackSettings | None = None):
    """Evaluate alert rules on the stored analysis and deliver what is new (Slack or console).
    `slack`: the settings resolved by the caller (flows.secrets: environment, then Prefect Secret
    blocks); None reads the environment only."""
    from jobs.alerts import run_notify   # not loaded by `analyze`, `ingest` or `backfill`
    return run_notify(store, now=now or utcnow(), settings=slack)


def flagged_suspects(suspects: pd.DataFrame | None) -> pd.DataFrame:
    """The tests of an analysis that raised a suspicion (any status but not_flagged)."""
    if suspects is None or "status" not in suspects.columns:
        return pd.DataFrame()
    return suspects[suspects["status"] != "not_flagged"]


# --- the cycle ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class LevelChange:
    """A leaderboard table whose committed saturation level differs after this run's analysis."""

    table: str                 # table_id, with the scope/population when not the default
    before: str | None         # None: the table had no level yet
    after: str | None


def _series_levels(levels: pd.DataFrame | None) -> dict[str, str | None]:
    if levels is None or not len(levels) or "level" not in levels.columns:
        return {}
    key = [c for c in ("table_id", "scope", "population") if c in levels.columns] or ["benchmark"]
    out: dict[str, str | None] = {}
    for row in levels[key + ["level"]].itertuples(index=False):
        parts = [str(v) for v in row[:-1]]
        extra = [v for v, default in zip(parts[1:], ("all", "models")) if v != default]
        name = parts[0] + (f" ({':'.join(extra)})" if extra else "")
        out[name] = None if pd.isna(row[-1]) else str(row[-1])
    return out


def level_changes(before: pd.DataFrame | None, after: pd.DataFrame | None) -> list[LevelChange]:
    """Tables whose stored level differs between two reads of saturation_latest (pure)."""
    old, new = _series_levels(before), _series_levels(after)
    return [LevelChange(name, old.get(name), level) for name, level in sorted(new.items())
            if level is not None and old.get(name) != level]


def analyze_step(store: Store, *, now: datetime | None = None,
                 skip_unchanged: bool = True, levels: bool = True) -> dict:
    """The cycle's analyze: `analyze` (skipped when its inputs are unchanged), plus the levels it
    changed (`level_changes`, for the run's summary: none when nothing was recomputed). The levels
    before are read in the analysis' own connection, and only when it recomputes. `levels=False`:
    a skipped analysis does not read the stored levels back (the CLI's summary does not show them)."""
    result = analyze(store, now=now, skip_unchanged=skip_unchanged, levels_before=True, stored_levels=levels)
    recomputed = "levels_before" in result
    before = result.pop("levels_before", None)
    result["level_changes"] = level_changes(before, result.get("levels")) if recomputed else []
    return result


class CycleSteps:
    """The four steps of one cycle as plain calls. `flows.pipeline` subclasses it to run each
    step as a Prefect task (retries, timeouts, artifacts); `run_cycle` composes them, so the
    order and what a failed step means are written once.

    `secrets`: the sources' secrets and `slack` the Slack settings' resolver, both from the
    caller (flows.secrets): nothing below flows looks a secret up in Prefect.
    """

    def __init__(self, secrets: Mapping[str, str] | None = None,
                 slack: Callable[[], SlackSettings] | None = None):
        self.secrets = secrets
        self.slack = slack

    def collect(self, store: Store, sources: Sequence[str] | None, replay_dir: Any) -> list[SourceOutcome]:
        return collect(store, sources, replay_dir=replay_dir, secrets=self.secrets)

    def analyze(self, store: Store) -> dict:
        return analyze_step(store, levels=False)    # the text summary needs no levels (artifacts do: flows)

    def publish(self, store: Store, *, unchanged: bool = False) -> PublishedReport | None:
        from jobs.publish import publish_report   # not loaded by `analyze`, `ingest` or `backfill`
        return publish_report(store, unchanged=unchanged)

    def notify(self, store: Store) -> Any:
        return notify(store, slack=self.slack() if self.slack is not None else None)

    def failed(self, step: str, exc: BaseException) -> None:
        """A step raised (it is reported in the CycleReport); Prefect logs its own task failures."""
        log.error("[%s] failed", step, exc_info=exc)


@dataclass
class CycleReport:
    """What one `benchwatch run` did, for people (text) and for exit codes (ok)."""

    outcomes: list[SourceOutcome]
    analysis: dict | None = None
    notification: object | None = None
    errors: list[str] = field(default_factory=list)
    published: PublishedReport | None = None

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
              secrets: Mapping[str, str] | None = None, steps: CycleSteps | None = None) -> CycleReport:
    """collect, analyze (skipped when unchanged), publish the report, notify: the one composition of
    a cycle. `steps` runs each step (default: plain calls, with `secrets` for the sources);
    the Prefect `pipeline` flow passes its task-running steps. Notify still runs after a failed
    analyze (source alerts go out); Slack refusing the digest fails the cycle (it stays queued)."""
    steps = CycleSteps(secrets) if steps is None else steps
    report = CycleReport(steps.collect(store, sources, replay_dir))
    shutdown.check()
    if collect_only:
        return report
    analyze_into(report, steps, store)
    shutdown.check()
    # before notify (the digest links to the page); never fails; a skipped analysis keeps the page
    report.published = steps.publish(store, unchanged=bool(report.analysis and report.analysis.get("skipped")))
    shutdown.check()                # never notify after a stop was asked for
    notify_into(report, steps, store)
    return report


def analyze_into(report: CycleReport, steps: CycleSteps, store: Store) -> None:
    """The analyze step into `report`; a failure is reported (the cycle goes on to notify)."""
    report.analysis = _step(report, steps, "analyze", lambda: steps.analyze(store))


def notify_into(report: CycleReport, steps: CycleSteps, store: Store) -> None:
    """The notify step into `report`. Slack refusing the digest is not raised (the notifications
    stay queued for the next run), but nobody was told: the cycle must not look fine."""
    report.notification = _step(report, steps, "notify", lambda: steps.notify(store))
    if report.notification is not None and getattr(report.notification, "ok", True) is False:
        report.errors.append(f"notify: {str(report.notification).splitlines()[0]}")


def _step(report: CycleReport, steps: CycleSteps, name: str, call: Callable[[], Any]) -> Any:
    """Run one step; its failure is reported, a stop (SIGTERM) is raised."""
    try:
        return call()
    except Exception as exc:  # noqa: BLE001 - reported; notify still runs for source alerts
        if shutdown.requested():    # SIGTERM, turned by DuckDB into "Query interrupted": a stop, not a failure
            raise shutdown.Terminated() from exc
        if connection_lost(exc):    # the DuckLake catalog's server is gone: no later step reaches the store
            raise                   # either; the CLI says so in one line (what was committed is kept)
        steps.failed(name, exc)
        report.errors.append(f"{name} failed: {type(exc).__name__}: {exc}")
        return None


def reparse(store: Store, sources: Sequence[str] | None = None) -> list[SourceOutcome]:
    """Parse again the raw responses kept after parse failures (after a parser fix); no refetch."""
    outcomes = []
    with connect_synced(store) as con:
        pending = unparsed_responses(con, sources)
        for (source, run_id), group in pending.groupby(["source", "run_id"], sort=False):
            scraper = scrapers.get(source)
            order = {Path(u).name: i for i, u in enumerate(scraper.plan())}
            group = group.assign(file_name=group["url"].map(scraper.response_name))
            group = group.sort_values("file_name", key=lambda s: s.map(lambda n: order.get(n, len(order))))
            blobs = [(r.file_name, load_blob(con, r.sha256)) for r in group.itertuples()]
            responses = [Response(name, blob) for name, blob in blobs if blob is not None]
            if len(responses) < len(blobs):     # unparsed_responses lists stored blobs only: a bug if seen
                outcomes.append(SourceOutcome(source, "failed", f"run {run_id}: a kept response is no longer stored"))
                continue
            when = group["started_at"].iloc[0].to_pydatetime()
            try:
                parsed = scraper.parse_checked(responses[0].content, fetched_at=when,
                                               aux={r.file_name: r.content for r in responses[1:]},
                                               filename=responses[0].file_name)
            except ScrapeError as exc:
                outcomes.append(SourceOutcome(source, "failed", f"run {run_id}: still fails: {exc.reason}"))
                continue
            result = store_snapshot(con, parsed, responses, observed_at=when, origin="reparse",
                                    parser_version=scraper.parser_version)
            status = "new" if result.status == "new" else "unchanged"
            outcomes.append(SourceOutcome(source, status, f"run {run_id}: " + result.summary().split(": ", 1)[1],
                                          snapshot_id=result.snapshot_id))
    return outcomes


def analysis_counts(summary: pd.DataFrame | None) -> str:
    """One name and one count per concept: leaderboard tables, and how many of them have a saturation
    index S (a summary row is a table × scope × population; S needs a proportion-like metric with n)."""
    if summary is None or not len(summary) or "table_id" not in summary.columns:
        return "0 leaderboard tables"
    tables = summary["table_id"].nunique()
    indexed = summary.loc[summary["s_index"].notna(), "table_id"].nunique() if "s_index" in summary.columns else 0
    return f"{tables} leaderboard table(s), {indexed} with a saturation index"

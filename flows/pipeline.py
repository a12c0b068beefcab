"""Prefect flows: `collect`, `analyze`, `notify`, and `pipeline` (all three in one run).

The flows are thin, written as Prefect flows are: each calls its tasks in order, and every task
wraps one plain function of the jobs module that owns the step (jobs.collect, jobs.analyze_step,
jobs.alerts; the report is jobs.publish's), which the CLI's `--no-prefect` path
(`jobs.cycle.run_cycle`, the same order as plain calls) and the tests call directly too. What a
step's outcome means is jobs.cycle's, shared by both: `CycleReport` and `reported`.

Final state of a run (the same rule as `CycleReport.ok`, so the CLI's exit code and the
Prefect UI agree):
- Completed when at least one requested source was collected (new or unchanged) and analyze
  and notify, when they ran, did not raise. Sources that failed are listed in the run's
  markdown artifact and, after `SOURCE_FAILING_RUNS` failed runs in a row, alerted on by the
  `source_failing` rule: a flaky leaderboard is data, not an orchestration failure.
- Failed when *every* requested source failed (nothing could be collected: network down,
  wrong replay directory), analyze or notify raised, or Slack refused the digest (it stays
  queued for the next run). Notify still runs after a failed analyze, so source alerts go
  out. The flow returns a Failed state whose message says why and whose data is a `CycleFailed`
  exception carrying the `CycleReport` (no traceback: nothing crashed; Prefect shows the cause),
  and `flows.ephemeral.run_pipeline` hands that report to the CLI. The summary artifact is
  published either way.

Writers never overlap: each flow run holds one slot of the global concurrency limit
`benchwatch-duckdb-writer` (limit 1, created on first use) for its whole duration, so a
scheduled `collect` and a manual `pipeline` queue instead of interleaving their writes.
That needs a Prefect server; in ephemeral mode (`benchwatch run` with no PREFECT_API_URL)
each process starts its own temporary server, so the guard is skipped and DuckDB's
single-writer file lock, which `storage.db` waits on, keeps writes apart.

This module is what a deployment's flow-run process imports (prefect.yaml's entrypoints), so it
imports nothing of Prefect's server: the temporary server and the in-process run of `benchwatch
run` are flows/ephemeral.py's.
"""

from __future__ import annotations

import logging
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Iterator, Literal, Sequence

from pydantic import AfterValidator, Field
from prefect import flow, get_run_logger, task
from prefect.artifacts import create_link_artifact, create_markdown_artifact, create_table_artifact
from prefect.client.orchestration import get_client
from prefect.client.schemas.actions import GlobalConcurrencyLimitCreate
from prefect.concurrency.sync import concurrency
from prefect.exceptions import ObjectAlreadyExists, ObjectNotFound
from prefect.runtime import flow_run, task_run
from prefect.settings import get_current_settings
from prefect.states import Failed, State

import jobs.alerts
import jobs.analyze_step
import jobs.collect
import jobs.publish
import scrapers
from common import settings, shutdown
from common import redact
from common.console import REPORTED
from common.time import utcnow
from flows.artifacts import SATURATION_COLUMNS, saturation_rows, summary_markdown  # noqa: F401 - re-exported
from flows.secrets import (DB_PATH_PASSWORD_REFUSED, db_password, lake_password_from_block, slack_settings,
                           source_secrets)
from jobs.collect import SourceOutcome
from jobs.cycle import CycleReport, DatabaseLocked, reported
from jobs.publish import PublishedReport
from jobs.store import LAKE_URL_WITH_PASSWORD, Store, open_store

log = logging.getLogger("benchwatch.flows")
# At import, before a worker's flow-run process validates parameters: Prefect logs refused ones verbatim.
redact.install()

# --- schedules (prefect.yaml and `benchwatch serve` both use these; a test keeps them equal) ---
TIMEZONE = "UTC"
PIPELINE_DEPLOYMENT, PIPELINE_CRON = "daily", "0 6 * * *"     # collect + analyze + notify, 06:00 UTC
COLLECT_DEPLOYMENT, COLLECT_CRON = "hourly", "15 * * * *"     # collect only, quarter past each hour
MANUAL_DEPLOYMENT = "manual"                                  # analyze, notify: no schedule

# --- what Prefect keeps --------------------------------------------------------------------------
# Results are not persisted (persist_result=False on every task and flow, whatever
# PREFECT_RESULTS_PERSIST_BY_DEFAULT says): nothing reads them back, a run's outcome is in DuckDB
# and in its artifacts, and the caller of an in-process run gets the value in memory. Hence no
# Prefect task caching either (it needs persisted results): an unchanged analysis is skipped by
# benchwatch's own input fingerprint (storage/fingerprint.py), which covers the stored data,
# not the task's parameters (a db_path whose content changed would hit a parameter-keyed cache).

# --- collection task limits ---------------------------------------------------------------------
# scrapers.http.Fetcher already retries each URL (4 attempts within 180 s). These task retries
# are the second layer, for an outage longer than that: a source that is still unreachable is
# tried again after about 1 and 5 minutes. Parse errors are deterministic and never retried.
COLLECT_RETRIES = 2
COLLECT_RETRY_DELAYS_SECONDS: list[float] = [60, 300]
COLLECT_RETRY_JITTER = 0.2
# Worst case of one source's fetches (per URL: 4 attempts x (10 s connect + 60 s read) plus the
# 180 s retry budget; two URLs for livebench/lmarena/alpacaeval), with margin.
COLLECT_TIMEOUT_SECONDS = 20 * 60
# The same bound for the whole collection (`collect_task`): a normal one takes seconds to a few
# minutes, so one that outlasts a single source's worst case has a hung source; the sources
# are then collected again one task each, and that one is cut off by its own timeout.
COLLECT_ALL_TIMEOUT_SECONDS = COLLECT_TIMEOUT_SECONDS

# --- writer guard ---------------------------------------------------------------------------------
WRITER_LIMIT = "benchwatch-duckdb-writer"
# How long a run waits for another run to finish writing before it fails.
WRITER_WAIT_SECONDS = 2 * 60 * 60

# --- artifact keys (Prefect allows lowercase letters, digits and dashes) -----------------------
SATURATION_ARTIFACT = "benchwatch-saturation"
SUMMARY_ARTIFACT = "benchwatch-{flow}-summary"
REPORT_ARTIFACT = "benchwatch-report"              # the overview: -overview (table) and markdown
REPORT_LINK_ARTIFACT = "benchwatch-report-link"    # a link to the published HTML page


# --- parameters -------------------------------------------------------------------------------------

def _check_sources(names: list[str] | None) -> list[str] | None:
    """Known, fetchable, without repeats (order kept)."""
    if names is None:
        return None
    local_only = [n for n in names if not scrapers.get(n).urls]
    if local_only:
        raise ValueError(f"{', '.join(local_only)}: no URLs to collect (local files only: use `benchwatch ingest`)")
    return list(dict.fromkeys(names))


def _check_replay_dir(path: str | None) -> str | None:
    if path is not None and not path.strip():
        raise ValueError("replay_dir is empty (leave it unset to fetch live)")
    if path is not None and not Path(path).is_dir():
        raise ValueError(f"replay_dir {path!r} is not a directory (expected DIR/<source>/<file name of the URL>)")
    return path


def _check_db_path(path: str | None) -> str | None:
    """No PostgreSQL password in a parameter (`benchwatch run` moves it to PGPASSWORD). The
    message never quotes the value; the run this refuses was created with it, so a deployment
    run that carries one is refused before it touches the store, not erased from Prefect."""
    if db_password(path) is not None:
        raise ValueError(DB_PATH_PASSWORD_REFUSED)
    return path


# Parameter types: validated by pydantic when a run starts (Prefect builds the model from the
# flow signature); the server also checks the JSON schema (e.g. the source enum) when a
# deployment run is created.
SourceName = Literal[scrapers.SOURCES]  # type: ignore[valid-type]  # the UI offers these as choices
# A DuckLake URL with a password (keyword, URI userinfo or ?password=): the same rule in the
# parameter schema, so that the server refuses such a deployment run before it stores it
# (enforce_parameter_schema, Prefect's default); `type: string` keeps null allowed.
DB_PATH_WITH_PASSWORD = LAKE_URL_WITH_PASSWORD
DbPath = Annotated[str | None, Field(min_length=1, json_schema_extra={
    "not": {"type": "string", "pattern": DB_PATH_WITH_PASSWORD}}), AfterValidator(_check_db_path)]
SourceList = Annotated[list[SourceName] | None, Field(min_length=1), AfterValidator(_check_sources)]
ReplayDir = Annotated[str | None, AfterValidator(_check_replay_dir)]


class CycleFailed(Exception):
    """A run that did not do its job (see the module docstring), carrying its `CycleReport`.

    The Failed state of such a run holds this exception as its data, so Prefect (a worker, the
    UI, `state.result()`) shows the cause; a Failed state whose data is not an exception makes
    Prefect itself fail with "Unexpected result for failed state". `flows.ephemeral.run_pipeline`
    unwraps the report for the CLI.
    """

    def __init__(self, message: str, report: CycleReport):
        super().__init__(message, report)        # both in args: the exception pickles with its report
        self.message = message
        self.report = report

    def __str__(self) -> str:
        return self.message


def failure_message(report: CycleReport) -> str:
    """Why a run did not do its job (see the module docstring), for the Failed state's message."""
    failed = [o.source for o in report.outcomes if o.status == "failed"]
    reasons = list(report.errors)
    if failed and len(failed) == len(report.outcomes):
        reasons.insert(0, f"every source failed ({', '.join(failed)})")
    return "; ".join(reasons) or "cycle failed"


# --- writer guard -------------------------------------------------------------------------------------

def ensure_writer_limit() -> None:
    """Create the `benchwatch-duckdb-writer` limit (1 slot) unless it exists; keeps an existing one as is."""
    with get_client(sync_client=True) as client:
        try:
            client.read_global_concurrency_limit_by_name(WRITER_LIMIT)
            return
        except ObjectNotFound:
            pass
        try:
            client.create_global_concurrency_limit(GlobalConcurrencyLimitCreate(name=WRITER_LIMIT, limit=1))
            log.info("[flows] created global concurrency limit %s (1 slot)", WRITER_LIMIT)
        except ObjectAlreadyExists:  # another run created it meanwhile
            pass


def server_configured() -> bool:
    """A Prefect API is configured (PREFECT_API_URL): not the ephemeral mode of `benchwatch run`."""
    return get_current_settings().api.url is not None


@contextmanager
def writer_slot() -> Iterator[None]:
    """Hold the database-writer slot for the body (a no-op in ephemeral mode, see the module doc)."""
    if not server_configured():
        yield
        return
    ensure_writer_limit()
    with concurrency(WRITER_LIMIT, occupy=1, timeout_seconds=WRITER_WAIT_SECONDS, strict=True):
        yield


# --- tasks --------------------------------------------------------------------------------------------

class SourceUnreachable(Exception):
    """A live source that could not be reached after the HTTP layer's retries (worth retrying later)."""

    def __init__(self, outcome: SourceOutcome):
        super().__init__(f"[{outcome.source}] {outcome.detail}")
        self.outcome = outcome


def _retry_transient(task_: Any, task_run: Any, state: State) -> bool:
    """Retry only what time can fix: an unreachable site, or a database held by another process
    (`DatabaseLocked`). Any other StorageError (an unwritable file, a damaged database, a schema
    from a newer benchwatch) is permanent: retrying it would only delay the failure by minutes."""
    return isinstance(state.data, (SourceUnreachable, DatabaseLocked))


@task(name="collect", persist_result=False, timeout_seconds=COLLECT_ALL_TIMEOUT_SECONDS)
def collect_task(store: Store, sources: list[str], replay_dir: str | None, run_id: str) -> list[SourceOutcome]:
    """Every source in one task: `jobs.collect`, as `run --no-prefect` does (one connection settles
    all unchanged sources). One task, not one per source: each task run costs Prefect's
    bookkeeping and a database open, which made an unchanged deployed cycle several times the work."""
    # the sources' secrets are resolved here, inside the task run, never passed as a parameter
    # (Prefect stores parameters with the run)
    secrets = None if replay_dir is not None else source_secrets(sources)
    return jobs.collect.collect(store, sources, replay_dir=replay_dir, run_id=run_id, secrets=secrets)


@task(name="collect-source", task_run_name="collect-{source}", retries=COLLECT_RETRIES,
      retry_delay_seconds=COLLECT_RETRY_DELAYS_SECONDS, retry_jitter_factor=COLLECT_RETRY_JITTER,
      retry_condition_fn=_retry_transient, timeout_seconds=COLLECT_TIMEOUT_SECONDS, persist_result=False)
def collect_source_task(store: Store, source: str, replay_dir: str | None, run_id: str,
                        first: SourceOutcome | None = None) -> SourceOutcome:
    """One source in its own task: the retries of a source `collect_task` could not reach (`first`,
    its outcome there, is that task's first attempt: only the retries fetch again), or every
    source on its own when `collect_task` itself failed (a crash, its timeout)."""
    if first is not None and task_run.run_count <= 1:
        raise SourceUnreachable(first)
    secrets = None if replay_dir is not None else source_secrets([source])
    outcome = jobs.collect.collect_source(store, source, replay_dir=replay_dir, run_id=run_id, secrets=secrets)
    if _transient(outcome, replay_dir):
        raise SourceUnreachable(outcome)
    return outcome


def _transient(outcome: SourceOutcome, replay_dir: str | None) -> bool:
    """Worth a task retry minutes later: a flaky site, not a machine without DNS (offline), not a replay."""
    return outcome.status == "failed" and outcome.unreachable and not outcome.offline and replay_dir is None


@task(name="analyze", persist_result=False)
def analyze_task(store: Store, skip_unchanged: bool = False) -> dict:
    """`jobs.analyze_step` (with the levels it changed, for the artifacts)."""
    return jobs.analyze_step.analyze_step(store, skip_unchanged=skip_unchanged)


@task(name="notify", persist_result=False)
def notify_task(store: Store) -> Any:
    """`jobs.alerts.run_notify`; Slack's secrets are resolved here, inside the task run, never
    passed as a parameter."""
    return jobs.alerts.run_notify(store, now=utcnow(), settings=slack_settings())


def _outcome_from_state(source: str, state: State) -> SourceOutcome:
    """The task's SourceOutcome, or a failed one saying why the task failed."""
    if not state.is_failed() and not state.is_crashed():
        return state.result()
    exc = state.result(raise_on_failure=False)
    if isinstance(exc, SourceUnreachable):
        return exc.outcome
    if isinstance(exc, BaseException):
        return SourceOutcome(source, "failed", f"{type(exc).__name__}: {exc}")
    return SourceOutcome(source, "failed", state.message or state.name or "task failed")


def collect_sources(store: Store, sources: Sequence[str] | None, replay_dir: str | None) -> list[SourceOutcome]:
    """The collection as one task (`collect_task`); a task of its own per source only for the
    retries of an unreachable one, or for every source when the collection task failed."""
    names = jobs.collect.requested_sources(sources)
    run_id = str(flow_run.get_id() or "")
    state = collect_task(store, names, replay_dir, run_id, return_state=True)
    if state.is_failed() or state.is_crashed():    # Prefect logged why; each source on its own now
        return [_outcome_from_state(name, collect_source_task(store, name, replay_dir, run_id,
                                                              return_state=True)) for name in names]
    outcomes: list[SourceOutcome] = state.result()
    return [_outcome_from_state(o.source, collect_source_task(store, o.source, replay_dir, run_id, first=o,
                                                              return_state=True))
            if _transient(o, replay_dir) else o for o in outcomes]


# --- artifacts ----------------------------------------------------------------------------------------

def _publish(report: CycleReport, flow_name: str) -> None:
    if report.analysis is not None:
        rows = saturation_rows(report.analysis.get("saturation"), report.analysis.get("levels"))
        if rows:
            create_table_artifact(key=SATURATION_ARTIFACT, table=rows,
                                  description="Saturation level per leaderboard table and population after this run")
    create_markdown_artifact(key=SUMMARY_ARTIFACT.format(flow=flow_name), markdown=summary_markdown(report, flow_name),
                             description=f"benchwatch {flow_name}: what changed, failed sources, alerts, errors")


def _publish_report(store: Store, *, now: datetime | None = None, report_dir: str | None = None,
                    unchanged: bool = False) -> PublishedReport | None:
    """The cycle's publish step (jobs.publish: the HTML page, when BENCHWATCH_REPORT_DIR is set)
    with the overview as Prefect artifacts (a table and markdown) and, inside a flow run, a link
    artifact to the page. Never fails the run."""
    published = jobs.publish.publish_report(store, now=now, report_dir=report_dir, overview=True,
                                            unchanged=unchanged)
    if published is None:
        return None
    try:
        if published.overview_rows:
            create_table_artifact(key=REPORT_ARTIFACT + "-overview", table=published.overview_rows,
                                  description="Saturation overview: level, S, top-k, staleness per benchmark")
        if published.overview_markdown is not None:
            create_markdown_artifact(key=REPORT_ARTIFACT, markdown=published.overview_markdown,
                                     description="benchwatch report overview")
        if published.url and flow_run.get_id():
            create_link_artifact(key=REPORT_LINK_ARTIFACT, link=published.url, link_text="benchwatch report",
                                 description="The HTML report published by this run")
    except Exception as exc:   # noqa: BLE001 - artifacts are a by-product too
        log.warning("[flows] report artifacts not published: %s: %s", type(exc).__name__, exc)
    return published


def publish_report(db_path: str | None, *, now: datetime | None = None,
                   report_dir: str | None = None) -> Path | None:
    """The report after an analysis (`_publish_report`); the path of the page written, if any."""
    published = _publish_report(open_store(db_path), now=now, report_dir=report_dir)
    return None if published is None else published.path


def _finish(report: CycleReport, flow_name: str) -> CycleReport | State:
    _publish(report, flow_name)
    logger = get_run_logger()
    for line in report.text().splitlines():   # the CLI prints the report itself: once on its terminal
        logger.info(line, extra=REPORTED)
    if not report.ok:
        message = failure_message(report)
        return Failed(message=message, data=CycleFailed(message, report))
    return report


# --- flows ----------------------------------------------------------------------------------------------
# The Args sections become the parameter descriptions in the Prefect UI.

def _show_package_logs() -> None:
    """Let benchwatch's INFO records through in worker and served runs: Prefect attaches its
    handlers to the `benchwatch` logger (PREFECT_LOGGING_EXTRA_LOGGERS) but leaves its level at
    the root's WARNING. A level the CLI set (`benchwatch -v run`) is kept."""
    redact.install()       # worker processes do not go through the CLI's logging setup
    package = logging.getLogger("benchwatch")
    if package.level == logging.NOTSET:
        package.setLevel(logging.INFO)


def _start(db_path: str | None) -> Store:
    """What every flow does first: benchwatch's logs on, the lake's password from a Secret block;
    then the store `db_path` names, made once for the run's tasks."""
    _show_package_logs()
    lake_password_from_block(db_path or settings.read().db)
    return open_store(db_path)


@flow(name="collect", persist_result=False, description="Fetch every requested source (or replay recorded responses) into DuckDB.")
def collect(db_path: DbPath = None, sources: SourceList = None, replay_dir: ReplayDir = None) -> CycleReport | State:
    """Collect sources into DuckDB.

    Args:
        db_path: DuckDB file or ducklake:postgres:<conninfo> without a password (docs/deploy.md); default $BENCHWATCH_DB, else ./benchwatch.duckdb in the run's working directory.
        sources: Sources to collect; default every enabled source.
        replay_dir: Read responses from REPLAY_DIR/<source>/<last URL segment> instead of the network.
    """
    store = _start(db_path)
    with writer_slot():
        report = CycleReport(collect_sources(store, sources, replay_dir))
    return _finish(report, "collect")


@flow(name="analyze", persist_result=False, description="Recompute saturation and contamination signals from the stored history.")
def analyze(db_path: DbPath = None) -> CycleReport | State:
    """Recompute the analysis tables.

    Args:
        db_path: DuckDB file or ducklake:postgres:<conninfo> without a password (docs/deploy.md); default $BENCHWATCH_DB, else ./benchwatch.duckdb in the run's working directory.
    """
    store = _start(db_path)
    report = CycleReport([])
    with writer_slot(), reported(report, "analyze", store, log_failure=False):
        report.analysis = analyze_task(store, skip_unchanged=False)   # asked for: always computed
    return _finish(report, "analyze")


@flow(name="notify", persist_result=False, description="Evaluate the alert rules and deliver new notifications (Slack or console).")
def notify(db_path: DbPath = None) -> CycleReport | State:
    """Evaluate alerts and deliver them.

    Args:
        db_path: DuckDB file or ducklake:postgres:<conninfo> without a password (docs/deploy.md); default $BENCHWATCH_DB, else ./benchwatch.duckdb in the run's working directory.
    """
    store = _start(db_path)
    report = CycleReport([])
    with writer_slot(), reported(report, "notify", store, log_failure=False):
        report.notification = notify_task(store)
    return _finish(report, "notify")


@flow(name="pipeline", persist_result=False, description="collect, analyze (skipped when unchanged), publish the report, notify: one run holding the writer slot.")
def pipeline(db_path: DbPath = None, sources: SourceList = None, replay_dir: ReplayDir = None,
             collect_only: bool = False) -> CycleReport | State:
    """One full cycle.

    Args:
        db_path: DuckDB file or ducklake:postgres:<conninfo> without a password (docs/deploy.md); default $BENCHWATCH_DB, else ./benchwatch.duckdb in the run's working directory.
        sources: Sources to collect; default every enabled source.
        replay_dir: Read responses from REPLAY_DIR/<source>/<last URL segment> instead of the network.
        collect_only: Stop after collecting (no analysis, no alerts).
    """
    store = _start(db_path)
    with writer_slot():   # the order of `benchwatch run --no-prefect` (jobs.cycle.run_cycle), each step a task
        report = CycleReport(collect_sources(store, sources, replay_dir))
        shutdown.check()
        if not collect_only:
            with reported(report, "analyze", store, log_failure=False):
                report.analysis = analyze_task(store, skip_unchanged=True)
            shutdown.check()
            # before notify (the digest links to the page); never fails; a skipped analysis keeps the page
            report.published = _publish_report(store, unchanged=report.analysis_skipped)
            shutdown.check()                # never notify after a stop was asked for
            with reported(report, "notify", store, log_failure=False):
                report.notification = notify_task(store)
    return _finish(report, "pipeline")

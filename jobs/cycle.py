"""The plain functions behind the CLI and the Prefect tasks: ingest a file, collect sources.

Each opens the database only for its writes (DuckDB allows one writing process), so a
slow fetch never holds the file lock.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Sequence

import pandas as pd

import scrapers
from common.time import to_utc, utcnow
from scrapers.base import ParsedSnapshot, ScrapeError
from scrapers.http import FetchResult, Fetcher, FileRefused, ReplayFetcher, fetch_source, read_capped
from storage import db, lake
from storage.ingest import (IngestResult, known_snapshot, parse_observed_at, record_fetches, Response,
                            store_blobs, store_snapshot)
from storage.reads import previous_validators
from storage.registry_sync import connect_synced
from storage.csv_ingest import FileStamp, ingest_csv
from scrapers.csv import CsvLayout, native_layout

CSV_SOURCE = "csv"     # the generic long-format CSV: read and validated inside DuckDB when it can be

log = logging.getLogger("benchwatch.jobs")


def new_run_id() -> str:
    """Groups the fetches of one collection (Prefect runs pass their flow-run id instead)."""
    import uuid
    return f"local-{uuid.uuid4()}"


def ingest_file(db_path: str | os.PathLike | None, source: str, path: str | os.PathLike, *,
                aux_paths: Sequence[str | os.PathLike] = (), observed_at: datetime | str | None = None,
                native: bool = True) -> IngestResult:
    """Parse a saved copy of a source's response and store it as a snapshot.

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
        result = _ingest_csv(db_path, primary, stamp, layout, responses, when, scraper.parser_version)
        if result is not None:
            return result
    parsed = scraper.parse_checked(responses[0].content, fetched_at=when,
                                   aux={r.file_name: r.content for r in responses[1:]},
                                   filename=responses[0].file_name)
    with connect_synced(db_path) as con:
        result = store_snapshot(con, parsed, responses, observed_at=when, origin="ingest",
                                parser_version=scraper.parser_version)
        if result.status == "new":
            _record_ingest(con, source, primary, responses[0], when, result)
    return result


def _ingest_csv(db_path: str | os.PathLike | None, primary: Path, stamp: FileStamp, layout: CsvLayout,
                responses: list[Response], when: datetime, parser_version: int) -> IngestResult | None:
    """`storage.csv_ingest` into the database; None when the pandas path must read the file (nothing
    written). A database that does not exist yet is created beside its path and put in place only
    when the file was stored: a file that fails creates nothing, as on the pandas path (which
    parses before it opens the database)."""
    def store(con) -> IngestResult | None:
        result = ingest_csv(con, primary, stamp, layout, responses, observed_at=when, origin="ingest",
                            parser_version=parser_version)
        if result is not None and result.status == "new":
            _record_ingest(con, CSV_SOURCE, primary, responses[0], when, result)
        return result

    url = str(db_path or db.default_path())
    target = Path(url)
    if not lake.is_lake_url(url) and not target.exists():   # a lake catalog is never "created" by a file
        try:
            with db.new_database(target) as new:
                try:
                    with connect_synced(new.path) as con:
                        result = store(con)
                except BaseException:    # past parsing (a refused date, …): the pandas path had opened it too
                    new.keep()
                    raise
                if result is not None:
                    new.keep()
            return result
        except FileExistsError:      # another process created it meanwhile: store into that one
            pass
    with connect_synced(url) as con:
        return store(con)


def _record_ingest(con, source: str, primary: Path, response: Response, when: datetime, result: IngestResult) -> None:
    record_fetches(con, pd.DataFrame([{
        "source": source, "url": f"file://{primary.resolve()}", "started_at": when, "finished_at": utcnow(),
        "status": "ok", "bytes": len(response.content), "sha256": result.sha256}]))


def replay_dir_problem(path: str | os.PathLike | None, sources: Sequence[str] | None = None) -> str | None:
    """Why `path` cannot be a replay directory for `sources` (None when it can, or when no replay).

    Checked before anything runs: a mistyped directory would otherwise record every source as
    a real fetch failure (and, after a few runs, fire `source_failing` alerts), and an empty
    string would silently fall back to the network.
    """
    if path is None:
        return None
    if not str(path).strip():
        return "--replay needs a directory (an empty value would fetch live)"
    directory = Path(path)
    if not directory.is_dir():
        return f"--replay {path}: not a directory (expected DIR/<source>/<file>, e.g. tests/fixtures/replay)"
    names = list(sources) if sources else scrapers.enabled_sources()
    present = [n for n in names if (directory / n).is_dir()]
    if not present:
        return (f"--replay {path}: no recorded responses for {', '.join(names)} "
                f"(expected DIR/<source>/<file>, e.g. tests/fixtures/replay)")
    return None


@dataclass
class SourceOutcome:
    """What one source did in one collection: new snapshot / unchanged / failed (with the reason)."""

    source: str
    status: str                      # new | unchanged | failed
    detail: str
    snapshot_id: int | None = None
    unreachable: bool = False
    offline: bool = False            # every failure was a host name that did not resolve
    counts: dict = field(default_factory=dict)

    def line(self) -> str:
        return f"{self.source:<18} {self.status:<10} {self.detail}"


def _attempt_rows(run_id: str, source: str, results: list[FetchResult], final_status: dict[str, str],
                  error: dict[str, str]) -> pd.DataFrame:
    rows = []
    for r in results:
        for i, a in enumerate(r.attempts):
            last = i == len(r.attempts) - 1
            rows.append({"run_id": run_id, "source": source, "url": a.url, "started_at": a.started_at,
                         "finished_at": a.finished_at,
                         "status": final_status.get(r.url, a.status) if last else a.status,
                         "http_status": a.http_status, "bytes": a.bytes,
                         "sha256": r.sha256 if last else None, "etag": r.etag if last else None,
                         "last_modified": r.last_modified if last else None,
                         "error": error.get(r.url, a.error) if last else a.error})
    return pd.DataFrame(rows)


@dataclass
class _Collection:
    """One source's collection in progress: fetched with no database connection open, then
    settled (content already stored), parsed (still with none open) and recorded."""

    source: str
    scraper: scrapers.Scraper
    origin: str                          # "replay" | "fetch"
    results: list[FetchResult] = field(default_factory=list)
    responses: list[Response] = field(default_factory=list)
    outcome: SourceOutcome | None = None
    parsed: ParsedSnapshot | None = None   # when there is something new to store
    final_status: dict[str, str] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)


def _fetch(source: str, scraper: scrapers.Scraper, fetcher: Fetcher | ReplayFetcher, previous: dict,
           origin: str) -> _Collection:
    c = _Collection(source, scraper, origin)
    try:
        c.results = fetch_source(scraper, fetcher, previous)
    except ScrapeError as exc:
        c.outcome = SourceOutcome(source, "failed", exc.reason)
        return c
    failed = [r for r in c.results if r.status == "error"]
    if failed:
        c.outcome = SourceOutcome(source, "failed", "; ".join(r.error or "fetch failed" for r in failed),
                                  unreachable=all(r.http_status is None for r in failed),
                                  offline=all(r.unresolved for r in failed))
    elif c.results[0].status == "not_modified":
        c.outcome = SourceOutcome(source, "unchanged", "not modified (HTTP 304)")
    else:
        c.responses = [Response(r.file_name, r.content or b"") for r in c.results]
    return c


def _settle_known(con, c: _Collection) -> None:
    """Content already stored needs no parse: 'unchanged' (and the snapshot marked as seen)."""
    if c.outcome is not None:
        return
    known = known_snapshot(con, c.source, c.responses, origin=c.origin)
    if known is not None:
        c.outcome = SourceOutcome(c.source, "unchanged", f"same content as snapshot {known.snapshot_id}",
                                  snapshot_id=known.snapshot_id)


def _parse(c: _Collection) -> None:
    """Parse new content, with no database connection open (the writer lock is held only to write)."""
    if c.outcome is not None:
        return
    primary = c.results[0]
    try:
        c.parsed = c.scraper.parse_checked(c.responses[0].content, fetched_at=primary.finished_at,
                                           aux={r.file_name: r.content for r in c.responses[1:]},
                                           filename=c.responses[0].file_name)
        c.outcome = SourceOutcome(c.source, "new", "")
    except ScrapeError as exc:
        c.final_status[primary.url] = "parse_error"
        c.errors[primary.url] = exc.reason
        kept = ("raw response kept for re-parsing" if c.origin == "fetch"
                else "a local file is not kept: fix it or the parser and run again")
        c.outcome = SourceOutcome(c.source, "failed", f"{exc.reason} ({kept})")


def _record_fetches(con, collections: Sequence[_Collection], run_id: str) -> None:
    """The fetch attempts of these collections in one insert, and the raw responses of those
    that failed over HTTP (kept for `reparse`); in the caller's transaction."""
    for c in collections:
        # Only what came over HTTP is kept: a replayed file that failed may be anything a link
        # pointed at (/proc/self/environ), and the file is still there to read again.
        if c.outcome is not None and c.outcome.status == "failed" and c.responses and c.origin == "fetch":
            store_blobs(con, c.responses)
    record_fetches(con, pd.concat([_attempt_rows(run_id, c.source, c.results, c.final_status, c.errors)
                                   for c in collections], ignore_index=True))


def _log(outcome: SourceOutcome) -> SourceOutcome:
    level = logging.WARNING if outcome.status == "failed" else logging.INFO
    log.log(level, "[%s] %s: %s", outcome.source, outcome.status, outcome.detail)
    return outcome


def _record(con, c: _Collection, run_id: str) -> SourceOutcome:
    """The fetch attempts, the raw responses of a failed parse, and a new snapshot (`con` is
    registry-synced when there is one: `connect_synced`)."""
    outcome = c.outcome
    assert outcome is not None
    with db.transaction(con):
        _record_fetches(con, [c], run_id)
    if c.parsed is not None:
        result = store_snapshot(con, c.parsed, c.responses, observed_at=c.results[0].finished_at,
                                origin=c.origin, parser_version=c.scraper.parser_version)
        outcome.snapshot_id = result.snapshot_id
        if result.status == "unchanged":
            outcome.status, outcome.detail = "unchanged", f"same content as snapshot {result.snapshot_id}"
        else:
            outcome.detail = result.summary().split(": ", 1)[1]
            outcome.counts = {"scores": result.n_scores, "items": result.n_items, "models": result.n_models,
                              "rejects": result.n_rejects}
    return _log(outcome)


def _parse_and_store(db_path: str | os.PathLike | None, c: _Collection, run_id: str) -> SourceOutcome:
    """The rest of a collection whose content is not stored yet: parse, then one write connection
    (registry-synced only when there is a snapshot to store)."""
    _parse(c)
    with (connect_synced if c.parsed is not None else db.connect)(db_path) as con:
        return _record(con, c, run_id)


def collect_source(db_path: str | os.PathLike | None, source: str, *, replay_dir: str | os.PathLike | None = None,
                   run_id: str = "", fetcher: Fetcher | None = None) -> SourceOutcome:
    """Fetch one source (live or replayed), store a new snapshot if its content changed."""
    scraper = scrapers.get(source)
    run_id = run_id or new_run_id()
    previous: dict = {}
    if replay_dir is None and scraper.plan():
        with db.connect(db_path) as con:
            previous = previous_validators(con, source, scraper.plan()[0])
    own = fetcher is None
    using: Fetcher | ReplayFetcher = (ReplayFetcher(Path(replay_dir)) if replay_dir is not None
                                      else (fetcher or Fetcher()))
    try:
        c = _fetch(source, scraper, using, previous, "replay" if replay_dir is not None else "fetch")
    finally:
        if own:
            using.close()
    if c.outcome is not None and not c.results:     # nothing fetched (the plan failed): nothing to record
        return c.outcome
    with db.connect(db_path) as con, db.transaction(con):   # unchanged content: settled and recorded at once
        _settle_known(con, c)
        if c.outcome is not None:
            _record_fetches(con, [c], run_id)
    if c.outcome is not None:
        return _log(c.outcome)
    return _parse_and_store(db_path, c, run_id)


def collect(db_path: str | os.PathLike | None, sources: Sequence[str] | None = None, *,
            replay_dir: str | os.PathLike | None = None, run_id: str = "") -> list[SourceOutcome]:
    """Collect every requested source; one failing source never stops the others.

    Every source is fetched first with no connection open; one write connection then settles
    and records all that is unchanged or failed (an unchanged cycle opens the file once), and
    each source with new content is parsed with none open and stored in a connection of its own.
    """
    names = list(sources) if sources else scrapers.enabled_sources()
    run_id = run_id or new_run_id()
    origin = "replay" if replay_dir is not None else "fetch"
    outcomes: dict[str, SourceOutcome] = {}
    planned: dict[str, scrapers.Scraper] = {}
    for name in names:
        try:
            planned[name] = scrapers.get(name)
        except ScrapeError as exc:
            outcomes[name] = SourceOutcome(name, "failed", exc.reason)
    previous: dict[str, dict] = {}
    if replay_dir is None:
        with db.connect(db_path) as con:   # conditional-GET validators of every source, then no connection
            previous = {n: previous_validators(con, n, s.plan()[0]) for n, s in planned.items() if s.plan()}
    fetcher: Fetcher | ReplayFetcher = ReplayFetcher(Path(replay_dir)) if replay_dir is not None else Fetcher()
    try:
        fetched = [_fetch(n, s, fetcher, previous.get(n, {}), origin) for n, s in planned.items()]
    finally:
        fetcher.close()
    pending, settled = [], []
    with db.connect(db_path) as con, db.transaction(con):   # one commit for every unchanged source
        for c in fetched:
            _settle_known(con, c)
            if c.outcome is None:
                pending.append(c)
            elif c.results:
                settled.append(c)
            else:                     # nothing fetched (the plan failed): nothing to record
                outcomes[c.source] = c.outcome
        if settled:
            _record_fetches(con, settled, run_id)
    outcomes.update((c.source, _log(c.outcome)) for c in settled if c.outcome is not None)
    for c in pending:
        try:
            outcomes[c.source] = _parse_and_store(db_path, c, run_id)
        except ScrapeError as exc:
            outcomes[c.source] = SourceOutcome(c.source, "failed", exc.reason)
        c.responses = []     # the bodies are not needed any longer
    return [outcomes[n] for n in names]


def analyze(db_path: str | os.PathLike | None, *, now: datetime | None = None,
            skip_unchanged: bool = False) -> dict:
    """Recompute saturation (history, trends) and contamination signals from the stored data.

    With `skip_unchanged` (the cycle's `run`), an analysis whose inputs hash to the fingerprint of
    the last completed one (storage.fingerprint: stored data, registry, analysis code and
    constants, the UTC day) is not recomputed: the stored results are returned ("skipped": True).
    """
    from storage import fingerprint as fp
    from storage.saturation import read_saturation_latest
    now = now or utcnow()
    with connect_synced(db_path) as con:
        key = fp.input_fingerprint(con, _analysis_parameters(now))
        summary = fp.stored_summary(con) if skip_unchanged and fp.stored_fingerprint(con) == key else None
        if summary is not None:
            from storage.contamination import read_suspects
            log.info("[analyze] inputs unchanged since the last analysis: stored results kept")
            return {"saturation": pd.DataFrame(summary), "suspects": read_suspects(con),
                    "levels": read_saturation_latest(con), "skipped": True}
        from jobs.contamination import run_contamination   # scipy and the analysis: only when computing
        from jobs.saturation import run_saturation
        fp.clear_fingerprint(con)
        saturation = run_saturation(con, now=now)
        suspects = run_contamination(con, now=now)
        levels = read_saturation_latest(con)
        fp.store_fingerprint(con, key, utcnow(), summary=saturation.to_dict(orient="records"))
    return {"saturation": saturation, "suspects": suspects, "levels": levels, "skipped": False}


def _analysis_parameters(now: datetime) -> dict:
    """What an analysis depends on besides stored data: its code, its constants, the UTC day."""
    import hashlib
    import analysis
    import storage
    from analysis import constants
    code = hashlib.sha256()
    roots = [Path(analysis.__file__).parent, Path(__file__).parent, Path(storage.__file__).parent]
    for path in sorted(p for root in roots for p in root.rglob("*.py")):
        code.update(path.read_bytes())
    consts = {k: v for k, v in vars(constants).items() if k.isupper()}
    return {"code": code.hexdigest(), "constants": consts, "day": to_utc(now).date().isoformat()}


def notify(db_path: str | os.PathLike | None, *, now: datetime | None = None):
    """Evaluate alert rules on the stored analysis and deliver what is new (Slack or console)."""
    from jobs.alerts import run_notify
    return run_notify(db_path, now=now or utcnow())


def flagged_suspects(suspects: pd.DataFrame | None) -> pd.DataFrame:
    """The tests of an analysis that raised a suspicion (any status but not_flagged)."""
    if suspects is None or "status" not in suspects.columns:
        return pd.DataFrame()
    return suspects[suspects["status"] != "not_flagged"]


@dataclass
class CycleReport:
    """What one `benchwatch run` did, for people (text) and for exit codes (ok)."""

    outcomes: list[SourceOutcome]
    analysis: dict | None = None
    notification: object | None = None
    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        collected = any(o.status != "failed" for o in self.outcomes) or not self.outcomes
        return collected and not self.errors

    def text(self) -> str:
        lines = ["collect:"] + ["  " + o.line() for o in self.outcomes]
        unreachable = [o.source for o in self.outcomes if o.unreachable]
        if self.outcomes and all(o.offline for o in self.outcomes):
            lines.append("  no source host name resolved: this machine looks offline "
                         "(try `benchwatch run --replay tests/fixtures/replay`)")
        elif unreachable:
            lines.append(f"  unreachable: {', '.join(unreachable)}")
        if self.analysis is not None:
            sat = self.analysis.get("saturation")
            flagged = flagged_suspects(self.analysis.get("suspects"))
            kept = " (inputs unchanged: stored results kept)" if self.analysis.get("skipped") else ""
            lines.append(f"analyze: saturation for {0 if sat is None else len(sat)} benchmark(s); "
                         f"{len(flagged)} contamination-suspect flag(s){kept}")
        if self.notification is not None:
            lines.append(f"notify: {self.notification}")
        lines += [f"error: {e}" for e in self.errors]
        return "\n".join(lines)


def run_cycle(db_path: str | os.PathLike | None, sources: Sequence[str] | None = None, *,
              replay_dir: str | os.PathLike | None = None, collect_only: bool = False) -> CycleReport:
    """collect + analyze + notify as plain functions (`flows.pipeline.run_pipeline` is the same cycle
    as a Prefect flow run)."""
    report = CycleReport(collect(db_path, sources, replay_dir=replay_dir))
    if collect_only:
        return report
    try:
        report.analysis = analyze(db_path, skip_unchanged=True)
    except Exception as exc:  # noqa: BLE001 - reported, and notify still runs for source alerts
        log.exception("[analyze] failed")
        report.errors.append(f"analyze failed: {type(exc).__name__}: {exc}")
    try:
        report.notification = notify(db_path)
    except Exception as exc:  # noqa: BLE001
        log.exception("[notify] failed")
        report.errors.append(f"notify failed: {type(exc).__name__}: {exc}")
    return report


def reparse(db_path: str | os.PathLike | None, sources: Sequence[str] | None = None) -> list[SourceOutcome]:
    """Parse again the raw responses kept after parse failures (after a parser fix); no refetch."""
    from storage.ingest import load_blob, unparsed_responses
    outcomes = []
    with connect_synced(db_path) as con:
        pending = unparsed_responses(con, sources)
        for (source, run_id), group in pending.groupby(["source", "run_id"], sort=False):
            scraper = scrapers.get(source)
            order = {Path(u).name: i for i, u in enumerate(scraper.plan())}
            group = group.assign(file_name=group["url"].map(lambda u: scrapers.Scraper.file_name(u)))
            group = group.sort_values("file_name", key=lambda s: s.map(lambda n: order.get(n, len(order))))
            responses = [Response(r.file_name, load_blob(con, r.sha256)) for r in group.itertuples()]
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

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
from typing import Mapping, Sequence

import pandas as pd

import scrapers
from common import shutdown
from common.time import utcnow
from scrapers.base import ParsedSnapshot, Scraper, ScrapeError
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


@dataclass
class SourceOutcome:
    """What one source did in one collection: new snapshot / unchanged / failed (with the reason) /
    skipped (a live fetch needs a secret that is not configured: one line, never a failure)."""

    source: str
    status: str                      # new | unchanged | failed | skipped
    detail: str
    snapshot_id: int | None = None
    unreachable: bool = False
    offline: bool = False            # every failure was a host name that did not resolve
    counts: dict = field(default_factory=dict)

    def line(self) -> str:
        return f"{self.source:<20} {self.status:<10} {self.detail}"


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


# fetches.status of a response a list names (a manifest's entry, a release's table) that the server
# does not have (HTTP 404): recorded and reported, never counted as a failed run (source health)
MISSING = "missing"


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


def skipped_for_secret(scraper: scrapers.Scraper, secrets: Mapping[str, str] | None, origin: str) -> str | None:
    """Why a live fetch of `scraper` is skipped (its secret is not configured), else None. A replay
    needs no secret."""
    if origin != "fetch" or not scraper.secret or (secrets or {}).get(scraper.secret):
        return None
    where = f"the environment variable {scraper.secret}"
    if scraper.secret_block:
        where += f" or the Prefect Secret block {scraper.secret_block!r}"
    return f"no API key: set {where} (`--replay` and `benchwatch ingest` need none)"


def _fetch(source: str, scraper: scrapers.Scraper, fetcher: Fetcher | ReplayFetcher, previous: dict,
           origin: str, secrets: Mapping[str, str] | None = None, urls: list[str] | None = None) -> _Collection:
    c = _Collection(source, scraper, origin)
    skip = skipped_for_secret(scraper, secrets, origin)
    if skip:
        c.outcome = SourceOutcome(source, "skipped", skip)
        return c
    try:
        c.results = fetch_source(scraper, fetcher, previous, urls=urls,
                                 secret=(secrets or {}).get(scraper.secret) if scraper.secret else None)
    except ScrapeError as exc:
        c.outcome = SourceOutcome(source, "failed", exc.reason)
        return c
    if origin == "replay":    # a listed response with no recorded file: the parser says so; nothing recorded
        c.results = [r for r in c.results if not (r.discovered and r.status == "error")]
    for r in c.results:       # a listed response the server does not have: reported, not a failed run
        if r.discovered and r.http_status == 404:
            c.final_status[r.url] = MISSING
    failed = [r for r in c.results if r.status == "error" and not r.discovered]
    if any(r.not_recorded for r in failed):    # a replay without this source's file: nothing was fetched
        c.outcome = SourceOutcome(source, "failed", "; ".join(r.error or "" for r in failed if r.not_recorded))
        c.results = []
        return c
    if failed:
        c.outcome = SourceOutcome(source, "failed", "; ".join(r.error or "fetch failed" for r in failed),
                                  unreachable=all(r.http_status is None for r in failed),
                                  offline=all(r.unresolved for r in failed))
    elif c.results[0].status == "not_modified":
        c.outcome = SourceOutcome(source, "unchanged", "not modified (HTTP 304)")
    else:
        # a discovered response that failed is recorded, not passed on: the parser names what is missing
        c.responses = [Response(r.file_name, r.content or b"") for r in c.results if r.status == "ok"]
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
                   run_id: str = "", fetcher: Fetcher | None = None,
                   secrets: Mapping[str, str] | None = None) -> SourceOutcome:
    """Fetch one source (live or replayed), store a new snapshot if its content changed.
    `secrets`: resolved by the caller (flows.secrets); a live source whose secret is absent is skipped."""
    scraper = scrapers.get(source)
    run_id = run_id or new_run_id()
    skip = skipped_for_secret(scraper, secrets, "replay" if replay_dir is not None else "fetch")
    if skip:
        return _log(SourceOutcome(source, "skipped", skip))
    previous: dict = {}
    if replay_dir is None and scraper.plan():
        with db.connect(db_path) as con:
            previous = previous_validators(con, source, scraper.plan()[0])
    own = fetcher is None
    using: Fetcher | ReplayFetcher = (ReplayFetcher(Path(replay_dir)) if replay_dir is not None
                                      else (fetcher or Fetcher()))
    try:
        c = _fetch(source, scraper, using, previous, "replay" if replay_dir is not None else "fetch", secrets)
    finally:
        if own:
            using.close()
    if c.outcome is not None and not c.results:     # nothing fetched (the plan failed): nothing to record
        return c.outcome
    with db.connect(db_path) as con, db.transaction(con):   # unchanged content: settled and recorded at once
        _settle_known(con, c)
        if c.outcome is not None:
            _record_fetches(con, [c], run_id)
    outcome = _log(c.outcome) if c.outcome is not None else _parse_and_store(db_path, c, run_id)
    if scraper.release_source:
        _add_release_notes(outcome, db_path, scraper, replay_dir, run_id, fetcher)
    return outcome


# A listed release whose table answered 404 in this many collections is not fetched again (reported).
RELEASE_MAX_MISSES = 3


def _add_release_notes(outcome: SourceOutcome, db_path: str | os.PathLike | None, scraper: scrapers.Scraper,
                       replay_dir: str | os.PathLike | None, run_id: str, fetcher: Fetcher | None) -> None:
    """Release discovery of one source, its lines appended to the source's outcome (one line per
    source in the cycle's report)."""
    own = fetcher is None and replay_dir is None
    using: Fetcher | ReplayFetcher = (ReplayFetcher(Path(replay_dir)) if replay_dir is not None
                                      else (fetcher or Fetcher()))
    try:
        notes = collect_releases(db_path, scraper, using, replay=replay_dir is not None, run_id=run_id)
    except ScrapeError as exc:
        notes = [f"release discovery: {exc.reason}"]
    finally:
        if own:
            using.close()
    if notes:
        outcome.detail = "; ".join([outcome.detail] + notes) if outcome.detail else "; ".join(notes)
        log.info("[%s] releases: %s", scraper.name, "; ".join(notes))


def collect_releases(db_path: str | os.PathLike | None, scraper: scrapers.Scraper,
                     fetcher: Fetcher | ReplayFetcher, *, replay: bool, run_id: str) -> list[str]:
    """Read the release list (`scraper.release_source`, stored as that source's snapshot), fetch and
    store every listed release not stored yet, and follow the newest stored one; returns one
    line per release that did something or could not.

    A release whose table is not published (HTTP 404) is tried in RELEASE_MAX_MISSES collections,
    then reported as never published and not fetched again. Under replay, a listed release with
    no recorded files is reported (once per run), never a fetch failure: nothing is recorded.
    """
    from common.redact import redact_url
    from storage.reads import release_misses, stored_releases
    lister = scrapers.get(scraper.release_source)
    origin = "replay" if replay else "fetch"
    listing = _fetch(lister.name, lister, fetcher, {}, origin)
    if listing.outcome is not None:           # the list could not be read: the source's own table still counts
        if not replay and listing.results:
            with db.connect(db_path) as con, db.transaction(con):
                _record_fetches(con, [listing], run_id)
        return [f"release list not read ({listing.outcome.detail})"]
    releases = lister.parse_checked(listing.responses[0].content, fetched_at=listing.results[0].finished_at,
                                    filename=listing.responses[0].file_name).meta.get("releases") or []
    with db.connect(db_path) as con, db.transaction(con):
        _settle_known(con, listing)
        if listing.outcome is not None:
            _record_fetches(con, [listing], run_id)
    if listing.outcome is None:
        _parse_and_store(db_path, listing, run_id)
    with db.connect(db_path) as con:
        stored = stored_releases(con, scraper.name)
        misses = {r: release_misses(con, scraper.name, redact_url(scraper.release_urls(r)[0])) for r in releases
                  if r not in stored}
    primary = {Scraper.file_name(u) for u in scraper.plan()}
    newest_stored = next((r for r in releases if r in stored), None)
    follow = [newest_stored] if newest_stored and not any(
        Scraper.file_name(u) in primary for u in scraper.release_urls(newest_stored)) else []
    given_up = [r for r, n in misses.items() if n >= RELEASE_MAX_MISSES]
    notes: list[str] = []
    unrecorded: list[str] = []
    for release in [r for r in releases if r not in stored and r not in given_up] + follow:
        c = _fetch(scraper.name, scraper, fetcher, {}, origin, urls=scraper.release_urls(release))
        if c.outcome is not None and c.outcome.status == "failed":
            if replay:
                unrecorded.append(release)
                continue
            unpublished = any(r.http_status == 404 for r in c.results)
            if unpublished:     # an announced release without files yet: not a failure of the source
                c.final_status.update({r.url: MISSING for r in c.results if r.status == "error"})
            with db.connect(db_path) as con, db.transaction(con):
                _record_fetches(con, [c], run_id)
            if unpublished:
                n = misses.get(release, 0) + 1
                notes.append(f"release {release}: listed, no table published (HTTP 404, {n}/{RELEASE_MAX_MISSES})"
                             + ("; not tried again" if n >= RELEASE_MAX_MISSES else ""))
            else:
                notes.append(f"release {release}: failed ({c.outcome.detail})")
            continue
        with db.connect(db_path) as con, db.transaction(con):
            _settle_known(con, c)
            if c.outcome is not None:
                _record_fetches(con, [c], run_id)
        out = c.outcome if c.outcome is not None else _parse_and_store(db_path, c, run_id)
        if out.status != "unchanged":
            notes.append(f"release {release}: {out.status} ({out.detail})")
    if unrecorded:
        notes.append(f"{len(unrecorded)} listed release(s) without recorded responses, not fetched: "
                     f"{', '.join(unrecorded)}")
    if given_up:
        notes.append(f"{len(given_up)} listed release(s) never published a table, not tried again: "
                     f"{', '.join(sorted(given_up))}")
    return notes


def collect(db_path: str | os.PathLike | None, sources: Sequence[str] | None = None, *,
            replay_dir: str | os.PathLike | None = None, run_id: str = "",
            secrets: Mapping[str, str] | None = None) -> list[SourceOutcome]:
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
        fetched = [_fetch(n, s, fetcher, previous.get(n, {}), origin, secrets) for n, s in planned.items()]
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
    for name, scraper in planned.items():      # release discovery (LiveBench's changelog), after the plans
        if scraper.release_source and name in outcomes:
            _add_release_notes(outcomes[name], db_path, scraper, replay_dir, run_id, None)
    return [outcomes[n] for n in names]


def analyze(db_path: str | os.PathLike | None, *, now: datetime | None = None,
            skip_unchanged: bool = False, incremental: bool = True) -> dict:
    """Recompute the analysis from the stored data: skipped when nothing changed (`skip_unchanged`),
    else only the tables whose inputs changed (jobs/analyze.py, which holds the step)."""
    from jobs.analyze import analyze as run_analyze
    return run_analyze(db_path, now=now, skip_unchanged=skip_unchanged, incremental=incremental)


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
        tried = [o for o in self.outcomes if o.status != "skipped"]   # a skipped source is no failure
        collected = any(o.status != "failed" for o in tried) or not tried
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
              replay_dir: str | os.PathLike | None = None, collect_only: bool = False,
              secrets: Mapping[str, str] | None = None) -> CycleReport:
    """collect + analyze + notify as plain functions (`flows.pipeline.run_pipeline` is the same cycle
    as a Prefect flow run). `secrets`: resolved by the caller (the CLI: flows.secrets)."""
    report = CycleReport(collect(db_path, sources, replay_dir=replay_dir, secrets=secrets))
    shutdown.check()
    if collect_only:
        return report
    try:
        report.analysis = analyze(db_path, skip_unchanged=True)
    except Exception as exc:  # noqa: BLE001 - reported, and notify still runs for source alerts
        if shutdown.requested():    # SIGTERM, turned by DuckDB into "Query interrupted": a stop, not a failure
            raise shutdown.Terminated() from exc
        log.exception("[analyze] failed")
        report.errors.append(f"analyze failed: {type(exc).__name__}: {exc}")
    shutdown.check()                # never notify after a stop was asked for
    try:
        report.notification = notify(db_path)
    except Exception as exc:  # noqa: BLE001
        if shutdown.requested():
            raise shutdown.Terminated() from exc
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
            group = group.assign(file_name=group["url"].map(scraper.response_name))
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

"""Collection: fetch every requested source (live or replayed), settle what is already stored,
parse what is new with no connection open, and store it (one source never stops the others).

Each step opens the database only for its writes (DuckDB allows one writing process), so a slow
fetch never holds the file lock. `jobs.cycle` and the Prefect flows compose this step with
analyze, publish and notify.
"""

from __future__ import annotations

import logging
import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

import scrapers
from common.console import REPORTED
from scrapers.base import ParsedSnapshot, Scraper, ScrapeError
from scrapers.http import FetchResult, Fetcher, ReplayFetcher, fetch_source
from storage import db
from storage.ingest import known_snapshots, store_snapshot
from storage.responses import Response, record_fetches, store_blobs
from storage.release_list import listed_releases
from jobs.sync import connect_synced
from common.redact import redact_url
from storage.reads import previous_validators, release_misses, stored_releases
from storage.store import Store

log = logging.getLogger("benchwatch.jobs")


def new_run_id() -> str:
    """Groups the fetches of one collection (Prefect runs pass their flow-run id instead)."""
    return f"local-{uuid.uuid4()}"


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
                  error: dict[str, str]) -> list[dict]:
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
    return rows


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
        listed = [r for r in c.results if r.discovered]
        if listed and all(r.not_recorded for r in listed) and c.results[0].ok:
            # the primary (a manifest) without any file it lists: no copy to replay (a usage error,
            # one line), never a parse failure counted against the source run after run
            c.outcome = SourceOutcome(source, "skipped", (
                f"the replay folder has {c.results[0].file_name} but none of the {len(listed)} file(s) it lists "
                f"(e.g. {listed[0].file_name}): not a copy to replay; nothing read or recorded"))
            c.results = []
            return c
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


def _settle_known(con, collections: Sequence[_Collection]) -> None:
    """Content already stored needs no parse: 'unchanged' (and the snapshot marked as seen), for
    every collection at once (storage.ingest.known_snapshots: two or three statements in all)."""
    open_ = [c for c in collections if c.outcome is None]
    origins = {c.origin for c in open_}
    for origin in sorted(origins):
        these = [c for c in open_ if c.origin == origin]
        for c, known in zip(these, known_snapshots(con, [(c.source, c.responses) for c in these], origin=origin)):
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
    record_fetches(con, pd.DataFrame([row for c in collections       # one frame: one insert
                                      for row in _attempt_rows(run_id, c.source, c.results, c.final_status, c.errors)]))


def _log(outcome: SourceOutcome) -> SourceOutcome:
    level = logging.WARNING if outcome.status == "failed" else logging.INFO
    # the cycle's report prints this line: on the terminal once (common.console)
    log.log(level, "[%s] %s: %s", outcome.source, outcome.status, outcome.detail, extra=REPORTED)
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


def _parse_and_store(store: Store, c: _Collection, run_id: str) -> SourceOutcome:
    """The rest of a collection whose content is not stored yet: parse, then one write connection
    (registry-synced only when there is a snapshot to store)."""
    _parse(c)
    with connect_synced(store) if c.parsed is not None else store.connect() as con:
        return _record(con, c, run_id)


def collect_source(store: Store, source: str, *, replay_dir: str | os.PathLike | None = None,
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
        with store.connect() as con:
            previous = previous_validators(con, {source: scraper.plan()[0]})[source]
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
    with store.connect() as con, db.transaction(con):   # unchanged content: settled and recorded at once
        _settle_known(con, [c])
        if c.outcome is not None:
            _record_fetches(con, [c], run_id)
    outcome = _log(c.outcome) if c.outcome is not None else _parse_and_store(store, c, run_id)
    if scraper.release_source:
        _add_release_notes(outcome, store, scraper, replay_dir, run_id, fetcher)
    return outcome


# A listed release whose table answered 404 in this many collections is not fetched again (reported).
RELEASE_MAX_MISSES = 3


def _add_release_notes(outcome: SourceOutcome, store: Store, scraper: scrapers.Scraper,
                       replay_dir: str | os.PathLike | None, run_id: str, fetcher: Fetcher | None,
                       known: _KnownReleases | None = None, listing: _Collection | None = None) -> None:
    """Release discovery of one source, its lines appended to the source's outcome (one line per
    source in the cycle's report); `known`, `listing`: see `collect_releases`."""
    own = fetcher is None and replay_dir is None
    using: Fetcher | ReplayFetcher = (ReplayFetcher(Path(replay_dir)) if replay_dir is not None
                                      else (fetcher or Fetcher()))
    try:
        notes = collect_releases(store, scraper, using, replay=replay_dir is not None, run_id=run_id,
                                 known=known, listing=listing)
    except ScrapeError as exc:
        notes = [f"release discovery: {exc.reason}"]
    finally:
        if own:
            using.close()
    if notes:
        outcome.detail = "; ".join([outcome.detail] + notes) if outcome.detail else "; ".join(notes)
        log.info("[%s] releases: %s", scraper.name, "; ".join(notes))


@dataclass
class _KnownReleases:
    """What release discovery reads from the store when its list is unchanged (`_known_releases`)."""

    releases: list[str]
    stored: set[str]
    misses: dict[str, int]


def _known_releases(con, scraper: scrapers.Scraper, releases: list[str]) -> _KnownReleases:
    """The listed `releases`, those stored, and the 404 count of each one not stored, read in the
    caller's connection."""
    stored = stored_releases(con, scraper.name)
    misses = {r: release_misses(con, scraper.name, redact_url(scraper.release_urls(r)[0])) for r in releases
              if r not in stored}
    return _KnownReleases(releases, stored, misses)


def collect_releases(store: Store, scraper: scrapers.Scraper,
                     fetcher: Fetcher | ReplayFetcher, *, replay: bool, run_id: str,
                     known: _KnownReleases | None = None, listing: _Collection | None = None) -> list[str]:
    """Read the release list (`scraper.release_source`, stored as that source's snapshot), fetch and
    store every listed release not stored yet, and follow the newest stored one; returns one
    line per release that did something or could not.

    A release whose table is not published (HTTP 404) is tried in RELEASE_MAX_MISSES collections,
    then reported as never published and not fetched again. Under replay, a listed release with
    no recorded files is reported (once per run), never a fetch failure: nothing is recorded.

    `known`: the list was fetched, found unchanged and recorded by the caller (`collect`, in its
    one connection), which read what this needs from the store (`_known_releases`); `listing`:
    the list fetched by the caller, not settled yet (else it is fetched here).
    """
    origin = "replay" if replay else "fetch"
    held_note = ""
    lister = scrapers.get(scraper.release_source)
    if known is None:
        listing = listing if listing is not None else _fetch(lister.name, lister, fetcher, {}, origin)
        if listing.outcome is not None:           # the list could not be read: the source's own table still counts
            if not replay and listing.results:
                with store.connect() as con, db.transaction(con):
                    _record_fetches(con, [listing], run_id)
            return [f"release list not read ({listing.outcome.detail})"]
        parsed_list = lister.parse_checked(listing.responses[0].content, fetched_at=listing.results[0].finished_at,
                                           filename=listing.responses[0].file_name)
        releases = parsed_list.meta.get("releases") or []
        with store.connect() as con, db.transaction(con):
            _settle_known(con, [listing])
            if listing.outcome is not None:
                _record_fetches(con, [listing], run_id)
        if listing.outcome is None:
            _parse_and_store(store, listing, run_id)
            if parsed_list.held_reason:  # new, beyond the lister's fan-out cap: stored held, nothing fetched
                releases, held_note = [], f"release list held: {parsed_list.held_reason}"
        # (the same list seen again released its held snapshot, as a shrink's: its releases are used)
        with store.connect() as con:
            known = _known_releases(con, scraper, releases)
    releases, stored, misses = known.releases, known.stored, known.misses
    primary = {Scraper.file_name(u) for u in scraper.plan()}
    newest_stored = next((r for r in releases if r in stored), None)
    follow = [newest_stored] if newest_stored and not any(
        Scraper.file_name(u) in primary for u in scraper.release_urls(newest_stored)) else []
    given_up = [r for r, n in misses.items() if n >= RELEASE_MAX_MISSES]
    notes: list[str] = [held_note] if held_note else []
    unrecorded: list[str] = []
    todo = [r for r in releases if r not in stored and r not in given_up]
    if len(todo) > lister.max_releases:     # a released (accepted, confirmed) long list: a bounded share per run
        notes.append(f"{len(todo)} listed release(s) not stored, above the cap of {lister.max_releases} a "
                     f"collection fetches: the newest {lister.max_releases} fetched, the rest left for later runs")
        todo = todo[:lister.max_releases]
    for release in todo + follow:
        urls = scraper.release_urls(release)
        if isinstance(fetcher, ReplayFetcher) and any(fetcher.missing(u, source=scraper.name) for u in urls):
            unrecorded.append(release)    # nothing to read: not fetched (and no database let go for it)
            continue
        c = _fetch(scraper.name, scraper, fetcher, {}, origin, urls=urls)
        if c.outcome is not None and c.outcome.status == "failed":
            if replay:
                unrecorded.append(release)
                continue
            unpublished = any(r.http_status == 404 for r in c.results)
            if unpublished:     # an announced release without files yet: not a failure of the source
                c.final_status.update({r.url: MISSING for r in c.results if r.status == "error"})
            with store.connect() as con, db.transaction(con):
                _record_fetches(con, [c], run_id)
            if unpublished:
                n = misses.get(release, 0) + 1
                notes.append(f"release {release}: listed, no table published (HTTP 404, {n}/{RELEASE_MAX_MISSES})"
                             + ("; not tried again" if n >= RELEASE_MAX_MISSES else ""))
            else:
                notes.append(f"release {release}: failed ({c.outcome.detail})")
            continue
        with store.connect() as con, db.transaction(con):
            _settle_known(con, [c])
            if c.outcome is not None:
                _record_fetches(con, [c], run_id)
        out = c.outcome if c.outcome is not None else _parse_and_store(store, c, run_id)
        if out.status != "unchanged":
            notes.append(f"release {release}: {out.status} ({out.detail})")
    if unrecorded:
        notes.append(f"{len(unrecorded)} listed release(s) without recorded responses, not fetched: "
                     f"{', '.join(unrecorded)}")
    if given_up:
        notes.append(f"{len(given_up)} listed release(s) never published a table, not tried again: "
                     f"{', '.join(sorted(given_up))}")
    return notes


def requested_sources(sources: Sequence[str] | None) -> list[str]:
    """The sources a collection fetches: those asked for, else every enabled source."""
    return list(sources) if sources else scrapers.enabled_sources()


def collect(store: Store, sources: Sequence[str] | None = None, *,
            replay_dir: str | os.PathLike | None = None, run_id: str = "",
            secrets: Mapping[str, str] | None = None) -> list[SourceOutcome]:
    """Collect every requested source; one failing source never stops the others.

    Every source is fetched first with no connection open; one write connection then settles
    and records all that is unchanged or failed (an unchanged cycle opens the file once), and
    each source with new content is parsed with none open and stored in a connection of its own.
    """
    names = requested_sources(sources)
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
        with store.connect() as con:   # conditional-GET validators of every source, then no connection
            previous = previous_validators(con, {n: s.plan()[0] for n, s in planned.items() if s.plan()})
    fetcher: Fetcher | ReplayFetcher = ReplayFetcher(Path(replay_dir)) if replay_dir is not None else Fetcher()
    try:
        fetched = [_fetch(n, s, fetcher, previous.get(n, {}), origin, secrets) for n, s in planned.items()]
        # the release lists too (LiveBench's changelog): settled below with the sources when unchanged
        listings = {n: _fetch(s.release_source, scrapers.get(s.release_source), fetcher, {}, origin)
                    for n, s in planned.items() if s.release_source}
    finally:
        fetcher.close()
    pending, settled = [], []
    known: dict[str, _KnownReleases] = {}
    with store.connect() as con, db.transaction(con):   # one commit for every unchanged source
        _settle_known(con, fetched)
        for c in fetched:
            if c.outcome is None:
                pending.append(c)
            elif c.results:
                settled.append(c)
            else:                     # nothing fetched (the plan failed): nothing to record
                outcomes[c.source] = c.outcome
        # An unchanged release list of an unchanged source: recorded here and its releases read
        # from the store (no parse, no connection of its own); any other case in collect_releases.
        unchanged = {c.source for c in settled if c.outcome is not None and c.outcome.status == "unchanged"}
        lists: list[_Collection] = []
        settling = {name: listing for name, listing in listings.items()
                    if name in unchanged and listing.outcome is None}
        _settle_known(con, list(settling.values()))
        for name, listing in settling.items():
            if listing.outcome is not None and listing.outcome.snapshot_id is not None:
                lists.append(listing)
                known[name] = _known_releases(con, planned[name], listed_releases(con, listing.outcome.snapshot_id))
            else:
                listing.outcome = None    # new content: collect_releases fetches, parses and stores it
        if settled or lists:
            _record_fetches(con, settled + lists, run_id)
    outcomes.update((c.source, _log(c.outcome)) for c in settled if c.outcome is not None)
    for c in pending:
        try:
            outcomes[c.source] = _parse_and_store(store, c, run_id)
        except ScrapeError as exc:
            outcomes[c.source] = SourceOutcome(c.source, "failed", exc.reason)
        c.responses = []     # the bodies are not needed any longer
    for name, scraper in planned.items():      # release discovery (LiveBench's changelog), after the plans
        if scraper.release_source and name in outcomes:
            _add_release_notes(outcomes[name], store, scraper, replay_dir, run_id, None, known.get(name),
                               None if name in known else listings.get(name))
    return [outcomes[n] for n in names]

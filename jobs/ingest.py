"""Ingest: a saved copy of a source's response stored as a snapshot (`benchwatch ingest`,
`backfill`), and the raw responses kept after parse failures parsed again (`reparse`).

Each opens a short connection through the caller's store (`storage.store`), only once the file
has been read and, on the pandas path, parsed.
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from typing import Sequence

import pandas as pd

import scrapers
from common.naming import NO_RULES, NamingRules
from common.time import utcnow
from jobs.collect import SourceOutcome
from jobs.sync import connect_synced
from scrapers.base import ScrapeError
from scrapers.csv import CsvLayout, native_layout
from scrapers.http import FileRefused, read_capped
from storage import db
from storage.csv_ingest import FileStamp, ingest_csv
from storage.ingest import IngestResult, parse_observed_at, store_snapshot
from storage.responses import Response, load_blob, record_fetches, unparsed_responses
from storage.store import FileStore, Store

CSV_SOURCE = "csv"     # the generic long-format CSV: read and validated inside DuckDB when it can be


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

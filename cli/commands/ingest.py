"""`benchwatch ingest SOURCE PATH`: parse a saved copy of a source's response and store it."""

from __future__ import annotations

import argparse
import sys

import scrapers
from cli.main import add_db_argument, EXIT_USAGE, database_refused, store_of
from storage.db import DEFAULT_WAIT_SECONDS, StorageError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ingest", help="store a saved copy of a leaderboard response as a snapshot",
                       description="Parse a saved copy of a source's response and store it as a snapshot. "
                                   "The same content again adds nothing. A file that cannot be parsed, "
                                   "is not a regular file, or is larger than the 64 MB size cap changes "
                                   "nothing and exits with status 1. Rows with bad values go to the rejects "
                                   "table; a snapshot that drops half or more of a benchmark's rows is held "
                                   "(see `benchwatch accept`).",
                       epilog="sources: " + ", ".join(scrapers.SOURCES))
    p.add_argument("source", metavar="SOURCE", help="source name (see the list below)")
    p.add_argument("path", metavar="PATH", help="the saved response (JSON, CSV, HTML, YAML, Markdown, zip)")
    p.add_argument("--aux", metavar="FILE", action="append", default=[],
                   help="an auxiliary response used alongside (e.g. LiveBench categories_<release>.json); repeatable")
    p.add_argument("--observed-at", metavar="ISO", default=None,
                   help="when this content was published/observed (default: now), e.g. 2025-11-18 for a backfill; "
                        "a date in the future (beyond 1 day of clock skew) or long before a benchmark "
                        "in the file existed is refused")
    p.add_argument("--wait", type=float, default=DEFAULT_WAIT_SECONDS, metavar="SECONDS",
                   help="how long to wait while another process writes")
    add_db_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from jobs.ingest import ingest_file
    from scrapers.base import ScrapeError
    from storage.ingest import IngestRefused
    from jobs.outputs import Input
    try:
        store = store_of(args)
    except StorageError as exc:
        print(f"benchwatch: {exc}", file=sys.stderr)
        return 1
    if database_refused("ingest", store, [Input("the file to ingest", args.path)]
                        + [Input("an --aux file", a) for a in args.aux]):
        return EXIT_USAGE
    try:
        result = ingest_file(store, args.source, args.path, aux_paths=args.aux, observed_at=args.observed_at,
                             wait=args.wait)
    except ScrapeError as exc:
        print(f"benchwatch: cannot ingest {args.path} as {exc.source}: {exc.reason}", file=sys.stderr)
        hint = _not_a_main_file(args.source, args.path) or (None if args.aux else _aux_hint(args.source))
        if hint:
            print(f"benchwatch: {hint}", file=sys.stderr)
        return 1
    except IngestRefused as exc:
        print(f"benchwatch: cannot ingest {args.path} as {args.source}: {exc}", file=sys.stderr)
        return 1
    except (StorageError, ValueError) as exc:
        print(f"benchwatch: {exc}", file=sys.stderr)
        return 1
    print(result.summary())
    for w in result.warnings:
        print(f"  warning: {w}")
    hint = None if args.aux or not result.warnings else _aux_hint(args.source)
    if hint:
        print(f"  hint: {hint}")
    return 0


def _aux_hint(source: str) -> str | None:
    names = _aux_names(source)
    return (f"{source} also reads {', '.join(names)} beside its main file; pass saved copies with --aux FILE"
            if names else None)


def _aux_names(source: str) -> list[str]:
    """The auxiliary responses `source` fetches beside its main one (its further URLs' names)."""
    from scrapers.base import ScrapeError
    try:
        scraper = scrapers.get(source)
    except ScrapeError:      # an unknown source: said by the ingest itself
        return []
    return [scraper.response_name(u) for u in scraper.urls[1:]]


def _not_a_main_file(source: str, path: str) -> str | None:
    """Why a file that failed to parse may be another file's auxiliary response (the source's
    own backfill rule says so), as a next step; None when the rule takes it as a main file."""
    from pathlib import Path
    if not _aux_names(source):
        return None
    name = Path(path).name
    ingests, _ = scrapers.get(source).backfill_groups([name])
    if any(primary == name for primary, _ in ingests):
        return None
    return (f"{name} looks like an auxiliary file of {source}, read beside its main file: "
            f"ingest the main file and pass this one with --aux {path}")

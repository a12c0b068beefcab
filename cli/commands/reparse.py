"""`benchwatch reparse`: parse again the raw responses kept after parse failures."""

from __future__ import annotations

import argparse

from cli.main import add_db_argument, add_sources_argument, store_of


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("reparse", help="re-parse raw responses kept after parse failures (after a parser fix)",
                       description="A response that failed to parse is kept (raw bytes, by SHA-256). After fixing "
                                   "or upgrading the parser, this stores them as snapshots without refetching.")
    add_sources_argument(p, "only these sources")
    add_db_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from jobs.ingest import reparse
    outcomes = reparse(store_of(args), args.sources)
    if not outcomes:
        print("nothing to re-parse: no kept response failed to parse")
    for o in outcomes:
        print(o.line())
    return 1 if any(o.status == "failed" for o in outcomes) else 0

"""`benchwatch backfill DIR`: ingest a folder of dated leaderboard copies (jobs/backfill.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from typing import TYPE_CHECKING

from cli.main import add_db_argument, database_refused, store_of
from common.redact import inert_text
from storage.db import StorageError


if TYPE_CHECKING:
    from jobs.backfill import BackfillFile
    from storage.ingest import IngestResult


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("backfill", help="ingest a folder of dated leaderboard copies, oldest first",
                       description="Ingest every file DIR/<source>/<source>[_<variant>]_<YYYY-MM-DD>.<ext> "
                                   "as a snapshot of that source observed on that date, oldest first "
                                   "(LiveBench tables with the categories file of their release). "
                                   "The same content again adds nothing, so a backfill can be repeated. "
                                   "Folders that are links are followed (a link back up the tree is not). "
                                   "A folder that is no source and a file no source claims are named "
                                   "(one 'skipped' line each). "
                                   "A file that cannot be parsed is reported and skipped; the exit status "
                                   "is then 1. DIR without a dated file of a known source is a usage error (2).")
    p.add_argument("root", metavar="DIR", help="the folder of dated copies, e.g. a snapshots archive")
    add_db_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from jobs.backfill import backfill, plan_with_skips

    root = Path(args.root)
    if not root.is_dir():
        print(f"benchwatch backfill: {root} is not a directory", file=sys.stderr)
        return 2
    from jobs.outputs import Input
    try:
        store = store_of(args)
    except StorageError as exc:
        print(f"benchwatch: {exc}", file=sys.stderr)
        return 1
    if database_refused("backfill", store, [Input("the backfill folder", root, folder=True)]):
        return 2
    planned, skipped = plan_with_skips(root)
    if not planned:
        print(f"benchwatch backfill: {root} holds no <source>/<name>_<YYYY-MM-DD>.<ext> file of a known source",
              file=sys.stderr)
        return 2

    def show(item: BackfillFile, result: IngestResult | None, error: str | None) -> None:
        name = inert_text(item.path.name)      # a file name's own newline would forge a line
        if result is not None:
            print(f"{item.date} {name}: {result.summary()}", flush=True)
        else:
            print(f"{item.date} {name}: FAILED {error}", file=sys.stderr, flush=True)

    for item in skipped:     # never silently: one line per folder or file no source ingests
        print(item.line(root), flush=True)
    try:
        report = backfill(store, root, on_file=show)
    except StorageError as exc:
        print(f"benchwatch: {exc}", file=sys.stderr)
        return 1
    print(report.summary())
    return 1 if report.failed else 0

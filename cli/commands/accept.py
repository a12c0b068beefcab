"""`benchwatch accept SNAPSHOT`: release a snapshot held by the shrink guard (storage/shrink_guard.py)."""

from __future__ import annotations

import argparse
import sys

from cli.main import add_db_argument, store_of
from storage.db import DEFAULT_WAIT_SECONDS, StorageError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("accept", help="release a held snapshot (one that dropped more than a fifth of a table's rows)",
                       description="A snapshot that drops more than a fifth of the previous snapshot's rows for a "
                                   "table (a benchmark, or one table_version of it; a source may set its own "
                                   "limit) is stored but held back from latest_scores and the analysis "
                                   "(a truncated download looks like that). If the leaderboard really shrank, "
                                   "release it here; `benchwatch status` lists held snapshots.")
    p.add_argument("snapshot", metavar="SNAPSHOT", type=int, help="the snapshot id (see `benchwatch status`)")
    p.add_argument("--wait", type=float, default=DEFAULT_WAIT_SECONDS, metavar="SECONDS",
                   help="how long to wait while another process writes")
    add_db_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from storage.ingest import IngestRefused, accept_snapshot

    try:
        store = store_of(args, say_waits=True)
    except StorageError as exc:
        print(f"benchwatch: {exc}", file=sys.stderr)
        return 1
    if store.file is not None and not store.file.exists():
        print(f"benchwatch: database {store.file} does not exist", file=sys.stderr)
        return 1
    try:
        with store.connect() as con:
            before = accept_snapshot(con, args.snapshot)
    except IngestRefused as exc:
        print(f"benchwatch: {exc}", file=sys.stderr)
        return 1
    except StorageError as exc:
        print(f"benchwatch: {exc}", file=sys.stderr)
        return 1
    if before == "held":
        print(f"snapshot {args.snapshot} accepted: it is used from now on (run `benchwatch analyze` to recompute)")
    else:
        print(f"snapshot {args.snapshot} was not held (status {before}); nothing to do")
    return 0

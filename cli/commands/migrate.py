"""`benchwatch migrate --to ducklake:postgres:<conninfo>`: copy a DuckDB file into a DuckLake store."""

from __future__ import annotations

import argparse
import sys

from cli.main import add_db_argument
from storage.db import DEFAULT_WAIT_SECONDS, StorageError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("migrate", help="copy the DuckDB file into a DuckLake catalog and verify row counts",
                       description="Copies every table of --db (a DuckDB file: history, raw responses, alert "
                                   "state, silences) into the DuckLake catalog given by --to, in one "
                                   "transaction, then compares the row count of every table. The data files go "
                                   "to $BENCHWATCH_DATA_PATH. Refuses a catalog that already holds snapshots "
                                   "unless --replace. docs/deploy.md explains the set-up.")
    p.add_argument("--to", required=True, metavar="DUCKLAKE_URL",
                   help="ducklake:postgres:<libpq conninfo>, e.g. 'ducklake:postgres:dbname=benchwatch host=db user=bw'")
    p.add_argument("--replace", action="store_true", help="empty the catalog's tables first")
    p.add_argument("--wait", type=float, default=DEFAULT_WAIT_SECONDS, metavar="SECONDS",
                   help="how long to wait while another process writes")
    add_db_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from jobs.migrate import migrate_to_lake
    from storage.store import open_store
    say = lambda m: print(f"benchwatch: {m}", file=sys.stderr)  # noqa: E731
    try:
        report = migrate_to_lake(open_store(args.db), open_store(args.to), replace=args.replace,
                                 wait=args.wait, on_wait=say)
    except StorageError as exc:
        say(str(exc))
        return 1
    for table, (src, dst) in sorted(report.counts.items()):
        print(f"{table:24} {src:>10} {dst:>10}{'' if src == dst else '  MISMATCH'}")
    if not report.ok:
        say(f"row counts differ in {sorted(report.mismatches)}")
        return 1
    print(f"copied {report.source} into {report.target}: {len(report.counts)} tables, "
          f"{sum(d for _, d in report.counts.values())} rows, counts verified")
    return 0

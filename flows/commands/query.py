"""`benchwatch query SQL`: read-only ad hoc SQL over the history and the views."""

from __future__ import annotations

import argparse
import sys

from flows.cli import add_db_argument
from storage.db import DEFAULT_WAIT_SECONDS, StorageError
from storage.query import run_query

VIEWS_HELP = """\
views: latest_scores, latest_item_results, model_cutoffs, saturation_latest, saturation_history,
trends, post_cutoff_scores, suspects, alerts; tables: snapshots, scores, item_results, fetches,
benchmarks, models, aliases, rejects (see the README).
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("query", help="run read-only SQL against the database",
                       description="Run read-only SQL (SELECT/EXPLAIN) against the database. Writing statements "
                                   "and file access are refused. While another process writes, waits for it.",
                       epilog=VIEWS_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("sql", metavar="SQL", help="the SQL to run, e.g. \"SELECT * FROM saturation_latest\"")
    p.add_argument("--format", choices=("table", "csv", "json"), default="table", help="output format (default: table)")
    p.add_argument("--wait", type=float, default=DEFAULT_WAIT_SECONDS, metavar="SECONDS",
                   help=f"how long to wait while another process holds the database (default {DEFAULT_WAIT_SECONDS:.0f})")
    p.add_argument("--max-rows", type=int, default=200, metavar="N", help="rows shown in table format (default 200)")
    add_db_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        df = run_query(args.sql, args.db, wait=args.wait, on_wait=lambda m: print(f"benchwatch: {m}", file=sys.stderr))
    except StorageError as exc:
        print(f"benchwatch: {exc}", file=sys.stderr)
        return 1
    if args.format == "csv":
        df.to_csv(sys.stdout, index=False)
    elif args.format == "json":
        sys.stdout.write(df.to_json(orient="records", date_format="iso", indent=None) + "\n")
    else:
        import pandas as pd
        with pd.option_context("display.max_rows", args.max_rows, "display.max_columns", None,
                               "display.width", 200, "display.max_colwidth", 60):
            print(df.to_string(index=False, max_rows=args.max_rows) if len(df) else "(no rows)")
    return 0

"""`benchwatch status`: sources, last fetch and snapshot, counts, unknown names, schema version."""

from __future__ import annotations

import argparse

from cli.main import add_db_argument, open_read_only
from storage.db import DEFAULT_WAIT_SECONDS


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("status", help="what the database holds: sources, snapshots, unknown names",
                       description="Show each source's last fetch and snapshot, held snapshots (shrink guard), row counts, names that no "
                                   "registry alias maps yet (add them to registry/aliases.csv), and the schema version.")
    p.add_argument("--wait", type=float, default=DEFAULT_WAIT_SECONDS, metavar="SECONDS",
                   help="how long to wait while another process writes")
    add_db_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import pandas as pd

    from storage import status

    con = open_read_only(args)
    if con is None:
        return 1
    try:
        version = status.schema_version(con)
        sources = status.source_status(con)
        held = status.held_snapshots(con)
        unknown = status.unknown_names(con)
        counts = status.unknown_counts(con)
        tables = status.table_counts(con)
    finally:
        con.close()
    print(f"database: {args.db or 'default'}   schema version: {version}")
    print()
    with pd.option_context("display.width", 200, "display.max_columns", None, "display.max_colwidth", 50):
        print("sources:")
        print(sources.to_string(index=False) if len(sources) else "  (nothing collected yet: run `benchwatch run`)")
        print()
        if len(held):
            print(f"held snapshots ({len(held)}): dropped half or more of a benchmark's rows, kept out of "
                  "latest_scores and the analysis; release one with `benchwatch accept SNAPSHOT`")
            print(held.to_string(index=False))
            print()
        print("rows: " + ", ".join(f"{k}={v}" for k, v in tables.items() if k != "schema_migrations"))
        print()
        print(f"unknown names: {counts['benchmarks']} benchmark(s), {counts['models']} model(s) "
              "not in the registry (add aliases in registry/aliases.csv)")
        if len(unknown):
            print(unknown.to_string(index=False))
    return 0

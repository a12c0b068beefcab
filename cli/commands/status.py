"""`benchwatch status`: sources, last fetch and snapshot, counts, unknown names, schema version."""

from __future__ import annotations

import argparse
from datetime import datetime
from typing import TYPE_CHECKING

from cli.main import add_db_argument, open_read_only
from common.redact import inert_text, redact
from storage.db import DEFAULT_WAIT_SECONDS

if TYPE_CHECKING:
    from storage.status import Table


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("status", help="what the database holds: sources, snapshots, unknown names",
                       description="Show each source's last fetch and snapshot, held snapshots (shrink guard), row counts, names that no "
                                   "registry alias maps yet (add them to registry/aliases.csv), and the schema version.")
    p.add_argument("--wait", type=float, default=DEFAULT_WAIT_SECONDS, metavar="SECONDS",
                   help="how long to wait while another process writes")
    add_db_argument(p)
    p.set_defaults(func=run)


# Text cells wider than this are cut (a long fetch error would push every column off screen).
MAX_CELL = 50


def _cell(value: object) -> str:
    """A value as status shows it: times to the second, lists comma-separated, no terminal controls."""
    if value is None:
        return "-"
    if isinstance(value, datetime):
        return value.isoformat(sep=" ", timespec="seconds")
    if isinstance(value, (list, tuple)):
        value = ", ".join(str(v) for v in value)
    text = str(inert_text(str(value)))
    return text if len(text) <= MAX_CELL else text[:MAX_CELL - 1] + "…"


def text_table(table: Table) -> str:
    """Right-aligned columns one space apart under their names (no pandas: status starts fast)."""
    cells = [[_cell(v) for v in row] for row in table.rows]
    widths = [max([len(c)] + [len(r[j]) for r in cells]) for j, c in enumerate(table.columns)]
    lines = [" ".join(c.rjust(w) for c, w in zip(table.columns, widths))]
    lines += [" ".join(v.rjust(w) for v, w in zip(r, widths)) for r in cells]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from storage import status

    con = open_read_only(args)
    if con is None:
        return 1
    try:
        version = status.schema_version(con)
        sources = status.source_status(con)
        # the sources' `held` column counts them: no statement for the usual case of none
        held = status.held_table(con) if any(row[sources.columns.index("held")] for row in sources.rows) else None
        unknown, counts = status.unknown(con)
        tables = status.table_counts(con)
    finally:
        con.close()
    print(f"database: {redact(args.db or 'default')}   schema version: {version}")
    print()
    print("sources (times UTC):")
    print(text_table(sources) if sources.rows else "  (nothing collected yet: run `benchwatch run`)")
    print()
    if held is not None and held.rows:
        print(f"held snapshots ({len(held.rows)}): dropped half or more of a benchmark's rows, kept out of "
              "latest_scores and the analysis; release one with `benchwatch accept SNAPSHOT`")
        print(text_table(held))
        print()
    print("rows: " + ", ".join(f"{k}={v}" for k, v in tables.items() if k != "schema_migrations"))
    print()
    print(f"unknown names: {counts['benchmarks']} benchmark(s), {counts['models']} model(s) "
          "not in the registry (add aliases in registry/aliases.csv)")
    if unknown.rows:
        print(text_table(unknown))
    return 0

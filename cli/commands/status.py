"""`benchwatch status`: sources, last fetch and snapshot, counts, unknown names, schema version."""

from __future__ import annotations

import argparse
import textwrap
from datetime import datetime

from analysis.constants import IMPLIED_N_SMALL_RATIO
from analysis.sizes import FEWER_ITEMS, size_checks
from cli.main import add_db_argument, open_read_only, store_of
from common.redact import inert_text, redact
from storage import status
from storage.db import DEFAULT_WAIT_SECONDS
from storage.disagreements import count_disagreements, read_disagreements
from storage.shrink_guard import SHRINK_MAX_DROP
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


def _cell(value: object, widest: int = MAX_CELL) -> str:
    """A value as status shows it: times to the second, lists comma-separated, no terminal controls."""
    if value is None:
        return "-"
    if isinstance(value, datetime):
        return value.isoformat(sep=" ", timespec="seconds")
    if isinstance(value, (list, tuple)):
        value = ", ".join(str(v) for v in value)
    text = str(inert_text(str(value)))
    return text if len(text) <= widest else text[:widest - 1] + "…"


def text_table(table: Table, widest: int = MAX_CELL) -> str:
    """Right-aligned columns one space apart under their names (no pandas: status starts fast)."""
    cells = [[_cell(v, widest) for v in row] for row in table.rows]
    widths = [max([len(c)] + [len(r[j]) for r in cells]) for j, c in enumerate(table.columns)]
    lines = [" ".join(c.rjust(w) for c, w in zip(table.columns, widths))]
    lines += [" ".join(v.rjust(w) for v, w in zip(r, widths)) for r in cells]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:

    con = open_read_only(args)
    if con is None:
        return 1
    try:
        version, tables = status.counts_and_version(con)
        large = status.is_large(tables)
        sources = status.source_status(con)
        # the sources' `held` column counts them: no statement for the usual case of none
        held = status.held_table(con) if any(row[sources.columns.index("held")] for row in sources.rows) else None
        unknown, counts = status.unknown(con, large=large)
        sizes = status.size_rows(con)
        dates = status.release_date_coverage(con)
        coverage = status.index_coverage(con) if tables.get("saturation") else None
        not_tested = status.placeholder_not_tested(con)
        unread = status.unread_parts(con)
        disagreements = read_disagreements(con) if count_disagreements(con) else None
    finally:
        con.close()
    print(f"database: {redact(store_of(args).location)}   schema version: {version}")
    print()
    print("sources (times UTC):")
    print(text_table(sources) if sources.rows else "  (nothing collected yet: run `benchwatch run`)")
    print()
    if held is not None and held.rows:
        print(f"held snapshots ({len(held.rows)}): a table dropped more than its source's shrink limit of its rows "
              f"(default {SHRINK_MAX_DROP:.0%}, against the table's recent maximum; each reason states the limit "
              "used); those tables are kept out of latest_scores and the analysis (the snapshot's others are used); "
              "release one with `benchwatch accept SNAPSHOT`")
        print(text_table(held))
        print()
    if unread.rows:
        print(f"parts of the newest snapshot not read ({len(unread.rows)}): undeclared members are never guessed "
              "(declare them, e.g. scrapers/epoch_members.csv); failed ones lack a declared column")
        for source, snapshot_id, kind, names in unread.rows:
            print(f"  {source} snapshot {snapshot_id}: {kind}: {names}")
        print()
    if not_tested.rows:
        print(f"not tested for contamination ({len(not_tested.rows)}): the model's only cutoff is a placeholder date "
              "that many models share, so no pre/post split can be trusted (docs/statistics.md, trust of a cutoff)")
        for signal, bench, source, model, reason in not_tested.rows:
            print(f"  {signal} {bench} ({source}): {model}: {reason}")
        print()
    print("rows: " + ", ".join(f"{k}={v}" for k, v in tables.items() if k != "schema_migrations"))
    print()
    print(f"unknown names: {counts['benchmarks']} benchmark(s), {counts['models']} model(s) "
          "not in the registry and stated by no source (add aliases in registry/aliases.csv)")
    if counts.get("learned"):
        print(f"  and {counts['learned']} model name(s) learned from the sources: not in the registry, but a source "
              "states who made them, when, or which page describes them (view learned_models; not linked across sources)")
    if unknown.rows:
        print(text_table(unknown))
    _print_sizes(sizes)
    models, dated, in_registry = dates
    print()
    print(f"release dates: {dated} of {models} models with a latest result ({_share(dated, models)}) have one from "
          f"some source ({in_registry} from the registry); agent systems not counted")
    if coverage is not None and coverage.rows:
        print()
        print(coverage_text(coverage))
    if disagreements is not None and disagreements.n_rows:
        from report.disagreements import TITLE, disagreements_text
        print()
        print("\n".join(textwrap.wrap(TITLE + ":", 120)))
        print(disagreements_text(disagreements))
    return 0


def _print_sizes(rows: list[tuple]) -> None:
    """Tables whose standard errors (or item results) imply clearly fewer items than the registry's n."""
    if not rows:
        return
    small = [c for c in size_checks(rows) if c.verdict == FEWER_ITEMS]
    if not small:
        return
    print()
    print(f"fewer items than the registry's n ({len(small)} table(s)): the data imply a median n below "
          f"{IMPLIED_N_SMALL_RATIO:g} x the registry's (n = s(1-s)/se^2 from standard errors, or distinct items "
          "per model); a subset was run, and the registry's n overstates precision")
    print(text_table(Table(["source", "benchmark", "table_version", "basis", "rows", "median implied n",
                            "registry n", "ratio"],
                           [(c.source, c.benchmark, c.table_version or "-", c.basis, c.rows, f"{c.median_n:.0f}",
                             c.registry_n, f"{c.ratio:.2f}") for c in small])))


def _share(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.0f} %" if whole else "-"


# Tables without an index listed by `status` (the counts cover them all).
INDEX_GAP_ROWS = 40


def coverage_text(coverage: Table) -> str:
    """The share of tables with an S per metric kind, then each table without one and what would give it one."""
    col = {c: i for i, c in enumerate(coverage.columns)}
    kinds: dict[str, list[int]] = {}
    for row in coverage.rows:
        k = kinds.setdefault(str(row[col["metric"]]), [0, 0])
        k[0] += bool(row[col["has_s"]])
        k[1] += 1
    lines = ["index coverage (newest analysis, scope all): " + ", ".join(
        f"{kind} {have} of {n} ({_share(have, n)})" for kind, (have, n) in sorted(kinds.items()))]
    gaps = [r for r in coverage.rows if not r[col["has_s"]]]
    if gaps:
        lines.append(f"tables without an index ({len(gaps)}) and the registry line that would give one:")
        shown = Table(["table", "population", "metric", "action"],
                      [(r[col["table_id"]], r[col["population"]], r[col["metric"]], r[col["action"]])
                       for r in gaps[:INDEX_GAP_ROWS]])
        lines.append(text_table(shown, widest=120))
        if len(gaps) > INDEX_GAP_ROWS:
            lines.append(f"… and {len(gaps) - INDEX_GAP_ROWS} more (benchwatch query \"SELECT * FROM saturation_latest "
                         "WHERE s_index IS NULL\")")
    return "\n".join(lines)

"""`benchwatch query SQL`: read-only ad hoc SQL over the history and the views."""

from __future__ import annotations

import argparse
import re
import sys
import json

from common.redact import inert_text
from cli.main import add_db_argument, open_read_only, store_of
from storage.db import DEFAULT_WAIT_SECONDS, StorageError
from storage.query import DEFAULT_MEMORY_LIMIT, DEFAULT_THREADS, DEFAULT_TIMEOUT_SECONDS, parse_memory_limit, Fetched, QueryCutOff, fetch_bounded, memory_limit_bytes, result_too_large, run_query

# A CSV cell a spreadsheet would evaluate (=HYPERLINK(…), +cmd, -2+3, @SUM): prefixed with ' .
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")

VIEWS_HELP = """\
views: leaderboard, latest_scores, latest_item_results, saturation_latest, saturation_history,
level_changes, post_cutoff_scores, suspects, resolved_cutoffs, model_cutoffs, benchmark_info,
model_info, learned_models, alerts_firing, notification_log; tables: benchmark_tables, trends, frontier, saturation,
snapshots, scores, item_results, fetches, rejects (see the README). Every column has a comment:
SELECT column_name, comment FROM duckdb_columns() WHERE table_name = 'leaderboard'
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
    p.add_argument("--max-rows", type=_row_count, default=200, metavar="N",
                   help="rows shown in table format, at least 1 (default 200)")
    p.add_argument("--timeout", type=_positive_seconds, default=DEFAULT_TIMEOUT_SECONDS, metavar="SECONDS",
                   help=f"cut the query off after this long (default {DEFAULT_TIMEOUT_SECONDS:.0f})")
    p.add_argument("--memory", type=_memory, default=DEFAULT_MEMORY_LIMIT, metavar="SIZE",
                   help=f"DuckDB memory limit for the query, e.g. 512MB, 2GB (default {DEFAULT_MEMORY_LIMIT}); "
                        "nothing spills to disk")
    p.add_argument("--threads", type=int, default=DEFAULT_THREADS, choices=range(1, 65), metavar="N",
                   help=f"DuckDB threads for the query (default {DEFAULT_THREADS})")
    add_db_argument(p)
    p.set_defaults(func=run)


def _row_count(text: str) -> int:
    """argparse type of --max-rows: an integer >= 1 (-1 showed "(no rows)" for a 1-row result)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of rows: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"--max-rows must be at least 1 (got {value})")
    return value


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"invalid time {text!r} (seconds > 0)")
    return value


def _memory(text: str) -> str:
    try:
        return parse_memory_limit(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def inert_csv(value: object) -> object:
    """`inert_text`, and a string a spreadsheet would run as a formula prefixed with a quote."""
    value = inert_text(value)
    if isinstance(value, str) and value.startswith(_FORMULA_START) and not _PLAIN_NUMBER.match(value):
        return "'" + value
    return value


def _neutralised(df, cell):
    import pandas as pd

    """Text columns through `cell`; column names too (they can be crafted with AS "…")."""
    out = df.copy()
    for col in out.columns:
        if out[col].dtype == object or pd.api.types.is_string_dtype(out[col].dtype):
            out[col] = out[col].map(cell, na_action="ignore").astype(object)
    out.columns = [str(cell(str(c))) for c in out.columns]
    return out


# Column types whose table cells `plain_table` writes exactly as pandas' to_string(index=False) does
_PLAIN_TYPES = frozenset({"BOOLEAN", "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT",
                          "UINTEGER", "UBIGINT", "VARCHAR"})
_PLAIN_MAX_TEXT = 50    # longer text: pandas' max_colwidth truncation applies, left to pandas


def plain_table(names: list[str], types: list[str], rows: list[tuple], max_rows: int) -> str | None:
    """The table format of `rows` (integers, booleans, text) without pandas, or None when
    pandas must format it (NULLs, more than max_rows rows, long or non-ASCII text).

    pandas' to_string(index=False): cells as str(v), a numeric (or boolean) column's name after one
    space, every cell right-justified to the column's widest cell or name, columns one space apart.
    """
    if not rows:
        return "(no rows)"
    if len(rows) > max_rows:
        return None
    cols = []
    for j, (name, typ) in enumerate(zip(names, types)):
        cells = []
        for row in rows:
            v = inert_csv(row[j])          # control characters and formula cells, as in CSV
            if isinstance(v, str) and (len(v) > _PLAIN_MAX_TEXT or not v.isascii()):
                return None
            if not isinstance(v, (bool, int, str)):
                return None
            cells.append(str(v))
        header = str(inert_csv(str(name)))
        if len(header) > _PLAIN_MAX_TEXT or not header.isascii():
            return None
        header = header if typ == "VARCHAR" else " " + header
        width = max(len(header), *(len(c) for c in cells))
        cols.append([header.rjust(width)] + [c.rjust(width) for c in cells])
    return "\n".join(" ".join(parts) for parts in zip(*cols))


def _fetch_table(max_rows: int, max_bytes: int | None = None):
    """A run_query `fetch`: plain results as text (no pandas import), anything else as a bounded
    DataFrame (`fetch_bounded`: at most max_rows rows and max_bytes bytes — default: those of the
    default --memory — are fetched, never the whole result)."""
    def fetch(con, statement: str) -> object:
        limit = memory_limit_bytes(DEFAULT_MEMORY_LIMIT) if max_bytes is None else max_bytes

        result = con.execute(statement)
        description = result.description or []
        if description and all(str(d[1]) in _PLAIN_TYPES for d in description):
            text = plain_table([d[0] for d in description], [str(d[1]) for d in description],
                               result.fetchmany(max_rows + 1), max_rows)
            if text is not None:
                return text
            result = con.execute(statement)     # rows consumed: run it again
        return fetch_bounded(result, max_rows=max_rows, max_bytes=limit)
    return fetch


def run(args: argparse.Namespace) -> int:

    try:
        df = run_query(args.sql, store_of(args, say_waits=True),
                       timeout=args.timeout, memory_limit=args.memory, threads=args.threads,
                       fetch=(_fetch_table(args.max_rows, memory_limit_bytes(args.memory))
                              if args.format == "table" else None),
                       process_bound=True, bring_current=lambda: _bring_current(args))
    except StorageError as exc:
        print_error(str(exc))
        return 130 if isinstance(exc, QueryCutOff) and exc.interrupted else 1
    if isinstance(df, str):
        print(df)
        return 0
    note, code = None, 0
    if isinstance(df, Fetched):     # table format: at most --max-rows rows, within --memory bytes
        if df.over_bytes:
            note, code = result_too_large(args.memory, df.rows_read), 1
        elif df.more_rows:
            note = f"more than {args.max_rows} rows: the first {args.max_rows} shown (--max-rows)"
        df = df.frame
    _print_frame(df, args)
    if note:
        print(f"benchwatch: {note}", file=sys.stderr)
    return code


def print_error(message: str) -> None:
    """The command's one-line summary ("benchwatch: query failed: Binder Error: …"), then the rest of
    DuckDB's message as it wrote it (its hints: "Candidate bindings: …", "Did you mean …", the
    `LINE 1:` pointer), each line without terminal control characters."""
    lines = message.replace("\t", "    ").splitlines() or [""]
    print(f"benchwatch: {inert_text(lines[0])}", file=sys.stderr)
    for line in lines[1:]:
        print(inert_text(line), file=sys.stderr)


def _json_columns(df) -> list[str]:
    """Columns DuckDB typed JSON (`storage.query.with_types`): output as nested values."""
    types = df.attrs.get("duckdb_types") or {}
    return [c for c in df.columns if types.get(str(c)) == "JSON"]


def _nested(df):
    """JSON columns decoded (a JSON text that does not parse stays the text it is)."""
    def decode(cell):
        if not isinstance(cell, str):
            return cell
        try:
            return json.loads(cell)
        except ValueError:
            return cell

    columns = _json_columns(df)
    if not columns:
        return df
    out = df.copy()
    for col in columns:
        out[col] = out[col].map(decode).astype(object)
    return out


def _bring_current(args: argparse.Namespace) -> None:
    """A file an older benchwatch wrote (older schema or view files): migrated, and the registry
    columns it adds filled, as every read-only command does (cli.main.open_read_only)."""
    con = open_read_only(args)
    if con is None:        # why was printed; the query's own open says it again if it still fails
        return
    con.close()


def _print_frame(df, args: argparse.Namespace) -> None:
    """A DataFrame in the chosen format (cells neutralised for table and CSV; NULL an empty cell)."""
    import pandas as pd

    if args.format == "csv":
        _neutralised(df, inert_csv).to_csv(sys.stdout, index=False)
    elif args.format == "json":  # exact: JSON escapes control characters itself, and nobody evaluates it
        sys.stdout.write(_nested(df).to_json(orient="records", date_format="iso", indent=None) + "\n")
    else:
        df = _neutralised(df, inert_csv)    # the README's promise: table output like CSV (NULL empty)
        for col in df.columns:              # na_rep misses None in text columns and <NA> of nullable integers
            if not pd.api.types.is_float_dtype(df[col].dtype) and df[col].isna().any():
                df[col] = df[col].astype(object).where(df[col].notna(), "")
        with pd.option_context("display.max_rows", args.max_rows, "display.max_columns", None,
                               "display.width", 200, "display.max_colwidth", 60):
            print(df.to_string(index=False, max_rows=args.max_rows, na_rep="") if len(df) else "(no rows)")

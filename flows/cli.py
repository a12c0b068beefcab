"""`benchwatch`: the command line. Each subcommand lives in flows/commands/<name>.py."""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys

from flows.commands import COMMANDS

DESCRIPTION = """\
benchwatch watches public LLM leaderboards and tells you when a benchmark number stops
meaning anything: saturation (top models within evaluation noise), post-cutoff slices, and
contamination-suspect score jumps — with the uncertainty behind every number.
"""

EPILOG = """\
examples:
  benchwatch run                          collect every source, analyze, notify (console unless Slack is set)
  benchwatch run --replay tests/fixtures/replay
  benchwatch ingest swebench leaderboards.json
  benchwatch query "SELECT * FROM saturation_latest ORDER BY s_index DESC"
  benchwatch saturation --n 500 99.2 99.0 98.3 98.2 98.2

The database is $BENCHWATCH_DB or ./benchwatch.duckdb unless --db is given.
"""


def add_db_argument(parser: argparse.ArgumentParser) -> None:
    """The common --db option (default $BENCHWATCH_DB or ./benchwatch.duckdb)."""
    parser.add_argument("--db", metavar="PATH", default=None,
                        help="DuckDB file (default: $BENCHWATCH_DB or ./benchwatch.duckdb)")


def source_list(text: str) -> list[str]:
    """argparse type of --sources: 'a,b' -> ['a', 'b'], each a registered source."""
    import scrapers
    names = [s.strip() for s in text.split(",") if s.strip()]
    unknown = [s for s in names if s not in scrapers.SOURCES]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"unknown source(s) {', '.join(unknown) or repr(text)}; "
                                         f"known: {', '.join(scrapers.SOURCES)}")
    return names


def add_sources_argument(parser: argparse.ArgumentParser, help: str) -> None:
    parser.add_argument("--sources", metavar="A,B", type=source_list, default=None, help=help)


def open_read_only(args: argparse.Namespace):
    """A read-only connection for a command (`args.db`, `args.wait`), saying on stderr while it
    waits for a writer; None, after printing why, when the database cannot be opened."""
    from storage.db import StorageError, open_connection
    try:
        return open_connection(args.db, read_only=True, wait=args.wait,
                               on_wait=lambda m: print(f"benchwatch: {m}", file=sys.stderr))
    except StorageError as exc:
        print(f"benchwatch: {exc}", file=sys.stderr)
        return None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="benchwatch", description=DESCRIPTION, epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more log output (-vv for debug)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"flows.commands.{name}").register(sub)
    return parser


def setup_logging(verbosity: int) -> None:
    level = logging.WARNING if verbosity == 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    logging.getLogger("benchwatch").setLevel(level)


def quiet_prefect_defaults() -> None:
    """Defaults for Prefect's embedded (ephemeral) server when run from the CLI, unless set:
    its telemetry heartbeat fails offline with a SQLite 'database is locked' traceback
    (ENGINEERING-NOTES §2.3). Set the variables yourself to override."""
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")


def main(argv: list[str] | None = None) -> int:
    quiet_prefect_defaults()
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    setup_logging(args.verbose)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

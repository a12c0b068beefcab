"""`benchwatch`: the command line. Each subcommand lives in cli/commands/<name>.py.

benchwatch's own modules are imported inside the functions here: a command first checks that
its packages are benchwatch's (`foreign_packages`), and the parser loads only the command run
(a subcommand's module imports its implementation when it runs), which keeps `query`,
`status` and `--help` to what they use.
"""

from __future__ import annotations

import argparse
import errno as errno_names
import importlib
import importlib.util
import logging
import os
import signal
import sys
import threading
import traceback
from pathlib import Path

from typing import TYPE_CHECKING

from cli.commands import COMMANDS

if TYPE_CHECKING:
    from storage.store import Store

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

exit codes: 0 done; 1 failed for a reason stated on stderr (bad input, a database that cannot
be used, every source failed, Slack refused, a full disk or read-only file system, PostgreSQL
gone); 2 usage error; 70 a bug (an unexpected exception:
one line, -v for the traceback); 130 interrupted (Ctrl-C); 141 the reader closed our output
(`| head`); 143 terminated (SIGTERM).
"""

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_BUG = 70          # sysexits.h EX_SOFTWARE
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141   # 128 + SIGPIPE: the reader of our output closed it (`| head`)
EXIT_TERMINATED = 143
_PACKAGES = ("cli", "flows", "jobs", "report", "storage", "scrapers", "analysis", "alerts", "registry", "common")
_HOME = Path(__file__).resolve().parents[1]     # the directory holding benchwatch's packages


def add_db_argument(parser: argparse.ArgumentParser) -> None:
    """The common --db option (default $BENCHWATCH_DB or ./benchwatch.duckdb)."""
    parser.add_argument("--db", metavar="PATH", default=None,
                        help="DuckDB file, or ducklake:postgres:<libpq conninfo> with $BENCHWATCH_DATA_PATH "
                             "(default: $BENCHWATCH_DB or ./benchwatch.duckdb)")


def output_refused(command: str, out: object, inputs: list) -> bool:
    """True, after one line on stderr, when `out` (a file the command writes) is one of `inputs`
    (jobs.outputs: the database, its WAL, benchwatch's configuration, the command's input
    files); the command then exits EXIT_USAGE."""
    from jobs.outputs import refusal
    why = refusal(str(out), inputs)
    if why:
        print(f"benchwatch {command}: {why}", file=sys.stderr)
    return why is not None


def database_refused(command: str, store: Store, inputs: list) -> bool:
    """`output_refused` for the database a writing command fills (`--db`, default
    $BENCHWATCH_DB): not one of its input files, nor inside an input folder, nor benchwatch's
    configuration. A DuckLake store names no local file: nothing to compare."""
    from jobs.outputs import own_inputs
    return store.file is not None and output_refused(command, str(store.file), inputs + own_inputs())


def store_of(args: argparse.Namespace, *, say_waits: bool = False) -> Store:
    """The store `--db` names (default $BENCHWATCH_DB or ./benchwatch.duckdb), made once by the
    command and handed to what it runs; its opens wait up to `--wait` seconds for a writer
    (`say_waits`: saying so on stderr, else in the log). A malformed DuckLake URL is a
    StorageError."""
    from storage.store import open_store
    from storage.db import DEFAULT_WAIT_SECONDS
    say = (lambda m: print(f"benchwatch: {m}", file=sys.stderr)) if say_waits else None  # noqa: E731
    return open_store(args.db, wait=getattr(args, "wait", DEFAULT_WAIT_SECONDS), on_wait=say)


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
    from storage.db import StorageError

    def sync_registry(con) -> None:   # the registry loaders (pandas) only for a file that is behind
        from jobs.sync import sync_registry
        sync_registry(con)

    try:   # a file an older benchwatch wrote: new schema, and the registry columns it adds filled
        return store_of(args, say_waits=True).open_current(then=sync_registry)
    except StorageError as exc:
        from common.redact import redact
        print(f"benchwatch: {redact(exc)}", file=sys.stderr)
        return None


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; with `command` (the one `argv` runs, `chosen_command`) only that
    command's module is imported and its parser added (argv names no other): a command's
    start-up does not pay for the other fifteen."""
    parser = argparse.ArgumentParser(prog="benchwatch", description=DESCRIPTION, epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="more log output: INFO lines, Prefect's run lines included (-vv for debug)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        if command in (None, name):
            importlib.import_module(f"cli.commands.{name}").register(sub)
    return parser


def chosen_command(argv: list[str]) -> str | None:
    """The command `argv` runs (its first word, after the global options), or None when the top
    level parses it (no command, an unknown one, or -h/--help before it: the full listing)."""
    for token in argv:
        if token in ("-h", "--help"):
            return None
        if not token.startswith("-"):
            return token if token in COMMANDS else None
    return None


def setup_logging(verbosity: int, stores: list[str] | None = None, *, service: bool = False) -> None:
    """One `benchwatch` logger hierarchy at the chosen level, redacted once at its root
    (`common.redact.install`: every record under `benchwatch`, `slack_sdk`, `urllib3`).
    `service` (`serve`): a long-running process whose log is its output, Prefect's run lines included."""
    from common import redact
    redact.install()
    level = logging.WARNING if verbosity == 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    from common.console import DropReported
    for handler in logging.getLogger().handlers:   # the terminal: what a command prints in its summary, once
        if getattr(handler, "stream", None) is not sys.stderr:
            continue
        # the terminal shows the chosen level whatever a library sets on its own loggers (Prefect's
        # INFO run lines; its API handler, which feeds the run's log in the UI, is not this one)
        handler.setLevel(logging.NOTSET if service else level)
        if not any(isinstance(f, DropReported) for f in handler.filters):
            handler.addFilter(DropReported())
            if verbosity == 0:
                handler.addFilter(DropLostCatalog(stores or []))
    logging.getLogger("benchwatch").setLevel(level)


class DropLostCatalog(logging.Filter):
    """Without -v, on the terminal: the records of a DuckLake catalog whose PostgreSQL is gone (a
    step's traceback, Prefect's task and flow failures and their "Finished in state Failed" lines):
    a store error, or a Prefect line naming the catalog, while a fresh connection to the catalog
    of a store the command uses fails (storage.lake.catalog_lost). The command stops and says it in one line
    (`environment_failure`: what happened, what to do); -v shows them all, and Prefect's own run
    log keeps them."""

    def __init__(self, stores: list[str]) -> None:
        super().__init__()
        self.stores = stores

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if not self.stores or (exc is None and not record.name.startswith("prefect")):
            return True
        from storage.lake import catalog_lost, catalog_unreachable
        if exc is not None:
            return not any(catalog_lost(target, exc) for target in self.stores)
        text = record.getMessage()
        names_catalog = any(word in text for word in ("DuckLake", "Postgres", "CatalogLost"))
        return not (names_catalog and any(catalog_unreachable(target) for target in self.stores))


def stores_of(args: argparse.Namespace) -> list[str]:
    """The values of a command's options that may name a store (`--db`, `migrate --to`, and
    `$BENCHWATCH_DB` for a `--db` left out): storage tells a DuckLake one from the rest
    (storage.lake.catalog_lost), when a failure asks."""
    from common import settings
    values = [v for v in vars(args).values() if isinstance(v, str)]
    if "db" in vars(args) and not args.db:
        values.append(settings.read().db or "")
    return [v for v in values if v]


def quiet_prefect_defaults() -> None:
    """Defaults for Prefect's embedded (ephemeral) server when run from the CLI, unless set:
    its telemetry heartbeat fails offline with a SQLite 'database is locked' traceback
    (docs/architecture.md, "Prefect and Slack facts"). Set the variables yourself to override."""
    from common.settings import PREFECT_SERVER_ANALYTICS
    os.environ.setdefault(PREFECT_SERVER_ANALYTICS, "false")


def _register_db_secret(db: object) -> None:
    """The password of a `ducklake:postgres:` --db, registered before anything can print it: every
    line on stdout/stderr that goes through `common.redact` (errors, logs, -v tracebacks) loses it."""
    if isinstance(db, str) and ("password" in db.lower() or "://" in db):
        from common.redact import register_conninfo
        register_conninfo(db)


def _on_sigterm(signum: int, frame: object) -> None:
    from common import shutdown
    shutdown.request()      # first: DuckDB may turn the exception below into its own error
    raise shutdown.Terminated()


def where(exc: BaseException) -> str:
    """file:line (function) of the innermost frame of benchwatch's own code in the traceback."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if any(f"{os.sep}{pkg}{os.sep}" in f.filename for pkg in _PACKAGES)
            and "site-packages" not in f.filename]
    if not (ours or frames):
        return "unknown place"
    frame = (ours or frames)[-1]
    parts = Path(frame.filename).parts
    short = "/".join(parts[-2:])
    return f"{short}:{frame.lineno} ({frame.name})"


# Failures of the machine, not of benchwatch: (errno names, words DuckDB/libpq put in the message,
# what to say). Checked on the exception and its causes; exit 1 with one line, not 70.
_ENVIRONMENT = (
    (("ENOSPC", "EDQUOT"), ("No space left on device", "Disk quota exceeded"),
     "the disk is full; free space and run it again (what was committed before is kept)"),
    (("EFBIG",), ("File too large",),
     "a file size limit stopped a write (ulimit -f / RLIMIT_FSIZE); raise it and run again"),
    (("EROFS",), ("Read-only file system",),
     "the database's file system is read-only; use --db on a writable one"),
    (("EACCES", "EPERM"), ("Permission denied", "Operation not permitted"),
     "no permission to write there; check the path of --db and its folder"),
)
LOST_CATALOG = ("lost the connection to PostgreSQL (the DuckLake catalog); check the server and run it again "
                "(what was committed before is kept)")


def environment_failure(exc: BaseException, stores: list[str] | tuple[str, ...] = ()) -> str | None:
    """What to tell a person when `exc` (or an exception it came from) is the machine's doing: a
    full disk, a file size limit, a read-only file system, a permission, the PostgreSQL of a
    DuckLake catalog gone (a lake among `stores`, those the command uses: storage.lake.catalog_lost).
    None for anything else (a bug)."""
    from storage.engine import duckdb
    from common.errors import exception_chain
    from storage.lake import catalog_lost, raised_catalog_lost
    if raised_catalog_lost(exc) or \
            any(catalog_lost(target, exc) for target in stores):
        return LOST_CATALOG
    seen = exception_chain(exc)
    for item in seen:
        code = item.errno if isinstance(item, OSError) else None
        driver = type(item).__module__.split(".")[0] in ("psycopg", "psycopg2")   # the writer lock's connection
        text = str(item) if isinstance(item, (OSError, duckdb.Error)) or driver else ""
        for names, words, message in _ENVIRONMENT:
            if code is not None and code in {getattr(errno_names, n) for n in names if hasattr(errno_names, n)}:
                return message
            if text and any(w in text for w in words):
                return message
    return None


def report_failure(command: str, exc: BaseException, verbose: int, stores: list[str] | None = None) -> int:
    """One line on stderr for an exception a command did not handle; the exit code that says which kind."""
    from storage.engine import duckdb

    from common.redact import one_line, redact
    from storage.db import StorageError, is_corruption
    if isinstance(exc, StorageError):
        print(f"benchwatch {command}: {one_line(exc, 500)}", file=sys.stderr)
        return EXIT_FAILED
    if is_corruption(exc):
        print(f"benchwatch {command}: the database file is damaged ({one_line(exc, 300)}); "
              "restore a backup or start a new file", file=sys.stderr)
        return EXIT_FAILED
    if isinstance(exc, duckdb.Error) and "Could not set lock" in str(exc):
        print(f"benchwatch {command}: the database is locked by another process; retry later", file=sys.stderr)
        return EXIT_FAILED
    environment = environment_failure(exc, stores=stores or [])
    if environment:
        print(f"benchwatch {command}: {environment} ({one_line(exc, 300)})", file=sys.stderr)
        return EXIT_FAILED
    if verbose:
        print(redact("".join(traceback.format_exception(exc))), file=sys.stderr, end="")
    print(f"benchwatch {command}: unexpected {type(exc).__name__} in {where(exc)}: {one_line(exc, 300)} "
          f"(a bug; {'traceback above' if verbose else 'run with -v for the traceback'})", file=sys.stderr)
    return EXIT_BUG


def foreign_packages(packages: tuple[str, ...] = _PACKAGES, home: Path = _HOME) -> list[str]:
    """The top-level packages benchwatch installs that Python imports from somewhere else.

    The names are generic (`storage`, `common`, `cli`, …; docs/architecture.md says why they
    stay): a distribution that installs one of them earlier on the path would shadow ours and
    break benchwatch in confusing ways. Cheap (a path lookup per name, nothing imported)."""

    found = []
    for name in packages:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        places = list(spec.submodule_search_locations or []) if spec else []
        if not any(Path(p).resolve() == home / name for p in places):
            where = places[0] if places else (spec.origin if spec else "nowhere")
            found.append(f"{name!r} from {where}")
    return found


def main(argv: list[str] | None = None) -> int:
    """`benchwatch`: the command's exit code. Everything it writes to stdout and stderr, printed
    lines and log records alike, passes `common.console.PrintableStream`: a scraped name or a
    setting cannot put a raw control character (an escape sequence, a carriage return) on the
    terminal."""
    from common.console import PrintableStream
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = PrintableStream(out), PrintableStream(err)
    try:
        return _main(argv)
    finally:
        sys.stdout, sys.stderr = out, err


def _main(argv: list[str] | None) -> int:
    foreign = foreign_packages()
    if foreign:
        print(f"benchwatch: top-level package(s) {', '.join(foreign)}, not from this benchwatch ({_HOME}): "
              "another installed distribution uses the same name; uninstall it or use a separate "
              "virtual environment", file=sys.stderr)
        return EXIT_FAILED
    from common import shutdown
    from common.shutdown import Terminated
    quiet_prefect_defaults()
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(chosen_command(argv))
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    stores = stores_of(args)
    setup_logging(args.verbose, stores, service=args.command == "serve")
    _register_db_secret(getattr(args, "db", None))
    command = " ".join(filter(None, [args.command, getattr(args, "action", None)]))
    previous = None
    if threading.current_thread() is threading.main_thread():
        shutdown.clear()
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        code = int(args.func(args) or 0)
        if shutdown.requested():    # the handler ran but its Terminated was swallowed on the way (e.g.
            # raised in a callback whose exceptions Python ignores): still a stop, as documented
            print(f"benchwatch {command}: terminated (SIGTERM)", file=sys.stderr)
            return EXIT_TERMINATED
        return code
    except BrokenPipeError:
        # The reader went away (`benchwatch status | head`): not a failure of ours. Point stdout at
        # /dev/null so the interpreter's final flush does not raise again, and exit as a process
        # killed by SIGPIPE would (128 + 13), which is what shells expect.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        print(f"benchwatch {command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Terminated:
        print(f"benchwatch {command}: terminated (SIGTERM)", file=sys.stderr)
        return EXIT_TERMINATED
    except Exception as exc:  # noqa: BLE001 - the one place that turns any exception into one line
        if shutdown.requested():    # what SIGTERM became inside DuckDB ("Query interrupted"): a stop
            print(f"benchwatch {command}: terminated (SIGTERM)", file=sys.stderr)
            return EXIT_TERMINATED
        return report_failure(command, exc, args.verbose, stores)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

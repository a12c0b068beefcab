"""The one way to open the DuckDB file: UTC sessions, migrations, and waiting on the file lock.
Callers above storage open it through the store they are handed (storage/store.py), which
calls these with its target.

DuckDB allows one writing process per file (readers in other processes are refused while it
writes), and has no busy timeout. Writers therefore hold a connection only for the write (each
closed, with its checkpoint, when its block ends: no instance is kept between connections),
and every opener retries on the lock for up to `wait` seconds, saying that it waits.
"""

from __future__ import annotations

import logging
import os
import re
import shlex
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator
import shutil

from common import settings
from storage.engine import duckdb

from common.redact import first_line as _first_line
from storage.threads import configured_threads
from storage.migrations import latest_version, migrations, sequence_ids  # noqa: F401 - re-exported (the shipped schema)
from storage import beside, lake, views
from storage.frames import insert_frame, next_ids, quote_ident, registered_frame  # noqa: F401 - re-exported
from storage.beside import NewDatabase, new_database  # noqa: F401 - re-exported (jobs.ingest)

log = logging.getLogger("benchwatch.storage")

DEFAULT_DB = "benchwatch.duckdb"
DEFAULT_WAIT_SECONDS = 60.0


class StorageError(Exception):
    """A database problem stated for a person (path, what happened, what to do)."""


class DatabaseLocked(StorageError):
    """Another process held the file lock for longer than we were willing to wait.

    The one storage failure that time can fix: Prefect retries a collection task on this
    type only (flows/pipeline.py), never on a permanent problem such as an unwritable file.
    """


class SchemaTooNew(StorageError):
    """The file was migrated by a newer benchwatch; writing to it could corrupt what that version keeps."""


# A value of `duckdb.connect(config=…)`.
DuckDBSetting = str | bool | int | float | list[str]

# Never install or load DuckDB extensions behind the user's back: a SQLite (or Parquet, …) file
# given as --db would otherwise make DuckDB download the matching extension from the network.
# Never let SQL read a Python variable by its name (DuckDB's "replacement scan"): a DataFrame
# reaches SQL only through `registered_frame`/`insert_frame`, so renaming a local cannot change
# what a statement reads, and an ad hoc query cannot read the process's variables.
BASE_CONFIG: dict[str, DuckDBSetting] = {"autoinstall_known_extensions": False, "autoload_known_extensions": False,
                                         "python_enable_replacements": False}
# The storage format of a file benchwatch creates (an existing file keeps its own). DuckDB's default
# (v0.10.2) stores each column's distinct-value statistics in the old ~3 KB form, which every
# connection converts as it loads the catalog, on every open of a benchwatch file (~500
# columns). v1.5.0 stores the compact form; the file then
# opens with DuckDB 1.5 or newer (benchwatch requires 1.5). (v1.1.0 crashed DuckDB 1.5.5 in an
# INSERT OR REPLACE of the registry sync, tests/integration/test_storage.py; v1.2.0 and later did not.)
NEW_FILE_STORAGE_VERSION = "v1.5.0"
_SQLITE_MAGIC = b"SQLite format 3\x00"


def default_path() -> str:
    return settings.read().db or DEFAULT_DB


def __getattr__(name: str) -> object:
    if name == "SEQUENCE_IDS":   # the former constant, now derived (read lazily: `query` never needs it)
        return sequence_ids()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _is_wal_replay_error(exc: Exception) -> bool:
    return "replaying WAL" in str(exc) or "replaying the WAL" in str(exc)


def _wal_advice(path: str, exc: Exception) -> str:
    """What to do with a database whose write-ahead log DuckDB cannot replay (one line, DuckDB's
    reason last). Nothing is moved automatically: the log may hold the only copy of the last changes."""
    wal = f"{path}.wal"
    reason = _first_line(exc)
    reason = reason.split('": ', 1)[1] if '": ' in reason else reason     # the part after the quoted path
    return (f"database {path} cannot be opened: DuckDB cannot replay its write-ahead log {wal}. "
            f"Back up both files first, then move the log aside (mv {shlex.quote(wal)} "
            f"{shlex.quote(wal + '.unreplayable')}) and run again: the database then opens as of its last "
            f"checkpoint, without the changes only the log held (DuckDB: {reason})")


def _is_lock_error(exc: Exception) -> bool:
    text = str(exc)
    return "Could not set lock" in text or "Conflicting lock" in text


def open_connection(path: str | os.PathLike | None = None, *, read_only: bool = False,
                    wait: float = DEFAULT_WAIT_SECONDS,
                    on_wait: Callable[[str], None] | None = None,
                    sandboxed: bool = False, memory_limit: str | None = None,
                    threads: int | None = None) -> duckdb.DuckDBPyConnection:
    """Open the file, retrying while another process holds the lock (up to `wait` seconds), on
    `$BENCHWATCH_THREADS` threads when it is set (storage/threads.py).

    `sandboxed` also disables file-system access from SQL (COPY TO, read_csv, ATTACH) and
    spilling to `<db>.tmp/`, applies `memory_limit`/`threads`, and then locks the configuration
    (no `SET`/`RESET` can lift a limit), for ad hoc queries that must not write anything anywhere.
    """
    config: dict[str, DuckDBSetting] = dict(BASE_CONFIG)
    try:
        default_threads = configured_threads()     # $BENCHWATCH_THREADS (storage/threads.py)
    except ValueError as exc:
        raise StorageError(str(exc)) from None
    if default_threads:
        config["threads"] = default_threads
    if sandboxed:
        config.update({"enable_external_access": False, "temp_directory": ""})
        if memory_limit:
            config["memory_limit"] = memory_limit
        if threads:
            config["threads"] = int(threads)
    path = str(path or default_path())
    if lake.is_lake_url(path):
        return _open_lake(path, read_only=read_only, config=config, wait=wait, on_wait=on_wait, sandboxed=sandboxed)
    if read_only and not Path(path).exists():
        raise StorageError(f"database {path} does not exist (run `benchwatch run` or `benchwatch ingest` first)")
    _refuse_foreign_file(path)
    if not read_only:
        _make_parent(path)
        if not Path(path).exists():
            config["storage_compatibility_version"] = NEW_FILE_STORAGE_VERSION
    deadline = time.monotonic() + max(wait, 0.0)
    told = False
    delay = 0.1
    while True:
        try:
            con = duckdb.connect(path, read_only=read_only, config=config)
            break
        except duckdb.Error as exc:
            if _is_wal_replay_error(exc):
                raise StorageError(_wal_advice(path, exc)) from exc
            if not _is_lock_error(exc):
                raise StorageError(f"cannot open database {path}: {_first_line(exc)}") from exc
            if time.monotonic() >= deadline:
                raise DatabaseLocked(
                    f"database {path} is locked by another process (a benchwatch run writing?); "
                    f"gave up after {wait:.0f} s — retry later or raise --wait") from exc
            if not told:
                msg = f"database {path} is locked by another process; waiting up to {wait:.0f} s"
                (on_wait or log.warning)(msg)
                told = True
            time.sleep(delay)
            delay = min(delay * 1.5, 1.0)
    try:
        _start_session(con, sandboxed=sandboxed)
    except BaseException:
        con.close()
        raise
    return con


def _make_parent(path: str) -> None:
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StorageError(f"cannot create the directory of database {path}: {exc.strerror}") from exc


def _start_session(con: duckdb.DuckDBPyConnection, *, sandboxed: bool = False) -> None:
    """What every connection starts with: UTC (a setting of the connection, not the instance), and
    for a sandboxed one the configuration locked (no `SET`/`RESET` can lift a limit)."""
    con.execute("SET TimeZone = 'UTC'")
    if sandboxed:
        con.execute("SET lock_configuration = true")


def _open_lake(path: str, *, read_only: bool, config: dict[str, DuckDBSetting], wait: float,
               on_wait: Callable[[str], None] | None, sandboxed: bool) -> duckdb.DuckDBPyConnection:
    """A DuckLake catalog (storage/lake.py): a lock timeout is DatabaseLocked, the rest StorageError."""
    try:
        con = lake.open_lake(lake.parse(path, need_data_path=not read_only), read_only=read_only, config=config,
                             wait=wait, on_wait=on_wait)
    except TimeoutError as exc:
        raise DatabaseLocked(f"{exc} — retry later or raise --wait") from exc
    except (lake.LakeError, duckdb.Error) as exc:
        raise StorageError(str(exc) if isinstance(exc, lake.LakeError)
                           else f"cannot open {lake.parse(path, need_data_path=False).redacted()}: {_first_line(exc)}") from exc
    try:
        _start_session(con, sandboxed=sandboxed)
    except BaseException:
        lake.release(con)
        con.close()
        raise
    return con


def _refuse_foreign_file(path: str) -> None:
    """A file that is not a DuckDB database is refused by name before DuckDB guesses at it."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(_SQLITE_MAGIC))
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StorageError(f"cannot read database {path}: {exc.strerror}") from exc
    if head == _SQLITE_MAGIC:
        raise StorageError(f"{path} is a SQLite file, not a benchwatch DuckDB database (check --db / $BENCHWATCH_DB)")


def is_corruption(exc: BaseException) -> bool:
    """A DuckDB error that says the file itself is damaged (checksum mismatch, invalid file)."""
    text = str(exc)
    return isinstance(exc, duckdb.Error) and ("Corrupt database file" in text or "not a valid DuckDB" in text)


@contextmanager
def connect(path: str | os.PathLike | None = None, *, read_only: bool = False,
            wait: float = DEFAULT_WAIT_SECONDS,
            on_wait: Callable[[str], None] | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """`with connect(path) as con:` — a short-lived connection; write connections are migrated.

    The schema only: the registry tables are filled by `storage.registry_sync.sync_registry`,
    which the jobs that need them call explicitly (`jobs.sync.connect_synced`). A store
    error in the body on a lake whose catalog a fresh connection cannot reach is raised as
    `lake.CatalogLost` (from it), whatever its words: storage.lake.catalog_lost."""
    con = _open_migrated(path, read_only=read_only, wait=wait, on_wait=on_wait)
    try:
        yield con
    except Exception as exc:
        lost = lake.as_catalog_lost(str(path or default_path()), exc)
        if lost is not None:        # a lake whose catalog is gone: no later step reaches it either
            raise lost from exc
        raise
    finally:
        con.close()
        lake.release(con)


def _open_migrated(path: str | os.PathLike | None, *, read_only: bool, wait: float,
                   on_wait: Callable[[str], None] | None) -> duckdb.DuckDBPyConnection:
    """A connection to a file at this code's schema. A file changes schema only beside itself
    (storage/beside.py): a new one is built under a private name and linked into place, an older
    one is upgraded as a copy that replaces it; a current one is just opened (one query)."""
    if read_only:
        return open_connection(path, read_only=True, wait=wait, on_wait=on_wait)
    target = str(path or default_path())
    on_file = not lake.is_lake_url(target) and not _in_memory(target)
    if on_file and not Path(target).exists():
        _create_beside(target, wait=wait, on_wait=on_wait)
    for _ in range(_UPGRADE_ATTEMPTS):
        con = open_connection(target, wait=wait, on_wait=on_wait)
        try:
            if not on_file:
                migrate(con)         # a DuckLake store: catalog transactions (`migrate`)
                return con
            if not _schema_work(con):
                return con
            con.execute("CHECKPOINT")      # the WAL into the file: the copy below is then the whole database
        except BaseException as exc:
            con.close()
            lake.release(con)
            if isinstance(exc, duckdb.Error) and is_corruption(exc):
                raise StorageError(f"database {target} is damaged: {_first_line(exc)}") from exc
            raise
        con.close()
        _upgrade_beside(target, wait=wait, on_wait=on_wait)
    raise StorageError(f"database {target} kept being written by another process while benchwatch tried to "
                       "upgrade its schema; stop the other writer and run again")


# How often `_open_migrated` starts over when another process wrote between its checks.
_UPGRADE_ATTEMPTS = 5


def _in_memory(path: str) -> bool:
    return path == "" or path.startswith(":memory:")


def _create_beside(target: str, *, wait: float, on_wait: Callable[[str], None] | None) -> None:
    """A database that does not exist yet, built fully migrated under a private name in its
    directory and linked into place (never over a file another process made meanwhile)."""
    _make_parent(target)
    try:
        with beside.dir_lock(Path(target).parent, wait=wait, on_wait=on_wait):
            if Path(target).exists():      # another process made it while this one waited
                return
            beside.remove_leftovers(target)
            temp = beside.temp_beside(target, beside.CREATING)
            try:
                _build(temp)
                if beside.link_into_place(temp, target):
                    log.info("[storage] created %s at schema %d", target, latest_version())
            finally:
                beside.remove(temp)
    except TimeoutError as exc:
        raise DatabaseLocked(f"cannot create database {target}: {exc}; gave up after {wait:.0f} s") from exc


def _upgrade_beside(target: str, *, wait: float, on_wait: Callable[[str], None] | None) -> None:
    """Migrate a copy of the (checkpointed) file `target` and put it in place in one rename.

    Under the directory lock (one upgrade at a time) and a read-only connection to `target`
    (DuckDB's shared lock: no process writes it meanwhile, and a read-only instance never writes
    or removes its WAL, also after the rename). A WAL found then means another writer came
    between the caller's checkpoint and this lock: nothing is done and the caller starts over."""
    real = os.path.realpath(target)      # a symlink's file is upgraded, the link kept
    try:
        with beside.dir_lock(Path(real).parent, wait=wait, on_wait=on_wait):
            guard = open_connection(target, read_only=True, wait=wait, on_wait=on_wait)
            try:
                if Path(f"{target}.wal").exists() or not _schema_work(guard):
                    return     # written meanwhile (start over), or upgraded by another process
                beside.remove_leftovers(real)
                temp = beside.temp_beside(real, beside.UPGRADING)
                try:
                    shutil.copyfile(real, temp)
                    shutil.copymode(real, temp)
                    _build(temp)
                    beside.replace(temp, real)
                finally:
                    beside.remove(temp)
            finally:
                guard.close()
    except TimeoutError as exc:
        raise DatabaseLocked(f"cannot upgrade database {target}: {exc}; gave up after {wait:.0f} s") from exc
    log.info("[storage] upgraded %s to schema %d beside it", target, latest_version())


def _build(temp: Path) -> None:
    """Migrate the private file `temp` (new, or a copy), checkpoint it, close it and fsync it: after
    this it is a whole database on disk, with no WAL."""
    con = open_connection(temp, wait=0)
    try:
        migrate(con)
        con.execute("CHECKPOINT")
    finally:
        con.close()
    if Path(f"{temp}.wal").exists():     # DuckDB removes the WAL at a checkpoint: not one then
        raise StorageError(f"database {temp} kept a write-ahead log after its checkpoint; nothing was put in place")
    beside.fsync_file(temp)


def _schema_work(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether `migrate(con)` would change the file: a shipped migration it lacks, or, at this
    code's newest schema, a view file whose text changed (one statement on a current file).
    SchemaTooNew for a file a newer benchwatch migrated."""
    try:
        rows = con.execute("SELECT NULL, version::VARCHAR FROM schema_migrations UNION ALL "
                           "SELECT path, sha256 FROM schema_files").fetchall()
    except duckdb.CatalogException:     # before migration 025 (no schema_files), or no schema at all
        try:
            rows = con.execute("SELECT NULL, version::VARCHAR FROM schema_migrations").fetchall()
        except duckdb.CatalogException:
            rows = []
    done = {int(v) for p, v in rows if p is None}
    _refuse_newer(done)
    if any(version not in done for version, _, _ in migrations()):
        return True
    return max(done, default=0) >= latest_version() and views.changed({p: v for p, v in rows if p is not None})


def _refuse_newer(done: set[int]) -> None:
    known = max((v for v, _, _ in migrations()), default=0)
    if done and max(done) > known:
        raise SchemaTooNew(
            f"the database has schema version {max(done)}, newer than this benchwatch knows ({known}): "
            "it was migrated by a newer benchwatch; upgrade benchwatch (nothing was written)")


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """All-or-nothing: one ingested snapshot, one alert evaluation, …"""
    con.execute("BEGIN TRANSACTION")
    try:
        yield con
    except BaseException:
        unless_closed(con, "ROLLBACK")
        raise
    else:
        con.execute("COMMIT")


def unless_closed(con: duckdb.DuckDBPyConnection, sql: str, params: list | None = None) -> None:
    """A block's closing statement (a ROLLBACK, a setting put back), run unless the connection is
    closed already: closing it ended its transaction and its settings.

    That is how a block ends when SIGTERM lands inside its `__enter__`, after the generator's
    `yield`: the block's `__exit__` never runs, the connection's own block closes the connection,
    and the garbage collector closes the generator later. Its error would then be printed after
    the command's last line (`terminated (SIGTERM)`)."""
    try:
        con.execute(sql, params)
    except duckdb.ConnectionException:
        pass


def migrate(con: duckdb.DuckDBPyConnection) -> list[int]:
    """Apply the migrations this file has not seen, each in its own transaction (a new DuckLake
    store: all in one; translated for DuckLake: storage/lake.py), then the view files that changed
    (storage/views)."""
    on_lake = lake.is_lake(con)
    ddl = lake.translate_ddl if on_lake else (lambda text: text)
    con.execute(ddl("""CREATE TABLE IF NOT EXISTS schema_migrations (
        version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied_at TIMESTAMPTZ NOT NULL)"""))
    done = {r[0] for r in con.execute("SELECT version FROM schema_migrations").fetchall()}
    shipped = migrations()
    _refuse_newer(done)
    applied = []
    todo = [(version, name, sql) for version, name, sql in shipped if version not in done]
    # A new DuckLake store is made in one catalog transaction: whole or not at all, and one commit
    # instead of one per migration (each commit writes the catalog's snapshot tables). A store
    # with migrations already applied moves one migration per transaction, as a file does.
    groups = [todo] if on_lake and not done and todo else [[m] for m in todo]
    for group in groups:
        with transaction(con):
            for version, name, sql in group:
                con.execute(ddl(sql))
                con.execute("INSERT INTO schema_migrations VALUES (?, ?, now())", [version, name])
        for version, name, _ in group:
            log.info("[storage] applied migration %03d_%s", version, name)
            applied.append(version)
    # The views' current definitions and the comments of views and tables (storage/views): after
    # the migrations, whenever a file's text changed — also with no migration to apply. They
    # describe this code's newest schema, so a file left at an older one (tests build such files
    # with fewer migrations) keeps the views its migrations made.
    if max(done | set(applied), default=0) >= latest_version():
        views.apply(con, every=bool(applied))
    if applied and not on_lake:
        # DuckDB cannot replay an ALTER of a table with a nextval default from the WAL ("Failure
        # while replaying WAL file … no default database set"): a process killed, or a disk that
        # filled, before the next checkpoint would leave a file that never opens again.
        con.execute("CHECKPOINT")
    return applied


def schema_version(con: duckdb.DuckDBPyConnection) -> int:
    row = con.execute("SELECT coalesce(max(version), 0) FROM schema_migrations").fetchone()
    return int(row[0]) if row else 0     # an aggregate: always one row


def open_current(path: str | os.PathLike | None = None, *, wait: float = DEFAULT_WAIT_SECONDS,
                 on_wait: Callable[[str], None] | None = None,
                 then: Callable[[duckdb.DuckDBPyConnection], object] | None = None) -> duckdb.DuckDBPyConnection:
    """A read-only connection to a file at this code's schema, for a read-only command (views and
    columns must match the code): one connect when the file is current, the usual case. A file an
    older benchwatch wrote is first migrated on a short write connection, on which `then(con)`
    runs after the migrations (the CLI passes the registry sync, so new columns are filled).
    A missing file is a StorageError (`open_connection`)."""
    path = str(path or default_path())
    con = open_connection(path, read_only=True, wait=wait, on_wait=on_wait)
    try:
        if not is_behind(con):
            return con
    except BaseException:
        con.close()
        raise
    con.close()
    with connect(path, wait=wait, on_wait=on_wait) as con:
        if then is not None:
            then(con)
    log.info("[storage] %s migrated to schema %d for a read-only command", path, latest_version())
    return open_connection(path, read_only=True, wait=wait, on_wait=on_wait)


def is_behind(con: duckdb.DuckDBPyConnection) -> bool:
    """The file's schema is older than this code's (or it has none yet), or a view file changed
    since it was applied: one statement (the version and the applied files' hashes together)."""
    try:
        rows = con.execute("SELECT path, sha256 FROM schema_files UNION ALL "
                           "SELECT NULL, coalesce(max(version), 0)::VARCHAR FROM schema_migrations").fetchall()
    except duckdb.CatalogException:   # no schema_migrations table, or none of schema_files (before migration 025)
        return True
    recorded = {path: digest for path, digest in rows if path is not None}
    version = next(int(digest) for path, digest in rows if path is None)
    return version < latest_version() or views.changed(recorded)


"""The one way to open the DuckDB file: UTC sessions, migrations, and waiting on the file lock.

DuckDB allows one writing process per file (readers in other processes are refused while it
writes), and has no busy timeout. Writers therefore hold a connection only for the write,
and every opener retries on the lock for up to `wait` seconds, saying that it waits.
"""

from __future__ import annotations

import itertools
import logging
import os
import re
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, Sequence
import shutil

from common import settings
from storage.engine import duckdb

if TYPE_CHECKING:  # annotations only: `query`/`status` open connections without importing pandas
    import pandas as pd

from common.redact import first_line as _first_line
from storage.threads import all_threads, configured_threads
from storage.migrations import latest_version, migrations, sequence_ids  # noqa: F401 - re-exported (the shipped schema)
from storage import lake, views

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
# INSERT OR REPLACE of the registry sync, tests/test_storage.py; v1.2.0 and later did not.)
NEW_FILE_STORAGE_VERSION = "v1.5.0"
_SQLITE_MAGIC = b"SQLite format 3\x00"


def default_path() -> str:
    return settings.read().db or DEFAULT_DB


def quote_ident(name: str) -> str:
    """The single identifier-quoting helper; values always go through bound parameters."""
    return '"' + str(name).replace('"', '""') + '"'


_FRAME_NAMES = itertools.count(1)


def _complete(con: duckdb.DuckDBPyConnection) -> None:
    complete = getattr(con, "complete", None)
    if complete is not None:
        complete()


@contextmanager
def registered_frame(con: duckdb.DuckDBPyConnection, frame: pd.DataFrame) -> Iterator[str]:
    """`with registered_frame(con, df) as rel:` — the frame as a relation under a fresh unique name
    (`rel` is the quoted name to put in SQL), unregistered afterwards.

    The one way SQL reads a DataFrame: never DuckDB's scan of a Python local by its variable
    name, which a rename breaks silently (or, worse, binds to another variable of that name).
    """
    name = f"_benchwatch_frame_{os.getpid()}_{next(_FRAME_NAMES)}"
    # DuckDB 2.0 refuses register/unregister while a result of execute() is half read (a
    # `fetchone()` of a nextval or count before); `complete()` runs it to its end, as the next
    # execute() would have done anyway. (DuckDB 1.5 has no `complete()` and no such refusal.)
    _complete(con)
    con.register(name, frame)
    try:
        yield quote_ident(name)
    except BaseException:
        try:
            con.unregister(name)
        except duckdb.Error:   # an aborted transaction refuses it; the name is unique and dies with the connection
            pass
        raise
    _complete(con)
    con.unregister(name)


def __getattr__(name: str) -> object:
    if name == "SEQUENCE_IDS":   # the former constant, now derived (read lazily: `query` never needs it)
        return sequence_ids()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def next_ids(con: duckdb.DuckDBPyConnection, table: str, n: int = 1) -> list[int]:
    """n fresh ids for `table` (one of `sequence_ids()`): nextval of its sequence on a file; on a
    DuckLake store max(id) + 1 … — safe because a lake writer holds the writer lock
    (storage/lake.py), so no other process allocates meanwhile."""
    column, sequence = sequence_ids()[table]
    if n <= 0:
        return []
    if not lake.is_lake(con):
        return [int(r[0]) for r in con.execute("SELECT nextval(?) FROM range(?)", [sequence, n]).fetchall()]
    row = con.execute(f"SELECT coalesce(max({quote_ident(column)}), 0) FROM {quote_ident(table)}").fetchone()
    start = int(row[0]) if row else 0
    return list(range(start + 1, start + 1 + n))


def _match(keys: Sequence[str], left: str, right: str) -> str:
    return " AND ".join(f"{left}.{quote_ident(k)} = {right}.{quote_ident(k)}" for k in keys)


def insert_frame(con: duckdb.DuckDBPyConnection, table: str, frame: pd.DataFrame, *,
                 columns: Sequence[str] | None = None, or_replace: Sequence[str] | None = None,
                 ignore_conflicts: Sequence[str] | None = None, skip_existing: str | None = None,
                 returning: Sequence[str] | None = None) -> list[tuple]:
    """The bulk write of every storage module: the rows of `frame` into `table`, columns matched
    BY NAME (table columns the frame lacks take their defaults). Returns the `returning` rows.

    `columns`: only these frame columns; `or_replace`: upsert on these key columns (the table's
    primary key); `ignore_conflicts`: leave out rows whose values of these (unique) columns the
    table already holds; `skip_existing`: leave out rows whose value of this key column the
    table already holds (duplicates *within* the frame are the caller's to drop).

    On a DuckDB file these are INSERT OR REPLACE / ON CONFLICT DO NOTHING / RETURNING against
    the table's constraints. A DuckLake store has no constraints, sequences or RETURNING
    (storage/lake.py), so there the named keys are matched explicitly — delete-then-insert, an
    anti-join that also keeps one row per key of the frame — and ids of `sequence_ids()` tables come
    from `next_ids`; the writer lock makes that as safe as the constraints.
    """
    if lake.is_lake(con):
        return _insert_frame_lake(con, table, frame, columns=columns, or_replace=or_replace,
                                  ignore_conflicts=ignore_conflicts, skip_existing=skip_existing, returning=returning)
    select = ", ".join(quote_ident(c) for c in columns) if columns else "*"
    t = quote_ident(table)
    with registered_frame(con, frame) as rel:
        sql = f"INSERT {'OR REPLACE ' if or_replace else ''}INTO {t} BY NAME SELECT {select} FROM {rel}"
        if skip_existing:
            k = quote_ident(skip_existing)
            sql += f" WHERE {k} NOT IN (SELECT {k} FROM {t})"
        if ignore_conflicts:
            sql += f" ON CONFLICT ({', '.join(quote_ident(c) for c in ignore_conflicts)}) DO NOTHING"
        if returning:
            sql += f" RETURNING {', '.join(quote_ident(c) for c in returning)}"
            return con.execute(sql).fetchall()
        con.execute(sql)
        return []


def _insert_frame_lake(con: duckdb.DuckDBPyConnection, table: str, frame: pd.DataFrame, *,
                       columns: Sequence[str] | None, or_replace: Sequence[str] | None,
                       ignore_conflicts: Sequence[str] | None, skip_existing: str | None,
                       returning: Sequence[str] | None) -> list[tuple]:
    """insert_frame on a DuckLake store (see there)."""
    t = quote_ident(table)
    select = ", ".join(f"f.{quote_ident(c)}" for c in columns) if columns else "f.*"
    id_column = sequence_ids().get(table, (None, None))[0]
    needs_ids = id_column is not None and id_column not in (columns or frame.columns)
    with registered_frame(con, frame) as rel:
        where = []
        if skip_existing:
            k = quote_ident(skip_existing)
            where.append(f"f.{k} NOT IN (SELECT {k} FROM {t})")
        if ignore_conflicts:
            where.append(f"NOT EXISTS (SELECT 1 FROM {t} t WHERE {_match(ignore_conflicts, 't', 'f')})")
        rows = f"SELECT {select} FROM {rel} f" + (f" WHERE {' AND '.join(where)}" if where else "")
        if ignore_conflicts:
            rows += f" QUALIFY row_number() OVER (PARTITION BY {', '.join(f'f.{quote_ident(c)}' for c in ignore_conflicts)}) = 1"
        if or_replace:
            con.execute(f"DELETE FROM {t} t WHERE EXISTS (SELECT 1 FROM {rel} f WHERE {_match(or_replace, 't', 'f')})")
        if not needs_ids and not returning:
            con.execute(f"INSERT INTO {t} BY NAME {rows}")
            return []
        fresh = con.execute(rows).df()
    if needs_ids:
        fresh[id_column] = next_ids(con, table, len(fresh))
    if len(fresh):
        insert_frame(con, table, fresh)
    if not returning:
        return []
    with registered_frame(con, fresh[list(returning)]) as rel:   # the Python types RETURNING gives
        return con.execute(f"SELECT * FROM {rel}").fetchall()


def _is_wal_replay_error(exc: Exception) -> bool:
    return "replaying WAL" in str(exc) or "replaying the WAL" in str(exc)


def _wal_advice(path: str, exc: Exception) -> str:
    """What to do with a database whose write-ahead log DuckDB cannot replay (one line, DuckDB's
    reason last). Nothing is moved automatically: the log may hold the only copy of the last changes."""
    import shlex
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
    if read_only:        # DuckDB refuses a read-only instance beside this process's writing one
        _release(path)
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


class NewDatabase:
    """A database file being created under a private name beside its final path (`new_database`)."""

    def __init__(self, path: Path):
        self.path = path
        self.kept = False

    def keep(self) -> None:
        """Put the file in place when the block ends (it must be closed by then)."""
        self.kept = True


@contextmanager
def new_database(path: str | os.PathLike) -> Iterator[NewDatabase]:
    """`with new_database(path) as new:` — for a database that does not exist yet: fill
    `new.path` (a private file in the same directory, closed by the end of the block) and call
    `new.keep()`; the file then takes `path` (a hard link: never over a file another process
    created meanwhile, FileExistsError then), also when the block raises after `keep()`. Without
    `keep()` it is removed: a first write that fails early leaves no file.
    """
    target = Path(path)
    new = NewDatabase(target.with_name(f".{target.name}.new-{os.getpid()}-{next(_FRAME_NAMES)}"))
    wal = Path(str(new.path) + ".wal")
    failed = True
    try:
        yield new
        failed = False
    finally:
        try:
            if new.kept and new.path.exists() and not wal.exists():   # a WAL left: not closed cleanly
                try:
                    os.link(new.path, target)
                except FileExistsError:
                    if not failed:
                        raise
                except OSError:       # a file system without hard links: a rename, if the path is still free
                    if not target.exists():
                        os.rename(new.path, target)
        finally:
            for leftover in (new.path, wal):
                leftover.unlink(missing_ok=True)


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
    Inside `held(path)` a write connection is a cursor of the one instance held open there.

    The schema only: the registry tables are filled by `storage.registry_sync.sync_registry`,
    which the jobs that need them call explicitly (`registry_sync.connect_synced`)."""
    cursor = None if read_only else _held_cursor(path, wait=wait, on_wait=on_wait)
    if cursor is not None:
        try:
            yield cursor
        finally:
            _return_cursor(cursor)
        return
    con = _open_migrated(path, read_only=read_only, wait=wait, on_wait=on_wait)
    try:
        yield con
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
                migrate(con)         # a DuckLake store: each migration a catalog transaction
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
    from storage import beside   # only when a schema changes
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
    from storage import beside   # only when a schema changes
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
    from storage import beside   # only when a schema changes
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


# --- one file held open across a cycle's database steps -------------------------------------------
# A cycle's steps each open the file for their writes (collect's settling, analyze, notify), and
# each open builds a DuckDB instance and loads the catalog, and each close checkpoints.
# `held(path)` (jobs.cycle.run_cycle) keeps one instance
# open instead: `connect` hands out cursors of it. The rule that no database is held while the
# process waits on something else stays: fetching, parsing and calling Slack run inside
# `unheld()`, which closes the held instance (checkpointing it) and opens no held one until it
# ends; a read-only open of the file closes it too (DuckDB refuses a read-only instance beside
# the process's own writing one). A DuckLake store is never held (storage/lake.py).

class _Held:
    """The held instance of one file: opened by the first write `connect` inside `held`."""

    def __init__(self) -> None:
        self.keeper: duckdb.DuckDBPyConnection | None = None
        self.cursors: set[int] = set()     # ids of the cursors handed out and not returned
        self.depth = 1                     # nested `held` blocks of the same file


_HELD: dict[str, _Held] = {}
_HELD_LOCK = threading.RLock()
_UNHELD = [0]     # open `unheld()` blocks (any thread): no instance is held meanwhile


def _held_key(path: str | os.PathLike | None) -> str | None:
    text = str(path or default_path())
    return None if lake.is_lake_url(text) else os.path.abspath(text)


@contextmanager
def held(path: str | os.PathLike | None) -> Iterator[None]:
    """Within the block, write connections to the file `path` share one DuckDB instance (see
    above); it is closed, with its checkpoint, when the block ends. Re-entrant."""
    key = _held_key(path)
    if key is None:
        yield
        return
    with _HELD_LOCK:
        entry = _HELD.get(key)
        if entry is not None:
            entry.depth += 1
        else:
            _HELD[key] = _Held()
    try:
        yield
    finally:
        with _HELD_LOCK:
            entry = _HELD[key]
            entry.depth -= 1
            if entry.depth == 0:
                del _HELD[key]
                _close_keeper(entry, key)


@contextmanager
def unheld() -> Iterator[None]:
    """No database held by this process's `held` blocks while the body runs (a fetch, a parse, a
    call to Slack): a held instance is closed now and reopened by the next `connect` after it."""
    with _HELD_LOCK:
        _UNHELD[0] += 1
        for key, entry in _HELD.items():
            _close_keeper(entry, key)
    try:
        yield
    finally:
        with _HELD_LOCK:
            _UNHELD[0] -= 1


def is_held(path: str | os.PathLike | None = None) -> bool:
    """An instance of `path` (any file when None) is held open by a `held` block right now."""
    with _HELD_LOCK:
        if path is None:
            return any(e.keeper is not None for e in _HELD.values())
        entry = _HELD.get(_held_key(path) or "")
        return entry is not None and entry.keeper is not None


def _release(path: str | os.PathLike | None) -> None:
    """Close the held instance of `path`, if any (the next write `connect` reopens it)."""
    key = _held_key(path)
    with _HELD_LOCK:
        entry = _HELD.get(key) if key else None
        if entry is not None and key:
            _close_keeper(entry, key)


def _close_keeper(entry: _Held, key: str) -> None:
    if entry.keeper is None:
        return
    if entry.cursors:     # a connection still in use: closing would close it under its user
        log.warning("[storage] %s stays open: %d connection(s) still in use", key, len(entry.cursors))
        return
    keeper, entry.keeper = entry.keeper, None
    keeper.close()


def _held_cursor(path: str | os.PathLike | None, *, wait: float,
                 on_wait: Callable[[str], None] | None) -> duckdb.DuckDBPyConnection | None:
    """A cursor of the held instance of `path` (opened and migrated now if need be); None when the
    file is not held (no `held` block, inside `unheld`, or a DuckLake store)."""
    key = _held_key(path)
    with _HELD_LOCK:
        entry = _HELD.get(key) if key else None
        if entry is None or _UNHELD[0]:
            return None
        if entry.keeper is None:
            entry.keeper = _open_migrated(path, read_only=False, wait=wait, on_wait=on_wait)
        cursor = entry.keeper.cursor()
        entry.cursors.add(id(cursor))
    try:   # what an instance of its own would start with: the session, its threads (the thread
        # count belongs to the instance: an earlier user's `SET threads`)
        _start_session(cursor)
        all_threads(cursor)
    except BaseException:
        _return_cursor(cursor)
        raise
    return cursor


def _return_cursor(cursor: duckdb.DuckDBPyConnection) -> None:
    with _HELD_LOCK:
        for entry in _HELD.values():
            entry.cursors.discard(id(cursor))
    cursor.close()


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """All-or-nothing: one ingested snapshot, one alert evaluation, …"""
    con.execute("BEGIN TRANSACTION")
    try:
        yield con
    except BaseException:
        con.execute("ROLLBACK")
        raise
    else:
        con.execute("COMMIT")


def migrate(con: duckdb.DuckDBPyConnection) -> list[int]:
    """Apply the migrations this file has not seen, each in its own transaction (translated for a
    DuckLake store: storage/lake.py), then the view files that changed (storage/views)."""
    on_lake = lake.is_lake(con)
    ddl = lake.translate_ddl if on_lake else (lambda text: text)
    con.execute(ddl("""CREATE TABLE IF NOT EXISTS schema_migrations (
        version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied_at TIMESTAMPTZ NOT NULL)"""))
    done = {r[0] for r in con.execute("SELECT version FROM schema_migrations").fetchall()}
    shipped = migrations()
    _refuse_newer(done)
    applied = []
    for version, name, sql in shipped:
        if version in done:
            continue
        with transaction(con):
            con.execute(ddl(sql))
            con.execute("INSERT INTO schema_migrations VALUES (?, ?, now())", [version, name])
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


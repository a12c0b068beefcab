"""DuckLake on PostgreSQL: one shared store for several writing processes and many readers.

`--db ducklake:postgres:<libpq conninfo>` (data files in `$BENCHWATCH_DATA_PATH`) opens an
in-memory DuckDB session, loads the `ducklake` and `postgres` extensions and attaches the
catalog as `lake` (USE lake), so every statement of storage/ runs unchanged on it — except
what DuckLake lacks (docs/deploy.md):

* no PRIMARY KEY / UNIQUE / indexes / sequences: `translate_ddl` drops them from the
  migrations; ids come from `storage.db.next_ids` (max(id) + 1, safe because of the next point);
* no RETURNING, ON CONFLICT or INSERT OR REPLACE: `storage.db.insert_frame` takes the key
  columns and, on a lake (`is_lake(con)`), writes the same rows with an anti-join or
  delete-then-insert on them; the outbox claim reads then updates inside its transaction;
* no comments on a view's columns: the view files (storage/views, shared with a DuckDB file)
  are applied without their `COMMENT ON COLUMN` statements (`translate_view_file`);
* no cross-process locking of its own beyond optimistic commits: every *write* connection
  holds a PostgreSQL advisory lock (`WRITER_LOCK_KEY`, session-level, on its own small psycopg
  connection to the catalog database) from open to close. Writers therefore run one at a time,
  exactly as on a DuckDB file, which keeps the content-hash idempotence of snapshots and the
  alert outbox's exactly-once without unique constraints. Readers take no lock: a DuckLake
  read sees the snapshot committed when its transaction began and never waits for a writer.
  The advisory lock dies with the connection, so a killed writer never leaves it behind.

Extensions: a normal machine runs `INSTALL ducklake; INSTALL postgres` from DuckDB's repository
(once, cached in ~/.duckdb). Offline (CI, these machines) they come from the PyPI wheels
`duckdb-extension-ducklake` / `duckdb-extension-postgres` of the same DuckDB version: the
extra `benchwatch[ducklake]` installs them and `load_extensions` loads the files directly.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import tempfile
import time
import weakref
from importlib import util as importlib_util
from pathlib import Path
from typing import Any, Callable, NamedTuple
from urllib.parse import parse_qsl, unquote, urlsplit

from common import settings
from common.errors import exception_chain
from storage.engine import duckdb
from common.redact import first_line as _first_line, redact, register_conninfo, split_conninfo_password

log = logging.getLogger("benchwatch.storage")

PREFIX = "ducklake:"
CATALOG_ALIAS = "lake"
CATALOG_SECRET = "benchwatch_catalog"    # the temporary secret holding the catalog's password
DATA_PATH_ENV = settings.DATA_PATH
# pg_advisory_lock key of the writer section (one per catalog database): "bw" + "writer".
WRITER_LOCK_KEY = 0x6277_7772_6974_6572 & 0x7FFF_FFFF_FFFF_FFFF

_lake_connections: "weakref.WeakKeyDictionary[duckdb.DuckDBPyConnection, LakeTarget]" = weakref.WeakKeyDictionary()
_writer_locks: "weakref.WeakKeyDictionary[duckdb.DuckDBPyConnection, WriterLock]" = weakref.WeakKeyDictionary()


class LakeError(Exception):
    """A DuckLake set-up problem stated for a person (re-raised as StorageError by storage.db)."""


class LakeTarget(NamedTuple):
    """A parsed `ducklake:postgres:<conninfo>` with its data location (a NamedTuple, not a
    dataclass: `dataclasses` costs every command's start-up a few ms through storage.db)."""

    catalog: str          # postgres:<conninfo>
    conninfo: str         # libpq key=value string of the catalog database
    data_path: str        # directory or s3:// prefix of the Parquet data files

    @property
    def url(self) -> str:
        return PREFIX + self.catalog

    def redacted(self) -> str:
        """The URL without a password (keyword or URI form: common.redact), for messages."""
        return redact(self.url)


def is_lake_url(target: object) -> bool:
    return isinstance(target, str) and target.startswith(PREFIX)


def parse(target: str, data_path: str | None = None, *, need_data_path: bool = True) -> LakeTarget:
    """`ducklake:postgres:<conninfo>` + data path (argument, else $BENCHWATCH_DATA_PATH).

    Readers may leave the data path out: an existing catalog records where its files are."""
    if not is_lake_url(target):
        raise LakeError(f"not a DuckLake URL: {target!r}")
    catalog = target[len(PREFIX):]
    if not catalog.startswith("postgres:"):
        raise LakeError("only a PostgreSQL catalog is supported: ducklake:postgres:<libpq conninfo> "
                        "(e.g. ducklake:postgres:dbname=benchwatch host=db.internal user=bw)")
    conninfo = catalog[len("postgres:"):].strip()
    register_conninfo(conninfo)   # every later message, log record and error is redacted of it
    if not conninfo:
        raise LakeError("ducklake:postgres: needs a libpq conninfo (dbname=… host=… user=…)")
    data_path = data_path or settings.read().data_path
    if not data_path and not need_data_path:
        return LakeTarget(catalog=catalog, conninfo=conninfo, data_path="")
    if not data_path:
        raise LakeError(f"a DuckLake store needs its data location: set {DATA_PATH_ENV} "
                        "(a directory shared by every worker, or an s3:// prefix)")
    if "://" not in data_path:
        data_path = str(Path(data_path).resolve())
    if not data_path.endswith("/"):
        data_path += "/"
    return LakeTarget(catalog=catalog, conninfo=conninfo, data_path=data_path)


# --- extensions --------------------------------------------------------------------------------

def _wheel_file(package: str, name: str) -> Path | None:
    spec = importlib_util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    root = Path(list(spec.submodule_search_locations)[0]) / "extensions" / f"v{duckdb.__version__}"
    path = root / f"{name}.duckdb_extension"
    return path if path.is_file() else None


def _extension_files() -> dict[str, Path] | None:
    """The wheel files for this DuckDB version, the postgres one under the name DuckDB expects
    (it derives the entry point from the file name: postgres_scanner)."""
    ducklake = _wheel_file("duckdb_extension_ducklake", "ducklake")
    postgres = _wheel_file("duckdb_extension_postgres", "postgres")
    if ducklake is None or postgres is None:
        return None
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "benchwatch" / "extensions" / \
        f"v{duckdb.__version__}"
    target = cache / "postgres_scanner.duckdb_extension"
    try:
        cache.mkdir(parents=True, exist_ok=True)
        if not target.exists() or target.stat().st_size != postgres.stat().st_size:
            tmp = Path(tempfile.mkstemp(dir=cache, suffix=".part")[1])
            shutil.copyfile(postgres, tmp)
            os.replace(tmp, target)
    except OSError as exc:
        raise LakeError(f"cannot prepare the postgres extension in {cache}: {exc.strerror}") from exc
    return {"ducklake": ducklake, "postgres_scanner": target}


def load_extensions(con: duckdb.DuckDBPyConnection) -> str:
    """Load ducklake + postgres: from the wheels when installed, else INSTALL from DuckDB's repository."""
    files = _extension_files()
    if files is not None:
        for path in files.values():
            con.execute(f"LOAD '{path}'")
        return "wheels"
    try:
        for name in ("ducklake", "postgres"):
            con.execute(f"INSTALL {name}")
            con.execute(f"LOAD {name}")
    except duckdb.Error as exc:
        raise LakeError(
            f"cannot load the DuckLake extensions for DuckDB {duckdb.__version__}: {_first_line(exc)} — "
            "offline, install `benchwatch[ducklake]` (the duckdb-extension-ducklake/-postgres wheels of "
            "this DuckDB version)") from exc
    return "repository"


# --- the writer lock ---------------------------------------------------------------------------

class WriterLock:
    """A session-level pg_advisory_lock on the catalog database, held until release()."""

    def __init__(self, conninfo: str, *, wait: float, on_wait: Callable[[str], None] | None, what: str) -> None:
        try:
            import psycopg
        except ImportError as exc:
            raise LakeError("writing to a DuckLake store needs psycopg (pip install 'benchwatch[ducklake]')") from exc
        try:
            self._pg = psycopg.connect(conninfo, autocommit=True, connect_timeout=10,
                                       application_name="benchwatch-writer")
        except psycopg.Error as exc:
            raise LakeError(f"cannot connect to the DuckLake catalog {what}: {_first_line(exc)}") from exc
        deadline = time.monotonic() + max(wait, 0.0)
        told, delay = False, 0.05
        while True:
            got = self._pg.execute("SELECT pg_try_advisory_lock(%s)", [WRITER_LOCK_KEY]).fetchone()
            if got and got[0]:
                return
            if time.monotonic() >= deadline:
                self._pg.close()
                raise TimeoutError(f"DuckLake store {what} has another writer; gave up after {wait:.0f} s")
            if not told:
                (on_wait or log.warning)(f"DuckLake store {what} has another writer; waiting up to {wait:.0f} s")
                told = True
            time.sleep(delay)
            delay = min(delay * 1.5, 0.5)

    def release(self) -> None:
        """Unlock and close. A connection PostgreSQL already dropped holds no lock any more (a
        session lock dies with its session): nothing to report, the caller's own error says why."""
        if not self._pg.closed:
            try:
                self._pg.execute("SELECT pg_advisory_unlock(%s)", [WRITER_LOCK_KEY])
            except Exception as exc:  # noqa: BLE001 - psycopg.Error, imported lazily
                log.info("DuckLake writer lock: the catalog connection is gone (%s)", _first_line(exc))
            finally:
                self._pg.close()


# --- opening -----------------------------------------------------------------------------------

def open_lake(target: LakeTarget, *, read_only: bool, config: dict[str, Any], wait: float,
              on_wait: Callable[[str], None] | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB session with the catalog attached as `lake` (the default database).

    A write session holds the writer lock until `close(con)`; a read-only one attaches READ_ONLY.
    """
    sandbox = {k: config.pop(k) for k in ("enable_external_access", "temp_directory") if k in config}
    con = duckdb.connect(":memory:", config=config)
    lock = None
    try:
        load_extensions(con)
        if not read_only:
            lock = WriterLock(target.conninfo, wait=wait, on_wait=on_wait, what=target.redacted())
        # ATTACH takes no bound parameters: the strings are quoted as SQL literals. The password
        # is not in the ATTACH string, which DuckDB shows (duckdb_databases().path, the
        # allowed_paths setting): it goes in a temporary secret the catalog's attach names, which
        # duckdb_secrets() shows redacted (and `query` refuses to show at all).
        url, secret = _attach_url_and_secret(con, target)
        options = ", ".join(([f"DATA_PATH {literal(target.data_path)}"] if target.data_path else [])
                            + (["READ_ONLY"] if read_only else [])
                            + ([f"METADATA_PARAMETERS MAP {{'SECRET': {literal(secret)}}}"] if secret else []))
        try:
            con.execute(f"ATTACH {literal(url)} AS {CATALOG_ALIAS}" + (f" ({options})" if options else ""))
        except duckdb.Error as exc:
            if read_only and "does not exist" in str(exc) and "creating a new DuckLake" in str(exc):
                raise LakeError(f"DuckLake catalog {target.redacted()} holds no benchwatch store yet "
                                "(run `benchwatch run` or `benchwatch ingest` first)") from exc
            raise LakeError(f"cannot attach {target.redacted()}: {_first_line(exc)}") from exc
        con.execute(f"USE {CATALOG_ALIAS}")
        if sandbox.get("enable_external_access") is False:
            # The lake's own data files stay readable; nothing else on disk or the network is.
            data_path = target.data_path or _recorded_data_path(con)
            if data_path and "://" not in data_path:
                con.execute("SET allowed_directories = [?]", [data_path])
            con.execute("SET enable_external_access = false")
    except BaseException:
        if lock is not None:
            lock.release()
        con.close()
        raise
    _lake_connections[con] = target
    if lock is not None:
        _writer_locks[con] = lock
        weakref.finalize(con, lock.release)
    return con


def _attach_url_and_secret(con: duckdb.DuckDBPyConnection, target: LakeTarget) -> tuple[str, str | None]:
    """The URL to ATTACH without the catalog's password, and the name of the temporary DuckDB
    secret (TYPE postgres) that holds it (None when the conninfo has none: libpq then reads
    PGPASSWORD or ~/.pgpass itself)."""
    conninfo, password = split_conninfo_password(target.conninfo)
    if password is None:
        return target.url, None
    con.execute(f"CREATE TEMPORARY SECRET {CATALOG_SECRET} (TYPE postgres, PASSWORD {literal(password)})")
    # the postgres extension appends the secret's `password=…` to the conninfo: a URI must
    # become key=value pairs first
    return PREFIX + "postgres:" + keyword_conninfo(conninfo), CATALOG_SECRET


def keyword_conninfo(conninfo: str) -> str:
    """A libpq URI (`postgresql://user@host:5432/db?sslmode=require`) as key=value pairs; any
    other conninfo as it is."""
    if not re.match(r"(?i)^postgres(?:ql)?://", conninfo.strip()):
        return conninfo
    parts = urlsplit(conninfo.strip())
    userinfo, _, hostports = parts.netloc.rpartition("@")
    pairs = [("user", unquote(userinfo.split(":", 1)[0]))] if userinfo else []
    hosts, ports = [], []
    for hostport in hostports.split(","):
        if hostport.startswith("["):                     # [::1]:5432
            host, _, rest = hostport[1:].partition("]")
            port = rest.removeprefix(":")
        else:
            host, _, port = hostport.partition(":")
        hosts.append(unquote(host))
        ports.append(port)
    pairs += [(k, ",".join(v)) for k, v in (("host", hosts), ("port", ports)) if any(v)]
    if parts.path.strip("/"):
        pairs.append(("dbname", unquote(parts.path.lstrip("/"))))
    pairs += parse_qsl(parts.query, keep_blank_values=True)
    return " ".join(f"{key}={_conninfo_value(value)}" for key, value in pairs)


def _conninfo_value(value: str) -> str:
    if value and not re.search(r"[\s'\\]", value):
        return value
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _recorded_data_path(con: duckdb.DuckDBPyConnection) -> str:
    """The data path the catalog records (a reader that was not told it)."""
    row = con.execute(f"SELECT value FROM {CATALOG_ALIAS}.options() WHERE option_name = 'data_path'").fetchone()
    return str(row[0]) if row and row[0] else ""


def is_lake(con: duckdb.DuckDBPyConnection) -> bool:
    """True for a session opened by open_lake (storage/ takes its lake branch)."""
    return con in _lake_connections


def release(con: duckdb.DuckDBPyConnection) -> None:
    """Give the writer lock back (storage.db.connect calls this after closing a write session)."""
    lock = _writer_locks.pop(con, None)
    if lock is not None:
        lock.release()


# --- the catalog gone ---------------------------------------------------------------------------

CATALOG_PROBE_SECONDS = 3          # libpq's connect_timeout of the probe (it takes 2 at least)
CATALOG_PROBE_MEMO_SECONDS = 10.0  # a failed probe answers every question about the same failure


class CatalogLost(LakeError):
    """A step failed on a DuckLake store whose catalog a fresh connection cannot reach: no later
    step reaches the store either, and a person must look at the server."""


def raised_catalog_lost(exc: BaseException) -> bool:
    """`exc` is a `CatalogLost` or came from one: the store has already judged the catalog gone."""
    return any(isinstance(item, CatalogLost) for item in exception_chain(exc))


_failed_probes: dict[str, float] = {}     # conninfo -> when a probe of it failed


def forget_probes() -> None:
    """Drop the remembered failed probes (tests)."""
    _failed_probes.clear()


def catalog_reachable(conninfo: str, timeout: int = CATALOG_PROBE_SECONDS) -> bool:
    """Whether a fresh connection to the catalog's PostgreSQL succeeds within `timeout`: through
    psycopg (the writer lock's driver), or DuckDB's postgres extension where psycopg is absent
    (a reader's install). Any failure to connect (refused, timed out, authentication) is False."""
    try:
        import psycopg
    except ImportError:
        return _reachable_through_duckdb(conninfo, timeout)
    try:
        psycopg.connect(conninfo, connect_timeout=timeout, application_name="benchwatch-probe").close()
    except psycopg.Error:
        return False
    return True


def _reachable_through_duckdb(conninfo: str, timeout: int) -> bool:
    con = duckdb.connect(":memory:")
    try:
        load_extensions(con)
        con.execute(f"ATTACH {literal(f'connect_timeout={timeout} ' + keyword_conninfo(conninfo))} "
                    "AS probe (TYPE postgres, READ_ONLY)")
        con.execute("SELECT 1 FROM probe.pg_catalog.pg_namespace LIMIT 1").fetchall()
    except (duckdb.Error, LakeError):
        return False
    finally:
        con.close()
    return True


def catalog_unreachable(target: object) -> bool:
    """`target` (a `--db` value) is a DuckLake store whose catalog a fresh connection cannot reach
    now; False for a DuckDB file, which has no catalog. A failed probe is remembered for
    CATALOG_PROBE_MEMO_SECONDS: one failure is asked about by the store, the log filter and the
    command's last line, and each probe may wait its whole timeout."""
    try:
        conninfo = parse(str(target), need_data_path=False).conninfo if is_lake_url(target) else None
    except LakeError:
        conninfo = None            # a malformed URL: its own error says so
    if conninfo is None:
        return False
    failed = _failed_probes.get(conninfo)
    if failed is not None and time.monotonic() - failed <= CATALOG_PROBE_MEMO_SECONDS:
        return True
    if catalog_reachable(conninfo):
        _failed_probes.pop(conninfo, None)
        return False
    _failed_probes[conninfo] = time.monotonic()
    log.info("DuckLake catalog %s: a fresh connection failed", redact(str(target)))
    return True


def store_error(exc: BaseException) -> bool:
    """`exc` or an exception it came from is the store's (DuckDB, the lake, storage, psycopg)."""
    for item in exception_chain(exc):
        driver = type(item).__module__.split(".")[0] in ("psycopg", "psycopg2")   # the writer lock's connection
        if driver or isinstance(item, (duckdb.Error, LakeError)) or type(item).__name__ == "StorageError":
            return True
    return False


def catalog_lost(target: object, exc: BaseException) -> bool:
    """`exc`, raised while using the store `target` (a `--db` value), means its DuckLake catalog is
    gone: it is (or came from) `CatalogLost`, or it is a store error on a lake whose catalog a
    fresh connection cannot reach now, whatever the error says. A DuckDB file has no catalog."""
    return raised_catalog_lost(exc) or (store_error(exc) and catalog_unreachable(target))


def as_catalog_lost(target: object, exc: BaseException) -> CatalogLost | None:
    """The `CatalogLost` to raise from `exc`, a failure while using the store `target`, when it
    means the catalog is gone (`catalog_lost`); None when it does not, or is one already."""
    if raised_catalog_lost(exc) or not catalog_lost(target, exc):
        return None
    return CatalogLost(f"the DuckLake catalog {redact(str(target))} cannot be reached (a fresh connection failed)")


# --- dialect -----------------------------------------------------------------------------------

# Patterns as text: `re` compiles each when first used (a migration or view file for a lake), not
# at the import of every command.
_SEQUENCE = r"(?im)^\s*CREATE\s+SEQUENCE\b[^;]*;"
_TABLE_CONSTRAINT = r"(?i),\s*(?:--[^\n]*\n\s*)*(?:PRIMARY\s+KEY|UNIQUE)\s*\([^)]*\)"
_COLUMN_PK = r"(?i)\s+PRIMARY\s+KEY\b"
_NEXTVAL_DEFAULT = r"(?i)\s+DEFAULT\s+nextval\s*\(\s*'[^']*'\s*\)"
# DuckLake's ADD COLUMN takes only a literal default, and it counts `false` as an expression: the
# string literal 'false' (cast to the column's type) is the same default.
_ADD_COLUMN_KEYWORD_DEFAULT = r"(?i)(\bADD\s+COLUMN\b[^;]*?\bDEFAULT\s+)(true|false)\b"


def translate_ddl(sql: str) -> str:
    """A migration for DuckLake: the same tables and views without sequences, PRIMARY KEY /
    UNIQUE constraints or nextval defaults (DuckLake has none of them; storage.db.next_ids and
    the writer lock take their place). A column's PRIMARY KEY becomes NOT NULL; other
    constraints, defaults, views and ALTERs are kept (a
    boolean default of ADD COLUMN as the literal 'false'/'true', which DuckLake accepts)."""
    if re.search(r"\bCREATE\s+(UNIQUE\s+)?INDEX\b", sql, re.IGNORECASE):
        raise LakeError("a migration creates an index, which DuckLake does not support; "
                        "make it conditional on the file store")
    out = re.sub(_SEQUENCE, "", sql)
    out = re.sub(_TABLE_CONSTRAINT, "", out)
    out = re.sub(_NEXTVAL_DEFAULT, "", out)
    out = re.sub(_COLUMN_PK, " NOT NULL", out)   # a missing id fails loudly instead of storing NULL
    out = re.sub(_ADD_COLUMN_KEYWORD_DEFAULT, lambda m: f"{m[1]}'{m[2].lower()}'", out)
    return out


_COLUMN_COMMENT = r"(?im)^\s*COMMENT\s+ON\s+COLUMN\s+[^\s']+\s+IS\s+'(?:[^']|'')*'\s*;[ \t]*\n?"


def translate_view_file(sql: str) -> str:
    """A view file of storage/views for DuckLake, which keeps comments on tables, their columns and
    views but refuses them on a view's columns ("it is not a table"): those statements are left
    out (on a lake, `duckdb_columns()` has no comment for a view's columns; the file has them)."""
    return re.sub(_COLUMN_COMMENT, "", sql)


def literal(text: str) -> str:
    """A string as an SQL literal (ATTACH takes no bound parameters)."""
    return "'" + text.replace("'", "''") + "'"

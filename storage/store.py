"""The store (issue 52, "a store made once at the edge"): where benchwatch's history lives, as
one Protocol with two implementations over storage.db and storage.lake.

cli/ and flows/ make one `Store` from the `--db` value (`open_store`) and hand it down; the jobs
below take the store, never a path, and open short connections through it (`connect`), so no
connection is held across a fetch, a parse or a call to Slack. Whether the store is a file or a
lake is decided here once, from the value's prefix; no module outside storage/ looks at it.

- `Store`: a location people may read in messages (a lake's password never appears in it),
  `connect` (a short-lived connection, migrated when it writes), `open_current` (one read-only
  connection at this code's schema), `open` (a connection the caller closes: the sandboxed
  query, the report's read), `file` (the DuckDB file, None for a lake).
- `FileStore`: a DuckDB file (`./benchwatch.duckdb`, `--db PATH`).
- `LakeStore`: a DuckLake catalog on PostgreSQL (`--db ducklake:postgres:<conninfo>`,
  docs/deploy.md), with its data path from `$BENCHWATCH_DATA_PATH`.
- `Connection`: what every read and write of storage takes, and the type a rule's
  `read(con, settings)` declares (alerts.rules.base) instead of `Any`.
"""

from __future__ import annotations

import os
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Callable, Protocol, TypeAlias, runtime_checkable

from common.redact import split_conninfo_password
from storage import db, lake
from storage.engine import duckdb

Connection: TypeAlias = duckdb.DuckDBPyConnection
OnWait = Callable[[str], None]


@runtime_checkable
class Store(Protocol):
    """Where the history lives: a DuckDB file or a DuckLake catalog."""

    @property
    def target(self) -> str:
        """The `--db` value that opens it (may hold a lake's password: never print it)."""
        ...

    @property
    def location(self) -> str:
        """How messages name it (a lake's password redacted)."""
        ...

    @property
    def is_lake(self) -> bool:
        ...

    @property
    def file(self) -> Path | None:
        """The DuckDB file (its WAL and spill folder beside it); None for a lake."""
        ...

    def connect(self, *, read_only: bool = False, wait: float | None = None,
                on_wait: OnWait | None = None) -> AbstractContextManager[Connection]:
        """`with store.connect() as con:` a short-lived connection; a write connection is migrated."""
        ...

    def open_current(self, *, wait: float | None = None, on_wait: OnWait | None = None,
                     then: Callable[[Connection], object] | None = None) -> Connection:
        """One read-only connection at this code's schema (an older store is migrated first)."""
        ...

    def open(self, *, read_only: bool = True, sandboxed: bool = False, memory_limit: str | None = None,
             threads: int | None = None, wait: float | None = None, on_wait: OnWait | None = None) -> Connection:
        """A connection as it is (not migrated), which the caller closes (`close`)."""
        ...

    def close(self, con: Connection) -> None:
        """Close a connection of `open`/`open_current` (a lake's writer lock goes with it)."""
        ...


class _DbStore:
    """What both implementations share: connections through storage.db, which dispatches on the
    target; `wait` and `on_wait` (how long to wait for another writer, and how to say so) are the
    defaults of every open, set once by whoever made the store."""

    __slots__ = ("_target", "wait", "on_wait")

    def __init__(self, target: str, *, wait: float = db.DEFAULT_WAIT_SECONDS, on_wait: OnWait | None = None) -> None:
        self._target = target
        self.wait = wait
        self.on_wait = on_wait

    @property
    def target(self) -> str:
        return self._target

    @property
    def location(self) -> str:
        return self._target

    def connect(self, *, read_only: bool = False, wait: float | None = None,
                on_wait: OnWait | None = None) -> AbstractContextManager[Connection]:
        return db.connect(self._target, read_only=read_only, wait=self.wait if wait is None else wait,
                          on_wait=on_wait or self.on_wait)

    def open_current(self, *, wait: float | None = None, on_wait: OnWait | None = None,
                     then: Callable[[Connection], object] | None = None) -> Connection:
        return db.open_current(self._target, wait=self.wait if wait is None else wait,
                               on_wait=on_wait or self.on_wait, then=then)

    def open(self, *, read_only: bool = True, sandboxed: bool = False, memory_limit: str | None = None,
             threads: int | None = None, wait: float | None = None, on_wait: OnWait | None = None) -> Connection:
        return db.open_connection(self._target, read_only=read_only, wait=self.wait if wait is None else wait,
                                  on_wait=on_wait or self.on_wait, sandboxed=sandboxed,
                                  memory_limit=memory_limit, threads=threads)

    def close(self, con: Connection) -> None:
        con.close()
        lake.release(con)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.location!r})"


class FileStore(_DbStore):
    """A DuckDB file: one writing process at a time (DuckDB's file lock, waited out by `connect`)."""

    __slots__ = ()

    def __init__(self, path: str | os.PathLike, *, wait: float = db.DEFAULT_WAIT_SECONDS,
                 on_wait: OnWait | None = None) -> None:
        if lake.is_lake_url(str(path)):
            raise ValueError("a DuckLake URL is a LakeStore, not a file")
        super().__init__(str(path), wait=wait, on_wait=on_wait)

    @property
    def is_lake(self) -> bool:
        return False

    @property
    def file(self) -> Path:
        return Path(self._target)

    path = file

    def beside(self, path: str | os.PathLike) -> FileStore:
        """The store of another file (a database being created under a private name beside this
        one), waiting as this one does."""
        return FileStore(path, wait=self.wait, on_wait=self.on_wait)


class LakeStore(_DbStore):
    """A DuckLake catalog on PostgreSQL: several writers (an advisory lock each), readers never wait."""

    __slots__ = ()

    def __init__(self, url: str, *, wait: float = db.DEFAULT_WAIT_SECONDS, on_wait: OnWait | None = None) -> None:
        lake.parse(url, need_data_path=False)      # a malformed URL fails here, in one line (LakeError)
        super().__init__(url, wait=wait, on_wait=on_wait)

    @property
    def location(self) -> str:
        return lake.parse(self._target, need_data_path=False).redacted()

    @property
    def is_lake(self) -> bool:
        return True

    @property
    def file(self) -> None:
        return None


def open_store(target: str | os.PathLike | None = None, *, wait: float = db.DEFAULT_WAIT_SECONDS,
               on_wait: OnWait | None = None) -> Store:
    """The store a `--db` value names (default `$BENCHWATCH_DB` or `./benchwatch.duckdb`). A
    malformed DuckLake URL is a StorageError (one line, as opening it always said)."""
    if isinstance(target, _DbStore):
        raise TypeError(f"open_store takes a --db value, not a store ({target!r})")
    text = str(target or db.default_path())
    if not lake.is_lake_url(text):
        return FileStore(text, wait=wait, on_wait=on_wait)
    try:
        return LakeStore(text, wait=wait, on_wait=on_wait)
    except lake.LakeError as exc:
        raise db.StorageError(str(exc)) from None


# A DuckLake `--db` value that carries a password (keyword, URI userinfo or ?password=), as a
# JSON-schema pattern: the flows' `db_path` parameter schema refuses it, so that a Prefect server
# refuses such a deployment run before it stores the parameter (flows/pipeline.py).
LAKE_URL_WITH_PASSWORD = "^" + lake.PREFIX + r".*([Pp][Aa][Ss][Ss][Ww][Oo][Rr][Dd]\s*=|://[^/@\s]*:[^/@\s]*@)"


def names_lake(target: str | os.PathLike | None) -> bool:
    """Whether a `--db` value (or a flow's `db_path`) names a DuckLake store, before any store is
    made from it (the flows' parameter checks)."""
    return lake.is_lake_url(str(target or ""))


def target_password(target: str | os.PathLike | None) -> str | None:
    """The PostgreSQL password a DuckLake `--db` value carries (None for a file path or none)."""
    if not names_lake(target):
        return None
    return split_conninfo_password(str(target))[1]


def without_password(target: str) -> str:
    """A DuckLake `--db` value without its password (a file path unchanged)."""
    return split_conninfo_password(target)[0] if names_lake(target) else target

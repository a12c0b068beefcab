"""The store's interface (issue 22, "a typed store"): where benchwatch's history lives, as one
Protocol with two implementations over storage.db and storage.lake.

- `Store`: a location people may read in messages (a lake's password never appears in it),
  `connect` (a short-lived connection, migrated when it writes) and `open_current` (one
  read-only connection at this code's schema).
- `FileStore`: a DuckDB file (`./benchwatch.duckdb`, `--db PATH`).
- `LakeStore`: a DuckLake catalog on PostgreSQL (`--db ducklake:postgres:<conninfo>`,
  docs/deploy.md), with its data path from `$BENCHWATCH_DATA_PATH`.
- `Connection`: what every read and write of storage takes, and the type a rule's
  `read(con, settings)` declares (alerts.rules.base) instead of `Any`.

`open_store(target)` picks the implementation from the `--db` value. Both delegate to
`storage.db.connect` / `storage.db.open_current`, so they behave as those always have.
"""

from __future__ import annotations

import os
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Callable, Protocol, TypeAlias, runtime_checkable

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

    def connect(self, *, read_only: bool = False, wait: float = db.DEFAULT_WAIT_SECONDS,
                on_wait: OnWait | None = None) -> AbstractContextManager[Connection]:
        """`with store.connect() as con:` a short-lived connection; a write connection is migrated."""
        ...

    def open_current(self, *, wait: float = db.DEFAULT_WAIT_SECONDS, on_wait: OnWait | None = None,
                     then: Callable[[Connection], object] | None = None) -> Connection:
        """One read-only connection at this code's schema (an older store is migrated first)."""
        ...


class _DbStore:
    """What both implementations share: connections through storage.db, which dispatches on the target."""

    __slots__ = ("_target",)

    def __init__(self, target: str) -> None:
        self._target = target

    @property
    def target(self) -> str:
        return self._target

    @property
    def location(self) -> str:
        return self._target

    def connect(self, *, read_only: bool = False, wait: float = db.DEFAULT_WAIT_SECONDS,
                on_wait: OnWait | None = None) -> AbstractContextManager[Connection]:
        return db.connect(self._target, read_only=read_only, wait=wait, on_wait=on_wait)

    def open_current(self, *, wait: float = db.DEFAULT_WAIT_SECONDS, on_wait: OnWait | None = None,
                     then: Callable[[Connection], object] | None = None) -> Connection:
        return db.open_current(self._target, wait=wait, on_wait=on_wait, then=then)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.location!r})"


class FileStore(_DbStore):
    """A DuckDB file: one writing process at a time (DuckDB's file lock, waited out by `connect`)."""

    __slots__ = ()

    def __init__(self, path: str | os.PathLike) -> None:
        if lake.is_lake_url(str(path)):
            raise ValueError("a DuckLake URL is a LakeStore, not a file")
        super().__init__(str(path))

    @property
    def is_lake(self) -> bool:
        return False

    @property
    def path(self) -> Path:
        return Path(self._target)


class LakeStore(_DbStore):
    """A DuckLake catalog on PostgreSQL: several writers (an advisory lock each), readers never wait."""

    __slots__ = ()

    def __init__(self, url: str) -> None:
        lake.parse(url, need_data_path=False)      # a malformed URL fails here, in one line (LakeError)
        super().__init__(url)

    @property
    def location(self) -> str:
        return lake.parse(self._target, need_data_path=False).redacted()

    @property
    def is_lake(self) -> bool:
        return True


def open_store(target: str | os.PathLike | None = None) -> Store:
    """The store a `--db` value names (default `$BENCHWATCH_DB` or `./benchwatch.duckdb`)."""
    text = str(target or db.default_path())
    return LakeStore(text) if lake.is_lake_url(text) else FileStore(text)

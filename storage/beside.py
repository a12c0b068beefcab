"""Files built beside a database and put in place in one step (storage.db's new files and upgrades).

DuckDB cannot replay some migrations (an ALTER of a table with a nextval default) from its WAL:
a process killed, or stopped by a file size limit, between a migration's commit and the next
checkpoint leaves a file that never opens again. So a schema change never happens to the file
itself: it is made to a private file in the same directory (`temp_beside`), checkpointed,
fsynced, and then takes the database's name in one rename or link, after which the directory is
fsynced. A kill before that step leaves the database as it was, plus a private file that the next
upgrade or creation under `dir_lock` removes (`remove_leftovers`).

No DuckDB here: plain file-system steps, so storage.db can compose them with its connections.
"""

from __future__ import annotations

import errno
import fcntl
import itertools
import logging
import os
import shutil
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

log = logging.getLogger("benchwatch.storage")

CREATING = "creating"     # a new database being built
UPGRADING = "upgrading"   # a copy of an existing database being migrated
_KINDS = (CREATING, UPGRADING)
_COUNTER = itertools.count(1)


def temp_beside(target: str | os.PathLike, kind: str) -> Path:
    """A private, hidden name in the target's directory (so the final rename never crosses a file
    system): `.<name>.<kind>-<pid>-<n>`."""
    if kind not in _KINDS:
        raise ValueError(f"unknown kind of file beside a database: {kind!r}")
    target = Path(target)
    return target.with_name(f".{target.name}.{kind}-{os.getpid()}-{next(_COUNTER)}")


def companions(path: str | os.PathLike) -> list[Path]:
    """The files DuckDB keeps beside a database file: its WAL and its spill directory."""
    return [Path(f"{path}.wal"), Path(f"{path}.tmp")]


def remove(path: str | os.PathLike) -> None:
    """A private file and its companions, if they exist."""
    for item in [Path(path), *companions(path)]:
        if item.is_dir() and not item.is_symlink():
            shutil.rmtree(item, ignore_errors=True)
        else:
            item.unlink(missing_ok=True)


def leftovers(target: str | os.PathLike) -> list[Path]:
    """Private files of earlier attempts on `target` (a killed creation or upgrade): the main
    files' names, also of those whose main file is gone and only a companion is left."""
    target = Path(target)
    found: set[Path] = set()
    for kind in _KINDS:
        for item in target.parent.glob(f".{_escape(target.name)}.{kind}-*"):
            name = item.name
            for suffix in (".wal", ".tmp"):
                name = name.removesuffix(suffix)
            found.add(item.with_name(name))
    return sorted(found)


def _escape(name: str) -> str:
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)


def remove_leftovers(target: str | os.PathLike) -> list[Path]:
    """Remove what earlier, killed attempts left (call under `dir_lock`: no live attempt then has
    files here). A leftover of a creation may be a second name of the database itself (killed
    between the link and the unlink): removing a name never touches the data it names."""
    found = leftovers(target)
    for item in found:
        remove(item)
    if found:
        log.info("[storage] removed %d file(s) an interrupted creation or upgrade of %s left", len(found), target)
    return found


def fsync_file(path: str | os.PathLike) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(folder: str | os.PathLike) -> None:
    """Make a rename or link in `folder` durable (a no-op where directories cannot be fsynced)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError as exc:      # some file systems refuse fsync on a directory
        if exc.errno not in (errno.EINVAL, errno.EBADF, errno.ENOTSUP):
            raise
    finally:
        os.close(fd)


def link_into_place(temp: str | os.PathLike, target: str | os.PathLike) -> bool:
    """Give the finished new file `temp` the name `target`, never over a file that exists (another
    process created it meanwhile: False, `temp` stays for the caller to remove). A hard link where
    the file system has them, else a rename after a check."""
    try:
        os.link(temp, target)
    except FileExistsError:
        return False
    except OSError:          # no hard links here: a rename, if the name is still free
        if os.path.lexists(target):
            return False
        os.rename(temp, target)
    fsync_dir(Path(target).parent)
    return True


def replace(temp: str | os.PathLike, target: str | os.PathLike) -> None:
    """Put the upgraded copy `temp` in place of `target` in one rename."""
    os.replace(temp, target)
    fsync_dir(Path(target).parent)


@contextmanager
def dir_lock(folder: str | os.PathLike, *, wait: float,
             on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
    """One creation or upgrade at a time in `folder` (a flock on the directory, which DuckDB's own
    locks on the database files never touch). TimeoutError after `wait` seconds. Where the
    directory cannot be locked (a file system without flock), the block runs unlocked."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError as exc:
        log.debug("[storage] cannot lock %s (%s): upgrading without the directory lock", folder, exc)
        yield
        return
    try:
        deadline = time.monotonic() + max(wait, 0.0)
        told = False
        delay = 0.05
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise TimeoutError(f"another process is creating or upgrading a database in {folder}") from None
                if not told:
                    (on_wait or log.warning)(f"another process is creating or upgrading a database in {folder}; "
                                             f"waiting up to {wait:.0f} s")
                    told = True
                time.sleep(delay)
                delay = min(delay * 1.5, 1.0)
            except OSError as exc:     # ENOLCK, EOPNOTSUPP: no flock on this file system
                log.debug("[storage] cannot lock %s (%s): upgrading without the directory lock", folder, exc)
                break
        yield
    finally:
        os.close(fd)      # releases the flock


_NEW_NAMES = itertools.count(1)


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
    new = NewDatabase(target.with_name(f".{target.name}.new-{os.getpid()}-{next(_NEW_NAMES)}"))
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

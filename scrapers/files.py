"""Local files read as responses (`benchwatch ingest`, `--replay`): regular files under a size cap.

The cap is the HTTP layer's (`scrapers.http.DEFAULT_MAX_BYTES`, whose `read_capped` reads it at
call time): a saved copy is never larger than what a fetch would accept.
"""

from __future__ import annotations

import os
from pathlib import Path
import stat

class FileRefused(OSError):
    """A local file that is not read: not a regular file, or larger than the size cap."""


def read_capped(path: str | os.PathLike, max_bytes: int) -> bytes:
    """A local file's bytes, at most `max_bytes`.

    Reads at most max_bytes + 1 bytes, so /dev/zero or a multi-GB file never fills memory;
    refuses anything but a regular file (devices, FIFOs, directories) before opening it for
    reading. Raises FileRefused (one line) or OSError.
    """
    cap = max_bytes
    p = Path(path)
    pseudo = pseudo_file_system(p)
    if pseudo:
        raise FileRefused(f"{p} is in {pseudo}, not a saved response")
    mode = p.stat().st_mode
    if not stat.S_ISREG(mode):
        kind = ("a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
                else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode)
                else "not a regular file")
        raise FileRefused(f"{p} is {kind}, not a regular file")
    with open(p, "rb") as fh:
        content = fh.read(cap + 1)
    if len(content) > cap:
        raise FileRefused(f"{p} is larger than the {human_size(cap)} size cap")
    return content


# Kernel pseudo file systems: their "files" are process state (/proc/self/environ holds the
# environment's secrets), never a saved response.
_PSEUDO_ROOTS = ("/proc", "/sys")


def pseudo_file_system(path: str | os.PathLike) -> str | None:
    """'/proc' or '/sys' when `path` (links followed) is on procfs or sysfs, else None."""
    try:
        real = Path(os.path.realpath(path))
        dev = os.stat(real).st_dev
    except OSError:
        return None
    for root in _PSEUDO_ROOTS:
        if real == Path(root) or Path(root) in real.parents:
            return root
        try:
            if os.stat(root).st_dev == dev:
                return root
        except OSError:
            continue
    return None


def human_size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.0f} KB"
    return f"{n / (1024 * 1024):.1f} MB"

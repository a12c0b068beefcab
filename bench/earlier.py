"""An earlier commit checked out beside this one, for the alternated-pair scripts of bench/."""

from __future__ import annotations

import subprocess
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

REPO = Path(__file__).resolve().parents[1]


@contextmanager
def earlier_checkout(commit: str, prefix: str) -> Iterator[tuple[Path, Path]]:
    """(checkout, temp dir): `commit` in a detached worktree of a temp dir whose `shared` points at
    this checkout's `../shared` (the layout the code expects); the worktree is removed after."""
    shared = REPO.parent / "shared"
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        other = Path(tmp) / "main"
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "-q", str(other), commit], check=True)
        try:
            if shared.exists():
                (Path(tmp) / "shared").symlink_to(shared)
            yield other, Path(tmp)
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(other)], check=False)

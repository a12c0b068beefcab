"""The replay files that are the scraper cases' own fixtures, generated from the cases.

A fixture case that declares `replay` (scrapers/cases.py) is also the recorded response of its
source in `tests/fixtures/replay/<source>/<replay>` (its aux files under their aux names): the
copy is written from the case, never kept by hand, so a fixture and its replay copy cannot drift.
The test session writes them first (tests/conftest.py); `python tests/replay_files.py` writes
them for `benchwatch run --replay tests/fixtures/replay` outside the tests. They are ignored by
git (the block in .gitignore, checked by tests/integration/test_replay_files.py).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
REPLAY = FIXTURES / "replay"


def declared() -> dict[Path, Path]:
    """Each generated replay file (relative to the replay folder) -> the fixture it copies."""
    import scrapers
    out: dict[Path, Path] = {}
    for source in scrapers.SOURCES:
        for case in type(scrapers.get(source)).CASES:
            if case.replay and not case.snapshot:
                out[Path(source, case.replay)] = FIXTURES / case.file
                out.update({Path(source, name): FIXTURES / rel for name, rel in case.aux})
    return out


def write(dest: Path = REPLAY) -> list[Path]:
    """Write every generated replay file under `dest` that is missing or differs (atomically:
    a concurrent reader never sees half a file); the files written."""
    written = []
    for rel, fixture in sorted(declared().items()):
        target = dest / rel
        data = fixture.read_bytes()
        if target.is_file() and target.read_bytes() == data:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, target)
        written.append(target)
    return written


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parent))
    for path in write():
        print(f"wrote {path.relative_to(HERE.parent)}")

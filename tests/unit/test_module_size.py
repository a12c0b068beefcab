"""No module of the repository's code is over MAX_LINES lines (issue 52).

A module that long holds more than one idea; it is split by meaning (the shrink guard apart from
the ingest, the trailing trend apart from the forecast), not cut in half. Every .py file of the
code folders counts (tests/helpers.py `code_folders`: the packages, bench/), and the generators
of docs/; the tests and a virtualenv do not.
"""

from __future__ import annotations

from pathlib import Path

from helpers import code_folders

ROOT = Path(__file__).resolve().parents[2]
MAX_LINES = 500


def modules(root: Path) -> list[Path]:
    """Every .py file of the code folders and of docs/."""
    folders = [*code_folders(root), root / "docs"]
    return sorted(p for top in folders if top.is_dir() for p in top.rglob("*.py"))


def too_long(paths: list[Path], root: Path, limit: int = MAX_LINES) -> list[str]:
    """'path: N lines' for each file over `limit` lines."""
    out = []
    for path in paths:
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > limit:
            out.append(f"{path.relative_to(root)}: {n} lines")
    return out


def test_no_module_is_over_the_limit():
    found = modules(ROOT)
    assert any(p.parent.name == "storage" for p in found) and any(p.parent.name == "docs" for p in found)
    problems = too_long(found, ROOT)
    assert not problems, (f"modules over {MAX_LINES} lines (split them by meaning):\n" + "\n".join(problems))


def test_a_long_module_is_reported(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "long.py").write_text("x = 1\n" * (MAX_LINES + 1))
    (tmp_path / "pkg" / "fine.py").write_text("x = 1\n" * MAX_LINES)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_long.py").write_text("x = 1\n" * (MAX_LINES + 1))
    assert too_long(modules(tmp_path), tmp_path) == [f"pkg/long.py: {MAX_LINES + 1} lines"]

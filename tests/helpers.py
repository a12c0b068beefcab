"""Small helpers shared by the test modules, and where the real data lives.

Real leaderboard copies and the paper's table are not part of the repository: they sit in
`../shared` beside it (as in CI). Tests find them through `SHARED` only (never an absolute
path) and, where they are absent (a plain clone), skip with a reason `-ra` shows.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]          # the repository
SHARED = ROOT.parent / "shared"                     # real data beside it, absent in a plain clone
SNAPSHOTS = SHARED / "snapshots"                    # dated copies of the real leaderboards
PAPER_DATA = SHARED / "data"                        # the saturation paper's 60 benchmarks


def absent_reason(path: Path) -> str:
    """The skip reason of a test that needs `path` from ../shared."""
    try:
        shown = f"../{path.relative_to(ROOT.parent)}"
    except ValueError:
        shown = str(path)
    return f"real data {shown} not present (../shared beside the repository; absent in a plain clone)"


def needs(path: Path) -> pytest.MarkDecorator:
    """Skip the test (with a visible reason) unless `path` exists."""
    return pytest.mark.skipif(not path.exists(), reason=absent_reason(path))


def require(path: Path) -> Path:
    """`path`, or skip the running test with a visible reason when it is absent."""
    if not path.exists():
        pytest.skip(absent_reason(path))
    return path


def lane(values, fast) -> list:
    """Values of one axis of a test matrix: those in `fast` run in the fast lane, the others are
    marked `slow` (run by the full suite). Keeps a representative slice of every matrix fast."""
    return [v if v in fast else pytest.param(v, marks=pytest.mark.slow) for v in values]


def stratified(rng, n: int, lo: float, hi: float, *, log: bool = False) -> list[float]:
    """`n` seeded random moments in [lo, hi], one drawn in each of `n` equal strata (of the
    logarithm with `log`), shuffled: a randomised kill test covers its whole window with fewer
    trials than independent draws need, which leave gaps and clusters."""
    import math
    a, b = (math.log(lo), math.log(hi)) if log else (lo, hi)
    points = [a + (b - a) * (i + rng.random()) / n for i in range(n)]
    rng.shuffle(points)
    return [math.exp(p) if log else p for p in points]


def one(df: pd.DataFrame, **where) -> pd.Series:
    """The single row matching every column=value; fails the test if there are 0 or several."""
    mask = pd.Series(True, index=df.index)
    for col, value in where.items():
        mask &= df[col] == value
    assert mask.sum() == 1, f"expected one row for {where}, got {int(mask.sum())}"
    return df[mask].iloc[0]


def fixture_scraper(source: str, *, floor: int | None = 1):
    """The source's scraper with its row floor lowered to `floor`: fixtures hold a few rows
    (the real floors are tested on the snapshot files)."""
    import scrapers

    s = scrapers.get(source)
    if floor is not None:
        s.min_rows = floor
    return s


def copy_db(src: Path, dst: Path) -> Path:
    """A DuckDB file copied with its WAL, if a writer left one (tests/conftest.py's shared databases)."""
    import shutil
    shutil.copyfile(src, dst)
    wal = Path(f"{src}.wal")
    if wal.exists():
        shutil.copyfile(wal, f"{dst}.wal")
    return Path(dst)


def file_at_version(path: Path, upto: int) -> None:
    """A file as an earlier benchwatch left it: migrations 001..upto applied, nothing later."""
    import duckdb

    from storage import db
    con = duckdb.connect(str(path))
    con.execute("SET TimeZone = 'UTC'")
    con.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, "
                "applied_at TIMESTAMPTZ NOT NULL)")
    for version, name, sql in db.migrations():
        if version <= upto:
            con.execute(sql)
            con.execute("INSERT INTO schema_migrations VALUES (?, ?, now())", [version, name])
    con.close()


def docs_figures():
    """docs/figures.py (a script, not a package module) loaded as a module for its tests."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("docs_figures", ROOT / "docs" / "figures.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def alert_timeline():
    """docs/alert_timeline.py (a script, not a package module) loaded as a module for its tests."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("docs_alert_timeline", ROOT / "docs" / "alert_timeline.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def with_levels(frame: pd.DataFrame) -> pd.DataFrame:
    """A saturation frame as `analyze` stores it: the raw bin and the committed level columns
    (analysis.hysteresis.series_levels, migration 020) added to rows of benchmark, scope, as_of, s_index."""
    from analysis.constants import SATURATION_BINS
    from analysis.hysteresis import series_levels
    from analysis.saturation import bin_index
    out = frame.copy()
    if "population" not in out.columns:
        out["population"] = "models"
    if "bin" not in out.columns:
        out["bin"] = [None if v is None or pd.isna(v) else SATURATION_BINS[int(bin_index(float(v)))]
                      for v in out["s_index"]]
    out = out.drop(columns=[c for c in ("level", "level_since", "pending_bin", "pending_count") if c in out.columns])
    rows = out.drop(columns=[c for c in ("k", "alpha") if c in out.columns])
    if "table_id" in rows.columns:       # a series per leaderboard table (analysis.constants.SERIES_KEY)
        return out.merge(series_levels(rows), on=["table_id", "scope", "population", "as_of"], how="left")
    # a frame without tables: one series per benchmark (its only table)
    levels = series_levels(rows.assign(table_id=rows["benchmark"])).rename(columns={"table_id": "benchmark"})
    return out.merge(levels, on=["benchmark", "scope", "population", "as_of"], how="left")


def reads_on_top(monkeypatch) -> list[list[str]]:
    """Spy on storage.history_kept.later_rows_dated_after: for each history read that checked kept
    rows, the benchmarks it read on top of them (only their new rows), sorted."""
    from storage import history_kept

    on_top: list[list[str]] = []
    real = history_kept.later_rows_dated_after

    def checked(history, basis):
        held = real(history, basis)
        on_top.append(sorted(held))
        return held

    monkeypatch.setattr(history_kept, "later_rows_dated_after", checked)
    return on_top


NOT_CODE = {"tests", "docs", "build", "dist", "node_modules"}


def code_folders(root: Path) -> list[Path]:
    """The repository's top-level folders of code: not hidden (`.venv`, `.git`), not a virtualenv
    under any name (it holds `pyvenv.cfg`), not build output or egg-info, not tests or docs. A
    checkout with its virtualenv inside must pass the suite as checked out."""
    return sorted(p for p in root.iterdir()
                  if p.is_dir() and not p.name.startswith((".", "_")) and p.name not in NOT_CODE
                  and not p.name.endswith(".egg-info") and not (p / "pyvenv.cfg").exists())

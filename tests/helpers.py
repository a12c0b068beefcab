"""Small helpers shared by the test modules, and where the real data lives.

Real leaderboard copies and the paper's table are not part of the repository: they sit in
`../shared` beside it (as in CI). Tests find them through `SHARED` only (never an absolute
path) and, where they are absent (a plain clone), skip with a reason `-ra` shows.

The tests read the real copies through `SNAPSHOTS`: a folder of links to the files of
`../shared/snapshots` the suite knows (`known_snapshots`), built once a run by tests/conftest.py.
A copy that arrives later (a new date of a source, a source folder no scraper knows yet) is left
out and reported at the end of the run, so no test fails because the real data grew.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]          # the repository
SHARED = ROOT.parent / "shared"                     # real data beside it, absent in a plain clone
REAL_SNAPSHOTS = SHARED / "snapshots"               # dated copies of the real leaderboards, as they are
KNOWN_SNAPSHOTS_ENV = "BENCHWATCH_TEST_SNAPSHOTS"     # where conftest built the view (inherited by xdist workers)
# the files of REAL_SNAPSHOTS the suite knows (links; `known_snapshots`), or the folder itself
# where no view was built (a module imported outside pytest)
SNAPSHOTS = Path(os.environ.get(KNOWN_SNAPSHOTS_ENV) or REAL_SNAPSHOTS)
PAPER_DATA = SHARED / "data"                        # the saturation paper's 60 benchmarks


def absent_reason(path: Path) -> str:
    """The skip reason of a test that needs `path` from ../shared."""
    if SNAPSHOTS != REAL_SNAPSHOTS and path.is_relative_to(SNAPSHOTS):
        path = REAL_SNAPSHOTS / path.relative_to(SNAPSHOTS)    # named as the user sees it
    try:
        shown = f"../{path.relative_to(ROOT.parent)}"
    except ValueError:
        shown = str(path)
    return f"real data {shown} not present (../shared beside the repository; absent in a plain clone)"


def declared_snapshot_files() -> frozenset[str]:
    """The real copies a scraper's cases declare (`Case(snapshot=True)`: the file and its
    auxiliary files), as paths relative to the snapshots folder."""
    import scrapers
    return frozenset(path for source in scrapers.SOURCES for case in type(scrapers.get(source)).CASES
                     if case.snapshot for path in (case.file, *(rel for _, rel in case.aux)))


def known_snapshots(real: Path, view: Path) -> list[str]:
    """Fill `view` with links to the files of `real` the suite knows; the others, left out, as
    paths relative to `real`.

    Known: a file a declared case covers, a file at the top (README, MANIFEST), and a file of a
    source folder with declared cases that a backfill leaves out with its reason (a schema, a
    manifest without its submissions). Unknown: a file a backfill would ingest that no case
    declares (a copy of a later date), and every file of a folder without declared cases (a
    source benchwatch does not read yet). The real-history tests compare with documents made
    from the known files; an unknown one would change them without being wrong."""
    from jobs.backfill import archive_files, plan_with_skips
    declared = declared_snapshot_files()
    folders = {d.split("/", 1)[0] for d in declared}
    planned, _ = plan_with_skips(real)
    ingested = {p.relative_to(real).as_posix() for f in planned for p in (f.path, *f.aux)}
    unknown = []
    for path in archive_files(real)[0]:       # every file, as a backfill walks the folder
        rel = path.relative_to(real).as_posix()
        top_level = "/" not in rel
        if top_level or rel in declared or (rel.split("/", 1)[0] in folders and rel not in ingested):
            link = view / rel
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(path.resolve())
        else:
            unknown.append(rel)
    return unknown


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


def docs_module(name: str):
    """A module of docs/ beside the generator scripts, imported as `docs.<name>` (a namespace
    package, found from this repository's root): the way the scripts import each other
    (docs/figures.py imports `docs.doc_blocks`), so a test and a script share one module."""
    import importlib
    import sys

    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    return importlib.import_module(f"docs.{name}")


def docs_figures():
    """docs/figures.py as a module for its tests."""
    return docs_module("figures")


def alert_timeline():
    """docs/alert_timeline.py as a module for its tests."""
    return docs_module("alert_timeline")


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


@contextmanager
def time_bound(seconds: float, what: str = "the test") -> Iterator[None]:
    """Fail `what` (pytest.fail in the main thread, from SIGALRM) once it has run `seconds`: a
    wait on something that never comes ends as a failure naming the bound, not as a hung run.
    Outside the main thread (where no signal handler can be set) it bounds nothing."""
    import signal

    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def expired(signum: int, frame: object) -> None:
        pytest.fail(f"{what} ran past its bound of {seconds:g} s (waiting on something that never came?)",
                    pytrace=True)

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextmanager
def file_site(files: dict[str, bytes]) -> Iterator[tuple[str, list[str]]]:
    """A loopback HTTP server answering GET `path` with `files[path]` (200) or an empty 404.
    `files` is read at each request, so a test may change it while the site runs. Yields the
    base URL (`http://127.0.0.1:PORT`) and the list of paths asked, in order."""
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            seen.append(self.path)
            body = files.get(self.path)
            self.send_response(200 if body is not None else 404)
            self.send_header("Content-Length", str(len(body or b"")))
            self.end_headers()
            self.wfile.write(body or b"")

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", seen
    finally:
        httpd.shutdown()
        httpd.server_close()


LIVEBENCH_CURRENT = ("table_2026_01_08.csv", "categories_2026_01_08.json")   # tests/fixtures/livebench


def livebench_files(*names: str) -> dict[str, bytes]:
    """`/NAME` -> the bytes of tests/fixtures/livebench/NAME, for a `file_site`."""
    return {f"/{n}": (ROOT / "tests" / "fixtures" / "livebench" / n).read_bytes() for n in names}


def point_livebench_at(monkeypatch, base: str) -> None:
    """LiveBench's current release, its per-release files and its changelog (livebench_releases)
    fetched from `base` (a `file_site`), with the fixtures' row floor."""
    import scrapers

    lbc, lrc = type(scrapers.get("livebench")), type(scrapers.get("livebench_releases"))
    monkeypatch.setattr(lbc, "urls", tuple(f"{base}/{n}" for n in LIVEBENCH_CURRENT))
    monkeypatch.setattr(lbc, "release_urls", lambda self, r: [f"{base}/table_{r}.csv", f"{base}/categories_{r}.json"])
    monkeypatch.setattr(lbc, "min_rows", 1)
    monkeypatch.setattr(lrc, "urls", (f"{base}/changelog.md",))


NOT_CODE = {"tests", "docs", "build", "dist", "node_modules"}


def code_folders(root: Path) -> list[Path]:
    """The repository's top-level folders of code: not hidden (`.venv`, `.git`), not a virtualenv
    under any name (it holds `pyvenv.cfg`), not build output or egg-info, not tests or docs. A
    checkout with its virtualenv inside must pass the suite as checked out."""
    return sorted(p for p in root.iterdir()
                  if p.is_dir() and not p.name.startswith((".", "_")) and p.name not in NOT_CODE
                  and not p.name.endswith(".egg-info") and not (p / "pyvenv.cfg").exists())

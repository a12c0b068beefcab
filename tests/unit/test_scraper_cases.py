"""Every declared scraper case (`CASES` beside each scraper class, scrapers/cases.py), collected
through the registry (`scrapers.SOURCES`) and run by one parametrised test."""

from __future__ import annotations

import math
from dataclasses import replace
import re
from datetime import datetime
from pathlib import Path

import pandas as pd
import pytest

import scrapers
from helpers import REAL_SNAPSHOTS, SNAPSHOTS, declared_snapshot_files, fixture_scraper, known_snapshots, require
from scrapers.cases import Absent, Case, Has, Spot

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def declared_cases() -> tuple[Case, ...]:
    """Every source's cases, in registry order, each stamped with its source."""
    return tuple(replace(case, source=source) for source in scrapers.SOURCES
                 for case in type(scrapers.get(source)).CASES)


ALL_CASES = declared_cases()
CASES = tuple(c for c in ALL_CASES if not c.snapshot)
SNAPSHOT_CASES = tuple(c for c in ALL_CASES if c.snapshot)
AT = datetime(2026, 1, 1)


def _root(case: Case) -> Path:
    return SNAPSHOTS if case.snapshot else FIXTURES


def run_case(case: Case):
    root = _root(case)
    path = require(root / case.file) if case.snapshot else root / case.file
    aux = {name: require(root / rel).read_bytes() for name, rel in case.aux} or None
    filename = path.name if case.filename == "<file>" else case.filename
    scraper = fixture_scraper(case.source, floor=None if case.real_floor else 1)
    return scraper.parse_checked(path.read_bytes(), fetched_at=AT, aux=aux, filename=filename)


def matches(frame: pd.DataFrame, where: dict) -> pd.Series:
    mask = pd.Series(True, index=frame.index)
    for column, value in where.items():
        mask &= frame[column] == value
    return mask


def check_cell(got, want, column: str, frame: pd.DataFrame) -> bool:
    if want is None:
        return bool(pd.isna(got))
    if isinstance(want, Has):
        return isinstance(got, str) and want.text in got
    if isinstance(want, str) and pd.api.types.is_datetime64_any_dtype(frame[column]):
        return got == pd.Timestamp(want)
    if isinstance(want, bool):
        return not pd.isna(got) and bool(got) is want
    if isinstance(want, float):
        return not pd.isna(got) and math.isclose(float(got), want, rel_tol=1e-6, abs_tol=1e-12)
    return not pd.isna(got) and got == want


def _lane(cases) -> list:
    """Every fixture case, and one real copy per source and kind of file (its name without the
    dates: a LiveBench table, an SWE-bench HTML index, …) run in the fast lane; the other dated
    copies of the same kind are `slow` (the full suite runs them all)."""
    seen: set[tuple[str, str]] = set()
    out = []
    for case in cases:
        kind = (case.source, re.sub(r"[\d_-]+", "", Path(case.file).name))
        first = not case.snapshot or kind not in seen
        seen.add(kind)
        out.append(pytest.param(case, id=case.name, marks=() if first else pytest.mark.slow))
    return out


@pytest.mark.parametrize("case", _lane(ALL_CASES))
def test_declared_case(case: Case):
    p = run_case(case)
    tables = {"scores": p.scores, "items": p.items, "models": p.models}
    counts = {"scores": case.scores, "items": case.items, "models": case.models, "rejects": case.rejects}
    got_counts = {"scores": len(p.scores), "items": len(p.items), "models": len(p.models), "rejects": len(p.rejects)}
    for table, want in counts.items():
        if want is not None:
            assert got_counts[table] == want, f"{table}: {got_counts[table]} rows, declared {want}"
    if case.excluded is not None:
        assert int((p.scores.excluded_reason != "").sum()) == case.excluded
    if case.benchmarks is not None:
        assert set(p.scores.benchmark) == set(case.benchmarks)
    if case.unique_models:
        assert p.models.model.is_unique
    for table, column in case.all_missing:
        assert tables[table][column].isna().all(), f"{table}.{column} declared missing on every row"
    if case.no_benchmark_like:
        assert not p.scores.benchmark.str.contains(case.no_benchmark_like).any()
    for key, want in case.meta.items():
        assert p.meta.get(key) == want, f"meta[{key!r}] = {p.meta.get(key)!r}, declared {want!r}"
    for text in case.warnings:
        assert any(text in w for w in p.warnings), f"no warning mentions {text!r}: {p.warnings}"
    for spot in case.spots:
        frame = tables[spot.table]
        hits = matches(frame, spot.where)
        if isinstance(spot, Absent):
            assert not hits.any(), f"{spot.table}: a row matches {spot.where}, declared absent"
            continue
        assert hits.sum() == 1, f"{spot.table}: {int(hits.sum())} rows match {spot.where}, expected one"
        row = frame[hits].iloc[0]
        for column, want in spot.expect.items():
            assert check_cell(row[column], want, column, frame), \
                f"{spot.table} {spot.where}: {column} = {row[column]!r}, declared {want!r}"
    # what every stored row must satisfy whatever the source
    assert p.scores.model.notna().all() and p.scores.score.notna().all()
    assert p.scores.loc[p.scores.metric == "proportion", "score"].between(0, 1).all()


def test_every_source_declares_fixture_cases():
    """A source without a declared fixture case has no hand-checked parse (see README "Add a leaderboard")."""
    declared = {c.source for c in CASES}
    missing = [s for s in scrapers.SOURCES if s not in declared]
    assert not missing, f"no declared fixture case for {missing}"


def test_declared_files_exist_and_ids_are_unique():
    assert len({(c.source, c.name) for c in ALL_CASES}) == len(ALL_CASES)
    for case in CASES:
        assert (FIXTURES / case.file).is_file(), case.file
        for _, rel in case.aux:
            assert (FIXTURES / rel).is_file(), rel


def test_every_snapshot_file_the_tests_ingest_is_declared_and_the_rest_reported(tmp_path):
    """The tests read ../shared/snapshots through the view of the files they know
    (helpers.known_snapshots): every file a backfill of the view ingests (primary or auxiliary,
    routed by name included) has a declared case (counts, spot values), what it skips has its
    reason, and every real file is either in the view or among those reported as unknown."""
    from jobs.backfill import archive_files, plan_with_skips
    require(REAL_SNAPSHOTS)
    view = tmp_path / "view"
    unknown = known_snapshots(REAL_SNAPSHOTS, view)
    declared = declared_snapshot_files()
    planned, skipped = plan_with_skips(view)
    used = [p.relative_to(view).as_posix() for f in planned for p in (f.path, *f.aux)]
    assert used and not [p for p in used if p not in declared], "an undeclared file in the view"
    assert all(s.reason for s in skipped)
    real = {p.relative_to(REAL_SNAPSHOTS).as_posix() for p in archive_files(REAL_SNAPSHOTS)[0]}
    seen = {p.relative_to(view).as_posix() for p in archive_files(view)[0]}
    assert seen | set(unknown) == real and not seen & set(unknown)
    assert declared <= seen | {d for d in declared if d not in real}   # a declared file present is kept


def test_a_copy_no_case_declares_and_a_folder_no_source_reads_are_left_out_and_reported(tmp_path):
    """What arrives in ../shared after the cases were written (a later copy of a source, a source
    folder benchwatch does not read) is left out of the view and named, never a failure."""
    require(REAL_SNAPSHOTS)
    declared = sorted(c.file for c in SNAPSHOT_CASES if c.file.startswith("lmarena/") and not c.aux)
    real = tmp_path / "real"
    for rel in declared:
        (real / rel).parent.mkdir(parents=True, exist_ok=True)
        (real / rel).symlink_to(REAL_SNAPSHOTS / rel)
    newer = real / re.sub(r"\d{4}-\d{2}-\d{2}", "2031-01-01", declared[0])    # a later date of a known file
    newer.write_bytes((REAL_SNAPSHOTS / declared[0]).read_bytes())
    (real / "newboard").mkdir()
    (real / "newboard" / "newboard_2031-01-01.csv").write_text("model,score\nm,0.5\n")
    (real / "README.md").write_text("notes\n")
    view = tmp_path / "view"
    unknown = known_snapshots(real, view)
    assert unknown == sorted([newer.relative_to(real).as_posix(), "newboard/newboard_2031-01-01.csv"])
    kept = sorted(p.relative_to(view).as_posix() for p in view.rglob("*") if p.is_file() or p.is_symlink())
    assert kept == sorted([*declared, "README.md"])
    assert all((view / rel).resolve() == (real / rel).resolve() for rel in kept)


@pytest.mark.parametrize("where, expect, ok", [
    ({"model": "a"}, {"score": 0.5}, True),
    ({"model": "a"}, {"score": 0.5001}, False),
    ({"model": "a"}, {"stderr": None}, True),
    ({"model": "b"}, {"stderr": None}, False),
    ({"model": "a"}, {"evaluated_at": "2025-01-02"}, True),
    ({"model": "a"}, {"evaluated_at": "2025-01-03"}, False),
    ({"model": "a"}, {"excluded_reason": Has("advers")}, True),
    ({"model": "b"}, {"excluded_reason": Has("advers")}, False),
    ({"model": "a"}, {"n_items": 805}, True),
    ({"model": "a"}, {"n_items": 804}, False),
])
def test_the_case_checker_can_fail(where, expect, ok):
    """The spot comparison says no when a value differs (else every declared case would pass)."""
    frame = pd.DataFrame({"model": ["a", "b"], "score": [0.5, 0.7], "stderr": [float("nan"), 0.01],
                          "evaluated_at": pd.to_datetime(["2025-01-02", "2025-01-05"]),
                          "excluded_reason": ["adversarial", ""], "n_items": pd.array([805, 10], dtype="Int64")})
    row = frame[matches(frame, where)].iloc[0]
    assert all(check_cell(row[c], w, c, frame) for c, w in expect.items()) is ok
    assert isinstance(Spot(where, expect), Spot)

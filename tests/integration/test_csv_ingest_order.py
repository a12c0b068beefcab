"""The csv ingest inside DuckDB (storage/csv_ingest.py) keeps the file's order across DuckDB's
row groups and threads: the first line of a repeated (benchmark, model, setting) is the one kept,
scores are stored in file order, rejects by stage then line. Large files take the paths the
small ones of tests/integration/test_csv_ingest.py do not reach (several row groups of ~123K lines, the
stage joined by line when keys repeat, a file without any '%' or any rejected line)."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobs.ingest import ingest_file
from storage import db
from tests.integration.test_csv_ingest import assert_same, both
from storage.store import open_store

OBSERVED = "2025-06-01"


@pytest.fixture(autouse=True)
def _several_threads(monkeypatch):
    """DuckDB's threads interleave the file's blocks, whatever the test run's own thread cap."""
    monkeypatch.setenv("BENCHWATCH_THREADS", "4")


def _board(n: int) -> tuple[str, list[tuple[str, str, str]], list[tuple[str, str, str]]]:
    """A file of n lines whose keys repeat far apart (a key's repeats land in other row groups),
    a few lines without a score; (text, kept lines, rejected lines in the order they are stored)."""
    lines, seen, kept, missing, dups = ["model,benchmark,score"], set(), [], [], []
    n_keys = max(n // 3, 1)
    for i in range(n):
        key = (i * 7919) % n_keys           # the same key again every ~n/3 lines, in a scattered order
        model, bench = f"m{key % 997}", f"b{key // 997}"
        score = "abc" if i % 1001 == 500 else f"0.{(i * 37) % 10000:04d}"
        lines.append(f"{model},{bench},{score}")
        row = (model, bench, score)
        if score == "abc":
            missing.append(row)
        elif (model, bench) in seen:
            dups.append(row)
        else:
            seen.add((model, bench))
            kept.append(row)
    return "\n".join(lines) + "\n", kept, missing + dups     # missing score: an earlier stage than duplicate


@pytest.mark.parametrize("n", [3_000, pytest.param(300_000, marks=pytest.mark.slow)])
def test_file_order_and_first_of_repeated_keys_kept(synced_db: Path, tmp_path: Path, n: int):
    text, kept, rejected = _board(n)
    board = tmp_path / "board.csv"
    board.write_text(text)
    result = ingest_file(open_store(synced_db), "csv", board, observed_at=OBSERVED)
    assert (result.n_scores, result.n_rejects) == (len(kept), len(rejected))
    with db.connect(synced_db, read_only=True) as con:
        stored = con.execute("SELECT model_raw, benchmark_raw, raw_value FROM scores ORDER BY rowid").fetchall()
        rejects = con.execute("SELECT row_json FROM rejects").fetchall()
    assert stored == kept
    assert [(r.split('"model":"')[1].split('"')[0], r.split('"benchmark":"')[1].split('"')[0])
            for (r,) in rejects] == [(m, b) for m, b, _ in rejected]


def test_a_clean_file_without_percent_signs_matches_the_pandas_path(tmp_path: Path, new_synced_db, monkeypatch):
    board = tmp_path / "clean.csv"
    board.write_text("model,benchmark,score,metric,n_items\n"
                     + "".join(f"m{i},b{i % 7},0.{i:03d},proportion,{100 + i}\n" for i in range(400)))
    native, reference = both(new_synced_db, board, monkeypatch)
    assert_same(native, reference)
    assert native[0].n_scores == 400 and native[0].n_rejects == 0


def test_rejected_numbers_written_differently_by_the_json_writer_match_the_pandas_path(tmp_path: Path, new_synced_db,
                                                                                       monkeypatch):
    """Repeated keys whose later scores are -0.0, exponents and long decimals: each rejected value's
    JSON text is the pandas writer's (-0.0 is not 0.0). Not 0.0 beside -0.0: DuckDB's storage keeps
    one of two neighbouring equal doubles for both (0.0 = -0.0), on either path."""
    cells = ["-0.0", "1e-7", "-0", "0.1234567", "5E-1", "-0.00", "0.5", "2.5e-1"]
    rows = [f"m{i},mmlu,0.25" for i in range(len(cells))]
    rows += [f"m{i},mmlu,{c}" for i, c in enumerate(cells)] + [f"m{i},mmlu,{c}" for i, c in enumerate(reversed(cells))]
    board = tmp_path / "zeros.csv"
    board.write_text("model,benchmark,score\n" + "\n".join(rows) + "\n")
    native, reference = both(new_synced_db, board, monkeypatch)
    assert_same(native, reference)
    assert native[0].n_rejects == 2 * len(cells)

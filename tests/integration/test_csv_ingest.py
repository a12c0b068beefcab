"""The csv ingest inside DuckDB (storage/csv_ingest.py) against the pandas path it replaces.

The reference is the pandas path itself (`ingest_file(..., native=False)`: `CsvScraper.parse_checked`
then `store_snapshot`), kept as the fallback: both must store the same rows, the same rejects in
the same order with the same reasons and row JSON, the same snapshot row and date claims.
"""

from __future__ import annotations

import random
from pathlib import Path

import pandas as pd
import pytest

import scrapers.csv as csv_format
from jobs.ingest import ingest_file
from scrapers.base import ScrapeError
from storage import db
from storage.store import open_store

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "csv"
OBSERVED = "2025-06-01"


def stored(path: Path) -> dict[str, pd.DataFrame]:
    """Everything an ingest writes, in insertion order, without ids and clocks."""
    with db.connect(path, read_only=True) as con:
        return {
            "scores": con.execute("SELECT * EXCLUDE (snapshot_id) FROM scores ORDER BY rowid").df(),
            # a view over one table (reject_rows, migration 033): read in its insertion order
            "rejects": con.execute("SELECT source, file_name, row_json, reason FROM rejects").df(),
            "snapshots": con.execute("""SELECT source, sha256, blob_sha256, file_names, observed_at, origin,
                                               parser_version, n_scores, n_items, n_models, n_rejects, warnings,
                                               meta::VARCHAR AS meta, status, held_reason FROM snapshots""").df(),
            "model_dates": con.execute("""SELECT * EXCLUDE (snapshot_id, observed_at) FROM model_dates
                                          WHERE source <> 'registry' ORDER BY rowid""").df(),
            "blobs": con.execute("SELECT sha256, size, compression, content FROM blobs").df(),
            "fetches": con.execute("SELECT source, url, status, bytes, sha256 FROM fetches").df(),
        }


def both(new_synced_db, board: Path, monkeypatch) -> tuple:
    """(result, tables) of the DuckDB path — which must not fall back — and of the pandas path, each
    into a fresh database (a copy of the session's synced one, cheaper than creating each)."""
    native_db, pandas_db = new_synced_db("native.duckdb"), new_synced_db("pandas.duckdb")
    with monkeypatch.context() as m:
        def no_fallback(*args, **kwargs):
            raise AssertionError("the DuckDB path fell back to pandas")
        m.setattr(csv_format.CsvScraper, "parse_checked", no_fallback)
        native = ingest_file(open_store(native_db), "csv", board, observed_at=OBSERVED)
    reference = ingest_file(open_store(pandas_db), "csv", board, observed_at=OBSERVED, native=False)
    return (native, stored(native_db)), (reference, stored(pandas_db))


def assert_same(native, reference) -> None:
    (got, got_tables), (want, want_tables) = native, reference
    assert got.summary() == want.summary() and got.warnings == want.warnings
    for name, frame in want_tables.items():
        pd.testing.assert_frame_equal(got_tables[name], frame, obj=name)


def test_every_kind_of_reject_matches_the_pandas_path(new_synced_db, tmp_path, monkeypatch):
    native, reference = both(new_synced_db, FIX / "every_reject.csv", monkeypatch)
    assert_same(native, reference)
    reasons = reference[1]["rejects"]["reason"]
    for kind in ("missing mandatory field(s): model", "missing mandatory field(s): score", "unknown metric kind",
                 "outside the range of metric", "n_items", "stderr", "duplicate (benchmark, model, setting)"):
        assert reasons.str.contains(kind, regex=False).any(), kind
    excluded = reference[1]["scores"]["excluded_reason"]
    assert excluded.str.startswith("duplicate of model").any()       # a canonical (alias) duplicate
    assert reference[1]["model_dates"]["model_raw"].tolist().count("dup-claim") == 1


def test_crlf_lines_and_a_byte_order_mark_match_the_pandas_path(new_synced_db, tmp_path, monkeypatch):
    board = tmp_path / "crlf.csv"
    board.write_bytes(b"\xef\xbb\xbf" + (FIX / "every_reject.csv").read_bytes().replace(b"\n", b"\r\n"))
    assert_same(*both(new_synced_db, board, monkeypatch))


def test_random_cells_match_the_pandas_path(new_synced_db, tmp_path, monkeypatch):
    """Cells drawn from the spellings leaderboards use (and misuse): numbers with signs, exponents,
    percent signs, spaces, long digit strings; names that clean to the same name; dates."""
    rng = random.Random(12)
    numbers = ["0.5", "0.8333", "85.3", "85.3%", "99", "1", "0", "100", "0.0", ".5", "5.", "007", "+0.5", "-0.1",
               " 0.7 ", "1e-1", "7E1", "inf", "-inf", "nan", "NaN", "n/a", "", "-", "abc", "0.123456789012345678",
               "123456789012345678", "1,5", "50 %", "%", "2.5e2"]
    names = ["o3", "O3", "[o3](https://x)", "gpt-5", "GPT-5 ", "claude*", "model-1", "-", "", "Mistral “Large”"]
    benchmarks = ["gpqa_diamond", "GPQA Diamond", "math_500", "mmlu", "bench x"]    # each with a % cell: no scale guess
    metrics = ["", "proportion", "percent", "Percent ", "accuracy", "elo", "furlongs", "pass@1"]
    counts = ["", "500", "0", "12.0", "1e3", " 7", "-5", "3000000000", "many", "198"]
    dates = ["", "2024-05-01", "2024/5", "Sep 2023", "late 2024", "2024", "not a date", "2024-01-01T10:00:00Z"]
    lines = ["model,benchmark,score,metric,stderr,n_items,setting,model_release_date,knowledge_cutoff"]
    for _ in range(400):
        row = [rng.choice(names), rng.choice(benchmarks), rng.choice(numbers), rng.choice(metrics),
               rng.choice(numbers[:12] + [""] * 6), rng.choice(counts), rng.choice(["", "high", " high", "low"]),
               rng.choice(dates), rng.choice(dates)]
        lines.append(",".join(f'"{c}"' if "," in c else c for c in row))
    lines += ["anchor-a,gpqa_diamond,0.8,proportion,,,,,", "anchor-b,math_500,85,percent,,,,,"]
    board = tmp_path / "random.csv"
    board.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert_same(*both(new_synced_db, board, monkeypatch))


def test_signed_zeros_nans_and_infinities_of_rejected_rows_match_the_pandas_path(new_synced_db, tmp_path,
                                                                                 monkeypatch):
    """Rejected rows whose numbers are signed zeros, NaNs, infinities or long fractions get the pandas
    path's row JSON (their text is looked up once per distinct number: its value and its sign). What
    this checks is that equality: DuckDB reads a stored -0.0 back as 0.0 and pandas writes it 0.0, so
    a lookup that ignored the sign would give the same JSON here."""
    cells = [("0.0", "0.0"), ("-0.0", "-0.0"), ("-0", "0"), ("nan", "-nan"), ("-nan", "nan"), ("NaN", ""),
             ("inf", "-inf"), ("-inf", "inf"), ("0.30000000000000004", "-0.0"), ("0.5", "0.10000000000000001")]
    lines = ["model,benchmark,score,stderr", "anchor,mmlu,0.8,0.01"]
    for i, (score, se) in enumerate(cells):
        lines += [f"m{i},mmlu,0.5,0.01", f"m{i},mmlu,{score},{se}"]      # the second repeats the first's key
    board = tmp_path / "numbers.csv"
    board.write_text("\n".join(lines) + "\n", encoding="utf-8")
    native, reference = both(new_synced_db, board, monkeypatch)
    assert_same(native, reference)
    row_json = reference[1]["rejects"]["row_json"]
    assert len(row_json) == len(cells)


@pytest.mark.parametrize("text", [
    "model,benchmark,score\no3,mmlu,0.8\nbad,mmlu,0.5,extra\n",            # malformed: DuckDB refuses, pandas words it
    "model,benchmark,score\n",                                             # a header and no rows
    "model,benchmark,score\na,mmlu,0.8\nb,mmlu,0.7\nc,mmlu,0.6\nd,mmlu,85\n",  # an ambiguous scale
    "model,benchmark,score\na,mmlu,abc\n",                                 # no row kept
])
def test_files_the_duckdb_path_leaves_to_pandas_fail_as_before(tmp_path, text):
    board = tmp_path / "board.csv"
    board.write_text(text)
    errors = []
    for native in (True, False):
        with pytest.raises(ScrapeError) as exc:
            ingest_file(open_store(tmp_path / f"{native}.duckdb"), "csv", board, native=native)
        errors.append(exc.value.reason)
        assert not (tmp_path / f"{native}.duckdb").exists()      # nothing written, not even the file
    assert errors[0] == errors[1]


@pytest.mark.parametrize("text", [
    "model,benchmark,score\no3,mmlu,0.8\nshort,mmlu\n",           # a short row (pandas: a missing score)
    'model,benchmark,score\n"o3" ,mmlu,0.8\nx, "y",0.5\n',        # quotes beside spaces (DuckDB would trim them)
    "model,benchmark,score\no3,mmlu,0.8\n   \nb,mmlu,0.6\n",      # a line of spaces
    "model,benchmark,score\r\no3,mmlu,0.8\nb,mmlu,0.6\r\n",      # mixed line endings
    "Model,Benchmark,Score,score\no3,mmlu,0.8,0.1\n",             # two columns named alike
])
def test_unusual_files_are_read_by_pandas_with_the_same_result(new_synced_db, tmp_path, text):
    """Files the DuckDB read would not reproduce exactly go to the pandas path (same outcome)."""
    board = tmp_path / "board.csv"
    board.write_text(text, newline="")
    outcomes = []
    for native in (True, False):
        try:
            outcomes.append(ingest_file(open_store(new_synced_db(f"{native}.duckdb")), "csv", board, native=native).summary())
        except ScrapeError as exc:
            outcomes.append(exc.reason)
    assert outcomes[0] == outcomes[1]


def test_an_existing_database_is_left_unchanged_by_a_file_that_fails(synced_db, tmp_path):
    path = synced_db
    ingest_file(open_store(path), "csv", FIX / "scores_proportion.csv")
    before = stored(path)
    board = tmp_path / "ambiguous.csv"
    board.write_text("model,benchmark,score\na,mmlu,0.8\nb,mmlu,0.7\nc,mmlu,0.6\nd,mmlu,85\n")
    with pytest.raises(ScrapeError, match="cannot tell percent from proportion"):
        ingest_file(open_store(path), "csv", board)
    after = stored(path)
    for name, frame in before.items():
        pd.testing.assert_frame_equal(after[name], frame, obj=name)


@pytest.mark.parametrize("signed_cell", ["83.3%", "0.5%"])
def test_one_percent_cell_never_rescales_a_column_of_proportions(new_synced_db, tmp_path, monkeypatch, signed_cell):
    """Issue 24 (1): fractions and one '%' cell. The '%' cell contradicts the column's unit and is
    rejected; the fractions are stored as written (not /100), by both paths alike."""
    board = tmp_path / "board.csv"
    board.write_text(f"model,benchmark,score\na,mmlu,0.85\nb,mmlu,0.80\nc,mmlu,0.75\nd,mmlu,{signed_cell}\n")
    native, reference = both(new_synced_db, board, monkeypatch)
    assert_same(native, reference)
    tables = reference[1]
    assert sorted(tables["scores"]["score"]) == [0.75, 0.80, 0.85]
    assert tables["scores"]["model_raw"].tolist() == ["a", "b", "c"]
    assert len(tables["rejects"]) == 1 and signed_cell in tables["rejects"]["row_json"][0]
    assert "'%'" in tables["rejects"]["reason"][0]


def test_percent_cells_outnumbering_fractions_still_read_the_column_as_percent(new_synced_db, tmp_path, monkeypatch):
    board = tmp_path / "board.csv"
    board.write_text("model,benchmark,score\na,mmlu,85%\nb,mmlu,80%\nc,mmlu,75.5%\nd,mmlu,0.5\n")
    native, reference = both(new_synced_db, board, monkeypatch)
    assert_same(native, reference)
    assert sorted(reference[1]["scores"]["score"].round(6)) == [0.005, 0.755, 0.80, 0.85]

"""Regression tests for issue 11's input defects 1, 2, 4 and 9 (each failed before its fix)."""

from __future__ import annotations

import os
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import scrapers
from cli.main import main
from jobs.collect import collect_source
from jobs.ingest import ingest_file
from scrapers import http
from scrapers.base import ScrapeError
from scrapers.normalize import AmbiguousScale, percent_scale, proportions_from
from jobs.sync import connect_synced
from storage.ingest import IngestRefused, parse_observed_at
from storage.query import run_query
from storage.store import open_store

FIX = Path(__file__).resolve().parents[1] / "fixtures"
NOW = datetime.now(timezone.utc)


@pytest.fixture
def dbpath(synced_db):
    return str(synced_db)


@pytest.fixture
def no_db(tmp_path):
    """A database path with no file yet: a refused input must not create it."""
    return str(tmp_path / "t.duckdb")


def counts(path: str) -> dict[str, int]:
    if not Path(path).exists():
        return {}
    with connect_synced(open_store(path)) as con:
        from storage.status import table_counts
        return table_counts(con)


# --- 1. scale decided from valid values, never from one bad cell ----------------------------------

@pytest.mark.parametrize("bad", ["inf", "101", "1e9", "-inf"])
def test_one_bad_cell_does_not_rescale_the_column(dbpath, tmp_path, bad):
    f = tmp_path / "s.csv"
    f.write_text(f"model,benchmark,score\no3,gpqa_diamond,0.833\nGPT-5,gpqa_diamond,0.854\nX,gpqa_diamond,{bad}\n")
    res = ingest_file(open_store(dbpath), "csv", f)
    assert (res.n_scores, res.n_rejects) == (2, 1)
    got = run_query("SELECT model_raw, score FROM scores ORDER BY 1", open_store(dbpath))
    assert dict(got.itertuples(index=False)) == {"GPT-5": pytest.approx(0.854), "o3": pytest.approx(0.833)}


def test_percent_file_with_a_bad_cell_still_read_as_percent(dbpath, tmp_path):
    f = tmp_path / "s.csv"
    f.write_text("model,benchmark,score\no3,math_500,99.2\nGrok-4,math_500,99.0\nX,math_500,inf\nY,math_500,250\n")
    res = ingest_file(open_store(dbpath), "csv", f)
    assert (res.n_scores, res.n_rejects) == (2, 2)
    got = run_query("SELECT score FROM scores ORDER BY score", open_store(dbpath))["score"].tolist()
    assert got == [pytest.approx(0.99), pytest.approx(0.992)]


def test_ambiguous_column_is_an_error_naming_source_and_column(no_db, tmp_path):
    dbpath = no_db
    f = tmp_path / "s.csv"
    f.write_text("model,benchmark,score\na,gpqa_diamond,0.8\nb,gpqa_diamond,0.7\nc,gpqa_diamond,0.6\nd,gpqa_diamond,85\n")
    with pytest.raises(ScrapeError) as exc:
        ingest_file(open_store(dbpath), "csv", f)
    assert exc.value.source == "csv" and "'score'" in exc.value.reason and "gpqa_diamond" in exc.value.reason
    assert counts(dbpath) == {}      # nothing written, not even the file
    # declaring the unit removes the guess: 85 is then an out-of-range proportion, rejected
    f.write_text("model,benchmark,score,metric\na,gpqa_diamond,0.8,proportion\nb,gpqa_diamond,0.7,proportion\n"
                 "c,gpqa_diamond,0.6,proportion\nd,gpqa_diamond,85,proportion\n")
    assert ingest_file(open_store(dbpath), "csv", f).n_rejects == 1


def test_scale_is_decided_per_benchmark(dbpath, tmp_path):
    f = tmp_path / "s.csv"
    f.write_text("model,benchmark,score\no3,gpqa_diamond,0.833\nGPT-5,gpqa_diamond,0.854\n"
                 "o3,math_500,99.2\nGrok-4,math_500,99.0\n")
    ingest_file(open_store(dbpath), "csv", f)
    got = run_query("SELECT benchmark, max(score) m FROM scores GROUP BY 1 ORDER BY 1", open_store(dbpath))
    assert got["m"].tolist() == [pytest.approx(0.854), pytest.approx(0.992)]


def test_percent_scale_against_brute_force():
    """The rule, checked against a direct enumeration on random columns (seeded)."""
    rng = np.random.default_rng(11)
    for _ in range(500):
        n = int(rng.integers(1, 12))
        pool = np.concatenate([rng.uniform(0, 1, 6), rng.uniform(1.0001, 100, 6),
                               [np.inf, -np.inf, np.nan, -3.0, 101.0, 1e9, 0.0]])
        col = pd.Series(rng.choice(pool, n))
        valid = [v for v in col if np.isfinite(v) and 0 <= v <= 100]
        above = sum(v > 1 for v in valid)
        below = sum(0 < v <= 1 for v in valid)
        expected = "proportion" if above == 0 else "percent" if above >= below else "ambiguous"
        try:
            got = "percent" if percent_scale(col) else "proportion"
        except AmbiguousScale:
            got = "ambiguous"
        assert got == expected, list(col)


def test_lmarena_mmlu_column_with_a_bad_cell_keeps_its_scale():
    """lmarena's MMLU column used the same max-based heuristic (scrapers/lmarena.py)."""
    assert proportions_from(pd.Series([0.641, 0.702, 101.0])).tolist()[:2] == [0.641, 0.702]
    text = (FIX / "lmarena" / "leaderboard_table_20231206.csv").read_text()
    lines = text.splitlines()
    header = lines[0].split(",")
    mmlu = next(i for i, c in enumerate(header) if c.strip().lower() == "mmlu")
    row = lines[1].split(",")
    row[mmlu] = "inf"
    bad = "\n".join([lines[0], ",".join(row)] + lines[2:]) + "\n"
    s = scrapers.get("lmarena")
    good = s.parse_checked(text.encode(), fetched_at=NOW, filename="leaderboard_table_20231206.csv").scores
    got = s.parse_checked(bad.encode(), fetched_at=NOW, filename="leaderboard_table_20231206.csv").scores
    g, b = (x[x["benchmark"] == "mmlu"].set_index("model")["score"] for x in (good, got))
    assert len(b) == len(g) - 1 and (b == g.loc[b.index]).all()


# --- 2. --observed-at ----------------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["2999-01-01", "", "NaT", "not a date", "   "])
def test_bad_observed_at_is_refused_in_one_line(dbpath, capsys, value):
    code = main(["ingest", "csv", str(FIX / "csv" / "scores_proportion.csv"), "--observed-at", value, "--db", dbpath])
    err = capsys.readouterr().err.strip()
    assert code == 1 and len(err.splitlines()) == 1 and "observed-at" in err
    assert counts(dbpath).get("snapshots", 0) == 0


def test_observed_at_skew_and_benchmark_existence(dbpath):
    assert parse_observed_at((NOW + timedelta(hours=12)).isoformat(), now=NOW) > NOW     # within the skew
    with pytest.raises(IngestRefused):
        parse_observed_at((NOW + timedelta(days=2)).isoformat(), now=NOW)
    # gpqa_diamond was released 2023-11-21: a 2019 observation is refused, the DB unchanged
    with pytest.raises(IngestRefused, match="gpqa_diamond"):
        ingest_file(open_store(dbpath), "csv", FIX / "csv" / "scores_proportion.csv", observed_at="2019-01-01")
    assert counts(dbpath)["snapshots"] == 0
    ingest_file(open_store(dbpath), "csv", FIX / "csv" / "scores_proportion.csv", observed_at="2024-01-15")
    assert counts(dbpath)["snapshots"] == 1


# --- 4. size cap and non-regular files ----------------------------------------------------------------

def test_dev_zero_is_refused_at_once(no_db):
    dbpath = no_db
    t0 = time.monotonic()
    with pytest.raises(ScrapeError, match="not a regular file"):
        ingest_file(open_store(dbpath), "csv", "/dev/zero")
    assert time.monotonic() - t0 < 5
    assert counts(dbpath) == {}


def test_fifo_is_refused_without_blocking(dbpath, tmp_path):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    with pytest.raises(ScrapeError, match="FIFO"):
        ingest_file(open_store(dbpath), "csv", fifo)


def test_file_over_the_cap_is_refused_reading_at_most_cap_plus_one(dbpath, tmp_path, monkeypatch):
    big = tmp_path / "big.csv"
    with open(big, "wb") as fh:           # sparse: 1 GiB on disk costs nothing
        fh.truncate(1 << 30)
    reads = []
    real_open = open

    class Spy:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *a):
            self.fh.close()

        def read(self, n=-1):
            reads.append(n)
            return self.fh.read(n)

    monkeypatch.setattr("builtins.open", lambda p, mode="r", *a, **k:
                        Spy(real_open(p, mode, *a, **k)) if str(p) == str(big) else real_open(p, mode, *a, **k))
    with pytest.raises(ScrapeError, match="size cap"):
        ingest_file(open_store(dbpath), "csv", big)
    assert reads == [http.DEFAULT_MAX_BYTES + 1]
    monkeypatch.undo()
    # exactly at the cap is read
    monkeypatch.setattr(http, "DEFAULT_MAX_BYTES", (FIX / "csv" / "scores_percent.csv").stat().st_size)
    assert ingest_file(open_store(dbpath), "csv", FIX / "csv" / "scores_percent.csv").status == "new"


def test_replay_file_over_the_cap_fails_that_source_only(dbpath, tmp_path, monkeypatch):
    replay = tmp_path / "replay"
    (replay / "bfcl").mkdir(parents=True)
    src = FIX / "replay" / "bfcl" / "data_overall.csv"
    (replay / "bfcl" / "data_overall.csv").write_bytes(src.read_bytes())
    monkeypatch.setattr(http, "DEFAULT_MAX_BYTES", src.stat().st_size - 1)
    out = collect_source(open_store(dbpath), "bfcl", replay_dir=replay)
    assert out.status == "failed" and "size cap" in out.detail
    assert counts(dbpath)["snapshots"] == 0


# --- 9. values: stderr, n_items, encoding, canonical duplicates -----------------------------------------

def test_bad_stderr_and_n_items_go_to_rejects(dbpath, tmp_path, capsys):
    f = tmp_path / "s.csv"
    f.write_text("model,benchmark,score,stderr,n_items\n"
                 "good1,gpqa_diamond,0.8,0.02,198\n"
                 "good2,gpqa_diamond,0.7,,\n"
                 "negse,gpqa_diamond,0.6,-0.01,198\n"
                 "infse,gpqa_diamond,0.6,inf,198\n"
                 "zero,gpqa_diamond,0.6,,0\n"
                 "neg,gpqa_diamond,0.6,,-5\n"
                 "huge,gpqa_diamond,0.6,,3000000000\n"
                 "frac,gpqa_diamond,0.6,,12.5\n"
                 "text,gpqa_diamond,0.6,,many\n")
    code = main(["ingest", "csv", str(f), "--db", dbpath])
    out = capsys.readouterr().out
    assert code == 0 and "2 scores" in out and "7 rejected rows" in out
    rejects = run_query("SELECT row_json, reason FROM rejects", open_store(dbpath))
    assert sum("stderr" in r for r in rejects["reason"]) == 2
    assert sum("n_items" in r for r in rejects["reason"]) == 5
    assert any("3000000000" in r for r in rejects["reason"])
    assert sorted(run_query("SELECT model_raw FROM scores", open_store(dbpath))["model_raw"]) == ["good1", "good2"]


def test_cp1252_is_decoded_with_a_warning(dbpath, tmp_path, capsys):
    f = tmp_path / "s.csv"
    f.write_bytes("model,benchmark,score\nMistral “Large” – 2,gpqa_diamond,0.7\nb,gpqa_diamond,0.6\n".encode("cp1252"))
    assert main(["ingest", "csv", str(f), "--db", dbpath]) == 0
    out = capsys.readouterr().out
    assert "Windows-1252" in out
    name = run_query("SELECT model_raw FROM scores WHERE score = 0.7", open_store(dbpath)).iloc[0, 0]
    assert name == "Mistral “Large” – 2"
    assert not any(0x80 <= ord(c) <= 0x9F for c in name)
    w = run_query("SELECT warnings FROM snapshots", open_store(dbpath)).iloc[0, 0]
    assert any("Windows-1252" in x for x in w)


def test_two_raw_names_of_one_model_are_stored_but_analysed_once(dbpath, tmp_path, capsys):
    f = tmp_path / "s.csv"
    f.write_text("model,benchmark,score\no3,gpqa_diamond,0.833\nO3,gpqa_diamond,0.5\nGPT-5,gpqa_diamond,0.854\n")
    assert main(["ingest", "csv", str(f), "--db", dbpath]) == 0
    assert "alias mapping" in capsys.readouterr().out
    stored = run_query("SELECT model_raw, excluded_reason FROM scores ORDER BY model_raw", open_store(dbpath))
    assert len(stored) == 3 and stored.set_index("model_raw").loc["O3", "excluded_reason"].startswith("duplicate")
    latest = run_query("SELECT model, model_raw, score FROM latest_scores", open_store(dbpath))
    assert latest["model"].is_unique and len(latest) == 2
    assert latest.set_index("model_raw").loc["o3", "score"] == pytest.approx(0.833)


def test_a_stderr_wider_than_the_metric_range_is_rejected(new_synced_db, tmp_path, capsys):
    """1e308 (or 2.0 for a proportion) was stored as a standard error (issue 24, item 14); both the
    DuckDB path and the pandas path (a file DuckDB leaves to pandas: a short row) reject it."""
    for tail in ("", "short,gpqa_diamond\n"):
        f = tmp_path / f"s{len(tail)}.csv"
        f.write_text("model,benchmark,score,stderr,metric\n"
                     "good,gpqa_diamond,0.8,0.02,proportion\n"
                     "wide,gpqa_diamond,0.7,1e308,proportion\n"
                     "two,gpqa_diamond,0.6,2.0,proportion\n"
                     "elo_ok,arena,1200,15,elo\n"
                     "elo_wide,arena,1200,5000,elo\n" + tail)
        db = str(new_synced_db(f"bw{len(tail)}.duckdb"))
        code = main(["ingest", "csv", str(f), "--db", db])
        capsys.readouterr()
        assert code == 0
        kept = sorted(run_query("SELECT model_raw FROM scores", open_store(db))["model_raw"])
        assert kept == ["elo_ok", "good"], kept
        reasons = run_query("SELECT reason FROM rejects WHERE reason LIKE 'stderr%'", open_store(db))["reason"]
        assert len(reasons) == 3 and all("wider than its metric's range" in r for r in reasons)


def test_a_multi_file_sources_files_point_at_aux(dbpath, tmp_path, capsys):
    """A source that reads files beside its main one (LiveBench: categories_<release>.json) says
    how to pass them: ingesting the auxiliary file alone fails with the --aux step, and a main
    file that fails or warns without it names the files it could have read."""
    categories = tmp_path / "categories_2026_01_08.json"
    categories.write_bytes((FIX / "livebench" / "categories_2026_01_08.json").read_bytes())
    assert main(["ingest", "livebench", str(categories), "--db", dbpath]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == (f"benchwatch: categories_2026_01_08.json looks like an auxiliary file of livebench, read "
                       f"beside its main file: ingest the main file and pass this one with --aux {categories}")
    lines = (FIX / "livebench" / "table_2026_01_08.csv").read_text().splitlines()
    table = str(tmp_path / "table_2026_01_08.csv")     # the fixture's models under 5 names: past the row floor
    Path(table).write_text("\n".join([lines[0]] + [f"{i}-{row}" for i in range(5) for row in lines[1:]]) + "\n")
    assert main(["ingest", "livebench", table, "--db", dbpath]) == 0
    assert ("  hint: livebench also reads categories_2026_01_08.json beside its main file; "
            "pass saved copies with --aux FILE") in capsys.readouterr().out.splitlines()
    assert main(["ingest", "livebench", table, "--aux", str(categories), "--db", dbpath]) == 0
    assert "hint:" not in capsys.readouterr().out
    # a main file that fails is not called an auxiliary one; without --aux the next step is named
    bad = tmp_path / "table_2026_01_09.csv"
    bad.write_text("nothing,here\n1,2\n")
    assert main(["ingest", "livebench", str(bad), "--db", dbpath]) == 1
    err = capsys.readouterr().err
    assert "auxiliary" not in err and "pass saved copies with --aux FILE" in err

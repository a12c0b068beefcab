"""`benchwatch report`: levels with uncertainty, suspects, alerts; scraped names escaped in HTML."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from cli.main import main
from jobs.cycle import analyze, ingest_file

EVIL = "x><img src=x onerror=alert(1)"   # survives name cleaning (no closing >)


def test_report_text_and_html(tmp_path, capsys):
    db = tmp_path / "bw.duckdb"
    f = tmp_path / "scores.csv"
    rows = [("m1", 0.95), ("m2", 0.94), ("m3", 0.93), ("m4", 0.925), ("m5", 0.92), ("m6", 0.5)]
    f.write_text("model,benchmark,score,n_items\n" + "".join(f"{m},{EVIL},{s},500\n" for m, s in rows))
    ingest_file(db, "csv", f)
    analyze(db, now=datetime(2026, 1, 1, tzinfo=timezone.utc))
    capsys.readouterr()

    assert main(["report", "--db", str(db)]) == 0
    text = capsys.readouterr().out
    # top-5 .95 .. .92, n = 500: SE_delta = sqrt(.95*.05/22.36 + .92*.08/22.36) = .0736, R = .408, S = .847
    assert "0.847" in text and "high" in text and "binomial(n_eff=n^alpha)" in text
    assert "±" not in text.split("Contamination")[0]          # no "SE" of S any more
    assert "P(bin holds)" in text and "paper" in text

    assert main(["report", "--db", str(db), "--format", "html"]) == 0
    page = capsys.readouterr().out
    assert page.startswith("<!DOCTYPE html>")
    assert "<img" not in page and "x&gt;&lt;img src=x onerror=alert(1)" in page


def test_report_without_a_database_says_so(tmp_path, capsys):
    assert main(["report", "--db", str(tmp_path / "none.duckdb")]) == 1
    assert "does not exist" in capsys.readouterr().err


@pytest.mark.slow   # two ingests and analyses (the wording itself: test_alerts_rules' level-note tests)
def test_report_shows_the_stored_level_and_says_why_the_bin_differs(tmp_path, capsys):
    """analyze stores the committed level; a second snapshot whose S lies in another bin keeps the
    level until confirmed, and the report says so in words (issue 19)."""
    db = tmp_path / "bw.duckdb"
    low = [("m1", 0.95), ("m2", 0.80), ("m3", 0.70), ("m4", 0.60), ("m5", 0.50)]
    high = [("m1", 0.95), ("m2", 0.94), ("m3", 0.93), ("m4", 0.925), ("m5", 0.92)]
    for i, rows in enumerate((low, high)):
        f = tmp_path / f"scores{i}.csv"
        f.write_text("model,benchmark,score,n_items\n" + "".join(f"{m},bench_x,{s},500\n" for m, s in rows))
        ingest_file(db, "csv", f, observed_at=f"2025-12-0{i + 1}T00:00:00Z")
        analyze(db, now=datetime(2025, 12, i + 1, 12, tzinfo=timezone.utc))
    capsys.readouterr()
    assert main(["query", "--db", str(db), "--format", "csv",
                 "SELECT bin, level, pending_bin, pending_count FROM saturation_latest WHERE scope = 'all'"]) == 0
    assert capsys.readouterr().out.splitlines()[1] == "high,very low,high,1"
    assert main(["report", "--db", str(db)]) == 0
    text = capsys.readouterr().out
    assert "bench_x [all]: S 0.85 is in the high range; the level stays very low until a second snapshot confirms it" \
        in text

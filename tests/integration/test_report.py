"""`benchwatch report`: levels with uncertainty, suspects, alerts; scraped names escaped in HTML."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from cli.main import main
from jobs.analyze import analyze
from jobs.ingest import ingest_file
from storage.store import open_store

EVIL = "x><img src=x onerror=alert(1)"   # survives name cleaning (no closing >)


def test_report_text_and_html(synced_db, tmp_path, capsys):
    db = synced_db
    f = tmp_path / "scores.csv"
    rows = [("m1", 0.95), ("m2", 0.94), ("m3", 0.93), ("m4", 0.925), ("m5", 0.92), ("m6", 0.5)]
    f.write_text("model,benchmark,score,n_items\n" + "".join(f"{m},{EVIL},{s},500\n" for m, s in rows))
    ingest_file(open_store(db), "csv", f)
    analyze(open_store(db), now=datetime(2026, 1, 1, tzinfo=timezone.utc))
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
def test_report_shows_the_stored_level_and_says_why_the_bin_differs(synced_db, tmp_path, capsys):
    """analyze stores the committed level; a second snapshot whose S lies one bin up keeps the
    level until the move has stood LEVEL_DWELL_DAYS, and the report says so in words (issues 19, 50)."""
    db = synced_db
    low = [("m1", 0.95), ("m2", 0.90), ("m3", 0.88), ("m4", 0.86), ("m5", 0.85)]      # S 0.28: low
    high = [("m1", 0.95), ("m2", 0.92), ("m3", 0.90), ("m4", 0.89), ("m5", 0.88)]     # S 0.49: moderate
    for i, rows in enumerate((low, high)):
        f = tmp_path / f"scores{i}.csv"
        f.write_text("model,benchmark,score,n_items\n" + "".join(f"{m},bench_x,{s},500\n" for m, s in rows))
        ingest_file(open_store(db), "csv", f, observed_at=f"2025-12-0{i + 1}T00:00:00Z")
        analyze(open_store(db), now=datetime(2025, 12, i + 1, 12, tzinfo=timezone.utc))
    capsys.readouterr()
    assert main(["query", "--db", str(db), "--format", "csv",
                 "SELECT bin, level, pending_bin, pending_count FROM saturation_latest WHERE scope = 'all'"]) == 0
    assert capsys.readouterr().out.splitlines()[1] == "moderate,low,moderate,1"
    assert main(["report", "--db", str(db)]) == 0
    text = " ".join(capsys.readouterr().out.split())           # the note is wrapped at 120 columns
    assert ("bench_x (CSV) [all]: S 0.49 is in the moderate range since 2025-12-02; the level stays low until "
            "2025-12-09 (7 days), unless a newer snapshot undoes the move") in text
    # a week later (a third snapshot on the way): the change is read back from the stored rows and leads the HTML page
    f = tmp_path / "scores2.csv"
    f.write_text("model,benchmark,score,n_items\n" + "".join(f"{m},bench_x,{s},500\n" for m, s in high[:4])
                 + "m5,bench_x,0.881,500\n")       # new content: an unchanged page is no new snapshot
    ingest_file(open_store(db), "csv", f, observed_at="2025-12-03T00:00:00Z")
    analyze(open_store(db), now=datetime(2025, 12, 9, 12, tzinfo=timezone.utc))
    from report.html import render_report
    from storage import db as storage_db
    from storage.report import read_html_report, read_level_changes
    with storage_db.connect(str(db), read_only=True) as con:
        changes = read_level_changes(con)
        frames = read_html_report(con)
    row = changes[(changes["benchmark"] == "bench_x") & (changes["scope"] == "all")].iloc[0]
    assert (row["from_level"], row["to_level"]) == ("low", "moderate")
    page = render_report(frames, now=datetime(2025, 12, 10, tzinfo=timezone.utc))
    lead = page[page.index('id="headline"'):page.index('id="benchmarks"')]
    assert 'id="bench-bench_x"' in lead and "level changed low → moderate on 2025-12-09" in lead


def _targets(tmp_path):
    """Paths --out must not replace: (path, what must still be true afterwards)."""
    import os
    import stat
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    link = tmp_path / "link.html"
    link.symlink_to(victim)
    folder = tmp_path / "folder"
    folder.mkdir()
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    out = [(link, lambda: link.is_symlink() and victim.read_text() == "keep me\n"),
           (folder, lambda: folder.is_dir() and not list(tmp_path.glob(".folder*"))),
           (fifo, lambda: stat.S_ISFIFO(os.lstat(fifo).st_mode)),
           (tmp_path / "no" / "such" / "dir" / "r.html", lambda: not (tmp_path / "no").exists())]
    device = tmp_path / "null"
    try:   # a character device like /dev/null (root only), never the real one
        os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        out.append((device, lambda: stat.S_ISCHR(os.lstat(device).st_mode)))
    except (PermissionError, OSError):
        pass
    return out


def test_report_out_refuses_links_devices_folders_and_missing_folders(tmp_path, capsys):
    """Before: a symlink or device became a regular file, missing folders were created, and a folder
    at the path was a bug (exit 70) that left `.DIR.tmp` behind."""
    from storage import db as storage_db
    db = tmp_path / "bw.duckdb"
    with storage_db.connect(str(db)):
        pass
    for fmt in ("text", "html"):
        (tmp_path / fmt).mkdir()
        for path, intact in _targets(tmp_path / fmt):
            code = main(["report", "--db", str(db), "--format", fmt, "--out", str(path)])
            err = capsys.readouterr().err.strip()
            assert code == 1, (path, err)
            assert len(err.splitlines()) == 1 and "Traceback" not in err, err
            assert intact(), path
            assert not list((tmp_path / fmt).glob(".*.tmp"))
    # a regular file is replaced, with its mode; a new file in an existing folder is created
    page = tmp_path / "report.html"
    page.write_text("old")
    page.chmod(0o640)
    assert main(["report", "--db", str(db), "--format", "html", "--out", str(page)]) == 0
    assert page.read_text().startswith("<!DOCTYPE html>") and (page.stat().st_mode & 0o777) == 0o640
    fresh = tmp_path / "fresh.txt"
    assert main(["report", "--db", str(db), "--out", str(fresh)]) == 0
    assert fresh.read_text().startswith("benchwatch report") and (fresh.stat().st_mode & 0o777) == 0o644
    assert not list(tmp_path.glob(".*.tmp"))


def test_report_out_html_writes_a_page_and_an_unanalysed_database_says_run_analyze(synced_db, tmp_path, capsys):
    """First-day traps: `--out page.html` writes the page (the suffix names the format unless --format
    says otherwise), and a database loaded but never analysed says to run `analyze`, not "(none)"."""
    db = synced_db
    f = tmp_path / "scores.csv"
    f.write_text("model,benchmark,score,n_items\n" + "".join(f"m{i},bench_x,0.{90 - i},500\n" for i in range(6)))
    ingest_file(open_store(db), "csv", f)
    capsys.readouterr()
    assert main(["report", "--db", str(db)]) == 0
    out, err = capsys.readouterr()
    assert "benchwatch analyze" in out and "benchwatch analyze" in err
    page = tmp_path / "page.html"
    assert main(["report", "--db", str(db), "--out", str(page)]) == 0
    assert page.read_text().startswith("<!DOCTYPE html>")
    text = tmp_path / "page.htm.txt"
    assert main(["report", "--db", str(db), "--out", str(text)]) == 0
    assert text.read_text().startswith("benchwatch report")
    forced = tmp_path / "forced.html"
    assert main(["report", "--db", str(db), "--format", "text", "--out", str(forced)]) == 0
    assert forced.read_text().startswith("benchwatch report")
    analyze(open_store(db), now=datetime(2026, 1, 1, tzinfo=timezone.utc))
    capsys.readouterr()
    assert main(["report", "--db", str(db)]) == 0
    out, err = capsys.readouterr()
    assert "benchwatch analyze" not in out + err


def test_the_item_accuracies_are_the_same_every_run():
    """The HTML report's monthly item accuracies and window rankings on a store large enough for
    DuckDB to aggregate a group on several threads. Before: avg and stddev_samp added in thread
    order, so runs differed in the last bits (8 runs of one such query gave 6 different results)
    and a mean on a rounding edge read 21.6 % in one report and 21.7 % in the next."""
    import duckdb
    import numpy as np
    import pandas as pd
    from storage.report import read_item_accuracy
    rng = np.random.default_rng(0)
    n = 300_000                      # more than two of DuckDB's row groups
    items = pd.DataFrame({"source": "s", "benchmark": "b", "model": rng.choice(["m1", "m2"], n),
                          "item_id": [f"i{i:07d}" for i in range(n)],
                          "item_date": pd.Timestamp("2025-01-15") + pd.to_timedelta(rng.integers(0, 200, n), unit="D"),
                          "score": rng.random(n)})
    con = duckdb.connect(config={"threads": 4})
    con.register("items", items)
    con.execute("CREATE TABLE latest_item_results AS SELECT * FROM items")
    runs = [read_item_accuracy(con) for _ in range(6)]
    months, windows = runs[0]
    assert len(months) == 2 * 8 and set(windows["model"]) == {"m1", "m2"}
    for m, w in runs[1:]:
        pd.testing.assert_frame_equal(m, months, check_exact=True)
        pd.testing.assert_frame_equal(w, windows, check_exact=True)
    one = items[(items["model"] == "m1") & (items["item_date"] < "2025-02-01")].sort_values("item_id")
    assert months.iloc[0]["accuracy"] == pytest.approx(one["score"].mean(), rel=1e-12)

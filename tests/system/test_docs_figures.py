"""docs/statistics.md's figures about the real history are what the code produces now.

The slow test runs `python docs/figures.py --check` on ../shared/snapshots (in this process, on
the session's backfill of it, tests/conftest.py; skipped, with the reason shown, when the folder
is absent). The fast tests check the block rewriting and that
--check fails on a stale document.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import SNAPSHOTS, copy_db, needs
from helpers import docs_figures as figures
from helpers import docs_module

ROOT = Path(__file__).resolve().parents[2]


def test_blocks_are_rewritten_in_place_and_missing_ones_named():
    f = docs_module("doc_blocks")
    doc = ("a <!-- figures:x -->old<!-- /figures:x --> b\n<!-- figures:t -->\n| old |\n<!-- /figures:t -->\n"
           "<!-- figures:kept -->untouched<!-- /figures:kept -->")
    new, missing = f.render(doc, {"x": "1.5", "t": "| new |\n| row |", "absent": "z"})
    assert new == ("a <!-- figures:x -->1.5<!-- /figures:x --> b\n<!-- figures:t -->\n| new |\n| row |\n"
                   "<!-- /figures:t -->\n<!-- figures:kept -->untouched<!-- /figures:kept -->")
    assert missing == ["absent"]
    assert f.render(new, {"x": "1.5", "t": "| new |\n| row |"})[0] == new      # idempotent


def test_check_fails_on_a_stale_document_and_passes_on_a_fresh_one(tmp_path, monkeypatch, capsys):
    f = figures()
    monkeypatch.setattr(f, "generate", lambda snapshots, db=None: {"x": "0.23"})
    doc = tmp_path / "statistics.md"
    doc.write_text("q = <!-- figures:x -->0.3<!-- /figures:x -->\n")
    args = ["--snapshots", str(tmp_path), "--doc", str(doc)]
    assert f.main(args + ["--check"]) == 1 and "0.23" in capsys.readouterr().out
    assert doc.read_text() == "q = <!-- figures:x -->0.3<!-- /figures:x -->\n"       # --check never writes
    assert f.main(args) == 0 and "0.23" in doc.read_text()
    assert f.main(args + ["--check"]) == 0
    doc.write_text("no block here\n")
    assert f.main(args + ["--check"]) == 2                     # a block the doc lacks is an error


def test_every_real_history_number_of_the_doc_sits_in_a_block():
    # the blocks the generator writes all exist in docs/statistics.md
    f = figures()
    text = f.DOC.read_text(encoding="utf-8")
    names = {m["name"] for m in docs_module("doc_blocks").BLOCK.finditer(text)}
    assert {"history", "saturation", "bin-hold", "scales", "trends", "plateau", "placeholders", "suspects", "a3",
            "calibrate", "trend-coverage", "a3-power", "paper-agreement"} <= names


@pytest.mark.xdist_group("real-history")   # reads the session's real-history backfill
@pytest.mark.slow
@needs(SNAPSHOTS)
def test_docs_statistics_figures_are_current(real_history, monkeypatch, capsys):
    """`python docs/figures.py --check`, run in this process. Its first step, the backfill of the
    snapshots (`benchwatch backfill DIR` in a subprocess, docs/figures.py's `backfill`), is the
    session's (tests/conftest.py: the same function on the same folder, run once), already
    analyzed at the same "now": the script's own `analyze` then recomputes only what an unchanged
    input leaves to recompute, whose results are those of a full analysis
    (tests/integration/test_incremental_analysis.py). Everything after it (calibration, the blocks, the
    comparison) runs here as the script does."""
    f = figures()
    monkeypatch.setattr(f, "backfill", lambda root, db: copy_db(real_history, db)
                        if Path(root) == SNAPSHOTS else pytest.fail(f"backfill of {root}"))
    done = f.main(["--snapshots", str(SNAPSHOTS), "--check"])
    out = capsys.readouterr()
    assert done == 0, out.out[-4000:] + out.err[-2000:]

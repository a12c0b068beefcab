"""The paper, reproduced from raw data (issue 21): the paper's 60 top-5s beside benchwatch's
tables at the paper's data cut-off (docs/paper_agreement.py `paper_agreement`, block `paper-agreement`
of docs/statistics.md).

The fast tests check the verdict on synthetic rows; the slow test backfills ../shared/snapshots,
analyzes, and checks facts that hold for any history: every tracked paper benchmark has a row,
an "agree: top 5" row has the paper's scores in its stored top_scores, an "agree: bin" row has the
paper's bin, and τ²-bench's row (the 2025-12-17 submissions) agrees.
"""

from __future__ import annotations

import pandas as pd
import pytest

from helpers import PAPER_DATA, SNAPSHOTS, docs_module, needs

pytestmark = pytest.mark.xdist_group("real-history")   # reads the session's real-history backfill

PAPER = {"top5": ["85.4", "84.7", "80.8", "80.4", "80"], "bin": "High", "n": 279, "hosts": {"taubench.com"}}


def table(**kw) -> dict:
    base = {"top5": [85.4333, 84.7333, 80.7573, 80.3667, 79.9708], "bin": "high", "n": 279, "source": "tau2_bench",
            "source_hosts": {"taubench.com"}, "as_of": "2025-12-01", "after": False, "snapshot": "2025-12-17",
            "gap_days": -5}
    return {**base, **kw}


def test_same_top5_within_the_papers_rounding_agrees():
    f = docs_module("paper_agreement")
    assert f.paper_verdict(PAPER, table()) == ("agree: top 5", [])
    # the paper's order is not trusted (its MMMLU row lists 81.1 before 81.5): compared sorted
    assert f.paper_verdict({**PAPER, "top5": ["85.4", "84.7", "80.4", "80.8", "80.0"]}, table())[0] == "agree: top 5"
    # 80.06 is not 80.0 at the paper's one decimal; "80" is read as 80.0, not as an integer
    verdict, why = f.paper_verdict(PAPER, table(top5=[85.4, 84.7, 80.8, 80.4, 80.06], bin="low"))
    assert verdict == "differs" and why == ["#5 80.1 vs 80.0"]


def test_same_bin_agrees_and_the_reasons_come_from_the_data():
    f = docs_module("paper_agreement")
    verdict, why = f.paper_verdict(PAPER, table(top5=[90.0, 84.7, 80.8, 80.4, 80.0], n=278, source="epoch",
                                                source_hosts={"epoch.ai"}, snapshot="2026-04-19", gap_days=118))
    assert verdict == "agree: bin"
    assert why == ["nearest snapshot 2026-04-19 (+118 days)", "other source (paper: taubench.com; here: epoch)",
                   "n 278 vs paper 279", "#1 90.0 vs 85.4"]
    # a table with no result by the paper's date cannot agree by bin
    verdict, why = f.paper_verdict(PAPER, table(top5=[90.0, 84.7, 80.8, 80.4, 80.0], after=True, as_of="2026-03-02"))
    assert verdict == "differs" and why[0] == "no result dated by the paper's date (first 2026-03-02)"


def test_missing_table_few_results_and_no_index():
    f = docs_module("paper_agreement")
    assert f.paper_verdict(PAPER, None) == ("differs", ["table not collected"])
    verdict, why = f.paper_verdict({**PAPER, "hosts": set()}, table(top5=[85.4, 84.7], bin=None, n=None))
    assert verdict == "differs"
    assert why == ["paper's source not stated", "no n here (paper 279)", "2 result(s) only", "no S here"]


def test_counts_are_per_paper_benchmark():
    f = docs_module("paper_agreement")
    frame = pd.DataFrame({"paper_id": [1, 1, 2, 3, 4],
                          "table_id": ["a:x", "a:y", "b:x", None, None],
                          "verdict": ["differs", "agree: bin", "differs", "differs", "not tracked"]})
    assert f.paper_counts(frame) == {"agree": 1, "differs": 1, "no table": 1, "not tracked": 1}


# --- the real history ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def agreement(real_history) -> pd.DataFrame:
    # the history backfilled and analyzed as docs/figures.py does it (tests/conftest.py, shared: read only)
    f = docs_module("paper_agreement")
    frame = f.paper_agreement(real_history, PAPER_DATA)
    frame.attrs["block"] = f.block_paper_agreement(frame)
    return frame


@pytest.mark.slow
@needs(SNAPSHOTS)
@needs(PAPER_DATA / "paper2026_saturation.csv")
def test_paper_agreement_on_the_real_history(agreement):
    from registry import load_benchmarks
    frame = agreement
    tracked = set(load_benchmarks()["paper_id"].dropna().astype(int))
    assert tracked <= set(frame["paper_id"])                       # every tracked paper benchmark has a row
    assert set(frame["paper_id"]) == set(pd.read_csv(PAPER_DATA / "paper2026_saturation.csv")["id"])
    assert set(frame["verdict"]) <= {"agree: top 5", "agree: bin", "differs", "not tracked"}
    assert not frame.loc[frame["table_id"].notna(), "verdict"].eq("not tracked").any()

    f = docs_module("paper_agreement")
    rows = frame[frame["verdict"] == "agree: top 5"]
    for r in rows.itertuples():                                    # recomputed from the stored top_scores
        ours = sorted((100 * float(v) for v in r.top_scores), reverse=True)
        paper = sorted(r.paper_top5, key=float, reverse=True)
        assert len(ours) == 5 and all(abs(o - float(p)) <= f._tolerance(p) + 1e-9 for o, p in zip(ours, paper)), r
    for r in frame[frame["verdict"] == "agree: bin"].itertuples():
        assert str(r.bin).lower() == r.paper_bin and r.as_of <= f.PAPER_DATE, r
    for r in frame[frame["verdict"] == "differs"].itertuples():
        assert r.reasons, r                                         # a difference always says why

    tau = frame[(frame["paper_id"] == 57) & (frame["verdict"] == "agree: top 5")]
    assert len(tau) == 1 and tau["table_id"].iloc[0].startswith("tau2_bench:tau2_bench")
    assert [f"{x:.1f}" for x in tau["top5"].iloc[0]] == ["85.4", "84.7", "80.8", "80.4", "80.0"]
    assert "| 57 | τ2-Bench |" in frame.attrs["block"] and "agree: top 5" in frame.attrs["block"]

"""The vectorised running top k (issue 23) against the one-pass definition it replaced.

`_topk_scan` computes groups without tied scores by prefix doubling (`_topk_doubling`) and
keeps the one pass (`_topk_loop`) for groups whose scores tie; here the one pass over every
row of every group is the reference, so the candidate filter, the improvement filter, the
doubling and the merge of both paths are all checked. Speed: bench/run.py, never here.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.saturation import with_tables
from analysis.saturation_tables import with_populations
from analysis.topk_scan import _history_rows, _topk_loop, _topk_scan
from analysis.trajectory import running_topk, saturation_trajectory


def _one_pass(d: dict, k: int) -> np.ndarray:
    """The top k (row numbers, best first, -1 padded) at the end of each (group, date), by one
    pass over every row."""
    n = len(d["score"])
    pos, tops = _topk_loop(d["group_code"].tolist(), d["model_code"].tolist(), d["score"].tolist(),
                           list(range(n)), k)
    scan = _topk_scan(d, k)                   # only its `end`, which the one pass does not compute
    state = np.searchsorted(np.asarray(pos), scan["end"], side="right") - 1
    return np.asarray(tops, dtype="int64").reshape(len(pos), k)[state]


def _history(seed: int, n: int, n_models: int, n_dates: int, n_bench: int, tie_share: float = 0.0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    score = rng.uniform(0, 1, n)
    bench = rng.choice([f"b{i}" for i in range(n_bench)], n)
    tied = np.isin(bench, [f"b{i}" for i in range(int(n_bench * tie_share))])
    score = np.where(tied, np.round(score * 10) / 10, score)   # whole benchmarks with equal scores
    return pd.DataFrame({"benchmark": bench, "model": rng.integers(0, n_models, n).astype(str), "score": score,
                         "date": pd.Timestamp("2024-01-01") + pd.to_timedelta(rng.integers(0, n_dates, n), unit="D")})


@pytest.mark.parametrize("k", [2, 3, 5, 8])
@pytest.mark.parametrize("seed,n,n_models,n_dates,n_bench,tie_share", [
    (0, 4000, 300, 400, 3, 0.0),        # models with many rows: improvements, stale rows in the doubling
    (1, 6000, 6000, 2000, 2, 0.0),      # one row per model (the bench's shape), long groups
    (2, 3000, 50, 30, 4, 0.5),          # two groups with ties (the one pass), two without
    (3, 500, 500, 5, 1, 0.0),           # few dates: many rows per date
    (4, 40, 12, 40, 5, 0.4),            # groups shorter than a block of the doubling
])
def test_scan_equals_one_pass(seed, n, n_models, n_dates, n_bench, tie_share, k):
    d = _history_rows(with_tables(_history(seed, n, n_models, n_dates, n_bench, tie_share)), ["table_id"])
    scan = _topk_scan(d, k)
    got = scan["changes"][scan["state"]]
    want = _one_pass(d, k)
    assert (got == want).all()
    assert len(got) == len(scan["end"]) > 0


def test_scan_with_populations_equals_one_pass():
    df = _history(5, 5000, 400, 300, 3)
    rng = np.random.default_rng(5)
    df["population"] = np.where(rng.random(len(df)) < 0.4, "systems", "models")
    df["underlying"] = np.where(rng.random(len(df)) < 0.6, "u" + rng.integers(0, 40, len(df)).astype(str), None)
    d = _history_rows(with_populations(with_tables(df)), ["population", "table_id"])
    assert (_topk_scan(d, 5)["changes"][_topk_scan(d, 5)["state"]] == _one_pass(d, 5)).all()


def test_rows_sorted_stably_by_group_then_time():
    """Times within a day, equal times, rows given out of order: the order is a stable sort."""
    rng = np.random.default_rng(9)
    n = 3000
    df = pd.DataFrame({"benchmark": rng.choice(["x", "y", "z"], n), "model": rng.integers(0, 99, n).astype(str),
                       "score": rng.uniform(0, 1, n),
                       "date": pd.Timestamp("2024-03-01") + pd.to_timedelta(rng.integers(0, 50, n) * 7, unit="h")
                       + pd.to_timedelta(rng.integers(0, 3, n), unit="us")})
    d = _history_rows(with_tables(df), ["table_id"])
    want = np.lexsort([df["date"].to_numpy().view("int64"), pd.factorize(df["benchmark"], sort=True)[0]])
    assert (d["order"] == want).all()


def test_benchmark_named_per_row_when_a_table_holds_several():
    df = _history(6, 600, 80, 60, 2)
    df["table_id"] = "shared"                                # one table, two benchmarks in it
    run = running_topk(df, 3)
    d = _history_rows(df, ["table_id"])
    end = _topk_scan(d, 3)["end"]
    assert run["benchmark"].tolist() == [str(b) for b in df["benchmark"].to_numpy()[d["order"][end]]]
    assert set(run["benchmark"]) == {"b0", "b1"} and (run["table_id"] == "shared").all()
    traj = saturation_trajectory(df, {"shared": 500}, 3)
    assert set(traj["benchmark"]) == {"b0", "b1"}


def test_with_populations_leaves_its_input_alone():
    df = _history(7, 50, 10, 5, 1)
    before = df.copy()
    out = with_populations(df)
    pd.testing.assert_frame_equal(df, before)
    assert {"population", "entity_variant"} <= set(out.columns) and (out["population"] == "models").all()

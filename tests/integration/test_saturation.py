"""Saturation index: the paper's table, hand-computed cases, edge cases, snapshot table, history."""

from __future__ import annotations

import json
import math
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.saturation import (
    UNCERTAINTY_ASSUMED,
    UNCERTAINTY_BINOMIAL,
    UNCERTAINTY_PUBLISHED,
    saturation_bin,
    saturation_index,
)
from analysis.saturation_tables import saturation_table
from analysis.trajectory import running_topk, saturation_trajectory
from cli.main import main as cli_main
from helpers import PAPER_DATA, needs

PAPER_TABLE = PAPER_DATA / "paper2026_saturation.csv"


# --- the paper --------------------------------------------------------------------------

def _tolerance(printed: str) -> float:
    """Half a unit in the last printed digit (the paper's CSV rounds some values to 5-8 digits)."""
    exp = Decimal(printed).as_tuple().exponent
    return 0.5 * 10.0 ** exp


@needs(PAPER_TABLE)
def test_reproduces_all_60_rows_of_the_papers_table():
    raw = pd.read_csv(PAPER_TABLE, dtype=str)
    assert len(raw) == 60
    for _, row in raw.iterrows():
        scores = [float(row[f"s{i}"]) / 100 for i in range(1, 6)]
        res = saturation_index(scores, int(row["n_items"]))
        where = f"paper row {row['id']} ({row['name'][:30]})"
        for col in ("se_delta", "r_norm", "s_index"):
            want = float(row[col])
            got = getattr(res, col)
            if want == 0.0:   # the paper prints exp(-R^2) below ~1e-13 as 0
                assert got < 1e-12, where
            else:
                tol = max(1e-6 * abs(want), _tolerance(row[col]))
                assert abs(got - want) <= tol, f"{where}: {col} {got!r} != {want!r}"
        assert res.bin == row["bin"].lower(), where


def test_math500_worked_example():
    # Appendix E: n = 500, top-5 99.2, 99.0, 98.3, 98.2, 98.2 (given out of order here).
    # By hand: n_eff = sqrt(500) = 22.3607; SE(.992)^2 = .992*.008/22.3607 = 3.5491e-4;
    # SE(.982)^2 = .982*.018/22.3607 = 7.9049e-4; SE_delta = sqrt(1.14540e-3) = .033844;
    # R = .01/.033844 = .29548; S = exp(-.087306) = .91640.
    res = saturation_index([0.982, 0.99, 0.992, 0.983, 0.982], 500)
    assert res.se_delta == pytest.approx(0.033844, abs=1e-6)
    assert res.r_norm == pytest.approx(0.29548, abs=1e-5)
    assert round(res.s_index, 4) == 0.9164
    assert res.bin == "very high"
    assert res.statistically_similar is True
    assert res.saturated is True
    assert res.stagnation is False            # 99.2% is at the ceiling, not stagnation
    assert res.top_scores == (0.992, 0.99, 0.983, 0.982, 0.982)
    assert res.uncertainty == UNCERTAINTY_BINOMIAL
    assert (res.k, res.alpha, res.z, res.n_items) == (5, 0.5, 1.96, 500.0)


def test_humanitys_last_exam_by_hand():
    # n = 2500 -> n_eff = 50. SE(.3772)^2 = .3772*.6228/50 = .0046984; SE(.2632)^2 = .2632*.7368/50 = .0038786;
    # SE_delta = sqrt(.008577) = .092612; R = .114/.092612 = 1.23095; S = exp(-1.51523) = .21976 (low).
    res = saturation_index([0.3772, 0.3332, 0.285, 0.2632, 0.2632], 2500)
    assert res.se_delta == pytest.approx(0.092612, abs=1e-6)
    assert res.r_norm == pytest.approx(1.23095, abs=1e-5)
    assert res.s_index == pytest.approx(0.21976, abs=1e-5)
    assert res.bin == "low"
    assert res.statistically_similar is True     # .114 <= 1.96 * .0926
    assert res.stagnation is False                # not saturated


def test_alpha_dominates_the_result():
    # METHODS 0.4: n = 1000, s1 = .90, s5 = .85. alpha = .5: SE_delta = sqrt(.2175/31.623) = .082933,
    # R = .60289, S = exp(-.36348) = .69525 (METHODS rounds to .70; the bin is moderate, just below .7).
    # alpha = 1: SE_delta = sqrt(.2175/1000) = .014748, R = 3.3903, S = 1.019e-5 (very low).
    half = saturation_index([0.9, 0.89, 0.88, 0.86, 0.85], 1000)
    assert half.s_index == pytest.approx(0.69525, abs=1e-5)
    assert half.bin == "moderate"
    one = saturation_index([0.9, 0.89, 0.88, 0.86, 0.85], 1000, alpha=1.0)
    assert one.r_norm == pytest.approx(3.3903, abs=1e-4)
    assert one.s_index == pytest.approx(1.0188e-5, rel=1e-3)
    assert one.bin == "very low"
    assert one.statistically_similar is False


def test_bins_edges_belong_to_the_upper_bin():
    assert [saturation_bin(x) for x in (0.0, 0.0099, 0.01, 0.2999, 0.3, 0.6999, 0.7, 0.8999, 0.9, 1.0)] == [
        "very low", "very low", "low", "low", "moderate", "moderate", "high", "high", "very high", "very high"]
    with pytest.raises(ValueError):
        saturation_bin(1.5)


# --- edge cases ---------------------------------------------------------------------------

def test_fewer_than_k_models_gives_no_index_and_says_why():
    res = saturation_index([0.5, 0.4, 0.3], 500)
    assert res.s_index is None and res.bin is None and res.statistically_similar is None
    assert res.reason == "only 3 model score(s), fewer than k=5"
    assert res.top_scores == (0.5, 0.4, 0.3)
    assert saturation_index([0.5, 0.4, 0.3], 500, k=3).s_index is not None


def test_unknown_n_gives_no_index_never_a_default():
    for n in (None, float("nan"), pd.NA):
        res = saturation_index([0.9, 0.8, 0.7, 0.6, 0.5], n)
        assert res.s_index is None
        assert "test-set size n unknown" in res.reason


def test_invalid_inputs_raise_clear_errors():
    with pytest.raises(ValueError, match="proportion scores must be in"):
        saturation_index([99.2, 99.0, 98.3, 98.2, 98.2], 500)   # percents
    with pytest.raises(ValueError, match="finite"):
        saturation_index([0.9, float("nan"), 0.7, 0.6, 0.5], 500)
    with pytest.raises(ValueError, match="n_items"):
        saturation_index([0.9, 0.8, 0.7, 0.6, 0.5], 0)
    with pytest.raises(ValueError, match="k must be"):
        saturation_index([0.9, 0.8], 500, k=1)
    with pytest.raises(ValueError, match="alpha"):
        saturation_index([0.9, 0.8, 0.7, 0.6, 0.5], 500, alpha=2)
    with pytest.raises(ValueError, match="stderrs has"):
        saturation_index([0.9, 0.8, 0.7, 0.6, 0.5], 500, stderrs=[0.01])


def test_scores_at_zero_and_one():
    # All at the ceiling: SE_delta = 0 and s1 == sk -> R = 0, S = 1 (the analyzer's convention).
    top = saturation_index([1.0] * 5, 500)
    assert (top.se_delta, top.r_norm, top.s_index, top.bin) == (0.0, 0.0, 1.0, "very high")
    assert saturation_index([0.0] * 6, 500).s_index == 1.0
    # 1 vs 0: SE_delta = 0 but the gap is total -> S = 0 (the analyzer would say 1).
    split = saturation_index([1.0, 1.0, 0.5, 0.2, 0.0], 500)
    assert split.se_delta == 0.0 and split.s_index == 0.0 and split.bin == "very low"
    # One score at 1: SE(1) = 0, SE_delta = SE(.99) = sqrt(.0099/22.3607) = .021041, R = .47525, S = .79783.
    one = saturation_index([1.0, 0.99, 0.99, 0.99, 0.99], 500)
    assert one.se_delta == pytest.approx(0.021041, abs=1e-6)
    assert one.s_index == pytest.approx(0.79783, abs=1e-5)


def test_ties_and_order_do_not_matter():
    a = saturation_index([0.8, 0.8, 0.8, 0.8, 0.8, 0.1], 1000)
    assert a.r_norm == 0.0 and a.s_index == 1.0
    rng = np.random.default_rng(3)
    scores = rng.uniform(0.4, 0.9, 12)
    ref = saturation_index(scores, 800)
    for _ in range(5):
        assert saturation_index(rng.permutation(scores), 800).s_index == ref.s_index


def test_stagnation_is_saturation_far_below_the_ceiling():
    # Terminal-Bench-like: top-5 64.5..57.5 on 112 tasks -> S = .896 (high) at 64.5%: stagnation.
    res = saturation_index([0.645, 0.623, 0.603, 0.588, 0.575], 112)
    assert res.bin == "high" and res.saturated and res.stagnation
    assert res.headroom == pytest.approx(0.355)
    # With a chance level of 50% (binary task) the headroom is (1 - .645)/(1 - .5) = .71.
    assert saturation_index([0.645, 0.623, 0.603, 0.588, 0.575], 112, chance=0.5).headroom == pytest.approx(0.71)


def test_published_stderr_is_used_only_where_n_is_unknown():
    # Both from the publication, n unknown: SE_delta = sqrt(.01^2 + .02^2) = .022361, R = 2.2361, S = exp(-5).
    res = saturation_index([0.9, 0.88, 0.87, 0.86, 0.85], None, stderrs=[0.01, None, None, None, 0.02])
    assert res.se_delta == pytest.approx(math.sqrt(0.0005))
    assert res.s_index == pytest.approx(math.exp(-5.0))
    assert res.uncertainty == UNCERTAINTY_PUBLISHED
    # n known: the paper's n_eff = n^alpha for both, published SEs ignored (comparable across benchmarks).
    known = saturation_index([0.9, 0.88, 0.87, 0.86, 0.85], 500, stderrs=[0.01, None, None, None, 0.02])
    se1, se5 = (math.sqrt(s * (1 - s) / math.sqrt(500)) for s in (0.9, 0.85))
    assert known.se_delta == pytest.approx(math.hypot(se1, se5))
    assert known.uncertainty == UNCERTAINTY_BINOMIAL
    # Only the top model published and n unknown: no index.
    assert saturation_index([0.9, 0.88, 0.87, 0.86, 0.85], None, stderrs=[0.01] + [None] * 4).s_index is None


def test_elo_needs_published_uncertainty():
    elo = [1300.0, 1290.0, 1285.0, 1280.0, 1270.0]
    res = saturation_index(elo, None, metric="elo")
    assert res.s_index is None and "not a proportion" in res.reason
    # SE 5 for both: SE_delta = sqrt(50) = 7.0711, R = 30/7.0711 = 4.2426, S = exp(-18).
    res = saturation_index(elo, None, metric="elo", stderrs=[5.0] * 5)
    assert res.r_norm == pytest.approx(30 / math.sqrt(50))
    assert res.s_index == pytest.approx(math.exp(-18))
    assert res.headroom is None and res.stagnation is None     # no ceiling on an Elo scale


def test_to_dict_is_json_ready():
    d = saturation_index([0.992, 0.99, 0.983, 0.982, 0.982], 500).to_dict()
    assert json.loads(json.dumps(d))["s_index"] == pytest.approx(0.916397111, abs=1e-9)
    assert d["top_scores"] == [0.992, 0.99, 0.983, 0.982, 0.982]


# --- the snapshot table ----------------------------------------------------------------------

def _latest() -> pd.DataFrame:
    rows = []
    for m, s in zip("abcde", (0.992, 0.99, 0.983, 0.982, 0.982)):
        rows.append(("math_500", m, s, "proportion", None, None, None, 500))
    rows.append(("math_500", "a", 0.95, "proportion", None, None, None, 500))      # a worse setting of model a
    for m, s in zip("abcdef", (0.30, 0.29, 0.28, 0.27, 0.26, 0.10)):
        rows.append(("livebench", m, s, "proportion", None, None, None, None))
    for m, s in zip("abcde", (1300.0, 1290.0, 1285.0, 1280.0, 1270.0)):
        rows.append(("arena_elo", m, s, "elo", None, s - 1.96 * 5, s + 1.96 * 5, None))
    for m, s in zip("abcde", (0.5, 0.4, 0.3, 0.2, 0.1)):
        rows.append(("mystery", m, s, "proportion", None, None, None, None))
    rows += [("few", "a", 0.5, "proportion", None, None, None, 100)]
    return pd.DataFrame(rows, columns=["benchmark", "model", "score", "metric", "stderr", "ci_low", "ci_high", "n_items"])


def test_saturation_table_one_row_per_benchmark():
    reg = pd.DataFrame({"id": ["livebench", "math_500"], "n_items": [1000, 400], "ceiling": [1.0, 1.0],
                        "chance": [0.0, 0.0], "metric_kind": ["proportion", "proportion"], "dynamic": [True, False]})
    t = saturation_table(_latest(), reg, as_of="2026-01-01").set_index("benchmark")
    assert list(t.index) == ["arena_elo", "few", "livebench", "math_500", "mystery"]
    assert (t["scope"] == "all").all() and (t["k"] == 5).all()
    # math_500: the scores' own n (500) wins over the registry's (400); model a counts once (best setting).
    assert t.loc["math_500", "s_index"] == pytest.approx(0.916397111, abs=1e-9)
    assert t.loc["math_500", "n_items"] == 500 and t.loc["math_500", "n_models"] == 5
    # livebench: n from the registry of a dynamic benchmark -> labelled assumed.
    # SE(.30)^2 = .21/31.623, SE(.26)^2 = .1924/31.623 -> SE_delta = .11280, R = .35461, S = .88184 (high).
    assert t.loc["livebench", "uncertainty"] == UNCERTAINTY_ASSUMED
    assert t.loc["livebench", "s_index"] == pytest.approx(0.88184, abs=1e-5)
    assert bool(t.loc["livebench", "stagnation"]) is True     # high at 30%: far below the ceiling
    # arena_elo: SE from the CI, (ci_high - ci_low) / (2 * 1.96) = 5 -> S = exp(-18).
    assert t.loc["arena_elo", "s_index"] == pytest.approx(math.exp(-18))
    assert t.loc["arena_elo", "uncertainty"] == UNCERTAINTY_PUBLISHED
    assert pd.isna(t.loc["mystery", "s_index"]) and "n unknown" in t.loc["mystery", "reason"]
    assert pd.isna(t.loc["few", "s_index"]) and "fewer than k=5" in t.loc["few", "reason"]
    assert t["as_of"].eq(pd.Timestamp("2026-01-01")).all()


def test_saturation_table_refuses_mixed_metrics_and_missing_columns():
    df = pd.DataFrame({"benchmark": ["x"] * 6, "model": list("abcdef"), "score": [0.5] * 5 + [1200.0],
                       "metric": ["proportion"] * 5 + ["elo"]})
    t = saturation_table(df, None)
    assert pd.isna(t.loc[0, "s_index"]) and "mix metric kinds" in t.loc[0, "reason"]
    with pytest.raises(ValueError, match="lack column"):
        saturation_table(df.drop(columns="metric"), None)


# --- history ------------------------------------------------------------------------------

def _random_history(seed: int, n_rows: int = 600) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    benches = rng.choice(["b1", "b2", "b3"], n_rows)
    dates = pd.Timestamp("2023-01-01") + pd.to_timedelta(rng.integers(0, 200, n_rows), unit="D")
    models = [f"m{i}" for i in rng.integers(0, 150, n_rows)]        # repeated models: several rows each
    scores = np.round(rng.uniform(0.2, 0.95, n_rows), 2)            # rounding creates ties
    return pd.DataFrame({"benchmark": benches, "model": models, "score": scores, "date": dates})


def _brute_force(df: pd.DataFrame, n_items: dict, k: int) -> pd.DataFrame:
    rows = []
    for bench, g in df.groupby("benchmark"):
        for as_of in sorted(g["date"].unique()):
            known = g[g["date"] <= as_of].groupby("model")["score"].max()
            if len(known) < k:
                continue
            res = saturation_index(known.to_numpy(), n_items[bench], k)
            rows.append((bench, pd.Timestamp(as_of), len(known), res.s_index, res.r_norm, res.se_delta, res.bin,
                         list(res.top_scores)))
    return pd.DataFrame(rows, columns=["benchmark", "as_of", "n_models", "s_index", "r_norm", "se_delta", "bin",
                                       "top_scores"])


@pytest.mark.parametrize("seed,k", [(0, 5), (1, 5), (2, 3)])
def test_trajectory_equals_brute_force(seed, k):
    df = _random_history(seed)
    n_items = {"b1": 500, "b2": 2000, "b3": 80}
    got = saturation_trajectory(df, n_items, k=k)
    want = _brute_force(df, n_items, k)
    assert len(got) == len(want) > 100
    assert got["benchmark"].tolist() == want["benchmark"].tolist()
    assert (got["as_of"].to_numpy() == want["as_of"].to_numpy()).all()
    assert got["n_models"].tolist() == want["n_models"].tolist()
    for col in ("s_index", "r_norm", "se_delta"):
        np.testing.assert_allclose(got[col].to_numpy(dtype=float), want[col].to_numpy(dtype=float), rtol=1e-12)
    assert got["bin"].tolist() == want["bin"].tolist()
    assert got["top_scores"].tolist() == want["top_scores"].tolist()
    assert (got["uncertainty"] == UNCERTAINTY_BINOMIAL).all()


def test_trajectory_uses_calendar_time_and_best_score_per_model():
    df = pd.DataFrame({
        "benchmark": "b", "model": ["a", "b", "c", "d", "e", "a", "f"],
        "score": [0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.1],
        # given out of order: the history follows the dates, not the rows
        "date": pd.to_datetime(["2024-01-05", "2024-01-04", "2024-01-03", "2024-01-02", "2024-01-01",
                                "2024-03-01", "2024-02-01"]),
    })
    t = saturation_trajectory(df, 1000)
    assert t["as_of"].dt.strftime("%Y-%m-%d").tolist() == ["2024-01-05", "2024-02-01", "2024-03-01"]
    assert t["top_scores"].tolist() == [[0.9, 0.8, 0.7, 0.6, 0.5], [0.9, 0.8, 0.7, 0.6, 0.5],
                                        [0.95, 0.9, 0.8, 0.7, 0.6]]
    assert t["n_models"].tolist() == [5, 6, 6]    # model a counted once after its second row


def test_trajectory_without_n_is_left_out_and_published_se_is_used():
    df = pd.DataFrame({"benchmark": ["x"] * 5 + ["y"] * 5, "model": list("abcde") * 2,
                       "score": [0.9, 0.88, 0.87, 0.86, 0.85] * 2, "date": pd.Timestamp("2024-01-01"),
                       "stderr": [np.nan] * 5 + [0.01, np.nan, np.nan, np.nan, 0.02]})
    t = saturation_trajectory(df, {"x": None, "y": None})
    assert t["benchmark"].tolist() == ["y"]
    assert t.loc[0, "s_index"] == pytest.approx(math.exp(-5.0))
    assert t.loc[0, "uncertainty"] == UNCERTAINTY_PUBLISHED


def test_time_horizons_and_costs_get_no_index_even_with_published_intervals():
    """Minutes (METR's time horizon, an asymmetric log-scale interval) and costs are not scores with
    sampling noise near a ceiling: before, a published CI gave them an S like any Elo board."""
    minutes = [288.9, 161.8, 120.0, 110.0, 100.0, 5.0]
    ci_low, ci_high = [108.9, 74.8, 60.0, 55.0, 50.0, 2.0], [1225.2, 348.3, 240.0, 220.0, 200.0, 10.0]
    latest = pd.DataFrame({"benchmark": "metr", "model": list("abcdef"), "score": minutes, "metric": "minutes",
                           "ci_low": ci_low, "ci_high": ci_high})
    row = saturation_table(latest, bootstrap_seed=None).iloc[0]
    assert row["s_index"] is None or pd.isna(row["s_index"])
    assert row["reason"].startswith("no index: a time horizon in minutes")
    costs = saturation_index([3.0, 2.0, 1.0, 0.5, 0.4], None, stderrs=[0.1] * 5, metric="cost_usd")
    assert costs.s_index is None and costs.reason.startswith("no index: a cost")
    history = latest.assign(date=pd.Timestamp("2025-11-24"))
    assert saturation_trajectory(history, {"metr": None}).empty
    # an Elo board with the same intervals still gets its index from them
    assert saturation_table(latest.assign(metric="elo", score=[1500.0 + m for m in minutes]),
                            bootstrap_seed=None).iloc[0]["s_index"] > 0


def test_running_topk_handles_large_histories_in_one_pass():
    rng = np.random.default_rng(11)
    n = 60_000
    df = pd.DataFrame({"benchmark": rng.choice(["a", "b"], n), "model": rng.integers(0, 20_000, n).astype(str),
                       "score": rng.uniform(0, 1, n),
                       "date": pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 2000, n), unit="D")})
    run = running_topk(df, 5)
    assert len(run) == df.groupby("benchmark")["date"].nunique().sum()
    last = run.groupby("benchmark").tail(1).set_index("benchmark")
    for b in ("a", "b"):
        want = sorted(df.loc[df["benchmark"] == b].groupby("model")["score"].max(), reverse=True)[:5]
        assert last.loc[b, "top_scores"] == want


# --- CLI ------------------------------------------------------------------------------------

def test_cli_percent_input_and_json(capsys):
    assert cli_main(["saturation", "--n", "500", "--json", "99.2", "99.0", "98.3", "98.2", "98.2"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["s_index"] == pytest.approx(0.916397111, abs=1e-9) and out["bin"] == "very high"
    assert cli_main(["saturation", "--n", "500", "0.992", "0.99", "0.983", "0.982", "0.982"]) == 0
    text = capsys.readouterr().out
    assert "S_index                0.916397" in text and "very high" in text
    assert cli_main(["saturation", "--n", "500", "0.5", "0.4"]) == 1
    assert "fewer than k=5" in capsys.readouterr().out
    assert cli_main(["saturation", "--n", "-3", "0.5", "0.4", "0.3", "0.2", "0.1"]) == 2
    assert "n_items must be a positive" in capsys.readouterr().err


# --- bin stability: P(bin) under the real sampling noise, checked by brute force ----------------

def _close(p: float, q: float, b1: int, b2: int) -> bool:
    """Two Monte Carlo frequencies agree within 4 standard errors of their difference (+ 0.005)."""
    m = (p + q) / 2
    return abs(p - q) <= 4 * math.sqrt(max(m * (1 - m), 1e-4) * (1 / b1 + 1 / b2)) + 0.005


def test_bin_stability_equals_an_item_level_brute_force_simulation():
    from analysis.saturation import bin_stability
    from analysis.constants import SATURATION_BINS
    # Math-500-like: the top 5 sit near the high / very-high edge, a 6th model close behind.
    scores, n = [0.992, 0.99, 0.983, 0.982, 0.982, 0.975, 0.9], 500
    st = bin_stability(scores, n, seed=11, draws=4000)
    assert st.noise == "binomial(n=500)" and st.draws == 4000 and st.seed == 11
    assert sum(st.bin_probs) == pytest.approx(1.0)
    # Independent: every model answers n fresh items (Bernoulli, another generator), the plain
    # scalar index re-ranks the whole list, and we count the bins.
    rng, b = np.random.default_rng(12345), 1500
    counts = dict.fromkeys(SATURATION_BINS, 0)
    for _ in range(b):
        redrawn = [float((rng.random(n) < s).mean()) for s in scores]
        counts[saturation_index(redrawn, n).bin] += 1
    for i, name in enumerate(SATURATION_BINS):
        assert _close(st.bin_probs[i], counts[name] / b, 4000, b), (name, st.bin_probs, counts)
    observed = saturation_index(scores, n).bin
    assert st.bin_hold_prob == st.bin_probs[SATURATION_BINS.index(observed)]
    assert 0.2 < st.bin_hold_prob < 0.95      # a case near an edge is genuinely uncertain


def test_bin_stability_with_published_errors_equals_a_plain_loop():
    from analysis.saturation import bin_stability
    from analysis.constants import SATURATION_BINS
    elo = [1400.0, 1395.0, 1390.0, 1380.0, 1378.0, 1377.0, 1300.0]
    se = [6.0, 8.0, 5.0, 7.0, 9.0, 4.0, 5.0]
    st = bin_stability(elo, None, stderrs=se, metric="elo", seed=3, draws=4000)
    assert st.noise == "normal(published_stderr)"
    rng, b = np.random.default_rng(777), 1500
    counts = dict.fromkeys(SATURATION_BINS, 0)
    for _ in range(b):
        redrawn = [rng.normal(m, e) for m, e in zip(elo, se)]   # each model keeps its own SE
        counts[saturation_index(redrawn, None, stderrs=se, metric="elo").bin] += 1
    for i, name in enumerate(SATURATION_BINS):
        assert _close(st.bin_probs[i], counts[name] / b, 4000, b), (name, st.bin_probs, counts)
    # a model without a published SE cannot be redrawn: no probability rather than a made-up one
    assert bin_stability(elo, None, stderrs=se[:-1] + [None], metric="elo", seed=3) is None


def test_bin_stability_means_what_its_label_says():
    from analysis.saturation import bin_stability
    scores = [0.992, 0.99, 0.983, 0.982, 0.982, 0.97]
    # No sampling noise left (a huge test set, same convention n_eff = n^alpha): the bin always holds.
    # The old bootstrap perturbed with n_eff noise and gave an "SE" of 0.1-0.3 whatever n was.
    assert bin_stability(scores, 10**9, seed=0).bin_hold_prob == 1.0
    # Top models far apart: re-evaluation never changes "very low".
    far = bin_stability([0.9, 0.8, 0.7, 0.6, 0.5], 1000, seed=0)
    assert far.bin_probs[0] == 1.0 and far.bin_hold_prob == 1.0
    # Fewer draws than the default are allowed; nonsense is an error; no index gives None.
    assert bin_stability(scores, 500, seed=0, draws=10).draws == 10
    with pytest.raises(ValueError, match="draws"):
        bin_stability(scores, 500, seed=0, draws=0)
    assert bin_stability(scores, None, seed=0) is None
    assert bin_stability(scores[:3], 500, seed=0) is None


# --- bin stability: only the models that can reach the top k are redrawn -----------------

def _hoeffding_delta(n: int) -> float:
    from analysis.constants import SATURATION_RESAMPLE_PRUNE_EPSILON
    return math.sqrt(math.log(1 / SATURATION_RESAMPLE_PRUNE_EPSILON) / (2 * n))


def _random_board(rng, n_models: int, low: float, high: float) -> np.ndarray:
    s = np.round(rng.uniform(low, high, n_models), 3)
    s[rng.choice(n_models, 3, replace=False)] = s.max()           # ties at the top
    return s


def _far_models_ever_in_top_k(s: np.ndarray, n: int, k: int, delta: float, draws: int, seed: int) -> int:
    """Full redraw of every model; how many draws put a model pruned at tail width `delta` in the top k."""
    from analysis.saturation import reachable_models
    far = ~reachable_models(s, delta, delta, k)
    redrawn = np.random.default_rng(seed).binomial(n, s, size=(draws, len(s))) / n
    kth = -np.sort(-redrawn, axis=1)[:, k - 1:k]
    return int((far & (redrawn >= kth)).any(axis=1).sum())


def test_bin_stability_pruned_is_the_full_redraw_of_the_reachable_models():
    from analysis.saturation import PRUNE_NORMAL_Z, bin_stability, reachable_models
    rng, n = np.random.default_rng(40), 300
    for _board in range(4):
        s = _random_board(rng, 400, 0.2, 0.9)
        keep = reachable_models(s, _hoeffding_delta(n), _hoeffding_delta(n), 5)
        assert 5 <= keep.sum() < len(s) and keep[np.argsort(-s, kind="stable")[:5]].all()
        pruned = bin_stability(s, n, seed=9, draws=300)
        assert pruned == bin_stability(s[keep], n, seed=9, draws=300, prune=False)
        assert pruned == bin_stability(s, n, seed=9, draws=300, prune=True)
    # published SEs: each model's own tail, z * SE_i, against the top k's lower tails
    elo, se = rng.normal(1200, 60, 300), rng.uniform(3, 15, 300)
    keep = reachable_models(elo, PRUNE_NORMAL_Z * se, PRUNE_NORMAL_Z * se, 5)
    assert 5 <= keep.sum() < len(elo)
    assert bin_stability(elo, None, stderrs=se, metric="elo", seed=4, draws=300) == \
        bin_stability(elo[keep], None, stderrs=se[keep], metric="elo", seed=4, draws=300, prune=False)


def test_bin_stability_pruning_nothing_leaves_the_draws_unchanged():
    from analysis.saturation import bin_stability
    close = [0.95, 0.95, 0.94, 0.93, 0.93, 0.92, 0.9, 0.88, 0.86]          # all within 2 delta at n = 500
    assert close[0] - close[-1] < 2 * _hoeffding_delta(500)
    assert bin_stability(close, 500, seed=5) == bin_stability(close, 500, seed=5, prune=False)
    elo, se = [1400.0, 1395.0, 1390.0, 1380.0, 1378.0, 1377.0, 1300.0], [6.0, 8.0, 5.0, 7.0, 9.0, 4.0, 5.0]
    assert bin_stability(elo, None, stderrs=se, metric="elo", seed=3) == \
        bin_stability(elo, None, stderrs=se, metric="elo", seed=3, prune=False)


def test_bin_stability_pruned_agrees_with_the_full_redraw_within_monte_carlo_error():
    """Pruned (the default) against a full redraw of every model with another seed, on random
    boards whose top k sit near a bin edge; the same comparison catches a pruning that drops
    models that can reach the top k (only the observed top k redrawn)."""
    from analysis.constants import SATURATION_BINS
    from analysis.saturation import bin_stability
    rng, n, b = np.random.default_rng(77), 200, 3000
    wrong_caught = 0
    for _board in range(4):
        s = _random_board(rng, 300, 0.3, 0.85)
        pruned = bin_stability(s, n, seed=1, draws=b)
        full = bin_stability(s, n, seed=2, draws=b, prune=False)
        for i, name in enumerate(SATURATION_BINS):
            assert _close(pruned.bin_probs[i], full.bin_probs[i], b, b), (name, pruned.bin_probs, full.bin_probs)
        top_only = bin_stability(np.sort(s)[-5:], n, seed=1, draws=b, prune=False)
        wrong_caught += not all(_close(p, q, b, b) for p, q in zip(top_only.bin_probs, full.bin_probs))
    assert wrong_caught == 4


def test_pruned_models_never_reach_a_top_k_but_a_much_narrower_tail_would_drop_some_that_do():
    rng, n = np.random.default_rng(3), 100
    s = _random_board(rng, 1000, 0.1, 0.9)
    delta = _hoeffding_delta(n)
    assert _far_models_ever_in_top_k(s, n, 5, delta, 2000, seed=8) == 0
    assert _far_models_ever_in_top_k(s, n, 5, delta / 8, 2000, seed=8) > 0      # the check can fail


def test_scale_says_which_results_are_comparable_with_the_paper():
    from analysis.saturation import SCALE_ASSUMED, SCALE_PAPER, SCALE_PUBLISHED
    top = [0.9, 0.88, 0.87, 0.86, 0.85]
    paper = saturation_index(top, 500, stderrs=[0.01] * 5)       # known n: published SEs ignored
    assert (paper.scale, paper.comparable) == (SCALE_PAPER, True)
    pub = saturation_index(top, None, stderrs=[0.01] * 5)         # n unknown: Epoch-style published SEs
    assert (pub.scale, pub.comparable) == (SCALE_PUBLISHED, False)
    assumed = saturation_index(top, 1000, n_assumed=True)          # nominal n of a dynamic benchmark
    assert (assumed.scale, assumed.comparable) == (SCALE_ASSUMED, False)
    elo = saturation_index([1300, 1290, 1280, 1270, 1260], 500, stderrs=[5] * 5, metric="elo")
    assert (elo.scale, elo.comparable) == (SCALE_PUBLISHED, False)
    assert saturation_index(top[:2], 500).comparable is None       # no index, no scale


def test_saturation_table_stores_reproducible_bin_stability_and_scale():
    from analysis.saturation import bin_stability, stability_seed
    latest = pd.DataFrame({"benchmark": ["b"] * 6 + ["otis"] * 5, "model": list("abcdef") + list("abcde"),
                           "score": [0.9, 0.88, 0.87, 0.86, 0.85, 0.5, 0.5, 0.45, 0.44, 0.4, 0.38],
                           "stderr": [np.nan] * 6 + [0.04] * 5, "metric": "proportion",
                           "n_items": [500] * 6 + [np.nan] * 5})
    t = saturation_table(latest).set_index("benchmark")
    assert t.equals(saturation_table(latest).set_index("benchmark"))           # seeded: reproducible
    b = t.loc["b"]
    assert b["comparable"] == True and b["scale"] == "paper_binomial"         # noqa: E712
    assert b["resample_noise"] == "binomial(n=500)" and b["resample_seed"] == stability_seed(0, "b", "all")
    again = bin_stability(latest["score"][:6], 500, seed=int(b["resample_seed"]), draws=int(b["resample_draws"]))
    assert list(again.bin_probs) == list(b["bin_probs"]) and again.bin_hold_prob == b["bin_hold_prob"]
    o = t.loc["otis"]
    assert o["comparable"] == False and o["scale"] == "published_stderr"      # noqa: E712
    assert o["resample_noise"] == "normal(published_stderr)"
    off = saturation_table(latest, bootstrap_seed=None)
    assert off["bin_hold_prob"].isna().all() and off["resample_seed"].isna().all()

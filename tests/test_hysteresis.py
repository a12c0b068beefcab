"""Saturation-bin hysteresis: METHODS D's prototype, no flapping, pending period, margins."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.hysteresis import BinState, bin_states, committed_bins, proposal, proposed_bin, states, step, support

VL, LO, MO, HI, VH = "very low", "low", "moderate", "high", "very high"


def test_methods_d_prototype_sequence():
    # METHODS D: states 0,0,0,1,1,1,1,0,0,2,2,2,2,3 with bin 0 = low ([0.01, 0.3)).
    x = [.2, .32, .36, .38, .33, .29, .24, .22, .75, .8, .81, .93, .96, .97]
    assert committed_bins(x) == [LO, LO, LO, MO, MO, MO, MO, LO, LO, HI, HI, HI, HI, VH]


def test_oscillation_around_an_edge_does_not_flap():
    rng = np.random.default_rng(5)
    x = 0.7 + rng.uniform(-0.04, 0.04, 200)          # the raw bin flips between moderate and high
    raw = ["high" if v >= 0.7 else "moderate" for v in x]
    assert sum(a != b for a, b in zip(raw, raw[1:])) > 50
    got = committed_bins([0.65] + list(x))
    assert set(got) == {MO}


def test_a_single_excursion_is_not_committed():
    # One snapshot beyond the margin, then back: the pending move is cancelled.
    assert committed_bins([.5, .8, .5, .8, .5]) == [MO] * 5
    # Two consecutive proposals in the same direction commit the latest one.
    assert committed_bins([.5, .8, .5, .8, .8]) == [MO, MO, MO, MO, HI]
    assert committed_bins([.5, .76, .97]) == [MO, MO, VH]        # up twice: the latest proposal wins


def test_direction_change_restarts_the_pending_count():
    # moderate; .2 proposes low (down 1); .8 proposes high (up 1, count restarts); .8 commits high.
    assert committed_bins([.5, .2, .8, .8]) == [MO, MO, MO, HI]


def test_multi_bin_jumps_and_the_very_low_bin_is_reachable():
    assert committed_bins([.95, .004, .003]) == [VH, VH, VL]
    assert committed_bins([.005, .95, .96]) == [VL, VL, VH]
    # Within the capped margin of the 0.01 edge (0.005): .007 stays low.
    assert committed_bins([.2, .007, .007, .007]) == [LO, LO, LO, LO]
    assert proposed_bin(1, 0.005, 0.05) == 0


def _probs(**by_bin):
    order = (VL, LO, MO, HI, VH)
    return [by_bin.get(name.replace(" ", "_"), 0.0) for name in order]


def test_support_is_the_probability_beyond_the_crossed_edge():
    p = _probs(low=0.1, moderate=0.3, high=0.4, very_high=0.2)
    assert support(2, 3, p) == pytest.approx(0.6)        # moderate -> high: P(high or very high)
    assert support(2, 4, p) == pytest.approx(0.6)        # a jump crosses the same first edge
    assert support(2, 1, p) == pytest.approx(0.1)        # moderate -> low: P(very low or low)
    assert support(2, 2, p) is None and support(2, 3, None) is None and support(2, 3, [0.5, 0.5]) is None


def test_unsupported_moves_are_not_committed():
    x = [.5, .77, .77, .77]                              # clears .7 + .05: proposes high
    firm = _probs(moderate=0.2, high=0.8)                # support 0.8: just enough
    shaky = _probs(moderate=0.4, high=0.6)               # 40% of re-evaluations stay moderate
    assert committed_bins(x) == [MO, MO, HI, HI]                          # no draws: margin alone
    assert committed_bins(x, [None, firm, firm, firm]) == [MO, MO, HI, HI]
    assert committed_bins(x, [None, shaky, shaky, shaky]) == [MO, MO, MO, MO]
    assert committed_bins(x + [.77], [None, firm, shaky, firm, firm]) == [MO, MO, MO, MO, HI]  # reset by shaky
    assert committed_bins(x, [None, shaky, shaky, shaky], min_support=0.6) == [MO, MO, HI, HI]
    assert proposal(2, .77, probs=shaky) == 2 and proposal(2, .77, probs=firm) == 3
    down = [.8, .62, .62]                                # high -> moderate needs P(below .7) >= 0.8
    below, above = _probs(low=0.1, moderate=0.7, high=0.2), _probs(moderate=0.6, high=0.4)
    assert committed_bins(down, [None, below, below]) == [HI, HI, MO]
    assert committed_bins(down, [None, above, above]) == [HI, HI, HI]
    assert committed_bins(x, margin=0.1) == [MO, MO, MO, MO]             # .77 does not clear .7 + .1


def test_the_support_test_stops_moves_that_are_sampling_noise():
    """Re-evaluations of the same models (nothing changes) with S near a bin edge.

    Every snapshot redraws each model's score at its true value (Binomial(n, s)/n), so every
    committed move after the first snapshot is a false alarm. With each snapshot's own bin
    probabilities the support test must at least halve them against the margin alone.
    """
    from analysis.saturation import bin_stability, saturation_index
    boards = ([0.95, 0.945, 0.94, 0.935, 0.93, 0.92, 0.9], [0.9, 0.88, 0.87, 0.86, 0.85, 0.8],
              [0.8, 0.77, 0.76, 0.75, 0.74])
    n, rng = 1000, np.random.default_rng(2024)
    false_plain = false_gated = 0
    for true in boards:
        for _trial in range(20):
            xs, ps = [], []
            for i in range(12):
                obs = rng.binomial(n, true) / n
                xs.append(saturation_index(obs, n).s_index)
                ps.append(bin_stability(obs, n, seed=i, draws=400).bin_probs)
            plain, gated = committed_bins(xs), committed_bins(xs, ps)
            false_plain += sum(a != b for a, b in zip(plain, plain[1:]))
            false_gated += sum(a != b for a, b in zip(gated, gated[1:]))
    assert false_plain >= 20                     # the scenario does flap without the support test
    assert false_gated <= false_plain / 2, (false_gated, false_plain)


def test_missing_values_keep_the_state_and_cancel_the_pending_move():
    assert committed_bins([None, .5, .8, np.nan, .8, .8]) == [None, MO, MO, MO, MO, HI]


def test_state_carries_across_runs():
    x = [.2, .32, .36, .38, .33, .29, .24, .22, .75, .8, .81, .93, .96, .97]
    whole = states(x)
    first = states(x[:9])
    rest = states(x[9:], initial=first[-1])
    assert first + rest == whole
    assert step(BinState(committed=1), .4) == BinState(committed=1, pending_direction=1, pending_count=1)
    assert step(step(BinState(committed=1), .4), .41) == BinState(committed=2)


def test_invalid_inputs():
    with pytest.raises(ValueError, match="S_index must be in"):
        committed_bins([0.5, 1.2])
    with pytest.raises(ValueError, match="probs has"):
        committed_bins([0.5, 0.6], [None])
    with pytest.raises(ValueError, match="margin"):
        committed_bins([0.5], margin=-0.1)
    with pytest.raises(ValueError, match="pending"):
        committed_bins([0.5], pending=0)


def test_bin_states_frame():
    df = pd.DataFrame({
        "benchmark": ["a"] * 4 + ["b"] * 3,
        "as_of": pd.to_datetime(["2024-01-04", "2024-01-01", "2024-01-02", "2024-01-03",
                                 "2024-01-01", "2024-01-02", "2024-01-03"]),
        "s_index": [.8, .5, .8, .8, .95, .92, .6],
    })
    out = bin_states(df)
    a = out[out["benchmark"] == "a"]
    assert a["s_index"].tolist() == [.5, .8, .8, .8]                    # sorted by as_of
    assert a["committed_bin"].tolist() == [MO, MO, HI, HI]
    assert a["changed"].tolist() == [False, False, True, False]
    assert a["previous_bin"].tolist()[2] == MO
    b = out[out["benchmark"] == "b"]
    assert b["raw_bin"].tolist() == [VH, VH, MO]
    assert b["committed_bin"].tolist() == [VH, VH, VH]                  # one low value is pending only


BENCH_KEY = ("benchmark", "scope", "population")   # a frame without tables: a series per benchmark


def test_series_levels_stores_the_committed_level_per_series():
    from analysis.hysteresis import series_levels
    t = pd.date_range("2025-01-01", periods=5, freq="D")
    df = pd.DataFrame({
        "benchmark": ["a"] * 5 + ["b"] * 3, "scope": "all", "population": ["models"] * 5 + ["systems"] * 3,
        "k": 5, "alpha": 0.5, "as_of": list(t) + list(t[:3]),
        "s_index": [.5, .8, .5, .8, .8] + [None, .2, .35]})
    out = series_levels(df.iloc[::-1], BENCH_KEY)          # input order does not matter
    a = out[out["benchmark"] == "a"]
    assert a["level"].tolist() == [MO, MO, MO, MO, HI]
    assert a["pending_bin"].tolist() == [None, HI, None, HI, None]
    assert a["pending_count"].tolist() == [0, 1, 0, 1, 0]
    assert a["level_since"].tolist() == [t[0], t[0], t[0], t[0], t[4]]
    b = out[out["benchmark"] == "b"]
    assert b["level"].tolist() == [None, LO, LO]           # no S_index yet: no level
    assert b["level_since"].tolist() == [None, t[1], t[1]]


def test_series_levels_equals_the_committed_bins_of_each_series():
    from analysis.hysteresis import series_levels
    rng = np.random.default_rng(3)
    x = np.clip(0.5 + np.cumsum(rng.normal(0, 0.08, 60)), 0, 1)
    df = pd.DataFrame({"benchmark": "a", "scope": "all", "population": "models",
                       "as_of": pd.date_range("2025-01-01", periods=60, freq="D"), "s_index": x})
    assert series_levels(df, BENCH_KEY)["level"].tolist() == committed_bins(list(x))

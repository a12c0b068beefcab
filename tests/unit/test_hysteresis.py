"""Saturation-bin hysteresis: METHODS D's prototype, no flapping, pending period, margins."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.hysteresis import (BinState, bin_states, committed_bins, proposal, proposed_bin, series_levels, settle,
                                 states, step, support)

VL, LO, MO, HI, VH = "very low", "low", "moderate", "high", "very high"


DAY0 = pd.Timestamp("2025-01-01")


def days(*offsets: float) -> list[pd.Timestamp]:
    return [DAY0 + pd.Timedelta(days=d) for d in offsets]


def weekly(n: int) -> list[pd.Timestamp]:
    return days(*(7 * i for i in range(n)))


def test_methods_d_prototype_sequence_moves_when_the_evidence_has_stood_not_a_snapshot_later():
    # METHODS D's prototype committed on the 2nd snapshot: 0,0,0,1,1,1,1,0,0,2,2,2,2,3. With one
    # snapshot a week each move lands one snapshot earlier (it has stood LEVEL_DWELL_DAYS by the
    # next one), and the jump .22 -> .75 (two bins) lands at once.
    x = [.2, .32, .36, .38, .33, .29, .24, .22, .75, .8, .81, .93, .96, .97]
    assert committed_bins(x, times=weekly(len(x))) == [LO, LO, MO, MO, MO, MO, LO, LO, HI, HI, HI, HI, VH, VH]
    # one snapshot a day: no one-bin move stands 7 days before the series turns; the jump still lands
    assert committed_bins(x) == [LO] * 8 + [HI] * 6


def test_an_identical_second_snapshot_is_not_what_commits_a_level():
    # issue 50: S moved on day 10, the same table was published again on day 40 (top k and S
    # identical). The move stood its 7 days by day 17: the level moved then, not on day 40.
    out = series_levels(pd.DataFrame({"benchmark": "a", "scope": "all", "population": "models",
                                      "as_of": days(0, 10, 40), "s_index": [.2, .5, .5]}), BENCH_KEY)
    assert out["level"].tolist() == [LO, MO, MO]
    assert out["level_since"].tolist() == [DAY0, DAY0 + pd.Timedelta(days=17), DAY0 + pd.Timedelta(days=17)]
    # and an identical re-publication the next day commits nothing: only time does
    assert committed_bins([.2, .5, .5], times=days(0, 10, 11)) == [LO, LO, LO]
    assert committed_bins([.2, .5, .5], times=days(0, 10, 11), now=days(17)[0]) == [LO, LO, MO]


def test_a_frozen_source_commits_its_level_from_its_stable_s():
    # the source publishes nothing after day 10: its S has stayed moderate; `now` is the clock
    frame = pd.DataFrame({"benchmark": "a", "scope": "all", "population": "models",
                          "as_of": days(0, 10), "s_index": [.2, .5]})
    waiting = series_levels(frame, BENCH_KEY, now=days(16)[0])
    assert waiting["level"].tolist() == [LO, LO]
    assert waiting["pending_bin"].tolist() == [None, MO]
    assert waiting["pending_since"].tolist() == [None, days(10)[0]]
    held = series_levels(frame, BENCH_KEY, now=days(17)[0])
    assert held["level"].tolist() == [LO, MO] and held["level_since"].tolist()[1] == days(17)[0]
    assert held["pending_bin"].tolist() == [None, None]
    # AlpacaEval 1.0's shape: very low, then S 0.80 from one snapshot on and never again
    assert committed_bins([.005, .80], times=days(0, 1), now=days(2)[0]) == [VL, HI]


def test_no_level_sits_two_bins_from_its_s():
    from analysis.saturation import bin_index
    rng = np.random.default_rng(11)
    for trial in range(200):
        n = int(rng.integers(2, 25))
        x = list(np.clip(rng.choice([0.004, .1, .4, .8, .95]) + np.cumsum(rng.normal(0, 0.2, n)), 0, 1))
        shaky = [list(rng.dirichlet(np.ones(5))) if rng.random() < .7 else None for _ in range(n)]
        t = days(*np.cumsum(rng.integers(1, 40, n)))
        for v, st in zip(x, states(x, shaky, t, now=t[-1] + pd.Timedelta(days=int(rng.integers(0, 30))))):
            assert abs(int(bin_index(v)) - st.committed) <= 1, (trial, x, t)


def test_a_move_undone_before_it_has_stood_is_not_committed():
    assert committed_bins([.5, .8, .5, .8, .5], times=days(0, 2, 4, 6, 8), now=days(30)[0]) == [MO] * 5
    # the same two proposals, a week apart: committed
    assert committed_bins([.5, .8, .8], times=days(0, 2, 9)) == [MO, HI, HI]


def test_oscillation_around_an_edge_does_not_flap():
    rng = np.random.default_rng(5)
    x = 0.7 + rng.uniform(-0.04, 0.04, 200)          # the raw bin flips between moderate and high
    raw = ["high" if v >= 0.7 else "moderate" for v in x]
    assert sum(a != b for a, b in zip(raw, raw[1:])) > 50
    got = committed_bins([0.65] + list(x))
    assert set(got) == {MO}


def test_a_single_excursion_is_not_committed():
    # One snapshot beyond the margin, then back within the week: the pending move is cancelled.
    assert committed_bins([.5, .8, .5, .8, .5]) == [MO] * 5
    # Proposals in one direction that stand a week commit the latest one.
    assert committed_bins([.5, .76, .77], times=days(0, 1, 8)) == [MO, HI, HI]     # in force from day 8
    assert committed_bins([.5, .76, .77], times=days(0, 1, 7)) == [MO, MO, MO]     # six days: not yet
    assert committed_bins([.5, .76, .8, .8], times=days(0, 1, 3, 9)) == [MO, MO, HI, HI]   # one run of proposals


def test_direction_change_restarts_the_pending_period():
    # moderate; .2 proposes low (down); .8 proposes high (up, the week restarts on day 3)
    assert committed_bins([.5, .2, .8, .8], times=days(0, 1, 3, 9)) == [MO, MO, MO, MO]
    assert committed_bins([.5, .2, .8, .8], times=days(0, 1, 3, 10)) == [MO, MO, HI, HI]


def test_multi_bin_jumps_and_the_very_low_bin_is_reachable():
    assert committed_bins([.95, .004, .003]) == [VH, VL, VL]      # four bins: at once
    assert committed_bins([.95, .5], times=days(0, 1)) == [VH, MO]   # two bins: at once, as far as the margin allows
    assert committed_bins([.95, .66], times=days(0, 1)) == [VH, HI]  # .66 does not clear .7 - .05: one bin short
    assert committed_bins([.005, .95, .96]) == [VL, VH, VH]
    # Within the capped margin of the 0.01 edge (0.005): .007 stays low.
    assert committed_bins([.2, .007, .007, .007], times=weekly(4)) == [LO, LO, LO, LO]
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
    x, t = [.5, .77, .77, .77], days(0, 1, 3, 8)         # .77 clears .7 + .05: proposes high from day 1
    firm = _probs(moderate=0.2, high=0.8)                # support 0.8: just enough
    shaky = _probs(moderate=0.4, high=0.6)               # 40% of re-evaluations stay moderate
    assert committed_bins(x, times=t) == [MO, MO, HI, HI]                 # no draws: margin alone
    assert committed_bins(x, [None, firm, firm, firm], t) == [MO, MO, HI, HI]
    assert committed_bins(x, [None, shaky, shaky, shaky], t) == [MO, MO, MO, MO]
    # the shaky day-3 snapshot cancels the move; proposed again on day 5, it stands by day 12
    assert committed_bins(x + [.77], [None, firm, shaky, firm, firm], days(0, 1, 3, 5, 12)) == [MO, MO, MO, HI, HI]
    assert committed_bins(x, [None, shaky, shaky, shaky], t, min_support=0.6) == [MO, MO, HI, HI]
    assert proposal(2, .77, probs=shaky) == 2 and proposal(2, .77, probs=firm) == 3
    down = [.8, .62, .62]                                # high -> moderate needs P(below .7) >= 0.8
    below, above = _probs(low=0.1, moderate=0.7, high=0.2), _probs(moderate=0.6, high=0.4)
    assert committed_bins(down, [None, below, below], days(0, 1, 8)) == [HI, MO, MO]
    assert committed_bins(down, [None, above, above], days(0, 1, 8)) == [HI, HI, HI]
    assert committed_bins(x, times=t, margin=0.1) == [MO, MO, MO, MO]     # .77 does not clear .7 + .1


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
            t = weekly(12)                              # a re-evaluation a week: one that stands commits
            plain, gated = committed_bins(xs, times=t), committed_bins(xs, ps, t)
            false_plain += sum(a != b for a, b in zip(plain, plain[1:]))
            false_gated += sum(a != b for a, b in zip(gated, gated[1:]))
    assert false_plain >= 20                     # the scenario does flap without the support test
    assert false_gated <= false_plain / 2, (false_gated, false_plain)


def test_missing_values_keep_the_state_and_cancel_the_pending_move():
    t = days(0, 1, 2, 3, 4, 11)
    assert committed_bins([None, .5, .8, np.nan, .8, .8], times=t) == [None, MO, MO, MO, HI, HI]
    assert committed_bins([None, .5, .8, .8, .8, .8], times=days(0, 1, 2, 3, 4, 5), now=days(9)[0])[-1] == HI


def test_state_carries_across_runs():
    x = [.2, .32, .36, .38, .33, .29, .24, .22, .75, .8, .81, .93, .96, .97]
    t = weekly(len(x))
    whole = states(x, times=t)
    first = states(x[:9], times=t[:9], now=t[9])
    rest = states(x[9:], times=t[9:], initial=first[-1])
    assert first + rest == whole
    pending = step(BinState(committed=1), .4, DAY0)
    assert pending == BinState(committed=1, pending_target=2, pending_direction=1, pending_since=DAY0, pending_count=1)
    assert settle(pending, days(6)[0]) == pending
    assert settle(pending, days(7)[0]) == BinState(committed=2, committed_at=days(7)[0])


def test_invalid_inputs():
    with pytest.raises(ValueError, match="S_index must be in"):
        committed_bins([0.5, 1.2])
    with pytest.raises(ValueError, match="probs has"):
        committed_bins([0.5, 0.6], [None])
    with pytest.raises(ValueError, match="times has"):
        committed_bins([0.5, 0.6], times=days(0))
    with pytest.raises(ValueError, match="margin"):
        committed_bins([0.5], margin=-0.1)
    with pytest.raises(ValueError, match="dwell_days"):
        committed_bins([0.5], dwell_days=-1)


def test_bin_states_frame():
    df = pd.DataFrame({
        "benchmark": ["a"] * 4 + ["b"] * 3,
        "as_of": pd.to_datetime(["2024-01-04", "2024-01-01", "2024-01-02", "2024-01-03",
                                 "2024-01-01", "2024-01-02", "2024-01-03"]),
        "s_index": [.8, .5, .8, .8, .95, .92, .6],
    })
    out = bin_states(df, dwell_days=1)
    a = out[out["benchmark"] == "a"]
    assert a["s_index"].tolist() == [.5, .8, .8, .8]                    # sorted by as_of
    assert a["committed_bin"].tolist() == [MO, HI, HI, HI]               # stood a day (dwell_days=1)
    assert a["changed"].tolist() == [False, True, False, False]
    assert a["previous_bin"].tolist()[1] == MO
    b = out[out["benchmark"] == "b"]
    assert b["raw_bin"].tolist() == [VH, VH, MO]
    assert b["committed_bin"].tolist() == [VH, VH, MO]                  # two bins below: at once


BENCH_KEY = ("benchmark", "scope", "population")   # a frame without tables: a series per benchmark


def test_series_levels_stores_the_committed_level_per_series():
    t = days(0, 1, 2, 3, 10)
    df = pd.DataFrame({
        "benchmark": ["a"] * 5 + ["b"] * 3, "scope": "all", "population": ["models"] * 5 + ["systems"] * 3,
        "k": 5, "alpha": 0.5, "as_of": list(t) + list(t[:3]),
        "s_index": [.5, .8, .5, .8, .8] + [None, .2, .35]})
    out = series_levels(df.iloc[::-1], BENCH_KEY)          # input order does not matter
    a = out[out["benchmark"] == "a"]
    assert a["level"].tolist() == [MO, MO, MO, HI, HI]     # proposed on day 3, stood by day 10
    assert a["pending_bin"].tolist() == [None, HI, None, None, None]
    assert a["pending_count"].tolist() == [0, 1, 0, 0, 0]
    assert a["level_since"].tolist() == [t[0], t[0], t[0], t[4], t[4]]
    b = out[out["benchmark"] == "b"]
    assert b["level"].tolist() == [None, LO, LO]           # no S_index yet: no level
    assert b["level_since"].tolist() == [None, t[1], t[1]]
    assert b["pending_bin"].tolist() == [None, None, MO] and b["pending_since"].tolist() == [None, None, t[2]]


def test_series_levels_equals_the_committed_bins_of_each_series():
    from analysis.hysteresis import series_levels
    rng = np.random.default_rng(3)
    x = np.clip(0.5 + np.cumsum(rng.normal(0, 0.08, 60)), 0, 1)
    df = pd.DataFrame({"benchmark": "a", "scope": "all", "population": "models",
                       "as_of": pd.date_range("2025-01-01", periods=60, freq="D"), "s_index": x})
    assert series_levels(df, BENCH_KEY)["level"].tolist() == committed_bins(list(x), times=df["as_of"])

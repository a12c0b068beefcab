"""Contamination-suspect signals (analysis/contamination.py): hand checks, seeded synthetic
power and null rates, placebo calibration, and the LiveCodeBench DeepSeek finding on real data.

Measured with these generators (the asserts leave a margin):
- A3, 200 seeds, a 0.5-logit boost on pre-cutoff items (mean excess 9.0 pp): power 0.86;
  null tests (1000) flagged 0.4 %, P(p < .05 | null) 3.0 % under difficulty drift.
- A1, 100 seeds, 12 models, +15 pp on the target benchmark, B = 300: power 0.56; P(p<.05|null) 0.
- A2, 100 seeds, successor +20 pp over its predecessor: power 0.75; P(p<.05|null) 0.1 %.
(Before the calibration work of issue 10: 0.965 / 0.98 / 0.95, with p-values that real-data
placebos showed anti-conservative.)
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analysis.contamination import (
    Thresholds,
    a2_predecessor_tests,
    a2_snapshot_tests,
    ability_weights,
    benjamini_hochberg,
    calibrate,
    did_test,
    finalize,
    pava,
    run_signals,
    SignalTest,
    a3_core,
    family_q_values,
    reference_placebo_p,
    summarize_placebo,
)
from analysis.cutoffs import resolve_model_dates
from helpers import SNAPSHOTS, needs

LCB = SNAPSHOTS / "livecodebench"
NOW = pd.Timestamp("2024-06-01")
START, END = pd.Timestamp("2023-05-01"), pd.Timestamp("2024-03-01")
CLEAN_CUT, TEST_CUT = pd.Timestamp("2022-12-01"), pd.Timestamp("2023-09-15")


# --- seeded synthetic data ---------------------------------------------------------------------

def synth_items(seed, *, n_items=400, n_clean=8, n_test=6, boost=None, drift=0.8, k=10, contest_size=1,
                contest_sd=0.0):
    """Rasch-like items: dated uniformly over START..END, harder later (`drift` logits over the
    span), k samples per (model, item). Clean models' cutoff precedes every item; test models'
    cutoff is TEST_CUT. boost = {test index: logit added on items dated <= its cutoff}.
    contest_size items share a date (a contest); contest_sd adds a model × contest logit effect
    (a model that suits a contest's topics), the dependence an item-independent test ignores."""
    rng = np.random.default_rng(seed)
    span = (END - START).days
    n_contests = -(-n_items // contest_size)
    contest = np.repeat(np.arange(n_contests), contest_size)[:n_items]
    day = np.sort(rng.integers(0, span + 1, n_contests))[contest]
    dates = START + pd.to_timedelta(day, unit="D")
    difficulty = rng.normal(0, 1.2, n_items) + drift * day / span
    models = [f"clean{i}" for i in range(n_clean)] + [f"test{i}" for i in range(n_test)]
    theta = rng.normal(0, 0.8, len(models))
    cuts = [CLEAN_CUT] * n_clean + [TEST_CUT] * n_test
    frames = []
    for j, m in enumerate(models):
        logit = theta[j] - difficulty + rng.normal(0, contest_sd, n_contests)[contest] if contest_sd else \
            theta[j] - difficulty
        if boost and m.startswith("test") and int(m[4:]) in boost:
            logit = logit + boost[int(m[4:])] * (dates <= cuts[j])
        p = 1 / (1 + np.exp(-logit))
        frames.append(pd.DataFrame({"benchmark": "synth", "model": m, "item_id": [f"i{i}" for i in range(n_items)],
                                    "item_date": dates, "score": rng.binomial(k, p) / k}))
    claims = pd.DataFrame({"model": models, "release_date": pd.NaT, "knowledge_cutoff": cuts,
                           "provenance": "vendor_doc", "source": "synthetic"})
    return pd.concat(frames, ignore_index=True), resolve_model_dates(claims)


def synth_scores(seed, *, n_models=12, boost=None):
    """Aggregate scores on 'target' and its references 'ref1', 'ref2' from one latent ability:
    s = Binomial(n, σ(a + c θ)) / n. boost = {model index: proportion added to the target rate}."""
    rng = np.random.default_rng(seed)
    theta = np.sort(rng.normal(0, 1, n_models))
    benches = {"target": (500, 0.2, 1.1), "ref1": (300, -0.3, 0.9), "ref2": (400, 0.4, 1.2)}
    frames = []
    for b, (n, a, c) in benches.items():
        p = 1 / (1 + np.exp(-(a + c * theta)))
        if b == "target" and boost:
            for i, d in boost.items():
                p[i] = min(p[i] + d, 0.99)
        frames.append(pd.DataFrame({"source": "synthetic", "benchmark": b, "model": [f"m{i}" for i in range(n_models)],
                                    "score": rng.binomial(n, p) / n, "n_items": n, "metric": "proportion"}))
    benchmarks = pd.DataFrame({"benchmark": list(benches), "reference_benchmarks": [("ref1", "ref2"), (), ()],
                               "n_items": [v[0] for v in benches.values()]})
    return pd.concat(frames, ignore_index=True), benchmarks


NO_CUTOFFS = pd.DataFrame({"model": pd.Series(dtype=str), "c_lo": pd.Series(dtype="datetime64[us]"),
                           "c_hi": pd.Series(dtype="datetime64[us]")})


# --- hand checks -------------------------------------------------------------------------------

def test_pava_and_bh_by_hand():
    assert pava(np.array([1.0, 3.0, 2.0, 4.0])).tolist() == [1.0, 2.5, 2.5, 4.0]
    assert pava(np.array([3.0, 1.0]), np.array([1.0, 3.0])).tolist() == [1.5, 1.5]
    # BH: p = .01, .04, .03, .5 -> sorted ranks 1..4: .01*4/1=.04, .03*4/2=.06, .04*4/3=.0533 -> min .0533
    q = benjamini_hochberg([0.01, 0.04, 0.03, 0.5, float("nan")])
    assert q[:4] == pytest.approx([0.04, 0.04 * 4 / 3, 0.04 * 4 / 3, 0.5])
    assert math.isnan(q[4])


def test_ability_weights_are_a_smoother():
    z = np.linspace(-2.0, 2.0, 9)                    # 9 references: degree 2
    w, clamped = ability_weights(z, 0.5)
    assert w.sum() == pytest.approx(1.0) and not clamped
    gaps = 0.1 - 0.03 * z ** 2 + 0.02 * z            # a quadratic is reproduced exactly
    assert w @ gaps == pytest.approx(0.1 - 0.03 * 0.25 + 0.01)
    w, clamped = ability_weights(z, 5.0)             # outside the references: clamped to z = 2
    assert clamped and w @ gaps == pytest.approx(0.1 - 0.12 + 0.04)
    w6, _ = ability_weights(z[:6], 0.3)              # 6 references: a line (3 per coefficient)
    line = 0.2 + 0.05 * z[:6]
    assert w6 @ line == pytest.approx(0.2 + 0.05 * 0.3) and w6 @ z[:6] ** 2 != pytest.approx(0.09)
    w5, _ = ability_weights(z[:5], 0.3)              # five references: the plain mean
    assert w5 == pytest.approx([1 / 5] * 5)


def test_a3_core_matches_a_brute_force_loop():
    """The vectorized core against a per-problem loop: did_test (items independent) when each
    item is its own cluster, and the CR1 cluster sum by hand when items share contests."""
    rng = np.random.default_rng(0)
    n, m = 120, 7
    y = rng.binomial(10, rng.uniform(0.1, 0.9, (n, m))) / 10
    dates = np.repeat(np.arange(40), 3)                         # 40 contests of 3 items
    pre = (dates < 18)[:, None]
    post = (dates >= 22)[:, None]
    targets = np.array([0, 3])
    masks = np.ones((2, m), dtype=bool)
    masks[0, 0] = False
    masks[1, [0, 3]] = False
    core = a3_core(y, pre, post, np.arange(n), targets, masks)
    for p_i, (t, mask) in enumerate(zip(targets, masks)):
        refs = np.flatnonzero(mask)
        z_refs = np.log(y[post[:, 0]][:, refs].mean(0)) - np.log1p(-y[post[:, 0]][:, refs].mean(0))
        zm = y[post[:, 0], t].mean()
        w, _ = ability_weights(z_refs, np.log(zm) - np.log1p(-zm))
        a = y[:, refs] @ w
        ref = did_test(y[pre[:, 0], t], y[post[:, 0], t], a[pre[:, 0]], a[post[:, 0]])
        assert core["effect"][0, p_i] == pytest.approx(ref["effect"])
        assert core["se"][0, p_i] == pytest.approx(ref["se"])
    clustered = a3_core(y, pre, post, dates, targets, masks)
    assert clustered["effect"] == pytest.approx(core["effect"])
    u = y[:, 0] - y[:, masks[0]] @ clustered["weights"][0, 0, masks[0]]
    var = 0.0
    for win in (pre[:, 0], post[:, 0]):
        dev = u[win] - u[win].mean()
        sums = pd.Series(dev).groupby(dates[win]).sum().to_numpy()
        c = len(sums)
        var += (sums ** 2).sum() / win.sum() ** 2 * c / (c - 1)
    assert clustered["se"][0, 0] == pytest.approx(math.sqrt(var))


def test_a3_placebo_contest_sums_match_a3_core_in_blocks(monkeypatch):
    """The placebo sums each contest's items before it fits (analysis.contamination.a3_placebo.
    _contest_core) and solves a trial's problems in blocks of tested models: the same numbers as
    a3_core's item sums over every problem at once, to rounding, with contests and without."""
    import importlib
    placebo = importlib.import_module("analysis.contamination.a3_placebo")   # the package names its function so
    rng = np.random.default_rng(3)
    n, m = 150, 9
    y = rng.binomial(10, rng.uniform(0.1, 0.9, (n, m))) / 10
    dates = np.sort(rng.integers(0, 60, n))                   # contests of 0 to several items
    pre = np.stack([dates < 20, dates < 28], axis=1)          # two trials
    post = np.stack([dates >= 26, dates >= 34], axis=1)
    owners = np.array([2, 5, 6])
    targets = np.tile(np.arange(m), len(owners))
    masks = np.ones((len(targets), m), dtype=bool)
    masks[np.arange(len(targets)), np.repeat(owners, m)] = False
    masks[np.arange(len(targets)), targets] = False
    for clusters in (dates, np.arange(n)):
        core = a3_core(y, pre, post, clusters, targets, masks)
        fast = placebo._contest_core(y, pre, post, clusters, owners)
        for key in ("effect", "se"):
            np.testing.assert_allclose(fast[key].reshape(2, -1), core[key], rtol=1e-9, atol=1e-13)
        assert np.array_equal(fast["above_range"].reshape(2, -1), core["above_range"])
    matrix = pd.DataFrame(y, columns=[f"c{j}" for j in range(m)])
    when = pd.Series(pd.Timestamp("2024-01-01") + pd.to_timedelta(10 * dates, unit="D"))
    fakes = np.array(["2024-08-01", "2024-10-01"], dtype="datetime64[ns]")
    th = Thresholds(a3_min_items=20)
    whole = placebo._a3_placebo_frame(matrix, when, list(matrix.columns), fakes, th)
    monkeypatch.setattr(placebo, "PLACEBO_BLOCK", 2 * m * m)      # one trial and two tested models a block
    blocks = placebo._a3_placebo_frame(matrix, when, list(matrix.columns), fakes, th)
    assert np.isfinite(whole["p_value"]).sum() > m
    for key in whole:
        np.testing.assert_allclose(blocks[key], whole[key], rtol=1e-12, atol=1e-15)


def test_reference_placebo_p_by_hand():
    p, sigma, r = reference_placebo_p(np.array(3.0), np.array([1.5, -1.5, 3.0, 0.0]))
    s = math.sqrt((2.25 + 2.25 + 9.0 + 0.0) / 4)
    assert float(sigma) == pytest.approx(s) and int(r) == 4
    assert float(p) == pytest.approx(stats.t.sf(3.0 / s, 4))
    p, sigma, _ = reference_placebo_p(np.array(3.0), np.array([0.1, -0.2, 0.3]))   # scale never below 1
    assert float(p) == pytest.approx(stats.t.sf(3.0, 3))


def test_did_test_hand_computation():
    y_pre, y_post = np.array([1.0, 0.5, 0.8]), np.array([0.2, 0.4, 0.0])
    a_pre, a_post = np.array([0.6, 0.4, 0.5]), np.array([0.3, 0.5, 0.1])
    r = did_test(y_pre, y_post, a_pre, a_post)
    # G_m = 23/30 - 0.2, G_ref = 0.5 - 0.3, E = 11/30; u_pre = .4, .1, .3 (var .07/3), u_post = -.1 x3 (var 0)
    assert r["effect"] == pytest.approx(11 / 30)
    assert r["se"] == pytest.approx(math.sqrt(0.07) / 3)
    assert r["method"] == "two_proportion_z_item_clustered"
    assert r["p_value"] == pytest.approx(stats.norm.sf((11 / 30) / (math.sqrt(0.07) / 3)))
    # effective counts: V_bin = (23/30)(7/30)/3 + 0.4*0.6/3; deff = SE^2 / V_bin
    v_bin = (23 / 30) * (7 / 30) / 3 + 0.4 * 0.6 / 3
    assert r["design_effect"] == pytest.approx((0.07 / 9) / v_bin)
    assert r["n_eff_pre"] == pytest.approx(3 / r["design_effect"])


def test_did_test_uses_fisher_when_cells_are_small():
    y_pre = np.r_[np.full(6, 0.6), np.zeros(54)]     # mean 0.06
    y_post = np.zeros(60)
    zeros = np.zeros(60)
    r = did_test(y_pre, y_post, zeros, zeros)
    # var(y_pre) = (6*.36 - 60*.06^2)/59; deff = var/60 / (.06*.94/60); n_eff = 60/deff = 102.7
    deff = ((6 * 0.36 - 60 * 0.0036) / 59) / (0.06 * 0.94)
    assert r["design_effect"] == pytest.approx(deff)
    assert r["method"] == "fisher_exact_effective_counts"
    assert r["table"] == [[6, 97], [0, 103]]
    assert r["p_value"] == pytest.approx(stats.fisher_exact([[6, 97], [0, 103]], alternative="greater").pvalue)
    assert r["p_value"] < 0.05


# --- A3 on seeded synthetic data ----------------------------------------------------------------

@pytest.mark.slow   # Monte Carlo / placebo study: seconds of CPU (fast lane: -m 'not slow')
def test_a3_power_and_null_rate_on_seeded_synthetic_data():
    """test0 is contaminated (0.5 logit on pre items); test1..5 are null models."""
    hits, null_tests, null_flags, null_p05, effects = 0, 0, 0, 0, []
    # 100 seeds (~440 null tests; binomial): a power fallen to 0.70 fails the 0.78 floor with
    # probability 0.95, a null P(p<.05) of 0.08 fails the 0.06 ceiling with 0.95 (200 seeds: 0.99 each)
    seeds = 100
    for seed in range(seeds):
        items, cut = synth_items(seed, boost={0: 0.5})
        res = run_signals(None, items, cut, None, None, rng=np.random.default_rng(seed), now=NOW)
        # a model stronger than every clean reference is not tested (its comparison would extrapolate):
        # an untested planted model counts as a miss
        assert set(res["signal"]) == {"A3"} and 1 <= len(res) <= 6
        if (res["model"] == "test0").any():
            planted = res[res["model"] == "test0"].iloc[0]
            hits += bool(planted["flagged"])
            effects.append(planted["effect"])
        null = res[res["model"] != "test0"]
        null_tests += len(null)
        null_flags += int(null["flagged"].sum())
        null_p05 += int((null["p_value"] < 0.05).sum())
    power = hits / seeds
    print(f"A3 power {power:.3f} at mean excess {np.mean(effects):.3f}; null flag rate "
          f"{null_flags / null_tests:.4f}, P(p<.05|null) {null_p05 / null_tests:.3f} over {null_tests} tests")
    assert np.mean(effects) == pytest.approx(0.09, abs=0.02)
    assert power >= 0.78
    assert null_flags / null_tests <= 0.05
    assert null_p05 / null_tests <= 0.06       # p-values calibrated despite difficulty drift


def test_a3_null_without_planting_and_floors():
    items, cut = synth_items(7, n_items=120)       # ~32 pre items < 50: nobody testable
    assert run_signals(None, items, cut, None, None, rng=np.random.default_rng(0), now=NOW).empty
    items, cut = synth_items(7)
    res = run_signals(None, items, cut, None, None, rng=np.random.default_rng(0), now=NOW)
    assert not res["flagged"].any()
    ev = res["evidence"].iloc[0]
    json.dumps(ev)                                   # JSON-serializable
    assert ev["n_pre"] >= 50 and ev["n_post"] >= 50
    assert sorted(ev["reference_models"]) == [f"clean{i}" for i in range(8)]
    assert ev["label"] == "suspect, not a verdict"


def test_a3_does_not_test_a_model_stronger_than_every_reference():
    """Issue 50: GPT-4o (2024-05-13) was stronger than every clean reference (`ability_clamped`,
    one reference weighted -0.23) and flagged at +16 pp by a matched gap extrapolated beyond the
    references. Such a model is not tested; it is listed with the reason. A model weaker than every
    reference is still tested, and its evidence says the comparison is at the references' edge."""
    from analysis.contamination.a3 import ABOVE_RANGE_REASON
    items, cut = synth_items(7)
    clean = items[items["model"].str.startswith("clean")]
    best = clean.groupby("model")["score"].mean().idxmax()
    worst = clean.groupby("model")["score"].mean().idxmin()
    strong = clean[clean["model"] == best].assign(model="strong")
    strong["score"] = np.minimum(1.0, strong["score"] + 0.15 + 0.15 * (strong["item_date"] <= TEST_CUT))
    weak = clean[clean["model"] == worst].assign(model="weak")
    weak["score"] = np.maximum(0.0, weak["score"] * 0.5)
    claims = pd.DataFrame({"model": sorted(set(items["model"])) + ["strong", "weak"], "release_date": pd.NaT,
                           "knowledge_cutoff": [CLEAN_CUT if m.startswith("clean") else TEST_CUT
                                                for m in sorted(set(items["model"]))] + [TEST_CUT, TEST_CUT],
                           "provenance": "vendor_doc", "source": "synthetic"})
    res = run_signals(None, pd.concat([items, strong, weak], ignore_index=True), resolve_model_dates(claims), None,
                      None, rng=np.random.default_rng(0), now=NOW)
    assert "strong" not in set(res["model"])
    skipped = res.attrs["skipped"].set_index("model")
    assert skipped.at["strong", "reason"] == ABOVE_RANGE_REASON and skipped.at["strong", "signal"] == "A3"
    ev = res.set_index("model").at["weak", "evidence"]
    assert ev["ability_clamped"] and ev["ability_side"] == "below"


def test_calibrate_on_synthetic_null_data():
    items, cut = synth_items(3)
    out = calibrate(None, items, cut, None, rng=np.random.default_rng(3), now=NOW, trials=40).set_index("signal")
    a3 = out.loc["A3"]
    # every clean model in every trial, but the strongest at a cutoff (above the others: untestable)
    assert 40 * 7 <= a3["tests"] < 40 * 8 and a3["ok"]
    assert a3["p05_lo"] <= 0.05 and a3["fw_bh_lo"] <= 0.05
    assert out.loc["A1", "tests"] == 0 and out.loc["A1", "ok"] is None


@pytest.mark.slow   # Monte Carlo / placebo study: seconds of CPU (fast lane: -m 'not slow')
def test_calibrate_fails_the_former_item_level_test_and_passes_the_new_one():
    """Contest-level dependence (4 items per contest, a 0.6-logit model × contest effect): the
    former item-independent A3 test is anti-conservative and `calibrate` must say so; the
    contest-clustered, reference-scaled test must pass on the very same placebo draws."""
    items, cut = synth_items(11, n_items=480, n_clean=12, n_test=0, contest_size=4, contest_sd=0.6)
    old = calibrate(None, items, cut, None, rng=np.random.default_rng(0), now=NOW, trials=60,
                    th=Thresholds(a3_null="item_normal")).set_index("signal").loc["A3"]
    new = calibrate(None, items, cut, None, rng=np.random.default_rng(0), now=NOW, trials=60).set_index("signal").loc["A3"]
    print(f"item_normal: p<.01 {old['p01']:.3f} p<.05 {old['p05']:.3f} fw {old['fw_bh']:.2f}; "
          f"new: p<.01 {new['p01']:.3f} p<.05 {new['p05']:.3f} fw {new['fw_bh']:.2f}")
    assert not old["ok"] and old["p05_lo"] > 0.05
    assert new["ok"] and new["p05"] <= 0.06 and new["fw_bh"] <= 0.1


def test_summarize_placebo_can_fail_and_has_honest_intervals():
    rng = np.random.default_rng(0)
    trials, per = 200, 10
    base = pd.DataFrame({"trial": np.repeat(np.arange(trials), per), "signal": "A1", "effect": 0.1, "se": 0.01,
                         "gate": True})
    uniform = summarize_placebo(base.assign(p_value=rng.uniform(size=trials * per)), trials).set_index("signal")
    assert uniform.at["A1", "ok"] and uniform.at["A1", "p05_lo"] <= 0.05 <= uniform.at["A1", "p05_hi"]
    assert uniform.at["A2", "ok"] is None
    skewed = summarize_placebo(base.assign(p_value=rng.uniform(size=trials * per) ** 2), trials).set_index("signal")
    assert not skewed.at["A1", "ok"] and skewed.at["A1", "p05_lo"] > 0.05   # P(U² < .05) = 22 %
    # family-wise: BH over 10 uniform p's flags a trial with probability ~ 0.05 (complete null)
    assert uniform.at["A1", "fw_bh_lo"] <= 0.05


def test_placebo_units_are_the_clean_models_and_their_interval_is_honest():
    """A clean model keeps its offset at every fake cutoff: four models whose p-values fall under 0.05
    in 0, 0, 0 and 5 % of 100 cutoffs are four units, not 400 tests. The trial-clustered interval
    (the exit rule's) then misses 3 %; the interval across the models reaches it, as a calibrated
    test's rate on so few models may. Four models each at 15 % fail both (anti-conservative)."""
    from cli.commands.calibrate import render_power
    trials = 100
    frame = pd.DataFrame({"trial": np.tile(np.arange(trials), 4), "signal": "A3", "source": "lcb",
                          "benchmark": "lcb", "model": np.repeat(["a", "b", "c", "d"], trials), "effect": 0.0,
                          "se": 0.03, "gate": True})
    p = np.full(4 * trials, 0.5)
    p[3 * trials:3 * trials + 5] = 0.01                       # model d: 5 of its 100 cutoffs
    lumpy = summarize_placebo(frame.assign(p_value=p), trials, signals=["A3"]).set_index("signal").loc["A3"]
    assert lumpy["units"] == 4 and lumpy["p05"] == pytest.approx(0.0125)
    assert lumpy["p05_hi"] < 0.03 <= lumpy["p05_unit_hi"] and lumpy["p05_unit_lo"] == 0.0
    line = next(x for x in render_power(lumpy.to_frame().T.reset_index(names="signal"), pd.DataFrame())
                if "placebo P(p < 0.05)" in x)
    assert "NOT met (4 clean model(s); across them 1.2% [0.0%," in line and "reaches the target" in line
    p = np.where(np.arange(4 * trials) % trials < 15, 0.01, 0.5)         # every model at 15 %
    bad = summarize_placebo(frame.assign(p_value=p), trials, signals=["A3"]).set_index("signal").loc["A3"]
    assert bad["p05_unit_lo"] > 0.07 and not bad["ok"]
    line = next(x for x in render_power(bad.to_frame().T.reset_index(names="signal"), pd.DataFrame())
                if "placebo P(p < 0.05)" in x)
    assert "misses the target too" in line


def test_bh_is_per_signal_family():
    a3 = [_t(f"x{i}", "A3", "lcb", p=0.004) for i in range(2)]
    noise = [_t(f"y{i}", "A1", "s1", p=0.9) for i in range(72)]
    alone = finalize(a3, None, Thresholds())
    pooled = finalize(a3 + noise, None, Thresholds())
    assert alone["q_value"].tolist() == pytest.approx([0.004, 0.004])
    assert pooled.loc[pooled["signal"] == "A3", "q_value"].tolist() == pytest.approx([0.004, 0.004])
    assert pooled.loc[pooled["signal"] == "A3", "flagged"].all()
    q = family_q_values(a3 + noise)
    assert q[:2] == pytest.approx([0.004, 0.004]) and q[2:] == pytest.approx([0.9] * 72)


# --- A1 and A2 on seeded synthetic data ----------------------------------------------------------

@pytest.mark.slow   # Monte Carlo / placebo study: seconds of CPU (fast lane: -m 'not slow')
def test_a1_power_and_null_rate():
    th = Thresholds(bootstrap_b=300)
    seeds, hits, null_tests, null_flags, null_p = 100, 0, 0, 0, []
    for seed in range(seeds):
        scores, benches = synth_scores(seed, boost={6: 0.15})
        res = run_signals(scores, None, NO_CUTOFFS, benches, None, rng=np.random.default_rng(seed), now=NOW, th=th)
        assert set(res["signal"]) == {"A1"} and len(res) == 12
        hits += bool(res.loc[res["model"] == "m6", "flagged"].iloc[0])
        null = res[res["model"] != "m6"]
        null_tests += len(null)
        null_flags += int(null["flagged"].sum())
        null_p += null["p_value"].tolist()
    null_p = np.array(null_p)
    print(f"A1 power {hits / seeds:.2f} at +15 pp; null flag rate {null_flags / null_tests:.4f}; "
          f"P(p<.05|null) {np.mean(null_p < 0.05):.3f}")
    # measured: power 0.56 (the bootstrap-only test: 0.98, at the price of anti-conservative p on
    # real data); P(p < .05 | null) must not exceed nominal — the bootstrap-only p fails this
    assert hits / seeds >= 0.45
    assert null_flags / null_tests <= 0.05
    assert np.mean(null_p < 0.05) <= 0.06


def test_a1_evidence_and_floor():
    scores, benches = synth_scores(1, boost={6: 0.2})
    res = run_signals(scores, None, NO_CUTOFFS, benches, None, rng=np.random.default_rng(1), now=NOW,
                      th=Thresholds(bootstrap_b=200)).set_index("model")
    ev = res.loc["m6", "evidence"]
    assert res.loc["m6", "flagged"] and res.loc["m6", "status"] == "suspect"
    assert ev["n_reference_models"] == 11 and "m6" not in ev["reference_models"]
    assert ev["link"] == "logit_linear" and ev["bootstrap_b"] == 200
    assert ev["score"] - ev["predicted"] == pytest.approx(res.loc["m6", "effect"])
    json.dumps(ev)
    few, benches = synth_scores(1, n_models=8)        # 7 reference models < 8: no test
    assert run_signals(few, None, NO_CUTOFFS, benches, None, rng=np.random.default_rng(1), now=NOW).empty


def test_a1_isotonic_link_with_many_reference_models():
    scores, benches = synth_scores(4, n_models=18, boost={9: 0.2})
    res = run_signals(scores, None, NO_CUTOFFS, benches, None, rng=np.random.default_rng(4), now=NOW,
                      th=Thresholds(bootstrap_b=200)).set_index("model")
    assert res.loc["m9", "evidence"]["link"] == "isotonic"
    assert res.loc["m9", "flagged"]
    assert res.drop(index="m9")["flagged"].sum() == 0


@pytest.mark.slow   # Monte Carlo / placebo study: seconds of CPU (fast lane: -m 'not slow')
def test_post_cutoff_pairs_are_not_tested_but_are_the_placebo_set():
    scores, benches = synth_scores(5)
    benches = benches.assign(material_date=pd.Timestamp("2024-06-01"))
    claims = pd.DataFrame({"model": [f"m{i}" for i in range(12)], "release_date": pd.NaT,
                           "knowledge_cutoff": pd.Timestamp("2023-01-01"), "provenance": "vendor_doc", "source": "t"})
    cut = resolve_model_dates(claims)
    res = run_signals(scores, None, cut, benches, None, rng=np.random.default_rng(5), now=NOW,
                      th=Thresholds(bootstrap_b=200))
    assert res.empty                                  # 'target' is post-cutoff for every model
    out = calibrate(scores, None, cut, benches, rng=np.random.default_rng(5), now=NOW, trials=30,
                    bootstrap_b=200).set_index("signal")
    # leave-one-reference-out placebos: one A1 model and one A2 pair per trial
    assert out.at["A1", "tests"] == 30 and out.at["A2", "tests"] == 30
    assert out.at["A1", "ok"] and out.at["A2", "ok"]


@pytest.mark.slow   # Monte Carlo / placebo study: seconds of CPU (fast lane: -m 'not slow')
def test_a1_and_a2_prepare_nothing_without_a_scored_reference_benchmark(monkeypatch):
    """A1/A2 test a benchmark against its reference benchmarks: when no scored benchmark has a
    scored reference, nothing can be tested and nothing is prepared (SignalInputs.can_link);
    with one reference scored, the tests are those of before."""
    import analysis.contamination.base as base
    from analysis.contamination import SIGNALS
    from analysis.contamination.base import SignalInputs
    scores, benches = synth_scores(3)
    link = [s for s in SIGNALS if s.name in ("A1", "A2")]

    def inputs(frame):
        return SignalInputs(scores=frame, items=None, cutoffs=NO_CUTOFFS, benchmarks=benches, now=NOW,
                            rng=np.random.default_rng(0))

    one_ref = inputs(scores[scores["benchmark"] != "ref2"])
    assert one_ref.can_link and len(link[0].tests(one_ref, Thresholds())) == 12
    no_ref = inputs(scores[~scores["benchmark"].isin(["ref1", "ref2"])])
    monkeypatch.setattr(base, "prepare", lambda *a, **k: pytest.fail("prepared without a reference"))
    assert not no_ref.can_link and [s.tests(no_ref, Thresholds()) for s in link] == [[], []]


@pytest.mark.parametrize("seeds, min_power", [
    pytest.param(12, 0.5, id="12-seeds"),       # fast slice: measured power 0.83, no null flag in 132 tests
    pytest.param(100, 0.65, id="100-seeds",      # the study
                 marks=pytest.mark.slow),        # Monte Carlo (fast lane: the 12-seed slice above)
])
def test_a2_predecessor_power_and_null_rate(seeds, min_power):
    th = Thresholds()
    preds = pd.DataFrame({"model": [f"m{i + 1}" for i in range(13)], "predecessor": [f"m{i}" for i in range(13)]})
    hits, null_tests, null_flags, null_p = 0, 0, 0, []
    for seed in range(seeds):
        scores, benches = synth_scores(seed, n_models=14, boost={7: 0.20})
        res = finalize(a2_predecessor_tests(scores, benches, preds, th=th), None, th)
        hits += bool(res.loc[res["model"] == "m7", "flagged"].iloc[0])
        null = res[~res["model"].isin(["m7", "m8"])]       # m8's predecessor is the inflated m7
        null_tests += len(null)
        null_flags += int(null["flagged"].sum())
        null_p += null["p_value"].tolist()
    null_p = np.array(null_p)
    print(f"A2 power {hits / seeds:.2f} at +20 pp; null flag rate {null_flags / null_tests:.4f}; "
          f"P(p<.05|null) {np.mean(null_p < 0.05):.3f}")
    # measured: power 0.75 over 100 seeds (0.95 with σ_f alone, which real-data placebos show
    # anti-conservative); P(p<.05|null) 0.001
    assert hits / seeds >= min_power
    assert null_flags / null_tests <= 0.05
    assert np.mean(null_p < 0.05) <= 0.06


def test_a2_snapshot_jump():
    scores, benches = synth_scores(2)
    history_old = scores.assign(snapshot_id=1, observed_at=pd.Timestamp("2024-01-01"))
    bumped = scores.copy()
    hit = (bumped["model"] == "m5") & (bumped["benchmark"] == "target")
    bumped.loc[hit, "score"] = bumped.loc[hit, "score"] + 0.25   # re-scored, references unchanged
    history = pd.concat([history_old, bumped.assign(snapshot_id=2, observed_at=pd.Timestamp("2024-02-01"))])
    tests = a2_snapshot_tests(history, bumped, benches)
    assert [(t.model, t.benchmark) for t in tests] == [("m5", "target")]
    t = tests[0]
    assert t.evidence["raw_jump"] == pytest.approx(0.25)
    assert t.evidence["expected_jump"] == pytest.approx(0.0)   # same reference scores: Δ̂ = 0
    assert t.evidence["snapshot_old"] == 1 and t.evidence["snapshot_new"] == 2
    assert finalize(tests, None, Thresholds())["flagged"].iloc[0]


# --- statuses ------------------------------------------------------------------------------------

def _t(model, signal, source, snaps=(1,), effect=0.2, p=1e-6):
    return SignalTest(model, "b", source, signal, effect, 0.02, p, 0.16, 0.24, snapshot_ids=snaps)


def test_status_corroborated_persisted_suspect():
    th = Thresholds()
    tests = [_t("x", "A1", "s1"), _t("x", "A3", "s2"),          # two signals: corroborated
             _t("y", "A1", "s1", snaps=(2,)),                    # flagged before on snapshot 1: persisted
             _t("z", "A1", "s1", snaps=(1,)),                    # flagged before on the same snapshot: suspect
             _t("w", "A1", "s1", effect=0.04),                   # below 5 pp: not flagged
             _t("v", "A1", "s1", p=0.2)]                         # q > 0.05: not flagged
    prev = pd.DataFrame([
        {"model": "y", "benchmark": "b", "signal": "A1", "source": "s1", "status": "suspect",
         "evidence": json.dumps({"snapshot_ids": [1]})},
        {"model": "z", "benchmark": "b", "signal": "A1", "source": "s1", "status": "suspect",
         "evidence": {"snapshot_ids": [1]}},
        {"model": "v", "benchmark": "b", "signal": "A1", "source": "s1", "status": "suspect",
         "evidence": {"snapshot_ids": [0]}},
    ])
    out = finalize(tests, prev, th).set_index(["model", "signal"])["status"]
    # A1 is retired from alerting (RETIRED_SIGNALS): it corroborates nothing, but A3 corroborates it
    assert out[("x", "A1")] == "corroborated" and out[("x", "A3")] == "suspect"
    both = finalize([_t("x", "A2", "s1"), _t("x", "A3", "s2")], None, th).set_index("signal")["status"]
    assert (both == "corroborated").all()
    assert out[("y", "A1")] == "persisted"
    assert out[("z", "A1")] == "suspect"
    assert out[("w", "A1")] == "not_flagged" and out[("v", "A1")] == "not_flagged"
    two_sources = finalize([_t("x", "A2", "epoch"), _t("x", "A2", "simple_evals")], None, th)
    assert (two_sources["status"] == "corroborated").all()


def test_bad_inputs_raise():
    items, cut = synth_items(0)
    with pytest.raises(ValueError, match="proportions"):
        run_signals(None, items.assign(score=items["score"] * 100), cut, None, None,
                    rng=np.random.default_rng(0), now=NOW)
    with pytest.raises(ValueError, match="missing column"):
        run_signals(None, items.drop(columns=["item_date"]), cut, None, None, rng=np.random.default_rng(0), now=NOW)


# --- real data: LiveCodeBench, the DeepSeek finding ------------------------------------------------

DEEPSEEK_FAMILY = {"DSCoder-33b-Ins", "DSCoder-6.7b-Ins", "DSCoder-1.3b-Ins", "DSCoder-33b-Base",
                   "DSCoder-6.7b-Base", "DSCoder-1.3b-Base",
                   "MagiCoderS-DS-6.7B",      # fine-tuned from deepseek-coder-6.7b-base
                   "WCoder-33B-V1.1"}         # WizardCoder-33B-V1.1 is fine-tuned from deepseek-coder-33b-base


def load_lcb(name: str):
    """The site's JSON read directly (no scraper) into the items frame and cutoff claims."""
    data = json.loads((LCB / name).read_text())
    perf = pd.DataFrame(data["performances"])
    items = pd.DataFrame({"source": "livecodebench", "benchmark": "livecodebench", "model": perf["model"],
                          "item_id": perf["question_id"].astype(str),
                          "item_date": pd.to_datetime(perf["date"], unit="ms"), "difficulty": perf["difficulty"],
                          "platform": perf["platform"], "score": perf["pass@1"].astype(float) / 100.0})
    models = pd.DataFrame(data["models"])
    claims = pd.DataFrame({"model": models["model_repr"], "release_date": pd.NaT,
                           "knowledge_cutoff": pd.to_datetime(models["release_date"], unit="ms"),
                           "provenance": "leaderboard", "source": "livecodebench"})
    return items, resolve_model_dates(claims), models


@needs(LCB / "livecodebench_generation_2024-03-17.json")
def test_livecodebench_2024_03_17_deepseek_flagged_gpt_claude_not():
    items, cut, models = load_lcb("livecodebench_generation_2024-03-17.json")
    res = run_signals(None, items, cut, None, None, rng=np.random.default_rng(0),
                      now=pd.Timestamp("2024-03-17")).set_index("model")
    # Testable models: those with >= 50 items on both sides, i.e. the 2023-08-30 cutoff group.
    # Claude-3-Opus is stronger than every clean reference: not tested (issue 50), listed with the reason
    assert set(res.index) == DEEPSEEK_FAMILY | {"Claude-3-Sonnet"}
    from analysis.contamination.a3 import ABOVE_RANGE_REASON
    assert res.attrs["skipped"].set_index("model").at["Claude-3-Opus", "reason"] == ABOVE_RANGE_REASON
    flagged = set(res.index[res["flagged"]])
    # the strongest DeepSeek-derived models are flagged; nothing outside the family is
    assert {"DSCoder-33b-Ins", "DSCoder-33b-Base", "WCoder-33B-V1.1"} <= flagged <= DEEPSEEK_FAMILY
    for big in ("DSCoder-33b-Ins", "DSCoder-33b-Base", "WCoder-33B-V1.1"):
        assert res.at[big, "effect"] > 0.15 and res.at[big, "q_value"] < 0.05
        assert res.at[big, "ci_low"] > 0
    for clean in ("Claude-3-Sonnet",):
        assert not res.at[clean, "flagged"] and res.at[clean, "q_value"] > 0.1
    ev = res.at["DSCoder-33b-Ins", "evidence"]
    assert ev["n_pre"] == 127 and ev["n_post"] == 202
    # references: trusted cutoffs only. The 2023-01-01 date LiveCodeBench gives 13 models (StarCoder2
    # and Mistral-Large were released 2024-02) is a placeholder and never makes a model clean.
    placeholders = set(cut.loc[cut["cutoff_trust"] == "placeholder", "model"])
    assert {"StarCoder2-15b", "Mistral-Large"} <= placeholders
    assert not placeholders & set(ev["reference_models"])
    assert len(ev["reference_models"]) == 5 and ev["method"] == "reference_variance"
    assert len(ev["placebo_z"]) == 5 and ev["null_scale"] >= 1.0
    # the between-model SD from the references' placebo effects: SE_total² = SE_clustered² + τ̂²
    assert ev["se"] ** 2 == pytest.approx(ev["se_clustered"] ** 2 + ev["between_model_sd"] ** 2)
    for gpt in ("GPT-4-0613", "GPT-3.5-Turbo-0301", "GPT-3.5-Turbo-0125"):
        assert abs(ev["reference_gaps"][gpt]) < 0.035
    assert "GPT-4-Turbo-1106" not in ev["reference_models"]     # cutoff 2023-04-30 + 30 d > first pre item


@needs(LCB / "livecodebench_generation_2024-02-26.json")
def test_livecodebench_2024_02_26_and_placebo():
    items, cut, _ = load_lcb("livecodebench_generation_2024-02-26.json")
    res = run_signals(None, items, cut, None, None, rng=np.random.default_rng(0),
                      now=pd.Timestamp("2024-02-26")).set_index("model")
    flagged = set(res.index[res["flagged"]])
    assert "DSCoder-33b-Ins" in flagged and flagged <= DEEPSEEK_FAMILY
    # the 1.3B instruct model: excess ~5 pp, well inside its CI -> not flagged
    assert not res.at["DSCoder-1.3b-Ins", "flagged"] and res.at["DSCoder-1.3b-Ins", "ci_low"] < 0
    out = calibrate(None, items, cut, None, rng=np.random.default_rng(1), now=pd.Timestamp("2024-02-26"),
                    trials=100).set_index("signal")
    a3 = out.loc["A3"]
    assert a3["tests"] > 0 and a3["ok"]
    assert a3["p01_lo"] <= 0.01 and a3["p05_lo"] <= 0.05 and a3["fw_bh_lo"] <= 0.05


@pytest.mark.slow   # Monte Carlo / placebo study: seconds of CPU (fast lane: -m 'not slow')
@needs(LCB / "livecodebench_generation_2024-03-17.json")
def test_livecodebench_placebo_old_test_fails_new_test_passes():
    """Fake cutoffs on the clean models of the 2024-03-17 snapshot. The former test (placeholder-dated
    references, items independent) gave P(p < .01) = 4.8 % and a BH flag in 49 % of trials; with
    trusted references only, the item-independent test is still ~nominal here, and the
    reference-scaled one must stay at or under nominal."""
    items, cut, _ = load_lcb("livecodebench_generation_2024-03-17.json")
    now = pd.Timestamp("2024-03-17")
    as_before = cut.assign(cutoff_trust="stated")           # placeholders treated as real dates, as before
    old = calibrate(None, items, as_before, None, rng=np.random.default_rng(1), now=now, trials=100,
                    th=Thresholds(a3_null="item_normal")).set_index("signal").loc["A3"]
    assert not old["ok"] and old["fw_bh_lo"] > 0.05
    new = calibrate(None, items, cut, None, rng=np.random.default_rng(1), now=now, trials=100).set_index("signal").loc["A3"]
    assert new["ok"] and new["p05"] <= 0.05 and new["fw_bh"] <= 0.05


# --- suspicions: unchanged data hold, q-only moves, the first-notification rule, resolution ------------

def _prev_rows(results: pd.DataFrame, run_id: str = "r1") -> pd.DataFrame:
    """A run's output as storage.contamination.read_previous_flags returns it."""
    return results.assign(run_id=run_id)


def test_unchanged_data_keep_their_stored_p_effect_and_flag_and_only_q_moves():
    from analysis.contamination.suspicions import advance_suspicions
    th = Thresholds()
    first = finalize([_t("x", "A3", "lcb", snaps=(7,), p=0.004), _t("y", "A3", "lcb", snaps=(7,), p=0.3)], None, th)
    assert first.set_index("model").at["x", "q_value"] == pytest.approx(0.008)
    assert first.set_index("model")["flagged"].to_dict() == {"x": True, "y": False}
    # the same data recomputed differently (say, a reference's cutoff moved) and a family that grew: other
    # sources' tests joined A3 with mid-sized p. x's numbers are the stored ones, its q moves above 0.05 and
    # it stays flagged; y stays unflagged although its recomputed p would now flag it.
    joined = [_t(f"z{i}", "A3", "other", snaps=(9,), p=0.2) for i in range(20)]
    second = finalize([_t("x", "A3", "lcb", snaps=(7,), effect=0.03, p=0.2),
                       _t("y", "A3", "lcb", snaps=(7,), p=1e-6)] + joined, _prev_rows(first), th).set_index("model")
    assert second.at["x", "p_value"] == 0.004 and second.at["x", "effect"] == 0.2
    assert second.at["x", "q_value"] > th.fdr_q and second.at["x", "flagged"]
    assert second.at["x", "evidence"]["held"]["from_run"] == "r1"
    assert second.at["y", "p_value"] == 0.3 and not second.at["y", "flagged"]
    # the suspicion holds, its state shows the new q
    states = advance_suspicions(first, None, run_id="r1", run_at=pd.Timestamp("2024-03-18"),
                                current_data={("lcb", "b"): {7}}, snapshot_dates={7: pd.Timestamp("2024-03-17")})
    after = advance_suspicions(second.reset_index(), states, run_id="r2", run_at=pd.Timestamp("2024-03-20"),
                               current_data={("lcb", "b"): {7}, ("other", "b"): {9}}, snapshot_dates={})
    x = after.set_index("model").loc["x"]
    assert x["state"] == "confirmed" and x["confirmed_by"] == "strong_q"       # q 0.008 <= 0.01 at once
    assert x["q_value"] == pytest.approx(second.at["x", "q_value"]) and x["p_value"] == 0.004
    assert x["distinct_data"] == 1 and x["resolved_at"] is None
    # new thresholds are a new computation: nothing is held
    other_th = Thresholds(min_effect=0.04)
    third = finalize([_t("x", "A3", "lcb", snaps=(7,), effect=0.03, p=0.2)], _prev_rows(first), other_th)
    assert third.at[0, "p_value"] == 0.2 and not third.at[0, "flagged"]


def test_suspicion_first_notification_rule_and_resolution_only_on_new_data():
    from analysis.contamination.suspicions import advance_suspicions, by_key, confirmation
    th = Thresholds()
    assert confirmation(1, 0.03, "suspect") is None
    assert confirmation(1, 0.01, "suspect") == "strong_q"
    assert confirmation(1, 0.04, "corroborated") == "corroborated"
    assert confirmation(2, 0.04, "persisted") == "distinct_data"
    dates = {7: pd.Timestamp("2024-03-17"), 8: pd.Timestamp("2024-06-20"), 9: pd.Timestamp("2024-06-21")}

    def run(tests, previous, states, run_id, day, data):
        res = finalize(tests, previous, th, suspicions=None if states is None else by_key(states))
        return res, advance_suspicions(res, states, run_id=run_id, run_at=pd.Timestamp(day), current_data=data,
                                       snapshot_dates=dates)

    # flagged at q 0.02 (with 3 null tests): pending
    nulls = [_t(f"n{i}", "A3", "lcb", snaps=(7,), p=0.6) for i in range(3)]
    r1, s1 = run([_t("x", "A3", "lcb", snaps=(7,), p=0.005)] + nulls, None, None, "r1", "2024-03-18",
                 {("lcb", "b"): {7}})
    assert r1.set_index("model").at["x", "q_value"] == pytest.approx(0.02)
    assert s1.set_index("model").at["x", "state"] == "pending"
    # another source's new snapshot: x's data unchanged, not a second data version, still pending
    r2, s2 = run([_t("x", "A3", "lcb", snaps=(7,), p=0.005)] + nulls, _prev_rows(r1), s1, "r2", "2024-03-20",
                 {("lcb", "b"): {7}, ("epoch", "b"): {9}})
    assert s2.set_index("model").at["x", "state"] == "pending" and s2.set_index("model").at["x", "distinct_data"] == 1
    # new LiveCodeBench data still flag it: two data versions, confirmed
    nulls8 = [_t(f"n{i}", "A3", "lcb", snaps=(8,), p=0.6) for i in range(3)]
    r3, s3 = run([_t("x", "A3", "lcb", snaps=(8,), p=0.006)] + nulls8, _prev_rows(r2, "r2"), s2, "r3",
                 "2024-06-21", {("lcb", "b"): {8}})
    x3 = s3.set_index("model").loc["x"]
    assert (x3["state"], x3["confirmed_by"], x3["distinct_data"]) == ("confirmed", "distinct_data", 2)
    assert r3.set_index("model").at["x", "status"] == "persisted"
    assert x3["snapshot_ids"] == [8] and x3["data_as_of"] == dates[8]
    # a test that disappears while its pair's data are unchanged holds; with new data for the pair it resolves
    _, s4 = run(nulls8, _prev_rows(r3, "r3"), s3, "r4", "2024-06-22", {("lcb", "b"): {8}})
    assert s4.set_index("model").at["x", "state"] == "confirmed"
    # new data that no longer flag it: resolved, naming the data
    nulls9 = [_t(f"n{i}", "A3", "lcb", snaps=(9,), p=0.6) for i in range(3)]
    r5, s5 = run([_t("x", "A3", "lcb", snaps=(9,), p=0.4, effect=0.01)] + nulls9, _prev_rows(r3, "r3"), s4, "r5",
                 "2024-06-23", {("lcb", "b"): {9}})
    x5 = s5.set_index("model").loc["x"]
    assert x5["state"] == "resolved" and x5["resolved_snapshot_ids"] == [9]
    assert x5["resolved_data_as_of"] == dates[9] and x5["resolution"]["p_value"] == 0.4
    assert x5["resolved_at"] == pd.Timestamp("2024-06-23")
    # flagged again later: a new episode, pending again
    _, s6 = run([_t("x", "A3", "lcb", snaps=(10,), p=0.005)] + nulls, None, s5, "r6", "2024-07-01",
                {("lcb", "b"): {10}})
    x6 = s6.set_index("model").loc["x"]
    assert (x6["state"], x6["distinct_data"], x6["resolved_at"]) == ("pending", 1, None)


def test_new_snapshots_of_unchanged_evidence_neither_confirm_resolve_nor_refire():
    """Issue 50: three models were confirmed "flagged on two analyses of distinct data" at q 0.039
    when their item results and their references' were identical in both snapshots (the new file
    only added two other models); DSCoder-6.7b-Ins resolved and fired again on identical results.
    Evidence is the content of a test's inputs (`data_hash`), not the snapshot that carried it."""
    from analysis.contamination.suspicions import advance_suspicions, by_key
    th = Thresholds()
    dates = {i: pd.Timestamp(f"2024-03-{10 + i}") for i in range(1, 9)}

    def t(snap, p, h, effect=0.2):
        x = _t("x", "A3", "lcb", snaps=(snap,), p=p, effect=effect)
        x.evidence["data_hash"] = h
        return x

    def run(tests, previous, states, run_id, snap):
        res = finalize(tests, previous, th, suspicions=None if states is None else by_key(states))
        return res, advance_suspicions(res, states, run_id=run_id, run_at=dates[snap], current_data={("lcb", "b"): {snap}},
                                       snapshot_dates=dates)

    def nulls(snap, k=3):
        return [_t(f"n{i}", "A3", "lcb", snaps=(snap,), p=0.6) for i in range(k)]

    r1, s1 = run([t(1, 0.01, "A")] + nulls(1), None, None, "r1", 1)          # q 0.04: pending
    assert s1.set_index("model").at["x", "state"] == "pending"
    # a new snapshot, the same rows for x and its references (another model was added): same evidence
    r2, s2 = run([t(2, 0.01, "A")] + nulls(2, 4), _prev_rows(r1), s1, "r2", 2)
    x2 = s2.set_index("model").loc["x"]
    assert (x2["state"], x2["distinct_data"]) == ("pending", 1)
    assert r2.set_index("model").at["x", "status"] == "suspect"
    # the same evidence no longer flagged (q moved past 0.05 with the family): the suspicion holds
    # (no stored test to hold: recomputed, as after a change of another model's date)
    r3, s3 = run([t(3, 0.01, "A")] + nulls(3, 9), None, s2, "r3", 3)
    assert not r3.set_index("model").at["x", "flagged"]
    assert s3.set_index("model").at["x", "state"] == "pending"
    # new results of x: a second version of the evidence, confirmed
    r4, s4 = run([t(4, 0.01, "B")] + nulls(4), _prev_rows(r3, "r3"), s3, "r4", 4)
    x4 = s4.set_index("model").loc["x"]
    assert (x4["state"], x4["confirmed_by"], x4["distinct_data"]) == ("confirmed", "distinct_data", 2)
    # new evidence that does not flag: resolved; the same evidence re-published and flagged again
    # (q back under 0.05 with a smaller family) does not fire again
    r5, s5 = run([t(5, 0.4, "C", effect=0.01)] + nulls(5), _prev_rows(r4, "r4"), s4, "r5", 5)
    assert s5.set_index("model").at["x", "state"] == "resolved"
    r6, s6 = run([t(6, 0.01, "C")] + nulls(6, 1), None, s5, "r6", 6)
    assert r6.set_index("model").at["x", "flagged"]
    x6 = s6.set_index("model").loc["x"]
    assert x6["state"] == "resolved" and x6["resolved_snapshot_ids"] == [5]
    # new evidence that flags: a new episode
    _, s7 = run([t(7, 0.01, "D")] + nulls(7, 1), _prev_rows(r6, "r6"), s6, "r7", 7)
    assert s7.set_index("model").at["x", "state"] == "pending"


# --- A3's test: an independent brute force, the null it claims, the power it promises --------------------

def test_a3_p_value_matches_an_independent_brute_force():
    """a3_one's p recomputed with loops and pandas only: the ability-matched reference per item, the
    contest-clustered variance per window by groupby, each reference's placebo effect against the
    others, τ̂² = max(0, mean(E_r² − SE_r²)), p = Φ(−E / √(SE² + τ̂²))."""
    from analysis.contamination import a3_one
    items, cut = synth_items(4, n_items=300, n_clean=7, n_test=1, boost={0: 0.4}, contest_size=3, contest_sd=0.3)
    matrix = items.pivot(index="item_id", columns="model", values="score")
    dates = items.groupby("item_id")["item_date"].min().reindex(matrix.index)
    c = cut.set_index("model")
    refs = cut.set_index("model")["c_hi"]
    res, why = a3_one(matrix, dates, "test0", c.at["test0", "c_lo"], c.at["test0", "c_hi"], refs, th=Thresholds())
    assert res is not None, why
    g = pd.Timedelta(days=30)
    pre = (dates <= c.at["test0", "c_lo"] - g).to_numpy()
    post = (dates > c.at["test0", "c_hi"] + g).to_numpy()
    clean = res["reference_models"]

    def did(target, others):
        y = matrix[target].to_numpy()
        ab = lambda m: math.log(matrix.loc[post, m].mean() / (1 - matrix.loc[post, m].mean()))   # noqa: E731
        w, _ = ability_weights(np.array([ab(m) for m in others]), ab(target))
        u = pd.Series(y - matrix[others].to_numpy() @ w, index=matrix.index)
        var = 0.0
        for win in (pre, post):
            dev = u[win] - u[win].mean()
            sums = dev.groupby(dates[win].to_numpy()).sum()
            var += (sums ** 2).sum() / win.sum() ** 2 * len(sums) / (len(sums) - 1)
        return u[pre].mean() - u[post].mean(), math.sqrt(var)

    e, se = did("test0", clean)
    placebo = [did(r, [o for o in clean if o != r]) for r in clean]
    tau2 = max(0.0, sum(er ** 2 - ser ** 2 for er, ser in placebo) / len(placebo))
    assert res["effect"] == pytest.approx(e) and res["se_clustered"] == pytest.approx(se)
    assert res["se"] == pytest.approx(math.sqrt(se ** 2 + tau2))
    assert res["p_value"] == pytest.approx(stats.norm.sf(e / math.sqrt(se ** 2 + tau2)))
    assert res["between_model_sd"] == pytest.approx(math.sqrt(tau2))


def a3_placebo_rates(seeds, trials: int, **synth) -> tuple[float, float, int]:
    """P(p < .05), P(p < .01) and the number of A3 placebo tests over several seeded datasets (each
    dataset's rate is lumpy: its clean models keep their offsets; the null is about the average)."""
    from analysis.contamination import a3_placebo
    p = np.concatenate([a3_placebo(*synth_items(100 + s, n_test=0, **synth), rng=np.random.default_rng(s), now=NOW,
                                   trials=trials)["p_value"].to_numpy() for s in seeds])
    return float((p < 0.05).mean()), float((p < 0.01).mean()), len(p)


def test_a3_null_rate_on_seeded_data_is_near_nominal_from_both_sides():
    """Placebos on seeded data with difficulty drift: the share of p < 0.05 must be near 5 % from both
    sides (a conservative test fails the lower bound as surely as an anti-conservative one the upper).
    Fast slice: 6 datasets; the slow repeat below has 30 (measured 5.2 % and 1.1 %; issue 10's test
    gave 3.3 % and 0.1 %)."""
    p05, p01, n = a3_placebo_rates(range(6), 10)
    print(f"A3 seeded placebo, {n} tests: P(p<.05) {p05:.3f}, P(p<.01) {p01:.3f}")
    assert 0.01 <= p05 <= 0.10 and p01 <= 0.03


@pytest.mark.slow   # Monte Carlo: 30 datasets x 2 designs (fast lane: the 6-dataset slice above)
@pytest.mark.parametrize("synth", [{}, {"contest_size": 3, "contest_sd": 0.4, "n_items": 420}],
                         ids=["items", "contests"])
def test_a3_null_rate_over_thirty_seeded_datasets(synth):
    p05, p01, n = a3_placebo_rates(range(30), 10, **synth)
    print(f"A3 seeded placebo {synth}, {n} tests: P(p<.05) {p05:.3f}, P(p<.01) {p01:.3f}")
    assert 0.03 <= p05 <= 0.07 and p01 <= 0.02


@pytest.mark.slow   # Monte Carlo: 40 datasets (the fast lane has the 6-dataset slice above)
def test_a3_placebo_rate_of_one_history_is_lumpy_with_five_clean_models():
    """Issue 50: a history with five clean models (LiveCodeBench's count) gives a placebo of five
    units, whatever its trials. Over 40 seeded histories the test is near nominal pooled (measured
    4.4 %), but one history's P(p < .05) has quartiles 0 %, 2.2 %, 7.2 %: half fall below 2 %. So a
    single history's rate below 3 % is no evidence of a conservative test, and a test meeting 3 % on
    every such history would be anti-conservative (docs/statistics.md, What one history's placebo can say)."""
    from analysis.contamination import a3_placebo
    rates, pooled = [], []
    for s in range(40):
        p = a3_placebo(*synth_items(500 + s, n_test=0, n_clean=5), rng=np.random.default_rng(s), now=NOW,
                       trials=40)["p_value"].to_numpy()
        rates.append((p < 0.05).mean())
        pooled.append(p)
    p05 = float((np.concatenate(pooled) < 0.05).mean())
    q25, q50, q75 = np.quantile(rates, [0.25, 0.5, 0.75])
    print(f"A3 placebo, 40 histories of 5 clean models: pooled P(p<.05) {p05:.3f}; per history quartiles "
          f"{q25:.3f} {q50:.3f} {q75:.3f}; below 2 %: {np.mean(np.array(rates) < 0.02):.2f}")
    assert 0.03 <= p05 <= 0.07
    assert np.mean(np.array(rates) < 0.02) >= 0.25 and np.mean(np.array(rates) > 0.07) >= 0.1


def _lcb_targets(placebo_trials: int, power_trials: int, th: Thresholds = Thresholds()):
    from analysis.contamination import a3_placebo
    from analysis.contamination.a3_power import a3_power
    items, cut, _ = load_lcb("livecodebench_generation_2024-03-17.json")
    now = pd.Timestamp("2024-03-17")
    pl = a3_placebo(items, cut, rng=np.random.default_rng(0), now=now, trials=placebo_trials, th=th)
    power = a3_power(items, cut, rng=np.random.default_rng(0), now=now, trials=power_trials, th=th)
    return pl["p_value"].to_numpy(), power.set_index("planted")


@needs(LCB / "livecodebench_generation_2024-03-17.json")
def test_a3_targets_on_real_livecodebench_items():
    """The targets of issue 19 on the 2024-03-17 LiveCodeBench items (the trusted references of that
    file alone), a small seeded slice: placebo P(p < .01) <= 2 %, and a gain planted in a clean model's
    pre-cutoff items (~127 pre / ~200 post items) found at +10 pp and flagged at +20 pp."""
    p, power = _lcb_targets(60, 40)
    assert (p < 0.01).mean() <= 0.02
    assert 110 <= power.at[0.1, "n_pre"] <= 150 and 170 <= power.at[0.1, "n_post"] <= 230
    assert power.at[0.1, "p05"] >= 0.5 and power.at[0.2, "flag"] >= 0.9
    assert power.at[0.1, "mde_p05"] < 0.10                 # +10 pp is within reach at these sizes


@pytest.mark.slow   # Monte Carlo on real items (fast lane: test_a3_targets_on_real_livecodebench_items)
@needs(LCB / "livecodebench_generation_2024-03-17.json")
@pytest.mark.xfail(strict=True, reason="known limit (issue 50): the placebo's P(p < .05) on this file is 1.3 % "
                   "(0 % [0, 0] P(p < .01); 4 testable clean models, per model 0, 0, 0 and 4.9 %), below the 2 % floor. "
                   "Not a conservative test: averaged over seeded histories it is at 5 %, and one history of 5 clean "
                   "models falls below 2 % half the time (test_a3_placebo_rate_of_one_history_is_lumpy_with_five_"
                   "clean_models); meeting the floor here would need a test anti-conservative for new models. "
                   "Power is met (P(p < .05) 86 % at +10 pp, MDE 8.0 pp). Strict: fails again once the floor is met")
def test_a3_targets_on_real_livecodebench_items_full():
    """400 placebo and 200 power trials: the placebo's P(p < .05) near nominal and P(p < .01) <= 2 %;
    the former test (issue 10) is more conservative and flags a planted +10 pp gain less often."""
    p, power = _lcb_targets(400, 200)
    assert 0.02 <= (p < 0.05).mean() <= 0.07 and (p < 0.01).mean() <= 0.02
    assert power.at[0.1, "p05"] >= 0.5 and power.at[0.2, "flag"] >= 0.9
    p_old, former = _lcb_targets(400, 200, Thresholds(a3_null="reference_placebo"))
    assert (p_old < 0.05).mean() < (p < 0.05).mean()
    assert former.at[0.1, "flag"] < power.at[0.1, "flag"]


def test_plant_gain_raises_the_pre_window_mean_by_the_gain():
    from analysis.contamination.a3_power import plant_gain
    y = np.array([0.0, 0.5, 1.0, 0.2, 0.9, 0.3])
    pre = np.array([True, True, True, False, False, False])
    out = plant_gain(y, pre, 0.1)
    assert out[pre].mean() == pytest.approx(y[pre].mean() + 0.1)
    assert (out[~pre] == y[~pre]).all() and out.max() <= 1.0 and out[2] == 1.0
    assert plant_gain(y, pre, 0.9)[pre].tolist() == [1.0, 1.0, 1.0]      # at most every failure

"""Frontier history, Theil-Sen trend and stall, logistic forecast (synthetic recovery), fallbacks."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from analysis.logistic import LogisticFit, logistic, logistic_time_to
from analysis.trends import frontier_history, trends_table

DAY = pd.Timedelta(days=1)


def _frame(scores, dates, benchmark="b", metric=None) -> pd.DataFrame:
    df = pd.DataFrame({"benchmark": benchmark, "model": [f"m{i}" for i in range(len(scores))],
                       "score": scores, "date": pd.to_datetime(dates)})
    if metric:
        df["metric"] = metric
    return df


def test_frontier_history_by_hand():
    df = _frame([0.5, 0.7, 0.6, 0.65, 0.8, 0.1],
                ["2024-01-01", "2024-01-10", "2024-01-10", "2024-02-01", "2024-03-01", "2024-06-15"])
    h = frontier_history(df, k=3)
    assert h["frontier"].tolist() == [0.5, 0.7, 0.7, 0.8, 0.8]
    assert h["frontier_model"].tolist() == ["m0", "m1", "m1", "m4", "m4"]
    assert h["is_record"].tolist() == [True, True, False, True, False]
    assert h["n_models"].tolist() == [1, 3, 4, 5, 6]
    # top-3 means: -, .6, .65, .71667, .71667; CV = population sd / mean:
    # .08165/.6 = .13608; .040825/.65 = .062807; .062361/.71667 = .087015
    assert math.isnan(h["topk_mean"].iat[0]) and math.isnan(h["cv_topk"].iat[0])
    np.testing.assert_allclose(h["topk_mean"].iloc[1:], [0.6, 0.65, 0.716667, 0.716667], atol=1e-6)
    np.testing.assert_allclose(h["cv_topk"].iloc[1:], [0.136083, 0.062807, 0.087015, 0.087015], atol=1e-6)
    # 90-day mean of the CV: on Mar 1 the Jan 10, Feb 1, Mar 1 values; on Jun 15 only Jun 15's.
    assert h["cv_topk_90d"].iat[3] == pytest.approx((0.136083 + 0.062807 + 0.087015) / 3, abs=1e-6)
    assert h["cv_topk_90d"].iat[4] == pytest.approx(0.087015, abs=1e-6)


def test_theil_sen_slope_of_a_linear_frontier():
    # +1 pp every 30 days, sampled every 30 days back from now: slope .01/30 per day = 1.014583 pp/month.
    now = pd.Timestamp("2025-01-01")
    dates = [now - 30 * i * DAY for i in range(20)][::-1]
    df = _frame([0.5 + 0.01 * i for i in range(20)], dates)
    t = trends_table(df, now=now).iloc[0]
    assert t["slope_per_month"] == pytest.approx(1.0 / 30 * 365.25 / 12)
    assert t["slope_ci_low"] == pytest.approx(t["slope_per_month"])
    assert t["slope_ci_high"] == pytest.approx(t["slope_per_month"])
    # 13 records in the window (days -360..0) and the frontier carried in at its start (day -365)
    assert t["slope_unit"] == "pp/month" and t["slope_points"] == 14 and t["trend_status"] == "ok"
    assert not t["stalled"]
    assert t["frontier"] == pytest.approx(0.69) and t["last_record_at"] == now


def test_stalled_needs_a_flat_trend_and_an_old_record():
    now = pd.Timestamp("2025-01-01")
    # last record 400 days ago, weaker models since: flat trailing year -> stalled
    dates = [now - 400 * DAY - 30 * i * DAY for i in range(6)][::-1] + [now - 100 * DAY, now - 10 * DAY]
    df = _frame([0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.6, 0.6], dates)
    t = trends_table(df, now=now).iloc[0]
    # the trend ends at the last result (10 days ago); its year holds 2 dates and no record: a measured
    # flat frontier, slope 0 without a CI (not a precise "[0, 0]")
    assert t["trend_end"] == now - 10 * DAY and t["stale_days"] == 10
    assert t["trend_status"] == "no_record_in_window"
    assert t["slope_per_month"] == 0 and math.isnan(t["slope_ci_low"]) and math.isnan(t["slope_ci_high"])
    assert t["stalled"]
    # the same history with a small new record 100 days ago: 3 points (carried in, record, end), fewer than
    # 6: a slope without a CI; the record is recent -> not stalled
    df2 = df.copy()
    df2.loc[6, "score"] = 0.76
    t2 = trends_table(df2, now=now).iloc[0]
    assert t2["trend_status"] == "too_few_points" and t2["slope_points"] == 3
    assert math.isnan(t2["slope_ci_low"]) and math.isnan(t2["slope_ci_high"])
    assert t2["last_record_at"] == now - 100 * DAY
    assert not t2["stalled"]


# --- logistic forecast ----------------------------------------------------------------

K, T0, L, FLOOR = 3.0, 1.5, 0.95, 0.25          # rate per year, midpoint (years), plateau, chance level
PROGRESS = 0.8                                   # threshold y = .25 + .8 * .75 = .85
ORIGIN = pd.Timestamp("2022-01-01")


def _synthetic_history(seed: int, years: float, n: int = 300) -> pd.DataFrame:
    """Models along a logistic frontier: 80% fall short of it (|N(0, .05)|), all with N(0, .005) noise."""
    rng = np.random.default_rng(seed)
    t = np.sort(rng.uniform(0, years, n))
    shortfall = np.abs(rng.normal(0, 0.05, n)) * (rng.random(n) < 0.8)
    score = np.clip(logistic(t, K, T0, L, FLOOR) - shortfall + rng.normal(0, 0.005, n), 0, 1)
    return _frame(score, ORIGIN + pd.to_timedelta(t * 365.25, unit="D"), benchmark="synth")


def test_logistic_time_to_threshold_formula():
    # t_y = t0 - ln((L - floor)/(y - floor) - 1)/k = 1.5 - ln(.7/.6 - 1)/3 = 1.5 + ln(6)/3 = 2.09725
    fit = LogisticFit(k=K, t0=T0, L=L, cov=np.zeros((3, 3)), L_fixed=False)
    t_y, sd = logistic_time_to(fit, 0.85, FLOOR)
    assert t_y == pytest.approx(1.5 + math.log(6) / 3)
    assert sd == 0.0
    assert logistic_time_to(fit, 0.96, FLOOR) == (None, None)      # above the plateau: never


@pytest.mark.parametrize("seed", [0, 3, 7])
def test_synthetic_logistic_is_recovered(seed):
    # History up to 1.9 years (past the 1.5-year midpoint, below the .85 threshold, reached at 2.097 years).
    now = ORIGIN + pd.Timedelta(days=1.9 * 365.25)
    reg = pd.DataFrame({"id": ["synth"], "ceiling": [1.0], "chance": [FLOOR]})
    t = trends_table(_synthetic_history(seed, 1.9), now=now, benchmarks=reg, progress=PROGRESS).iloc[0]
    truth = ORIGIN + pd.Timedelta(days=(T0 + math.log(6) / K) * 365.25)
    assert t["forecast_status"] == "ok" and t["forecast_method"] == "logistic"
    assert t["forecast_threshold"] == pytest.approx(0.85)
    # stated tolerances: k within 0.3/yr, t0 within 0.1 yr, L within 0.03, forecast within 45 days
    assert abs(t["logistic_k"] - K) < 0.3
    assert abs((t["logistic_t0"] - ORIGIN).days / 365.25 - T0) < 0.1
    assert abs(t["logistic_L"] - L) < 0.03
    assert abs((t["forecast_date"] - truth).days) < 45
    assert t["forecast_ci_low"] <= truth <= t["forecast_ci_high"]
    assert t["forecast_ci_high"] - t["forecast_ci_low"] < pd.Timedelta(days=365)


def test_no_inflection_yet_is_insufficient_data_with_a_flagged_fit():
    now = ORIGIN + pd.Timedelta(days=1.0 * 365.25)     # frontier still below the midpoint
    reg = pd.DataFrame({"id": ["synth"], "ceiling": [1.0], "chance": [FLOOR]})
    t = trends_table(_synthetic_history(0, 1.0, n=200), now=now, benchmarks=reg).iloc[0]
    assert t["forecast_status"] == "insufficient_data"
    assert "no inflection" in t["forecast_reason"]
    assert t["logistic_L"] == 1.0                      # refitted with L fixed at the ceiling
    assert t["forecast_method"] == "theil_sen" and pd.isna(t["forecast_date"])     # no date without status ok


def test_few_records_fall_back_on_the_theil_sen_line():
    # 4 records, +5 pp every 30 days: the line reaches .9 (progress .9, ceiling 1) 150 days after the last.
    now = pd.Timestamp("2025-01-01")
    df = _frame([0.5, 0.55, 0.6, 0.65], [now - 90 * DAY, now - 60 * DAY, now - 30 * DAY, now])
    t = trends_table(df, now=now).iloc[0]
    assert t["n_records"] == 4
    assert t["forecast_status"] == "insufficient_data" and t["forecast_method"] == "theil_sen"
    assert "fewer than 5" in t["forecast_reason"] and "would cross within the horizon" in t["forecast_reason"]
    assert pd.isna(t["forecast_date"])          # the line's crossing is no dated forecast (issue 53)
    assert t["trend_status"] == "too_few_points"
    assert pd.isna(t["forecast_ci_low"]) and pd.isna(t["forecast_ci_high"])


def test_reached_plateau_and_unavailable():
    now = pd.Timestamp("2025-01-01")
    reached = _frame([0.5, 0.93, 0.95], [now - 20 * DAY, now - 10 * DAY, now])
    t = trends_table(reached, now=now).iloc[0]
    assert t["forecast_status"] == "reached" and t["reached_at"] == now - 10 * DAY and pd.isna(t["forecast_date"])
    # a frontier that levels off at .70 over 3 years, then a year of weaker models: the fitted plateau is
    # below the .9 threshold, the frontier no longer rises, and the F-test of L = .9 rejects
    ts = np.concatenate([np.linspace(0, 3, 30), [3.3, 3.6, 3.9, 4.0]])
    scores = np.concatenate([logistic(ts[:30], 3.0, 1.5, 0.7, 0.0), [0.6, 0.65, 0.62, 0.6]])
    flat = _frame(scores, ORIGIN + pd.to_timedelta(ts * 365.25, unit="D"))
    t = trends_table(flat, now=ORIGIN + pd.Timedelta(days=4 * 365.25)).iloc[0]
    assert t["forecast_status"] == "plateau" and t["logistic_L"] == pytest.approx(0.7, abs=0.005)
    assert t["plateau_p"] < 0.05 and t["plateau_df"] == t["n_records"] - 3
    # Elo has no ceiling: a trend, no forecast
    elo = _frame([1200.0, 1250.0, 1300.0], [now - 60 * DAY, now - 30 * DAY, now], metric="elo")
    t = trends_table(elo, now=now).iloc[0]
    assert t["forecast_status"] == "unavailable" and t["slope_unit"] == "elo/month"
    assert t["slope_per_month"] == pytest.approx(50 / 30 * 365.25 / 12)


def test_future_rows_are_left_out_and_progress_is_checked():
    now = pd.Timestamp("2025-01-01")
    df = _frame([0.5, 0.6, 0.99], [now - 30 * DAY, now, now + 30 * DAY])
    t = trends_table(df, now=now).iloc[0]
    assert t["frontier"] == 0.6 and t["n_models"] == 2
    with pytest.raises(ValueError, match="progress"):
        trends_table(df, now=now, progress=1.5)


def test_a_plateau_pinned_at_the_last_record_of_a_rising_frontier_is_not_claimed():
    # Concave but still rising fast (log curve, 12 monthly records up to .70): the fit pins L at the
    # last record; the trailing slope CI is > 0, so no plateau is claimed and the line takes over.
    now = pd.Timestamp("2025-01-01")
    n = 12
    scores = [0.3 + 0.4 * math.log1p(i) / math.log(n) for i in range(n)]
    df = _frame(scores, [now - 30 * (n - 1 - i) * DAY for i in range(n)])
    t = trends_table(df, now=now).iloc[0]
    assert t["slope_ci_low"] > 0
    assert t["logistic_L"] == pytest.approx(0.7)
    assert t["forecast_status"] == "insufficient_data" and t["forecast_method"] == "theil_sen"
    assert "pinned at the last record" in t["forecast_reason"]
    assert pd.isna(t["forecast_date"])


# --- direction, trend window, statuses ---------------------------------------------------

def test_every_metric_kind_has_a_direction():
    from scrapers.normalize import METRIC_DIRECTIONS, METRIC_RANGES, lower_is_better
    assert set(METRIC_DIRECTIONS) == set(METRIC_RANGES)
    assert set(METRIC_DIRECTIONS.values()) <= {"higher", "lower"}
    assert lower_is_better("cost_usd") and not lower_is_better("proportion") and not lower_is_better(None)


def test_a_cost_frontier_is_the_running_minimum():
    # dollars: 10 -> 12 (worse, no record) -> 8 (record) -> 9 -> 3 (record); k = 2 cheapest
    df = _frame([10.0, 12.0, 8.0, 9.0, 3.0],
                ["2024-01-01", "2024-02-01", "2024-03-01", "2024-04-01", "2024-05-01"], metric="cost_usd")
    h = frontier_history(df, k=2)
    assert h["frontier"].tolist() == [10.0, 10.0, 8.0, 8.0, 3.0]
    assert h["frontier_model"].tolist() == ["m0", "m0", "m2", "m2", "m4"]
    assert h["is_record"].tolist() == [True, False, True, False, True]
    np.testing.assert_allclose(h["topk_mean"].iloc[1:], [11.0, 9.0, 8.5, 5.5])
    t = trends_table(df, now=pd.Timestamp("2024-06-01")).iloc[0]
    assert t["direction"] == "lower" and t["frontier"] == 3.0 and t["slope_unit"] == "cost_usd/month"
    assert t["slope_per_month"] < 0 and t["forecast_status"] == "unavailable"
    # a higher-is-better benchmark in the same frame keeps the maximum
    both = pd.concat([df, _frame([0.5, 0.6], ["2024-01-01", "2024-02-01"], benchmark="acc", metric="proportion")])
    h2 = frontier_history(both, k=2)
    assert h2.loc[h2["benchmark"] == "acc", "frontier"].tolist() == [0.5, 0.6]


def test_the_trend_ends_at_the_last_result_and_says_how_stale_it_is():
    # a board that rose every month until 400 days ago and then stopped publishing
    now = pd.Timestamp("2025-01-01")
    end = now - 400 * DAY
    df = _frame([0.5 + 0.01 * i for i in range(15)], [end - 30 * (14 - i) * DAY for i in range(15)])
    t = trends_table(df, now=now).iloc[0]
    assert t["trend_end"] == end and t["stale_days"] == 400
    assert t["trend_start"] == end - 365 * DAY
    assert t["trend_status"] == "ok" and t["slope_ci_low"] > 0      # the rise of its last year, not a flat year
    assert t["slope_per_month"] == pytest.approx(1.0 / 30 * 365.25 / 12, rel=1e-6)
    assert not t["stalled"]


def test_no_data_in_window_is_null_not_zero():
    # one result in the last year, the rest two years earlier: fewer than 2 dates in the window
    now = pd.Timestamp("2025-01-01")
    df = _frame([0.5, 0.6, 0.55], [now - 800 * DAY, now - 760 * DAY, now - 5 * DAY])
    t = trends_table(df, now=now).iloc[0]
    assert t["trend_status"] == "no_data_in_window"
    assert math.isnan(t["slope_per_month"]) and math.isnan(t["slope_ci_low"]) and math.isnan(t["slope_ci_high"])
    assert t["stalled"] is None or pd.isna(t["stalled"])
    from report.html import trend_text
    assert trend_text(t["trend_status"], t["slope_per_month"], t["slope_ci_low"], t["slope_ci_high"], t["stalled"],
                      t["trend_end"], t["stale_days"]) == "no data in window to 2024-12-27 (5 d stale)"
    # two dates in the window, one record, at its end: 2 points (carried-in start, record), a slope without a CI
    df2 = _frame([0.5, 0.4, 0.7], [now - 800 * DAY, now - 5 * DAY, now])
    t2 = trends_table(df2, now=now).iloc[0]
    assert t2["trend_status"] == "too_few_points"
    assert t2["slope_per_month"] > 0 and math.isnan(t2["slope_ci_low"])


# --- the slope CI on step frontiers: coverage by simulation ---------------------------------

def _step_frontier(rng, mu_pp_month: float, models_per_month: float, shortfall_sd: float, burn_days: int = 730):
    """The simulated step frontier of docs/figures.py (its trend-coverage figure uses the same)."""
    from helpers import docs_figures
    return docs_figures().step_frontier(rng, mu_pp_month, models_per_month, shortfall_sd, burn_days)


def _grid_theil_sen(t, f):
    """The old method, by brute force: Theil-Sen through the frontier sampled every 30 days back from the end."""
    from scipy.stats import theilslopes
    grid = 365.0 - 30.0 * np.arange(13)
    pos = np.searchsorted(t, grid, side="right") - 1
    keep = pos >= 0
    res = theilslopes(f[pos[keep]], grid[keep], alpha=0.95)
    return res.low_slope, res.high_slope


@pytest.mark.parametrize("regime", ["rare records", "slow drift", "fast drift"])
@pytest.mark.slow   # simulation study (null rate / coverage / power over many seeds)
def test_slope_ci_covers_the_true_drift_of_step_frontiers(regime):
    # The figure docs/statistics.md shows (block trend-coverage), recomputed: with >= 6 distinct frontier
    # points the CI covers the true drift in 0.89-0.94 of the runs (rare records: 91 fits, MC sd ~0.03);
    # records are positively correlated, so slightly liberal. It never collapses to a point.
    from helpers import docs_figures
    f = docs_figures()
    cov = f.trend_ci_coverage(f.TREND_REGIMES[regime])
    assert cov["shown"]["fits"] >= 80, cov
    assert 0.84 <= cov["shown"]["coverage"] <= 0.99, cov
    assert cov["shown"]["width"] > 0
    if regime == "rare records":   # from 3-5 points the CI is ~2.7 times the drift wide: not shown
        assert cov["few"]["width"] > 2 and cov["few"]["fits"] > cov["shown"]["fits"], cov


@pytest.mark.slow   # simulation study
def test_the_former_grid_ci_misses_the_drift_when_records_are_rare():
    rng = np.random.default_rng(20260)
    old_covered = 0
    for _ in range(400):
        t, f, rec, mu = _step_frontier(rng, 0.5, 0.5, 0.05)
        lo_old, hi_old = _grid_theil_sen(t, f)
        old_covered += lo_old <= mu <= hi_old
    assert old_covered / 400 < 0.75, old_covered / 400


# --- stalled and plateau calls: null rates by simulation ----------------------------------

def _logistic_models(rng, L, years, k, t0, per_year, sd):
    n = rng.poisson(per_year * years)
    t = np.sort(rng.uniform(0, years, n))
    s = np.clip(logistic(t, k, t0, L, 0.0) - np.abs(rng.normal(0, sd, n)), 0, 1)
    return _frame(np.round(s, 3), ORIGIN + pd.to_timedelta(t * 365.25, unit="D")), ORIGIN + pd.Timedelta(days=years * 365.25)


@pytest.mark.slow   # simulation study (null rate / coverage / power over many seeds)
def test_stalled_is_rarely_called_on_a_rising_frontier_and_usually_on_a_flat_one():
    # (trends_table's `stalled` is is_stalled of this fit and the last record)
    from analysis.trends import frontier_trend, is_stalled
    rng = np.random.default_rng(7)
    origin = pd.Timestamp("2024-01-01")
    rising = flat = 0
    for _ in range(200):
        for mu, hits in ((1.0, "rising"), (0.0, "flat")):
            t, f, rec, _ = _step_frontier(rng, mu, 1.0, 0.03)
            as_of = origin + pd.to_timedelta(t, unit="D")
            fit = frontier_trend(as_of, f, rec, end=origin + pd.Timedelta(days=365))
            stalled = bool(is_stalled(fit, as_of[rec][-1]))
            if hits == "rising":
                rising += stalled
            else:
                flat += stalled
    assert rising / 200 <= 0.05, rising / 200
    assert flat / 200 >= 0.5, flat / 200


@pytest.mark.slow   # simulation study (null rate / coverage / power over many seeds)
def test_plateau_calls_keep_their_null_rate_and_have_power():
    # Null: the latent frontier tends to L = .95 above the .9 threshold (sparse models, so the plateau test
    # is reached); a plateau call is a false claim. Alternative: L = .70, flat for its last 2.5 years.
    rng = np.random.default_rng(11)
    false_calls = tested = 0
    for _ in range(60):
        df, now = _logistic_models(rng, 0.95, 3.5, 1.5, 2.5, 6, 0.05)
        t = trends_table(df, now=now).iloc[0]
        false_calls += t["forecast_status"] == "plateau"
        tested += not pd.isna(t["plateau_p"])
    assert false_calls / 60 <= 0.05 + 2.33 * math.sqrt(0.05 * 0.95 / 60), false_calls
    calls = 0
    for _ in range(30):
        df, now = _logistic_models(rng, 0.70, 4.0, 4.0, 1.5, 8, 0.03)
        t = trends_table(df, now=now).iloc[0]
        calls += t["forecast_status"] == "plateau"
        if t["forecast_status"] == "plateau":
            assert t["plateau_p"] < 0.05 and t["plateau_df"] == t["n_records"] - 3
    assert calls / 30 >= 0.6, calls


def test_five_records_with_the_plateau_pinned_at_the_last_do_not_make_a_plateau():
    # The 5 record points of SWE-bench bash-only in the backfilled snapshot history (2025): the free fit
    # pins L at the last record (.742); with (1, 2) df the F-test cannot reject L = .9 (p ~ 0.10).
    from analysis.logistic import fit_logistic, plateau_test
    dates = pd.to_datetime(["2025-07-20", "2025-07-26", "2025-08-02", "2025-09-29", "2025-11-18"])
    y = np.array([0.528, 0.6493, 0.676, 0.706, 0.742])
    t = ((dates - dates[0]) / pd.Timedelta(days=1)).to_numpy() / 365.25
    lf = fit_logistic(t, y, floor=0.0, ceiling=1.0)
    p, df2 = plateau_test(t, y, lf, 0.9, floor=0.0)
    assert df2 == 2 and lf.L == pytest.approx(0.742)
    assert 0.05 < p < 0.2
    df = _frame(y, dates)
    assert trends_table(df, now=pd.Timestamp("2025-12-01")).iloc[0]["forecast_status"] != "plateau"


def test_the_fit_with_its_derivatives_is_the_fit_by_finite_differences():
    """fit_logistic gives least squares its Jacobian (analysis.logistic._jacobian; a third of a
    fit's time was estimating it by differences): the derivatives are those of central differences,
    and on random frontiers the fits and their covariances are those of scipy's own difference
    quotients (the plateau test on them stays a probability)."""
    from scipy.optimize import curve_fit

    from analysis.constants import LOGISTIC_MAX_RATE, LOGISTIC_T0_SPAN_YEARS
    from analysis.logistic import _jacobian, fit_logistic, plateau_test
    rng = np.random.default_rng(7)
    t = np.sort(rng.uniform(0, 4, 12))
    for k, t0, L in ((0.7, 1.5, 0.9), (6.0, 3.9, 0.97), (2.0, -1.0, 0.6)):
        h = 1e-6
        numeric = np.column_stack([(logistic(t, *(np.array([k, t0, L]) + h * e), 0.1)
                                    - logistic(t, *(np.array([k, t0, L]) - h * e), 0.1)) / (2 * h)
                                   for e in np.eye(3)])
        assert _jacobian(t, k, t0, L, 0.1) == pytest.approx(numeric, abs=1e-7)
    for _ in range(10):
        n = int(rng.integers(5, 25))
        t = np.sort(rng.uniform(0, 4, n))
        y = np.minimum(np.maximum.accumulate(0.3 + 0.6 / (1 + np.exp(-rng.uniform(0.5, 3) * (t - rng.uniform(0.5, 3.5))))
                                             + rng.normal(0, 0.01, n)), 0.99)
        fit = fit_logistic(t, y, floor=0.0, ceiling=1.0)
        # the reference: the same starts, scipy's differences, the least residual sum
        best = None
        for k0 in (0.5, 2.0, 8.0):
            for t00 in (float(np.median(t)), float(t.max())):
                L0 = y.max() + 0.5 * (1.0 - y.max())
                p, cov = curve_fit(lambda tt, k, t0, L: logistic(tt, k, t0, L, 0.0), t, y, p0=[k0, t00, L0],
                                   bounds=([1e-6, t.min() - LOGISTIC_T0_SPAN_YEARS, y.max()],
                                           [LOGISTIC_MAX_RATE, t.max() + LOGISTIC_T0_SPAN_YEARS, 1.0]), method="trf",
                                   maxfev=20_000)
                sse = float(np.sum((logistic(t, *p, 0.0) - y) ** 2))
                if best is None or sse < best[0]:
                    best = (sse, p, cov)
        assert [fit.k, fit.t0, fit.L] == pytest.approx(list(best[1]), rel=1e-4, abs=1e-5)
        assert fit.cov == pytest.approx(best[2], rel=1e-3, abs=1e-8)
        p, _ = plateau_test(t, y, fit, 0.95, floor=0.0)
        assert p is None or 0.0 <= p <= 1.0


# --- honest forecasts: inside (last observation, + 10 years], never overflowing ------------------

def _dates_are_sane(t: pd.Series, last_obs: pd.Timestamp) -> None:
    """Every date column is missing or a formattable Timestamp; a forecast date below the threshold
    lies after the last observation and within the horizon."""
    from analysis.constants import FORECAST_HORIZON_YEARS
    for col in ("forecast_date", "forecast_ci_low", "forecast_ci_high", "logistic_forecast_date", "logistic_t0",
                "trend_start", "trend_end", "last_record_at"):
        v = t.get(col)
        if v is None or pd.isna(v):
            continue
        assert isinstance(v, pd.Timestamp), (col, v)
        assert 1900 < v.year < 2300, (col, v)
        v.strftime("%Y-%m-%d")                                   # the NotImplementedError of year 55,824
        pd.Series([v]).astype("datetime64[ns]")                  # storable without wrapping
    if t["forecast_status"] in ("reached", "unavailable", "plateau"):
        return
    horizon = last_obs + pd.Timedelta(days=FORECAST_HORIZON_YEARS * 365.25)
    for col in ("forecast_date", "forecast_ci_low", "forecast_ci_high", "logistic_forecast_date"):
        v = t.get(col)
        if v is not None and not pd.isna(v):
            assert last_obs <= v <= horizon, (col, v, t["forecast_status"], t["forecast_reason"])
    if not pd.isna(t.get("forecast_date")):
        assert t["forecast_date"] > last_obs
    if t["forecast_status"] == "beyond_horizon":
        assert pd.isna(t["forecast_date"]) and "10 years" in t["forecast_reason"]


def test_a_frontier_edged_by_1e_5_gives_no_date_in_year_55824():
    # LiveBench's carried frontier, edged by 1e-5 at each of 8 records over a year: slope ~1.4e-5 pp/month.
    # The line reaches .9 tens of thousands of years later: beyond_horizon, no date (was year 55,824, an
    # unformattable Timestamp, stored as 1972).
    end = pd.Timestamp("2026-01-01")
    scores = [0.80] + [0.824 + 1e-5 * i for i in range(8)]
    dates = [end - 500 * DAY] + [end - 45 * (7 - i) * DAY for i in range(8)]
    t = trends_table(_frame(scores, dates), now=end + 30 * DAY).iloc[0]
    assert t["trend_status"] == "ok" and 0 < t["slope_per_month"] < 1e-3
    assert t["forecast_status"] == "beyond_horizon" and pd.isna(t["forecast_date"])
    _dates_are_sane(t, end)


def test_a_forecast_is_never_before_the_last_observation_while_below_the_threshold():
    # aider_polyglot: records up to .88 then flat, last observation 2025-10-04 at .88 < .90. The Theil-Sen
    # line (pivot at the median point) crosses .90 before 2025-10-04; that date contradicts the data.
    from analysis.trends import _linear_forecast, frontier_trend
    last = pd.Timestamp("2025-10-04")
    rec_dates = pd.to_datetime(["2025-02-01", "2025-03-01", "2025-04-01", "2025-05-01", "2025-06-01", "2025-07-01"])
    scores = [0.50, 0.62, 0.72, 0.80, 0.86, 0.88, 0.70]
    df = _frame(scores, list(rec_dates) + [last])
    h = frontier_history(df, k=5)
    fit = frontier_trend(h["as_of"], h["frontier"], h["is_record"])
    mid = _linear_forecast(fit, 0.9)[0]
    assert mid is not None and pd.Timestamp(mid * 86_400, unit="s") < last     # what the line alone says
    t = trends_table(df, now=last).iloc[0]
    assert t["frontier"] == 0.88 and t["forecast_status"] == "insufficient_data"
    assert pd.isna(t["forecast_date"]) and "before the last observation" in t["forecast_reason"]
    _dates_are_sane(t, last)


hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(slope=st.one_of(st.floats(1e-300, 1e300), st.floats(-1e300, 1e-300), st.sampled_from([0.0, 1.4e-5 / 30.44])),
       spread=st.floats(0.0, 1e300), y_med=st.floats(0.0, 0.899), x_med=st.floats(0, 40_000),
       status=st.sampled_from(["ok", "too_few_points"]))
def test_no_slope_overflows_or_wraps_a_forecast_date(slope, spread, y_med, x_med, status):
    # The line fallback on any slope and CI (per day), any pivot: every date is sane and in the window.
    from analysis.trends import TrendFit, _forecast
    end = pd.Timestamp("2026-01-01")
    nan = math.nan
    low, high = (slope - spread, slope + spread) if status == "ok" else (nan, nan)
    fit = TrendFit(status, end - 365 * DAY, end, slope, low, high, x_med, y_med, 6, 6)
    rec = pd.DataFrame({"as_of": [end - 100 * DAY, end - 50 * DAY], "frontier": [0.5, 0.6]})
    out = _forecast(rec, fit, ceiling=1.0, floor=0.0, progress=0.9)
    row = pd.Series({"trend_start": fit.start, "trend_end": end, **out})
    _dates_are_sane(row, end)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(st.tuples(st.floats(1e-12, 0.2), st.integers(1, 400)), min_size=1, max_size=12),
       start=st.floats(0.0, 0.85), tail_days=st.integers(0, 900))
def test_no_history_gives_a_forecast_outside_its_window(steps, start, tail_days):
    # Whole histories with increments from 1e-12 to 0.2 and gaps from a day to 400 days (logistic and line).
    end = pd.Timestamp("2025-06-01")
    scores, s = [start], start
    for inc, _ in steps:
        s = min(s + inc, 0.999)
        scores.append(s)
    gaps = [g for _, g in steps]
    dates = [end - sum(gaps[i:]) * DAY for i in range(len(steps) + 1)] + [end + tail_days * DAY]
    scores.append(start)                 # a weaker model at the last observation
    t = trends_table(_frame(scores, dates), now=dates[-1]).iloc[0]
    _dates_are_sane(t, dates[-1])

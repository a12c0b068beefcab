"""The forecast backtest (analysis/backtest.py, issue 53): the arithmetic of one origin by hand, no
look-ahead, coverage on synthetic logistic histories equal to the simulation's, an overconfident
method failing the coverage target (and the cross-fitted calibration repairing it), the summary's
table-clustered CIs and the choice of a method."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from analysis.backtest import (backtest, calibrate, choose_methods, crossing_summary, origins_of, summarize,
                               undetermined_crossings, undetermined_outcomes, with_damped)
from analysis.forecast_methods import DAMPED, LOGISTIC, PERSISTENCE, THEIL_SEN, Method, Past, default_methods
from analysis.constants import BACKTEST_COVERAGE_TARGET, DAYS_PER_MONTH
from analysis.logistic import logistic

pytestmark = pytest.mark.xdist_group("test_backtest")   # its module fixture is built once

START = pd.Timestamp("2022-01-01")


def _frontier(table: str, dates, values) -> pd.DataFrame:
    v = np.asarray(values, dtype=float)
    prev = np.concatenate([[-np.inf], np.maximum.accumulate(v)[:-1]])
    return pd.DataFrame({"table_id": table, "as_of": pd.to_datetime(dates), "frontier": np.maximum.accumulate(v),
                         "is_record": v > prev})


def _tables(ids, metric="proportion") -> pd.DataFrame:
    return pd.DataFrame({"table_id": list(ids), "metric": metric, "floor": 0.0, "ceiling": 1.0})


# --- one origin by hand ------------------------------------------------------------------------------

HAND_DATES = ["2024-01-01", "2024-02-01", "2024-03-01", "2024-04-01", "2024-05-01", "2024-08-15", "2025-01-10",
              "2025-06-01", "2025-09-01"]
HAND_VALUES = [0.50, 0.55, 0.60, 0.62, 0.65, 0.70, 0.72, 0.80, 0.80]


def test_one_origin_by_hand():
    rows, _ = backtest(_frontier("t", HAND_DATES, HAND_VALUES), _tables(["t"]))
    o = pd.Timestamp("2024-07-01")          # the first month start 180 days after 2024-01-01
    assert rows["origin"].min() == o
    at = rows[rows["origin"] == o].set_index(["method", "horizon_months"])
    # observed: the frontier dated on or before o + h
    assert at.loc[(PERSISTENCE, 3), "observed"] == 0.70           # 2024-09-30: the 2024-08-15 record
    assert at.loc[(PERSISTENCE, 6), "observed"] == 0.70           # 2024-12-31
    assert at.loc[(PERSISTENCE, 12), "observed"] == 0.80          # 2025-07-01: the 2025-06-01 record
    assert (at.xs(PERSISTENCE)["forecast"] == 0.65).all()         # F(o): the 2024-05-01 record
    # Theil-Sen through the 5 records and (o, .65), anchored at F(o) = .65
    x = [pd.Timestamp(d).value / 86_400e9 for d in HAND_DATES[:5]] + [o.value / 86_400e9]
    y = HAND_VALUES[:5] + [0.65]
    slope = float(np.median([(y[j] - y[i]) / (x[j] - x[i]) for i, j in itertools.combinations(range(6), 2)]))
    for h in (3, 6, 12):
        assert at.loc[(THEIL_SEN, h), "forecast"] == pytest.approx(min(1.0, 0.65 + slope * h * DAYS_PER_MONTH))
    assert at.loc[(THEIL_SEN, 12), "n_records"] == 5
    # the last origin whose 3 months end within the history (2025-09-01): 2025-06-01
    assert rows["origin"].max() == pd.Timestamp("2025-06-01")
    assert origins_of(pd.Timestamp("2024-01-01"), pd.Timestamp("2025-09-01"), 3)[-1] == pd.Timestamp("2025-06-01")


def test_a_table_observed_after_its_last_result_is_scored_up_to_its_last_observation():
    tables = _tables(["t"]).assign(observed_until=pd.Timestamp("2026-03-01"))
    rows, _ = backtest(_frontier("t", HAND_DATES, HAND_VALUES), tables)
    # the last origin is now 2025-11-01 (3 months of 30.44 days before the last observation); its outcome
    # is the frontier carried from the last result (.80): nothing was dated later by the last snapshot
    assert rows["origin"].max() == pd.Timestamp("2025-11-01")
    last = rows[(rows["origin"] == pd.Timestamp("2025-11-01")) & (rows["method"] == PERSISTENCE)]
    assert last["horizon_months"].tolist() == [3] and last["observed"].iat[0] == 0.80
    # a 12-month outcome from 2025-02-01 (past the last result, within the last observation)
    assert len(rows[(rows["origin"] == pd.Timestamp("2025-02-01")) & (rows["horizon_months"] == 12)])
    assert not len(rows[(rows["origin"] == pd.Timestamp("2025-03-01")) & (rows["horizon_months"] == 12)])


def test_an_outcome_a_later_observed_result_may_have_changed_is_not_scored():
    """A result dated at its first observation (2025-09-01) was achieved at some time between its
    model's release and then: the frontier it beats is not known in between, so no outcome there
    is scored; before its release, or where it would not beat the frontier, the outcome stands."""
    rows, crossings = backtest(_frontier("t", HAND_DATES, HAND_VALUES), _tables(["t"]))
    undated = pd.DataFrame({"table_id": ["t", "t", "u"], "score": [0.85, 0.60, 0.99],
                            "date": pd.to_datetime(["2025-09-01", "2025-09-01", "2025-09-01"]),
                            "release_date": pd.to_datetime(["2024-10-01", None, None])})
    out = undetermined_outcomes(rows, undated)
    at = rows["origin"] == pd.Timestamp("2024-07-01")
    h = rows["horizon_months"]
    assert not out[at & (h == 3)].any()          # 2024-09-30: its model was not released yet
    assert out[at & (h == 6)].all()              # 2024-12-31: released, first seen later, above .70
    assert out[at & (h == 12)].all()             # 2025-07-01: above .80
    # an outcome at or after its first observation includes it: known
    end = rows["origin"] + pd.to_timedelta(h * DAYS_PER_MONTH, unit="D")
    assert not out[end >= pd.Timestamp("2025-09-01")].any()
    # without a release date the result may date from any time before its first observation
    nodate = undated.assign(release_date=pd.NaT)
    assert undetermined_outcomes(rows, nodate)[at & (h == 3)].all()
    # a result below the frontier, or of another table, changes nothing
    assert not undetermined_outcomes(rows, undated.iloc[1:]).any()
    assert not undetermined_outcomes(rows, undated.iloc[:0]).any()


def test_a_method_sees_nothing_dated_after_its_origin():
    seen: list[tuple[float, float]] = []

    def spy(past: Past, horizons):
        seen.append((float(past.days.max()), past.origin))
        return [(past.now, math.nan, math.nan) for _ in horizons]

    backtest(_frontier("t", HAND_DATES, HAND_VALUES), _tables(["t"]), methods={"spy": Method(values=spy)})
    assert seen and all(last <= origin for last, origin in seen)


def test_crossings_are_scored_against_the_actual_date():
    dates = pd.date_range("2023-01-01", periods=30, freq="MS")
    values = np.minimum(0.5 + 0.02 * np.arange(30), 0.99)         # +2 pp a month, reaches .9 at month 20
    _, cross = backtest(_frontier("c", dates, values), _tables(["c"]))
    actual = dates[20]
    line = cross[cross["method"] == THEIL_SEN]
    assert len(line) and (line["actual_crossing"] == actual).all()
    assert (line["origin"] < actual).all()
    assert line["error_months"].abs().max() < 1.0                 # a straight line is forecast within a month
    assert (cross.loc[cross["method"] == PERSISTENCE, "forecast_crossing"].isna()).all()   # no change never crosses
    s = crossing_summary(cross).set_index("method")
    assert s.loc[THEIL_SEN, "n_dated"] == len(line) and s.loc[PERSISTENCE, "n_dated"] == 0
    # a result above the threshold first observed later, its model released before the dated
    # crossing: the crossing may have come earlier, so no crossing of the table is scored
    late = pd.DataFrame({"table_id": ["c"], "score": [0.95], "date": [dates[29]], "release_date": [dates[10]]})
    assert undetermined_crossings(cross, late).all()
    assert not undetermined_crossings(cross, late.assign(release_date=dates[25])).any()   # released after it
    assert not undetermined_crossings(cross, late.assign(score=0.85)).any()              # below the threshold


# --- synthetic logistic histories with known parameters ------------------------------------------------

RATE = 2.0           # models per month
SIGMA = 0.05         # a model's shortfall below the latent curve: |N(0, SIGMA)|


def _latent(params, days: np.ndarray) -> np.ndarray:
    k, t0, L = params
    return logistic((days - START.value / 86_400e9) / 365.25, k, t0, L, 0.0)


def _synthetic(n_tables: int, seed: int) -> tuple[pd.DataFrame, dict]:
    rng = np.random.default_rng(seed)
    frames, params = [], {}
    for i in range(n_tables):
        p = (rng.uniform(1.0, 3.0), rng.uniform(0.5, 2.5), rng.uniform(0.7, 0.95))
        n = rng.poisson(RATE * 36)
        days = np.sort(START.value / 86_400e9 + rng.uniform(0, 36 * DAYS_PER_MONTH, n))
        scores = np.clip(_latent(p, days) - np.abs(rng.normal(0, SIGMA, n)), 0, 1)
        table = f"s{i}"
        params[table] = p
        frames.append(_frontier(table, pd.to_datetime(days * 86_400e9), scores))
    return pd.concat(frames, ignore_index=True), params


def _oracle(params: dict, simulated: dict, shrink: float = 1.0, draws: int = 400, seed: int = 1,
            shared: dict | None = None) -> Method:
    """The true predictive distribution of F(o + h) given F(o), by simulation of the known process:
    median and 10/90 % quantiles (`shrink` < 1 narrows the interval around the median: overconfident).
    `simulated` collects each interval's probability under the simulation (its expected coverage).
    One simulation per origin serves every horizon (and, through `shared`, every oracle)."""
    rng = np.random.default_rng(seed)
    shared = {} if shared is None else shared

    def futures(past: Past, longest: float) -> tuple[np.ndarray, np.ndarray]:
        key = (past.table_id, past.origin)
        if key not in shared:
            n = rng.poisson(RATE * longest / DAYS_PER_MONTH, draws)
            width = max(int(n.max()), 1)
            t = past.origin + rng.uniform(0, longest, (draws, width))
            s = np.clip(_latent(params[past.table_id], t) - np.abs(rng.normal(0, SIGMA, (draws, width))), 0, 1)
            shared[key] = (t, np.where(np.arange(width)[None, :] < n[:, None], s, -np.inf))
        return shared[key]

    def values(past: Past, horizons):
        out = []
        t, s = futures(past, 12 * DAYS_PER_MONTH)
        for h in horizons:
            f = np.maximum(past.now, np.where(t <= past.origin + h, s, -np.inf).max(axis=1))
            lo, mid, hi = np.quantile(f, [0.1, 0.5, 0.9])
            lo, hi = mid - shrink * (mid - lo), mid + shrink * (hi - mid)
            simulated[(past.table_id, round(past.origin), round(h / DAYS_PER_MONTH))] = \
                float(np.mean((f >= lo - 1e-12) & (f <= hi + 1e-12)))
            out.append((float(mid), float(lo), float(hi)))
        return out

    return Method(values=values)


def _raw_coverage(rows: pd.DataFrame) -> float:
    return float(((rows["observed"] >= rows["raw_low"] - 1e-12) & (rows["observed"] <= rows["raw_high"] + 1e-12)).mean())


@pytest.fixture(scope="module")
def synthetic():
    frontier, params = _synthetic(60, seed=7)
    simulated: dict = {}
    over: dict = {}
    shared: dict = {}
    rows, _ = backtest(frontier, _tables(params), methods={
        "oracle": _oracle(params, simulated, shared=shared),
        "overconfident": _oracle(params, over, shrink=0.25, shared=shared),
        PERSISTENCE: default_methods()[PERSISTENCE]})
    return rows, simulated, over


def test_the_backtests_coverage_equals_the_simulations(synthetic):
    rows, simulated, _ = synthetic
    oracle = rows[rows["method"] == "oracle"]
    assert len(oracle) > 1000 and oracle["table_id"].nunique() == 60
    p = np.array([simulated[(t, round(o.value / 86_400e9), h)]
                  for t, o, h in zip(oracle["table_id"], oracle["origin"], oracle["horizon_months"])])
    inside = ((oracle["observed"] >= oracle["raw_low"] - 1e-12) & (oracle["observed"] <= oracle["raw_high"] + 1e-12))
    got, expected = float(inside.mean()), float(p.mean())
    # the difference within 3 table-clustered standard errors (origins of one table are correlated)
    d = pd.Series(inside.to_numpy(dtype=float) - p).groupby(oracle["table_id"].to_numpy()).agg(["sum", "count"])
    n_t = len(d)
    se = math.sqrt(n_t / (n_t - 1) * float(((d["sum"] - d["count"] * (got - expected)) ** 2).sum())) / len(p)
    assert abs(got - expected) < max(3 * se, 0.01) and abs(got - expected) < 0.05, (got, expected, se)
    lo, hi = BACKTEST_COVERAGE_TARGET
    assert lo <= got <= hi


def test_an_overconfident_method_fails_the_coverage_target_and_calibration_repairs_it(synthetic):
    rows, _, over = synthetic
    bad = rows[rows["method"] == "overconfident"]
    lo, hi = BACKTEST_COVERAGE_TARGET
    assert _raw_coverage(bad) < lo                               # the target can fail
    s = summarize(calibrate(rows), b=200).set_index(["method", "horizon_months"])
    for h in (3, 6, 12):
        assert s.loc[("overconfident", h), "raw_coverage"] < lo
        # intervals from the other folds' residuals: calibrated whatever the method's own claim
        assert lo <= s.loc[("overconfident", h), "coverage"] <= hi
        # the oracle's median beats no change (the curves still rise)
        assert s.loc[("oracle", h), "mae"] < s.loc[("oracle", h), "naive_mae"]


def test_the_summary_clusters_by_table_and_persistence_is_its_own_baseline(synthetic):
    rows, _, _ = synthetic
    s = summarize(calibrate(rows), b=200)
    p = s[s["method"] == PERSISTENCE].set_index("horizon_months")
    assert (p["mae"] == p["naive_mae"]).all() and (p["unit"] == "pp").all()
    assert s.groupby(["kind", "horizon_months"])["chosen"].sum().eq(1).all()    # one method per horizon
    row = s[(s["method"] == "oracle") & (s["horizon_months"] == 12)].iloc[0]
    assert row["mae_low"] < row["mae"] < row["mae_high"] and row["n_tables"] == 60
    # duplicating every table's rows (same tables, twice the origins) leaves the clustered CI as wide
    twice = calibrate(pd.concat([rows, rows], ignore_index=True))
    row2 = summarize(twice, b=200).query("method == 'oracle' and horizon_months == 12").iloc[0]
    assert row2["n"] == 2 * row["n"]
    assert (row2["mae_high"] - row2["mae_low"]) == pytest.approx(row["mae_high"] - row["mae_low"], rel=0.35)


def test_a_method_is_chosen_only_where_it_beats_persistence():
    base = {"kind": "proportion", "unit": "pp", "n": 100, "n_tables": 10}
    rows = []
    for h in (3, 6, 12):
        rows.append({**base, "horizon_months": h, "method": PERSISTENCE, "mae": 5.0, "naive_mae": 5.0})
        rows.append({**base, "horizon_months": h, "method": THEIL_SEN, "mae": 4.0, "naive_mae": 5.0})
        rows.append({**base, "horizon_months": h, "method": LOGISTIC, "mae": 3.0 if h < 12 else 6.0, "naive_mae": 5.0})
    summary = pd.DataFrame(rows)
    # each horizon its own: the logistic where it is best, the line at 12 months, where the logistic loses
    assert choose_methods(summary) == {("proportion", 3): LOGISTIC, ("proportion", 6): LOGISTIC,
                                       ("proportion", 12): THEIL_SEN}
    summary.loc[summary["method"] == THEIL_SEN, "mae"] = 5.5
    assert choose_methods(summary)[("proportion", 12)] == PERSISTENCE     # nothing beats no change there
    summary.loc[summary["method"] == LOGISTIC, "mae"] = 3.0
    summary.loc[summary["method"] == LOGISTIC, "n_tables"] = 3
    assert set(choose_methods(summary).values()) == {PERSISTENCE}         # too few tables to earn a choice


def test_the_damped_line_keeps_the_share_of_the_slope_that_persisted_on_other_tables():
    # every table's line overshoots: the frontier moved half the step the line forecast
    rows = []
    for i in range(20):
        for h in (3, 6, 12):
            step = 0.01 * h * (1 + i % 3)
            rows.append({"table_id": f"t{i}", "metric": "proportion", "origin": pd.Timestamp("2025-01-01"),
                         "horizon_months": h, "method": THEIL_SEN, "frontier_at_origin": 0.5, "forecast": 0.5 + step,
                         "raw_low": math.nan, "raw_high": math.nan, "observed": 0.5 + step / 2, "ceiling": 1.0,
                         "n_records": 5})
    out = with_damped(pd.DataFrame(rows))
    damped = out[out["method"] == DAMPED]
    assert len(damped) == 60 and (damped["damping"] == 0.5).all()
    assert np.allclose(damped["forecast"], damped["observed"])
    s = summarize(calibrate(out), b=50).set_index(["method", "horizon_months"])
    assert s.loc[(DAMPED, 12), "mae"] < s.loc[(THEIL_SEN, 12), "mae"]


def test_a_live_forecast_carries_the_damping_and_interval_the_backtest_earned():
    from analysis.live_forecast import live_forecast
    record = pd.DataFrame([{"kind": "proportion", "horizon_months": 12, "method": DAMPED, "damping": 0.5,
                            "q_low": -2.0, "q_high": 3.0, "n": 40},
                           {"kind": "proportion", "horizon_months": 3, "method": DAMPED, "damping": 1.0,
                            "q_low": -1.0, "q_high": 1.0, "n": 90}])
    per_day = 0.01 / DAYS_PER_MONTH                                # +1 pp a month
    got = live_forecast(0.60, per_day, 1.0, record, metric="proportion").set_index("horizon_months")
    # 12 months: the line reaches .72, half of its rise is kept: .66, interval .66 + [-.02, +.03]
    assert got.loc[12, "forecast"] == pytest.approx(0.66)
    assert (got.loc[12, "low"], got.loc[12, "high"]) == (pytest.approx(0.64), pytest.approx(0.69))
    # 3 months: the whole line, .63; the lower bound never below today's frontier
    assert got.loc[3, "forecast"] == pytest.approx(0.63) and got.loc[3, "low"] == pytest.approx(0.62)
    # near the ceiling: capped
    capped = live_forecast(0.99, per_day, 1.0, record, metric="proportion").set_index("horizon_months")
    assert capped["high"].max() <= 1.0 and capped["forecast"].max() <= 1.0
    # no change chosen: no forecast earned
    assert live_forecast(0.6, per_day, 1.0, record.assign(method=PERSISTENCE), metric="proportion").empty
    # the interval widens with the expected rise: 12 months, rise .06, .5 / 1.0 per unit of rise
    wide = live_forecast(0.60, per_day, 1.0, record.assign(q_low_per_rise=-0.5, q_high_per_rise=1.0),
                         metric="proportion").set_index("horizon_months")
    assert (wide.loc[12, "low"], wide.loc[12, "high"]) == (pytest.approx(0.61), pytest.approx(0.75))


def test_the_interval_widens_with_the_rise_a_forecast_expects():
    """Tables that stay put and tables that climb: a constant interval covers the still ones
    always and the climbing ones rarely; scaled by the expected rise it covers both near 80 %."""
    rng = np.random.default_rng(3)
    rows = []
    for i in range(60):
        climbing = i % 2 == 0
        for j in range(12):
            for h in (3, 6, 12):
                rise = (0.02 + 0.01 * rng.random()) * h / 3 if climbing else 0.0
                # a frontier never falls: the still ones rise a little or not at all
                miss = max(rng.normal(0.0, 0.5 * rise), -rise) if climbing else abs(rng.normal(0.0, 0.002))
                rows.append({"table_id": f"t{i}", "metric": "proportion", "origin": START + pd.DateOffset(months=j),
                             "horizon_months": h, "method": THEIL_SEN, "frontier_at_origin": 0.3,
                             "forecast": 0.3 + rise, "raw_low": np.nan, "raw_high": np.nan,
                             "observed": 0.3 + rise + miss, "ceiling": 10.0, "n_records": 5})
    cal = calibrate(pd.DataFrame(rows))
    cal["climbing"] = cal["forecast"] > cal["frontier_at_origin"]
    width = (cal["high"] - cal["low"]).groupby(cal["climbing"]).mean()
    assert width[True] > 10 * width[False]
    cover = cal["inside"].astype(float).groupby(cal["climbing"]).mean()
    assert 0.7 <= cover[True] <= 0.9 and cover[False] >= 0.7
    s = summarize(cal, b=20).set_index("horizon_months")
    assert (s["q_high_per_rise"] > 0).all() and (s["q_low_per_rise"] < 0).all()


def test_the_summary_stores_the_damping_of_every_table():
    rows = []
    for i in range(10):
        for h in (3, 6, 12):
            step = 0.01 * h
            rows.append({"table_id": f"t{i}", "metric": "proportion", "origin": pd.Timestamp("2025-01-01"),
                         "horizon_months": h, "method": THEIL_SEN, "frontier_at_origin": 0.5, "forecast": 0.5 + step,
                         "raw_low": math.nan, "raw_high": math.nan, "observed": 0.5 + 0.25 * step, "ceiling": 1.0,
                         "n_records": 5})
    s = summarize(calibrate(with_damped(pd.DataFrame(rows))), b=20)
    assert (s.loc[s["method"] == DAMPED, "damping"] == 0.25).all()
    assert s.loc[s["method"] != DAMPED, "damping"].isna().all()


def test_costs_are_left_out_and_a_table_without_a_metric_is_a_proportion():
    tables = pd.DataFrame({"table_id": ["cost", "plain"], "metric": ["cost_usd", np.nan],
                           "floor": [None, None], "ceiling": [None, None]})
    frontier = pd.concat([_frontier("cost", HAND_DATES, HAND_VALUES), _frontier("plain", HAND_DATES, HAND_VALUES)])
    rows, _ = backtest(frontier, tables)
    assert set(rows["table_id"]) == {"plain"} and set(rows["metric"]) == {"proportion"}
    assert (rows["ceiling"] == 1.0).all()

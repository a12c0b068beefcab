"""A3's power on real items (`benchwatch calibrate --power`): the placebo setting of
analysis.contamination.a3 (clean models, fake cutoffs) with a contamination-like gain planted in
the tested model's pre-window items. docs/statistics.md, A3."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.contamination.a3 import _a3_p, a3_core
from analysis.contamination.a3_placebo import placebo_sets
from analysis.contamination.base import Thresholds
from analysis.cutoffs import guard
from analysis.contamination.numerics import _wilson
from analysis.fdr import benjamini_hochberg


POWER_COLUMNS = ["source", "benchmark", "planted", "trials", "n_pre", "n_post", "se_total",
                 "p05", "p05_lo", "p05_hi", "flag", "flag_lo", "flag_hi", "mde_p05", "mde_flag", "family"]


def plant_gain(y: np.ndarray, pre: np.ndarray, gain: float) -> np.ndarray:
    """y (n,) pass fractions with a contamination-like gain planted on the `pre` items: a share π
    of every pre item's failures becomes passes, y' = y + π (1 − y), π = gain / (1 − mean_pre y)
    (at most 1), so the pre-window mean rises by exactly `gain` (or to 1 when that is less)."""
    out = np.asarray(y, dtype=float).copy()
    room = 1.0 - out[pre].mean()
    share = min(1.0, gain / room) if room > 0 else 0.0
    out[pre] = out[pre] + share * (1.0 - out[pre])
    return out


def _target_windows(matrix: pd.DataFrame, dates: pd.Series, cutoffs: pd.DataFrame, th: Thresholds) -> int | None:
    """The median pre-window size of the models A3 can test on this item set (the sizes power is
    reported at); None when no model is testable."""
    g = guard(th.guard_days)
    cut = cutoffs.set_index("model")
    sizes = []
    for model in matrix.columns:
        if model not in cut.index or pd.isna(cut.at[model, "c_lo"]) or pd.isna(cut.at[model, "c_hi"]):
            continue
        seen = matrix[model].notna()
        n_pre = int((seen & (dates <= cut.at[model, "c_lo"] - g)).sum())
        n_post = int((seen & (dates > cut.at[model, "c_hi"] + g)).sum())
        if n_pre >= th.a3_min_items and n_post >= th.a3_min_items:
            sizes.append(n_pre)
    return int(np.median(sizes)) if sizes else None


def a3_power(items: pd.DataFrame, cutoffs: pd.DataFrame, *, rng: np.random.Generator, now: pd.Timestamp,
             trials: int, gains: tuple[float, ...] = (0.10, 0.20), th: Thresholds = Thresholds()) -> pd.DataFrame:
    """Power of A3 on real items: the placebo setting (clean models, fake cutoffs) with a gain
    planted (`plant_gain`) in the pre-window items of the tested clean model.

    Per trial: one fake cutoff, drawn among the dates whose pre window holds 80–120 % of the
    items the testable models' real pre windows hold (their median; the placebo's uniform draw
    when no model is testable); the tested clean model rotates over the clean models. The
    planted test is judged (a) by p < 0.05 and (b) by the full flag rule after BH within its
    trial's family (the planted test and the other clean models' unplanted tests at the same
    cutoff). Returns one row per (benchmark, gain) (POWER_COLUMNS): mean items per side, the
    median total SE, both rates with Wilson 95 % CIs, and the minimum detectable effect at 80 %
    power for p < 0.05 (z_.95 + z_.80)·SE and for the flag rule (z at BH's bar for the top
    test of a family of that size, at least max(MIN_EFFECT, MIN_EFFECT_SE·SE)).
    """
    from scipy import stats   # imported when used: an analysis that computes no contamination test needs none of it
    g = guard(th.guard_days)
    rows = []
    for source, bench, matrix, dates, clean in placebo_sets(items, cutoffs, now, g):
        if len(clean) < th.a3_min_ref_models + 1:
            continue
        ok = matrix[clean].notna().all(axis=1) & dates.notna()
        y = matrix.loc[ok, clean].to_numpy(float)
        d = dates[ok].to_numpy()
        order = np.sort(d)
        k = th.a3_min_items
        if len(order) < 2 * k:
            continue
        lo, hi = pd.Timestamp(order[k - 1]) + g, pd.Timestamp(order[-k]) - g - pd.Timedelta(days=1)
        if lo > hi:
            continue
        days = lo + pd.to_timedelta(np.arange((hi - lo).days + 1), unit="D")
        n_pre_at = np.searchsorted(order, (days - g).to_numpy(), side="right")
        n_post_at = len(order) - np.searchsorted(order, (days + g).to_numpy(), side="right")
        usable = (n_pre_at >= k) & (n_post_at >= k)
        target = _target_windows(matrix, dates, cutoffs, th)
        if target is not None:
            near = usable & (n_pre_at >= 0.8 * target) & (n_pre_at <= 1.2 * target)
            usable = near if near.any() else usable
        choices = days[usable]
        if not len(choices):
            continue
        m = len(clean)
        fakes = choices[rng.integers(0, len(choices), size=trials)]
        tested = np.arange(trials) % m
        stats_by_gain: dict[float, dict[str, list]] = {gain: {"p": [], "flag": [], "se": [], "n": []} for gain in gains}
        for t in range(trials):
            f = fakes[t]
            pre = d <= (f - g).to_datetime64()
            post = d > (f + g).to_datetime64()
            j = int(tested[t])
            # the unplanted family at this cutoff: every clean model against the others
            base = _one_cutoff(y, d, pre, post, th)
            for gain in gains:
                y2 = y.copy()
                y2[:, j] = plant_gain(y[:, j], pre, gain)
                res = _one_cutoff(y2, d, pre, post, th, only=j)
                if not np.isfinite(res["p"][j]):      # untestable there (a3_one would not test it)
                    continue
                p_all = base["p"].copy()
                p_all[j] = res["p"][j]
                eff, se = res["effect"][j], res["se"][j]
                q = benjamini_hochberg(p_all)[j]
                flag = bool(np.isfinite(q) and q <= th.fdr_q and eff >= th.min_effect and eff >= th.min_effect_se * se)
                st = stats_by_gain[gain]
                st["p"].append(res["p"][j])
                st["flag"].append(flag)
                st["se"].append(se)
                st["n"].append((int(pre.sum()), int(post.sum())))
        z95, z80 = stats.norm.ppf(0.95), stats.norm.ppf(0.80)
        for gain in gains:
            st = stats_by_gain[gain]
            p_arr = np.asarray(st["p"], dtype=float)
            hits05 = int(np.sum(p_arr < 0.05))
            hits_flag = int(np.sum(st["flag"]))
            se_med = float(np.nanmedian(st["se"]))
            z_bh = stats.norm.isf(th.fdr_q / m)
            done = len(p_arr)           # trials whose planted model A3 tests
            if not done:
                continue
            p05, p05_lo, p05_hi = _wilson(hits05, done)
            fl, fl_lo, fl_hi = _wilson(hits_flag, done)
            n = np.asarray(st["n"], dtype=float)
            rows.append({"source": source, "benchmark": bench, "planted": gain, "trials": done,
                         "n_pre": float(n[:, 0].mean()), "n_post": float(n[:, 1].mean()), "se_total": se_med,
                         "p05": p05, "p05_lo": p05_lo, "p05_hi": p05_hi, "flag": fl, "flag_lo": fl_lo,
                         "flag_hi": fl_hi, "mde_p05": (z95 + z80) * se_med,
                         "mde_flag": max((z_bh + z80) * se_med, th.min_effect, th.min_effect_se * se_med),
                         "family": m})
    return pd.DataFrame(rows, columns=POWER_COLUMNS)


def _one_cutoff(y: np.ndarray, d: np.ndarray, pre: np.ndarray, post: np.ndarray, th: Thresholds,
                only: int | None = None) -> dict[str, np.ndarray]:
    """A3 of every clean model (or of `only`) against the others at one cutoff, as in `a3_one`:
    effect, calibrated SE and p per model (NaN where not computed)."""
    m = y.shape[1]
    who = range(m) if only is None else [only]
    targets, masks = [], []
    for j in who:                        # problem (j, j): j tested; (j, r): placebo r without j
        for r in range(m):
            mask = np.ones(m, dtype=bool)
            mask[[j, r]] = False
            targets.append(r)
            masks.append(mask)
    clusters = np.arange(len(d)) if th.a3_null == "item_normal" else d
    core = a3_core(y, pre[:, None], post[:, None], clusters, np.array(targets), np.array(masks))
    eff = core["effect"][0].reshape(-1, m)          # (len(who), r)
    ses = core["se"][0].reshape(-1, m)
    out = {k: np.full(m, np.nan) for k in ("effect", "se", "p")}
    for row, j in enumerate(who):
        keep = np.arange(m) != j
        p, _, _, se = _a3_p(eff[row, j:j + 1], ses[row, j:j + 1], eff[row, keep][None], ses[row, keep][None], th)
        untestable = bool(core["above_range"][0].reshape(-1, m)[row, j])   # as a3_one: no test
        out["effect"][j], out["se"][j], out["p"][j] = eff[row, j], se[0], (np.nan if untestable else p[0])
    return out

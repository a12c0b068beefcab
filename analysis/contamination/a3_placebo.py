"""A3's placebo on real items (`benchwatch calibrate`, and `analyze`'s calibration of each item
set: analysis.contamination.set_calibration): models whose trusted cutoff precedes every item of
a set are clean; fake cutoffs split their items, and each is tested against the others with A3's
own test (analysis.contamination.a3), so every placebo p is a false positive by construction.
docs/statistics.md, "Placebo calibration"."""

from __future__ import annotations

from typing import Iterator

import numpy as np
import pandas as pd

from analysis.constants import A3_MIN_REF_COVERAGE
from analysis.contamination.a3 import (_a3_frame, _a3_p, above_range, reference_cutoffs, smoother_weights,
                                        window_ability)
from analysis.contamination.base import PLACEBO_COLUMNS, Thresholds
from analysis.cutoffs import guard


def clean_models(matrix: pd.DataFrame, ref_cut: pd.Series, before: pd.Timestamp) -> list[str]:
    """The models of an item matrix that are clean for placebos: a trusted cutoff (`ref_cut`,
    `reference_cutoffs`) earlier than `before` (the first item minus the guard band) and items
    covered at A3_MIN_REF_COVERAGE at least."""
    return [mdl for mdl in matrix.columns if mdl in ref_cut.index and pd.notna(ref_cut[mdl])
            and ref_cut[mdl] < before and matrix[mdl].notna().mean() >= A3_MIN_REF_COVERAGE]


def placebo_sets(items: pd.DataFrame, cutoffs: pd.DataFrame, now: pd.Timestamp,
                 g: pd.Timedelta) -> Iterator[tuple[str, str, pd.DataFrame, pd.Series, list[str]]]:
    """Each item set of A3 (source, benchmark, model × item matrix, item dates) with its clean
    models (`clean_models`, guard band `g`): what the placebo and the power study draw from."""
    ref_cut = reference_cutoffs(cutoffs)
    for (source, bench), (matrix, dates, _) in _a3_frame(items, now).items():
        yield source, bench, matrix, dates, clean_models(matrix, ref_cut, dates.min() - g)


def _a3_placebo_frame(matrix: pd.DataFrame, dates: pd.Series, clean: list[str], fakes: np.ndarray,
                      th: Thresholds) -> dict[str, np.ndarray]:
    """A3 with fake cutoffs `fakes` (T,) on every clean model at once, vectorized over trials.

    Each clean model is tested with the other clean models as references; its null scale comes
    from each reference tested against the rest (never the tested model), as in `a3_one`.
    Returns arrays (T, M): effect, se (calibrated), p_value.

    The M² problems of a trial ((j, j): j tested; (j, r): placebo r without j) are solved in
    blocks of tested models (`_contest_core`), so what a block holds is bounded by PLACEBO_BLOCK
    whatever the number of clean models and items.
    """
    g = guard(th.guard_days)
    ok = matrix[clean].notna().all(axis=1) & dates.notna()
    y = matrix.loc[ok, clean].to_numpy(float)
    d = dates[ok].to_numpy()
    clusters = np.arange(len(d)) if th.a3_null == "item_normal" else d
    m = len(clean)
    t_all = len(fakes)
    out = {k: np.full((t_all, m), np.nan) for k in ("effect", "se", "p_value")}
    width = max(1, m, len(d))     # a problem's row: its weights (M) or its contest sums (up to n)
    trials_at_once = max(1, PLACEBO_BLOCK // max(1, m * m * width))
    owners_at_once = max(1, PLACEBO_BLOCK // max(1, m * width))
    for lo in range(0, t_all, trials_at_once):
        f = fakes[lo:lo + trials_at_once]
        pre = d[:, None] <= (f - g)[None, :]
        post = d[:, None] > (f + g)[None, :]
        good = (pre.sum(axis=0) >= th.a3_min_items) & (post.sum(axis=0) >= th.a3_min_items)
        if not good.any():
            continue
        parts = [_contest_core(y, pre[:, good], post[:, good], clusters, np.arange(j0, min(m, j0 + owners_at_once)))
                 for j0 in range(0, m, owners_at_once)]
        eff, ses, above = (np.concatenate([p[k] for p in parts], axis=1) for k in ("effect", "se", "above_range"))
        eye = np.eye(m, dtype=bool)
        p, _, _, se = _a3_p(eff[:, eye], ses[:, eye], eff[:, ~eye].reshape(-1, m, m - 1),
                            ses[:, ~eye].reshape(-1, m, m - 1), th)
        rows = np.arange(lo, lo + len(f))[good]
        out["effect"][rows] = eff[:, eye]
        out["se"][rows] = se
        out["p_value"][rows] = np.where(above[:, eye], np.nan, p)     # untestable, as in a3_one
    return out


# Floats one array of a block of the placebo holds at most (trials × problems × the larger of the
# models and the items): its smoother's design matrices and its contest sums.
PLACEBO_BLOCK = 4_000_000


def _contest_core(y: np.ndarray, pre: np.ndarray, post: np.ndarray, clusters: np.ndarray,
                  owners: np.ndarray) -> dict[str, np.ndarray]:
    """`a3_core`'s effect, clustered SE and above-range flag for the placebo problems of the
    tested models `owners` (J,) among the M clean models of y (n, M): (j, r) for r in 0..M-1,
    r tested against every model but j and r. Arrays (T, J, M).

    The same statistic as `a3_core`, summed per contest instead of per item: with B_c the sum of
    y over the window's items of contest c (k_c of them), the contest sum of u_i = y_i,r - Σ w y_i
    is U_c = B_c,r - B_c · w, the window mean is Σ_c U_c / n_w and the contest deviation sums
    U_c - k_c · mean; nothing items × problems large is made (a3_core's u is n × M² per trial).
    Equal to a3_core's numbers up to rounding.
    """
    m = y.shape[1]
    ability = window_ability(y, post)                                                  # (T, M)
    targets = np.tile(np.arange(m), len(owners))
    masks = np.ones((len(targets), m), dtype=bool)
    masks[np.arange(len(targets)), np.repeat(owners, m)] = False
    masks[np.arange(len(targets)), targets] = False
    w, _ = smoother_weights(ability, masks, ability[:, targets])                      # (T, P, M)
    _, codes = np.unique(clusters, return_inverse=True)
    order = np.argsort(codes, kind="stable")
    starts = np.flatnonzero(np.r_[True, codes[order][1:] != codes[order][:-1]])
    mean, var = [], []
    for window in (pre, post):
        win = window.T.astype(float)                                                    # (T, n)
        b = np.add.reduceat(win[:, order, None] * y[order][None], starts, axis=1)     # (T, C, M)
        k = np.add.reduceat(win[:, order], starts, axis=1)                             # (T, C)
        c_eff = (k > 0).sum(axis=1).astype(float)
        corr = np.where(c_eff > 1, c_eff / np.maximum(c_eff - 1, 1), np.nan)
        used = (k > 0).any(axis=0)               # the window's contests (the others add zeros)
        b, k = b[:, used], k[:, used]
        u = b @ w.transpose(0, 2, 1)                                                    # (T, C, P)
        np.subtract(b[:, :, targets], u, out=u)
        cnt = win.sum(axis=1)[:, None]
        mu = u.sum(axis=1) / cnt
        u -= k[:, :, None] * mu[:, None, :]                                             # the deviations' sums
        mean.append(mu)
        var.append((u * u).sum(axis=1) / cnt ** 2 * corr[:, None])
    above = above_range(ability, masks, targets)
    shape = (pre.shape[1], len(owners), m)
    return {"effect": (mean[0] - mean[1]).reshape(shape), "se": np.sqrt(var[0] + var[1]).reshape(shape),
            "above_range": above.reshape(shape)}


def a3_placebo(items: pd.DataFrame, cutoffs: pd.DataFrame, *, rng: np.random.Generator, now: pd.Timestamp,
               trials: int, th: Thresholds = Thresholds()) -> pd.DataFrame:
    """Placebo A3 tests on real item data: models whose trusted cutoff (+ g) precedes every item
    are clean; each trial draws one fake cutoff per benchmark (uniform over the dates that leave
    `a3_min_items` on both sides) and tests every clean model against the others."""
    g = guard(th.guard_days)
    frames = [set_placebo(source, bench, matrix, dates, clean, rng=rng, trials=trials, th=th)
              for source, bench, matrix, dates, clean in placebo_sets(items, cutoffs, now, g)]
    frames = [f for f in frames if f is not None]
    out = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=PLACEBO_COLUMNS)
    return out[out["p_value"].notna()] if len(out) else out


def set_placebo(source: str, bench: str, matrix: pd.DataFrame, dates: pd.Series, clean: list[str], *,
                rng: np.random.Generator, trials: int, th: Thresholds) -> pd.DataFrame | None:
    """The placebo tests of one item set (`placebo_sets`' tuple): `trials` fake cutoffs drawn from
    `rng` (uniform over the days that leave `a3_min_items` on both sides), every clean model tested
    against the others at each; None (and nothing drawn) when the set allows no placebo: fewer than
    a3_min_ref_models + 1 clean models or too few dated items."""
    g = guard(th.guard_days)
    d = np.sort(dates.dropna().to_numpy())
    k = th.a3_min_items
    if len(clean) < th.a3_min_ref_models + 1 or len(d) < 2 * k:
        return None
    lo = pd.Timestamp(d[k - 1]) + g
    hi = pd.Timestamp(d[-k]) - g - pd.Timedelta(days=1)
    if lo > hi:
        return None
    fakes = (lo + pd.to_timedelta(rng.integers(0, (hi - lo).days + 1, size=trials), unit="D")).to_numpy()
    res = _a3_placebo_frame(matrix, dates, clean, fakes, th)
    return pd.DataFrame({
        "trial": np.repeat(np.arange(trials), len(clean)), "signal": "A3", "source": source, "benchmark": bench,
        "model": np.tile(clean, trials), "effect": res["effect"].ravel(), "se": res["se"].ravel(),
        "p_value": res["p_value"].ravel(), "gate": True})

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
from analysis.contamination.a3 import _a3_frame, _a3_p, a3_core, reference_cutoffs
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
    """
    g = guard(th.guard_days)
    ok = matrix[clean].notna().all(axis=1) & dates.notna()
    y = matrix.loc[ok, clean].to_numpy(float)
    d = dates[ok].to_numpy()
    clusters = np.arange(len(d)) if th.a3_null == "item_normal" else d
    m = len(clean)
    targets, masks, owner = [], [], []
    for j in range(m):                   # problem (j, j): j tested; (j, r): placebo r without j
        for r in range(m):
            mask = np.ones(m, dtype=bool)
            mask[[j, r]] = False
            targets.append(r)
            masks.append(mask)
            owner.append(j)
    target_idx, ref_masks = np.array(targets), np.array(masks)
    t_all = len(fakes)
    out = {k: np.full((t_all, m), np.nan) for k in ("effect", "se", "p_value")}
    chunk = max(1, int(4e6 // max(1, len(d) * len(targets))))
    for lo in range(0, t_all, chunk):
        f = fakes[lo:lo + chunk]
        pre = d[:, None] <= (f - g)[None, :]
        post = d[:, None] > (f + g)[None, :]
        good = (pre.sum(axis=0) >= th.a3_min_items) & (post.sum(axis=0) >= th.a3_min_items)
        if not good.any():
            continue
        core = a3_core(y, pre[:, good], post[:, good], clusters, target_idx, ref_masks)
        eff = core["effect"].reshape(-1, m, m)          # (T, j, r)
        ses = core["se"].reshape(-1, m, m)
        eye = np.eye(m, dtype=bool)
        p, _, _, se = _a3_p(eff[:, eye], ses[:, eye], eff[:, ~eye].reshape(-1, m, m - 1),
                            ses[:, ~eye].reshape(-1, m, m - 1), th)
        rows = np.arange(lo, lo + len(f))[good]
        above = core["above_range"].reshape(-1, m, m)[:, eye]     # untestable, as in a3_one
        out["effect"][rows] = core["effect"].reshape(-1, m, m)[:, eye]
        out["se"][rows] = se
        out["p_value"][rows] = np.where(above, np.nan, p)
    return out


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

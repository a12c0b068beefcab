"""Saturation index of a benchmark (Akhtar, Reuel et al. 2026, "When AI Benchmarks Plateau", §2.2).

For the top-k scores s1 >= ... >= sk (proportions) on a test set of n items::

    n_eff   = n ** alpha                        (alpha = 0.5: the paper's default, sqrt(n))
    SE(s)   = sqrt(s (1 - s) / n_eff)           (0 at s in {0, 1}, as the paper's analyzer)
    SE_D    = sqrt(SE(s1)^2 + SE(sk)^2)
    R_norm  = (s1 - sk) / max(SE_D, eps)        (SE_D = 0 only when s1, sk in {0, 1})
    S_index = exp(-R_norm^2)

Bins (analysis.constants): very low < 0.01 <= low < 0.3 <= moderate < 0.7 <= high < 0.9 <=
very high. "Statistically similar": s1 - sk <= z * SE_D.

The edge case SE_D = 0: the paper's analyzer (saturation_utils.py) returns R_norm = 0 there,
which is right when s1 == sk (both 0 or both 1: nothing separates the models) but says
"fully saturated" for s1 = 1, sk = 0. Dividing by a tiny epsilon instead keeps the first
(R_norm = 0, S = 1) and gives S = 0 for the second. None of the paper's 60 benchmarks is
affected; all 60 rows of its table are reproduced.

Uncertainty for scores that are not a mean over a fixed test set: a published standard
error, or a published 95% CI as (high - low) / (2 * 1.96), is used directly as that model's
SE, on the metric's own scale (Elo, AlpacaEval, Epoch). pass@k scores use the number of
problems as n. Every result says where its SE came from (`uncertainty`):
``binomial(n_eff=n^alpha)``, ``published_stderr``, or ``assumed`` when n is a nominal size
rather than a fixed test set the scores average over (a dynamic benchmark). Without n and
without a published SE there is no index, never a silent default n.

One scale per table (`scale`, `comparable`): only a proportion over a known test set of n
items is on the paper's scale (``paper_binomial``) and comparable with the paper's table and
across benchmarks. S from published SEs (``published_stderr``: another n_eff, often n itself)
or from a nominal n (``assumed_n``) is stored and shown, but labelled not comparable.

How firm the bin is (`bin_stability`): the share of re-evaluations, under the real sampling
noise at n items, whose S falls in each bin. It replaces a bootstrap "SE" that perturbed
scores with the deflated n_eff noise and so was neither centred on S nor a standard error.
"""

from __future__ import annotations

import logging
import math
import zlib
from dataclasses import asdict, dataclass
from statistics import NormalDist
from typing import Any, Iterable, Sequence, cast

import numpy as np
import pandas as pd

from analysis.constants import (
    NO_INDEX_METRICS,
    PUBLISHED_CI_Z,
    SATURATED_BINS,
    SATURATION_ALPHA,
    SATURATION_BIN_EDGES,
    SATURATION_BINS,
    SATURATION_K,
    SATURATION_RESAMPLE_DRAWS,
    SATURATION_RESAMPLE_PRUNE_EPSILON,
    SATURATION_Z,
    SE_DELTA_EPSILON,
    STAGNATION_MIN_HEADROOM,
)

log = logging.getLogger("benchwatch.analysis.saturation")

PROPORTION = "proportion"
UNCERTAINTY_BINOMIAL = "binomial(n_eff=n^alpha)"
UNCERTAINTY_PUBLISHED = "published_stderr"
UNCERTAINTY_ASSUMED = "assumed"
SCALE_PAPER = "paper_binomial"          # proportion, known n, n_eff = n^alpha: comparable
SCALE_PUBLISHED = "published_stderr"    # published SEs (Elo, judge scores, n unknown): not comparable
SCALE_ASSUMED = "assumed_n"             # nominal n of a dynamic benchmark: not comparable
NOISE_BINOMIAL = "binomial(n)"          # bin_stability: each score redrawn as Binomial(n, s) / n
NOISE_PUBLISHED = "normal(published_stderr)"   # ... or as N(s, published SE)


# --- formulas (vectorized; the scalar and the history paths both go through here) ---------

def saturation_bin(s_index: float) -> str:
    """The paper's category of one S_index value."""
    if not 0.0 <= s_index <= 1.0:
        raise ValueError(f"S_index must be in [0, 1], got {s_index!r}")
    return SATURATION_BINS[bin_index(s_index)]


def bin_index(s_index: float | np.ndarray) -> int | np.ndarray:
    """Index into SATURATION_BINS: the number of bin edges <= s (edges belong to the upper bin)."""
    idx = np.searchsorted(np.asarray(SATURATION_BIN_EDGES), s_index, side="right")
    return int(idx) if np.ndim(idx) == 0 else idx


def binomial_se(s: float | np.ndarray, n_eff: float | np.ndarray) -> np.ndarray:
    """SE(s) = sqrt(s (1 - s) / n_eff); 0 at s in {0, 1}."""
    s = np.asarray(s, dtype="float64")
    return np.sqrt(np.clip(s * (1.0 - s), 0.0, None) / n_eff)


def published_se(stderr, ci_low=None, ci_high=None) -> np.ndarray:
    """A model's SE from what its leaderboard publishes: the stderr, else a 95% CI's width / (2 * 1.96).

    NaN where neither is published. Same unit as the score.
    """
    se = np.asarray(pd.to_numeric(pd.Series(stderr), errors="coerce"), dtype="float64")
    if ci_low is not None and ci_high is not None:
        lo = np.asarray(pd.to_numeric(pd.Series(ci_low), errors="coerce"), dtype="float64")
        hi = np.asarray(pd.to_numeric(pd.Series(ci_high), errors="coerce"), dtype="float64")
        from_ci = (hi - lo) / (2.0 * PUBLISHED_CI_Z)
        from_ci = np.where(from_ci > 0, from_ci, np.nan)
        se = np.where(np.isfinite(se) & (se >= 0), se, from_ci)
    return np.where(np.isfinite(se) & (se >= 0), se, np.nan)


def index_arrays(s1, sk, se1, sek, z: float = SATURATION_Z) -> dict[str, np.ndarray]:
    """SE_delta, R_norm, S_index, bin and statistical similarity from the top and k-th score and their SEs."""
    s1 = np.asarray(s1, dtype="float64")
    sk = np.asarray(sk, dtype="float64")
    se_delta = np.sqrt(np.asarray(se1, dtype="float64") ** 2 + np.asarray(sek, dtype="float64") ** 2)
    delta = s1 - sk
    r_norm = delta / np.maximum(se_delta, SE_DELTA_EPSILON)
    s_index = np.exp(-(r_norm ** 2))
    labels = np.asarray(SATURATION_BINS, dtype=object)[bin_index(s_index)]
    return {"se_delta": se_delta, "r_norm": r_norm, "s_index": s_index, "bin": labels,
            "statistically_similar": delta <= z * se_delta}


def uncertainty_label(published_top: bool, published_kth: bool, n_assumed: bool) -> str:
    """Where the SEs of s1 and sk came from (stored with every result)."""
    binomial = UNCERTAINTY_ASSUMED if n_assumed else UNCERTAINTY_BINOMIAL
    if published_top and published_kth:
        return UNCERTAINTY_PUBLISHED
    if published_top or published_kth:
        return f"{UNCERTAINTY_PUBLISHED}+{binomial}"
    return binomial


def scale_of(uncertainty: str | None) -> str | None:
    """The S scale an `uncertainty` label puts a result on; only SCALE_PAPER is comparable.

    S is a ratio of the top-k spread to SE_delta, so it depends on which SEs were used: the
    paper's binomial with n_eff = n^alpha at a known n, or anything else.
    """
    if uncertainty is None:
        return None
    if uncertainty == UNCERTAINTY_BINOMIAL:
        return SCALE_PAPER
    if UNCERTAINTY_PUBLISHED in uncertainty:
        return SCALE_PUBLISHED
    return SCALE_ASSUMED


def _check_params(k: int, alpha: float, z: float) -> None:
    if int(k) != k or k < 2:
        raise ValueError(f"k must be an integer >= 2, got {k!r}")
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha!r}")
    if not z > 0:
        raise ValueError(f"z must be positive, got {z!r}")


def _check_n(n_items) -> float | None:
    """A usable test-set size, None when unknown; an impossible one is an error."""
    if n_items is None or n_items is pd.NA or (isinstance(n_items, float) and math.isnan(n_items)):
        return None
    n = float(n_items)
    if not n > 0 or not math.isfinite(n):
        raise ValueError(f"n_items must be a positive number of test items, got {n_items!r}")
    return n


# --- one benchmark ---------------------------------------------------------------------

@dataclass(frozen=True)
class SaturationResult:
    """The saturation of one benchmark at one time, with everything that produced it.

    `s_index` is None when it cannot be computed; `reason` then says why.
    """

    s_index: float | None
    r_norm: float | None
    se_delta: float | None
    bin: str | None
    statistically_similar: bool | None
    saturated: bool | None
    stagnation: bool | None        # saturated while the frontier is far below the ceiling
    headroom: float | None         # (ceiling - s1) / (ceiling - chance)
    s1: float | None
    sk: float | None
    top_scores: tuple[float, ...]
    n_models: int
    n_items: float | None
    n_eff: float | None
    k: int
    alpha: float
    z: float
    metric: str
    uncertainty: str | None
    reason: str | None
    scale: str | None = None            # SCALE_PAPER | SCALE_PUBLISHED | SCALE_ASSUMED (None: no index)
    comparable: bool | None = None      # on the paper's scale: ranked with the paper and each other

    def to_dict(self) -> dict:
        d = asdict(self)
        d["top_scores"] = list(self.top_scores)
        return d


def saturation_index(scores: Iterable[float], n_items: float | None, k: int = SATURATION_K,
                     alpha: float = SATURATION_ALPHA, z: float = SATURATION_Z, *,
                     stderrs: Sequence[float | None] | None = None, metric: str = PROPORTION,
                     ceiling: float | None = None, chance: float | None = None,
                     n_assumed: bool = False) -> SaturationResult:
    """The paper's S_index over the top k of `scores` (one score per model, any order).

    `scores` are proportions in [0, 1] for metric 'proportion', else on the metric's own
    scale (then every SE must come from `stderrs`). `stderrs[i]` is model i's published SE
    (None/NaN: none), used only where the paper's binomial SE cannot be formed (n unknown,
    or a metric that is not a proportion): a known n keeps n_eff = n^alpha for every model. `ceiling`/`chance`
    default to 1/0 for proportions; they give the headroom and the stagnation flag.
    `n_assumed`: n is a nominal size, not a fixed test set (labelled ``assumed``).
    """
    _check_params(k, alpha, z)
    n = _check_n(n_items)
    given = list(scores)
    s = np.asarray(pd.to_numeric(pd.Series(given, dtype="object"), errors="coerce"), dtype="float64")
    if not np.isfinite(s).all():
        raise ValueError(f"scores must be finite numbers, got {given!r}")
    if metric == PROPORTION and ((s < 0) | (s > 1)).any():
        raise ValueError(f"proportion scores must be in [0, 1] (convert percents first), got {s.tolist()!r}")
    if stderrs is None:
        se_pub = np.full(len(s), np.nan)
    else:
        se_pub = published_se(list(stderrs))
        if len(se_pub) != len(s):
            raise ValueError(f"stderrs has {len(se_pub)} values for {len(s)} scores")
    if metric == PROPORTION:
        ceiling = 1.0 if ceiling is None else float(ceiling)
        chance = 0.0 if chance is None else float(chance)

    order = np.argsort(-s, kind="stable")
    s, se_pub = s[order], se_pub[order]
    top = tuple(float(v) for v in s[:k])
    n_eff = None if n is None else n ** alpha
    base: dict[str, Any] = dict(top_scores=top, n_models=len(s), n_items=n, n_eff=n_eff, k=int(k),
                                alpha=float(alpha), z=float(z), metric=metric)

    def without(reason: str) -> SaturationResult:
        return SaturationResult(s_index=None, r_norm=None, se_delta=None, bin=None, statistically_similar=None,
                                saturated=None, stagnation=None, headroom=None,
                                s1=top[0] if top else None, sk=top[k - 1] if len(top) >= k else None,
                                uncertainty=None, reason=reason, **base)

    if metric in NO_INDEX_METRICS:
        return without(NO_INDEX_METRICS[metric])
    if len(s) < k:
        return without(f"only {len(s)} model score(s), fewer than k={k}")
    s1, sk = s[0], s[k - 1]
    pub1, pubk = bool(np.isfinite(se_pub[0])), bool(np.isfinite(se_pub[k - 1]))
    if metric == PROPORTION and n is not None:
        # A mean over a known test set keeps the paper's n_eff = n^alpha, so S stays comparable
        # across benchmarks and with the paper; a published SE (n_eff = n) is a different scale.
        pub1 = pubk = False
    if not (pub1 and pubk):
        if metric != PROPORTION:
            return without(f"metric {metric!r} is not a proportion and the top-{k} scores lack a published "
                           "stderr or CI")
        if n is None:
            return without("test-set size n unknown and no published stderr")
    # without a published SE the returns above left a proportion with its n: n_eff is set
    se1 = se_pub[0] if pub1 else float(binomial_se(s1, cast(float, n_eff)))
    sek = se_pub[k - 1] if pubk else float(binomial_se(sk, cast(float, n_eff)))
    out = index_arrays(s1, sk, se1, sek, z)
    label = str(out["bin"])
    headroom = None
    if ceiling is not None and chance is not None and ceiling > chance:
        headroom = float((ceiling - s1) / (ceiling - chance))
    saturated = label in SATURATED_BINS
    uncertainty = uncertainty_label(pub1, pubk, n_assumed and not (pub1 and pubk))
    scale = scale_of(uncertainty)
    return SaturationResult(
        s_index=float(out["s_index"]), r_norm=float(out["r_norm"]), se_delta=float(out["se_delta"]), bin=label,
        statistically_similar=bool(out["statistically_similar"]), saturated=saturated,
        stagnation=None if headroom is None else bool(saturated and headroom >= STAGNATION_MIN_HEADROOM),
        headroom=headroom, s1=float(s1), sk=float(sk),
        uncertainty=uncertainty, reason=None, scale=scale, comparable=scale == SCALE_PAPER, **base)


@dataclass(frozen=True)
class BinStability:
    """How firm a benchmark's bin is under the real sampling noise of one re-evaluation.

    `bin_probs[i]`: share of draws whose recomputed S falls in SATURATION_BINS[i];
    `bin_hold_prob`: that share for the observed bin. `noise`, `draws`, `seed` reproduce it:
    ``np.random.default_rng(seed)`` is the generator used.
    """

    bin_probs: tuple[float, ...]
    bin_hold_prob: float
    noise: str
    draws: int
    seed: int


# Gaussian tail z with P(Z >= z) = SATURATION_RESAMPLE_PRUNE_EPSILON (about 7.03)
PRUNE_NORMAL_Z = -NormalDist().inv_cdf(SATURATION_RESAMPLE_PRUNE_EPSILON)


def reachable_models(s: np.ndarray, up: np.ndarray | float, down: np.ndarray | float, k: int) -> np.ndarray:
    """Mask of the models that can enter a draw's top k, given tail widths of each model's draw.

    `up[i]`/`down[i]`: model i's draw exceeds s_i + up_i (falls below s_i - down_i) with
    probability <= eps each. Model i is left out when s_i + up_i < min over the observed top k
    of (s_j - down_j): unless i rises by up_i or a top-k model falls by its down_j, k models beat
    i strictly, so i is not in that draw's top k. Over all models, one draw's top k differs from
    a redraw of every model with probability <= (models) * eps. The observed top k are always kept.
    """
    up, down = np.broadcast_to(up, s.shape), np.broadcast_to(down, s.shape)
    top = np.argsort(-s, kind="stable")[:k]
    return s + up >= np.min(s[top] - down[top])


def bin_stability(scores: Iterable[float], n_items: float | None, k: int = SATURATION_K,
                  alpha: float = SATURATION_ALPHA, *, stderrs: Sequence[float | None] | None = None,
                  metric: str = PROPORTION, n_assumed: bool = False, seed: int,
                  draws: int = SATURATION_RESAMPLE_DRAWS, prune: bool = True) -> BinStability | None:
    """P(S falls in each bin) if every model were re-evaluated once, at the real sampling noise.

    Per draw: each model's score is redrawn, s* = Binomial(n, s) / n where S uses the binomial
    SE (the noise of a fresh test set of n items, n_eff = n, not the paper's deflated n^alpha),
    or s* ~ N(s, its published SE) where S uses published SEs; the top k are re-selected from
    all models; S* is recomputed with the index's own convention (n_eff = n^alpha). Returns
    None when there is no index, or when published SEs are needed but some model lacks one.
    This is a plug-in probability (the observed scores are taken as the true ones), not a
    standard error and not a confidence level for S.

    `prune` (default) redraws only the models that can reach a top k (`reachable_models`), with
    eps = SATURATION_RESAMPLE_PRUNE_EPSILON per tail: Hoeffding's delta = sqrt(ln(1/eps) / (2n))
    for Binomial(n, s)/n (P(X/n - s >= delta) <= exp(-2 n delta^2) = eps, either tail), or z * SE_i
    with P(Z >= z) = eps for N(s_i, SE_i) (clipping to [0, 1] keeps the order). The result then
    has the distribution of the full redraw except on an event of probability
    <= draws * models * eps (4e-6 at 2,000 x 2,000); with nothing left out the draws are
    identical. Fewer columns drawn move the numbers within Monte Carlo error.
    """
    if int(draws) != draws or draws < 1:
        raise ValueError(f"draws must be a positive integer, got {draws!r}")
    values = list(scores)
    base = saturation_index(values, n_items, k, alpha, stderrs=stderrs, metric=metric, n_assumed=n_assumed)
    if base.s_index is None:
        return None
    s = np.asarray(values, dtype="float64")
    rng = np.random.default_rng(seed)
    if base.uncertainty == UNCERTAINTY_PUBLISHED:
        se = published_se(list(cast(Sequence[float | None], stderrs)))   # published: given
        if not np.isfinite(se).all():
            log.info("[saturation] bin stability: %d of %d models lack a published SE; not resampled",
                     int((~np.isfinite(se)).sum()), len(se))
            return None
        if prune:
            keep = reachable_models(s, PRUNE_NORMAL_Z * se, PRUNE_NORMAL_Z * se, k)
            s, se = s[keep], se[keep]
        redrawn = rng.normal(s, se, size=(int(draws), len(s)))
        if metric == PROPORTION:
            redrawn = np.clip(redrawn, 0.0, 1.0)
        rank = np.argsort(-redrawn, axis=1, kind="stable")[:, :k]
        top = np.take_along_axis(redrawn, rank, axis=1)
        se1, sek = se[rank[:, 0]], se[rank[:, k - 1]]          # each model keeps its own SE
        noise = NOISE_PUBLISHED
    else:
        n_items = cast(float, base.n_items)       # binomial noise: an index without a published SE has its n
        n = int(round(n_items))
        if prune:
            delta = math.sqrt(math.log(1.0 / SATURATION_RESAMPLE_PRUNE_EPSILON) / (2.0 * n))
            s = s[reachable_models(s, delta, delta, k)]
        redrawn = rng.binomial(n, np.clip(s, 0.0, 1.0), size=(int(draws), len(s))) / n
        # the k largest of each draw, best first: a partition then a sort of k columns (the
        # same values as a full sort of every model's draw, at O(models) per draw)
        part = np.partition(redrawn, redrawn.shape[1] - k, axis=1)[:, redrawn.shape[1] - k:] \
            if redrawn.shape[1] > k else redrawn
        top = -np.sort(-part, axis=1)[:, :k]
        n_eff = n_items ** alpha
        se1, sek = binomial_se(top[:, 0], n_eff), binomial_se(top[:, k - 1], n_eff)
        noise = NOISE_BINOMIAL.replace("n)", f"n={n})")
    s_star = index_arrays(top[:, 0], top[:, k - 1], se1, sek)["s_index"]
    probs = np.bincount(bin_index(s_star), minlength=len(SATURATION_BINS)) / float(draws)
    observed = SATURATION_BINS.index(base.bin)
    return BinStability(bin_probs=tuple(float(p) for p in probs), bin_hold_prob=float(probs[observed]),
                        noise=noise, draws=int(draws), seed=int(seed))


def stability_seed(base_seed: int, benchmark: str, scope: str) -> int:
    """The generator seed of one table's draws (`benchmark`: its table id): reproducible and
    independent of row order."""
    return int(zlib.crc32(f"{int(base_seed)}|{benchmark}|{scope}".encode()))


def with_tables(df: pd.DataFrame) -> pd.DataFrame:
    """`df` with a `table_id` column: the leaderboard table each row belongs to (registry.tables,
    set by the jobs). A frame without one is one table per benchmark (table_id = benchmark).
    Every statistic here is computed per table, never across tables (issue 20)."""
    if "table_id" in df.columns:
        return df
    return df.assign(table_id=df["benchmark"])

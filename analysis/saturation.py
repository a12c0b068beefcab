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
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from analysis.constants import (
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
    base = dict(top_scores=top, n_models=len(s), n_items=n, n_eff=n_eff, k=int(k), alpha=float(alpha),
                z=float(z), metric=metric)

    def without(reason: str) -> SaturationResult:
        return SaturationResult(s_index=None, r_norm=None, se_delta=None, bin=None, statistically_similar=None,
                                saturated=None, stagnation=None, headroom=None,
                                s1=top[0] if top else None, sk=top[k - 1] if len(top) >= k else None,
                                uncertainty=None, reason=reason, **base)

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
    se1 = se_pub[0] if pub1 else float(binomial_se(s1, n_eff))
    sek = se_pub[k - 1] if pubk else float(binomial_se(sk, n_eff))
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
        se = published_se(list(stderrs))
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
        n = int(round(base.n_items))
        if prune:
            delta = math.sqrt(math.log(1.0 / SATURATION_RESAMPLE_PRUNE_EPSILON) / (2.0 * n))
            s = s[reachable_models(s, delta, delta, k)]
        redrawn = rng.binomial(n, np.clip(s, 0.0, 1.0), size=(int(draws), len(s))) / n
        # the k largest of each draw, best first: a partition then a sort of k columns (the
        # same values as a full sort of every model's draw, at O(models) per draw)
        part = np.partition(redrawn, redrawn.shape[1] - k, axis=1)[:, redrawn.shape[1] - k:] \
            if redrawn.shape[1] > k else redrawn
        top = -np.sort(-part, axis=1)[:, :k]
        n_eff = base.n_items ** alpha
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


# --- a snapshot: every benchmark ----------------------------------------------------------

TABLE_COLUMNS = ["table_id", "benchmark", "as_of", "scope", "population", "k", "alpha", "z", "metric", "n_items", "n_assumed",
                 "n_models", "top_scores", "top_models", "top_variants", "s1", "sk", "se_delta", "r_norm", "s_index", "bin",
                 "statistically_similar", "saturated", "stagnation", "headroom", "uncertainty", "reason", "scale",
                 "comparable", "bin_probs", "bin_hold_prob", "resample_noise", "resample_draws", "resample_seed"]


def saturation_table(latest: pd.DataFrame, benchmarks: pd.DataFrame | None = None, *, k: int = SATURATION_K,
                     alpha: float = SATURATION_ALPHA, z: float = SATURATION_Z, as_of=None,
                     scope: str = "all", bootstrap_seed: int | None = 0) -> pd.DataFrame:
    """One row per table of `latest` (scope `scope`): its saturation, or the reason there is none.

    A table is `table_id` (registry.tables: benchmark, source, version; default: the
    benchmark): scores of two tables are never ranked together.

    `latest`: benchmark, model, score, metric, and optionally stderr, ci_low, ci_high,
    n_items, population/underlying (registry.identity; default: every row a model run) and
    model_raw/setting (to name the variant used). A model with several rows (efforts, labels,
    settings, aliases) counts once, with its best score; `top_models` are the canonical ids
    of the top k in rank order, `top_variants` the page row behind each. One row per
    (benchmark, population): model runs and agent systems are never ranked together, and
    systems naming one underlying model also give `systems_per_model` (each model once, its
    best system; see `with_populations`).
    `benchmarks` (the registry): id, n_items, ceiling, chance, optionally dynamic. n is the
    scores' own n_items (their most common value) else the registry's; a registry n of a
    dynamic benchmark is nominal, so its uncertainty is labelled ``assumed``.
    `bin_probs`/`bin_hold_prob` come from `bin_stability` (noise, draws and seed stored beside
    them), seeded per benchmark from `bootstrap_seed` (reproducible); None disables them.
    """
    _check_params(k, alpha, z)
    missing = {"benchmark", "model", "score", "metric"} - set(latest.columns)
    if missing:
        raise ValueError(f"saturation_table: latest scores lack column(s) {sorted(missing)}")
    df = latest.copy()
    for col in ("stderr", "ci_low", "ci_high", "n_items"):
        if col not in df.columns:
            df[col] = np.nan
    df = with_populations(with_tables(df[df["score"].notna()]))
    df["se_published"] = published_se(df["stderr"], df["ci_low"], df["ci_high"])
    reg = _registry_lookup(benchmarks)
    rows = []
    for (table, population), g in df.groupby(["table_id", "population"], sort=True):
        bench = g["benchmark"].iat[0]
        info = reg.get(bench, {})
        metrics = g["metric"].dropna().unique()
        if len(metrics) != 1:
            rows.append({**_reason_row(bench, k, alpha, z, len(g), "scores mix metric kinds "
                                       f"{sorted(map(str, metrics))}; not comparable"), "population": population,
                         "table_id": table})
            continue
        metric = str(metrics[0])
        # Best variant per model; ties broken by name so the ranking never depends on read order.
        order = ["score", "model"] + (["entity_variant"] if "entity_variant" in g.columns else [])
        best = g.sort_values(order, ascending=[False] + [True] * (len(order) - 1), kind="stable") \
                .drop_duplicates("model", keep="first")
        n, n_assumed = _benchmark_n(bench, g["n_items"], info)
        res = saturation_index(best["score"].to_numpy(), n, k, alpha, z, stderrs=best["se_published"].to_numpy(),
                               metric=metric, ceiling=info.get("ceiling"), chance=info.get("chance"),
                               n_assumed=n_assumed)
        d = res.to_dict()
        d.pop("n_eff")
        d.update(_stability_columns(best["score"].to_numpy(), n, k, alpha, best["se_published"].to_numpy(), metric,
                                    n_assumed, None if bootstrap_seed is None else
                                    stability_seed(bootstrap_seed, str(table) if population == "models"
                                                   else f"{table}|{population}", scope)))
        rows.append({"table_id": table, "benchmark": bench, **d, "n_assumed": n_assumed, "population": population,
                     "top_models": [str(m) for m in best["model"].iloc[:k]],
                     "top_variants": [str(v) for v in best["entity_variant"].iloc[:k]]})
    out = pd.DataFrame(rows, columns=[c for c in TABLE_COLUMNS if c not in ("as_of", "scope")])
    out.insert(2, "as_of", pd.Timestamp(as_of) if as_of is not None else pd.NaT)
    out.insert(3, "scope", scope)
    return out[TABLE_COLUMNS]


def _stability_columns(scores, n, k, alpha, stderrs, metric, n_assumed, seed) -> dict:
    """The bin-stability columns of one table row (all None without a seed or an index)."""
    st = None if seed is None else bin_stability(scores, n, k, alpha, stderrs=stderrs, metric=metric,
                                                  n_assumed=n_assumed, seed=seed)
    if st is None:
        return {"bin_probs": None, "bin_hold_prob": None, "resample_noise": None, "resample_draws": None,
                "resample_seed": None}
    return {"bin_probs": list(st.bin_probs), "bin_hold_prob": st.bin_hold_prob, "resample_noise": st.noise,
            "resample_draws": st.draws, "resample_seed": st.seed}


def _reason_row(bench: str, k: int, alpha: float, z: float, n_models: int, reason: str) -> dict:
    log.warning("[saturation] %s: no index: %s", bench, reason)
    return {"benchmark": bench, "k": k, "alpha": alpha, "z": z, "n_models": n_models, "top_scores": [],
            "top_models": [], "top_variants": [], "reason": reason}


POPULATION_MODELS, POPULATION_SYSTEMS, POPULATION_SYSTEMS_PER_MODEL = "models", "systems", "systems_per_model"


def with_populations(df: pd.DataFrame) -> pd.DataFrame:
    """Score rows labelled with the population they are ranked in, plus the per-model view of systems.

    `population` defaults to ``models`` (no column, or NULL). A ``systems`` row whose
    `underlying` model is known is repeated as a ``systems_per_model`` row whose model is that
    underlying model, so a top-k over that population counts each model once with its best
    system. `entity_variant` names the page row (model_raw, plus the setting when there is
    one; for a per-model row the system's name), recorded in `top_variants`.
    """
    out = df.copy()
    if "population" not in out.columns:
        out["population"] = POPULATION_MODELS
    out["population"] = out["population"].fillna(POPULATION_MODELS).astype(str)
    raw = out["model_raw"] if "model_raw" in out.columns else out["model"]
    raw = raw.where(raw.notna(), out["model"]).astype(str)
    if "setting" in out.columns:
        setting = out["setting"].fillna("").astype(str)
        raw = raw.where(setting.eq(""), raw + " [" + setting + "]")
    out["entity_variant"] = raw
    if "underlying" not in out.columns:
        return out
    per_model = out[out["population"].eq(POPULATION_SYSTEMS) & out["underlying"].notna()].copy()
    if per_model.empty:
        return out
    per_model["entity_variant"] = per_model["model"].astype(str)
    per_model["model"] = per_model["underlying"]
    per_model["population"] = POPULATION_SYSTEMS_PER_MODEL
    return pd.concat([out, per_model], ignore_index=True)


def _registry_lookup(benchmarks: pd.DataFrame | None) -> dict[str, dict]:
    """benchmark id -> {n_items, ceiling, chance, dynamic} with NaN/NA turned into None."""
    if benchmarks is None or benchmarks.empty:
        return {}
    if "id" not in benchmarks.columns:
        raise ValueError("saturation_table: the benchmarks registry frame needs an 'id' column")
    cols = [c for c in ("n_items", "ceiling", "chance", "dynamic") if c in benchmarks.columns]
    out = {}
    for rec in benchmarks[["id", *cols]].to_dict("records"):
        out[rec.pop("id")] = {c: (None if pd.isna(v) else v) for c, v in rec.items()}
    return out


def _benchmark_n(bench: str, n_col: pd.Series, info: Mapping) -> tuple[float | None, bool]:
    """(n, n_assumed): the scores' own test-set size when they state one, else the registry's."""
    stated = pd.to_numeric(n_col, errors="coerce").dropna()
    stated = stated[stated > 0]
    if len(stated):
        counts = stated.value_counts()
        if len(counts) > 1:
            log.info("[saturation] %s: scores state several test-set sizes %s; using the most common",
                        bench, sorted(counts.index.tolist()))
        top = counts[counts == counts.max()].index.max()
        return float(top), False
    n = info.get("n_items")
    if n is None:
        return None, False
    return float(n), bool(info.get("dynamic") or False)


def table_sizes(frame: pd.DataFrame, benchmarks: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per table of `frame` (benchmark, optionally table_id and n_items): n_items and n_assumed
    as `saturation_table` decides them (the rows' own most common n, else the registry's; a
    registry n of a dynamic benchmark is nominal). For tables whose n the latest scores do
    not give (a past release seen only in the history)."""
    reg = _registry_lookup(benchmarks)
    f = with_tables(frame)
    n_col = f["n_items"] if "n_items" in f.columns else pd.Series(np.nan, index=f.index)
    rows = []
    for table, g in f.assign(_n=n_col).groupby("table_id", sort=True):
        bench = g["benchmark"].iat[0]
        n, assumed = _benchmark_n(bench, g["_n"], reg.get(bench, {}))
        rows.append({"table_id": table, "n_items": n, "n_assumed": assumed})
    return pd.DataFrame(rows, columns=["table_id", "n_items", "n_assumed"])


# --- history reconstructed from model dates ------------------------------------------------

def _factorize_runs(values: np.ndarray, sort: bool) -> tuple[np.ndarray, np.ndarray]:
    """pd.factorize of an object array, hashing only the first value of each run of equal
    values (histories come grouped by benchmark: a few thousand runs, not a million rows)."""
    n = len(values)
    if n == 0:
        return np.zeros(0, dtype="int64"), np.zeros(0, dtype=object)
    heads = np.flatnonzero(np.r_[True, values[1:] != values[:-1]])
    codes, uniques = pd.factorize(values[heads], sort=sort)
    return np.repeat(codes, np.diff(np.r_[heads, n])), np.asarray(uniques, dtype=object)


def _history_rows(df: pd.DataFrame, group_cols: Sequence[str]) -> dict[str, np.ndarray]:
    """The usable rows of a history frame (score, model and date present), sorted by group then date.

    Arrays: score (float), date, se, group_code (consecutive per group) and model_code, in
    sorted order; `order` (sorted row -> input row) and the names (the group columns,
    benchmark, model, variant) as object arrays in input order, taken through `_at` only
    where an output needs them (a frame would convert a million names to pandas' str dtype).
    Rows lacking a score, model or date are left out with a warning naming their benchmarks.
    The order is that of a stable sort on (group columns, date): ties keep the input order.
    """
    need = {"benchmark", "model", "score", "date"} - set(df.columns)
    if need:
        raise ValueError(f"history frame lacks column(s) {sorted(need)}")
    cols = list(dict.fromkeys([*group_cols, "benchmark", "model"]))
    arrays = {c: df[c].to_numpy(dtype=object) for c in cols}
    arrays["score"] = pd.to_numeric(df["score"], errors="coerce").to_numpy(dtype="float64")
    arrays["date"] = pd.to_datetime(df["date"]).to_numpy()
    arrays["se"] = df["se"].to_numpy(dtype="float64") if "se" in df.columns else np.full(len(df), np.nan)
    arrays["variant"] = df["entity_variant"].to_numpy(dtype=object) if "entity_variant" in df.columns \
        else arrays["model"]
    dropped = np.isnan(arrays["score"]) | np.isnat(arrays["date"]) | pd.isna(arrays["model"])
    if dropped.any():
        log.warning("[saturation] history: %d row(s) without score, model or date left out "
                    "(benchmarks: %s)", int(dropped.sum()), sorted({str(b) for b in arrays["benchmark"][dropped]}))
        arrays = {c: a[~dropped] for c, a in arrays.items()}
    group_key = np.zeros(len(arrays["score"]), dtype="int64")
    for col in group_cols:                       # codes in value order, missing values last (as sort_values)
        codes, uniques = _factorize_runs(arrays[col], sort=True)
        group_key = group_key * (len(uniques) + 1) + np.where(codes < 0, len(uniques), codes)
    order = np.lexsort([arrays["date"].view("int64"), group_key])       # stable
    group_sorted = group_key[order]
    d = {"order": order, "score": arrays["score"][order], "date": arrays["date"][order], "se": arrays["se"][order],
         "group_code": np.cumsum(np.r_[False, group_sorted[1:] != group_sorted[:-1]]),
         "model_code": pd.factorize(arrays["model"])[0][order]}
    d.update({f"name:{c}": arrays[c] for c in [*cols, "variant"]})
    return d


def _at(d: dict[str, np.ndarray], col: str, rows: np.ndarray) -> np.ndarray:
    """The names of column `col` at sorted rows `rows` (see `_history_rows`)."""
    return d[f"name:{col}"][d["order"][rows]]


# Classes of models whose running maxima bound the k-th best score from below (`_topk_candidates`).
_BOUND_CLASSES_PER_K = 2
_BOUND_BLOCK_ROWS = 1 << 16


def _topk_candidates(group: np.ndarray, model: np.ndarray, score: np.ndarray, k: int) -> np.ndarray:
    """Rows that may change a running top k: every row but those at or below a lower bound of
    the k-th best score before them (such a row is skipped by the scan, which needs a full top
    k and a score above its k-th to act).

    The bound: models are split into C = 2k classes (model code mod C); the running maximum
    of each class within the group is one model's score, so the k-th largest of the C class
    maxima is the score of k distinct models, at most the k-th best model. Computed on score
    ranks offset by group (so a maximum carried over from an earlier group reads as absent)
    in blocks of rows, with NumPy only.
    """
    n = len(score)
    classes = _BOUND_CLASSES_PER_K * k
    if n == 0:
        return np.zeros(0, dtype=bool)
    rank = np.unique(score, return_inverse=True)[1].reshape(-1).astype("int64")
    span = int(rank.max()) + 1
    key = group.astype("int64") * span + rank
    floor = group.astype("int64") * span                       # keys below it belong to earlier groups
    cls = model % classes
    bound = np.empty(n, dtype="int64")
    carry = np.full(classes, -1, dtype="int64")
    for lo in range(0, n, _BOUND_BLOCK_ROWS):
        hi = min(n, lo + _BOUND_BLOCK_ROWS)
        m = np.full((hi - lo + 1, classes), -1, dtype="int64")
        m[0] = carry
        m[np.arange(1, hi - lo + 1), cls[lo:hi]] = key[lo:hi]
        np.maximum.accumulate(m, axis=0, out=m)
        carry = m[-1].copy()
        bound[lo:hi] = np.partition(m[:-1], classes - k, axis=1)[:, classes - k]   # before each row
    known = bound >= floor
    return ~(known & (key <= bound))


def _topk_scan(d: dict[str, np.ndarray], k: int) -> dict[str, np.ndarray]:
    """The running top k of the sorted rows `d` (see `_history_rows`: group_code, model_code), as arrays.

    One pass over the rows keeps the current top k per group in a dict (model -> (score,
    row)); a row at or below the k-th score of a full top k cannot change it and is skipped.
    `_topk_candidates` removes most such rows beforehand with array operations, so the Python
    pass visits only the rest, and only the rows that change the top k cost a sort of k
    entries. Each change records the top k (row numbers, best first); the state at the end of
    each (group, date) is then looked up with one `searchsorted`. Ties keep the earlier row
    (as a stable sort would): a model's value is replaced only by a strictly better score,
    and the weakest of the top k (the earliest entered among equals) only by a strictly
    better one.

    Returns `end` (row number of the last row of each (group, date)), `n_models` (distinct
    models dated <= that date in the group), `state` (the change in force at each end) and
    `changes` (n_changes x k row numbers, best first, -1 padded).
    """
    n = len(d["score"])
    if n == 0:
        return {"end": np.zeros(0, dtype="int64"), "n_models": np.zeros(0, dtype="int64"),
                "state": np.zeros(0, dtype="int64"), "changes": np.zeros((0, k), dtype="int64")}
    group = d["group_code"]
    model = d["model_code"]
    score = d["score"]
    rows = np.flatnonzero(_topk_candidates(group, model, score, k))
    g_list, m_list, s_list = group[rows].tolist(), model[rows].tolist(), score[rows].tolist()
    change_pos: list[int] = []
    change_top: list[tuple[int, ...]] = []
    # top: model -> (-score, entry number, row, model); sorting these orders by score, then by
    # when the model entered the top k (a dict's insertion order, which an update keeps).
    # Tuples, not lists: the garbage collector stops tracking them.
    top: dict = {}
    ranked: list = []
    full, kth, prev, entered = False, 0.0, None, 0
    for g, m, sc, i in zip(g_list, m_list, s_list, rows.tolist()):
        if g != prev:
            top, ranked, full, prev = {}, [], False, g
        if full and sc <= kth:          # cannot enter, cannot improve a member (members are >= kth)
            continue
        cur = top.get(m)
        if cur is not None:
            if not -sc < cur[0]:
                continue
            top[m] = (-sc, cur[1], i, m)
        else:
            if full:                    # out goes the earliest entered of the weakest
                low = ranked[-1][0]
                del top[next(e for e in ranked if e[0] == low)[3]]
            entered += 1
            top[m] = (-sc, entered, i, m)
        ranked = sorted(top.values())
        full = len(ranked) == k
        kth = -ranked[-1][0]
        change_pos.append(i)
        change_top.append(tuple(e[2] for e in ranked) + (-1,) * (k - len(ranked)))
    dates = d["date"]
    last = np.ones(n, dtype=bool)
    last[:-1] = (group[1:] != group[:-1]) | (dates[1:] != dates[:-1])
    end = np.flatnonzero(last)
    first_seen = ~pd.Series(group.astype("int64") * (int(model.max()) + 1) + model).duplicated().to_numpy()
    cum = np.cumsum(first_seen)
    start = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    before = (cum - first_seen)[start]                     # distinct models before each group's first row
    n_models = cum[end] - before[np.searchsorted(start, end, side="right") - 1]
    state = np.searchsorted(np.asarray(change_pos, dtype="int64"), end, side="right") - 1
    return {"end": end, "n_models": n_models.astype("int64"), "state": state,
            "changes": np.asarray(change_top, dtype="int64").reshape(len(change_top), k)}


def _per_state(values: np.ndarray, changes: np.ndarray, state: np.ndarray) -> np.ndarray:
    """One list per row: the `values` of its top k (`values[i, j]`: of row `changes[i, j]`),
    best first, the -1 padding of a top k not yet full left out. Built once per change of the
    top k that some row shows, and shared, as one read-only list object, by the rows of the
    dates it held."""
    used, at = np.unique(state, return_inverse=True)
    lists = values[used].tolist()
    for i in np.flatnonzero((changes[used] < 0).any(axis=1)).tolist():
        lists[i] = lists[i][:int((changes[used[i]] >= 0).sum())]
    return np.fromiter(lists, dtype=object, count=len(lists))[at.reshape(-1)]


def _as_str(values: np.ndarray) -> np.ndarray:
    """str(value) of an object array, each distinct value converted once (strings as they are)."""
    codes, uniques = pd.factorize(values.reshape(-1), use_na_sentinel=False)
    names = np.asarray(uniques, dtype=object)
    if pd.api.types.infer_dtype(names, skipna=False) != "string":
        names = np.array([str(u) for u in names], dtype=object)
    return names[codes].reshape(values.shape)


def running_topk(df: pd.DataFrame, k: int = SATURATION_K) -> pd.DataFrame:
    """For each table and each distinct date: the top-k models among those dated <= that date.

    `df`: benchmark, model, score, date, optionally se (a published SE per row) and
    entity_variant (the page row, reported in `top_variants`). A model's value at a date is
    its best score among its rows dated <= that date (its best variant). One sort of the
    whole frame, then one pass in which only the rows that may change the top k do any work
    (`_topk_scan`); the output is built from arrays. Ties keep the earlier row.

    Returns table_id, benchmark, as_of, n_models (distinct models dated <= as_of), top_scores,
    top_se, top_models, top_variants (lists of length min(k, n_models), best first; rows
    whose top k did not change share one list object).
    """
    d = _history_rows(with_tables(df), ["table_id"])
    scan = _topk_scan(d, k)
    end, changes, state = scan["end"], scan["changes"], scan["state"]
    rows = np.where(changes >= 0, changes, 0)
    return pd.DataFrame({"table_id": pd.Series(_at(d, "table_id", end), dtype="str"),
                         "benchmark": pd.Series(_at(d, "benchmark", end), dtype="str"),
                         "as_of": pd.to_datetime(pd.Series(d["date"][end], dtype="datetime64[ns]")),
                         "n_models": pd.Series(scan["n_models"], dtype="int64"),
                         "top_scores": _per_state(d["score"][rows], changes, state),
                         "top_se": _per_state(d["se"][rows], changes, state),
                         "top_models": _per_state(_at(d, "model", rows), changes, state),
                         "top_variants": _per_state(_as_str(_at(d, "variant", rows)), changes, state)})


def running_topk_scores(df: pd.DataFrame, k: int = SATURATION_K) -> tuple[pd.DataFrame, np.ndarray]:
    """`running_topk` as arrays, for statistics over the top k: (frame of table_id, benchmark, as_of,
    n_models, top_model, one row per (table, date)), and the top k scores of each row as an
    array of shape (rows, k), best first, NaN where fewer than k models are dated yet."""
    d = _history_rows(with_tables(df), ["table_id"])
    scan = _topk_scan(d, k)
    end, idx = scan["end"], scan["changes"][scan["state"]]
    tops = np.where(idx >= 0, d["score"][np.where(idx >= 0, idx, 0)], np.nan)
    frame = pd.DataFrame({"table_id": pd.Series(_at(d, "table_id", end), dtype="str"),
                          "benchmark": pd.Series(_at(d, "benchmark", end), dtype="str"),
                          "as_of": pd.to_datetime(pd.Series(d["date"][end], dtype="datetime64[ns]")),
                          "n_models": pd.Series(scan["n_models"], dtype="int64"),
                          "top_model": _at(d, "model", idx[:, 0]) if len(end) else np.zeros(0, dtype=object)})
    return frame, tops.reshape(len(end), k)


TRAJECTORY_COLUMNS = ["table_id", "benchmark", "as_of", "population", "n_models", "top_scores", "top_models", "top_variants",
                      "s1", "sk", "se_delta", "r_norm", "s_index",
                      "bin", "statistically_similar", "n_items", "k", "alpha", "z", "uncertainty"]


def saturation_trajectory(df: pd.DataFrame, n_items: float | Mapping[str, float] | None, k: int = SATURATION_K,
                          alpha: float = SATURATION_ALPHA, z: float = SATURATION_Z, *,
                          n_assumed: Mapping[str, bool] | None = None) -> pd.DataFrame:
    """S_index in calendar time: one row per (table, population, as_of) for each distinct model date with >= k models.

    `df`: benchmark, model, score, date (the result's date), optionally stderr/ci_low/ci_high
    and the identity columns of `saturation_table` (population, underlying, model_raw,
    setting) and `table_id` (default: the benchmark). `n_items`: one n for all tables or a
    mapping table_id -> n (`n_assumed` likewise). The top k at `as_of` are the best models
    among results of the table dated <= as_of, each model once (its best variant), per
    population as in `saturation_table`; no running top k crosses a table. Benchmarks with neither n nor
    published SEs for the models needed are left out (logged). The running top k is the one
    of `running_topk` (`_topk_scan`), computed for every (population, benchmark) in one pass;
    the index is then computed on arrays.
    """
    _check_params(k, alpha, z)
    h = with_populations(with_tables(df))
    h["se"] = published_se(h["stderr"] if "stderr" in h.columns else np.full(len(h), np.nan),
                           h["ci_low"] if "ci_low" in h.columns else None,
                           h["ci_high"] if "ci_high" in h.columns else None)
    d = _history_rows(h, ["population", "table_id"])
    scan = _topk_scan(d, k)
    keep = scan["n_models"] >= k
    end, state, n_models = scan["end"][keep], scan["state"][keep], scan["n_models"][keep]
    changes = scan["changes"]
    idx = changes[state]
    rows = np.where(changes >= 0, changes, 0)
    if len(end) == 0:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in TRAJECTORY_COLUMNS})
    bench_code, bench_names = pd.factorize(_at(d, "table_id", end))     # per table
    bench_names = np.asarray(bench_names, dtype=object)
    bench = bench_names[bench_code]
    if isinstance(n_items, Mapping):
        n_per = [_check_n(n_items.get(b)) for b in bench_names]
    else:
        n_per = [_check_n(n_items)] * len(bench_names)
    n = np.array([np.nan if v is None else v for v in n_per], dtype="float64")[bench_code]
    tops = d["score"][idx]
    tse = d["se"][idx]
    s1, sk = tops[:, 0], tops[:, k - 1]
    n_eff = n ** alpha
    # as saturation_index: published SEs only where n is unknown (the paper's n^alpha otherwise)
    pub1, pubk = np.isfinite(tse[:, 0]) & ~np.isfinite(n), np.isfinite(tse[:, k - 1]) & ~np.isfinite(n)
    se1 = np.where(pub1, tse[:, 0], binomial_se(s1, n_eff))
    sek = np.where(pubk, tse[:, k - 1], binomial_se(sk, n_eff))
    ok = np.isfinite(se1) & np.isfinite(sek)
    if (~ok).any():
        log.info("[saturation] trajectory: no n and no published SE for %s; left out", sorted(set(bench[~ok])))
    out = index_arrays(s1, sk, se1, sek, z)
    assumed = np.array([bool((n_assumed or {}).get(b, False)) for b in bench_names], dtype=bool)[bench_code]
    labels = np.array([uncertainty_label(bool(c & 4), bool(c & 2), bool(c & 1) and (c & 6) != 6)
                       for c in range(8)], dtype=object)
    uncertainty = labels[pub1.astype(int) * 4 + pubk.astype(int) * 2 + assumed.astype(int)]
    res = pd.DataFrame({
        "table_id": pd.Series(bench, dtype="str"),
        "benchmark": pd.Series(_at(d, "benchmark", end), dtype="str"),
        "as_of": pd.to_datetime(pd.Series(d["date"][end], dtype="datetime64[ns]")),
        "population": _at(d, "population", end),
        "n_models": pd.Series(n_models, dtype="int64"),
        "top_scores": _per_state(d["score"][rows], changes, state),
        "top_models": _per_state(_as_str(_at(d, "model", rows)), changes, state),
        "top_variants": _per_state(_as_str(_at(d, "variant", rows)), changes, state),
        "s1": s1, "sk": sk, "se_delta": out["se_delta"],
        "r_norm": out["r_norm"], "s_index": out["s_index"], "bin": out["bin"],
        "statistically_similar": out["statistically_similar"], "n_items": n, "k": int(k), "alpha": float(alpha),
        "z": float(z), "uncertainty": uncertainty,
    })
    if not ok.all():
        res = res[ok].reset_index(drop=True)
    return res[TRAJECTORY_COLUMNS]

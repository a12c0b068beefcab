"""A3 (item-level, dated items): the pre/post-cutoff gap of a model minus the ability-matched gap of
clean reference models (difference in differences), contest-clustered, referred to the references'
own placebo z's. docs/statistics.md, A3."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.constants import A3_MIN_REF_COVERAGE, A3_REFS_PER_PARAMETER, FISHER_MIN_EXPECTED, REFERENCE_TRUST
from analysis.contamination.base import (
    data_hash,
    log,
    SKIP_COLUMNS,
    signal_test,
    SignalTest,
    Thresholds,
)
from analysis.contamination.numerics import _Z95, _logit
from analysis.cutoffs import guard, prepare_items


def ability_weights(z_refs: np.ndarray, z_model: float) -> tuple[np.ndarray, bool]:
    """Weights w (Σ w = 1) such that Σ w_r G_r is a polynomial fit of the references' gaps
    G_r on their ability z_r, evaluated at the model's ability z_m (a linear smoother).

    z = logit of post-window accuracy. The degree keeps >= `A3_REFS_PER_PARAMETER` (3)
    references per fitted coefficient: 2 (the null gap of a Rasch-like item set is hump-shaped
    in ability) from 9 references, 1 from 6, else 0 (the plain mean) — a quadratic through 5
    points follows their noise. z_m outside the references' range is clamped to it (no
    extrapolation); the flag says so. One problem of `smoother_weights`.
    """
    z_refs = np.asarray(z_refs, dtype=float)
    w, clamped = smoother_weights(z_refs[None, :], np.ones((1, len(z_refs)), dtype=bool), np.array([[z_model]]))
    return w[0, 0], bool(clamped[0, 0])


def did_test(y_pre: np.ndarray, y_post: np.ndarray, a_pre: np.ndarray, a_post: np.ndarray, *,
             fisher_min_expected: float = FISHER_MIN_EXPECTED) -> dict:
    """One-sided test of E = (ȳ_pre - ȳ_post) - G_ref > 0, with items as the sampled units.

    a_i = Σ_r w_r p_ir is the ability-matched clean reference on item i, so that
    G_ref = mean_pre a - mean_post a. Per-item pass fractions are means of ~10 samples of the
    *same* problem; those samples are not independent draws, so counts are never items ×
    samples. Instead:

    - SE(E) is item-clustered and paired: u_i = y_i - a_i, SE² = var(u_pre)/n_pre +
      var(u_post)/n_post. Pairing on the item removes the shared difficulty, and the
      reference's own sampling noise is inside var(u).
    - Effective counts (Rao–Scott design effect): deff = SE² / V_bin, V_bin the binomial
      variance of the two windows with one trial per item; ñ_w = n_w / deff trials, x_w =
      p_w · ñ_w successes, where the post rate is shifted by the reference gap, p*_post =
      ȳ_post + G_ref (what m would score post-cutoff at pre-cutoff difficulty). The binomial
      variance of that 2×2 table equals the item-clustered variance of E.
    - Test: two-proportion z = E / SE; when an expected cell of the effective table is below
      `fisher_min_expected`, one-sided Fisher exact on the rounded effective table instead
      (G_ref enters there as a fixed shift).
    """
    from scipy import stats   # imported when used: an analysis that computes no contamination test needs none of it
    n_pre, n_post = len(y_pre), len(y_post)
    p_pre, p_post = float(np.mean(y_pre)), float(np.mean(y_post))
    g_ref = float(np.mean(a_pre) - np.mean(a_post))
    effect = (p_pre - p_post) - g_ref
    u_pre, u_post = y_pre - a_pre, y_post - a_post
    se = float(np.sqrt(np.var(u_pre, ddof=1) / n_pre + np.var(u_post, ddof=1) / n_post))
    p_star = float(np.clip(p_post + g_ref, 0.0, 1.0))
    v_bin = p_pre * (1 - p_pre) / n_pre + p_star * (1 - p_star) / n_post
    deff = se ** 2 / v_bin if v_bin > 0 and se > 0 else 1.0
    ne_pre, ne_post = n_pre / deff, n_post / deff
    x_pre, x_post = p_pre * ne_pre, p_star * ne_post
    pooled = (x_pre + x_post) / (ne_pre + ne_post)
    expected = min(ne_pre * pooled, ne_pre * (1 - pooled), ne_post * pooled, ne_post * (1 - pooled))
    counts = {"n_eff_pre": ne_pre, "n_eff_post": ne_post, "x_eff_pre": x_pre, "x_eff_post": x_post,
              "design_effect": deff, "min_expected_cell": expected}
    if expected < fisher_min_expected:
        table = np.maximum(np.rint([[x_pre, ne_pre - x_pre], [x_post, ne_post - x_post]]).astype(int), 0)
        p_value = float(stats.fisher_exact(table, alternative="greater").pvalue)
        method = "fisher_exact_effective_counts"
        counts["table"] = table.tolist()
    elif se > 0:
        p_value = float(stats.norm.sf(effect / se))
        method = "two_proportion_z_item_clustered"
    else:
        p_value, method = float("nan"), "degenerate"
    return {"effect": effect, "se": se, "p_value": p_value, "method": method, "p_pre": p_pre,
            "p_post": p_post, "gap_model": p_pre - p_post, "gap_ref": g_ref,
            "n_pre": n_pre, "n_post": n_post, **counts}


def smoother_weights(z: np.ndarray, masks: np.ndarray, z0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`ability_weights` for a batch: z (T, M) abilities of M models in T windows, masks (P, M)
    the references of P problems, z0 (T, P) the tested abilities -> weights (T, P, M), clamped (T, P).

    w = e0' (X'X)^+ X' with X the masked Vandermonde rows (1, z - z0, (z - z0)^2) up to the degree
    the problem's reference count allows (`ability_weights`); z0 clamped to the range.
    """
    z = np.atleast_2d(np.asarray(z, dtype=float))
    masks = np.asarray(masks, dtype=bool)
    cnt = masks.sum(axis=-1)
    deg = np.clip(cnt // A3_REFS_PER_PARAMETER - 1, 0, 2)
    zm = np.where(masks[None], z[:, None, :], np.nan)
    lo, hi = np.nanmin(zm, axis=-1), np.nanmax(zm, axis=-1)
    clamped = (z0 < lo) | (z0 > hi)
    d = z[:, None, :] - np.clip(z0, lo, hi)[..., None]
    basis = (np.arange(3)[None, :] <= deg[:, None]).astype(float)          # (P, 3)
    x = np.stack([np.ones_like(d), d, d * d], axis=-1) * masks[None, :, :, None] * basis[None, :, None, :]
    xtx = np.einsum("tpmi,tpmj->tpij", x, x)
    w = np.einsum("tpi,tpmi->tpm", np.linalg.pinv(xtx)[..., 0, :], x)
    return w, clamped


def _cluster_var(u: np.ndarray, window: np.ndarray, onehot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and contest-clustered variance of the mean of u (n, T, P) over window (n, T).

    V = C/(C-1) * sum_c (sum_{i in c} (u_i - ū))^2 / n^2 (CR1 sandwich for a mean; C = clusters
    with an item in the window). With one item per cluster it is var(u, ddof=1) / n.
    """
    wk = window[:, :, None].astype(float)
    cnt = window.sum(axis=0).astype(float)                                  # (T,)
    mean = (u * wk).sum(axis=0) / cnt[:, None]
    dev = (u - mean[None]) * wk
    n, t, p = u.shape
    sums = onehot @ dev.reshape(n, t * p)                                   # (C, T*P)
    c_eff = (onehot @ window.astype(float) > 0).sum(axis=0).astype(float)   # (T,)
    corr = np.where(c_eff > 1, c_eff / np.maximum(c_eff - 1, 1), np.nan)
    var = (sums ** 2).sum(axis=0).reshape(t, p) / cnt[:, None] ** 2 * corr[:, None]
    return mean, var


def window_ability(y: np.ndarray, post: np.ndarray) -> np.ndarray:
    """Each model's ability in each window: the logit of its accuracy on the post window's items.
    y (n, M) item pass fractions, post (n, T) -> (T, M). What the smoother matches references on."""
    n_post = post.sum(axis=0)
    return _logit((post.T.astype(float) @ y) / n_post[:, None], n_post[:, None])


def above_range(ability: np.ndarray, ref_masks: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """(T, P): the tested model of each problem is abler than every one of its references, so
    the smoother would extrapolate: such a test is untestable (p = NaN), in a3_one and the placebo."""
    zm = np.where(ref_masks[None], ability[:, None, :], np.nan)
    with np.errstate(invalid="ignore"):
        return ability[:, targets] > np.nanmax(zm, axis=-1)


def a3_core(y: np.ndarray, pre: np.ndarray, post: np.ndarray, clusters: np.ndarray, targets: np.ndarray,
            ref_masks: np.ndarray) -> dict[str, np.ndarray]:
    """The A3 difference-in-differences for a batch of problems, vectorized over windows and problems.

    y (n, M): item pass fractions of M models on n items (complete); pre, post (n, T): T pairs
    of windows; clusters (n,): the item's contest (its date); targets (P,) the tested model of each
    problem and ref_masks (P, M) its references. For each (window, problem): u_i = y_i - a_i with
    a_i = Σ_r w_r y_ir the ability-matched reference (`smoother_weights`, ability = logit of the
    post-window accuracy), E = mean_pre u - mean_post u, SE² = the contest-clustered variances
    of the two means (items of one contest share a date and are not independent), z = E / SE.
    """
    y = np.asarray(y, dtype=float)
    pre, post = np.asarray(pre, dtype=bool), np.asarray(post, dtype=bool)
    n_pre, n_post = pre.sum(axis=0), post.sum(axis=0)
    ability = window_ability(y, post)
    w, clamped = smoother_weights(ability, ref_masks, ability[:, targets])
    a = np.einsum("nm,tpm->ntp", y, w)
    u = y[:, targets][:, None, :] - a
    _, codes = np.unique(clusters, return_inverse=True)
    onehot = np.zeros((codes.max() + 1, len(codes)))
    onehot[codes, np.arange(len(codes))] = 1.0
    m_pre, v_pre = _cluster_var(u, pre, onehot)
    m_post, v_post = _cluster_var(u, post, onehot)
    effect = m_pre - m_post
    se = np.sqrt(v_pre + v_post)
    gap_model = (pre.T.astype(float) @ y[:, targets]) / n_pre[:, None] - (post.T.astype(float) @ y[:, targets]) / n_post[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, effect / se, np.nan)
    above = above_range(ability, ref_masks, targets)
    return {"effect": effect, "se": se, "z": z, "gap_model": gap_model, "gap_ref": gap_model - effect,
            "weights": w, "clamped": clamped, "above_range": above, "n_pre": n_pre, "n_post": n_post}


def reference_placebo_p(z_model: np.ndarray, z_refs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One-sided p of z_model against the null scale the clean references show.

    Each reference r, tested with the same windows against the other references (never the
    tested model), gives a placebo z_r: what this statistic looks like on a model that cannot be
    contaminated. σ̂² = mean z_r² (over-dispersion from item dependence, smoother bias and
    extrapolation; centred at 0, so a shared bias counts too); the scale used is max(1, σ̂), and
    p = P(t_R > z / max(1, σ̂)) with R placebo references (σ̂² estimated from R values).
    z_model (...,), z_refs (..., R) -> (p, scale, R).
    """
    from scipy import stats   # imported when used: an analysis that computes no contamination test needs none of it
    ok = np.isfinite(z_refs)
    r = ok.sum(axis=-1)
    sigma = np.sqrt(np.where(ok, z_refs ** 2, 0.0).sum(axis=-1) / np.maximum(r, 1))
    scale = np.maximum(sigma, 1.0)
    with np.errstate(invalid="ignore"):
        p = np.where(r >= 2, stats.t.sf(z_model / scale, np.maximum(r, 1)), np.nan)
    return p, sigma, r


def reference_variance_p(effect: np.ndarray, se: np.ndarray, e_refs: np.ndarray,
                         se_refs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One-sided Wald p of E with the between-model variance the clean references show.

    Each reference r, tested with the same windows against the other references (never the
    tested model), gives a placebo effect E_r with its clustered SE_r. A clean model's E has two
    parts: the items' sampling noise (SE², contest-clustered) and a model-specific response to
    the windows' drift that no reference set removes (τ², a random effect). Method of moments
    (DerSimonian–Laird): τ̂² = max(0, mean_r (E_r² − SE_r²)); V = SE² + τ̂²; p = Φ(−E / √V).
    effect, se (...), e_refs, se_refs (..., R) -> (p, τ̂, R); p is NaN with fewer than 2 references.
    """
    from scipy import stats   # imported when used: an analysis that computes no contamination test needs none of it
    ok = np.isfinite(e_refs) & np.isfinite(se_refs)
    r = ok.sum(axis=-1)
    excess = np.where(ok, e_refs ** 2 - se_refs ** 2, 0.0).sum(axis=-1) / np.maximum(r, 1)
    tau = np.sqrt(np.maximum(excess, 0.0))
    total = np.sqrt(se ** 2 + tau ** 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where((r >= 2) & (total > 0), stats.norm.sf(effect / np.where(total > 0, total, 1.0)), np.nan)
    return p, tau, r


def _a3_p(effect: np.ndarray, se: np.ndarray, e_placebo: np.ndarray, se_placebo: np.ndarray,
          th: Thresholds) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(p, scale, df, calibrated SE) of A3 from E and its clustered SE (...), and the references'
    placebo effects and SEs (..., R).

    'reference_variance' (the default): `reference_variance_p`, SE_total = √(SE² + τ̂²), normal;
    scale = SE_total / SE. 'reference_placebo' (the test of issue 10, conservative): the placebo
    z's scale, SE × max(1, σ̂), t with R df (`reference_placebo_p`). 'item_normal' (the first,
    anti-conservative test): p = Φ(-z) with items as independent units, scale 1, df = inf.
    """
    from scipy import stats   # imported when used: an analysis that computes no contamination test needs none of it
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.where(se > 0, effect / np.where(se > 0, se, 1.0), np.nan)
        z_placebo = np.where(se_placebo > 0, e_placebo / np.where(se_placebo > 0, se_placebo, 1.0), np.nan)
    if th.a3_null == "item_normal":
        return stats.norm.sf(z), np.ones_like(z), np.full_like(z, np.inf), se
    if th.a3_null == "reference_placebo":
        p, sigma, r = reference_placebo_p(z, z_placebo)
        scale = np.maximum(sigma, 1.0)
        return p, scale, r.astype(float), se * scale
    if th.a3_null != "reference_variance":
        raise ValueError(f"a3_null {th.a3_null!r}: expected reference_variance, reference_placebo or item_normal")
    p, tau, _ = reference_variance_p(effect, se, e_placebo, se_placebo)
    total = np.sqrt(se ** 2 + tau ** 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = np.where(se > 0, total / np.where(se > 0, se, 1.0), np.nan)
    return p, scale, np.full_like(z, np.inf), total


def a3_one(matrix: pd.DataFrame, dates: pd.Series, model: str, c_lo: pd.Timestamp, c_hi: pd.Timestamp,
           reference_cutoffs: pd.Series, *, th: Thresholds) -> tuple[dict | None, str]:
    """A3 for one model on one item matrix (items × models). Returns (result, reason-if-skipped).

    Windows (docs/statistics.md, "The signals", A3): I_pre = {d <= c_lo - g}, I_post = {d > c_hi + g}. Clean references:
    c_hi(r) + g < min(d over I_pre), scored on every kept item (items a reference lacks are
    dropped; references missing > 10 % of the model's window items are left out first).

    The reference gap is ability-matched (`ability_weights`) instead of a plain median
    of the references' gaps: under difficulty drift (LCB's later problems are harder) the
    null gap depends on ability — hump-shaped in logit accuracy — so a strong or weak model
    compared with the median reference shows a spurious gap. The median gap stays in the evidence.

    Inference (`a3_core`, `reference_placebo_p`): SE is contest-clustered (items of one date),
    and the null scale comes from the references themselves, each tested as a placebo with the
    same windows; the reported SE is the clustered SE times that scale, the CI uses t_R. A
    matched gap extrapolated to the strongest model, or a reference that is not quite clean,
    widens the placebo z's and so the test, instead of producing a flag.
    """
    from scipy import stats   # imported when used: an analysis that computes no contamination test needs none of it
    g = guard(th.guard_days)
    y = matrix[model]
    pre0 = y.notna() & (dates <= c_lo - g)
    post0 = y.notna() & (dates > c_hi + g)
    if pre0.sum() < th.a3_min_items or post0.sum() < th.a3_min_items:
        return None, f"window below floor (pre {int(pre0.sum())}, post {int(post0.sum())} items)"
    first_pre = dates[pre0].min()
    window = pre0 | post0
    coverage = matrix.loc[window].notna().mean()         # every column at once, not one .loc per reference
    refs = [r for r, c in reference_cutoffs.items()
            if r != model and r in matrix.columns and pd.notna(c) and c + g < first_pre
            and coverage[r] >= A3_MIN_REF_COVERAGE]
    if len(refs) < th.a3_min_ref_models:
        return None, f"{len(refs)} clean reference model(s) < {th.a3_min_ref_models}"
    ref = matrix[refs]
    complete = ref.notna().all(axis=1)
    pre, post = pre0 & complete, post0 & complete
    if pre.sum() < th.a3_min_items or post.sum() < th.a3_min_items:
        return None, "window below floor after matching reference items"
    keep = pre | post
    y_all = matrix.loc[keep, [model] + refs].to_numpy(float)
    pre_m, post_m = pre[keep].to_numpy()[:, None], post[keep].to_numpy()[:, None]
    r = len(refs)
    targets = np.arange(r + 1)
    masks = np.zeros((r + 1, r + 1), dtype=bool)
    masks[0, 1:] = True                                   # the tested model against every reference
    for j in range(1, r + 1):                             # each reference against the others (placebo)
        masks[j, 1:] = True
        masks[j, j] = False
    item_normal = th.a3_null == "item_normal"
    clusters = np.arange(int(keep.sum())) if item_normal else dates[keep].to_numpy()
    core = a3_core(y_all, pre_m, post_m, clusters, targets, masks)
    if bool(core["above_range"][0, 0]):
        return None, ABOVE_RANGE_REASON
    effect, se_item, z = float(core["effect"][0, 0]), float(core["se"][0, 0]), float(core["z"][0, 0])
    z_placebo = core["z"][0, 1:]
    e_placebo, se_placebo = core["effect"][0, 1:], core["se"][0, 1:]
    p_arr, scale_arr, df_arr, se_arr = _a3_p(np.array([[effect]]), np.array([[se_item]]), e_placebo[None, None, :],
                                             se_placebo[None, None, :], th)
    p_value, scale, df_f, se = float(p_arr[0, 0]), float(scale_arr[0, 0]), float(df_arr[0, 0]), float(se_arr[0, 0])
    r_pre, r_post = y_all[pre_m[:, 0], 1:], y_all[post_m[:, 0], 1:]
    gaps = r_pre.mean(axis=0) - r_post.mean(axis=0)
    t_crit = float(stats.t.ppf(0.975, df_f)) if np.isfinite(df_f) and df_f >= 1 else _Z95
    df = int(df_f) if np.isfinite(df_f) else None
    w = core["weights"][0, 0, 1:]
    res = {"effect": effect, "se": se, "p_value": p_value, "ci_low": effect - t_crit * se,
           "ci_high": effect + t_crit * se, "method": th.a3_null,
           "z_clustered": z, "se_clustered": se_item, "null_scale": scale,
           "null_scale_raw": float(np.sqrt(np.nanmean(z_placebo ** 2))) if np.isfinite(z_placebo).any() else None,
           "placebo_z": dict(zip(refs, z_placebo.tolist())), "null_df": df,
           "placebo_effects": dict(zip(refs, e_placebo.tolist())),
           "between_model_sd": float(np.sqrt(max(se * se - se_item * se_item, 0.0))) if np.isfinite(se) else None,
           "p_pre": float(y_all[pre_m[:, 0], 0].mean()), "p_post": float(y_all[post_m[:, 0], 0].mean()),
           "gap_model": float(core["gap_model"][0, 0]), "gap_ref": float(core["gap_ref"][0, 0]),
           "n_pre": int(core["n_pre"][0]), "n_post": int(core["n_post"][0]),
           "n_contests_pre": int(dates[pre].nunique()), "n_contests_post": int(dates[post].nunique()),
           "gap_ref_median": float(np.median(gaps)),
           "effect_vs_median_gap": float(core["gap_model"][0, 0]) - float(np.median(gaps)),
           "reference_models": refs, "reference_gaps": dict(zip(refs, gaps.tolist())),
           "reference_weights": dict(zip(refs, w.tolist())), "ability_clamped": bool(core["clamped"][0, 0]),
           "ability_side": "below" if bool(core["clamped"][0, 0]) else None,
           "pre_window": [None, (c_lo - g)], "post_window": [(c_hi + g), dates[post].max()],
           "c_lo": c_lo, "c_hi": c_hi,
           # the evidence itself: the model's and its references' results on the window items, their
           # dates and sides (not the snapshots that carried them)
           "data_hash": data_hash(model, refs, matrix.index[keep], y_all, dates[keep].to_numpy("datetime64[ns]"),
                                  pre_m, post_m)}
    return res, ""


# Why a model stronger than every clean reference is not tested (a3_one; the placebo and the power
# study leave such a model out the same way). docs/statistics.md, A3, "Outside the references' range".
ABOVE_RANGE_REASON = ("stronger than every clean reference (post-window accuracy above theirs): the "
                      "ability-matched reference gap would extrapolate beyond the references, so no test")


def _a3_frame(items: pd.DataFrame, now: pd.Timestamp) -> dict[tuple[str, str], tuple[pd.DataFrame, pd.Series, tuple]]:
    """(source, benchmark) -> (items × models matrix, item dates, snapshot ids)."""
    it = prepare_items(items)
    it = it[it["item_date"].notna() & (it["item_date"] <= pd.Timestamp(now))]
    out = {}
    for (source, bench), b in it.groupby(["source", "benchmark"], sort=True):
        matrix = b.pivot(index="item_id", columns="model", values="score")
        per_item = b.groupby("item_id")["item_date"]
        spread = per_item.max() - per_item.min()
        if (spread > pd.Timedelta(days=1)).any():
            log.warning("[contamination] %s/%s: %d item(s) carry different dates per model; earliest used",
                        source or "-", bench, int((spread > pd.Timedelta(days=1)).sum()))
        snaps = tuple(sorted(int(s) for s in b["snapshot_id"].dropna().unique())) if "snapshot_id" in b else ()
        out[(source, bench)] = (matrix, per_item.min().reindex(matrix.index), snaps)
    return out


def reference_cutoffs(cutoffs: pd.DataFrame) -> pd.Series:
    """model -> c_hi of the models whose cutoff may make them clean references: trust in
    `REFERENCE_TRUST` (a placeholder date never qualifies). Frames without `cutoff_trust` (built
    by hand) count as stated."""
    c = cutoffs.set_index("model")
    if "cutoff_trust" in c.columns:
        c = c[c["cutoff_trust"].isin(REFERENCE_TRUST)]
    return c["c_hi"]


def a3_tests(items: pd.DataFrame, cutoffs: pd.DataFrame, *, now: pd.Timestamp,
             th: Thresholds = Thresholds(), skipped: list[dict] | None = None) -> list[SignalTest]:
    """A3 for every (source, benchmark, model) with dated items and a resolved cutoff interval.

    A model whose only cutoff is a placeholder (`cutoff_trust`, analysis/cutoffs.py: a date many
    models of one source share) is not tested: that date says nothing about when its training
    data end, so its pre/post split would be arbitrary. Every model not tested (that one, or
    windows below the floors, or too few clean references) is appended to `skipped` with the
    reason (SKIP_COLUMNS), so the report and `status` can list it instead of dropping it silently.
    """
    cut = cutoffs.set_index("model")
    trust = cut["cutoff_trust"] if "cutoff_trust" in cut.columns else pd.Series("stated", index=cut.index)
    refs = reference_cutoffs(cutoffs)
    tests = []
    for (source, bench), (matrix, dates, snaps) in _a3_frame(items, now).items():
        for model in matrix.columns:
            if model not in cut.index or pd.isna(cut.at[model, "c_hi"]) or pd.isna(cut.at[model, "c_lo"]):
                continue
            if trust.get(model) == "placeholder":
                src = cut.at[model, "cutoff_source"] if "cutoff_source" in cut.columns else None
                res, why = None, (f"its only cutoff, {pd.Timestamp(cut.at[model, 'c_hi']):%Y-%m-%d}"
                                  f"{f' ({src})' if isinstance(src, str) and src else ''}, is a placeholder date "
                                  "that many models share: no trustworthy pre/post split")
            else:
                res, why = a3_one(matrix, dates, model, cut.at[model, "c_lo"], cut.at[model, "c_hi"], refs, th=th)
            if res is None:
                log.debug("[contamination] A3 %s/%s %s not tested: %s", source or "-", bench, model, why)
                if skipped is not None:
                    skipped.append({"signal": "A3", "source": source, "benchmark": bench, "model": model,
                                    "cutoff": pd.Timestamp(cut.at[model, "c_hi"]), "cutoff_trust": trust.get(model),
                                    "reason": why})
                continue
            tests.append(signal_test("A3", model, bench, source, res, snapshot_ids=snaps))
    if skipped:
        ph = [s for s in skipped if s["cutoff_trust"] == "placeholder"]
        if ph:
            log.info("[contamination] A3: %d model(s) not tested for a placeholder cutoff, e.g. %s", len(ph),
                     ", ".join(f"{s['model']} ({s['benchmark']})" for s in ph[:3]))
    return tests

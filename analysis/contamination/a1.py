"""A1 (aggregate, ConStat analogue): δ = s_{m,b} - σ(f_b(x_m)) against a prediction scale, with the
per-model robust-z gate. docs/statistics.md, A1."""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from analysis.constants import A1_MIN_TAIL_COUNT
from analysis.contamination.base import (
    _a1_pairs_to_skip,
    data_hash,
    log,
    PLACEBO_COLUMNS,
    prepare,
    Prepared,
    Signal,
    signal_test,
    SignalInputs,
    SignalTest,
    Thresholds,
)
from analysis.contamination.families import held_test, holdable, test_key
from analysis.contamination.link import (
    _link_data,
    _LinkData,
    _loo_residuals,
    _reference_pool,
    _resample_refs,
    _with_anchor,
    _xy,
    _xy_of_counts,
)
from analysis.contamination.numerics import _link_predict, _sigmoid


def a1_one(model_row: pd.Series, link: _LinkData, s_m_refs: np.ndarray, n_m_refs: np.ndarray,
           *, rng: np.random.Generator, th: Thresholds, n_boot: int | None = None,
           loo: np.ndarray | None = None) -> dict:
    """δ = s_{m,b} - σ(f_b(x_m)), tested against a prediction scale (docs/statistics.md, A1).

    Fit uncertainty: each bootstrap replicate resamples M_ref with replacement (>= 5 distinct),
    redraws every score as Binomial(n, s)/n (m's own included), refits f_b and recomputes δ*;
    SE_boot = sd(δ*) (kept in the evidence with its count p-value, `p_bootstrap`).
    Prediction scale: s_LOO² = mean over references of their leave-one-out residual² (how far
    a model not involved in the fit falls from it). SE = sqrt(SE_boot² + s_LOO²) (conservative:
    the fit error is in both terms); p = P(t_{R-1} > δ / SE); CI = δ ± t_{R-1, .975} SE.
    `loo`: the link's leave-one-out residuals (`_link_loo`) when the caller has them.
    """
    from scipy import stats   # imported when used: an analysis that computes no contamination test needs none of it
    n_boot = n_boot or th.bootstrap_b
    s_all, n_all, n_int = _a1_arrays(model_row, link, s_m_refs, n_m_refs)
    x, y = _xy(s_all, n_all)
    r = len(link.refs)
    xa, ya = _with_anchor(x[:r], y[:r], link.anchor)
    pred = float(_sigmoid(_link_predict(xa, ya, x[None, r:], isotonic=link.isotonic, floor=link.floor))[0, 0])
    delta = float(model_row["score"]) - pred

    # One draw of every score per replicate (the same draws, in the same order, as always: the
    # bootstrap's numbers depend on nothing else); only m's own score on b is needed as a proportion.
    counts, idx = a1_draws(rng, s_all, n_int, n_boot, th)
    xb, yb = _xy_of_counts(counts, n_int, n_all)
    flat = idx + (np.arange(n_boot) * (r + 1))[:, None]
    xr, yr = _with_anchor(xb.reshape(-1)[flat], np.ascontiguousarray(yb).reshape(-1)[flat], link.anchor)
    pb = _sigmoid(_link_predict(xr, yr, xb[:, r:r + 1], isotonic=link.isotonic, floor=link.floor))[:, 0]
    deltas = counts[:, r, 0] / n_int[r, 0] - pb
    se_boot = float(np.std(deltas, ddof=1))
    crossing = int((deltas <= 0).sum())
    if crossing >= A1_MIN_TAIL_COUNT or se_boot <= 0:
        p_boot, p_method = (1 + crossing) / (n_boot + 1), "bootstrap_count"
    else:
        p_boot, p_method = float(stats.norm.sf(delta / se_boot)), "bootstrap_normal_tail"
    # Prediction scale: how far clean-looking reference models fall from a link fitted without
    # them (ceiling effects, model idiosyncrasy). The bootstrap alone is the uncertainty of the
    # fit, not of a new model's position around it: on a saturated benchmark it called
    # idiosyncratic +14 pp residuals contamination.
    loo = _loo_residuals(x[:r], y[:r], link) if loo is None else loo
    s_loo = float(np.sqrt(np.mean(loo ** 2))) if len(loo) else float("nan")
    se = float(np.sqrt(se_boot ** 2 + s_loo ** 2))
    df = max(r - 1, 1)
    p_value = float(stats.t.sf(delta / se, df)) if se > 0 else float("nan")
    t_crit = float(stats.t.ppf(0.975, df))
    fitted = _sigmoid(_link_predict(xa, ya, x[None, :r], isotonic=link.isotonic, floor=link.floor))[0]
    return {
        "effect": delta, "se": se, "p_value": p_value, "ci_low": delta - t_crit * se, "ci_high": delta + t_crit * se,
        "method": "prediction_t", "se_bootstrap": se_boot, "loo_scale": s_loo, "p_bootstrap": p_boot,
        "null_df": df, "bootstrap_ci": [float(v) for v in np.percentile(deltas, [2.5, 97.5])],
        "score": float(model_row["score"]), "predicted": pred, "n_items": float(model_row["n"]),
        "se_binomial": float(np.sqrt(model_row["score"] * (1 - model_row["score"]) / model_row["n"])),
        "x_model": float(x[r]), "reference_models": link.refs, "reference_benchmarks": link.ref_benchmarks,
        "n_reference_models": r, "link": "isotonic" if link.isotonic else "logit_linear",
        "chance_anchor": link.anchor, "chance_floor": _sigmoid(link.floor) if link.floor is not None else None,
        "chance_link": th.chance_link, "bootstrap_b": n_boot, "p_method": p_method,
        "bootstrap_crossing_zero": crossing,
        "reference_fit_residual_sd": float(np.std(link.s_ref[:, 0] - fitted, ddof=1)),
    }


def _a1_arrays(model_row: pd.Series, link: _LinkData, s_m_refs: np.ndarray,
               n_m_refs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(s, n, n as counts) of the references (rows 0..R-1) and the tested model (row R): b, then R'."""
    s_all = np.vstack([link.s_ref, np.concatenate([[model_row["score"]], s_m_refs])])
    n_all = np.vstack([link.n_ref, np.concatenate([[model_row["n"]], n_m_refs])])
    return s_all, n_all, np.maximum(np.rint(n_all).astype(np.int64), 1)


def a1_draws(rng: np.random.Generator, s_all: np.ndarray, n_int: np.ndarray, n_boot: int,
             th: Thresholds) -> tuple[np.ndarray, np.ndarray]:
    """Every random number of one A1 test, in its order: each score redrawn as a count of n
    (replicates x models x benchmarks), then the resampled reference rows (replicates x R)."""
    counts = rng.binomial(n_int, s_all, size=(n_boot,) + s_all.shape)
    return counts, _resample_refs(rng, len(s_all) - 1, n_boot, th.a1_min_unique)


def a1_tests(scores: pd.DataFrame, benchmarks: pd.DataFrame, *, rng: np.random.Generator,
             slices: pd.DataFrame | None = None, th: Thresholds = Thresholds(),
             only: Callable[[str, str], bool] | None = None, prepared: Prepared | None = None,
             stored: Mapping[tuple, dict] | None = None,
             groups: Sequence[tuple[Any, pd.DataFrame]] | None = None,
             links: dict[tuple, tuple] | None = None) -> list[SignalTest]:
    """A1 for every (source, b, m) where b has reference benchmarks and b is not post-cutoff for m.

    Pairs whose benchmark is post-cutoff for the model cannot be contaminated by it; they are
    the placebo set of `calibrate`. `only(model, benchmark)` restricts the tested pairs.
    `stored`: the stored tests a run may hold, by key (families.previous_tests); a test on the same
    data with the same thresholds (families.holdable) keeps its stored numbers in `finalize`, so
    it is not computed again: its bootstrap draws nothing, and
    the tests computed draw from `rng` in their order. `groups`: the prepared scores split by
    (source, benchmark) (`score_groups`), when the caller tests them again and again (a placebo's trials);
    `links`: where such a caller keeps each tested pair's link data, its model's reference scores
    and the link's leave-one-out residuals (none of them random), by (source, benchmark, model).
    """
    p = prepared or prepare(scores, benchmarks)
    skip = _a1_pairs_to_skip(slices)
    tasks = []
    for (source, b), rows in (score_groups(p) if groups is None else groups):
        # a row is read only for a pair to test (a placebo trial tests a few of all the pairs)
        models = rows["model"].tolist()
        todo = [i for i, m in enumerate(models) if (m, b) not in skip and (only is None or only(m, b))]
        refs_b = p.reference_benchmarks(b) if todo else []
        if not refs_b:
            continue
        for i in todo:
            m, row = models[i], rows.iloc[i]
            known = None if links is None else links.get((source, b, m))
            if known is None:
                known = _a1_link(p, b, m, rows, refs_b, th, loo=links is not None)
                if links is not None:
                    links[(source, b, m)] = known
            link, why, s_m, n_m, loo = known
            if link is None:
                log.debug("[contamination] A1 %s/%s %s not tested: %s", source or "-", b, m, why)
                continue
            tasks.append((row, link, s_m, n_m, source, b, loo))
    snaps = [_a1_snapshots(row, link) for row, link, *_ in tasks]
    hashes = [_a1_hash(row, link, s_m, n_m) for row, link, s_m, n_m, *_ in tasks]
    rows = [(stored or {}).get(test_key(row["model"], b, "A1", source, "")) for row, _, _, _, source, b, _ in tasks]
    kept_rows = [r if holdable(r, s, th, h) else None for r, s, h in zip(rows, snaps, hashes)]
    tests = []
    for (row, link, s_m, n_m, source, b, loo), ids, kept, h in zip(tasks, snaps, kept_rows, hashes):
        if kept is not None:
            tests.append(held_test("A1", row["model"], b, source, kept, snapshot_ids=ids))
            continue
        res = a1_one(row, link, s_m, n_m, rng=rng, th=th, loo=loo)
        res["data_hash"] = h
        tests.append(signal_test("A1", row["model"], b, source, res, snapshot_ids=ids))
    _a1_self_consistency(tests, th)
    return tests


def _a1_link(p: Prepared, b: str, m: str, rows: pd.DataFrame, refs_b: list[str], th: Thresholds, *,
             loo: bool) -> tuple:
    """Testing m on b: (its link data or None, why not, m's scores and n on the link's reference
    benchmarks, with `loo` the link's leave-one-out residuals)."""
    mine = p.table.scored(m, refs_b)
    link, why = _link_data(b, rows, p.table, p.bench, mine, {m}, th)
    if link is None:
        return None, why, None, None, None
    score, n, _ = p.table.cells([m], mine)
    return link, why, score[0], n[0], _link_loo(link) if loo else None


def _link_loo(link: _LinkData) -> np.ndarray:
    """The link's leave-one-out residuals, as `a1_one` computes them from its references' rows."""
    x, y = _xy(link.s_ref, link.n_ref)
    return _loo_residuals(x, y, link)


def score_groups(p: Prepared) -> Iterable[tuple[Any, pd.DataFrame]]:
    """The prepared scores of each (source, benchmark), in their sorted order (what A1 and A2
    test), one group at a time."""
    return p.scores.groupby(["source", "benchmark"], sort=True)


def _a1_hash(row: pd.Series, link: _LinkData, s_m: np.ndarray, n_m: np.ndarray) -> str:
    """The content key of an A1 test's inputs (base.data_hash): the references' and the model's scores."""
    return data_hash(row["model"], float(row["score"]), float(row["n"]), link.refs, link.ref_benchmarks,
                     link.s_ref, link.n_ref, np.asarray(s_m, float), np.asarray(n_m, float), link.anchor, link.floor)


def _a1_snapshots(row: pd.Series, link: _LinkData) -> tuple[int, ...]:
    """The snapshots an A1 test reads (its link's and the tested row's), sorted (its data version)."""
    snaps = {int(s) for s in link.snapshot_ids}
    if "snapshot_id" in row and pd.notna(row["snapshot_id"]):
        snaps.add(int(row["snapshot_id"]))
    return tuple(sorted(snaps))


def _a1_self_consistency(tests: list[SignalTest], th: Thresholds) -> None:
    """Modified z of each residual within its model's A1 profile (Iglewicz–Hoaglin; docs/statistics.md, "The signals", A1).

    z̃ = 0.6745 (δ - med δ) / MAD; with MAD = 0 the mean absolute deviation × 1.2533 stands in.
    The gate z̃ >= 3.5 applies when the model has residuals on >= 5 benchmarks.
    """
    by_model: dict[str, list[SignalTest]] = {}
    for t in tests:
        by_model.setdefault(t.model, []).append(t)
    for model_tests in by_model.values():
        d = np.array([t.effect for t in model_tests])
        if len(d) < th.a1_robust_z_min_benchmarks:
            for t in model_tests:
                t.evidence["robust_z"] = None
            continue
        med = np.median(d)
        mad = np.median(np.abs(d - med))
        scale = mad / 0.6745 if mad > 0 else 1.2533 * np.mean(np.abs(d - med))
        for t, di in zip(model_tests, d):
            z = (di - med) / scale if scale > 0 else (np.inf if di > med else 0.0)
            t.evidence["robust_z"] = float(z)
            t.gate = bool(z >= th.a1_robust_z)


def a1_a2_placebo(scores: pd.DataFrame, benchmarks: pd.DataFrame, *, rng: np.random.Generator, trials: int,
                  th: Thresholds = Thresholds(), pair_tests: Callable[..., list[SignalTest]]) -> pd.DataFrame:
    """Real-data placebos of A1 and A2 (leave-one-reference-out).

    A1: per trial and benchmark, one random model of the reference pool is tested as if new,
    against the others (it is never its own reference). A2: one random ordered pair of pool
    models as a fake predecessor relation. Both ask whether the test's p-values are uniform on
    the population it assumes as null; a contaminated model in the pool can only push the rates
    up, so the figures bound the false-flag rate from above. `pair_tests` is A2's test of given
    (model, predecessor, benchmark) pairs (`a2.a2_predecessor_tests`; passed in because A2 builds
    on this module).
    """
    prepared = prepare(scores, benchmarks)
    pools = _reference_pool(scores, benchmarks, th, prepared=prepared)
    groups = list(score_groups(prepared))      # split once, read by every trial
    links: dict[tuple, tuple] = {}             # a model drawn again is tested on the same link
    frames = []
    for trial in range(trials):
        picks, pairs = set(), set()
        for _, b, models in pools:
            picks.add((models[rng.integers(len(models))], b))
            i, j = rng.choice(len(models), size=2, replace=False)
            pairs.add((models[i], models[j], b))
        tests = a1_tests(scores, benchmarks, rng=rng, th=th, only=lambda m, b: (m, b) in picks, prepared=prepared,
                         groups=groups, links=links)
        tests += pair_tests(scores, benchmarks, pd.DataFrame(), th=th, pairs=pairs, prepared=prepared, groups=groups)
        frames.append(pd.DataFrame([{"trial": trial, "signal": t.signal, "source": t.source, "benchmark": t.benchmark,
                                     "model": t.model, "effect": t.effect, "se": t.se, "p_value": t.p_value,
                                     "gate": True if t.signal == "A1" else t.gate} for t in tests],
                                   columns=PLACEBO_COLUMNS))
    frames = [f for f in frames if len(f)]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=PLACEBO_COLUMNS)


def _tests(inputs: SignalInputs, th: Thresholds) -> list[SignalTest]:
    if not inputs.can_link:
        return []
    return a1_tests(inputs.scores, inputs.benchmarks, rng=inputs.rng, slices=inputs.cutoff_slices(), th=th,
                    prepared=inputs.prepared, stored=inputs.stored)


SIGNAL = Signal(name="A1", tests=_tests, placebo=None,   # drawn jointly with A2: a2.link_placebo
                floors=("a1_min_ref_models", "a1_min_unique", "a1_robust_z_min_benchmarks"))

"""A1's vectorised bootstrap (issue 23) gives the numbers of the implementation it replaced.

tests/a1_oracle.py keeps the former `a1_one` (the logit of every redrawn score, a PAVA per
bootstrap row through scipy's public `isotonic_regression`, a stable merge argsort) verbatim. The
new one must return the same evidence, bit for bit, and leave the generator in the same state
(the tests after it draw from the same stream), on inputs of the real history's size: Artificial
Analysis gives ~445 reference models on GPQA Diamond, each score a count of n items (ties).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import a1_oracle as oracle
from analysis.contamination import numerics
from analysis.contamination.a1 import a1_one
from analysis.contamination.base import Thresholds
from analysis.contamination.link import _LinkData, _logit


def _link(rng: np.random.Generator, r: int, n_b: int, n_refs: list[int], *, floor: float | None,
          varied_n: bool = False) -> tuple[_LinkData, np.ndarray]:
    """r reference models: a latent ability, scores as counts of n items (many ties), b's first."""
    ability = rng.normal(0, 1.3, r + 1)
    ns = [n_b, *n_refs]
    cols, n_cols = [], []
    for j, n in enumerate(ns):
        n_row = rng.integers(n // 2, n + 1, r + 1) if varied_n and j else np.full(r + 1, n)
        p = 1 / (1 + np.exp(-(ability * (0.8 + 0.2 * j) + rng.normal(0, 0.4, r + 1))))
        cols.append(rng.binomial(n_row, p) / n_row)
        n_cols.append(n_row.astype(float))
    s, n = np.column_stack(cols), np.column_stack(n_cols)
    link = _LinkData([f"m{i}" for i in range(r)], [f"ref{j}" for j in range(len(n_refs))], s[:r], n[:r],
                     None, r >= Thresholds().a1_isotonic_min_ref, (1, 2), floor)
    return link, np.column_stack([s[r], n[r]])


def _same(a: dict, b: dict) -> list[str]:
    """Keys whose values differ (NaN equal to NaN; lists compared element by element)."""
    def eq(u, v) -> bool:
        if isinstance(u, float) and isinstance(v, float):
            return u == v or (math.isnan(u) and math.isnan(v))
        return u == v
    return [k for k in a if not eq(a[k], b[k])] + sorted(set(b) - set(a))


def _check(link: _LinkData, model: np.ndarray, *, seed: int, n_boot: int | None = None,
           th: Thresholds = Thresholds()) -> None:
    r = len(link.refs)
    row = pd.Series({"score": model[0, 0], "n": model[0, 1]})
    s_m, n_m = model[1:, 0], model[1:, 1]
    g_old, g_new = np.random.default_rng(seed), np.random.default_rng(seed)
    want = oracle.a1_one(row, link, s_m, n_m, rng=g_old, th=th, n_boot=n_boot)
    got = a1_one(row, link, s_m, n_m, rng=g_new, th=th, n_boot=n_boot)
    assert not _same(want, got), (r, {k: (want[k], got[k]) for k in _same(want, got) if k in got})
    assert g_old.bit_generator.state == g_new.bit_generator.state     # the next test draws the same numbers
    assert got["n_reference_models"] == r


@pytest.mark.parametrize("r, n_refs, anchor", [(40, [500], False), (160, [2500, 300], False), (60, [400], True),
                                                (10, [200], False)])
def test_a1_one_equals_the_former_implementation(r, n_refs, anchor):
    """Both link paths (isotonic: the min-max formula up to 150 rows, PAVA per row beyond; the
    logit-linear below 15 models), one and two reference benchmarks, the chance anchor."""
    rng = np.random.default_rng(r)
    link, model = _link(rng, r, 198, n_refs, floor=float(_logit(np.array(0.25), 1e6)))
    th = Thresholds()
    if anchor:
        th = Thresholds(chance_link="anchor")
        link.anchor, link.floor = (-1.2, -1.1), None
    for seed in range(2):
        _check(link, model, seed=seed, n_boot=400, th=th)


@pytest.mark.slow    # ~445 reference models x 2,000 replicates, each implementation
@pytest.mark.parametrize("r, n_refs, varied", [(445, [2500], False), (346, [2500, 198], True)])
def test_a1_one_equals_the_former_implementation_at_the_real_size(r, n_refs, varied):
    rng = np.random.default_rng(r)
    link, model = _link(rng, r, 198, n_refs, floor=float(_logit(np.array(0.25), 1e6)), varied_n=varied)
    for seed in range(3):
        _check(link, model, seed=seed)              # th.bootstrap_b replicates, as analyze runs them


def test_row_fits_and_stable_order_equal_the_former_ones():
    """The batched pooling of ties + PAVA per row and the stable order built from a quick argsort:
    the same numbers as the per-row loop, with ties, NaN and rows of one point."""
    rng = np.random.default_rng(11)
    for b, n, decimals in [(300, 346, 1), (40, 200, 0), (3, 160, 3), (1, 151, 2), (5, 300, 8), (4, 1, 0)]:
        x = np.round(rng.normal(size=(b, n)), decimals)
        y = x + rng.normal(size=(b, n))
        if n > 10:
            x[0, 3:9] = np.nan
            x[-1, 1:5] = x[-1, 0]
        assert np.array_equal(numerics.stable_argsort_rows(x), np.argsort(x, axis=1, kind="stable"))
        want, got = oracle._isotonic_fit_rows(x, y), numerics._isotonic_fit_rows(x, y)
        assert np.array_equal(want[0], got[0], equal_nan=True) and np.array_equal(want[1], got[1], equal_nan=True)
        q = np.column_stack([x[:, :2] + 0.01, np.full(b, 50.0)])
        assert np.array_equal(oracle._isotonic_predict_batch(x, y, q), numerics._isotonic_predict_batch(x, y, q),
                              equal_nan=True)


def _two_tested_benchmarks(rng: np.random.Generator, models: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Scores of `models` (counts of n items, one snapshot) on `target` and `other`, both A1-tested
    against the reference benchmark `ref`, and the benchmarks' frame."""
    ability = rng.normal(0, 1.2, len(models))
    rows = []
    for b, n, shift in (("target", 198, 0.3), ("other", 300, -0.2), ("ref", 2500, -1.0)):
        p = 1 / (1 + np.exp(-(ability + shift + rng.normal(0, 0.3, len(models)))))
        rows += [{"source": "src", "benchmark": b, "model": m, "score": k / n, "n_items": n, "snapshot_id": 3}
                 for m, k in zip(models, rng.binomial(n, p))]
    benches = pd.DataFrame({"benchmark": ["target", "other", "ref"],
                            "reference_benchmarks": [("ref",), ("ref",), ()], "n_items": [198, 300, 2500],
                            "chance": [0.25, 0.0, 0.0]})
    return pd.DataFrame(rows), benches


def test_a1_tests_held_at_their_stored_numbers_are_not_computed(monkeypatch):
    """A test on the data and thresholds of the previous run's (families.holdable) keeps its stored
    numbers in `finalize`; a1_tests then does not compute it: no bootstrap, no draws from the
    generator. The run's results equal those of computing every test and holding them, and a test
    whose data changed is computed (and only those)."""
    import analysis.contamination.a1 as a1
    from analysis.contamination.families import finalize, holdable, previous_tests, test_key
    models = [f"m{i}" for i in range(12)]
    scores, benches = _two_tested_benchmarks(np.random.default_rng(6), models)
    th = Thresholds(bootstrap_b=200)
    first = a1.a1_tests(scores, benches, rng=np.random.default_rng(1), th=th)
    assert len(first) == 2 * len(models)
    previous = previous_tests(finalize(first, None, th))
    stored = lambda t: previous.get(test_key(t.model, t.benchmark, "A1", t.source, ""))  # noqa: E731
    calls = []
    real_one = a1.a1_one
    monkeypatch.setattr(a1, "a1_one", lambda *a, **k: calls.append(a[0]["model"]) or real_one(*a, **k))

    gen = np.random.default_rng(2)
    state = gen.bit_generator.state
    held = a1.a1_tests(scores, benches, rng=gen, th=th, stored=previous)
    assert calls == [] and gen.bit_generator.state == state          # nothing computed, nothing drawn
    computed = a1.a1_tests(scores, benches, rng=np.random.default_rng(2), th=th)
    assert len(calls) == 2 * len(models)
    pd.testing.assert_frame_equal(finalize(held, previous, th), finalize(computed, previous, th))
    assert [(t.effect, t.p_value) for t in held] == [(stored(t)["effect"], stored(t)["p_value"]) for t in held]

    # a new snapshot that repeats one model's row on `other` is the same evidence: every test is held
    calls.clear()
    on_other = (scores["model"] == "m0") & (scores["benchmark"] == "other")
    repeated = scores.assign(snapshot_id=np.where(on_other, 4, scores["snapshot_id"]))
    a1.a1_tests(repeated, benches, rng=np.random.default_rng(2), th=th, stored=previous)
    assert calls == []
    # new data for that model on `other` (its score moves): its test and every test whose link reads its
    # row move (those of `other`); the tests of `target` read none of them and are held
    changed = repeated.assign(score=np.where(on_other, scores["score"] + 0.01, scores["score"]))
    again = a1.a1_tests(changed, benches, rng=np.random.default_rng(2), th=th, stored=previous)
    moved = [t for t in again if not holdable(stored(t), t.snapshot_ids, th, t.evidence.get("data_hash"))]
    assert calls == [t.model for t in moved] and len(moved) == len(models)
    assert all(t.benchmark == "other" for t in moved)

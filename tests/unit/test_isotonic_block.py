"""A1's min-max isotonic fit (analysis/contamination/numerics.py `_isotonic_fit_block`, issue 52) worked
in one array in place: the same floats as the formula written out cell by cell, and as the block
it replaced (tests/a1_oracle.py keeps it verbatim), ties, constant rows, NaN and inf included."""

from __future__ import annotations

import math

import numpy as np
import pytest

import a1_oracle as oracle
from analysis.contamination.numerics import _isotonic_fit_block, isotonic_fit_batch


def _rows(rng: np.random.Generator, kind: int, b: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """x with ties of several kinds (none, many, all), y continuous or on a few levels."""
    x = [rng.normal(size=(b, n)),
         rng.integers(0, max(1, n // 3), size=(b, n)).astype(float),           # many ties
         np.zeros((b, n)),                                                        # one tie group
         np.round(rng.normal(size=n), 1)[rng.integers(0, n, size=(b, n))]][kind % 4]   # resampled rows
    y = rng.normal(size=(b, n)) * 3 if kind % 3 else rng.integers(0, 3, size=(b, n)).astype(float)
    if kind % 5 == 0:
        y = np.full((b, n), 0.1)                                                  # a constant row
    return x, y


def _brute_force(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """fit_i = max over tie-group starts j <= i of min over tie-group ends k >= i of mean(y_j..y_k),
    each mean (cum[k+1] - cum[j]) / (k+1-j) of the row's running sum: the formula, one cell at a time."""
    order = np.argsort(x, kind="stable")
    xs, ys = x[order], y[order]
    n = len(xs)
    cum = np.concatenate([[0.0], np.cumsum(ys)])
    starts = [i for i in range(n) if i == 0 or xs[i] != xs[i - 1]]
    ends = [i for i in range(n) if i == n - 1 or xs[i] != xs[i + 1]]
    fit = np.empty(n)
    for i in range(n):
        fit[i] = max(min(float((cum[k + 1] - cum[j]) / (k + 1 - j)) for k in ends if k >= i)
                     for j in starts if j <= i)
    return fit


@pytest.mark.parametrize("kind", range(4))
def test_block_fit_is_the_min_max_formula_cell_by_cell(kind):
    rng = np.random.default_rng(kind)
    for n in (1, 2, 3, 7, 18):
        x, y = _rows(rng, kind + n, 4, n)
        xs, fit = _isotonic_fit_block(x, y)
        for row in range(len(x)):
            assert np.array_equal(xs[row], np.sort(x[row], kind="stable"))
            assert np.array_equal(fit[row], _brute_force(x[row], y[row])), (kind, n, row)


def test_block_fit_equals_the_former_block_bit_for_bit():
    rng = np.random.default_rng(52)
    for case in range(300):
        b, n = int(rng.integers(1, 9)), int(rng.integers(1, 60))
        x, y = _rows(rng, case, b, n)
        if case % 13 == 0 and n > 2:
            y[:, 1] = np.nan
        if case % 17 == 0 and n > 2:
            y[:, -1] = np.inf
        with np.errstate(invalid="ignore"):
            want, got = oracle._isotonic_fit_block(x, y), _isotonic_fit_block(x, y)
        assert np.array_equal(want[0], got[0])
        assert np.array_equal(want[1], got[1], equal_nan=True), (case, b, n)


def test_chunks_of_rows_give_the_one_block_fit(monkeypatch):
    from analysis.contamination import numerics
    rng = np.random.default_rng(7)
    x, y = _rows(rng, 3, 50, 30)
    whole = _isotonic_fit_block(x, y)
    monkeypatch.setattr(numerics, "ISOTONIC_BATCH_MAX_CELLS", 30 * 30 * 7)      # chunks of 7 rows
    chunked = isotonic_fit_batch(x, y)
    assert np.array_equal(whole[0], chunked[0]) and np.array_equal(whole[1], chunked[1])
    assert math.isclose(float(chunked[1][0, -1]), float(chunked[1][0].max()))   # non-decreasing: the last is the top

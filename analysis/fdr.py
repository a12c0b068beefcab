"""False-discovery control shared by the analyses (contamination tests, source disagreements):
Benjamini-Hochberg q-values. Pure NumPy, apart from the contamination package, so that an
analysis needing only BH (analysis.disagreement) does not load the signals and scipy."""

from __future__ import annotations

from typing import Iterable

import numpy as np


def benjamini_hochberg(p_values: Iterable[float]) -> np.ndarray:
    """BH-adjusted q-values (`bh_adjust`); NaN p stays NaN."""
    p = np.asarray(list(p_values), dtype=float)
    q = np.full_like(p, np.nan)
    ok = np.isfinite(p)
    if ok.any():
        q[ok] = bh_adjust(np.clip(p[ok], 0.0, 1.0))
    return q


def bh_adjust(p: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values of `p` (1-D, in [0, 1]): the steps of
    `scipy.stats.false_discovery_control(p, method="bh")` (scipy 1.17) on a NumPy array, with the
    same numbers (tests/integration/test_scipy_equivalents.py)."""
    p = np.asarray(p, dtype=float)
    if p.size <= 1:
        return p
    m = p.shape[-1]
    order = np.argsort(p, axis=-1)
    q = np.take_along_axis(p, order, axis=-1)
    q *= m / np.arange(1, m + 1, dtype=q.dtype)
    np.minimum.accumulate(q[::-1], out=q[::-1])
    np.put_along_axis(q, order, values=q.copy(), axis=-1)
    return np.clip(q, 0.0, 1.0)

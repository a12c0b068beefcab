"""The analysis computes a few scipy.stats results with its own stand-ins (issue 23). Each stand-in must give
scipy.stats' numbers exactly (bit for bit), on many random inputs and the edge cases."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from scipy.special import fdtrc, ndtri

from analysis.contamination.numerics import _Z95
from analysis.fdr import benjamini_hochberg, bh_adjust
from analysis.frontier_trend import theilslopes

REPO = Path(__file__).resolve().parents[2]


def _same(a, b) -> bool:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))


def _theil_inputs(rng: np.random.Generator):
    """Random point sets of 2-40 points: smooth, step-like (ties in y), repeated x, integers."""
    for _ in range(600):
        n = int(rng.integers(2, 41))
        kind = rng.integers(0, 4)
        x = np.sort(rng.uniform(0, 800, n))
        if kind == 1:                           # a frontier: non-decreasing steps, many equal y
            y = np.maximum.accumulate(np.round(rng.uniform(0, 1, n), 2))
        elif kind == 2:                         # ties in x too
            x = np.sort(rng.integers(0, max(2, n // 2), n)).astype(float)
            y = rng.normal(0, 1, n)
        elif kind == 3:
            x, y = rng.integers(0, 10, n).astype(float), rng.integers(0, 5, n).astype(float)
        else:
            y = 0.3 + 0.001 * x + rng.normal(0, 0.05, n)
        yield y, x, float(rng.choice([0.95, 0.9, 0.99, 0.05, 0.8]))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")   # identical x, a negative variance: both warn
def test_theilslopes_gives_scipys_numbers():
    rng = np.random.default_rng(23)
    for y, x, alpha in _theil_inputs(rng):
        ours = theilslopes(y, x, alpha=alpha)
        ref = stats.theilslopes(y, x, alpha=alpha)
        assert _same(tuple(ours), (ref.slope, ref.intercept, ref.low_slope, ref.high_slope)), (y, x, alpha)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_theilslopes_edge_cases_match_scipy():
    cases = [([1.0, 2.0], [0.0, 1.0]), ([1.0, 1.0, 1.0], [0.0, 1.0, 2.0]), ([1.0, 2.0, 3.0], [5.0, 5.0, 5.0]),
             ([1.0, np.nan, 3.0], [0.0, 1.0, 2.0]), ([0.0, 1.0, np.inf], [0.0, 1.0, 2.0])]
    for y, x in cases:
        ours = theilslopes(y, x, alpha=0.95)
        ref = stats.theilslopes(y, x, alpha=0.95)
        assert _same(tuple(ours), (ref.slope, ref.intercept, ref.low_slope, ref.high_slope)), (y, x)


def test_bh_adjust_gives_scipys_numbers():
    rng = np.random.default_rng(7)
    for _ in range(800):
        m = int(rng.integers(1, 200))
        p = rng.uniform(0, 1, m) ** float(rng.choice([1.0, 3.0, 8.0]))
        if rng.random() < 0.5:                  # ties, and the ends of [0, 1]
            p = np.round(p, int(rng.integers(1, 4)))
            p[rng.random(m) < 0.05] = 0.0
            p[rng.random(m) < 0.05] = 1.0
        assert _same(bh_adjust(p), stats.false_discovery_control(p, method="bh")), p
    assert _same(benjamini_hochberg([0.01, np.nan, 0.04, 0.03]),
                 [0.03, np.nan, 0.04, 0.04])


def test_f_upper_tail_and_normal_quantile_give_scipys_numbers():
    rng = np.random.default_rng(11)
    x = np.concatenate([[0.0, 1e-300, 1.0, 1e300, np.inf], rng.uniform(0, 5, 500), rng.exponential(50, 500)])
    for df2 in [1, 2, 3, 5, 8, 13, 40, 200, 1000]:
        assert _same(fdtrc(1, df2, x), stats.f.sf(x, 1, df2))
        assert all(float(fdtrc(1, df2, v)) == float(stats.f.sf(v, 1, df2)) for v in x[:50])
    q = np.concatenate([[0.0, 1e-300, 0.025, 0.5, 0.975, 1.0], rng.uniform(0, 1, 1000)])
    assert _same(ndtri(q), stats.norm.ppf(q))
    assert _Z95 == stats.norm.ppf(0.975)


@pytest.mark.slow   # a fresh interpreter importing the analysis
def test_the_analysis_modules_import_no_scipy_stats():
    """What `benchwatch analyze` imports to recompute tables and re-apply the family-wide
    correction; the signals import scipy.stats when one of their tests is computed."""
    code = ("import sys, jobs.analyze, jobs.saturation, jobs.contamination, analysis.contamination, "
            "analysis.contamination.reuse, analysis.trends, analysis.frontier_trend, analysis.logistic; "
            "print('scipy.stats' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stderr

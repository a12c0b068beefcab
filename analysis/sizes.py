"""How many items a table's numbers rest on, as the data imply it, against the registry's n.

n counts distinct items, never trials or samples. Two ways the data show it:

- a published standard error of a proportion s implies n = s (1 - s) / se^2 (the binomial
  SE solved for n). A source that averages several samples per item publishes a smaller SE
  than one run per item would give, so its implied n is *larger* than the item count (Epoch's
  GPQA Diamond: median ~308 for 198 questions): normal, not a finding. A median implied n
  well *below* the registry's n (< IMPLIED_N_SMALL_RATIO of it) says fewer items were run
  than the benchmark has (a subset, a sample) and the registry's n would overstate precision;
- per-item results: the distinct items each model has, median over models.

Pure Python (no numpy/pandas): `benchwatch status` uses it and starts without them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable

from analysis.constants import IMPLIED_N_MIN_ROWS, IMPLIED_N_SMALL_RATIO

FEWER_ITEMS = "fewer_items"            # clearly fewer items than the registry's n
SEVERAL_SAMPLES = "several_samples"    # more than the registry's n: several samples per item (normal)
CONSISTENT = "consistent"


def implied_n(score: float | None, stderr: float | None) -> float | None:
    """s (1 - s) / se^2, the n a binomial standard error implies; None unless 0 < s < 1 and se > 0."""
    if score is None or stderr is None:
        return None
    s, se = float(score), float(stderr)
    if not (math.isfinite(s) and math.isfinite(se)) or not 0.0 < s < 1.0 or se <= 0.0:
        return None
    return s * (1.0 - s) / (se * se)


@dataclass(frozen=True)
class SizeCheck:
    """One table's size as its data imply it. `basis`: 'stderr' or 'items'."""

    source: str
    benchmark: str
    table_version: str
    basis: str
    rows: int                 # rows (stderr) or models (items) the median is over
    median_n: float
    registry_n: int
    verdict: str

    @property
    def ratio(self) -> float:
        return self.median_n / self.registry_n


def size_checks(rows: Iterable[tuple], *, small_ratio: float = IMPLIED_N_SMALL_RATIO,
                min_rows: int = IMPLIED_N_MIN_ROWS) -> list[SizeCheck]:
    """Per (source, benchmark, table_version, basis): median implied n against the registry's n.

    `rows`: (basis, source, benchmark, table_version, score, stderr, items, registry_n) with
    basis 'stderr' (score and stderr of one row) or 'items' (one model's distinct item count).
    Tables with fewer than `min_rows` usable values or no registry n are left out.
    """
    groups: dict[tuple[str, str, str, str], tuple[list[float], int]] = {}
    for basis, source, bench, version, score, stderr, items, registry_n in rows:
        if registry_n is None or not registry_n > 0:
            continue
        n = implied_n(score, stderr) if basis == "stderr" else (float(items) if items else None)
        if n is None:
            continue
        key = (str(source), str(bench), str(version or ""), str(basis))
        groups.setdefault(key, ([], int(registry_n)))[0].append(n)
    from statistics import median      # here, not at the top: `status` imports this module at start-up
    out = []
    for (source, bench, version, basis), (values, registry_n) in sorted(groups.items()):
        if len(values) < min_rows:
            continue
        med = float(median(values))
        verdict = (FEWER_ITEMS if med < small_ratio * registry_n
                   else SEVERAL_SAMPLES if med > registry_n / small_ratio else CONSISTENT)
        out.append(SizeCheck(source, bench, version, basis, len(values), med, registry_n, verdict))
    return out

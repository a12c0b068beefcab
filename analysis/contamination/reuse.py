"""Stored tests in place of recomputed ones (issue 23, incremental analysis): the tests of a unit
the analysis keeps (an item set, or A1/A2's linked benchmarks: jobs/relations/item_tests.py,
link_tests.py, kept by the one keep-or-recompute step) are not run again; its stored tests enter
this run's family-wide Benjamini–Hochberg correction (families.finalize) with their stored p-values.

A stored test comes back as the SignalTest that `finalize` would have held at its stored numbers
(same snapshots, same thresholds: `families.same_data`), so the result is the same as
recomputing it. Pure: frames in, tests out.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from analysis.contamination.base import SignalTest, Thresholds

# evidence keys `finalize` writes around a test's own evidence (families._hold leaves them out too)
_RUN_KEYS = ("q_value", "corroborated_by", "persisted_from_snapshots", "held", "thresholds", "label", "unit",
             "signal", "source", "effect", "se", "ci", "p_value", "snapshot_ids", "data_versions")


def _finite(v: Any) -> bool:
    try:
        return v is not None and bool(np.isfinite(float(v)))
    except (TypeError, ValueError):
        return False


def _gate(signal: str, ev: dict, th: Thresholds) -> bool:
    """The signal's own extra condition, as its test builder set it (a1._a1_self_consistency,
    a2's z floor; A3 has none): needed only for a test `finalize` does not hold."""
    z = ev.get("robust_z" if signal == "A1" else "z")
    if signal == "A1":
        return True if z is None else bool(z == float("inf") or (_finite(z) and float(z) >= th.a1_robust_z))
    if signal == "A2":
        return bool(z is not None and _finite(z) and float(z) >= th.a2_min_z)
    return True


def stored_test(row: dict, th: Thresholds) -> SignalTest:
    """One stored test (a `contamination_signals` row, evidence decoded or JSON) as a SignalTest."""
    ev = row["evidence"]
    ev = dict(json.loads(ev) if isinstance(ev, str) else (ev or {}))
    own = {k: v for k, v in ev.items() if k not in _RUN_KEYS}
    return SignalTest(model=str(row["model"]), benchmark=str(row["benchmark"]), source=str(row["source"] or ""),
                      signal=str(row["signal"]), effect=float(row["effect"]), se=float(row["se"]),
                      p_value=float(row["p_value"]), ci_low=float(row["ci_low"]), ci_high=float(row["ci_high"]),
                      snapshot_ids=tuple(sorted(int(s) for s in ev.get("snapshot_ids") or ())),
                      gate=_gate(str(row["signal"]), ev, th), evidence=own, detail=str(row["detail"] or ""))


def reusable(rows: pd.DataFrame) -> pd.Series:
    """Which stored tests can stand in for a recomputation: finite p, effect and SE, with the
    snapshots they read (else `finalize` would not hold them at their numbers)."""
    if rows.empty:
        return pd.Series(dtype=bool)
    snaps = [bool((json.loads(e) if isinstance(e, str) else (e or {})).get("snapshot_ids")) for e in rows["evidence"]]
    finite = rows[["p_value", "effect", "se"]].apply(lambda c: c.map(_finite)).all(axis=1)
    return finite & pd.Series(snaps, index=rows.index)

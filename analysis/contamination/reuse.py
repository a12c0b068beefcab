"""Stored tests in place of recomputed ones (issue 23, incremental analysis): a signal whose
data did not change since the last analysis is not run again; its stored tests enter this run's
family-wide Benjamini–Hochberg correction (families.finalize) with their stored p-values.

A stored test comes back as the SignalTest that `finalize` would have held at its stored numbers
(same snapshots, same thresholds: `families.same_data`), so the result is the same as
recomputing it. Pure: frames in, tests out.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, Iterable

import numpy as np
import pandas as pd

from analysis.contamination.base import Signal, SignalInputs, SignalTest, Thresholds

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


def partial_signal(signal: Signal, stored: pd.DataFrame, stored_skips: pd.DataFrame,
                   fresh: Iterable[tuple[str, str]] | None) -> Signal:
    """`signal` that recomputes only the (source, benchmark) item groups in `fresh` (None: all,
    the signal itself) and returns the stored tests (and stored not-tested models) of the others.

    Groups are item groups: the inputs' items are restricted to `fresh`. A signal of scores (A1,
    A2) is either recomputed as a whole (None) or kept as a whole (an empty `fresh`).
    """
    if fresh is None:
        return signal
    groups = set(fresh)
    mine = stored[stored["signal"] == signal.name] if len(stored) else stored
    keep = mine[[(str(s or ""), str(b)) not in groups for s, b in zip(mine["source"], mine["benchmark"])]] \
        if len(mine) else mine
    skips = stored_skips[stored_skips["signal"] == signal.name] if len(stored_skips) else stored_skips
    skips = skips[[(str(s or ""), str(b)) not in groups for s, b in zip(skips["source"], skips["benchmark"])]] \
        if len(skips) else skips

    def tests(inputs: SignalInputs, th: Thresholds) -> list[SignalTest]:
        out = [stored_test(r, th) for r in keep.to_dict("records")]
        inputs.skipped.extend(skips.to_dict("records"))
        if groups and inputs.items is not None and len(inputs.items):
            it = inputs.items
            mask = [(str(s or ""), str(b)) in groups for s, b in zip(it["source"], it["benchmark"])]
            out += signal.tests(replace(inputs, items=it[mask]), th)
        return out

    return Signal(name=signal.name, tests=tests, placebo=signal.placebo, family=signal.family, floors=signal.floors)

"""Multiplicity, flags and status: BH within each signal's family, the flag rule, persisted /
corroborated."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Mapping

import numpy as np
import pandas as pd

from analysis.contamination.base import RESULT_COLUMNS, SignalTest, Thresholds
from analysis.contamination.numerics import benjamini_hochberg, jsonable
from analysis.cutoffs import require_columns


def family_q_values(tests: list[SignalTest], families: Mapping[str, str] | None = None) -> np.ndarray:
    """BH q-values computed within each family of tests (`families`: signal -> family, by default
    each signal its own family), in the order of `tests`."""
    families = families or {}
    family = [families.get(t.signal, t.signal) for t in tests]
    q = np.full(len(tests), np.nan)
    for fam in set(family):
        idx = [i for i, f in enumerate(family) if f == fam]
        q[idx] = benjamini_hochberg(tests[i].p_value for i in idx)
    return q


def _is_flag(t: SignalTest, q: float, th: Thresholds) -> bool:
    return bool(np.isfinite(q) and q <= th.fdr_q and t.effect >= th.min_effect
                and t.effect >= th.min_effect_se * t.se and t.gate)


def _previous_keys(previous: pd.DataFrame | None) -> dict[tuple[str, str, str, str, str], tuple]:
    """(model, benchmark, signal, source, detail) -> snapshot ids of the previous run's flags."""
    if previous is None or previous.empty:
        return {}
    require_columns(previous, ("model", "benchmark", "signal", "status"), "previous flags")
    out = {}
    for row in previous.to_dict("records"):
        if row["status"] == "not_flagged":
            continue
        ev = row.get("evidence")
        if isinstance(ev, str):
            ev = json.loads(ev)
        snaps = tuple((ev or {}).get("snapshot_ids") or ())
        key = (row["model"], row["benchmark"], row["signal"], row.get("source") or "", row.get("detail") or "")
        out[key] = snaps
    return out


def finalize(tests: list[SignalTest], previous_flags: pd.DataFrame | None, th: Thresholds,
             families: Mapping[str, str] | None = None) -> pd.DataFrame:
    """BH per signal family (A1, A2, A3 separately), the flag rule, and the status of each test.

    One family per signal: the many mostly-null A1/A2 tests of a run would otherwise raise the
    BH bar of A3's item-level tests (and vice versa); each family's q-values control that
    signal's false discovery rate at `fdr_q`.

    status: `corroborated` when the (model, benchmark) flag also comes from another signal or
    another source; else `persisted` when the previous run flagged the same (model, benchmark,
    signal, source, detail) on different snapshots; else `suspect`; unflagged tests are `not_flagged`.
    """
    q = family_q_values(tests, families)
    flagged = [_is_flag(t, qi, th) for t, qi in zip(tests, q)]
    fired: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for t, f in zip(tests, flagged):
        if f:
            fired.setdefault((t.model, t.benchmark), set()).add((t.signal, t.source))
    prev = _previous_keys(previous_flags)
    rows = []
    for t, qi, f in zip(tests, q, flagged):
        others = sorted(fired.get((t.model, t.benchmark), set()) - {(t.signal, t.source)})
        prev_snaps = prev.get((t.model, t.benchmark, t.signal, t.source, t.detail))
        persisted = f and prev_snaps is not None and tuple(prev_snaps) != tuple(t.snapshot_ids)
        status = ("not_flagged" if not f else "corroborated" if others
                  else "persisted" if persisted else "suspect")
        evidence = {"signal": t.signal, "source": t.source, "effect": t.effect, "se": t.se,
                    "ci": [t.ci_low, t.ci_high], "p_value": t.p_value, "q_value": qi,
                    "snapshot_ids": list(t.snapshot_ids), **t.evidence,
                    "corroborated_by": [{"signal": s, "source": src} for s, src in others] if f else [],
                    "persisted_from_snapshots": list(prev_snaps) if persisted else None,
                    "unit": "proportion", "thresholds": asdict(th), "label": "suspect, not a verdict"}
        rows.append({"model": t.model, "benchmark": t.benchmark, "source": t.source, "signal": t.signal,
                     "detail": t.detail, "effect": t.effect, "se": t.se, "ci_low": t.ci_low, "ci_high": t.ci_high,
                     "p_value": t.p_value, "q_value": qi, "flagged": f, "status": status,
                     "evidence": jsonable(evidence)})
    out = pd.DataFrame(rows, columns=RESULT_COLUMNS)
    return out.sort_values(["signal", "source", "benchmark", "model", "detail"], kind="stable").reset_index(drop=True)

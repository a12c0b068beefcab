"""Multiplicity, flags and status: BH within each signal's family, the flag rule, a test whose
data are unchanged held at its stored numbers, persisted / corroborated."""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from typing import Any, Mapping

import numpy as np
import pandas as pd

from analysis.contamination.base import RESULT_COLUMNS, SignalTest, Thresholds
from analysis.constants import RETIRED_SIGNALS, SUSPICION_STATES
from analysis.contamination.numerics import jsonable
from analysis.cutoffs import require_columns
from analysis.fdr import benjamini_hochberg

TestKey = tuple[str, str, str, str, str]


def test_key(model: str, benchmark: str, signal: str, source: str | None, detail: str | None) -> TestKey:
    """The identity of a test across runs: (model, benchmark, signal, source, detail)."""
    return (str(model), str(benchmark), str(signal), str(source or ""), str(detail or ""))


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


def _decoded(ev: Any) -> dict:
    if isinstance(ev, str):
        ev = json.loads(ev)
    return dict(ev or {})


def previous_tests(previous: pd.DataFrame | Mapping[TestKey, dict] | None) -> dict[TestKey, dict]:
    """key -> the previous run's row of that test (every status), evidence decoded (a mapping
    is taken as already decoded)."""
    if isinstance(previous, Mapping):
        return dict(previous)
    if previous is None or previous.empty:
        return {}
    require_columns(previous, ("model", "benchmark", "signal", "status"), "previous tests")
    out = {}
    for row in previous.to_dict("records"):
        row["evidence"] = _decoded(row.get("evidence"))
        out[test_key(row["model"], row["benchmark"], row["signal"], row.get("source"), row.get("detail"))] = row
    return out


def _finite(v: Any) -> bool:
    try:
        return v is not None and bool(np.isfinite(float(v)))
    except (TypeError, ValueError):
        return False


def same_evidence(old_evidence: Mapping[str, Any] | None, old_snapshots: Any, evidence: Mapping[str, Any] | None,
                  snapshot_ids: Any) -> bool:
    """Do two tests of one key rest on the same evidence? By the content key of their inputs
    (`data_hash`, base.data_hash) when both have one: a new snapshot whose rows for the model and its
    references are unchanged is the same evidence. Without a key (tests stored before it), by
    their snapshots."""
    h_old, h_new = (old_evidence or {}).get("data_hash"), (evidence or {}).get("data_hash")
    if h_old and h_new:
        return str(h_old) == str(h_new)
    as_ids = lambda v: tuple(sorted(int(s) for s in (v if v is not None and not isinstance(v, float) else ())))  # noqa: E731
    return as_ids(old_snapshots) == as_ids(snapshot_ids)


def same_data(stored_evidence: Mapping[str, Any], snapshot_ids: tuple, th: Thresholds,
              data_hash: str | None = None) -> bool:
    """Is a stored test about the same data, by the same method? Its evidence (`same_evidence`: the
    content key of its inputs, else the snapshots it read) and the thresholds it was computed with
    are those of this run."""
    stored = tuple(sorted(int(s) for s in (stored_evidence.get("snapshot_ids") or ())))
    if not (stored or stored_evidence.get("data_hash")):
        return False
    return same_evidence(stored_evidence, stored, {"data_hash": data_hash}, snapshot_ids) and \
        json.dumps(stored_evidence.get("thresholds"), sort_keys=True, default=str) == \
        json.dumps(jsonable(asdict(th)), sort_keys=True, default=str)


def holdable(row: Mapping[str, Any] | None, snapshot_ids: tuple, th: Thresholds, data_hash: str | None = None) -> bool:
    """Does this run keep the stored test `row` (its key's row of `previous_tests`) for a test of
    `snapshot_ids` (and inputs `data_hash`): same data, same thresholds, finite p, effect and SE. A
    signal may then skip computing the test (`finalize` would keep the stored numbers over the
    computed ones)."""
    return row is not None and same_data(row["evidence"], snapshot_ids, th, data_hash) and \
        all(_finite(row.get(c)) for c in ("p_value", "effect", "se"))


def held_test(signal: str, model: str, benchmark: str, source: str, row: Mapping[str, Any], *,
              snapshot_ids: tuple, detail: str = "") -> SignalTest:
    """The test a signal did not compute because `holdable`: its key and snapshots with the stored
    numbers and evidence of `row`, as `finalize` holds a computed one (the same data give the same
    effect; its SE and p are those of the stored draws, which `finalize` keeps either way)."""
    nan = float("nan")
    return _hold(SignalTest(model=model, benchmark=benchmark, source=source, signal=signal, effect=nan, se=nan,
                            p_value=nan, ci_low=nan, ci_high=nan, snapshot_ids=tuple(snapshot_ids), detail=detail), row)


def _hold(t: SignalTest, row: Mapping[str, Any]) -> SignalTest:
    """`t` with the stored numbers of its unchanged data (p, effect, SE, CI, evidence)."""
    ev = {k: v for k, v in row["evidence"].items()
          if k not in ("q_value", "corroborated_by", "persisted_from_snapshots", "held", "thresholds",
                       "label", "unit", "signal", "source", "effect", "se", "ci", "p_value", "snapshot_ids",
                       "data_versions")}
    return replace(t, effect=float(row["effect"]), se=float(row["se"]), p_value=float(row["p_value"]),
                   ci_low=float(row["ci_low"]), ci_high=float(row["ci_high"]), evidence=ev)


def _data_versions(key: TestKey, snaps: tuple, flagged: bool, prev_row: dict | None,
                   suspicions: Mapping[TestKey, Mapping[str, Any]] | None, evidence: Mapping[str, Any]) -> int:
    """On how many distinct versions of its evidence (`same_evidence`: new results of the model or of
    its references, not a new snapshot of the same rows) this open suspicion has been flagged, this
    one included."""
    if not flagged:
        return 0
    if suspicions is not None:
        s = suspicions.get(key)
        if s is None or s.get("state") == SUSPICION_STATES[2]:     # resolved
            return 1
        new = not same_evidence(_decoded(s.get("evidence")), s.get("snapshot_ids"), evidence, snaps)
        return int(s.get("distinct_data") or 1) + (1 if new else 0)
    if prev_row is not None and prev_row.get("status") != "not_flagged":
        new = not same_evidence(prev_row["evidence"], prev_row["evidence"].get("snapshot_ids"), evidence, snaps)
        return 2 if new else 1
    return 1


def finalize(tests: list[SignalTest], previous: pd.DataFrame | Mapping[TestKey, dict] | None, th: Thresholds,
             families: Mapping[str, str] | None = None,
             suspicions: Mapping[TestKey, Mapping[str, Any]] | None = None,
             stored: pd.DataFrame | Mapping[TestKey, dict] | None = None) -> pd.DataFrame:
    """BH per signal family (A1, A2, A3 separately), the flag rule, and the status of each test.

    One family per signal: the many mostly-null A1/A2 tests of a run would otherwise raise the
    BH bar of A3's item-level tests (and vice versa); each family's q-values control that
    signal's false discovery rate at `fdr_q`.

    A test whose data are unchanged since its stored test (`stored`: the newest stored test of each
    key, storage.contamination.read_stored_tests; by default `previous`, the previous run's tests:
    same snapshots, same thresholds, `holdable`) keeps its stored p, effect, SE, CI and flag: an
    analysis that another source or a model date triggered cannot clear or raise it. Only its q is
    recomputed, with its family of this run (the evidence says `held`).

    status: `corroborated` when the (model, benchmark) flag also comes from another signal or
    another source; else `persisted` when the suspicion has been flagged on two distinct data
    versions (`suspicions`: the stored states by test_key; without them, the previous run's flag
    on other snapshots); else `suspect`; unflagged tests are `not_flagged`.
    """
    prev = previous_tests(previous)
    holds = prev if stored is None else previous_tests(stored)
    held: dict[int, dict] = {}
    tests = list(tests)
    for i, t in enumerate(tests):
        row = holds.get(test_key(t.model, t.benchmark, t.signal, t.source, t.detail))
        if row is not None and holdable(row, t.snapshot_ids, th, t.evidence.get("data_hash")):
            held[i] = row
            tests[i] = _hold(t, row)
    q = family_q_values(tests, families)
    flagged = [bool(held[i]["flagged"]) if i in held else _is_flag(t, qi, th)
               for i, (t, qi) in enumerate(zip(tests, q))]
    fired: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for t, f in zip(tests, flagged):
        if f and t.signal not in RETIRED_SIGNALS:      # a retired signal corroborates nothing
            fired.setdefault((t.model, t.benchmark), set()).add((t.signal, t.source))
    rows = []
    for i, (t, qi, f) in enumerate(zip(tests, q, flagged)):
        key = test_key(t.model, t.benchmark, t.signal, t.source, t.detail)
        others = sorted(fired.get((t.model, t.benchmark), set()) - {(t.signal, t.source)})
        versions = _data_versions(key, t.snapshot_ids, f, prev.get(key), suspicions, t.evidence)
        status = ("not_flagged" if not f else "corroborated" if others
                  else "persisted" if versions >= 2 else "suspect")
        prev_snaps = (prev[key]["evidence"].get("snapshot_ids") if key in prev else None)
        evidence = {"signal": t.signal, "source": t.source, "effect": t.effect, "se": t.se,
                    "ci": [t.ci_low, t.ci_high], "p_value": t.p_value, "q_value": qi,
                    "snapshot_ids": list(t.snapshot_ids), **t.evidence,
                    "corroborated_by": [{"signal": s, "source": src} for s, src in others] if f else [],
                    "persisted_from_snapshots": list(prev_snaps) if status == "persisted" and prev_snaps else None,
                    "data_versions": versions,
                    "held": ({"from_run": held[i].get("run_id"), "why": "data unchanged: same snapshots and "
                              "thresholds; p, effect and flag kept, q recomputed"} if i in held else None),
                    "unit": "proportion", "thresholds": asdict(th), "label": "suspect, not a verdict"}
        rows.append({"model": t.model, "benchmark": t.benchmark, "source": t.source, "signal": t.signal,
                     "detail": t.detail, "effect": t.effect, "se": t.se, "ci_low": t.ci_low, "ci_high": t.ci_high,
                     "p_value": t.p_value, "q_value": qi, "flagged": f, "status": status,
                     "evidence": jsonable(evidence)})
    out = pd.DataFrame(rows, columns=RESULT_COLUMNS)
    return out.sort_values(["signal", "source", "benchmark", "model", "detail"], kind="stable").reset_index(drop=True)

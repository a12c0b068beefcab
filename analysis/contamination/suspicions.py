"""Contamination suspicions as states (docs/statistics.md, "Suspicions"): what a flagged test
*is* between analyses, and when a user first hears of it.

A suspicion is a test flagged under the full rule (q <= fdr_q, effect >= min_effect and
>= min_effect_se · SE, the signal's gate). Its state is stored (table contamination_suspicions)
and moves only with new evidence: the content key of the test's inputs (`data_hash` in its
evidence, families.same_evidence; snapshots only for tests stored without one), so a new snapshot
whose rows for the model and its references are unchanged moves nothing (issue 50):

- a flagged test without an open suspicion opens one: `pending`, or `confirmed` at once when
  the first-notification rule (`confirmation`) already holds;
- an open suspicion whose test is flagged again stays open; on a new data version (other
  snapshots) `distinct_data` grows, and the rule may confirm it; its numbers are the test's
  (held at their stored values while its data are unchanged: families.finalize), its q the run's;
- an open suspicion resolves only when an analysis of NEW evidence for that test no longer flags
  it, or no longer tests it while its (source, benchmark) has new data; the resolution names those
  snapshots, their date and the evidence's key. An analysis that another source triggered changes
  neither; a resolved suspicion flagged again on the evidence that resolved it stays resolved.

The first-notification rule (one rule, `confirmation`): a suspicion is confirmed, and its alert
fires, when it has been flagged on two versions of its evidence, or is corroborated by another
signal or source, or its q is at most SUSPICION_CONFIRM_Q (0.01, a fifth of the FDR level).

Pure: frames in, a frame out; the run time and snapshot dates are passed in.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

import numpy as np
import pandas as pd

from analysis.constants import SUSPICION_CONFIRM_Q, SUSPICION_STATES
from analysis.contamination.families import TestKey, same_evidence, test_key

PENDING, CONFIRMED, RESOLVED = SUSPICION_STATES
SUSPICION_COLUMNS = ["model", "benchmark", "source", "signal", "detail", "state", "confirmed_by",
                     "first_flagged_at", "confirmed_at", "updated_at", "run_id", "distinct_data", "snapshot_ids",
                     "data_as_of", "effect", "se", "ci_low", "ci_high", "p_value", "q_value", "evidence",
                     "resolved_at", "resolved_snapshot_ids", "resolved_data_as_of", "resolution",
                     "calibration_key"]


def confirmation(distinct_data: int, q_value: float | None, status: str,
                 confirm_q: float = SUSPICION_CONFIRM_Q) -> str | None:
    """The first-notification rule: why a suspicion is confirmed, or None while it is pending."""
    if distinct_data >= 2:
        return "distinct_data"
    if status == "corroborated":
        return "corroborated"
    if q_value is not None and np.isfinite(q_value) and q_value <= confirm_q:
        return "strong_q"
    return None


def by_key(states: pd.DataFrame | None) -> dict[TestKey, dict[str, Any]]:
    """Stored suspicion states by test key (families.test_key)."""
    if states is None or states.empty:
        return {}
    return {test_key(r["model"], r["benchmark"], r["signal"], r["source"], r["detail"]): r
            for r in states.to_dict("records")}


def _snaps(v: Any) -> tuple[int, ...]:
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return ()
    return tuple(sorted(int(s) for s in v))


def _as_of(snaps: tuple[int, ...], dates: Mapping[int, pd.Timestamp]) -> pd.Timestamp | None:
    known = [pd.Timestamp(dates[s]) for s in snaps if s in dates and pd.notna(dates[s])]
    return max(known) if known else None


def advance_suspicions(results: pd.DataFrame, states: pd.DataFrame | None, *, run_id: str,
                       run_at: pd.Timestamp, current_data: Mapping[tuple[str, str], set[int]],
                       snapshot_dates: Mapping[int, pd.Timestamp],
                       confirm_q: float = SUSPICION_CONFIRM_Q,
                       calibration_keys: Mapping[tuple[str, str, str], str] | None = None) -> pd.DataFrame:
    """Every suspicion state after this run (SUSPICION_COLUMNS; rows no run moved are returned as stored).

    results: families.finalize's frame of this run (evidence as dicts); states: the stored
    states; current_data: (source, benchmark) -> the snapshot ids this run read for it (a test
    that is absent resolves only when its pair has snapshots other than those it rests on);
    snapshot_dates: snapshot id -> its observation time (the data a message names);
    calibration_keys: (signal, source, benchmark) -> the key of that item set's calibration this run
    (set_calibration.item_set_calibrations; the sets it computed). A suspicion takes its set's key
    when first flagged and whenever its evidence is new, and keeps it otherwise (`calibration_key`):
    the calibration it is judged by moves only with its own evidence (one taken while it had none).
    """
    keys = calibration_keys or {}

    def judged_by(r: Mapping[str, Any], prev: Mapping[str, Any], keep: bool) -> str | None:
        held = _key(prev.get("calibration_key")) if keep else None
        return held or _key(keys.get((str(r["signal"]), str(r["source"] or ""), str(r["benchmark"]))))

    old = by_key(states)
    out: dict[TestKey, dict[str, Any]] = {k: dict(v) for k, v in old.items()}
    seen: set[TestKey] = set()
    for r in results.to_dict("records"):
        key = test_key(r["model"], r["benchmark"], r["signal"], r["source"], r["detail"])
        seen.add(key)
        ev = r["evidence"] if isinstance(r["evidence"], dict) else {}
        snaps = _snaps(ev.get("snapshot_ids"))
        prev: dict[str, Any] = old.get(key) or {}
        is_open = bool(prev) and prev["state"] != RESOLVED
        numbers = {k: (None if pd.isna(r[k]) else float(r[k])) for k in
                   ("effect", "se", "ci_low", "ci_high", "p_value", "q_value")}
        new_evidence = not is_open or not same_evidence(_ev(prev.get("evidence")), prev.get("snapshot_ids"), ev, snaps)
        if r["flagged"] and prev and not is_open and not _new_since_resolution(prev, ev, snaps):
            # resolved, and flagged again on the evidence that resolved it (a rerun, a re-published
            # file, another model's data moving q): no new evidence, so it stays resolved
            out[key] = {**prev, "updated_at": run_at, "run_id": run_id}
            continue
        if r["flagged"]:
            versions = int(prev["distinct_data"]) + (1 if new_evidence else 0) if is_open else 1
            why = confirmation(versions, numbers["q_value"], r["status"], confirm_q)
            was_confirmed = is_open and prev["state"] == CONFIRMED
            state = CONFIRMED if was_confirmed or why else PENDING
            row = {**(prev if is_open else {}), "model": r["model"], "benchmark": r["benchmark"],
                   "source": r["source"] or "", "signal": r["signal"], "detail": r["detail"] or "",
                   "state": state,
                   "confirmed_by": prev["confirmed_by"] if was_confirmed else why,
                   "first_flagged_at": prev["first_flagged_at"] if is_open else run_at,
                   "confirmed_at": prev["confirmed_at"] if was_confirmed else (run_at if why else None),
                   "updated_at": run_at, "run_id": run_id, "distinct_data": versions, "snapshot_ids": list(snaps),
                   "data_as_of": _as_of(snaps, snapshot_dates), **numbers, "evidence": ev,
                   "resolved_at": None, "resolved_snapshot_ids": None, "resolved_data_as_of": None,
                   "resolution": None, "calibration_key": judged_by(r, prev, is_open and not new_evidence)}
            out[key] = row
        elif is_open and new_evidence:
            out[key] = _resolved(prev, run_at, run_id, snaps, snapshot_dates,
                                 {"why": "not flagged on the new data", "tested": True, **numbers, "status": r["status"],
                                  "data_hash": ev.get("data_hash")})
        elif is_open:   # same evidence, not flagged (q moved with other tests of the family): the suspicion holds
            out[key] = {**prev, "q_value": numbers["q_value"], "updated_at": run_at, "run_id": run_id,
                        "calibration_key": judged_by(r, prev, True)}
    for key, prev in old.items():
        if key in seen or prev["state"] == RESOLVED:
            continue
        now_snaps = tuple(sorted(current_data.get((str(prev["source"]), str(prev["benchmark"])), set())))
        if now_snaps and not set(now_snaps) <= set(_snaps(prev["snapshot_ids"])):
            out[key] = _resolved(prev, run_at, run_id, now_snaps, snapshot_dates,
                                 {"why": "not tested on the new data (the model's rows or windows no longer "
                                         "meet the signal's floors)", "tested": False})
    frame = pd.DataFrame(list(out.values()), columns=SUSPICION_COLUMNS)
    return frame.sort_values(["signal", "source", "benchmark", "model", "detail"], kind="stable").reset_index(drop=True)


def _key(v: Any) -> str | None:
    """A stored calibration key (None for NULL / NaN / empty)."""
    return v if isinstance(v, str) and v else None


def _ev(v: Any) -> dict[str, Any]:
    if isinstance(v, str):
        v = json.loads(v)
    return dict(v) if isinstance(v, Mapping) else {}


def _new_since_resolution(prev: Mapping[str, Any], evidence: Mapping[str, Any], snaps: tuple[int, ...]) -> bool:
    """Is a flagged test of a resolved suspicion new evidence: other inputs than those that resolved
    it (`same_evidence` against the resolution; a suspicion resolved without a tested verdict compares
    with the snapshots that closed it)."""
    res = _ev(prev.get("resolution"))
    return not same_evidence({"data_hash": res.get("data_hash")}, prev.get("resolved_snapshot_ids"), evidence, snaps)


def _resolved(prev: Mapping[str, Any], run_at: pd.Timestamp, run_id: str, snaps: tuple[int, ...],
              dates: Mapping[int, pd.Timestamp], resolution: dict[str, Any]) -> dict[str, Any]:
    return {**prev, "state": RESOLVED, "updated_at": run_at, "run_id": run_id, "resolved_at": run_at,
            "resolved_snapshot_ids": list(snaps), "resolved_data_as_of": _as_of(snaps, dates),
            "resolution": resolution}

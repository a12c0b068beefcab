"""Committed saturation bin per snapshot: a Schmitt trigger with a pending period and a support test.

With the committed bin j covering [lo_j, hi_j) and margin h:

- x >= hi_j + h proposes the bin of (x - h)   (multi-bin up-jumps allowed);
- x <= lo_j - h proposes the bin of (x + h);
- otherwise the proposal is j (and any pending move is cancelled).

Support: where the snapshot has the bin probabilities of `analysis.saturation.bin_stability`
(P(S* in each bin) under the real sampling noise of one re-evaluation), a proposed move up
counts only when P(bin(S*) > j) >= HYSTERESIS_MIN_SUPPORT, a move down only when
P(bin(S*) < j) >= HYSTERESIS_MIN_SUPPORT; otherwise the proposal is j. The margin h is a fixed
HYSTERESIS_MIN_MARGIN: the sampling uncertainty of S enters through the support test, in the
unit it is measured in (a probability), not as an "SE" added to the margin.

When a move is committed is decided here and only here (`step` and `settle`), on evidence, never
by counting snapshots (a re-publication of the same table adds no evidence):

- a one-bin move is committed once the snapshot that first proposed it has stood
  LEVEL_DWELL_DAYS days with every later snapshot still proposing a move that way (the new bin
  is the latest proposal); time passes between snapshots too, so a frozen source's level
  commits from its stable S at the analysis' `now`;
- a move that would leave the level LEVEL_MAX_LAG_BINS (2) or more bins from the bin of S
  commits at once, to the proposal but at most one bin short of S's own bin: no level sits
  two bins from its S.

A snapshot without an S_index keeps the committed bin and cancels a pending move. The first
observed value commits its own bin (there is nothing to flap from).

The margin at an edge is min(h, half the narrower of the two bins it separates). The bins are
unequal ([0, 0.01) is 0.01 wide), and with a flat h = 0.05 the very-low bin could never be
entered from above (x <= 0.01 - 0.05 < 0). The cap only changes the 0.01 edge (0.005 there).
The proposal is then the furthest bin whose edge x clears by that edge's margin, which for a
flat margin is exactly the bin of (x - h) up, (x + h) down.

The functions are pure (the clock is an argument): `analyze` recomputes every stored row's level
from its series at its `now` (jobs/relations/levels.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Sequence

import numpy as np
import pandas as pd

from analysis.constants import (
    HYSTERESIS_EDGE_CAP,
    HYSTERESIS_MIN_MARGIN,
    HYSTERESIS_MIN_SUPPORT,
    LEVEL_DWELL_DAYS,
    LEVEL_MAX_LAG_BINS,
    SATURATION_BIN_EDGES,
    SATURATION_BINS,
)
from analysis.saturation import bin_index
from common.time import naive_utc
from analysis.constants import SERIES_KEY

_EDGES = np.asarray(SATURATION_BIN_EDGES, dtype="float64")
_WIDTHS = np.diff(np.concatenate([[0.0], _EDGES, [1.0]]))             # width of each bin in SATURATION_BINS
_EDGE_CAP = HYSTERESIS_EDGE_CAP * np.minimum(_WIDTHS[:-1], _WIDTHS[1:])  # largest margin allowed at each edge
_ROUND = 12   # differences are rounded so 0.75 - 0.7 - 0.05 counts as clearing the edge


@dataclass(frozen=True)
class BinState:
    """Committed bin (index into SATURATION_BINS, None before any value), when it was committed,
    and the pending move: its latest target, direction, the time of the snapshot that first
    proposed it and how many snapshots have proposed it since."""

    committed: int | None = None
    committed_at: pd.Timestamp | None = None
    pending_target: int | None = None
    pending_direction: int = 0     # +1 up, -1 down, 0 none
    pending_since: pd.Timestamp | None = None
    pending_count: int = 0


def support(committed: int, target: int, probs: Sequence[float] | np.ndarray | None) -> float | None:
    """P(the re-evaluated S lies beyond the crossed edge on the side of the move j -> target).

    `probs`: P(S* in each bin of SATURATION_BINS); None (no draws) gives None.
    """
    p = _probs(probs)
    if p is None or target == committed:
        return None
    return float(p[committed + 1:].sum() if target > committed else p[:committed].sum())


def _probs(probs) -> np.ndarray | None:
    if probs is None or (np.ndim(probs) == 0 and pd.isna(probs)):
        return None
    p = np.asarray(probs, dtype="float64")
    if p.shape != (len(SATURATION_BINS),) or not np.isfinite(p).all():
        return None
    return p


def proposed_bin(committed: int, x: float, h: float) -> int:
    """The bin the value x proposes from the committed bin under margin h (capped per edge)."""
    margins = np.minimum(h, _EDGE_CAP)
    up = np.round(x - _EDGES - margins, _ROUND) >= 0       # x clears edge i upwards (into bin i + 1)
    down = np.round(_EDGES - margins - x, _ROUND) >= 0     # x clears edge i downwards (into bin i)
    above = np.nonzero(up[committed:])[0]
    if above.size:
        return int(committed + above[-1] + 1)
    below = np.nonzero(down[:committed])[0]
    if below.size:
        return int(below[0])
    return committed


def proposal(committed: int, x: float, h: float = HYSTERESIS_MIN_MARGIN, probs: Sequence[float] | np.ndarray | None = None,
             min_support: float = HYSTERESIS_MIN_SUPPORT) -> int:
    """The bin x proposes under margin h, kept at `committed` when the draws do not support the move."""
    target = proposed_bin(committed, x, h)
    p = support(committed, target, probs)
    if p is not None and round(p, _ROUND) < min_support:
        return committed
    return target


def _day(t: Any) -> pd.Timestamp:
    return naive_utc(t).normalize()


def step(state: BinState, x: float | None, at: Any, h: float = HYSTERESIS_MIN_MARGIN,
         probs: Sequence[float] | np.ndarray | None = None, min_support: float = HYSTERESIS_MIN_SUPPORT) -> BinState:
    """The state after one snapshot at time `at` with S_index x (and its bin probabilities, if any).

    A proposal in the direction of the pending move keeps its start (`pending_since`) and takes
    the newer target; no proposal, or one the other way, cancels it. A move that would leave
    the level LEVEL_MAX_LAG_BINS or more bins from the bin of x commits at once (see `settle`
    for the one-bin moves, which commit by time)."""
    at = naive_utc(at)
    if x is None or not math.isfinite(x):
        return replace(state, pending_target=None, pending_direction=0, pending_since=None, pending_count=0)
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"S_index must be in [0, 1], got {x!r}")
    if state.committed is None:
        return BinState(committed=int(bin_index(x)), committed_at=at)
    raw = int(bin_index(x))
    target = proposal(state.committed, x, h, probs, min_support)
    if abs(raw - state.committed) >= LEVEL_MAX_LAG_BINS:
        # never two bins from S: the move lands at once, at most one bin short of S's own bin
        target = max(target, raw - 1) if raw > state.committed else min(target, raw + 1)
        return BinState(committed=target, committed_at=at)
    if target == state.committed:
        return BinState(committed=state.committed, committed_at=state.committed_at)
    direction = 1 if target > state.committed else -1
    if direction == state.pending_direction and state.pending_since is not None:
        return replace(state, pending_target=target, pending_count=state.pending_count + 1)
    return replace(state, pending_target=target, pending_direction=direction, pending_since=at, pending_count=1)


def commit_due(state: BinState, dwell_days: int = LEVEL_DWELL_DAYS) -> pd.Timestamp | None:
    """When the pending move commits if no snapshot undoes it first (None: nothing pending)."""
    if state.pending_target is None or state.pending_since is None:
        return None
    return _day(state.pending_since) + pd.Timedelta(days=dwell_days)


def settle(state: BinState, until: Any, dwell_days: int = LEVEL_DWELL_DAYS) -> BinState:
    """The state at time `until` with no snapshot between the last one and `until`: a pending
    move whose proposal has stood `dwell_days` days by then is committed (at the day it had
    stood that long). The one rule that commits a one-bin move (analysis.constants.LEVEL_DWELL_DAYS)."""
    if dwell_days < 0:
        raise ValueError(f"dwell_days must be >= 0, got {dwell_days!r}")
    due = commit_due(state, dwell_days)
    if due is None or until is None or _day(until) < due:
        return state
    assert state.pending_target is not None
    return BinState(committed=state.pending_target, committed_at=max(due, naive_utc(state.pending_since)))


def committed_bins(values: Sequence[float | None], probs: Sequence | None = None, times: Sequence | None = None, *,
                   now: Any = None, margin: float = HYSTERESIS_MIN_MARGIN, min_support: float = HYSTERESIS_MIN_SUPPORT,
                   dwell_days: int = LEVEL_DWELL_DAYS, initial: BinState | None = None) -> list[str | None]:
    """The committed bin label after each snapshot of one benchmark's S_index series (see `states`)."""
    return [None if s.committed is None else SATURATION_BINS[s.committed]
            for s in states(values, probs, times, now=now, margin=margin, min_support=min_support,
                            dwell_days=dwell_days, initial=initial)]


DEFAULT_START = pd.Timestamp("2000-01-01")


def states(values: Sequence[float | None], probs: Sequence | None = None, times: Sequence | None = None, *,
           now: Any = None, margin: float = HYSTERESIS_MIN_MARGIN, min_support: float = HYSTERESIS_MIN_SUPPORT,
           dwell_days: int = LEVEL_DWELL_DAYS, initial: BinState | None = None) -> list[BinState]:
    """The BinState in force after each snapshot: stepped by the snapshot, then settled at the
    next snapshot's time (the last one at `now`; without `now` at its own time). `probs`: each
    snapshot's bin probabilities, or None; `times`: each snapshot's as_of (None: one a day from
    DEFAULT_START, for series where only the order matters)."""
    values = list(values)
    ps = [None] * len(values) if probs is None else list(probs)
    if len(ps) != len(values):
        raise ValueError(f"probs has {len(ps)} entries for {len(values)} S_index values")
    ts = [DEFAULT_START + pd.Timedelta(days=i) for i in range(len(values))] if times is None else \
        [naive_utc(t) for t in times]
    if len(ts) != len(values):
        raise ValueError(f"times has {len(ts)} entries for {len(values)} S_index values")
    if not margin >= 0:
        raise ValueError(f"margin must be >= 0, got {margin!r}")
    state = initial or BinState()
    out = []
    for i, (x, p, t) in enumerate(zip(values, ps, ts)):
        x = None if x is None or pd.isna(x) else float(x)
        state = step(state, x, t, margin, _probs(p), min_support)
        until = ts[i + 1] if i + 1 < len(ts) else (t if now is None else naive_utc(now))
        state = settle(state, until, dwell_days)
        out.append(state)
    return out


def bin_states(df: pd.DataFrame, *, now: Any = None, margin: float = HYSTERESIS_MIN_MARGIN,
               min_support: float = HYSTERESIS_MIN_SUPPORT, dwell_days: int = LEVEL_DWELL_DAYS) -> pd.DataFrame:
    """Committed bins for many benchmarks: `df` has benchmark, as_of, s_index, optionally bin_probs.

    Adds raw_bin (the bin of S_index alone), committed_bin, previous_bin and changed (a
    committed move at this snapshot), sorted by benchmark and as_of.
    """
    need = {"benchmark", "as_of", "s_index"} - set(df.columns)
    if need:
        raise ValueError(f"bin_states: frame lacks column(s) {sorted(need)}")
    d = df.sort_values(["benchmark", "as_of"], kind="stable").reset_index(drop=True)
    committed: list[str | None] = []
    for _, g in d.groupby("benchmark", sort=False):
        committed += committed_bins(g["s_index"].tolist(),
                                    g["bin_probs"].tolist() if "bin_probs" in g.columns else None,
                                    g["as_of"].tolist(), now=now, margin=margin, min_support=min_support,
                                    dwell_days=dwell_days)
    s = pd.to_numeric(d["s_index"], errors="coerce").to_numpy(dtype="float64")
    raw = np.asarray(SATURATION_BINS, dtype=object)[bin_index(np.nan_to_num(s, nan=0.0))]
    d["raw_bin"] = np.where(np.isfinite(s), raw, None)
    d["committed_bin"] = pd.Series(committed, dtype="object")
    d["previous_bin"] = d.groupby("benchmark", sort=False)["committed_bin"].shift(1)
    d["changed"] = d["previous_bin"].notna() & (d["committed_bin"] != d["previous_bin"])
    return d


LEVEL_COLUMNS = ("level", "level_since", "pending_bin", "pending_count", "pending_since")


def series_levels(df: pd.DataFrame, key: Sequence[str] | None = None, *, now: Any = None,
                  margin: float = HYSTERESIS_MIN_MARGIN, min_support: float = HYSTERESIS_MIN_SUPPORT,
                  dwell_days: int = LEVEL_DWELL_DAYS) -> pd.DataFrame:
    """The committed level of every snapshot-level saturation row, from its series' rows in order.

    `df`: the `key` columns (default analysis.constants.SERIES_KEY, plus k and alpha where
    present), as_of, s_index and optionally bin_probs — every stored row of each series. Returns
    `df`'s key columns (and k, alpha) and as_of with LEVEL_COLUMNS: `level` (the level in force
    after the row until the next row, or until `now` for the newest; None before the series'
    first S_index), `level_since` (when that level was committed), `pending_bin` (the bin a
    move waits to commit to, else None), `pending_count` (snapshots that proposed it so far) and
    `pending_since` (as_of of the snapshot that first proposed it). `now` (the analysis' time)
    lets a move that has stood LEVEL_DWELL_DAYS commit although no new snapshot arrived (a
    frozen source); without it the newest row is judged at its own as_of.
    """
    key = list(SERIES_KEY if key is None else key) + [c for c in ("k", "alpha") if c in df.columns]
    need = set(key) | {"as_of", "s_index"}
    if need - set(df.columns):
        raise ValueError(f"series_levels: frame lacks column(s) {sorted(need - set(df.columns))}")
    d = df.sort_values([*key, "as_of"], kind="stable").reset_index(drop=True)
    out = d[[*key, "as_of"]].copy()
    level: list[str | None] = []
    since: list = []
    pend_bin: list[str | None] = []
    pend_count: list[int] = []
    pend_since: list = []
    values = d["s_index"].tolist()
    probs = d["bin_probs"].tolist() if "bin_probs" in d.columns else [None] * len(d)
    as_of = d["as_of"].tolist()
    keys = list(zip(*(d[c].tolist() for c in key))) if len(d) else []
    start = 0
    for end in range(1, len(keys) + 1):     # sorted by key: a series is one run of rows
        if end < len(keys) and keys[end] == keys[start]:
            continue
        for st in states(values[start:end], probs[start:end], as_of[start:end], now=now, margin=margin,
                         min_support=min_support, dwell_days=dwell_days):
            level.append(None if st.committed is None else SATURATION_BINS[st.committed])
            since.append(None if st.committed is None else st.committed_at)
            pending = st.pending_target is not None and st.committed is not None
            pend_bin.append(SATURATION_BINS[st.pending_target] if pending and st.pending_target is not None else None)
            pend_count.append(int(st.pending_count) if pending else 0)
            pend_since.append(st.pending_since if pending else None)
        start = end
    out["level"] = pd.Series(level, dtype="object")
    out["level_since"] = pd.Series(since, dtype="object")
    out["pending_bin"] = pd.Series(pend_bin, dtype="object")
    out["pending_count"] = pd.Series(pend_count, dtype="int64")
    out["pending_since"] = pd.Series(pend_since, dtype="object")
    return out

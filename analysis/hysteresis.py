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

A move is committed after P consecutive snapshots propose a move in the same direction; the
new bin is the latest proposal. P = 2. A snapshot without an S_index keeps the committed bin
and cancels a pending move. The first observed value commits its own bin (there is nothing
to flap from).

The margin at an edge is min(h, half the narrower of the two bins it separates). The bins are
unequal ([0, 0.01) is 0.01 wide), and with a flat h = 0.05 the very-low bin could never be
entered from above (x <= 0.01 - 0.05 < 0). The cap only changes the 0.01 edge (0.005 there).
The proposal is then the furthest bin whose edge x clears by that edge's margin, which for a
flat margin is exactly the bin of (x - h) up, (x + h) down.

The step function is pure so the alert state machine can persist a `BinState` between runs
and continue from it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np
import pandas as pd

from analysis.constants import (
    HYSTERESIS_EDGE_CAP,
    HYSTERESIS_MIN_MARGIN,
    HYSTERESIS_MIN_SUPPORT,
    HYSTERESIS_PENDING,
    SATURATION_BIN_EDGES,
    SATURATION_BINS,
)
from analysis.saturation import bin_index

_EDGES = np.asarray(SATURATION_BIN_EDGES, dtype="float64")
_WIDTHS = np.diff(np.concatenate([[0.0], _EDGES, [1.0]]))             # width of each bin in SATURATION_BINS
_EDGE_CAP = HYSTERESIS_EDGE_CAP * np.minimum(_WIDTHS[:-1], _WIDTHS[1:])  # largest margin allowed at each edge
_ROUND = 12   # differences are rounded so 0.75 - 0.7 - 0.05 counts as clearing the edge


@dataclass(frozen=True)
class BinState:
    """Committed bin (index into SATURATION_BINS, None before any value) and the pending move."""

    committed: int | None = None
    pending_direction: int = 0     # +1 up, -1 down, 0 none
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


def step(state: BinState, x: float | None, h: float = HYSTERESIS_MIN_MARGIN,
         pending: int = HYSTERESIS_PENDING, probs: Sequence[float] | np.ndarray | None = None,
         min_support: float = HYSTERESIS_MIN_SUPPORT) -> BinState:
    """The state after one snapshot with S_index x (and its bin probabilities, if any)."""
    if pending < 1:
        raise ValueError(f"pending must be >= 1 snapshot, got {pending!r}")
    if x is None or not math.isfinite(x):
        return replace(state, pending_direction=0, pending_count=0)
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"S_index must be in [0, 1], got {x!r}")
    if state.committed is None:
        return BinState(committed=int(bin_index(x)))
    target = proposal(state.committed, x, h, probs, min_support)
    if target == state.committed:
        return BinState(committed=state.committed)
    direction = 1 if target > state.committed else -1
    count = state.pending_count + 1 if direction == state.pending_direction else 1
    if count >= pending:
        return BinState(committed=target)
    return BinState(committed=state.committed, pending_direction=direction, pending_count=count)


def committed_bins(values: Sequence[float | None], probs: Sequence | None = None, *,
                   margin: float = HYSTERESIS_MIN_MARGIN, min_support: float = HYSTERESIS_MIN_SUPPORT,
                   pending: int = HYSTERESIS_PENDING, initial: BinState | None = None) -> list[str | None]:
    """The committed bin label after each snapshot of one benchmark's S_index series."""
    return [None if s.committed is None else SATURATION_BINS[s.committed]
            for s in states(values, probs, margin=margin, min_support=min_support, pending=pending,
                            initial=initial)]


def states(values: Sequence[float | None], probs: Sequence | None = None, *,
           margin: float = HYSTERESIS_MIN_MARGIN, min_support: float = HYSTERESIS_MIN_SUPPORT,
           pending: int = HYSTERESIS_PENDING, initial: BinState | None = None) -> list[BinState]:
    """The BinState after each snapshot (`probs`: each snapshot's bin probabilities, or None)."""
    values = list(values)
    ps = [None] * len(values) if probs is None else list(probs)
    if len(ps) != len(values):
        raise ValueError(f"probs has {len(ps)} entries for {len(values)} S_index values")
    if not margin >= 0:
        raise ValueError(f"margin must be >= 0, got {margin!r}")
    state = initial or BinState()
    out = []
    for x, p in zip(values, ps):
        x = None if x is None or pd.isna(x) else float(x)
        state = step(state, x, margin, pending, _probs(p), min_support)
        out.append(state)
    return out


def bin_states(df: pd.DataFrame, *, margin: float = HYSTERESIS_MIN_MARGIN,
               min_support: float = HYSTERESIS_MIN_SUPPORT, pending: int = HYSTERESIS_PENDING) -> pd.DataFrame:
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
                                    margin=margin, min_support=min_support, pending=pending)
    s = pd.to_numeric(d["s_index"], errors="coerce").to_numpy(dtype="float64")
    raw = np.asarray(SATURATION_BINS, dtype=object)[bin_index(np.nan_to_num(s, nan=0.0))]
    d["raw_bin"] = np.where(np.isfinite(s), raw, None)
    d["committed_bin"] = pd.Series(committed, dtype="object")
    d["previous_bin"] = d.groupby("benchmark", sort=False)["committed_bin"].shift(1)
    d["changed"] = d["previous_bin"].notna() & (d["committed_bin"] != d["previous_bin"])
    return d


LEVEL_COLUMNS = ("level", "level_since", "pending_bin", "pending_count")


def series_levels(df: pd.DataFrame, key: Sequence[str] | None = None, *, margin: float = HYSTERESIS_MIN_MARGIN,
                  min_support: float = HYSTERESIS_MIN_SUPPORT, pending: int = HYSTERESIS_PENDING) -> pd.DataFrame:
    """The committed level of every snapshot-level saturation row, from its series' rows in order.

    `df`: the `key` columns (default analysis.constants.SERIES_KEY, plus k and alpha where
    present), as_of, s_index and optionally bin_probs — every stored row of each series. Returns
    `df`'s key columns (and k, alpha) and as_of with LEVEL_COLUMNS: `level` (the committed bin
    after the row, None before the series' first S_index), `level_since` (as_of of the row at
    which that level was committed), `pending_bin` (the bin a move proposed by the row waits to
    commit to, else None) and `pending_count` (how many consecutive snapshots proposed it).
    The same Schmitt trigger as `states`, so a level is what the alert rule used to recompute.
    """
    from analysis.constants import SERIES_KEY
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
    values = d["s_index"].tolist()
    probs = d["bin_probs"].tolist() if "bin_probs" in d.columns else [None] * len(d)
    as_of = d["as_of"].tolist()
    keys = list(zip(*(d[c].tolist() for c in key))) if len(d) else []
    start = 0
    for end in range(1, len(keys) + 1):     # sorted by key: a series is one run of rows
        if end < len(keys) and keys[end] == keys[start]:
            continue
        xs, ps = values[start:end], probs[start:end]
        committed_at = None
        previous = None
        for x, p, t, st in zip(xs, ps, as_of[start:end], states(xs, ps, margin=margin, min_support=min_support,
                                                               pending=pending)):
            if st.committed is None:
                level.append(None)
                since.append(None)
            else:
                if st.committed != previous:
                    committed_at = t
                previous = st.committed
                level.append(SATURATION_BINS[st.committed])
                since.append(committed_at)
            if st.pending_count and st.committed is not None:
                target = proposal(st.committed, float(x), margin, p, min_support)
                pend_bin.append(SATURATION_BINS[target])
                pend_count.append(int(st.pending_count))
            else:
                pend_bin.append(None)
                pend_count.append(0)
        start = end
    out["level"] = pd.Series(level, dtype="object")
    out["level_since"] = pd.Series(since, dtype="object")
    out["pending_bin"] = pd.Series(pend_bin, dtype="object")
    out["pending_count"] = pd.Series(pend_count, dtype="int64")
    return out

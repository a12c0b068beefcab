"""The A1/A2 link f_b: reference-model data of one fit, the leave-one-out prediction scale, and the
reference pools and placebo draws A1 and A2 share."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.contamination.base import _RefTable, prepare, Prepared, Thresholds
from analysis.contamination.numerics import _link_predict, _logit, _sigmoid


@dataclass


class _LinkData:
    """The data of one A1/A2 fit: reference models' (x, y) and the benchmark set used."""

    refs: list[str]
    ref_benchmarks: list[str]
    s_ref: np.ndarray          # (R, 1 + J): score on b, then on each reference benchmark
    n_ref: np.ndarray
    anchor: tuple[float, float] | None
    isotonic: bool
    snapshot_ids: tuple
    floor: float | None = None  # logit of b's chance level: predictions never go below it


def _link_data(b: str, source_rows: pd.DataFrame, table: _RefTable, bench: pd.DataFrame,
               ref_benchmarks: list[str], exclude: set[str], th: Thresholds) -> tuple[_LinkData | None, str]:
    """Reference models for b from one source: score on b (that source) and on all of R'."""
    if not ref_benchmarks:
        return None, "tested model has no score on any reference benchmark"
    # The reference rows as positions in source_rows, each column read at them: selecting the rows of
    # the whole frame (every column, twice) cost more than the rest of a call. The same rows, in order.
    models = source_rows["model"].to_numpy()
    candidates = np.flatnonzero(~source_rows["model"].isin(exclude).to_numpy(bool))
    keep = table.complete(models[candidates], ref_benchmarks) if all(r in table.col_of for r in ref_benchmarks) \
        else np.zeros(len(candidates), dtype=bool)
    at = candidates[keep]
    refs = models[at].tolist()
    if len(refs) < th.a1_min_ref_models:
        return None, f"|M_ref| = {len(refs)} < {th.a1_min_ref_models}"
    ref_score, ref_n, ref_snaps = table.cells(refs, ref_benchmarks)
    s_ref = np.column_stack([source_rows["score"].to_numpy(float)[at], ref_score])
    n_ref = np.column_stack([source_rows["n"].to_numpy(float)[at], ref_n])
    chance_b = bench["chance"].get(b, np.nan)
    chance_r = bench["chance"].reindex(ref_benchmarks).to_numpy(float)
    anchor, floor = None, None
    big = 1e6   # chance is exact, not a sample
    if th.chance_link == "anchor":
        if np.isfinite(chance_b) and chance_b > 0 and np.all(np.isfinite(chance_r)) and np.all(chance_r > 0):
            anchor = (float(np.mean(_logit(chance_r, big))), float(_logit(np.array(chance_b), big)))
    elif np.isfinite(chance_b) and chance_b > 0:
        floor = float(_logit(np.array(chance_b), big))
    snaps = set(source_rows["snapshot_id"].iloc[at].dropna().astype(int)) if "snapshot_id" in source_rows else set()
    snaps |= {int(v) for v in ref_snaps[~np.isnan(ref_snaps)].tolist()}
    return _LinkData(refs, list(ref_benchmarks), s_ref, n_ref, anchor,
                     len(refs) >= th.a1_isotonic_min_ref, tuple(sorted(snaps)), floor), ""


def _xy(s: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x = mean logit over reference benchmarks (columns 1..), y = logit on b (column 0)."""
    lg = _logit(s, n)
    return lg[..., 1:].mean(axis=-1), lg[..., 0]


def _xy_of_counts(k: np.ndarray, n_int: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`_xy(k / n_int, n)` of redrawn counts k (..., R, 1 + J) with the same numbers: a count takes
    at most n_int + 1 values, so the logit of each (n_int, n) column is computed once per possible
    count and looked up (the bootstrap's largest array after its draws; issue 23)."""
    pairs, which = np.unique(np.stack([n_int.reshape(-1).astype(float), n.reshape(-1)]), axis=1, return_inverse=True)
    sizes = pairs[0].astype(np.int64) + 1
    if sizes.sum() * 4 > k.size:                   # counts as many as their possible values: directly
        return _xy(k / n_int, n)
    offset = np.r_[0, np.cumsum(sizes)[:-1]]
    table = np.concatenate([_logit(np.arange(m, dtype=np.int64) / np.int64(m - 1), nn)
                            for m, nn in zip(sizes.tolist(), pairs[1].tolist())])
    lg = table[k + offset[which.reshape(n_int.shape)]]
    return (lg[..., 1] if lg.shape[-1] == 2 else lg[..., 1:].mean(axis=-1)), lg[..., 0]


def _with_anchor(x: np.ndarray, y: np.ndarray, anchor: tuple[float, float] | None) -> tuple[np.ndarray, np.ndarray]:
    if anchor is None:
        return x, y
    shape = x.shape[:-1] + (1,)
    return (np.concatenate([x, np.full(shape, anchor[0])], axis=-1),
            np.concatenate([y, np.full(shape, anchor[1])], axis=-1))


def _resample_refs(rng: np.random.Generator, r: int, b: int, min_unique: int) -> np.ndarray:
    """(b, r) indices drawn with replacement, each row with >= min_unique distinct models."""
    idx = rng.integers(0, r, size=(b, r))
    need = min(min_unique, r)
    for _ in range(1000):
        bad = _distinct_per_row(idx, need) < need
        if not bad.any():
            return idx
        idx[bad] = rng.integers(0, r, size=(int(bad.sum()), r))
    raise RuntimeError("could not draw reference resamples with enough distinct models")


def _distinct_per_row(idx: np.ndarray, need: int) -> np.ndarray:
    """The number of distinct values of each row, exact below `need` (a row whose first 4·need
    columns already hold `need` distinct values is not sorted whole: the usual case of hundreds
    of reference models)."""
    head = min(idx.shape[1], 4 * need)
    srt = np.sort(idx[:, :head], axis=1)
    uniq = 1 + (np.diff(srt, axis=1) != 0).sum(axis=1)
    short = np.flatnonzero(uniq < need)
    if len(short) and head < idx.shape[1]:
        srt = np.sort(idx[short], axis=1)
        uniq[short] = 1 + (np.diff(srt, axis=1) != 0).sum(axis=1)
    return uniq


def _loo_residuals(x: np.ndarray, y: np.ndarray, link: _LinkData) -> np.ndarray:
    """Proportion residual s_r - σ(f_{-r}(x_r)) of each reference model r against the link fitted
    on the other references (plus the chance anchor): the A1 null population of residuals."""
    r = len(x)
    if r < 3:
        return np.array([])
    keep = ~np.eye(r, dtype=bool)
    xs, ys = x[None, :].repeat(r, 0)[keep].reshape(r, r - 1), y[None, :].repeat(r, 0)[keep].reshape(r, r - 1)
    xs, ys = _with_anchor(xs, ys, link.anchor)
    pred = _sigmoid(_link_predict(xs, ys, x[:, None], isotonic=link.isotonic, floor=link.floor))[:, 0]
    return link.s_ref[:, 0] - pred


def _x_of(table: _RefTable, model: str, refs: list[str]) -> float:
    score, n, _ = table.cells([model], refs)
    return float(_logit(score[0], n[0]).mean())


def _reference_pool(scores: pd.DataFrame, benchmarks: pd.DataFrame, th: Thresholds, *,
                    prepared: Prepared | None = None) -> list[tuple[str, str, list[str]]]:
    """(source, benchmark, models) for every benchmark A1 can test: models with b's score (that
    source) and scores on all of b's reference benchmarks they are tested on (A1's own rule)."""
    p = prepared or prepare(scores, benchmarks)
    s, table = p.scores, p.table
    pools = []
    for (source, b), rows in s.groupby(["source", "benchmark"], sort=True):
        refs_b = p.reference_benchmarks(b)
        if not refs_b:
            continue
        models = [m for m, ok in zip(rows["model"], table.complete(rows["model"], refs_b)) if ok]
        if len(models) >= th.a1_min_ref_models + 2:
            pools.append((source, b, models))
    return pools

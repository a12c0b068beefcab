"""The running top k of each table in calendar time, computed for a whole history at once: the
rows sorted by group and date (`_history_rows`), every change of each group's top k found with
array operations (`_topk_scan`), and the helpers that turn the scan into per-date lists and
names. The frames built from it: analysis.trajectory (`running_topk`, `saturation_trajectory`).
Pure."""

from __future__ import annotations

import logging
from typing import Sequence

import numpy as np
import pandas as pd

log = logging.getLogger("benchwatch.analysis.saturation")


# --- history reconstructed from model dates ------------------------------------------------

def _factorize_runs(values: np.ndarray, sort: bool) -> tuple[np.ndarray, np.ndarray]:
    """pd.factorize of an object array, hashing only the first value of each run of equal
    values (histories come grouped by benchmark: a few thousand runs, not a million rows)."""
    n = len(values)
    if n == 0:
        return np.zeros(0, dtype="int64"), np.zeros(0, dtype=object)
    heads = np.flatnonzero(np.r_[True, values[1:] != values[:-1]])
    codes, uniques = pd.factorize(values[heads], sort=sort)
    return np.repeat(codes, np.diff(np.r_[heads, n])), np.asarray(uniques, dtype=object)


# keys below this sort in linear time (a stable argsort of 16-bit integers is a radix sort)
_RADIX = 1 << 16


def _history_rows(df: pd.DataFrame, group_cols: Sequence[str]) -> dict[str, np.ndarray]:
    """The usable rows of a history frame (score, model and date present), sorted by group then date.

    Arrays: score (float), date, se, group_code (consecutive per group) and model_code, in
    sorted order; `order` (sorted row -> input row) and the names (the group columns,
    benchmark, model, variant) as object arrays in input order, taken through `_at` only
    where an output needs them (a frame would convert a million names to pandas' str dtype).
    Rows lacking a score, model or date are left out with a warning naming their benchmarks.
    The order is that of a stable sort on (group columns, date): ties keep the input order.
    """
    need = {"benchmark", "model", "score", "date"} - set(df.columns)
    if need:
        raise ValueError(f"history frame lacks column(s) {sorted(need)}")
    cols = list(dict.fromkeys([*group_cols, "benchmark", "model"]))
    arrays = {c: df[c].to_numpy(dtype=object) for c in cols}
    arrays["score"] = pd.to_numeric(df["score"], errors="coerce").to_numpy(dtype="float64")
    arrays["date"] = pd.to_datetime(df["date"]).to_numpy()
    arrays["se"] = df["se"].to_numpy(dtype="float64") if "se" in df.columns else np.full(len(df), np.nan)
    arrays["variant"] = df["entity_variant"].to_numpy(dtype=object) if "entity_variant" in df.columns \
        else arrays["model"]
    model_code = pd.factorize(arrays["model"])[0]               # -1: a missing model (as pd.isna)
    dropped = np.isnan(arrays["score"]) | np.isnat(arrays["date"]) | (model_code < 0)
    if dropped.any():
        log.warning("[saturation] history: %d row(s) without score, model or date left out "
                    "(benchmarks: %s)", int(dropped.sum()), sorted({str(b) for b in arrays["benchmark"][dropped]}))
        arrays = {c: a[~dropped] for c, a in arrays.items()}
        model_code = model_code[~dropped]
    group_key = np.zeros(len(arrays["score"]), dtype="int64")
    for col in group_cols:                       # codes in value order, missing values last (as sort_values)
        codes, uniques = _factorize_runs(arrays[col], sort=True)
        group_key = group_key * (len(uniques) + 1) + np.where(codes < 0, len(uniques), codes)
    n = len(group_key)
    date = arrays["date"].view("int64") - (int(arrays["date"].view("int64").min()) if n else 0)
    step = (int(np.gcd.reduce(date)) or 1) if n else 1           # dates as whole days when they are
    span = int(date.max(initial=0)) // step + 1
    if span <= _RADIX and int(group_key.max(initial=0)) < _RADIX:
        # two stable passes on 16-bit keys (NumPy radix-sorts them): by date, then by group
        order = np.argsort((date // step).astype(np.uint16), kind="stable")
        order = order[np.argsort(group_key[order].astype(np.uint16), kind="stable")]
    elif (int(group_key.max(initial=0)) + 1) * span * max(n, 1) < 2 ** 63:
        # one key per row, unique (the row number last): any sort is the stable one
        order = np.argsort((group_key * span + date // step) * n + np.arange(n))
    else:
        order = np.lexsort([date, group_key])                             # stable
    group_sorted = group_key[order]
    d = {"order": order, "score": arrays["score"][order], "date": arrays["date"][order], "se": arrays["se"][order],
         "group_code": np.cumsum(np.r_[False, group_sorted[1:] != group_sorted[:-1]]),
         "model_code": model_code[order]}
    d.update({f"name:{c}": arrays[c] for c in [*cols, "variant"]})
    d.update({f"per_group:{c}": True for c in group_cols})     # one name per group (see `_str_array`)
    if "benchmark" not in group_cols and len(order):
        codes = _factorize_runs(arrays["benchmark"], sort=False)[0][order]
        d["per_group:benchmark"] = not ((codes[1:] != codes[:-1]) & (group_sorted[1:] == group_sorted[:-1])).any()
    source = {**{c: c for c in cols}, "variant": "entity_variant" if "entity_variant" in df.columns else "model"}
    d.update({f"str:{c}": isinstance(df[src].dtype, pd.StringDtype) for c, src in source.items()})
    return d


def _at(d: dict[str, np.ndarray], col: str, rows: np.ndarray) -> np.ndarray:
    """The names of column `col` at sorted rows `rows` (see `_history_rows`)."""
    return d[f"name:{col}"][d["order"][rows]]


# Classes of models whose running maxima bound the k-th best score from below (`_topk_candidates`).
_BOUND_CLASSES_PER_K = 2
_BOUND_BLOCK_ROWS = 1 << 14


def _topk_candidates(group: np.ndarray, model: np.ndarray, rank: np.ndarray, k: int) -> np.ndarray:
    """Rows that may change a running top k: every row but those at or below a lower bound of
    the k-th best score before them (such a row is skipped by the scan, which needs a full top
    k and a score above its k-th to act). `rank`: the scores' dense ranks (equal scores, equal ranks).

    The bound: models are split into C = 2k classes (model code mod C); the running maximum
    of each class within the group is one model's score, so the k-th largest of the C class
    maxima is the score of k distinct models, at most the k-th best model. Computed on score
    ranks offset by group (so a maximum carried over from an earlier group reads as absent)
    in blocks of rows, with NumPy only.
    """
    n = len(rank)
    classes = _BOUND_CLASSES_PER_K * k
    if n == 0:
        return np.zeros(0, dtype=bool)
    span = int(rank.max()) + 1
    dtype = "int32" if (int(group.max()) + 1) * span < 2 ** 31 else "int64"     # half the memory traffic
    floor = group.astype(dtype) * span                                      # keys below it: earlier groups
    key = floor + rank.astype(dtype)
    cls = model % classes
    bound = np.empty(n, dtype=dtype)
    carry = np.full(classes, -1, dtype=dtype)
    for lo in range(0, n, _BOUND_BLOCK_ROWS):
        hi = min(n, lo + _BOUND_BLOCK_ROWS)
        m = np.full((hi - lo + 1, classes), -1, dtype=dtype)
        m[0] = carry
        m[np.arange(1, hi - lo + 1), cls[lo:hi]] = key[lo:hi]
        np.maximum.accumulate(m, axis=0, out=m)
        carry = m[-1].copy()
        before = m[:-1]                                                     # the maxima before each row
        before.partition(classes - k, axis=1)
        bound[lo:hi] = before[:, classes - k]
    known = bound >= floor
    return ~(known & (key <= bound))


def _improvements(group: np.ndarray, model: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """Of the rows given (sorted by group, then time), those scoring strictly above every earlier
    row of their model in their group: the others can change no top k (a member keeps its
    better value; a model outside the top k is at or below its k-th, and so is the row)."""
    n = len(rank)
    if n == 0:
        return np.zeros(0, dtype=bool)
    order = np.lexsort((np.arange(n), model, group))                        # by (group, model), time within
    g, m = group[order], model[order]
    seg = np.cumsum(np.r_[False, (g[1:] != g[:-1]) | (m[1:] != m[:-1])])
    key = seg * (int(rank.max()) + 1) + rank[order]                          # earlier segments below
    better = np.empty(n, dtype=bool)
    better[order] = key > np.r_[-1, np.maximum.accumulate(key)[:-1]]
    return better


# Rows per block of the two-level prefix doubling (`_topk_doubling`).
_DOUBLING_BLOCK = 8


def _topk_doubling(group: np.ndarray, model: np.ndarray, rank: np.ndarray, k: int) -> np.ndarray:
    """The top k (indices of the rows given, best first, -1 padded) after each row, for rows
    sorted by group then time where each model's rows score strictly higher each time and no
    two rows of a group score the same (so the order by score decides everything).

    With NumPy, on two levels: each row's top k within its block of B rows of the group, by
    one sort of a (rows, B) array; prefix doubling over the blocks' lists (after the round of
    width w, a block holds the top k of its group's blocks (b - w, b]); each row's list merged
    with the one of the blocks before it. A merge (`_merge_top`) is one sort of (rows, 2k)
    arrays: one merge of every row, log2(blocks per group) merges of the blocks.
    """
    n = len(rank)
    dtype = "int32" if n < 2 ** 31 - 1 else "int64"
    order = np.lexsort((rank, group))                           # score order within each group
    by_rank = np.empty(n, dtype=dtype)
    by_rank[order] = np.arange(n, dtype=dtype)
    by_model = np.lexsort((np.arange(n), model, group))
    later = np.full(n, n, dtype=dtype)                          # the model's next row in the group
    same = (group[by_model][1:] == group[by_model][:-1]) & (model[by_model][1:] == model[by_model][:-1])
    later[by_model[:-1][same]] = by_model[1:][same]
    later_of = np.r_[later[order], np.array([n], dtype=dtype)]  # by score order; [-1]: the padding
    top = np.full((n, k), -1, dtype=dtype)
    if n == 0:
        return top
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    pos = np.arange(n) - np.repeat(starts, np.diff(np.r_[starts, n]))     # position within the group
    rows = np.arange(n, dtype=dtype)
    # within blocks at once: row i's list is its block's rows j <= i whose model has no later row by i
    near = (rows - pos % _DOUBLING_BLOCK)[:, None] + np.arange(_DOUBLING_BLOCK, dtype=dtype)
    ahead = near > rows[:, None]
    near[ahead] = 0
    mine = np.where(~ahead & (later[near] > rows[:, None]), by_rank[near], -1)
    mine.sort(axis=1)
    width = min(k, _DOUBLING_BLOCK)
    top[:, :width] = mine[:, :-width - 1:-1]
    block = pos // _DOUBLING_BLOCK
    ends = rows[np.r_[(block[1:] != block[:-1]) | (pos[1:] == 0), True]]  # each block's last row
    summary = top[ends]
    width = 1
    while width <= block.max():                                 # over the blocks of a group
        at = np.flatnonzero(block[ends] >= width)
        summary[at] = _merge_top(summary[at], summary[at - width], ends[at], later_of, k)
        width *= 2
    at = rows[block > 0]                                        # with the blocks before
    before = np.searchsorted(ends, at) - 1
    top[at] = _merge_top(top[at], summary[before], at, later_of, k)
    return np.where(top >= 0, order[np.where(top >= 0, top, 0)], -1)


def _merge_top(newer: np.ndarray, older: np.ndarray, upto: np.ndarray, later_of: np.ndarray, k: int) -> np.ndarray:
    """The top k of two adjacent stretches of a group from their top k lists (score-order indices,
    best first, -1 padded; `newer` ends at row `upto`), less the older list's rows whose model
    has a later row by `upto` (that later row is either in the newer list or beaten by k of
    its models, which then beat the older row too)."""
    both = np.concatenate([newer, np.where(later_of[older] <= upto[:, None], -1, older)], axis=1)
    both.sort(axis=1)
    return both[:, :-k - 1:-1]


def _topk_loop(group: list, model: list, score: list, rows: list, k: int) -> tuple[list[int], list[tuple[int, ...]]]:
    """The running top k by one pass over `rows` (the rows of groups whose scores tie, where the
    order of entry decides: `_topk_scan`): (row of each change, its top k as row numbers)."""
    change_pos: list[int] = []
    change_top: list[tuple[int, ...]] = []
    # top: model -> (-score, entry number, row, model); sorting these orders by score, then by
    # when the model entered the top k (a dict's insertion order, which an update keeps).
    # Tuples, not lists: the garbage collector stops tracking them.
    top: dict = {}
    ranked: list = []
    full, kth, prev, entered = False, 0.0, None, 0
    for g, m, sc, i in zip(group, model, score, rows):
        if g != prev:
            top, ranked, full, prev = {}, [], False, g
        if full and sc <= kth:          # cannot enter, cannot improve a member (members are >= kth)
            continue
        cur = top.get(m)
        if cur is not None:
            if not -sc < cur[0]:
                continue
            top[m] = (-sc, cur[1], i, m)
        else:
            if full:                    # out goes the earliest entered of the weakest
                low = ranked[-1][0]
                del top[next(e for e in ranked if e[0] == low)[3]]
            entered += 1
            top[m] = (-sc, entered, i, m)
        ranked = sorted(top.values())
        full = len(ranked) == k
        kth = -ranked[-1][0]
        change_pos.append(i)
        change_top.append(tuple(e[2] for e in ranked) + (-1,) * (k - len(ranked)))
    return change_pos, change_top


def _topk_scan(d: dict[str, np.ndarray], k: int) -> dict[str, np.ndarray]:
    """The running top k of the sorted rows `d` (see `_history_rows`: group_code, model_code), as arrays.

    The semantics are those of one pass keeping the current top k per group (model -> score,
    row): a model's value is replaced only by a strictly better score; a new model enters a
    full top k only above its k-th score, and then the weakest leaves (among equal scores the
    earliest entered); the top k is ranked by score, equal scores in order of entry.
    `_topk_candidates` and `_improvements` first drop, with array operations, the rows that
    cannot change a top k. In a group where no two remaining rows score the same, the order
    by score alone decides, and `_topk_doubling` computes every running top k at once with
    NumPy. A group with equal scores among them (where the order of entry decides) takes the
    one pass (`_topk_loop`) over its remaining rows. Each change records the top k (row
    numbers, best first); the state at the end of each (group, date) is then looked up with
    one `searchsorted`.

    Returns `end` (row number of the last row of each (group, date)), `n_models` (distinct
    models dated <= that date in the group), `state` (the change in force at each end) and
    `changes` (n_changes x k row numbers, best first, -1 padded).
    """
    n = len(d["score"])
    if n == 0:
        return {"end": np.zeros(0, dtype="int64"), "n_models": np.zeros(0, dtype="int64"),
                "state": np.zeros(0, dtype="int64"), "changes": np.zeros((0, k), dtype="int64")}
    group = d["group_code"]
    model = d["model_code"]
    score = d["score"]
    rank = np.unique(score, return_inverse=True)[1].reshape(-1).astype("int64")
    rows = np.flatnonzero(_topk_candidates(group, model, rank, k))
    rows = rows[_improvements(group[rows], model[rows], rank[rows])]
    g, r = group[rows], rank[rows]
    key = np.sort(g.astype("int64") * (int(rank.max()) + 1) + r)
    tied = np.zeros(int(group[-1]) + 1, dtype=bool)
    tied[key[1:][key[1:] == key[:-1]] // (int(rank.max()) + 1)] = True
    loop = tied[g]
    fast = rows[~loop]
    top = _topk_doubling(group[fast], model[fast], rank[fast], k)
    top = np.where(top >= 0, fast[np.where(top >= 0, top, 0)], -1)
    gf = group[fast]
    changed = np.r_[True, (gf[1:] != gf[:-1]) | (top[1:] != top[:-1]).any(axis=1)] if len(fast) else \
        np.zeros(0, dtype=bool)
    change_pos, change_top = fast[changed], top[changed]
    if loop.any():
        slow = rows[loop]
        pos, tops = _topk_loop(group[slow].tolist(), model[slow].tolist(), score[slow].tolist(), slow.tolist(), k)
        change_pos = np.r_[change_pos, np.asarray(pos, dtype="int64")]
        change_top = np.concatenate([change_top, np.asarray(tops, dtype="int64").reshape(len(pos), k)])
        by_pos = np.argsort(change_pos, kind="stable")
        change_pos, change_top = change_pos[by_pos], change_top[by_pos]
    dates = d["date"]
    last = np.ones(n, dtype=bool)
    last[:-1] = (group[1:] != group[:-1]) | (dates[1:] != dates[:-1])
    end = np.flatnonzero(last)
    first_seen = ~pd.Series(group.astype("int64") * (int(model.max()) + 1) + model).duplicated().to_numpy()
    cum = np.cumsum(first_seen)
    start = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    before = (cum - first_seen)[start]                     # distinct models before each group's first row
    n_models = cum[end] - before[np.searchsorted(start, end, side="right") - 1]
    state = np.searchsorted(change_pos, end, side="right") - 1
    return {"end": end, "n_models": n_models.astype("int64"), "state": state, "changes": change_top}


def _states(state: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(used, at): the changes of the top k that some row shows, and each row's index into them
    (`np.unique(state, return_inverse=True)`; the states of sorted rows never decrease, so one
    comparison of neighbours finds them)."""
    state = np.asarray(state).reshape(-1)
    if len(state) and not (state[1:] >= state[:-1]).all():
        used, at = np.unique(state, return_inverse=True)
        return used, at.reshape(-1)
    first = np.r_[True, state[1:] != state[:-1]] if len(state) else np.zeros(0, dtype=bool)
    return state[first], np.cumsum(first) - 1


def _per_state(values: np.ndarray, changes: np.ndarray, at: np.ndarray) -> np.ndarray:
    """One list per row: the `values` of its top k (`values[i, j]`: of row `changes[i, j]`, for the
    changes `_states` found used), best first, the -1 padding of a top k not yet full left out.
    Built once per change of the top k that some row shows, and shared, as one read-only list
    object, by the rows of the dates it held."""
    lists = values.tolist()
    for i in np.flatnonzero((changes < 0).any(axis=1)).tolist():
        lists[i] = lists[i][:int((changes[i] >= 0).sum())]
    return np.fromiter(lists, dtype=object, count=len(lists))[at]


def _names(d: dict[str, np.ndarray], col: str, rows: np.ndarray) -> np.ndarray:
    """str of the names of column `col` at sorted rows `rows` (`_as_str(_at(...))`; a column of
    pandas' str dtype holds nothing else, so its names are taken as they are)."""
    values = _at(d, col, rows)
    return values if d.get(f"str:{col}") else _as_str(values)


def _str_array(d: dict[str, np.ndarray], col: str, end: np.ndarray) -> pd.api.extensions.ExtensionArray:
    """`pd.array(_at(d, col, end), dtype="str")`, each group's name converted once and taken when the
    column holds one name per group (`_history_rows` found which do: the group columns, and
    `benchmark` when each table has one)."""
    if len(end) == 0 or not d.get(f"per_group:{col}"):
        return pd.array(_at(d, col, end), dtype="str")
    heads = np.flatnonzero(np.r_[True, d["group_code"][1:] != d["group_code"][:-1]])
    return pd.array(_at(d, col, heads), dtype="str").take(d["group_code"][end])


def _str_series(d: dict[str, np.ndarray], col: str, end: np.ndarray) -> pd.Series:
    """`pd.Series(_at(d, col, end), dtype="str")` (see `_str_array`)."""
    return pd.Series(_str_array(d, col, end))


def _as_str(values: np.ndarray) -> np.ndarray:
    """str(value) of an object array, each distinct value converted once (strings as they are)."""
    codes, uniques = pd.factorize(values.reshape(-1), use_na_sentinel=False)
    names = np.asarray(uniques, dtype=object)
    if pd.api.types.infer_dtype(names, skipna=False) != "string":
        names = np.array([str(u) for u in names], dtype=object)
    return names[codes].reshape(values.shape)

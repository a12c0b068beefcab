"""The saturation index in calendar time: the running top k of each table, reconstructed from its
results' dates (`running_topk`, `running_topk_scores`, `saturation_trajectory`). The scan that
finds every top k: analysis.topk_scan; the index itself: analysis.saturation; populations:
analysis.saturation_tables."""

from __future__ import annotations

import logging
from typing import Mapping

import numpy as np
import pandas as pd

from analysis.constants import NO_INDEX_METRICS, SATURATION_ALPHA, SATURATION_K, SATURATION_Z
from analysis.saturation import (
    _check_n,
    _check_params,
    binomial_se,
    index_arrays,
    published_se,
    uncertainty_label,
    with_tables,
)
from analysis.saturation_tables import with_populations
from analysis.topk_scan import (_at, _history_rows, _names, _per_state, _states, _str_array, _str_series,
                               _topk_scan)

log = logging.getLogger("benchwatch.analysis.saturation")


def running_topk(df: pd.DataFrame, k: int = SATURATION_K) -> pd.DataFrame:
    """For each table and each distinct date: the top-k models among those dated <= that date.

    `df`: benchmark, model, score, date, optionally se (a published SE per row) and
    entity_variant (the page row, reported in `top_variants`). A model's value at a date is
    its best score among its rows dated <= that date (its best variant). One sort of the
    whole frame, then every running top k with array operations (`_topk_scan`); the output is
    built from arrays. Ties keep the earlier row.

    Returns table_id, benchmark, as_of, n_models (distinct models dated <= as_of), top_scores,
    top_se, top_models, top_variants (lists of length min(k, n_models), best first; rows
    whose top k did not change share one list object).
    """
    d = _history_rows(with_tables(df), ["table_id"])
    scan = _topk_scan(d, k)
    end = scan["end"]
    used, at = _states(scan["state"])
    changes = scan["changes"][used]
    rows = np.where(changes >= 0, changes, 0)
    return pd.DataFrame({"table_id": _str_series(d, "table_id", end),
                         "benchmark": _str_series(d, "benchmark", end),
                         "as_of": pd.to_datetime(pd.Series(d["date"][end], dtype="datetime64[ns]")),
                         "n_models": pd.Series(scan["n_models"], dtype="int64"),
                         "top_scores": _per_state(d["score"][rows], changes, at),
                         "top_se": _per_state(d["se"][rows], changes, at),
                         "top_models": _per_state(_at(d, "model", rows), changes, at),
                         "top_variants": _per_state(_names(d, "variant", rows), changes, at)})


def running_topk_scores(df: pd.DataFrame, k: int = SATURATION_K) -> tuple[pd.DataFrame, np.ndarray]:
    """`running_topk` as arrays, for statistics over the top k: (frame of table_id, benchmark, as_of,
    n_models, top_model, one row per (table, date)), and the top k scores of each row as an
    array of shape (rows, k), best first, NaN where fewer than k models are dated yet."""
    d = _history_rows(with_tables(df), ["table_id"])
    scan = _topk_scan(d, k)
    end, idx = scan["end"], scan["changes"][scan["state"]]
    tops = np.where(idx >= 0, d["score"][np.where(idx >= 0, idx, 0)], np.nan)
    frame = pd.DataFrame({"table_id": _str_series(d, "table_id", end),
                          "benchmark": _str_series(d, "benchmark", end),
                          "as_of": pd.to_datetime(pd.Series(d["date"][end], dtype="datetime64[ns]")),
                          "n_models": pd.Series(scan["n_models"], dtype="int64"),
                          "top_model": _at(d, "model", idx[:, 0]) if len(end) else np.zeros(0, dtype=object)})
    return frame, tops.reshape(len(end), k)


TRAJECTORY_COLUMNS = ["table_id", "benchmark", "as_of", "population", "n_models", "top_scores", "top_models", "top_variants",
                      "s1", "sk", "se_delta", "r_norm", "s_index",
                      "bin", "statistically_similar", "n_items", "k", "alpha", "z", "uncertainty"]


def saturation_trajectory(df: pd.DataFrame, n_items: float | Mapping[str, float] | None, k: int = SATURATION_K,
                          alpha: float = SATURATION_ALPHA, z: float = SATURATION_Z, *,
                          n_assumed: Mapping[str, bool] | None = None) -> pd.DataFrame:
    """S_index in calendar time: one row per (table, population, as_of) for each distinct model date with >= k models.

    `df`: benchmark, model, score, date (the result's date), optionally stderr/ci_low/ci_high
    and the identity columns of `saturation_table` (population, underlying, model_raw,
    setting) and `table_id` (default: the benchmark). `n_items`: one n for all tables or a
    mapping table_id -> n (`n_assumed` likewise). The top k at `as_of` are the best models
    among results of the table dated <= as_of, each model once (its best variant), per
    population as in `saturation_table`; no running top k crosses a table. Benchmarks with neither n nor
    published SEs for the models needed are left out (logged). The running top k is the one
    of `running_topk` (`_topk_scan`), computed for every (population, table) at once; the
    index is then computed on arrays, once per distinct top k.
    """
    _check_params(k, alpha, z)
    if "metric" in df.columns and df["metric"].isin(list(NO_INDEX_METRICS)).any():
        # a metric kind without an index (time horizons, costs) has no trajectory either
        df = df[~df["metric"].isin(list(NO_INDEX_METRICS))]
    h = with_populations(with_tables(df))
    h["se"] = published_se(h["stderr"] if "stderr" in h.columns else np.full(len(h), np.nan),
                           h["ci_low"] if "ci_low" in h.columns else None,
                           h["ci_high"] if "ci_high" in h.columns else None)
    d = _history_rows(h, ["population", "table_id"])
    scan = _topk_scan(d, k)
    keep = scan["n_models"] >= k
    end, state, n_models = scan["end"][keep], scan["state"][keep], scan["n_models"][keep]
    used, at = _states(state)
    changes = scan["changes"][used]             # full (>= k models): no -1 padding
    if len(end) == 0:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in TRAJECTORY_COLUMNS})
    # The index is computed once per top k that some row shows (`used`), then taken for each row (`at`).
    heads = np.flatnonzero(np.r_[True, d["group_code"][1:] != d["group_code"][:-1]])
    group_code, group_names = pd.factorize(_at(d, "table_id", heads))     # per table, from its groups
    bench_code = group_code[d["group_code"][changes[:, 0]]]
    bench_names = np.asarray(group_names, dtype=object)
    if isinstance(n_items, Mapping):
        n_per = [_check_n(n_items.get(b)) for b in bench_names]
    else:
        n_per = [_check_n(n_items)] * len(bench_names)
    n = np.array([np.nan if v is None else v for v in n_per], dtype="float64")[bench_code]
    s1, sk = d["score"][changes[:, 0]], d["score"][changes[:, k - 1]]
    tse1, tsek = d["se"][changes[:, 0]], d["se"][changes[:, k - 1]]
    n_eff = n ** alpha
    # as saturation_index: published SEs only where n is unknown (the paper's n^alpha otherwise)
    pub1, pubk = np.isfinite(tse1) & ~np.isfinite(n), np.isfinite(tsek) & ~np.isfinite(n)
    se1 = np.where(pub1, tse1, binomial_se(s1, n_eff))
    sek = np.where(pubk, tsek, binomial_se(sk, n_eff))
    ok = (np.isfinite(se1) & np.isfinite(sek))[at]
    if (~ok).any():
        log.info("[saturation] trajectory: no n and no published SE for %s; left out",
                 sorted(set(bench_names[bench_code[at[~ok]]])))
    out = index_arrays(s1, sk, se1, sek, z)
    assumed = np.array([bool((n_assumed or {}).get(b, False)) for b in bench_names], dtype=bool)[bench_code]
    labels = np.array([uncertainty_label(bool(c & 4), bool(c & 2), bool(c & 1) and (c & 6) != 6)
                       for c in range(8)], dtype=object)
    uncertainty = pd.array(labels, dtype="str").take((pub1.astype(int) * 4 + pubk.astype(int) * 2
                                                      + assumed.astype(int))[at])
    rows = changes
    res = pd.DataFrame({                     # columns built in their dtypes: no copy, no inference
        "table_id": _str_array(d, "table_id", end),
        "benchmark": _str_array(d, "benchmark", end),
        "as_of": pd.to_datetime(pd.Series(d["date"][end], dtype="datetime64[ns]")),
        "population": _str_array(d, "population", end),
        "n_models": n_models.astype("int64"),
        "top_scores": _per_state(d["score"][rows], changes, at),
        "top_models": _per_state(_names(d, "model", rows), changes, at),
        "top_variants": _per_state(_names(d, "variant", rows), changes, at),
        "s1": s1[at], "sk": sk[at], "se_delta": out["se_delta"][at],
        "r_norm": out["r_norm"][at], "s_index": out["s_index"][at], "bin": pd.array(out["bin"], dtype="str").take(at),
        "statistically_similar": out["statistically_similar"][at], "n_items": n[at], "k": int(k), "alpha": float(alpha),
        "z": float(z), "uncertainty": uncertainty,
    }, copy=False)
    if not ok.all():
        res = res[ok].reset_index(drop=True)
    return res[TRAJECTORY_COLUMNS]

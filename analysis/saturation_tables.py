"""The saturation index of a snapshot: one row per leaderboard table and population
(`saturation_table`), the populations a table's rows are ranked in (`with_populations`) and each
table's test-set size (`table_sizes`). The index itself: analysis.saturation."""

from __future__ import annotations

import logging
from typing import Mapping

import numpy as np
import pandas as pd

from analysis.constants import SATURATION_ALPHA, SATURATION_K, SATURATION_Z
from analysis.saturation import _check_params, bin_stability, published_se, saturation_index, stability_seed, with_tables
from common.naming import ENTITY_KEY, POPULATION_MODELS, POPULATION_SYSTEMS, POPULATION_SYSTEMS_PER_MODEL

log = logging.getLogger("benchwatch.analysis.saturation")

# --- a snapshot: every benchmark ----------------------------------------------------------

# ENTITY_KEY = the ranking (table, population) and the model within it
_RANKING, _ENTITY = ENTITY_KEY[:-1], ENTITY_KEY[-1]
assert _RANKING == ("table_id", "population") and _ENTITY == "model", ENTITY_KEY

TABLE_COLUMNS = ["table_id", "benchmark", "as_of", "scope", "population", "k", "alpha", "z", "metric", "n_items", "n_assumed",
                 "n_models", "top_scores", "top_models", "top_variants", "s1", "sk", "se_delta", "r_norm", "s_index", "bin",
                 "statistically_similar", "saturated", "stagnation", "headroom", "uncertainty", "reason", "scale",
                 "comparable", "bin_probs", "bin_hold_prob", "resample_noise", "resample_draws", "resample_seed"]


def saturation_table(latest: pd.DataFrame, benchmarks: pd.DataFrame | None = None, *, k: int = SATURATION_K,
                     alpha: float = SATURATION_ALPHA, z: float = SATURATION_Z, as_of=None,
                     scope: str = "all", bootstrap_seed: int | None = 0) -> pd.DataFrame:
    """One row per table of `latest` (scope `scope`): its saturation, or the reason there is none.

    A table is `table_id` (registry.tables: benchmark, source, version; default: the
    benchmark): scores of two tables are never ranked together.

    `latest`: benchmark, model, score, metric, and optionally stderr, ci_low, ci_high,
    n_items, population/underlying (registry.identity; default: every row a model run) and
    model_raw/setting (to name the variant used). A model with several rows (efforts, labels,
    settings, aliases) counts once, with its best score; `top_models` are the canonical ids
    of the top k in rank order, `top_variants` the page row behind each. One row per
    (benchmark, population): model runs and agent systems are never ranked together, and
    systems naming one underlying model also give `systems_per_model` (each model once, its
    best system; see `with_populations`).
    `benchmarks` (the registry): id, n_items, ceiling, chance, optionally dynamic. n is the
    scores' own n_items (their most common value) else the registry's; a registry n of a
    dynamic benchmark is nominal, so its uncertainty is labelled ``assumed``.
    `bin_probs`/`bin_hold_prob` come from `bin_stability` (noise, draws and seed stored beside
    them), seeded per benchmark from `bootstrap_seed` (reproducible); None disables them.
    """
    _check_params(k, alpha, z)
    missing = {"benchmark", "model", "score", "metric"} - set(latest.columns)
    if missing:
        raise ValueError(f"saturation_table: latest scores lack column(s) {sorted(missing)}")
    df = latest.copy()
    for col in ("stderr", "ci_low", "ci_high", "n_items"):
        if col not in df.columns:
            df[col] = np.nan
    df = with_populations(with_tables(df[df["score"].notna()]))
    df["se_published"] = published_se(df["stderr"], df["ci_low"], df["ci_high"])
    reg = _registry_lookup(benchmarks)
    rows = []
    # a ranking is one (table, population); a model once in it, its best variant (ENTITY_KEY)
    for (table, population), g in df.groupby(list(_RANKING), sort=True):
        bench = g["benchmark"].iat[0]
        info = reg.get(bench, {})
        metrics = g["metric"].dropna().unique()
        if len(metrics) != 1:
            rows.append({**_reason_row(bench, k, alpha, z, len(g), "scores mix metric kinds "
                                       f"{sorted(map(str, metrics))}; not comparable"), "population": population,
                         "table_id": table})
            continue
        metric = str(metrics[0])
        # Best variant per model; ties broken by name so the ranking never depends on read order.
        order = ["score", "model"] + (["entity_variant"] if "entity_variant" in g.columns else [])
        best = g.sort_values(order, ascending=[False] + [True] * (len(order) - 1), kind="stable") \
                .drop_duplicates(_ENTITY, keep="first")
        n, n_assumed = _benchmark_n(bench, g["n_items"], info)
        res = saturation_index(best["score"].to_numpy(), n, k, alpha, z, stderrs=best["se_published"].to_numpy(),
                               metric=metric, ceiling=info.get("ceiling"), chance=info.get("chance"),
                               n_assumed=n_assumed)
        d = res.to_dict()
        d.pop("n_eff")
        # each table draws from its own generator (stability_seed): the numbers do not depend on order
        stability = _stability_columns(best["score"].to_numpy(), n, k, alpha, best["se_published"].to_numpy(),
                                       metric, n_assumed,
                                       None if bootstrap_seed is None else
                                       stability_seed(bootstrap_seed, str(table) if population == "models"
                                                      else f"{table}|{population}", scope))
        rows.append({"table_id": table, "benchmark": bench, **d, "n_assumed": n_assumed, "population": population,
                     "top_models": [str(m) for m in best["model"].iloc[:k]],
                     "top_variants": [str(v) for v in best["entity_variant"].iloc[:k]], **stability})
    out = pd.DataFrame(rows, columns=[c for c in TABLE_COLUMNS if c not in ("as_of", "scope")])
    out.insert(2, "as_of", pd.Timestamp(as_of) if as_of is not None else pd.NaT)
    out.insert(3, "scope", scope)
    return out[TABLE_COLUMNS]


def _stability_columns(scores, n, k, alpha, stderrs, metric, n_assumed, seed) -> dict:
    """The bin-stability columns of one table row (all None without a seed or an index)."""
    st = None if seed is None else bin_stability(scores, n, k, alpha, stderrs=stderrs, metric=metric,
                                                  n_assumed=n_assumed, seed=seed)
    if st is None:
        return {"bin_probs": None, "bin_hold_prob": None, "resample_noise": None, "resample_draws": None,
                "resample_seed": None}
    return {"bin_probs": list(st.bin_probs), "bin_hold_prob": st.bin_hold_prob, "resample_noise": st.noise,
            "resample_draws": st.draws, "resample_seed": st.seed}


def _reason_row(bench: str, k: int, alpha: float, z: float, n_models: int, reason: str) -> dict:
    log.warning("[saturation] %s: no index: %s", bench, reason)
    return {"benchmark": bench, "k": k, "alpha": alpha, "z": z, "n_models": n_models, "top_scores": [],
            "top_models": [], "top_variants": [], "reason": reason}


def with_populations(df: pd.DataFrame) -> pd.DataFrame:
    """Score rows labelled with the population they are ranked in, plus the per-model view of systems.

    `population` defaults to ``models`` (no column, or NULL). A ``systems`` row whose
    `underlying` model is known is repeated as a ``systems_per_model`` row whose model is that
    underlying model, so a top-k over that population counts each model once with its best
    system. `entity_variant` names the page row (model_raw, plus the setting when there is
    one; for a per-model row the system's name), recorded in `top_variants`.
    """
    out = df.copy(deep=False)                   # copy-on-write: the new columns leave df as it is
    if "population" not in out.columns:
        out["population"] = POPULATION_MODELS
    else:
        out["population"] = out["population"].fillna(POPULATION_MODELS).astype(str)
    raw = out["model"]
    if "model_raw" in out.columns:
        raw = out["model_raw"].where(out["model_raw"].notna(), raw)
    raw = raw.astype(str)
    if "setting" in out.columns:
        setting = out["setting"].fillna("").astype(str)
        raw = raw.where(setting.eq(""), raw + " [" + setting + "]")
    out["entity_variant"] = raw
    if "underlying" not in out.columns:
        return out
    per_model = out[out["population"].eq(POPULATION_SYSTEMS) & out["underlying"].notna()].copy()
    if per_model.empty:
        return out
    per_model["entity_variant"] = per_model["model"].astype(str)
    per_model["model"] = per_model["underlying"]
    per_model["population"] = POPULATION_SYSTEMS_PER_MODEL
    return pd.concat([out, per_model], ignore_index=True)


def _registry_lookup(benchmarks: pd.DataFrame | None) -> dict[str, dict]:
    """benchmark id -> {n_items, ceiling, chance, dynamic} with NaN/NA turned into None."""
    if benchmarks is None or benchmarks.empty:
        return {}
    if "id" not in benchmarks.columns:
        raise ValueError("saturation_table: the benchmarks registry frame needs an 'id' column")
    cols = [c for c in ("n_items", "ceiling", "chance", "dynamic") if c in benchmarks.columns]
    out = {}
    for rec in benchmarks[["id", *cols]].to_dict("records"):
        out[rec.pop("id")] = {c: (None if pd.isna(v) else v) for c, v in rec.items()}
    return out


def _benchmark_n(bench: str, n_col: pd.Series, info: Mapping) -> tuple[float | None, bool]:
    """(n, n_assumed): the scores' own test-set size when they state one, else the registry's."""
    stated = pd.to_numeric(n_col, errors="coerce").dropna()
    stated = stated[stated > 0]
    if len(stated):
        counts = stated.value_counts()
        if len(counts) > 1:
            log.info("[saturation] %s: scores state several test-set sizes %s; using the most common",
                        bench, sorted(counts.index.tolist()))
        top = counts[counts == counts.max()].index.max()
        return float(top), False
    n = info.get("n_items")
    if n is None:
        return None, False
    return float(n), bool(info.get("dynamic") or False)


def table_sizes(frame: pd.DataFrame, benchmarks: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per table of `frame` (benchmark, optionally table_id and n_items): n_items and n_assumed
    as `saturation_table` decides them (the rows' own most common n, else the registry's; a
    registry n of a dynamic benchmark is nominal). For tables whose n the latest scores do
    not give (a past release seen only in the history)."""
    reg = _registry_lookup(benchmarks)
    f = with_tables(frame)
    n_col = f["n_items"] if "n_items" in f.columns else pd.Series(np.nan, index=f.index)
    rows = []
    for table, g in f.assign(_n=n_col).groupby("table_id", sort=True):
        bench = g["benchmark"].iat[0]
        n, assumed = _benchmark_n(bench, g["_n"], reg.get(bench, {}))
        rows.append({"table_id": table, "n_items": n, "n_assumed": assumed})
    return pd.DataFrame(rows, columns=["table_id", "n_items", "n_assumed"])

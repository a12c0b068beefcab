"""Model dates and post-cutoff slices (docs/statistics.md, "Model dates and post-cutoff slices").

A model's knowledge cutoff is an interval [c_lo, c_hi]: a stated cutoff gives c_lo = c_hi;
an unknown one is bounded above by the release date (training data cannot post-date release,
LiveCodeBench's practice) and below by release - 12 months. Every source's claim is kept;
the resolution picks one by a documented priority and keeps disagreements visible.

Pure: DataFrames in, DataFrames out; no I/O, no clock (`now` is an argument).
"""

from __future__ import annotations

import json
import logging
from typing import Iterable

import numpy as np
import pandas as pd

from analysis.constants import (
    DATE_CONFLICT_DAYS,
    DATE_JITTER_MAX,
    DATE_SOURCE_PRIORITY,
    GUARD_BAND_DAYS,
    PLACEHOLDER_MIN_LAG_DAYS,
    PLACEHOLDER_MIN_MODELS,
    LOW_N_ITEMS,
    PROVENANCE_PRIORITY,
    UNKNOWN_CUTOFF_LOOKBACK_MONTHS,
)
from common.units import is_missing, parse_date

log = logging.getLogger("benchwatch.analysis.cutoffs")

CLAIM_COLUMNS = ("model", "release_date", "knowledge_cutoff", "provenance", "source")
ITEM_COLUMNS = ("benchmark", "model", "item_id", "item_date", "score")
SLICE_STATUSES = ("post", "pre", "ambiguous", "unknown")


def guard(days: int = GUARD_BAND_DAYS) -> pd.Timedelta:
    return pd.Timedelta(days=days)


def require_columns(frame: pd.DataFrame, columns: Iterable[str], what: str) -> None:
    """ValueError naming the frame and the missing columns (analysis' bad-input rule)."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"[{what}] missing column(s) {missing}; have {list(frame.columns)}")


def as_dates(values: pd.Series, what: str) -> pd.Series:
    """A date column as naive-UTC datetime64; strings go through `common.units.parse_date`.

    A non-missing value that is not a date is bad input: ValueError naming the column.
    """
    if pd.api.types.is_datetime64_any_dtype(values):
        out = values
        if getattr(out.dt, "tz", None) is not None:
            out = out.dt.tz_convert("UTC").dt.tz_localize(None)
        return out.astype("datetime64[us]")
    parsed = values.map(parse_date)
    bad = parsed.isna() & ~values.map(is_missing).astype(bool)
    if bad.any():
        raise ValueError(f"[{what}] unparseable date(s): {values[bad].head(3).tolist()}")
    return pd.to_datetime(parsed, errors="raise").astype("datetime64[us]")


def check_proportions(values: pd.Series, what: str) -> None:
    bad = values.notna() & ((values < 0) | (values > 1))
    if bad.any():
        raise ValueError(f"[{what}] scores must be proportions in [0, 1]; got {values[bad].head(3).tolist()}")


# --- model dates -----------------------------------------------------------------------------

def _rank(values: pd.Series, order: tuple[str, ...]) -> pd.Series:
    return values.map({v: i for i, v in enumerate(order)}).fillna(len(order)).astype(int)


def placeholder_claims(cutoff_claims: pd.DataFrame, release: pd.Series, *, conflict_days: int = DATE_CONFLICT_DAYS,
                       min_models: int = PLACEHOLDER_MIN_MODELS,
                       min_lag_days: int = PLACEHOLDER_MIN_LAG_DAYS) -> pd.Series:
    """Boolean mask over cutoff claims (model, source, knowledge_cutoff): a source's default date.

    Rule (no model names): a date that >= `min_models` models of one source share is a
    placeholder when it is a year boundary (Jan 1 or Dec 31: "sometime that year") or when it
    precedes those models' release dates by more than `min_lag_days` (median over the ones with a
    release date). A claim another source corroborates (same model, a date within
    `conflict_days`) is not a placeholder. LiveCodeBench dates 13-18 models 2023-01-01, two of
    them released 2024-02: a date that qualifies them as clean references of 2023 items
    although their training data may reach into that year.
    """
    c = cutoff_claims
    if c.empty:
        return pd.Series(False, index=c.index)
    key = c["source"].astype(str) + "\x1f" + c["knowledge_cutoff"].dt.strftime("%Y-%m-%d")
    shared = c.groupby(key)["model"].transform("nunique") >= min_models
    d = c["knowledge_cutoff"]
    boundary = ((d.dt.month == 1) & (d.dt.day == 1)) | ((d.dt.month == 12) & (d.dt.day == 31))
    lag = (c["model"].map(release) - d).dt.days
    median_lag = lag.groupby(key).transform("median")
    suspect = shared & (boundary | (median_lag > min_lag_days))
    if not suspect.any():
        return suspect
    corroborated = pd.Series(False, index=c.index)
    for i in c.index[suspect]:
        others = c[(c["model"] == c.at[i, "model"]) & (c["source"] != c.at[i, "source"])]
        corroborated[i] = bool(((others["knowledge_cutoff"] - d[i]).abs() <= pd.Timedelta(days=conflict_days)).any())
    return suspect & ~corroborated


def first_of_jitter(newest: pd.DataFrame, claims: pd.DataFrame, field: str,
                    jitter: pd.Timedelta = pd.Timedelta(DATE_JITTER_MAX)) -> pd.DataFrame:
    """`newest` (one claim of `field` per model, source and provenance: the newest) with each
    value replaced by the first-observed value of the same source's claims that lie within
    `jitter` of it: a date that moves by less than a day between snapshots (the same instant read
    in two time zones, a re-serialised file) keeps its first value, so it cannot move a test's
    windows. Dates are stored by day, so such an instant can show as two dates one day apart: a
    move of at most one day is jitter; a revision by more stands. `claims` carries `first_observed_at`."""
    key = ["model", "source", "provenance"]
    pool = claims[key + [field, "first_observed_at"]].rename(columns={field: "_v", "first_observed_at": "_first"})
    m = newest[key + [field]].assign(_row=np.arange(len(newest))).merge(pool, on=key, how="left")
    near = m[(m["_v"] - m[field]).abs() <= jitter]
    first = near.sort_values(["_first", "_v"], kind="stable", na_position="last").drop_duplicates("_row")
    out = newest.copy()
    values = pd.Series(first.set_index("_row")["_v"].reindex(np.arange(len(newest))).to_numpy(), index=out.index)
    moved = values.notna() & (values != out[field])
    if moved.any():
        log.info("[cutoffs] %d %s claim(s) moved by less than %s since first seen: the first value kept, e.g. %s",
                 int(moved.sum()), field, jitter, out.loc[moved, ["model", "source"]].head(3).to_dict("records"))
    out[field] = values.where(values.notna(), out[field]).astype(out[field].dtype)
    return out


def resolve_model_dates(claims: pd.DataFrame, *, conflict_days: int = DATE_CONFLICT_DAYS,
                        lookback_months: int = UNKNOWN_CUTOFF_LOOKBACK_MONTHS) -> pd.DataFrame:
    """One row per model from every source's date claims, with provenance and conflicts.

    Priority for each of release date and cutoff, separately: provenance in
    `PROVENANCE_PRIORITY` order (vendor_doc > model_card > registry > leaderboard > listing >
    inferred), then source in `DATE_SOURCE_PRIORITY` order, then source name. The first claim
    with a value wins. With an `observed_at` column, only the newest claim of each (source,
    provenance) counts: a leaderboard that revised its estimate (LiveCodeBench moved
    DeepSeek-Coder's cutoff from 2023-07-30 to 2023-08-30) is not in conflict with itself; with
    `first_observed_at` too, a newest claim within a day of an earlier one of that source keeps
    the earlier one's value (`first_of_jitter`: jitter never moves a test). Claims of one field more than `conflict_days` apart set `conflict` and
    are all listed in `conflicts` (JSON: field, source, provenance, value).

    Interval: stated cutoff c -> c_lo = c_hi = c. Unknown cutoff -> c_hi = release date,
    c_lo = release - `lookback_months` (cutoff_provenance 'inferred'). Neither -> NaT.

    Trust (`cutoff_trust`): placeholder claims (`placeholder_claims`) never win over a real
    claim; a model whose only cutoff claims are placeholders keeps that date for its own slice
    (the leaderboard's convention) with trust 'placeholder', which never qualifies it as a
    clean A3 reference. Else 'stated' (a claimed date) or 'inferred' (bounded by the release).
    """
    require_columns(claims, CLAIM_COLUMNS, "model date claims")
    dated = "observed_at" in claims.columns
    times = [t for t in ("observed_at", "first_observed_at") if dated and t in claims.columns]
    c = claims.loc[claims["model"].notna(), list(CLAIM_COLUMNS) + times].copy()
    c["release_date"] = as_dates(c["release_date"], "model date claims: release_date")
    c["knowledge_cutoff"] = as_dates(c["knowledge_cutoff"], "model date claims: knowledge_cutoff")
    for t in times:
        c[t] = as_dates(c[t], f"model date claims: {t}")
    c["provenance"] = c["provenance"].fillna("").astype("str")
    c["source"] = c["source"].fillna("").astype("str")
    unknown = sorted(set(c["provenance"]) - set(PROVENANCE_PRIORITY))
    if unknown:
        log.warning("[cutoffs] unknown provenance value(s) %s ranked last", unknown)
    c["_prov_rank"] = _rank(c["provenance"], PROVENANCE_PRIORITY)
    c["_src_rank"] = _rank(c["source"], DATE_SOURCE_PRIORITY)
    c = c.sort_values(["model", "_prov_rank", "_src_rank", "source"], kind="stable")

    models = pd.Index(c["model"].unique(), name="model")
    out = pd.DataFrame(index=models)
    conflicts: dict[str, list[dict]] = {m: [] for m in models}
    placeholder_models: set = set()
    for field, prefix in (("release_date", "release"), ("knowledge_cutoff", "cutoff")):
        have = c[c[field].notna()]
        if dated:   # a source that revised its date: its newest claim stands, the older ones are superseded
            newest = have.sort_values("observed_at", ascending=False, kind="stable", na_position="last")
            newest = newest.drop_duplicates(["model", "source", "provenance"])
            if "first_observed_at" in have.columns:
                newest = first_of_jitter(newest, have, field)
            have = newest.sort_values(["model", "_prov_rank", "_src_rank", "source"], kind="stable")
        if field == "knowledge_cutoff":
            ph = placeholder_claims(have, out["release_date"], conflict_days=conflict_days)
            only_ph = ph.groupby(have["model"]).transform("all")
            placeholder_models = set(have.loc[only_ph, "model"])
            if ph.any():
                log.info("[cutoffs] %d placeholder cutoff claim(s) (a date many models of one source share), e.g. %s",
                         int(ph.sum()), have.loc[ph, ["model", "source"]].head(3).to_dict("records"))
            have = have[~ph | only_ph]       # a placeholder never wins over a real claim
        first = have.groupby("model", sort=False).first()
        out[field] = first[field].reindex(models)
        out[f"{prefix}_source"] = first["source"].reindex(models)
        out[f"{prefix}_provenance"] = first["provenance"].reindex(models)
        by_model = have.groupby("model", sort=False)[field]
        span = by_model.max() - by_model.min()
        far = span[span > pd.Timedelta(days=conflict_days)].index
        for model, rows in have[have["model"].isin(far)].groupby("model", sort=False):
            seen = rows.drop_duplicates(["source", "provenance", field])
            conflicts[model].extend(
                {"field": field, "source": s, "provenance": p, "value": v.date().isoformat()}
                for s, p, v in zip(seen["source"], seen["provenance"], seen[field]))
    out["n_claims"] = c.groupby("model", sort=False).size().reindex(models)
    out["conflict"] = [bool(conflicts[m]) for m in models]
    out["conflicts"] = [json.dumps(conflicts[m]) if conflicts[m] else None for m in models]
    clashing = out.index[out["conflict"]]
    if len(clashing):
        log.info("[cutoffs] %d model(s) with date claims more than %d days apart (see `conflicts`), e.g. %s",
                 len(clashing), conflict_days, list(clashing[:5]))
    for model in clashing:
        log.debug("[cutoffs] conflicting date claims for %s: %s", model, out.at[model, "conflicts"])

    known = out["knowledge_cutoff"].notna()
    out["cutoff_known"] = known
    out["c_hi"] = out["knowledge_cutoff"].where(known, out["release_date"])
    lookback = out["release_date"] - pd.DateOffset(months=lookback_months)
    out["c_lo"] = out["knowledge_cutoff"].where(known, lookback)
    inferred = ~known & out["release_date"].notna()
    out.loc[inferred, "cutoff_provenance"] = "inferred"
    out.loc[inferred, "cutoff_source"] = out.loc[inferred, "release_source"]
    trust = np.full(len(out), None, dtype=object)
    trust[inferred.to_numpy(dtype=bool)] = "inferred"
    trust[known.to_numpy(dtype=bool)] = "stated"
    out["cutoff_trust"] = trust
    out.loc[out.index.isin(placeholder_models) & known, "cutoff_trust"] = "placeholder"
    late = known & out["release_date"].notna() & (out["knowledge_cutoff"] > out["release_date"])
    if late.any():
        log.info("[cutoffs] %d model(s) with a stated cutoff after their release date (kept as stated), e.g. %s",
                 int(late.sum()), list(out.index[late][:5]))
    cols = ["c_lo", "c_hi", "knowledge_cutoff", "cutoff_known", "cutoff_provenance", "cutoff_source", "cutoff_trust",
            "release_date", "release_provenance", "release_source", "conflict", "conflicts", "n_claims"]
    out = out[cols].reset_index()
    for col in ("c_lo", "c_hi", "knowledge_cutoff", "release_date"):
        out[col] = out[col].astype("datetime64[us]")
    return out


def _cutoff_lookup(cutoffs: pd.DataFrame) -> pd.DataFrame:
    require_columns(cutoffs, ("model", "c_lo", "c_hi"), "resolved cutoffs")
    if cutoffs["model"].duplicated().any():
        dup = cutoffs.loc[cutoffs["model"].duplicated(), "model"].head(3).tolist()
        raise ValueError(f"[resolved cutoffs] one row per model expected; duplicated: {dup}")
    return cutoffs.set_index("model")[["c_lo", "c_hi"]]


# --- benchmark-level slice (B1) ----------------------------------------------------------------

def material_dates_from_items(items: pd.DataFrame) -> pd.DataFrame:
    """Per benchmark, the span of its dated items: material_start (earliest), material_date (latest).

    R_b is the latest source-material date (docs/statistics.md notation); the earliest one lets the
    benchmark-level slice call a benchmark `post` only when *all* of its items postdate a cutoff.
    """
    require_columns(items, ("benchmark", "item_date"), "items")
    dates = as_dates(items["item_date"], "items: item_date")
    g = pd.DataFrame({"benchmark": items["benchmark"], "d": dates}).dropna().groupby("benchmark")["d"]
    return pd.DataFrame({"material_start": g.min(), "material_date": g.max()}).reset_index()


def benchmark_slices(benchmarks: pd.DataFrame, cutoffs: pd.DataFrame, *,
                     guard_days: int = GUARD_BAND_DAYS) -> pd.DataFrame:
    """status(b, m) for every benchmark x resolved model (docs/statistics.md, "Model dates and post-cutoff slices"):

    post if R_start > c_hi + g; pre if R_b <= c_lo; ambiguous otherwise; unknown if a date is
    missing. R_b = `material_date` (latest source material); R_start = `material_start` when
    given (earliest material of a dated benchmark), else R_b — the documented rule exactly.
    """
    require_columns(benchmarks, ("benchmark", "material_date"), "benchmarks")
    b = benchmarks[["benchmark"]].copy()
    b["material_date"] = as_dates(benchmarks["material_date"], "benchmarks: material_date")
    start = benchmarks["material_start"] if "material_start" in benchmarks.columns else None
    b["material_start"] = (as_dates(start, "benchmarks: material_start").fillna(b["material_date"])
                           if start is not None else b["material_date"])
    m = _cutoff_lookup(cutoffs).reset_index()
    out = b.merge(m, how="cross")
    g = guard(guard_days)
    post = out["material_start"] > out["c_hi"] + g
    pre = out["material_date"] <= out["c_lo"]
    unknown = out["material_date"].isna() | out["c_hi"].isna() | out["c_lo"].isna()
    out["status"] = np.select([unknown, post, pre], ["unknown", "post", "pre"], default="ambiguous")
    return out[["benchmark", "model", "status", "material_start", "material_date", "c_lo", "c_hi"]]


def post_cutoff_scope(scores: pd.DataFrame, slices: pd.DataFrame) -> pd.DataFrame:
    """The scores on the clean scope: rows whose benchmark is `post` for their model.

    This is the input of saturation with scope `post_cutoff`.
    """
    require_columns(scores, ("benchmark", "model"), "scores")
    require_columns(slices, ("benchmark", "model", "status"), "benchmark slices")
    post = slices.loc[slices["status"] == "post", ["benchmark", "model"]].drop_duplicates()
    return scores.merge(post, on=["benchmark", "model"], how="inner")


# --- item-level slice (B2) ---------------------------------------------------------------------

def prepare_items(items: pd.DataFrame) -> pd.DataFrame:
    """Validated item rows: dates parsed, scores in [0, 1], one row per (source, benchmark, model, item)."""
    require_columns(items, ITEM_COLUMNS, "items")
    it = items.copy()
    if "source" not in it.columns:
        it["source"] = ""
    it["item_date"] = as_dates(it["item_date"], "items: item_date")
    it["score"] = pd.to_numeric(it["score"], errors="coerce")
    check_proportions(it["score"], "items: score")
    key = ["source", "benchmark", "model", "item_id"]
    dup = it.duplicated(key)
    if dup.any():
        raise ValueError(f"[items] duplicate (source, benchmark, model, item_id) rows, e.g. "
                         f"{it.loc[dup, key].head(3).to_dict('records')}")
    return it


def _window_stats(scores: pd.Series) -> tuple[float, int, float]:
    """mean, n, item-clustered SE = sd_i(p_i) / sqrt(n) (items are the sampled units)."""
    n = int(scores.notna().sum())
    mean = float(scores.mean()) if n else float("nan")
    se = float(scores.std(ddof=1) / np.sqrt(n)) if n > 1 else float("nan")
    return mean, n, se


def post_cutoff_scores(items: pd.DataFrame, cutoffs: pd.DataFrame, *, now: pd.Timestamp,
                       guard_days: int = GUARD_BAND_DAYS, low_n: int = LOW_N_ITEMS) -> pd.DataFrame:
    """S_post and S_pre per (source, benchmark, model) with n, SE and a low-n warning (docs/statistics.md, "Model dates and post-cutoff slices").

    S_post(m; T) = mean p_i over {i : c_hi + g < d_i <= T} (T = `now`); window_start = c_hi + g
    (exclusive), window_end = T. S_pre = mean over {i : d_i <= c_lo}. SE = sd_i / sqrt(n).
    `score_std` reweights S_post by difficulty to the benchmark's all-time difficulty mix
    (NaN when a difficulty level has no post item or no difficulty is given). Models without a
    resolved cutoff bound are left out (logged); undated items count in `n_undated` only.
    """
    it = prepare_items(items)
    cut = _cutoff_lookup(cutoffs)
    now = pd.Timestamp(now)
    g = guard(guard_days)
    rows = []
    has_difficulty = "difficulty" in it.columns
    for (source, bench), bitems in it.groupby(["source", "benchmark"], sort=True):
        mix = (bitems.drop_duplicates("item_id")["difficulty"].value_counts(normalize=True)
               if has_difficulty else pd.Series(dtype=float))
        missing = sorted(set(bitems["model"]) - set(cut.index[cut["c_hi"].notna()]))
        if missing:
            log.info("[cutoffs] %s/%s: %d model(s) without a cutoff or release date left out: %s",
                        source or "-", bench, len(missing), missing[:10])
        for model, mitems in bitems.groupby("model", sort=True):
            if model in missing:
                continue
            c_lo, c_hi = cut.at[model, "c_lo"], cut.at[model, "c_hi"]
            dated = mitems[mitems["item_date"].notna()]
            start = c_hi + g
            post = dated[(dated["item_date"] > start) & (dated["item_date"] <= now)]
            pre = dated[dated["item_date"] <= c_lo] if pd.notna(c_lo) else dated.iloc[0:0]
            s_post, n_post, se_post = _window_stats(post["score"])
            s_pre, n_pre, se_pre = _window_stats(pre["score"])
            score_std = float("nan")
            if has_difficulty and not mix.empty and n_post:
                by_h = post.groupby("difficulty")["score"].mean()
                if set(mix.index) <= set(by_h.index):
                    score_std = float((by_h.reindex(mix.index) * mix).sum())
            rows.append({
                "source": source, "benchmark": bench, "model": model,
                "score": s_post, "n_items": n_post, "stderr": se_post,
                "window_start": start, "window_end": now, "low_n": n_post < low_n,
                "score_std": score_std,
                "score_pre": s_pre, "n_pre": n_pre, "stderr_pre": se_pre, "pre_window_end": c_lo,
                "n_undated": int(mitems["item_date"].isna().sum()),
            })
    cols = ["source", "benchmark", "model", "score", "n_items", "stderr", "window_start", "window_end",
            "low_n", "score_std", "score_pre", "n_pre", "stderr_pre", "pre_window_end", "n_undated"]
    out = pd.DataFrame(rows, columns=cols)
    for col in ("window_start", "window_end", "pre_window_end"):
        out[col] = out[col].astype("datetime64[us]")
    low = out[out["low_n"] & (out["n_items"] > 0)]
    if not low.empty:
        log.info("[cutoffs] %d post-cutoff slice(s) have fewer than %d items (low_n)", len(low), low_n)
    return out


def fair_window(cutoffs: pd.DataFrame, models: Iterable[str], *, now: pd.Timestamp,
                guard_days: int = GUARD_BAND_DAYS) -> tuple[pd.Timestamp, pd.Timestamp]:
    """The ranking window in which no model of the set is contaminated: (max c_hi + g, now].

    LCB's "contaminated => unranked" rule turned around (docs/statistics.md, "Model dates and post-cutoff slices").
    """
    cut = _cutoff_lookup(cutoffs)
    models = list(models)
    absent = [m for m in models if m not in cut.index or pd.isna(cut.at[m, "c_hi"])]
    if absent:
        raise ValueError(f"[fair window] no cutoff bound for model(s) {absent}")
    start = cut.loc[models, "c_hi"].max() + guard(guard_days)
    return pd.Timestamp(start), pd.Timestamp(now)

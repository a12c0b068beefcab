"""Correctness of the fast paths (issue 12) against slow references: identical output.

Speed is measured by bench/run.py, never here. The references are the plain implementations
the fast paths replaced (kept verbatim below), and the plain-list definition of the running
top k: for each date, sort every score seen so far and take the first k.
"""

from __future__ import annotations

import logging
from typing import Mapping

import numpy as np
import pandas as pd
import pytest

from analysis.constants import SATURATION_ALPHA, SATURATION_K, SATURATION_Z
from analysis.saturation import _check_n, _check_params, binomial_se, index_arrays, published_se, uncertainty_label
from analysis.saturation_tables import POPULATION_MODELS, with_populations
from analysis.trajectory import TRAJECTORY_COLUMNS, running_topk, saturation_trajectory

log = logging.getLogger("test")


# --- references: the previous one-dict-per-row implementation ------------------------------

def reference_running_topk(df: pd.DataFrame, k: int = SATURATION_K) -> pd.DataFrame:
    """For each benchmark and each distinct date: the top-k models among those dated <= that date.

    `df`: benchmark, model, score, date, optionally se (a published SE per row) and
    entity_variant (the page row, reported in `top_variants`). A model's value at a date is
    its best score among its rows dated <= that date (its best variant). One sort of the
    whole frame, then one pass per benchmark keeping only the current top k (a model outside
    the top k can only enter it through a new row), so the cost is O(N log N + N k).

    Returns benchmark, as_of, n_models (distinct models dated <= as_of), top_scores,
    top_se, top_models, top_variants (lists of length min(k, n_models), best first).
    """
    need = {"benchmark", "model", "score", "date"} - set(df.columns)
    if need:
        raise ValueError(f"history frame lacks column(s) {sorted(need)}")
    d = df[["benchmark", "model", "score", "date"]].copy()
    d["se"] = df["se"].to_numpy(dtype="float64") if "se" in df.columns else np.nan
    d["variant"] = df["entity_variant"].to_numpy() if "entity_variant" in df.columns else d["model"].to_numpy()
    d["date"] = pd.to_datetime(d["date"])
    d["score"] = pd.to_numeric(d["score"], errors="coerce")
    dropped = d["score"].isna() | d["date"].isna() | d["model"].isna()
    if dropped.any():
        log.warning("[saturation] history: %d row(s) without score, model or date left out "
                    "(benchmarks: %s)", int(dropped.sum()), sorted(d.loc[dropped, "benchmark"].astype(str).unique()))
        d = d[~dropped]
    d = d.sort_values(["benchmark", "date"], kind="stable")
    bench = d["benchmark"].to_numpy()
    dates = d["date"].to_numpy()
    models = d["model"].to_numpy()
    scores = d["score"].to_numpy(dtype="float64")
    ses = d["se"].to_numpy(dtype="float64")
    variants = d["variant"].to_numpy()
    out_b, out_t, out_n, out_s, out_e, out_m, out_v = [], [], [], [], [], [], []
    n_rows = len(d)
    top: dict = {}        # model -> (score, se) of the current top k
    seen: set = set()
    for i in range(n_rows):
        if i == 0 or bench[i] != bench[i - 1]:
            top, seen = {}, set()
        m, sc = models[i], scores[i]
        seen.add(m)
        if m in top:
            if sc > top[m][0]:
                top[m] = (sc, ses[i], variants[i])
        elif len(top) < k:
            top[m] = (sc, ses[i], variants[i])
        else:
            low = min(top, key=lambda key: top[key][0])
            if sc > top[low][0]:
                del top[low]
                top[m] = (sc, ses[i], variants[i])
        if i + 1 == n_rows or bench[i + 1] != bench[i] or dates[i + 1] != dates[i]:
            ranked = sorted(top.items(), key=lambda kv: -kv[1][0])
            out_b.append(bench[i])
            out_t.append(dates[i])
            out_n.append(len(seen))
            out_s.append([v[0] for _, v in ranked])
            out_e.append([float(v[1]) for _, v in ranked])
            out_m.append([key for key, _ in ranked])
            out_v.append([str(v[2]) for _, v in ranked])
    return pd.DataFrame({"benchmark": pd.Series(out_b, dtype="str"),
                         "as_of": pd.to_datetime(pd.Series(out_t, dtype="datetime64[ns]")),
                         "n_models": pd.Series(out_n, dtype="int64"), "top_scores": out_s, "top_se": out_e,
                         "top_models": out_m, "top_variants": out_v})




def reference_trajectory(df: pd.DataFrame, n_items: float | Mapping[str, float] | None, k: int = SATURATION_K,
                          alpha: float = SATURATION_ALPHA, z: float = SATURATION_Z, *,
                          n_assumed: Mapping[str, bool] | None = None) -> pd.DataFrame:
    """S_index in calendar time: one row per (benchmark, as_of) for each distinct model date with >= k models.

    `df`: benchmark, model, score, date (the result's date), optionally stderr/ci_low/ci_high
    and the identity columns of `saturation_table` (population, underlying, model_raw,
    setting). `n_items`: one n for all benchmarks or a mapping benchmark -> n. The top k at
    `as_of` are the best models among results dated <= as_of, each model once (its best
    variant), per population as in `saturation_table`. Benchmarks with neither n nor
    published SEs for the models needed are left out (logged).
    """
    _check_params(k, alpha, z)
    h = with_populations(df)
    h["se"] = published_se(h["stderr"] if "stderr" in h.columns else np.full(len(h), np.nan),
                           h["ci_low"] if "ci_low" in h.columns else None,
                           h["ci_high"] if "ci_high" in h.columns else None)
    runs = []
    for population, g in h.groupby("population", sort=True):
        r = reference_running_topk(g, k)
        r.insert(2, "population", population)
        runs.append(r)
    run = pd.concat(runs, ignore_index=True) if runs else reference_running_topk(h, k).assign(population=POPULATION_MODELS)
    run = run[run["n_models"] >= k].reset_index(drop=True)
    if run.empty:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in REFERENCE_COLUMNS})
    if isinstance(n_items, Mapping):
        n_of = {b: _check_n(n_items.get(b)) for b in run["benchmark"].unique()}
    else:
        n_val = _check_n(n_items)
        n_of = {b: n_val for b in run["benchmark"].unique()}
    n = run["benchmark"].map(n_of).astype("float64").to_numpy()
    tops = np.array([row[:k] for row in run["top_scores"]], dtype="float64").reshape(len(run), k)
    tse = np.array([row[:k] for row in run["top_se"]], dtype="float64").reshape(len(run), k)
    s1, sk = tops[:, 0], tops[:, k - 1]
    n_eff = n ** alpha
    # as saturation_index: published SEs only where n is unknown (the paper's n^alpha otherwise)
    pub1, pubk = np.isfinite(tse[:, 0]) & ~np.isfinite(n), np.isfinite(tse[:, k - 1]) & ~np.isfinite(n)
    se1 = np.where(pub1, tse[:, 0], binomial_se(s1, n_eff))
    sek = np.where(pubk, tse[:, k - 1], binomial_se(sk, n_eff))
    ok = np.isfinite(se1) & np.isfinite(sek)
    if (~ok).any():
        log.info("[saturation] trajectory: no n and no published SE for %s; left out",
                    sorted(run.loc[~ok, "benchmark"].unique()))
    out = index_arrays(s1, sk, se1, sek, z)
    assumed = run["benchmark"].map(lambda b: bool((n_assumed or {}).get(b, False))).to_numpy()
    res = pd.DataFrame({
        "benchmark": run["benchmark"], "as_of": run["as_of"], "population": run["population"],
        "n_models": run["n_models"], "top_scores": [list(t) for t in tops],
        "top_models": [[str(m) for m in row[:k]] for row in run["top_models"]],
        "top_variants": [[str(v) for v in row[:k]] for row in run["top_variants"]], "s1": s1, "sk": sk, "se_delta": out["se_delta"],
        "r_norm": out["r_norm"], "s_index": out["s_index"], "bin": out["bin"],
        "statistically_similar": out["statistically_similar"], "n_items": n, "k": int(k), "alpha": float(alpha),
        "z": float(z),
        "uncertainty": [uncertainty_label(a, b, c and not (a and b)) for a, b, c in zip(pub1, pubk, assumed)],
    })
    return res[ok].reset_index(drop=True)[REFERENCE_COLUMNS]


# the reference is per benchmark; the trajectory is per table (one per benchmark without a table_id)
REFERENCE_COLUMNS = [c for c in TRAJECTORY_COLUMNS if c != "table_id"]



def plain_list_topk(df: pd.DataFrame, k: int) -> list[tuple[str, pd.Timestamp, list[float]]]:
    """For each benchmark and date: sort the best score of every model seen so far, take k."""
    out = []
    for bench, g in df.groupby("benchmark", sort=True):
        best: dict = {}
        for t, rows in g.sort_values("date", kind="stable").groupby("date", sort=True):
            for m, s in zip(rows["model"], rows["score"]):
                best[m] = max(best.get(m, -np.inf), s)
            out.append((bench, pd.Timestamp(t), sorted(best.values(), reverse=True)[:k]))
    return out


def _history(seed: int, n: int = 3000, n_models: int = 400, n_dates: int = 300, ties: bool = False,
             populations: bool = False, holes: bool = False) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    score = rng.uniform(0, 1, n)
    if ties:                                     # few distinct values: ties everywhere
        score = np.round(score * 8) / 8
    df = pd.DataFrame({"benchmark": rng.choice(["a", "b", "c"], n),
                       "model": rng.integers(0, n_models, n).astype(str), "score": score,
                       "date": pd.Timestamp("2023-01-01") + pd.to_timedelta(rng.integers(0, n_dates, n), unit="D"),
                       "stderr": np.where(rng.random(n) < 0.3, rng.uniform(0.005, 0.03, n), np.nan),
                       "model_raw": [f"raw{i}" for i in range(n)]})
    if populations:
        df["population"] = np.where(rng.random(n) < 0.3, "systems", "models")
        df["underlying"] = np.where(df["population"].eq("systems") & (rng.random(n) < 0.7),
                                    "u" + rng.integers(0, 30, n).astype(str), None)
    if holes:
        df.loc[rng.random(n) < 0.02, "score"] = np.nan
        df.loc[rng.random(n) < 0.02, "date"] = pd.NaT
    return df


CASES = [dict(seed=0), dict(seed=1, ties=True), dict(seed=2, populations=True), dict(seed=3, holes=True),
         dict(seed=4, ties=True, populations=True, holes=True), dict(seed=5, n=200, n_models=30, n_dates=5)]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("k", [2, 5])
def test_running_topk_identical_to_reference(case, k):
    df = _history(**case)
    if "population" in df:
        df = with_populations(df)
    got = running_topk(df, k)
    want = reference_running_topk(df, k)
    assert (got["table_id"] == got["benchmark"]).all()       # no table_id given: one table per benchmark
    pd.testing.assert_frame_equal(got.drop(columns="table_id"), want)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("k", [2, 5])
def test_trajectory_identical_to_reference(case, k):
    df = _history(**case)
    n_items = {"a": 500, "b": None, "c": 80}
    assumed = {"c": True}
    got = saturation_trajectory(df, n_items, k, n_assumed=assumed)
    want = reference_trajectory(df, n_items, k, n_assumed=assumed)
    assert len(got) > 0
    assert (got["table_id"] == got["benchmark"]).all()       # no table_id given: one table per benchmark
    pd.testing.assert_frame_equal(got.drop(columns="table_id"), want)


def test_running_topk_equals_plain_list_definition():
    df = _history(7, n=4000, n_models=600, n_dates=800)
    got = running_topk(df.drop(columns=["stderr"]), 5)
    want = plain_list_topk(df, 5)
    assert [(b, t) for b, t, _ in want] == list(zip(got["benchmark"], got["as_of"]))
    assert [s for _, _, s in want] == got["top_scores"].tolist()


def test_running_topk_empty_and_one_row():
    empty = pd.DataFrame({"benchmark": [], "model": [], "score": [], "date": pd.to_datetime([])})
    assert running_topk(empty, 5).empty
    one = pd.DataFrame({"benchmark": ["a"], "model": ["m"], "score": [0.5], "date": [pd.Timestamp("2024-01-01")]})
    r = running_topk(one, 5)
    assert r["top_scores"].tolist() == [[0.5]] and r["n_models"].tolist() == [1]
    assert saturation_trajectory(one, 100).empty


def test_identify_frame_identical_to_per_row_identify():
    """identify_frame (once per distinct key, broadcast) = identify called on every row."""
    from registry import alias_key
    import scrapers
    from registry.identity import _bare_evidence, identify, identify_frame
    rng = np.random.default_rng(3)
    names = ["gpt-4o", "GPT-4o (high)", "o3", "O3", "claude-3.5-sonnet", "SWE-agent + gpt-4o", "o3 [medium]", "x"]
    n = 400
    rows = pd.DataFrame({"source": rng.choice(["swebench", "aider_polyglot"], n), "benchmark": rng.choice(["b1", "b2"], n),
                         "model_raw": rng.choice(names, n), "model_tag": rng.choice([None, "agent", "model"], n),
                         "snapshot_id": rng.choice([1, 2, np.nan], n)})
    table = {alias_key("gpt-4o"): "gpt-4o", alias_key("o3"): "o3"}
    naming = scrapers.naming_rules()
    got = identify_frame(rows, table, naming)
    snaps = rows["snapshot_id"].fillna(-1)
    evidence = {ctx: _bare_evidence(g) for ctx, g in rows["model_raw"].groupby([rows["source"], snaps], sort=False)}
    want = [identify(naming[s], b, r, t if isinstance(t, str) else None, lambda x: table.get(alias_key(x)), evidence.get((s, sn)))
            for s, b, r, t, sn in zip(rows["source"], rows["benchmark"], rows["model_raw"], rows["model_tag"], snaps)]
    for col in ("model", "variant", "population", "underlying"):
        assert got[col].tolist() == [getattr(i, col) for i in want], col


# --- A2 re-scored entries: the per-series filters of the whole history (quadratic) ----------

from analysis.contamination import Thresholds, a2_snapshot_tests  # noqa: E402
from analysis.contamination.a2 import a2_one  # noqa: E402
from analysis.contamination.base import (Prepared, _a1_pairs_to_skip, prepare, prepare_scores,  # noqa: E402
                                         signal_test, SignalTest)
from analysis.contamination.link import _link_data  # noqa: E402
from analysis.contamination.numerics import _logit  # noqa: E402
from analysis.cutoffs import as_dates, require_columns  # noqa: E402

REF_LOG = logging.getLogger("test.a2")


def reference_a2_snapshot_tests(history: pd.DataFrame, scores: pd.DataFrame, benchmarks: pd.DataFrame, *,
                      slices: pd.DataFrame | None = None, th: Thresholds = Thresholds(),
                      prepared: Prepared | None = None) -> list[SignalTest]:
    """A2 for re-scored entries: the newest change of a (source, benchmark, model, setting) series.

    x_old / x_new are the model's reference-benchmark scores as of each snapshot's time (latest
    score observed by then, any source), so an unchanged model has Δ̂ = 0. Entries whose setting
    (harness, prompt, edit format) differs are different series and never compared.
    """
    require_columns(history, ("snapshot_id", "observed_at", "benchmark", "model", "score"), "score history")
    p = prepared or prepare(scores, benchmarks)
    bench, s, table = p.bench, p.scores, p.table
    h = history.copy()
    h["observed_at"] = as_dates(h["observed_at"], "score history: observed_at")
    hs = prepare_scores(h, bench, "score history", by_setting=True)
    skip = _a1_pairs_to_skip(slices)
    tests = []
    hs = hs.sort_values(["observed_at", "snapshot_id"])
    for (source, b, m, setting), series in hs.groupby(["source", "benchmark", "model", "setting"], sort=True):
        series = series.drop_duplicates("snapshot_id", keep="last")
        if len(series) < 2 or (m, b) in skip:
            continue
        new, old = series.iloc[-1], series.iloc[-2]
        if new["score"] == old["score"]:
            continue
        refs_b = [r for r in bench["reference_benchmarks"].get(b, ()) if r != b]
        asof = {}
        for label, t in (("new", new["observed_at"]), ("old", old["observed_at"])):
            seen = hs[(hs["model"] == m) & hs["benchmark"].isin(refs_b) & (hs["observed_at"] <= t)]
            latest = seen.sort_values(["observed_at", "score"]).groupby("benchmark").tail(1)
            asof[label] = latest.set_index("benchmark")
        both = [r for r in refs_b if r in asof["new"].index and r in asof["old"].index and r in table.score.columns]
        rows = s[(s["source"] == source) & (s["benchmark"] == b)]
        link, why = _link_data(b, rows, table, bench, both, {m}, th)
        if link is None:
            REF_LOG.debug("[contamination] A2 %s/%s %s snapshot jump not tested: %s", source or "-", b, m, why)
            continue
        x = {k: float(_logit(v.loc[both, "score"].to_numpy(float), v.loc[both, "n"].to_numpy(float)).mean())
             for k, v in asof.items()}
        res = a2_one(float(new["score"]), float(new["se"]), float(old["score"]), float(old["se"]),
                     x["new"], x["old"], link, kind="rescore")
        res.update({"kind": "snapshot", "setting": setting, "snapshot_new": int(new["snapshot_id"]),
                    "snapshot_old": int(old["snapshot_id"]), "observed_new": new["observed_at"],
                    "observed_old": old["observed_at"]})
        snaps = set(link.snapshot_ids) | {int(new["snapshot_id"]), int(old["snapshot_id"])}
        tests.append(signal_test("A2", m, b, source, res, snapshot_ids=snaps, detail=f"rescore {setting}".rstrip(),
                                 gate=bool(np.isfinite(res["z"]) and res["z"] >= th.a2_min_z)))
    return tests


def _a2_history(seed: int, n_models: int = 30, n_snaps: int = 6) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """A history of two sources, settings, repeated rows within a snapshot, equal times of two
    snapshots, unchanged and re-scored entries; benchmarks with and without references."""
    rng = np.random.default_rng(seed)
    benches = ["t1", "t2", "r1", "r2", "r3"]
    theta = rng.normal(0, 1, n_models)
    times = pd.to_datetime("2024-01-01") + pd.to_timedelta(np.sort(rng.choice(np.arange(0, 200, 7), n_snaps)), "D")
    frames = []
    for snap in range(n_snaps):
        for src in ("s1", "s2"):
            for b in benches:
                keep = rng.random(n_models) < 0.8
                p = 1 / (1 + np.exp(-(theta + rng.normal(0, 0.05 if snap < n_snaps - 1 else 0.4, n_models))))
                score = np.round(p, 2)              # rounded: many unchanged entries and ties
                frames.append(pd.DataFrame({
                    "source": src, "benchmark": b, "model": [f"m{i}" for i in range(n_models)],
                    "setting": rng.choice(["", "whole", "diff"], n_models), "score": score,
                    "n_items": rng.choice([200, 400, np.nan], n_models), "stderr": np.nan,
                    "metric": rng.choice(["proportion", "proportion", None, "elo"], n_models),
                    "snapshot_id": snap + 1 + (10 if src == "s2" else 0), "observed_at": times[snap]})[keep])
    history = pd.concat(frames, ignore_index=True)
    dup = history.sample(frac=0.1, random_state=seed).assign(score=lambda d: (d["score"] - 0.03).clip(0, 1))
    history = pd.concat([history, dup], ignore_index=True).sample(frac=1.0, random_state=seed)
    last = history["snapshot_id"].isin([n_snaps, n_snaps + 10])
    scores = history[last].drop(columns=["observed_at"])
    benchmarks = pd.DataFrame({"benchmark": benches, "reference_benchmarks": ["r1;r2;r3", "r1", "", "r1", None],
                               "n_items": [300, 300, 300, 300, 300]})
    return history, scores, benchmarks


# The reference is quadratic: the fast lane compares one history of 12 models per benchmark
# (42 tested series); the full suite three seeds at 12 and at the original 30 (130-152 series).
A2_CASES = [(seed, n) if (seed, n) == (0, 12) else pytest.param(seed, n, marks=pytest.mark.slow)
            for n in (12, 30) for seed in (0, 1, 2)]


@pytest.mark.parametrize("seed, n_models", A2_CASES)
def test_a2_snapshot_tests_identical_to_reference(seed, n_models):
    history, scores, benchmarks = _a2_history(seed, n_models=n_models)
    slices = pd.DataFrame({"model": ["m1", "m2"], "benchmark": ["t1", "r1"], "status": ["post", "post"]})
    th = Thresholds(a1_min_ref_models=5)
    got = a2_snapshot_tests(history, scores, benchmarks, slices=slices, th=th)
    want = reference_a2_snapshot_tests(history, scores, benchmarks, slices=slices, th=th)
    assert len(want) > 20                       # the comparison covers many tested series
    assert [(t.source, t.benchmark, t.model, t.detail) for t in got] == \
        [(t.source, t.benchmark, t.model, t.detail) for t in want]
    for g, w in zip(got, want):   # the same numbers; the code adds its inputs' content key (data_hash)
        assert g.evidence.pop("data_hash")
        assert g == w


# --- A1/A2 link data: positional lookups (were .loc / reindex per test) -----------------------

def reference_link_rows(source_rows: pd.DataFrame, table, ref_benchmarks: list[str], exclude: set[str]):
    """The previous label-indexing selection of `_link_data`: its reference models, their score
    and n on b and on the reference benchmarks, and the snapshots of those reference cells."""
    have = table.score.reindex(columns=ref_benchmarks).notna().all(axis=1)
    candidates = source_rows[~source_rows["model"].isin(exclude)]
    refs = [m for m in candidates["model"] if m in have.index and have[m]]
    rows = candidates.set_index("model").loc[refs]
    s_ref = np.column_stack([rows["score"].to_numpy(float), table.score.loc[refs, ref_benchmarks].to_numpy(float)])
    n_ref = np.column_stack([rows["n"].to_numpy(float), table.n.loc[refs, ref_benchmarks].to_numpy(float)])
    snaps = set(rows["snapshot_id"].dropna().astype(int))
    snaps |= {int(v) for v in table.snapshots.loc[refs, ref_benchmarks].stack().dropna()}
    return refs, s_ref, n_ref, tuple(sorted(snaps))


@pytest.mark.parametrize("seed", range(4))
def test_link_data_identical_to_label_indexing(seed):
    from analysis.contamination.link import _x_of
    rng = np.random.default_rng(seed)
    models = [f"m{i}" for i in rng.permutation(40)]
    benches = ["b", "r1", "r2", "r3", "r4"]
    rows = [(m, bb, float(rng.uniform(0.05, 0.95)), int(rng.integers(50, 500)))
            for m in models for bb in benches if rng.uniform() < 0.8]     # holes: models without some scores
    scores = pd.DataFrame(rows, columns=["model", "benchmark", "score", "n_items"]).assign(
        source="s", metric="proportion", snapshot_id=lambda d: d.index + 1)   # a snapshot per cell
    benchmarks = pd.DataFrame({"benchmark": benches, "chance": [0.25, 0.0, 0.1, 0.25, 0.0],
                               "reference_benchmarks": [("r1", "r2", "r3", "r4"), (), (), (), ()]})
    p = prepare(scores, benchmarks)
    table, th = p.table, Thresholds(a1_min_ref_models=3)
    source_rows = p.scores[(p.scores["benchmark"] == "b")]
    for refs_b in (["r1", "r2", "r3", "r4"], ["r3", "r1"], ["r2"], ["r1", "nowhere"]):
        for exclude in (set(), {models[0], models[5]}):
            link, why = _link_data("b", source_rows, table, p.bench, refs_b, exclude, th)
            if "nowhere" in refs_b:
                assert link is None and why.startswith("|M_ref| = 0")
                continue
            refs, s_ref, n_ref, snaps = reference_link_rows(source_rows, table, refs_b, exclude)
            assert link is not None and link.refs == refs and len(refs) >= 3
            np.testing.assert_array_equal(link.s_ref, s_ref)
            np.testing.assert_array_equal(link.n_ref, n_ref)
            assert link.snapshot_ids == snaps
        for m in models[:10] if "nowhere" not in refs_b else ():
            mine = [r for r in refs_b if m in table.score.index and pd.notna(table.score.at[m, r])]
            assert table.scored(m, refs_b) == mine
            if mine:
                want = float(_logit(table.score.loc[m, mine].to_numpy(float), table.n.loc[m, mine].to_numpy(float)).mean())
                assert _x_of(table, m, mine) == want
    assert table.scored("not a model", ["r1"]) == []
    for empty in (source_rows.iloc[:0], source_rows):        # no candidate left: no link, no error
        link, why = _link_data("b", empty, table, p.bench, ["r1"], set(empty["model"]) if len(empty) else set(), th)
        assert link is None and why == "|M_ref| = 0 < 3"


# --- bin stability: the k best of each draw by a partition (was a full sort of every draw) ---

def reference_binomial_top(s: np.ndarray, n: int, k: int, draws: int, seed: int) -> np.ndarray:
    """The previous selection: every draw fully sorted, its first k columns (best first)."""
    rng = np.random.default_rng(seed)
    redrawn = rng.binomial(n, np.clip(s, 0.0, 1.0), size=(draws, len(s))) / n
    return -np.sort(-redrawn, axis=1)[:, :k]


@pytest.mark.parametrize("n_models,n_items", [(5, 40), (6, 50), (300, 30), (2000, 500)])
def test_bin_stability_identical_to_full_sort(n_models, n_items):
    from analysis.saturation import (SATURATION_BINS, bin_index, bin_stability, binomial_se, index_arrays,
                                     saturation_index)
    rng = np.random.default_rng(n_models)
    s = np.round(rng.uniform(0.3, 0.95, n_models), 3)
    s[:3] = s.max()                                   # ties at the top
    seed, k, draws = 7, SATURATION_K, 500
    got = bin_stability(s, n_items, k, seed=seed, draws=draws, prune=False)   # pruning: test_saturation.py
    top = reference_binomial_top(s, n_items, k, draws, seed)
    n_eff = n_items ** SATURATION_ALPHA
    s_star = index_arrays(top[:, 0], top[:, k - 1], binomial_se(top[:, 0], n_eff), binomial_se(top[:, k - 1], n_eff))
    probs = np.bincount(bin_index(s_star["s_index"]), minlength=len(SATURATION_BINS)) / draws
    assert saturation_index(list(s), n_items, k).s_index is not None
    assert got.bin_probs == tuple(float(p) for p in probs)


# --- dated_history: release dates mapped per model (was a Python list over every row) ------

def test_dated_history_release_map_identical():
    from dating_oracle import dated_history
    rng = np.random.default_rng(5)
    n = 500
    models = rng.choice(["a", "b", "c", "d", None], n)
    first = pd.Timestamp("2024-01-01") + pd.to_timedelta(rng.integers(0, 300, n), "D")
    history = pd.DataFrame({"model": models, "evaluated_at": pd.Series(pd.NaT, index=range(n), dtype="datetime64[us]"),
                            "first_observed_at": first.astype("datetime64[us]")})
    history.loc[::7, "evaluated_at"] = pd.Timestamp("2024-03-01")
    claims = pd.DataFrame({"model": ["a", "b", "c"], "release_date": pd.to_datetime(["2024-05-01", "2023-01-01", None]),
                           "knowledge_cutoff": pd.NaT, "provenance": "vendor_doc", "source": "x"})
    got = dated_history(history, claims)
    from analysis.cutoffs import resolve_model_dates
    release_of = {m: d for m, d in resolve_model_dates(claims).set_index("model")["release_date"].items() if pd.notna(d)}
    want = pd.to_datetime(pd.Series([release_of.get(m) for m in history["model"]], index=history.index, dtype="object"),
                          errors="coerce")
    pd.testing.assert_series_equal(got["release_date"], want, check_names=False)
    assert (got["date_source"] == "release_date").sum() > 0
    empty = dated_history(history, claims.iloc[:0])
    assert empty["release_date"].isna().all() and (empty["date_source"] != "release_date").all()


# --- query's table format without pandas: identical to pandas' to_string -------------------

def _pandas_table(con, sql: str, max_rows: int = 200) -> str:
    """The table format of `benchwatch query` through pandas (cli/commands/query.py's fallback)."""
    from cli.commands.query import _neutralised, inert_csv
    df = _neutralised(con.execute(sql).df(), inert_csv)     # formula cells prefixed, as in CSV (issue 24)
    with pd.option_context("display.max_rows", max_rows, "display.max_columns", None,
                           "display.width", 200, "display.max_colwidth", 60):
        return df.to_string(index=False, max_rows=max_rows) if len(df) else "(no rows)"


@pytest.mark.parametrize("seed", range(6))
def test_plain_table_identical_to_pandas(seed):
    import duckdb
    from cli.commands.query import _fetch_table
    rng = np.random.default_rng(seed)
    con = duckdb.connect()
    words = ["", " ", "a", "x y", "long-ish name (variant)", "tab\there", "esc\x1b[31m", "=1+2", "-3", "True"]
    n = int(rng.integers(0, 12))
    cols = {"i": rng.integers(-10**6, 10**6, n).tolist(), "big": rng.integers(0, 2**62, n).tolist(),
            "small": rng.integers(-5, 5, n).tolist(), "t": [words[j] for j in rng.integers(0, len(words), n)],
            "b": rng.random(n).round().astype(bool).tolist()}
    frame = pd.DataFrame(cols).astype({"i": "int32", "small": "int8"})   # noqa: F841 (read by DuckDB)
    con.execute("CREATE TABLE t AS SELECT * FROM frame")
    for sql in ["SELECT * FROM t", "SELECT t AS \"a long column name\", small FROM t",
                "SELECT 1", "SELECT i AS \"x\x07\" FROM t", "SELECT * FROM t WHERE false"]:
        got = _fetch_table(200)(con, sql)
        assert isinstance(got, str), sql
        assert got == _pandas_table(con, sql), sql
    # NULLs, floats, dates and more rows than shown go to pandas
    for sql in ["SELECT NULL::INT AS n", "SELECT 0.5 AS f", "SELECT DATE '2024-01-01' AS d",
                "SELECT * FROM range(300)"]:
        assert not isinstance(_fetch_table(200)(con, sql), str), sql

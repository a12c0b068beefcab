"""The contamination part of `benchwatch analyze` (model dates, post-cutoff slices and scores,
the registered contamination signals), and `benchwatch calibrate`.

Glue only: reads through storage.contamination, statistics in analysis.cutoffs and
analysis.contamination, writes through storage.contamination. The saturation index of the
post-cutoff scope is a relation of its own (jobs/relations/post_cutoff.py), on the slices of `model_slices`.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Callable, Collection, Sequence

import numpy as np
import pandas as pd

from analysis.constants import CALIBRATION_TRIALS
from analysis.constants import SET_CALIBRATED_SIGNALS
from analysis.contamination.set_calibration import item_set_calibrations
from analysis.contamination.suspicions import advance_suspicions
from analysis.cutoffs import benchmark_slices, material_dates_from_items, post_cutoff_scores, resolve_model_dates
from common.time import naive_utc
from storage.engine import duckdb
import analysis.contamination as signal_registry
from analysis.contamination import (LINKED_SIGNALS, Signal, SignalTest, Thresholds, calibrate, prepare_benchmarks,
                                    run as signal_run)
from analysis.contamination.families import previous_tests
from storage import contamination as store, reads

log = logging.getLogger("benchwatch.jobs.contamination")
ANALYSIS_SEED = 0      # the seed of `analyze` (its tests' bootstrap; part of each item set's calibration key)



def with_item_dates(benchmarks: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """Registry benchmarks with the span of their dated items (more precise than a registry date)."""
    out = benchmarks.copy()
    out["material_start"] = pd.Series(pd.NaT, index=out.index, dtype="datetime64[us]")
    out["material_date"] = pd.to_datetime(out["material_date"]).astype("datetime64[us]") \
        if "material_date" in out.columns else out["material_start"]
    if items.empty:
        return out
    spans = material_dates_from_items(items).set_index("benchmark")
    if spans.empty:   # item results without any dated item (e.g. SWE-bench instances): nothing to add
        return out
    spans = spans.astype("datetime64[us]")
    known = out["benchmark"].isin(spans.index)
    for col in ("material_start", "material_date"):
        mapped = pd.Series(spans[col].reindex(out["benchmark"]).to_numpy(), index=out.index, dtype="datetime64[us]")
        out[col] = out[col].where(~known, mapped)
    extra = spans.index.difference(out["benchmark"])
    if len(extra):   # item-level benchmarks the registry does not list yet
        out = pd.concat([out, spans.loc[extra].reset_index()], ignore_index=True)
    return out


_RESOLVED: dict[str, pd.DataFrame] = {}    # the last claims resolved (one analysis resolves them once)


def resolved_dates(claims: pd.DataFrame) -> pd.DataFrame:
    """analysis.cutoffs.resolve_model_dates(claims), computed once for the same claims: the steps
    of one analysis (plan, history dating, slices, post-cutoff scope) all need it."""
    key = hashlib.sha256(pd.util.hash_pandas_object(claims, index=False).to_numpy().tobytes()
                         + ",".join(map(str, claims.columns)).encode()).hexdigest()
    if key not in _RESOLVED:
        _RESOLVED.clear()
        _RESOLVED[key] = resolve_model_dates(claims)
    return _RESOLVED[key].copy()


def latest_scores(con: duckdb.DuckDBPyConnection, benchmarks: list[str] | None,
                  latest: pd.DataFrame | None = None) -> pd.DataFrame:
    """storage.reads.read_latest_scores(con, benchmarks); when the caller has read `latest`, the
    latest scores of every benchmark, its rows of these benchmarks instead (one read serves each
    step of an analysis)."""
    if latest is None:
        return reads.read_latest_scores(con, benchmarks=benchmarks)
    if benchmarks is None:
        return latest.copy(deep=False)
    return latest[latest["benchmark"].isin(benchmarks)].reset_index(drop=True)


def slice_inputs(con: duckdb.DuckDBPyConnection, benchmarks: list[str] | None = None,
                 items: pd.DataFrame | None = None, latest: pd.DataFrame | None = None) -> dict:
    """Latest scores, dated items, resolved model dates and benchmarks (with their items' dates);
    `benchmarks`: only those benchmarks' scores and items; `items`: these instead of reading them
    (an incremental analysis passes the items' dates: storage.contamination.read_item_dates);
    `latest`: the latest scores of every benchmark, read once by the caller (`latest_scores`)."""
    latest = latest_scores(con, benchmarks, latest)
    items = store.read_item_results(con, benchmarks=benchmarks) if items is None else items
    claims = reads.read_model_date_claims(con)
    return {
        "latest": latest, "items": items, "cutoffs": resolved_dates(claims),
        "benchmarks": with_item_dates(reads.read_benchmarks(con).rename(columns={"id": "benchmark"}), items),
    }


def reference_benchmarks(benchmarks: pd.DataFrame) -> list[str]:
    """Every benchmark that is some benchmark's reference (A1/A2 read models' scores on them)."""
    refs = prepare_benchmarks(benchmarks)["reference_benchmarks"]
    return sorted({r for rs in refs for r in rs})


def linked_benchmarks(benchmarks: pd.DataFrame) -> set[str]:
    """Benchmarks A1/A2 read across tables: those with reference benchmarks and the references
    (`benchmarks`: storage.reads.read_benchmarks, or with its `id` named `benchmark`)."""
    prepared = prepare_benchmarks(benchmarks.rename(columns={"id": "benchmark"}))
    refs = {b: set(rs) for b, rs in prepared["reference_benchmarks"].items() if rs}
    return set(refs) | {r for rs in refs.values() for r in rs}


def model_slices(latest: pd.DataFrame, benchmarks: pd.DataFrame, cutoffs: pd.DataFrame, *,
                 guard_days: int) -> pd.DataFrame:
    """Pre/post-cutoff status of every scored (benchmark, model) (analysis.cutoffs.benchmark_slices:
    a status per benchmark and model, so only the scored benchmarks are crossed with the models)."""
    if not len(cutoffs):
        return pd.DataFrame(columns=store.SLICE_COLUMNS)
    scored_pairs = latest[["benchmark", "model"]].drop_duplicates()
    scored = benchmarks[benchmarks["benchmark"].isin(scored_pairs["benchmark"])]
    return benchmark_slices(scored, cutoffs, guard_days=guard_days).merge(scored_pairs, on=["benchmark", "model"],
                                                                           how="inner")


def run_data(con: duckdb.DuckDBPyConnection, *, every_item: bool = True, latest: pd.DataFrame | None = None) -> dict:
    """`slice_inputs` of one run: with every item row (a run that tests every item set), else the
    items' dates only (storage.contamination.read_item_dates: the item sets recomputed read their
    rows, `item_rows`); `latest` as `latest_scores`."""
    if every_item:
        return slice_inputs(con, latest=latest)
    return slice_inputs(con, items=store.read_item_dates(con), latest=latest)


def item_rows(con: duckdb.DuckDBPyConnection, data: dict, sets: set[tuple[str, str]] | None) -> pd.DataFrame:
    """The item rows of the item sets (source, benchmark) `sets` (None: every set, `data`'s items)."""
    if sets is None:
        return data["items"]
    rows = store.read_item_results(con, benchmarks=sorted({b for _, b in sets}))
    return rows[[(s, b) in sets for s, b in zip(rows["source"], rows["benchmark"])]]


def linked_history(con: duckdb.DuckDBPyConnection, data: dict) -> pd.DataFrame:
    """A2's history: the rows it can read of the linked benchmarks only (no other benchmark's
    series can be tested: its test needs reference benchmarks)."""
    return store.read_snapshot_history(con, reference_benchmarks(data["benchmarks"]),
                                       sorted(linked_benchmarks(data["benchmarks"])))


def split_signals(signals: Sequence[Signal]) -> tuple[tuple[Signal, ...], tuple[Signal, ...]]:
    """(the signals tested per item set, the linked ones: analysis.contamination.LINKED_SIGNALS), each
    in the order of `signals`. They share one random stream, item sets first: the registry lists
    A3 (which draws nothing in its tests) before A1 and A2, so the order of draws is the registry's."""
    return (tuple(s for s in signals if s.name not in LINKED_SIGNALS),
            tuple(s for s in signals if s.name in LINKED_SIGNALS))


@dataclass
class TestPart:
    """Some signals' tests of one run (computed, or stored ones standing in), the models they did
    not test (dicts of SKIP_COLUMNS), and for the item sets their post-cutoff scores and the item
    rows they were computed on (`tested`); `stored`: the last run's, standing in."""

    tests: list[SignalTest] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)
    post: pd.DataFrame | None = None
    tested: pd.DataFrame | None = None
    stored: bool = False


def computed_part(con: duckdb.DuckDBPyConnection, signals: Sequence[Signal], data: dict, *,
                  items: pd.DataFrame | None, history: pd.DataFrame | None, rng: np.random.Generator,
                  now: pd.Timestamp, th: Thresholds, holds: dict, predecessors: pd.DataFrame | None) -> TestPart:
    """`signals`' tests computed on `data` (`run_data`) and `items`, drawing from `rng` in their order."""
    inputs = signal_run.signal_inputs(data["latest"], items, data["cutoffs"], data["benchmarks"], rng=rng, now=now,
                                      history=history, predecessors=predecessors, th=th, stored=holds)
    tests = signal_run.signal_tests(inputs, th, signals)
    return TestPart(tests, inputs.skipped)


def post_scores(tested: pd.DataFrame | None, cutoffs: pd.DataFrame, now: pd.Timestamp, th: Thresholds) -> pd.DataFrame:
    """The post-cutoff scores of the item rows `tested`."""
    if tested is None or not len(tested):
        return pd.DataFrame(columns=store.POST_COLUMNS)
    return post_cutoff_scores(tested, cutoffs, now=now, guard_days=th.guard_days)


def stored_part(stored: pd.DataFrame, skips: pd.DataFrame, signals: Sequence[Signal],
                kept: Callable[[str, str], bool], th: Thresholds) -> TestPart:
    """The stored tests and not-tested models (storage.contamination.read_last_run) of `signals`
    whose (source, benchmark) is `kept`, standing in for a recomputation (analysis.contamination.reuse)."""
    from analysis.contamination.reuse import stored_test    # only an analysis that keeps stored tests
    names = {s.name for s in signals}
    out = TestPart(stored=True)
    for frame, into in ((stored, "tests"), (skips, "skipped")):
        if not len(frame):
            continue
        rows = frame[[sig in names and kept(str(s or ""), str(b))
                      for sig, s, b in zip(frame["signal"], frame["source"], frame["benchmark"])]]
        records = rows.to_dict("records")
        getattr(out, into).extend([stored_test(r, th) for r in records] if into == "tests" else records)
    return out


def finish_run(con: duckdb.DuckDBPyConnection, *, now: pd.Timestamp, seed: int, th: Thresholds, data: dict,
               parts: Sequence[TestPart], holds: dict, every_item: bool) -> pd.DataFrame:
    """The run on its signals' tests (`parts`: stored and computed, any order): slices, the
    family-wide BH correction, flags and statuses (analysis.contamination.run.family_results), the
    item sets' calibrations, the suspicion states; stored (storage.contamination.
    store_contamination_run). Returns the signal tests (analysis.contamination.run_signals' frame)."""
    latest, items, cutoffs = data["latest"], data["items"], data["cutoffs"]
    registered = signal_registry.SIGNALS      # read at call time (a test may extend them)
    order = {s.name: i for i, s in enumerate(registered)}
    # per signal in the registry's order, its stored tests before its computed ones
    parts = sorted(parts, key=lambda p: not p.stored)
    tests = sorted((t for p in parts for t in p.tests), key=lambda t: order.get(t.signal, len(order)))
    skipped = sorted((s for p in parts for s in p.skipped), key=lambda s: order.get(s["signal"], len(order)))
    # the post-cutoff scores computed, then those kept
    posts = [p.post for p in sorted(parts, key=lambda p: p.stored) if p.post is not None]
    post = posts[0] if posts else pd.DataFrame(columns=store.POST_COLUMNS)
    for more in posts[1:]:
        post = pd.concat([post, more], ignore_index=True) if len(post) else more if len(more) else post
    tested = next((p.tested for p in parts if p.tested is not None), None)
    # in numpy: one id per stored snapshot, which a history of millions of rows has many of
    snapshot_ids = np.unique(pd.concat([latest["snapshot_id"], items["snapshot_id"]]).dropna()
                             .to_numpy(dtype="int64")).tolist()
    parameters = asdict(th)
    run_id = store.run_key(snapshot_ids, parameters, seed)
    slices = model_slices(latest, data["benchmarks"], cutoffs, guard_days=th.guard_days)
    states = store.read_suspicions(con)
    signals = signal_run.family_results(tests, skipped, previous_tests(store.read_previous_flags(con, run_id)), th,
                                        signals=registered, suspicions=states, stored=holds)
    observed = pd.concat([latest["observed_at"], items["observed_at"]]).dropna()
    as_of = observed.max().tz_localize("UTC").to_pydatetime() if len(observed) else None
    run_at = now.tz_localize("UTC").to_pydatetime()
    test_snaps = {int(s) for ev in signals["evidence"] for s in (ev.get("snapshot_ids") or ())}
    resolved_snaps = {int(s) for v in states["snapshot_ids"] if v for s in v}
    calibration_keys = calibrate_item_sets(con, items=items if every_item else tested, cutoffs=cutoffs,
                                           now=now, seed=seed, th=th, sets=_sets_to_judge(signals, states))
    suspicions = advance_suspicions(signals, states, run_id=run_id, run_at=now,
                                    calibration_keys=calibration_keys,
                                    current_data=current_data(latest, items),
                                    snapshot_dates=store.read_snapshot_dates(
                                        con, sorted(set(snapshot_ids) | test_snaps | resolved_snaps)))
    store.store_contamination_run(con, run_id=run_id, run_at=run_at, as_of=as_of, snapshot_ids=snapshot_ids,
                                  seed=seed, parameters=parameters, cutoffs=cutoffs, slices=slices,
                                  post_scores=post, signals=signals, suspicions=suspicions,
                                  skipped=signals.attrs.get("skipped"))
    moved = suspicions.merge(states[["model", "benchmark", "source", "signal", "detail", "state"]],
                             on=["model", "benchmark", "source", "signal", "detail"], how="left",
                             suffixes=("", "_before"))
    changed = moved[moved["state"] != moved["state_before"]]
    if len(changed):
        log.info("[contamination] suspicions moved: %s", "; ".join(
            f"{r.model}/{r.benchmark} {r.signal} {r.state_before if isinstance(r.state_before, str) else 'new'}"
            f" -> {r.state}" for r in changed.itertuples()))
    return signals


def run_contamination(con: duckdb.DuckDBPyConnection, *, now: datetime | str, seed: int = ANALYSIS_SEED,
                      th: Thresholds = Thresholds(), latest: pd.DataFrame | None = None) -> pd.DataFrame:
    """Resolve model dates, compute post-cutoff slices and every contamination signal on every item
    set and score, store the run: a full analysis' run (`analyze` runs the same pieces as the
    relations item_tests, link_tests and contamination of jobs/relations, which keep the item
    sets and the link whose inputs did not change). `latest`: the latest scores of every
    benchmark when the caller has read them (storage.reads.read_latest_scores). Returns the
    signal tests (analysis.contamination.run_signals' frame)."""
    now_ts = naive_utc(now)
    data = run_data(con, latest=latest)
    holds = previous_tests(store.read_stored_tests(con))
    rng, predecessors = np.random.default_rng(seed), reads.read_predecessors(con)
    by_items, linked = split_signals(signal_registry.SIGNALS)
    item_part = computed_part(con, by_items, data, items=data["items"], history=None, rng=rng, now=now_ts, th=th,
                              holds=holds, predecessors=predecessors)
    item_part.post = post_scores(data["items"], data["cutoffs"], now_ts, th)
    link_part = computed_part(con, linked, data, items=data["items"], history=linked_history(con, data), rng=rng,
                              now=now_ts, th=th, holds=holds, predecessors=predecessors)
    return finish_run(con, now=now_ts, seed=seed, th=th, data=data, parts=(item_part, link_part), holds=holds,
                      every_item=True)


def _sets_to_judge(signals: pd.DataFrame, states: pd.DataFrame) -> set[tuple[str, str]]:
    """The item sets (source, benchmark) that need their calibration key this run although the
    analysis did not recompute them: a set-calibrated signal's flagged test computed anew (not held
    at its stored numbers), or an open suspicion without a key (stored before keys existed)."""
    out: set[tuple[str, str]] = set()
    if len(signals):
        rows = signals[signals["flagged"].astype(bool) & signals["signal"].isin(SET_CALIBRATED_SIGNALS)]
        out |= {(str(r.source or ""), str(r.benchmark)) for r in rows.itertuples()
                if not (r.evidence if isinstance(r.evidence, dict) else {}).get("held")}
    if len(states):
        keyless = states["calibration_key"].isna() if "calibration_key" in states.columns else True
        rows = states[states["state"].ne("resolved") & states["signal"].isin(SET_CALIBRATED_SIGNALS) & keyless]
        out |= {(str(s or ""), str(b)) for s, b in zip(rows["source"], rows["benchmark"])}
    return out


def calibrate_item_sets(con: duckdb.DuckDBPyConnection, *, items: pd.DataFrame | None, cutoffs: pd.DataFrame,
                        now: pd.Timestamp, seed: int, th: Thresholds = Thresholds(),
                        sets: Collection[tuple[str, str]] = (),
                        trials: int = CALIBRATION_TRIALS) -> dict[tuple[str, str, str], str]:
    """Each A3 item set's placebo calibration on its own data (analysis.contamination.set_calibration),
    stored (migration 077) unless its inputs' key is stored already: a snapshot that changes nothing
    the set's placebo reads computes nothing and keeps its verdict. The sets: those of `items` (the
    item results the analysis read) and `sets` (their items read here when `items` lacks them). Returns (signal, source, benchmark) -> the key (advance_suspicions)."""
    frames = [items] if items is not None and len(items) else []
    have = {(str(s or ""), str(b)) for s, b in frames[0][["source", "benchmark"]].drop_duplicates().itertuples(
        index=False)} if frames else set()
    missing = set(sets) - have
    if missing:
        extra = store.read_item_results(con, benchmarks=sorted({b for _, b in missing}))
        frames.append(extra[[(str(s or ""), str(b)) in missing for s, b in zip(extra["source"], extra["benchmark"])]])
    frames = [f for f in frames if len(f)]
    if not frames:
        return {}
    data = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    keys, table = item_set_calibrations(data, cutoffs, now=now, trials=trials, seed=seed, th=th,
                                        known=store.read_set_calibration_keys(con))
    if len(table):
        added = store.store_set_calibrations(con, table, calibrated_at=now.tz_localize("UTC").to_pydatetime())
        log.info("[contamination] item-set calibration(s) computed: %s", "; ".join(
            f"{r.source}/{r.benchmark} ok={r.ok} P(p<.05)={r.p05:.3f}" for r in table.itertuples()))
        log.debug("[contamination] %d item-set calibration(s) stored", added)
    return {("A3", s, b): k for (s, b), k in keys.items()}


def current_data(latest: pd.DataFrame, items: pd.DataFrame) -> dict[tuple[str, str], set[int]]:
    """(source, benchmark) -> the snapshot ids this run read for it (scores and dated items)."""
    out: dict[tuple[str, str], set[int]] = {}
    for frame in (latest, items):
        if frame is None or frame.empty or "snapshot_id" not in frame.columns:
            continue
        pairs = frame[["source", "benchmark", "snapshot_id"]].dropna().drop_duplicates()
        for r in pairs.itertuples(index=False):
            out.setdefault((str(r.source), str(r.benchmark)), set()).add(int(r.snapshot_id))
    return out


def run_calibration(con: duckdb.DuckDBPyConnection, *, now: datetime | str, trials: int = CALIBRATION_TRIALS,
                    seed: int = 0, bootstrap_b: int | None = None, th: Thresholds = Thresholds()) -> pd.DataFrame:
    """Placebo false-flag rate per signal on the database's data (read only)."""
    data = slice_inputs(con)
    return calibrate(data["latest"], data["items"], data["cutoffs"], data["benchmarks"],
                     rng=np.random.default_rng(seed), now=naive_utc(now), trials=trials, th=th,
                     bootstrap_b=bootstrap_b)


def run_set_calibrations(con: duckdb.DuckDBPyConnection, *, now: datetime | str, seed: int = ANALYSIS_SEED,
                         th: Thresholds = Thresholds()) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A3's calibration of every item set as `analyze` judges its flags by (its trials and seed;
    read only): (the current calibration of each set, stored or computed; the rows computed here,
    which the caller may store). A set whose inputs' key is stored is read, not computed again."""
    data = slice_inputs(con)
    try:
        stored = store.read_set_calibrations(con)
    except duckdb.CatalogException:       # a file from before migration 077 (opened read only)
        stored = pd.DataFrame(columns=["signal", "source", "benchmark", "input_key"])
    known = set(zip(stored["signal"], stored["source"], stored["benchmark"], stored["input_key"]))
    keys, fresh = item_set_calibrations(data["items"], data["cutoffs"], now=naive_utc(now), trials=CALIBRATION_TRIALS,
                                        seed=seed, th=th, known=known)
    current = {("A3", s, b, k) for (s, b), k in keys.items()}
    have = stored[[k in current for k in zip(stored["signal"], stored["source"], stored["benchmark"],
                                             stored["input_key"])]]
    both = pd.concat([f for f in (have, fresh) if len(f)], ignore_index=True) if len(have) or len(fresh) else fresh
    return both.sort_values(["source", "benchmark"]).reset_index(drop=True), fresh


def run_power(con: duckdb.DuckDBPyConnection, *, now: datetime | str, trials: int = CALIBRATION_TRIALS,
              seed: int = 0, gains: tuple[float, ...] = (0.10, 0.20), th: Thresholds = Thresholds()) -> pd.DataFrame:
    """A3's power on the database's dated items: gains planted in clean models' pre-cutoff items
    (analysis.contamination.a3_power.a3_power; read only)."""
    from analysis.contamination.a3_power import a3_power   # `calibrate --power` only
    data = slice_inputs(con)
    items = data["items"]
    if items.empty:
        return pd.DataFrame()
    return a3_power(items, data["cutoffs"], rng=np.random.default_rng(seed), now=naive_utc(now), trials=trials,
                    gains=gains, th=th)


def record_calibration(con: duckdb.DuckDBPyConnection, table: pd.DataFrame, *, calibrated_at: datetime | str,
                       seed: int) -> str:
    """Store a calibration result (`run_calibration`'s frame) with the newest observation of the data
    it read: the contamination_suspect rule holds a miscalibrated signal's flags as unconfirmed."""
    at = naive_utc(calibrated_at).tz_localize("UTC").to_pydatetime()
    return store.store_calibration(con, table, calibrated_at=at, seed=seed)

"""The shared pieces of the signals: thresholds, the test record and its one builder, the
plug-in declaration (Signal), the inputs of a run and the one preparation of scores."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, Iterable, Mapping
import hashlib

import numpy as np
import pandas as pd

from analysis.constants import (
    A1_BOOTSTRAP_B,
    A1_ISOTONIC_MIN_REF,
    A1_MIN_REF_MODELS,
    A1_MIN_UNIQUE_RESAMPLED,
    A1_ROBUST_Z,
    A1_ROBUST_Z_MIN_BENCHMARKS,
    A2_MIN_Z,
    A3_MIN_ITEMS_PER_SIDE,
    A3_MIN_REF_MODELS,
    CONTAMINATION_STATUSES,
    FDR_Q,
    FISHER_MIN_EXPECTED,
    GUARD_BAND_DAYS,
    MIN_EFFECT,
    MIN_EFFECT_SE,
)
from analysis.cutoffs import check_proportions, require_columns
from common.naming import POPULATION_MODELS
from common.refs import parse_refs

log = logging.getLogger("benchwatch.analysis.contamination")

STATUSES = CONTAMINATION_STATUSES

RESULT_COLUMNS = ["model", "benchmark", "source", "signal", "detail", "effect", "se", "ci_low", "ci_high",
                  "p_value", "q_value", "flagged", "status", "evidence"]

# a model a signal could not test, and why (SignalInputs.skipped; `contamination_not_tested`)
SKIP_COLUMNS = ["signal", "source", "benchmark", "model", "cutoff", "cutoff_trust", "reason"]

PLACEBO_COLUMNS = ["trial", "signal", "source", "benchmark", "model", "effect", "se", "p_value", "gate"]


@dataclass(frozen=True)


class Thresholds:
    """Every knob of the signals; stored in each test's evidence."""

    min_effect: float = MIN_EFFECT
    min_effect_se: float = MIN_EFFECT_SE
    fdr_q: float = FDR_Q
    guard_days: int = GUARD_BAND_DAYS
    a3_min_items: int = A3_MIN_ITEMS_PER_SIDE
    a3_min_ref_models: int = A3_MIN_REF_MODELS
    fisher_min_expected: float = FISHER_MIN_EXPECTED
    a1_min_ref_models: int = A1_MIN_REF_MODELS
    a1_min_unique: int = A1_MIN_UNIQUE_RESAMPLED
    a1_isotonic_min_ref: int = A1_ISOTONIC_MIN_REF
    bootstrap_b: int = A1_BOOTSTRAP_B
    a1_robust_z: float = A1_ROBUST_Z
    a1_robust_z_min_benchmarks: int = A1_ROBUST_Z_MIN_BENCHMARKS
    a2_min_z: float = A2_MIN_Z
    # A3's null distribution: 'reference_variance' (contest-clustered SE plus the between-model
    # variance the clean references show, normal), 'reference_placebo' (issue 10's test: z scaled
    # by max(1, the references' placebo z scale), t with R df: conservative and weak) or
    # 'item_normal' (the first item-independent z, anti-conservative). The former two are kept
    # to show what `calibrate` says of them.
    a3_null: str = "reference_variance"
    # How A1/A2 use b's chance level: 'floor' (no prediction below chance) or 'anchor' (the
    # former exact point (chance on the references -> chance on b) inside the link; models at
    # chance on a hard reference benchmark but far above chance on b made it predict chance
    # for them: kept to show that `calibrate` catches it).
    chance_link: str = "floor"


@dataclass


class SignalTest:
    """One test before multiplicity control; `gate` is the signal's own extra condition."""

    model: str
    benchmark: str
    source: str
    signal: str
    effect: float
    se: float
    p_value: float
    ci_low: float
    ci_high: float
    snapshot_ids: tuple = ()
    gate: bool = True
    evidence: dict = field(default_factory=dict)
    detail: str = ""       # tells apart two tests of one signal on one (model, benchmark, source)


def data_hash(*parts: Any) -> str:
    """A content key of a test's inputs (its numbers, names and dates, never snapshot ids): two
    snapshots whose rows for the model and its references are identical give the same key, so a
    re-published or re-serialised file is not new evidence (suspicions.py: confirmation, resolution
    and a second firing need new evidence). Arrays by dtype, shape and bytes; the rest by repr."""
    h = hashlib.sha256()
    for part in parts:
        if isinstance(part, (pd.Series, pd.Index)):
            part = part.to_numpy()
        if isinstance(part, np.ndarray):
            a = np.ascontiguousarray(part)
            if a.dtype == object:
                h.update(repr(a.tolist()).encode())
            else:
                h.update(f"{a.dtype}{a.shape}".encode())
                h.update(a.tobytes())
        else:
            h.update(repr(part).encode())
        h.update(b"\x1f")
    return h.hexdigest()[:24]


def signal_test(signal: str, model: str, benchmark: str, source: str, res: dict, *, snapshot_ids: Iterable[int] = (),
                gate: bool = True, detail: str = "") -> SignalTest:
    """The one SignalTest builder: effect, se, p, CI from a signal's result dict, which is also its evidence."""
    return SignalTest(model=model, benchmark=benchmark, source=source, signal=signal, effect=res["effect"],
                      se=res["se"], p_value=res["p_value"], ci_low=res["ci_low"], ci_high=res["ci_high"],
                      snapshot_ids=tuple(sorted(snapshot_ids)), gate=gate, evidence=res, detail=detail)


@dataclass


class SignalInputs:
    """Everything a signal may test on (one analysis run); `prepared` is computed once and
    shared by the score-based signals (A1, A2). `slices`: analysis.cutoffs.benchmark_slices
    (pre/post cutoff per model and benchmark), or None; `slices_from`: what computes them on
    first use (`cutoff_slices`), when given: an incremental analysis that keeps A1 and A2 as
    stored needs none."""

    scores: pd.DataFrame | None
    items: pd.DataFrame | None
    cutoffs: pd.DataFrame
    benchmarks: pd.DataFrame | None
    now: pd.Timestamp
    rng: np.random.Generator
    history: pd.DataFrame | None = None
    predecessors: pd.DataFrame | None = None
    slices: pd.DataFrame | None = None
    slices_from: Callable[[], pd.DataFrame | None] | None = None
    # the stored tests a run may hold, by key (families.previous_tests of the newest stored test of
    # each key): a signal may skip a test `families.holdable` says this run keeps at its stored
    # numbers (A1 does: its bootstrap)
    stored: Mapping[tuple, dict] | None = None
    # models a signal could not test, with the reason (dicts of SKIP_COLUMNS); run_signals
    # returns them as its frame's attrs["skipped"]
    skipped: list[dict] = field(default_factory=list)

    def cutoff_slices(self) -> pd.DataFrame | None:
        """`slices`, computed by `slices_from` on the first call when there is one."""
        if self.slices is None and self.slices_from is not None:
            self.slices, self.slices_from = self.slices_from(), None
        return self.slices

    @property
    def has_scores(self) -> bool:
        return self.scores is not None and not self.scores.empty and self.benchmarks is not None

    @cached_property
    def can_link(self) -> bool:
        """Can A1/A2 test anything: some scored benchmark declares a reference benchmark that has
        scores too. Without one every pair is untestable (no reference), and their preparation
        (`prepared`, the slices, A2's series) would be work for no test."""
        if not self.has_scores:
            return False
        assert self.scores is not None and self.benchmarks is not None
        scored = set(self.scores["benchmark"])
        refs = prepare_benchmarks(self.benchmarks)["reference_benchmarks"]
        return any(b in scored and any(r != b and r in scored for r in rs) for b, rs in refs.items())

    @property
    def has_items(self) -> bool:
        return self.items is not None and not self.items.empty

    @cached_property
    def prepared(self) -> "Prepared":
        assert self.scores is not None and self.benchmarks is not None
        return prepare(self.scores, self.benchmarks)


@dataclass(frozen=True)


class Signal:
    """One contamination signal as a plug-in (listed in `analysis.contamination.SIGNALS`).

    - `name`: the `signal` column of its tests; `family`: its Benjamini–Hochberg family (each
      signal is its own family, so many mostly-null tests of one signal never raise the BH bar
      of another).
    - `floors`: the `Thresholds` fields that are its data floors (documentation and evidence).
    - `tests(inputs, th)`: its tests on one run's data (an empty list when its data are absent).
    - `placebo(inputs, th, trials)`: placebo tests on real data (PLACEBO_COLUMNS), each a false
      positive by construction; signals that draw their placebos together share the same
      function object and `calibrate` calls it once.
    """

    name: str
    tests: Callable[[SignalInputs, Thresholds], list[SignalTest]]
    placebo: Callable[[SignalInputs, Thresholds, int], pd.DataFrame] | None = None
    family: str = ""
    floors: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.family:
            object.__setattr__(self, "family", self.name)
        unknown = set(self.floors) - set(Thresholds.__dataclass_fields__)
        if unknown:
            raise ValueError(f"signal {self.name}: floors {sorted(unknown)} are not Thresholds fields")


@dataclass(frozen=True)


class Prepared:
    """The preparation every score-based signal shares: benchmarks, proportion scores, and the
    model × benchmark table of reference scores."""

    bench: pd.DataFrame
    scores: pd.DataFrame
    table: "_RefTable"

    def reference_benchmarks(self, b: str) -> list[str]:
        """b's reference benchmarks that have scores (b itself excluded)."""
        return [r for r in self.bench["reference_benchmarks"].get(b, ()) if r != b and r in self.table.score.columns]


def prepare(scores: pd.DataFrame, benchmarks: pd.DataFrame) -> Prepared:
    """The one preparation of scores and benchmarks for A1/A2 and their placebos."""
    bench = prepare_benchmarks(benchmarks)
    s = prepare_scores(scores, bench)
    return Prepared(bench, s, _RefTable.build(s))


def prepare_benchmarks(benchmarks: pd.DataFrame) -> pd.DataFrame:
    """benchmark -> reference_benchmarks (tuple), n_items, chance (indexed by benchmark)."""
    require_columns(benchmarks, ("benchmark",), "benchmarks")
    b = benchmarks.drop_duplicates("benchmark").set_index("benchmark")
    out = pd.DataFrame(index=b.index)
    refs = b["reference_benchmarks"] if "reference_benchmarks" in b.columns else pd.Series(None, index=b.index)
    out["reference_benchmarks"] = [parse_refs(v) for v in refs]
    out["n_items"] = pd.to_numeric(b["n_items"], errors="coerce") if "n_items" in b.columns else np.nan
    out["chance"] = pd.to_numeric(b["chance"], errors="coerce") if "chance" in b.columns else np.nan
    return out


def prepare_scores(scores: pd.DataFrame, bench: pd.DataFrame, what: str = "scores", *,
                   by_setting: bool = False) -> pd.DataFrame:
    """Proportion scores, one row per (source, benchmark, model[, snapshot]), with n and SE.

    A model's signals read its own runs: rows of another population (an agent system, which
    τ²-bench names after its model) are left out before the best is chosen (common.naming.ENTITY_KEY).
    Several settings of one model (edit formats, prompts) collapse to the best one, as the
    leaderboards rank them (unless `by_setting`). n = the row's n_items, else the registry's, else s(1-s)/stderr²;
    SE = stderr, else sqrt(s(1-s)/n) (n_eff = n items; docs/statistics.md, "The signals").
    """
    require_columns(scores, ("benchmark", "model", "score"), what)
    s = scores.copy()
    if "source" not in s.columns:
        s["source"] = ""
    if "metric" in s.columns:
        s = s[s["metric"].fillna("proportion") == "proportion"]
    if "population" in s.columns:
        s = s[s["population"].fillna(POPULATION_MODELS).eq(POPULATION_MODELS)]
    s["score"] = pd.to_numeric(s["score"], errors="coerce")
    s = s[s["score"].notna()]
    check_proportions(s["score"], f"{what}: score")
    for col in ("n_items", "stderr"):
        s[col] = pd.to_numeric(s[col], errors="coerce") if col in s.columns else np.nan
    key = ["source", "benchmark", "model"] + (["snapshot_id"] if "snapshot_id" in s.columns else [])
    if by_setting:
        s["setting"] = s["setting"].fillna("") if "setting" in s.columns else ""
        key.append("setting")
    s = s.sort_values("score", ascending=False, kind="stable").drop_duplicates(key)
    n = s["n_items"].astype(float)
    n = n.fillna(s["benchmark"].map(bench["n_items"]).astype(float))
    var = s["score"] * (1 - s["score"])
    from_se = (var / s["stderr"] ** 2).where((s["stderr"] > 0) & (var > 0))
    s["n"] = n.fillna(np.rint(from_se))
    s["se"] = s["stderr"].fillna(np.sqrt(var / s["n"]))
    unknown_n = s["n"].isna()
    if unknown_n.any():
        log.info("[contamination] %d %s row(s) without n_items or stderr are left out of A1/A2, e.g. %s",
                    int(unknown_n.sum()), what, s.loc[unknown_n, ["benchmark", "model"]].head(3).to_dict("records"))
        s = s[~unknown_n]
    return s.reset_index(drop=True)


@dataclass


class _RefTable:
    """Scores of every model on reference benchmarks (mean over sources), with n."""

    score: pd.DataFrame   # model × benchmark
    n: pd.DataFrame
    snapshots: pd.DataFrame  # model × benchmark -> max snapshot id (or NaN)

    @classmethod
    def build(cls, s: pd.DataFrame) -> "_RefTable":
        snap = s["snapshot_id"] if "snapshot_id" in s.columns else pd.Series(np.nan, index=s.index)
        t = s.assign(_snap=snap).groupby(["model", "benchmark"]).agg(
            score=("score", "mean"), n=("n", "max"), snap=("_snap", "max"))
        return cls(t["score"].unstack(), t["n"].unstack(), t["snap"].unstack())

    # Positional lookups: A1 and A2 read a few cells per test, many tests a run, and label indexing
    # (.loc, reindex) does far more work per call than a dict and an array index. The three frames
    # share their axes.
    @cached_property
    def row_of(self) -> dict[Any, int]:
        return {m: i for i, m in enumerate(self.score.index)}

    @cached_property
    def col_of(self) -> dict[Any, int]:
        return {b: j for j, b in enumerate(self.score.columns)}

    @cached_property
    def _arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        assert self.n.index.equals(self.score.index) and self.n.columns.equals(self.score.columns)
        assert self.snapshots.index.equals(self.score.index) and self.snapshots.columns.equals(self.score.columns)
        return (self.score.to_numpy(float), self.n.to_numpy(float), self.snapshots.to_numpy(float))

    def _cols(self, benchmarks: Iterable[Any]) -> np.ndarray:
        return np.fromiter((self.col_of[b] for b in benchmarks), dtype=np.intp)

    def cells(self, models: Iterable[Any], benchmarks: Iterable[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(score, n, snapshot id) of `models` × `benchmarks`, each in the table, as float arrays
        (`score.loc[models, benchmarks]` and the same of n and snapshots)."""
        at = np.ix_(np.fromiter((self.row_of[m] for m in models), dtype=np.intp), self._cols(benchmarks))
        return tuple(a[at] for a in self._arrays)   # type: ignore[return-value]

    def complete(self, models: Iterable[Any], benchmarks: list[Any]) -> np.ndarray:
        """Per model of `models`: whether it is in the table with a score on every one of
        `benchmarks` (each in the table): the reference models A1 and A2 may use."""
        full = ~np.isnan(self._arrays[0][:, self._cols(benchmarks)]).any(axis=1)
        return np.fromiter((m in self.row_of and bool(full[self.row_of[m]]) for m in models), dtype=bool)

    def scored(self, model: Any, benchmarks: list[Any]) -> list[Any]:
        """The `benchmarks` (each in the table) on which `model` has a score, in their order."""
        i = self.row_of.get(model)
        if i is None:
            return []
        values = self._arrays[0][i, self._cols(benchmarks)]
        return [b for b, v in zip(benchmarks, values.tolist()) if not np.isnan(v)]


def _a1_pairs_to_skip(slices: pd.DataFrame | None) -> set[tuple[str, str]]:
    if slices is None or slices.empty:
        return set()
    post = slices[slices["status"] == "post"]
    return set(zip(post["model"], post["benchmark"]))

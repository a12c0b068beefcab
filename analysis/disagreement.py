"""When sources disagree: which gaps between two sources' scores of one model are findings (issue 54).

Input: the rows of the view `source_disagreements` (storage/views/source_disagreements.sql): one
per (model, benchmark, pair of tables), with `diff = score_a - score_b`, `se_diff =
sqrt(se_a² + se_b²)` (conservative: both runs usually share their items) and `z = diff / se_diff`.
Pure: frames in, frames out, no I/O.

1. **Transcription checks** (`kind = 'transcription'`: an Epoch ``*_external`` copy beside the
   board it copies) are not measurements: a copy off its origin by more than rounding
   (`TRANSCRIPTION_TOLERANCE`) is a copying, naming or parsing error. They stay out of 2 and 3.
2. **Systematic offset.** Two tables of one benchmark with different harnesses (prompt, shots,
   scaffold) differ for every model by a shift and a spread of their own. For a pair of tables
   with at least `OFFSET_MIN_PAIRS` compared models it is estimated once, robustly: offset =
   median(diff), its SE = 1.2533 · s / √m with s = max(1.4826 · MAD(diff), median se_diff); the
   harness spread beyond sampling noise τ² = max(0, (1.4826 · MAD)² − median se_diff²). A pair's
   residual is measured against the offset of the *other* pairs (leave-one-out median, so a single
   outlier does not move its own reference): z_resid = (diff − offset₋ᵢ) / √(se_diff² + τ² +
   se(offset₋ᵢ)²). With fewer pairs no offset is estimated: z_resid = z.
3. **False discoveries.** p = two-sided normal p of z_resid. Two pairs are *independent* when they
   share no score row: pairs of different models, or of different benchmarks. The pairs of one
   (benchmark, model) — GPQA Diamond of one model from three sources gives three pairs, each row in
   two of them — are not, so each (benchmark, model) is one unit: its p is the smallest of its pairs'
   Bonferroni-adjusted p (k · p), and Benjamini–Hochberg runs over the units at `DISAGREEMENT_FDR`.
   A pair is a finding when its unit is kept, its own k · p is within the BH cut-off and
   |z_resid| ≥ `DISAGREEMENT_Z`. The offsets are estimated from the same pairs, which BH ignores;
   with the leave-one-out reference and τ in the denominator the residuals are conservative.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.constants import (DISAGREEMENT_FDR, DISAGREEMENT_Z, MAD_TO_SD, MEDIAN_SE_FACTOR, OFFSET_MIN_PAIRS,
                                OFFSET_SIGNIFICANT_SE, TRANSCRIPTION_TOLERANCE)
from analysis.fdr import benjamini_hochberg

__all__ = ["Disagreements", "analyse", "largest", "transcription_tolerance", "PAIR_KEY", "as_rows", "from_rows"]

MEASUREMENT, TRANSCRIPTION = "measurement", "transcription"
PAIR_KEY = ["benchmark", "table_a", "table_b"]      # one pair of tables: where an offset is estimated
UNIT_KEY = ["benchmark", "model"]                    # pairs sharing score rows: one test unit
REQUIRED = ["model", "benchmark", "source_a", "source_b", "score_a", "score_b", "diff", "se_diff", "z", "kind",
            "comparable", "table_a", "table_b", "metric"]
# What `analyse` adds to a compared pair, and to a transcription check (`as_rows` stores them).
PAIR_COLUMNS = ["table_offset", "offset_se", "tau", "offset_pairs", "z_resid", "p", "unit_pairs", "p_unit_adj", "q", "finding"]
CHECK_COLUMNS = ["mismatch"]
OFFSET_COLUMNS = ["benchmark", "table_a", "table_b", "source_a", "source_b", "metric", "n_pairs", "table_offset", "offset_se",
                  "tau", "systematic"]
# A stored row's part of the result (`as_rows`), and its place among that part's rows.
COMPARED, LISTED, CHECKED = "compared", "listed", "transcription"
ROLE, POS = "role", "pos"


@dataclass(frozen=True)
class Disagreements:
    """`pairs`: the compared measurement pairs with table_offset (leave-one-out; 0 with offset_pairs 0
    when the two tables share fewer than OFFSET_MIN_PAIRS models), tau, z_resid, p, q and `finding`;
    `offsets`: one row per pair of tables with enough pairs (table_offset, offset_se, tau, n_pairs,
    systematic); `transcriptions`: the transcription checks with `mismatch`; `listed`: the
    pairs not compared (settings differ, or no standard error)."""

    pairs: pd.DataFrame
    offsets: pd.DataFrame
    transcriptions: pd.DataFrame
    listed: pd.DataFrame
    n_units: int

    @property
    def n_rows(self) -> int:
        """The rows of `source_disagreements` analysed: every pair, compared or not, and every check."""
        return len(self.pairs) + len(self.listed) + len(self.transcriptions)

    def column_values(self, column: str) -> set:
        """The distinct values of a view column over every row analysed."""
        return {v for f in (self.pairs, self.listed, self.transcriptions) if column in f.columns for v in f[column]}

    @property
    def findings(self) -> pd.DataFrame:
        out = self.pairs.loc[self.pairs["finding"].astype(bool)]
        return out.reindex(out["z_resid"].abs().sort_values(ascending=False).index)

    @property
    def mismatches(self) -> pd.DataFrame:
        out = self.transcriptions.loc[self.transcriptions["mismatch"].astype(bool)]
        return out.reindex(out["diff"].abs().sort_values(ascending=False).index)


def transcription_tolerance(metric: str, a: float, b: float) -> float:
    """The largest gap a copy may show from its origin by rounding alone."""
    if metric == "proportion":
        return TRANSCRIPTION_TOLERANCE
    return TRANSCRIPTION_TOLERANCE * max(abs(a), abs(b))


def beyond_rounding(diff: float, metric: str, a: float, b: float) -> bool:
    """A copy's gap from its origin is more than rounding explains. Compared at 9 decimals: binary
    floats make 35.0 % − 34.5 % (0.35 − 0.345) come out above half a point, which it is not."""
    return round(abs(float(diff)), 9) > transcription_tolerance(metric, a, b)


def _median_se(diffs: np.ndarray, se_diff: np.ndarray) -> np.ndarray:
    """SE of the median of each row of `diffs` (2-D: one sample per row): 1.2533 · SD / √n with
    SD = max(1.4826 · MAD, median se_diff) of the row."""
    centre = np.median(diffs, axis=1, keepdims=True)
    mad = np.median(np.abs(diffs - centre), axis=1) * MAD_TO_SD
    sd = np.maximum(mad, np.median(se_diff, axis=1))
    return MEDIAN_SE_FACTOR * sd / math.sqrt(diffs.shape[1])


def _offsets(group: pd.DataFrame, min_pairs: int) -> tuple[dict, pd.DataFrame]:
    diffs = group["diff"].to_numpy(float)
    se = group["se_diff"].to_numpy(float)
    m = len(diffs)
    out = group.copy()
    if m < min_pairs:
        out["table_offset"], out["offset_se"], out["tau"], out["offset_pairs"] = 0.0, 0.0, 0.0, 0
        out["z_resid"] = out["z"].astype(float)
        return {}, out
    mad_sd = float(np.median(np.abs(diffs - np.median(diffs)))) * MAD_TO_SD
    tau = math.sqrt(max(0.0, mad_sd ** 2 - float(np.median(se ** 2))))
    se_all = float(_median_se(diffs[None, :], se[None, :])[0])
    others = ~np.eye(m, dtype=bool)                       # row i: every pair but i (leave one out)
    rest = np.broadcast_to(diffs, (m, m))[others].reshape(m, m - 1)
    rest_se = np.broadcast_to(se, (m, m))[others].reshape(m, m - 1)
    loo, loo_se = np.median(rest, axis=1), _median_se(rest, rest_se)
    out["table_offset"], out["offset_se"], out["tau"], out["offset_pairs"] = loo, loo_se, tau, m
    out["z_resid"] = (diffs - loo) / np.sqrt(se ** 2 + tau ** 2 + loo_se ** 2)
    offset = float(np.median(diffs))
    first = group.iloc[0]
    summary = {"benchmark": first["benchmark"], "table_a": first["table_a"], "table_b": first["table_b"],
               "source_a": first["source_a"], "source_b": first["source_b"], "metric": first["metric"],
               "n_pairs": m, "table_offset": offset, "offset_se": se_all, "tau": tau,
               "systematic": abs(offset) >= OFFSET_SIGNIFICANT_SE * se_all}
    return summary, out


def analyse(frame: pd.DataFrame, *, z_min: float = DISAGREEMENT_Z, fdr: float = DISAGREEMENT_FDR,
            min_pairs: int = OFFSET_MIN_PAIRS) -> Disagreements:
    """The findings among the rows of `source_disagreements` (see the module's docstring)."""
    absent = [c for c in REQUIRED if c not in frame.columns]
    if absent:
        raise ValueError(f"source_disagreements frame lacks column(s) {absent}; it has {list(frame.columns)}")
    rows = frame.copy()
    rows["comparable"] = rows["comparable"].astype(bool)
    trans = rows[rows["kind"] == TRANSCRIPTION].copy()
    trans["mismatch"] = np.array([bool(c) and beyond_rounding(d, str(m), float(a), float(b))
                                  for c, d, m, a, b in zip(trans["comparable"], trans["diff"], trans["metric"],
                                                           trans["score_a"], trans["score_b"])], dtype=bool)
    meas = rows[rows["kind"] == MEASUREMENT]
    ok = meas["comparable"] & meas["z"].notna() & (meas["se_diff"].astype(float) > 0)
    listed, compared = meas[~ok].copy(), meas[ok].copy()

    summaries, parts = [], []
    for _, group in compared.groupby(PAIR_KEY, sort=True):
        summary, part = _offsets(group, min_pairs)
        parts.append(part)
        if summary:
            summaries.append(summary)
    pairs = pd.concat(parts) if parts else compared.assign(table_offset=[], offset_se=[], tau=[], offset_pairs=[],
                                                                        z_resid=[])
    offsets = pd.DataFrame(summaries, columns=OFFSET_COLUMNS)

    z = pairs["z_resid"].to_numpy(float)
    p = np.array([math.erfc(abs(v) / math.sqrt(2.0)) for v in z]) if len(z) else np.array([])
    pairs["p"] = p
    pairs["unit_pairs"] = pairs.groupby(UNIT_KEY)["p"].transform("size") if len(pairs) else []
    pairs["p_unit_adj"] = np.minimum(1.0, pairs["p"] * pairs["unit_pairs"]) if len(pairs) else []
    units = pairs.groupby(UNIT_KEY, sort=True)["p_unit_adj"].min() if len(pairs) else pd.Series(dtype=float)
    q_units = pd.Series(benjamini_hochberg(units.to_numpy()), index=units.index) if len(units) else units
    kept = units[q_units <= fdr]
    cut = float(kept.max()) if len(kept) else -1.0       # the BH cut-off: the largest unit p kept
    if len(pairs):
        keys = pd.MultiIndex.from_frame(pairs[UNIT_KEY])
        pairs["q"] = q_units.reindex(keys).to_numpy(float)
        pairs["finding"] = (pairs["p_unit_adj"] <= cut) & (pairs["z_resid"].abs() >= z_min)
    else:
        pairs["q"], pairs["finding"] = [], []
    return Disagreements(pairs.reset_index(drop=True), offsets, trans.reset_index(drop=True),
                         listed.reset_index(drop=True), int(len(units)))


def largest(result: Disagreements, per_benchmark: int = 3) -> pd.DataFrame:
    """The largest gaps of each benchmark, by |z_resid| (findings first): what status and the report show."""
    pairs = result.pairs
    if pairs.empty:
        return pairs
    ranked = pairs.assign(_abs=pairs["z_resid"].abs()).sort_values(["benchmark", "finding", "_abs"],
                                                                     ascending=[True, False, False])
    return ranked.groupby("benchmark", sort=True).head(per_benchmark).drop(columns="_abs").reset_index(drop=True)


def as_rows(result: Disagreements) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The result as the rows `analyze` stores (storage.disagreements): every row of the view with
    its part (`role`: compared, listed or transcription), its place in that part (`pos`) and what
    the analysis added; and the offsets with their place. `from_rows` gives the result back."""
    parts = [(COMPARED, result.pairs), (LISTED, result.listed), (CHECKED, result.transcriptions)]
    rows = pd.concat([f.assign(**{ROLE: role, POS: np.arange(len(f), dtype=np.int64)}) for role, f in parts],
                     ignore_index=True)
    for column in PAIR_COLUMNS + CHECK_COLUMNS:
        if column not in rows.columns:
            rows[column] = None
    return rows, result.offsets.assign(**{POS: np.arange(len(result.offsets), dtype=np.int64)})


def from_rows(rows: pd.DataFrame, offsets: pd.DataFrame) -> Disagreements:
    """The result `as_rows` laid out, from its stored rows (any order): each part in its own order,
    with the columns `analyse` gives it and their types (a part's columns are NULL in the others)."""
    view = [c for c in rows.columns if c not in {ROLE, POS, *PAIR_COLUMNS, *CHECK_COLUMNS}]

    def part(role: str, extra: list[str]) -> pd.DataFrame:
        out = rows.loc[rows[ROLE] == role].sort_values(POS, kind="stable")[view + extra].reset_index(drop=True)
        return out.astype({"comparable": bool})

    pairs = part(COMPARED, PAIR_COLUMNS).astype({"offset_pairs": np.int64, "unit_pairs": np.int64, "finding": bool})
    checks = part(CHECKED, CHECK_COLUMNS).astype({"mismatch": bool})
    offs = offsets.sort_values(POS, kind="stable")[OFFSET_COLUMNS].reset_index(drop=True)
    offs = offs.astype({"n_pairs": np.int64, "systematic": bool})
    return Disagreements(pairs, offs, checks, part(LISTED, []), int(len(pairs[UNIT_KEY].drop_duplicates())))

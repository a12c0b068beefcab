"""A3 calibrated per item set, on that set's own data (issue 50; docs/statistics.md, "Placebo
calibration", "One calibration per item set"). The signals calibrated this way:
analysis.constants.SET_CALIBRATED_SIGNALS.

A3's tests of one (source, benchmark) item set rest on that set's items and clean models only, so
that is the unit its placebo calibration is judged on: one set's clean models cannot make another
set's flags trustworthy or untrustworthy. Each set's calibration is keyed by a content key of what
its placebo reads (`set_key`: its clean models' item results, its item dates, the thresholds,
trials and seed), and its random draws come from that key: the same inputs give the same verdict,
and a snapshot that changes nothing the placebo reads keeps the stored one (`item_set_calibrations`
computes only the sets whose key is not stored yet). The pass rule is `calibrate`'s
(run.summarize_placebo's `ok`).

Pure: frames in, frames out; randomness only from the keys.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Collection

import numpy as np
import pandas as pd

from analysis.contamination.a3_placebo import placebo_sets, set_placebo
from analysis.contamination.base import PLACEBO_COLUMNS, Thresholds, data_hash
from analysis.contamination.numerics import jsonable
from analysis.contamination.run import summarize_placebo
from analysis.cutoffs import guard

# Part of every key: a change of what the placebo computes makes every stored calibration stale.
SET_PLACEBO_VERSION = "a3-placebo-1"
SET_CALIBRATION_COLUMNS = ["signal", "source", "benchmark", "input_key", "as_of", "trials", "seed", "tests",
                           "units", "p01", "p01_lo", "p01_hi", "p05", "p05_lo", "p05_hi", "fw_bh", "fw_bh_lo",
                           "fw_bh_hi", "fw_rule", "fw_rule_lo", "fw_rule_hi", "ok"]

SetId = tuple[str, str]     # (source, benchmark)


def set_key(source: str, bench: str, matrix: pd.DataFrame, dates: pd.Series, clean: list[str], *, trials: int,
            seed: int, th: Thresholds) -> str:
    """The content key of one item set's placebo: its clean models and their results on the items
    they all have, every item's date (the fake cutoffs are drawn over them), thresholds, trials,
    seed. A new model that is not clean, or a re-published file, leaves it unchanged."""
    cols = sorted(clean)
    rows = matrix[cols].notna().all(axis=1) & dates.notna() if cols else dates.notna() & False
    return data_hash(SET_PLACEBO_VERSION, "A3", source, bench, cols,
                     np.asarray(matrix.index[rows].astype(str), dtype=object),
                     matrix.loc[rows, cols].to_numpy(float),
                     np.sort(dates.dropna().to_numpy("datetime64[ns]")),
                     jsonable(asdict(th)), int(trials), int(seed))


def key_rng(key: str) -> np.random.Generator:
    """The random draws of a set's placebo, from its key alone (same inputs, same draws)."""
    return np.random.default_rng(int(key[:16], 16))


def item_set_calibrations(items: pd.DataFrame, cutoffs: pd.DataFrame, *, now: pd.Timestamp, trials: int, seed: int,
                          th: Thresholds = Thresholds(), known: Collection[tuple[str, str, str, str]] = (),
                          only: Collection[SetId] | None = None) -> tuple[dict[SetId, str], pd.DataFrame]:
    """The calibration key of every A3 item set of `items` (or of the sets `only`), and the
    calibration of each whose (signal, source, benchmark, key) is not in `known` (the stored ones):
    SET_CALIBRATION_COLUMNS, one row per set computed; `tests` 0 and `ok` None when the set allows
    no placebo (too few clean models or dated items)."""
    keys: dict[SetId, str] = {}
    rows = []
    known = set(known)
    for source, bench, matrix, dates, clean in placebo_sets(items, cutoffs, now, guard(th.guard_days)):
        if only is not None and (source, bench) not in only:
            continue
        key = set_key(source, bench, matrix, dates, clean, trials=trials, seed=seed, th=th)
        keys[(source, bench)] = key
        if ("A3", source, bench, key) in known:
            continue
        placebo = set_placebo(source, bench, matrix, dates, clean, rng=key_rng(key), trials=trials, th=th)
        placebo = placebo[placebo["p_value"].notna()] if placebo is not None else pd.DataFrame(columns=PLACEBO_COLUMNS)
        summary = summarize_placebo(placebo, trials, th, signals=["A3"]).iloc[0].to_dict()
        sub = items[(items["source"].fillna("") == (source or "")) & (items["benchmark"] == bench)] \
            if "observed_at" in items.columns else items.iloc[0:0]
        rows.append({**summary, "source": source or "", "benchmark": bench, "input_key": key, "seed": int(seed),
                     "units": len(clean), "tests": int(summary.get("tests") or 0),
                     "as_of": pd.to_datetime(sub["observed_at"]).max() if len(sub) else pd.NaT})
    out = pd.DataFrame(rows, columns=SET_CALIBRATION_COLUMNS)
    out["ok"] = pd.Series([None if v is None or v != v else bool(v) for v in out["ok"]], index=out.index, dtype=object)
    return keys, out

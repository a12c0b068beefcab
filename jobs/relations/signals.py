"""What the contamination relations share (jobs/relations: item_tests, link_tests, contamination):
the run's seed and thresholds, its inputs, its one random stream, the stored tests it may hold and
the last run's tests, each read once per analysis (`Inputs.once`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from analysis.contamination import Thresholds
from analysis.contamination.families import previous_tests
from analysis.contamination.reuse import reusable
from jobs.contamination import ANALYSIS_SEED, run_data
from jobs.relations.base import UNIT_SEP, Inputs
from storage import contamination as store, reads

SEED = ANALYSIS_SEED
TH = Thresholds()       # the analysis' thresholds


def data(inputs: Inputs) -> dict:
    """The run's latest scores, items (every row when every item set is tested, else their
    dates), resolved model dates and benchmarks (jobs.contamination.run_data)."""
    return inputs.once("contamination_data", lambda: run_data(inputs.con, every_item=inputs.plan.full,
                                                              latest=inputs.latest))


def rng(inputs: Inputs) -> np.random.Generator:
    """The run's one random stream: the item-set signals draw first, then A1/A2, as in the registry."""
    return inputs.once("contamination_rng", lambda: np.random.default_rng(SEED))


def holds(inputs: Inputs) -> dict:
    """The newest stored test of each key, the tests this run may hold (families.holdable)."""
    return inputs.once("contamination_holds", lambda: previous_tests(store.read_stored_tests(inputs.con)))


def predecessors(inputs: Inputs) -> pd.DataFrame:
    return inputs.once("contamination_predecessors", lambda: reads.read_predecessors(inputs.con))


def last_run(inputs: Inputs) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The last run's tests and not-tested models (storage.contamination.read_last_run)."""
    return inputs.once("contamination_last_run", lambda: store.read_last_run(inputs.con))


def unusable(inputs: Inputs) -> pd.DataFrame:
    """The last run's tests that cannot stand in for a recomputation (analysis.contamination.reuse.reusable)."""
    stored, _ = last_run(inputs)
    return stored[~reusable(stored)] if len(stored) else stored


def item_set(key: str) -> tuple[str, str]:
    """An item set's unit key as (source, benchmark)."""
    source, bench = key.split(UNIT_SEP, 1)
    return source, bench


def item_key(source: Any, bench: Any) -> str:
    return f"{str(source or '')}{UNIT_SEP}{bench}"

"""A derived relation's declaration, and the inputs one analysis reads once for all of them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable

import pandas as pd

from common.table_ids import table_key
from storage import reads
from storage.engine import duckdb

# A relation's unit: the key its rows are written and kept by.
TABLE = "table"          # a leaderboard table (registry.tables' table_id): its rows replaced per table
ANALYSIS = "analysis"    # the whole analysis as one unit: recomputed when any input changed
EVERY = "every"          # recomputed on every analysis (cheap, and relative to `now`)
ITEM_SET = "item_set"    # an item set the contamination signals test (source UNIT_SEP benchmark of item results)
LINK = "link"            # A1/A2's tests, which read scores across tables: one unit ("")

UNIT_SEP = "\x1f"      # between source and benchmark in an item set's key


@dataclass(frozen=True)
class Relation:
    """One derived relation.

    `compute(inputs, units)` returns its rows for `units` (None: every unit), or None when there
    is nothing to write; `write(inputs, rows, units)` replaces the rows of those units through
    storage (None: `compute` wrote them itself, the remaining hand-written case);
    `to_day(inputs, recomputed)` moves the day-relative columns of the kept units' rows to the
    day of `inputs.now` (None: the relation has none).

    `keep(inputs, recomputed)`, for a relation whose rows a later relation carries into a new run
    (the contamination signals' tests): the stored rows of the units not recomputed (the step puts
    them in `inputs.kept`) and the units whose stored rows cannot stand in for a recomputation,
    which the step recomputes too."""

    name: str
    unit: str
    compute: Callable[[Inputs, frozenset[str] | None], Any]
    write: Callable[[Inputs, Any, frozenset[str] | None], None] | None = None
    to_day: Callable[[Inputs, frozenset[str]], None] | None = None
    keep: Callable[[Inputs, frozenset[str]], tuple[Any, frozenset[str]]] | None = None


class Inputs:
    """What one analysis hands its relations: the connection, `now`, the plan, the frames the
    relations computed so far (`computed`: a relation reads an earlier one's rows, as dbt's
    `ref`), the stored rows of the units they kept (`kept`, `Relation.keep`) and the reads
    several relations share, each read once (`shared`)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, now: datetime, plan: Any) -> None:
        self.con = con
        self.now = now
        self.plan = plan
        self.computed: dict[str, Any] = {}
        self.kept: dict[str, Any] = {}
        self.shared: dict[str, Any] = {}

    def once(self, name: str, read: Callable[[], Any]) -> Any:
        """`read()`'s result, read once per analysis under `name`."""
        if name not in self.shared:
            self.shared[name] = read()
        return self.shared[name]

    def drop(self, name: str) -> None:
        """Forget a shared read no later relation needs (peak memory)."""
        self.shared.pop(name, None)

    @property
    def only(self) -> set[str] | None:
        """The leaderboard tables recomputed (None: every table)."""
        return self.plan.recompute(TABLE)

    @property
    def benchmarks(self) -> list[str] | None:
        """The benchmarks of the tables recomputed (None: every benchmark)."""
        only = self.only
        return None if only is None else sorted({table_key(t).benchmark for t in only})

    @property
    def latest(self) -> pd.DataFrame | None:
        """The latest scores of every benchmark, read once when the analysis recomputes some
        tables only (its steps each read a part); a full analysis lets each step read its own
        and drop it (every table's at once would stay in memory for the whole analysis)."""
        if self.only is None:
            return None
        return self.once("latest", lambda: reads.read_latest_scores(self.con))

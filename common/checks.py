"""The checks a score row must pass before it is stored: declared once, compiled twice.

Each check is a name, a rule (a small boolean expression over the row's columns), the columns
its reject reason is worded from and the wording. `scrapers.base.validate` evaluates the rules
on a DataFrame (`mask`, here: pure pandas); `storage.csv_ingest` compiles the same rules to SQL
(`storage.checks_sql`) for the `csv` source read inside DuckDB. A row is rejected by the first
check that holds, in the order of `SCORE_CHECKS`, with that check's reason: both paths store the
same rows and the same rejects.

A rule reads the row's columns (`SCORE_COLUMNS`) and the inputs each path derives from them
(`DERIVED`: the metric's range, whether the `n_items` cell is a usable count, the cell itself).
Null semantics are the ones both pandas and SQL agree on: a comparison with a missing value is
false; `NotFinite` is false on a missing value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Union

import numpy as np
import pandas as pd

from common.snapshot import MANDATORY_SCORE_COLUMNS, N_ITEMS_MAX
from common.units import METRIC_RANGES

# Inputs each path derives from a row before the checks: the metric's range (`lo`, `hi`; missing
# for an unknown metric), whether the `n_items` cell is not a whole number in [1, N_ITEMS_MAX]
# (`bad_n`; the stored `n_items` is then NULL) and that cell's text (`n_cell`).
DERIVED = ("lo", "hi", "bad_n", "n_cell")


# --- the rule language ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Col:
    name: str


@dataclass(frozen=True)
class Num:
    value: float


@dataclass(frozen=True)
class IsNull:
    arg: Col


@dataclass(frozen=True)
class NotNull:
    arg: Col


@dataclass(frozen=True)
class NotFinite:
    """Present and not a finite number (inf, -inf, NaN written as a value)."""

    arg: Col


@dataclass(frozen=True)
class NotIn:
    arg: Col
    values: tuple[str, ...]


@dataclass(frozen=True)
class Less:
    left: "Value"
    right: "Value"


@dataclass(frozen=True)
class Minus:
    left: "Value"
    right: "Value"


@dataclass(frozen=True)
class AnyOf:
    parts: tuple["Rule", ...]


@dataclass(frozen=True)
class AllOf:
    parts: tuple["Rule", ...]


Value = Union[Col, Num, Minus]
Rule = Union[Col, IsNull, NotNull, NotFinite, NotIn, Less, AnyOf, AllOf]


def any_of(*parts: Rule) -> AnyOf:
    return AnyOf(tuple(parts))


def all_of(*parts: Rule) -> AllOf:
    return AllOf(tuple(parts))


# --- the checks -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Check:
    """One named check: the row is rejected when `rule` holds, with `reason(*args)` (`args`
    evaluated on the row; a fixed reason when `args` is empty)."""

    name: str
    rule: Rule
    reason: Callable[..., str]
    args: tuple[Rule | Value, ...] = ()


@dataclass(frozen=True)
class UniqueKey:
    """The rows of one response are unique by `key`: a second row is rejected (the first kept)."""

    name: str
    key: tuple[str, ...]
    reason: str


# The reasons, worded once (also for a parser that rejects rows itself, `csv`).
def reason_missing(columns: Iterable[str]) -> str:
    return "missing mandatory field(s): " + ", ".join(columns)


def reason_unknown_metric(metric: str) -> str:
    return f"unknown metric kind {metric!r}"


def reason_out_of_range(score: float, metric: str) -> str:
    return f"score {score!r} outside the range of metric {metric!r} {METRIC_RANGES[metric]}"


def reason_bad_n_items(value: str) -> str:
    return f"n_items {value} is not a whole number in [1, {N_ITEMS_MAX}]"


def reason_bad_stderr(value: float) -> str:
    return f"stderr {value!r} is negative, not finite or wider than its metric's range"


REASON_BAD_CI = "CI bound not finite"


def reason_ci_excludes_score(score: object, low: object, high: object) -> str:
    def shown(v: object) -> str:     # one bound may be missing (the other excludes the score)
        return "missing" if v is None or v != v else repr(float(v))  # type: ignore[arg-type]
    return f"CI [{shown(low)}, {shown(high)}] does not contain the score {shown(score)}"
REASON_PERCENT_IN_PROPORTIONS = "a cell written with '%' in a column whose other values are proportions (0-1)"
REASON_DUPLICATE = "duplicate (benchmark, model, setting) in one response; first row kept"


def _missing_reason(*flags: bool) -> str:
    return reason_missing(c for c, missing in zip(MANDATORY_SCORE_COLUMNS, flags) if missing)


score, stderr, lo, hi = Col("score"), Col("stderr"), Col("lo"), Col("hi")

# In the order a row is checked (it gets the first reason that applies).
SCORE_CHECKS: tuple[Check, ...] = (
    Check("missing", any_of(*(IsNull(Col(c)) for c in MANDATORY_SCORE_COLUMNS)), _missing_reason,
          tuple(IsNull(Col(c)) for c in MANDATORY_SCORE_COLUMNS)),
    Check("unknown_metric", NotIn(Col("metric"), tuple(METRIC_RANGES)), lambda m: reason_unknown_metric(m),
          (Col("metric"),)),
    Check("out_of_range", any_of(Less(score, lo), Less(hi, score), NotFinite(score)),
          lambda s, m: reason_out_of_range(float(s), m), (score, Col("metric"))),
    Check("bad_n_items", Col("bad_n"), lambda cell: reason_bad_n_items(str(cell)), (Col("n_cell"),)),
    # a standard error wider than the metric's whole range (1e308 for a proportion) says nothing
    Check("bad_stderr", all_of(NotNull(stderr), any_of(Less(stderr, Num(0)), NotFinite(stderr),
                                                      Less(Minus(hi, lo), stderr))),
          lambda se: reason_bad_stderr(float(se)), (stderr,)),
    Check("bad_ci", any_of(NotFinite(Col("ci_low")), NotFinite(Col("ci_high"))), lambda: REASON_BAD_CI),
    # an interval is around its estimate: one that excludes it (or is inverted) is a misread column
    Check("ci_excludes_score", any_of(Less(score, Col("ci_low")), Less(Col("ci_high"), score)),
          reason_ci_excludes_score,
          (score, Col("ci_low"), Col("ci_high"))),
)
SCORE_UNIQUE = UniqueKey("duplicate", ("benchmark", "model", "setting", "table_version"), REASON_DUPLICATE)


def bad_counts(values: pd.Series) -> pd.Series:
    """Non-missing `n_items` cells that are not a whole number in [1, N_ITEMS_MAX] (the DB column is INTEGER)."""
    present = values.notna() & ~values.map(lambda v: isinstance(v, str) and not v.strip())
    n = pd.to_numeric(values, errors="coerce").astype("float64")
    ok = np.isfinite(n) & (n >= 1) & (n <= N_ITEMS_MAX) & (np.floor(n) == n)
    return present & ~ok


def reject_rows_json(rows: pd.DataFrame) -> list[str]:
    """The `rejects.row_json` of conformed score rows: one JSON object per row (pandas' writer)."""
    shown = rows.drop(columns=[c for c in rows.columns if c.startswith("_")])
    return shown.to_json(orient="records", lines=True, date_format="iso").splitlines()


def json_fragments(values: pd.Series) -> list[str]:
    """Each value as `reject_rows_json` writes it inside a row (the same writer on a column of the
    same dtype), for callers that assemble the row JSON themselves."""
    if not len(values):
        return []
    lines = values.to_frame("v").to_json(orient="records", lines=True, date_format="iso").splitlines()
    return [line[len('{"v":'):-1] for line in lines]


# --- the pandas compilation -----------------------------------------------------------------------

def evaluate(expr: Rule | Value, frame: pd.DataFrame, columns: dict[str, str] | None = None) -> pd.Series:
    """`expr` on every row of `frame` (`columns` renames a declared column to the frame's)."""
    def col(c: Col) -> pd.Series:
        return frame[(columns or {}).get(c.name, c.name)]

    def ev(e) -> pd.Series:
        if isinstance(e, Col):
            return col(e)
        if isinstance(e, Num):
            return pd.Series(float(e.value), index=frame.index)
        if isinstance(e, IsNull):
            return col(e.arg).isna()
        if isinstance(e, NotNull):
            return col(e.arg).notna()
        if isinstance(e, NotFinite):
            v = col(e.arg)
            return v.notna() & ~np.isfinite(v.astype("float64"))
        if isinstance(e, NotIn):
            return ~col(e.arg).isin(list(e.values))
        if isinstance(e, Less):
            return (ev(e.left) < ev(e.right)).fillna(False).astype(bool)
        if isinstance(e, Minus):
            return ev(e.left) - ev(e.right)
        if isinstance(e, AnyOf):
            out = pd.Series(False, index=frame.index)
            for p in e.parts:
                out |= ev(p).astype(bool)
            return out
        if isinstance(e, AllOf):
            out = pd.Series(True, index=frame.index)
            for p in e.parts:
                out &= ev(p).astype(bool)
            return out
        raise TypeError(f"not a check expression: {e!r}")

    return ev(expr)


def mask(check: Check, frame: pd.DataFrame, columns: dict[str, str] | None = None) -> pd.Series:
    """The rows of `frame` that `check` rejects."""
    return evaluate(check.rule, frame, columns).astype(bool)


def reasons(check: Check, rows: pd.DataFrame, columns: dict[str, str] | None = None) -> list[str]:
    """`check`'s reason for each of `rows` (the rows it rejects)."""
    if not check.args:
        return [check.reason()] * len(rows)
    values = [evaluate(a, rows, columns).tolist() for a in check.args]
    return [check.reason(*vs) for vs in zip(*values)]

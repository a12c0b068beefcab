"""The declared score checks (`common.checks`) compiled to SQL, for the CSV ingest inside DuckDB.

`scrapers.base.validate` evaluates the same declarations on a DataFrame; this module writes them
as SQL expressions over a table whose columns carry the declared names (`SCORE_COLUMNS` and
`common.checks.DERIVED`). A declared column the table lacks (the `csv` source has no CI columns)
is NULL, so a rule on it never holds, as on the pandas path where that column is all missing.
"""

from __future__ import annotations

from typing import Collection

import pandas as pd

from common.checks import (SCORE_CHECKS, AllOf, AnyOf, Check, Col, IsNull, Less, Minus, NotFinite, NotIn, NotNull,
                           Num, Rule, Value)
from storage.db import quote_ident
from storage.engine import duckdb

# Stage codes of a staged row: 0 kept, 1 a parser's own reject before the checks (the csv
# source's '%' cell among proportions), then one per declared check in order, the duplicate last.
PARSER_STAGE = 1
FIRST_CHECK_STAGE = 2
CHECK_STAGES: dict[str, int] = {c.name: FIRST_CHECK_STAGE + i for i, c in enumerate(SCORE_CHECKS)}
DUPLICATE_STAGE = FIRST_CHECK_STAGE + len(SCORE_CHECKS)
# Keys k0… of a rejected row: the text of the values its check's reason is worded from.
N_REASON_KEYS = max(len(c.args) for c in SCORE_CHECKS)


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def to_sql(expr: Rule | Value, columns: Collection[str]) -> str:
    """`expr` as a SQL expression over a table with `columns` (any other declared column is NULL)."""
    def col(c: Col) -> str:
        return quote_ident(c.name) if c.name in columns else "NULL"

    def sql(e) -> str:
        if isinstance(e, Col):
            return col(e)
        if isinstance(e, Num):
            return f"{float(e.value)!r}::DOUBLE"
        if isinstance(e, IsNull):
            return f"({col(e.arg)} IS NULL)"
        if isinstance(e, NotNull):
            return f"({col(e.arg)} IS NOT NULL)"
        if isinstance(e, NotFinite):
            v = col(e.arg)
            return "false" if v == "NULL" else f"({v} IS NOT NULL AND NOT isfinite({v}))"
        if isinstance(e, NotIn):
            return f"({col(e.arg)} NOT IN ({', '.join(_literal(v) for v in e.values)}))"
        if isinstance(e, Less):
            return f"({sql(e.left)} < {sql(e.right)})"
        if isinstance(e, Minus):
            return f"({sql(e.left)} - {sql(e.right)})"
        if isinstance(e, AnyOf):
            return "(" + " OR ".join(sql(p) for p in e.parts) + ")"
        if isinstance(e, AllOf):
            return "(" + " AND ".join(sql(p) for p in e.parts) + ")"
        raise TypeError(f"not a check expression: {e!r}")

    return sql(expr)


def first_stage(columns: Collection[str]) -> str:
    """A CASE giving each row the stage of the first declared check that rejects it (0: none)."""
    whens = " ".join(f"WHEN {to_sql(c.rule, columns)} THEN {CHECK_STAGES[c.name]}" for c in SCORE_CHECKS)
    return f"CASE {whens} ELSE 0 END"


def reason_args(check: Check, columns: Collection[str]) -> list[str]:
    """The SQL of the values `check`'s reason is worded from."""
    return [to_sql(a, columns) for a in check.args]


def reason_keys(columns: Collection[str]) -> list[str]:
    """`CASE stage … END AS k<i>`: per row, the text of the i-th value its check's reason reads."""
    out = []
    for i in range(N_REASON_KEYS):
        whens = [f"WHEN {CHECK_STAGES[c.name]} THEN CAST({args[i]} AS VARCHAR)"
                 for c in SCORE_CHECKS if len(args := reason_args(c, columns)) > i]
        out.append(f"CASE stage {' '.join(whens)} END AS k{i}")
    return out


def reason_frame(con: duckdb.DuckDBPyConnection, rejected: str, columns: Collection[str]) -> pd.DataFrame:
    """(stage, k0…, reason) for each declared check and each distinct tuple of the values its
    reason is worded from among the rows of the table `rejected` (columns `stage`, the declared
    ones it has and `reason_keys`), worded by the check itself: one call per distinct tuple."""
    rows: list[tuple] = []
    for check in SCORE_CHECKS:
        stage = CHECK_STAGES[check.name]
        args = reason_args(check, columns)
        if not args:
            hit = con.execute(f"SELECT EXISTS (SELECT 1 FROM {quote_ident(rejected)} WHERE stage = {stage})").fetchone()
            if hit and hit[0]:
                rows.append((stage, *[None] * N_REASON_KEYS, check.reason()))
            continue
        select = ", ".join(args + [f"k{i}" for i in range(len(args))])
        for found in con.execute(f"SELECT DISTINCT {select} FROM {quote_ident(rejected)} WHERE stage = {stage}").fetchall():
            values, keys = found[:len(args)], found[len(args):]
            rows.append((stage, *keys, *[None] * (N_REASON_KEYS - len(args)), check.reason(*values)))
    return pd.DataFrame({"stage": pd.Series([r[0] for r in rows], dtype="int64"),
                         **{f"k{i}": pd.Series([r[1 + i] for r in rows], dtype="object") for i in range(N_REASON_KEYS)},
                         "reason": pd.Series([r[-1] for r in rows], dtype="object")})

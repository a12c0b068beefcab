"""The score checks declared once (common/checks.py) and compiled twice: the pandas masks of
`scrapers.base.validate` and the SQL of the CSV ingest (storage/checks_sql.py) give every row the
same first failing check and the same reason."""

from __future__ import annotations

import math

import duckdb
import numpy as np
import pandas as pd
import pytest

from common.checks import SCORE_CHECKS, AnyOf, Check, Col, Less, Num, mask, reasons
from storage.checks_sql import CHECK_STAGES, first_stage, reason_args, to_sql

INF, NAN = math.inf, math.nan
ROWS = pd.DataFrame({
    "benchmark": ["b", None, "b", "b", "b", "b", "b", "b", "b", "b", "b"],
    "model":     ["m", "m", None, "m", "m", "m", "m", "m", "m", "m", "m"],
    "score":     [0.5, 0.5, NAN, 0.5, 1.5, INF, -0.0, 0.5, 0.5, 0.5, 0.5],
    "metric":    ["proportion"] * 3 + ["stars", "proportion", "proportion", "proportion", "proportion",
                                       "proportion", "proportion", "elo"],
    "stderr":    [0.01, NAN, NAN, NAN, NAN, NAN, NAN, NAN, -1.0, 2.0, INF],
    "bad_n":     [False] * 7 + [True, False, False, False],
    "n_cell":    [None] * 7 + ["1.5", None, None, None],
})
ROWS["lo"] = ROWS["metric"].map(lambda m: {"proportion": 0.0, "elo": 0.0}.get(m, NAN))
ROWS["hi"] = ROWS["metric"].map(lambda m: {"proportion": 1.0, "elo": 5000.0}.get(m, NAN))
WANT = [0, 2, 2, 3, 4, 4, 0, 5, 6, 6, 6]   # 2 missing, 3 unknown metric, 4 out of range, 5 n_items, 6 stderr


def pandas_stages(frame: pd.DataFrame) -> list[int]:
    stage = pd.Series(0, index=frame.index)
    for check in SCORE_CHECKS:
        hit = mask(check, frame.assign(ci_low=NAN, ci_high=NAN)) & (stage == 0)
        stage[hit] = CHECK_STAGES[check.name]
    return stage.tolist()


def sql_stages(frame: pd.DataFrame) -> list[int]:
    con = duckdb.connect()
    con.register("rows_view", frame)
    con.execute("CREATE TABLE t AS SELECT row_number() OVER () AS rn, * FROM rows_view")
    return [r[0] for r in con.execute(f"SELECT {first_stage(set(frame.columns))} FROM t ORDER BY rn").fetchall()]


def test_both_compilations_give_each_row_the_same_first_failing_check():
    assert pandas_stages(ROWS) == WANT
    assert sql_stages(ROWS) == WANT


def test_both_compilations_word_the_same_reasons():
    con = duckdb.connect()
    con.register("rows_view", ROWS)
    for check, stage in ((c, CHECK_STAGES[c.name]) for c in SCORE_CHECKS):
        idx = [i for i, s in enumerate(WANT) if s == stage]
        if not idx:
            continue
        rows = ROWS.iloc[idx]
        args = reason_args(check, set(ROWS.columns))
        fetched = con.execute(f"SELECT {', '.join(args) or 'NULL'} FROM rows_view").fetchall()
        via_sql = [check.reason(*fetched[i][:len(args)]) for i in idx]
        assert reasons(check, rows) == via_sql, check.name


def test_a_declared_column_the_table_lacks_is_null_in_sql():
    """The csv source has no CI columns: their check compiles to a rule that never holds."""
    ci = next(c for c in SCORE_CHECKS if c.name == "bad_ci")
    assert to_sql(ci.rule, {"score"}) == "(false OR false)"
    assert "isfinite" in to_sql(ci.rule, {"ci_low", "ci_high"})


@pytest.mark.parametrize("value, holds", [(0.2, False), (0.7, True), (NAN, False)])
def test_a_new_check_is_one_declaration_for_both_paths(value, holds):
    """A toy check (scores above a cap) needs no code in either path: the same declaration masks a
    frame and compiles to SQL with the same answer."""
    toy = Check("over_cap", AnyOf((Less(Num(0.6), Col("score")),)), lambda: "over the cap")
    frame = pd.DataFrame({"score": [value]})
    con = duckdb.connect()
    con.register("f", frame)
    got_sql = con.execute(f"SELECT coalesce({to_sql(toy.rule, {'score'})}, false) FROM f").fetchone()[0]
    assert bool(mask(toy, frame).iloc[0]) is holds and bool(got_sql) is holds
    assert reasons(toy, frame) == ["over the cap"]

"""The `csv` source's cells read once per distinct value (storage/csv_ingest.py's first step):
what depends on a cell's text in Python terms (names, metric kinds, dates, numbers that are not
plain decimals, counts) is computed by the source's own reading (`CsvReading`, handed down by the
job: storage never imports scrapers) on the distinct cells, kept in small temporary tables, and
joined back to every data line in one view (`cell_tables`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Protocol

import numpy as np
import pandas as pd

from storage.db import quote_ident, registered_frame
from storage.engine import duckdb

class CsvReading(Protocol):
    """How the `csv` source reads its cells, handed down by the job with the file's header layout
    (`scrapers.csv.CsvLayout`; storage never imports scrapers): the source's own functions,
    applied here once per distinct cell."""

    @property
    def n_cells(self) -> int: ...
    @property
    def columns(self) -> dict[str, int]: ...
    DATE_COLUMNS: ClassVar[tuple[str, ...]]
    PLAIN_DECIMAL: ClassVar[str]
    PLAIN_DECIMAL_MAX_LEN: ClassVar[int]
    PLAIN_COUNT: ClassVar[str]

    def name_table(self, cells: pd.Series) -> pd.DataFrame: ...
    def setting_table(self, cells: pd.Series) -> pd.DataFrame: ...
    def metric_table(self, cells: pd.Series) -> pd.DataFrame: ...
    def date_table(self, cells: pd.Series) -> pd.DataFrame: ...
    def count_table(self, cells: pd.Series) -> pd.DataFrame: ...
    def score_numbers(self, cells: pd.Series) -> pd.Series: ...
    def stderr_numbers(self, cells: pd.Series) -> pd.Series: ...


def temp_table(con: duckdb.DuckDBPyConnection, name: str, frame: pd.DataFrame) -> None:
    """A small per-distinct-cell frame as a temporary table; text columns typed VARCHAR even when
    the frame is empty (an empty object column would otherwise come in as an integer)."""
    cols = ", ".join(f"CAST({quote_ident(c)} AS VARCHAR) AS {quote_ident(c)}"
                     if frame[c].dtype == object or pd.api.types.is_string_dtype(frame[c].dtype) else quote_ident(c)
                     for c in frame.columns)
    with registered_frame(con, frame) as rel:
        con.execute(f"CREATE OR REPLACE TEMP TABLE {quote_ident(name)} AS SELECT {cols} FROM {rel}")


def one_row(con: duckdb.DuckDBPyConnection, sql: str) -> tuple:
    """The one row of an aggregate query."""
    row = con.execute(sql).fetchone()
    assert row is not None
    return row


def distinct_cells(con: duckdb.DuckDBPyConnection, sql: str) -> pd.Series:
    cells = con.execute(sql).fetchnumpy()["cell"]
    return pd.Series(np.asarray(cells, dtype=object), dtype="object")


def with_ids(frame: pd.DataFrame, value: str, id_column: str) -> pd.DataFrame:
    """`frame` with an integer id per distinct `value` (NULL where the value is missing): rows are
    keyed and compared by these ids, not by their text."""
    codes = pd.factorize(frame[value])[0]
    frame[id_column] = pd.array(np.where(codes < 0, None, codes), dtype="Int64")
    return frame


def cell_tables(con: duckdb.DuckDBPyConnection, col: dict[str, str], reading: CsvReading) -> "Lines":
    """_bw_csv_rows (a view): one row per data line with the values `parse` gives its cells, joined
    from the tables of distinct cells; how to build such a view over some of the lines."""
    def distinct(expr: str, where: str = "true") -> pd.Series:
        return distinct_cells(con, f"SELECT DISTINCT {expr} AS cell FROM _bw_csv_raw r WHERE {where}")

    names = pd.unique(pd.concat([distinct(col["benchmark"]), distinct(col["model"])], ignore_index=True))
    temp_table(con, "_bw_csv_names", with_ids(reading.name_table(pd.Series(names, dtype="object")),
                                                "name", "name_id"))
    select = {"rn": "r.rn", "benchmark": "nb.name", "b_id": "nb.name_id", "model": "nm.name", "m_id": "nm.name_id",
              "raw_value": col["score"], "sign": f"contains({col['score']}, '%')"}
    joins = [f"LEFT JOIN _bw_csv_names nb ON nb.cell = {col['benchmark']}",
             f"LEFT JOIN _bw_csv_names nm ON nm.cell = {col['model']}"]
    if "setting" in col:
        temp_table(con, "_bw_csv_settings", with_ids(reading.setting_table(distinct(col["setting"])),
                                                       "setting", "s_id"))
        select.update({"setting": "st.setting", "s_id": "st.s_id"})
        joins.append(f"LEFT JOIN _bw_csv_settings st ON st.cell = {col['setting']}")
    else:
        select.update({"setting": "''", "s_id": "0"})
    metric_cell = col.get("metric", "''")
    temp_table(con, "_bw_csv_metrics", reading.metric_table(distinct(metric_cell)))
    select.update({c: f"mt.{c}" for c in ("metric", "accuracy", "undeclared", "declared_percent", "lo", "hi",
                                          "unknown_reason")})
    joins.append(f"LEFT JOIN _bw_csv_metrics mt ON mt.cell = {metric_cell}")
    dates = [c for c in reading.DATE_COLUMNS if c in col]
    if dates:
        cells = pd.unique(pd.concat([distinct(col[c]) for c in dates], ignore_index=True))
        temp_table(con, "_bw_csv_dates", reading.date_table(pd.Series(cells, dtype="object")))

    def odd_cells(cell: str, plain) -> pd.Series:
        """The distinct cells of a column that `plain` (SQL of a cell's text) does not accept: the
        pattern runs once per distinct cell, not per line (a filter on a DISTINCT column would be
        pushed below it, into the scan; one on an aggregate's result is not)."""
        return odd_and_signed(cell, plain, signs=False)[0]

    def odd_and_signed(cell: str, plain, signs: bool) -> tuple[pd.Series, bool]:
        """`odd_cells`, and (`signs`) whether any cell of the column contains a '%'."""
        found = con.execute(f"""SELECT cell, NOT {plain('cell')} AS odd
                                FROM (SELECT any_value({cell}) AS cell FROM _bw_csv_raw r GROUP BY {cell})
                                WHERE NOT {plain('cell')} {"OR contains(cell, '%')" if signs else ""}""").fetchnumpy()
        cells = np.asarray(found["cell"], dtype=object)     # every cell with a '%' is among them (signs)
        return (pd.Series(cells[np.asarray(found["odd"], dtype=bool)], dtype="object"),
                signs and any("%" in c for c in cells))

    def number(name: str, cell: str, core, table: str, values, signs: bool = False) -> str:
        """A plain decimal is cast by DuckDB; any other text is looked up in the table of its distinct
        cells read by `values` (the scraper's own reading): a line whose cell is in that table is
        one of them. `signs`: a column whose cells may end in '%' (`core` strips it); when none
        contains one, its lines are neither stripped nor searched for one (select["sign"])."""
        def plain(c: str) -> str:
            return (f"(regexp_full_match({core(c)}, '{reading.PLAIN_DECIMAL}') "
                    f"AND length({core(c)}) <= {reading.PLAIN_DECIMAL_MAX_LEN})")
        odd, signed = odd_and_signed(cell, plain, signs)
        if signs and not signed:      # rtrim(cell, '%') = cell and no '%' on any line
            select["sign"] = "false"
            core = lambda c: c      # noqa: E731
        if odd.empty:
            return f"CAST({core(cell)} AS DOUBLE)"
        temp_table(con, table, pd.DataFrame({"cell": odd, "value": values(odd)}))
        joins.append(f"LEFT JOIN {table} {name} ON {name}.cell = {cell}")
        return f"CASE WHEN {name}.cell IS NULL THEN CAST({core(cell)} AS DOUBLE) ELSE {name}.value END"

    select["x"] = number("sn", col["score"], lambda c: f"rtrim({c}, '%')", "_bw_csv_scorenum", reading.score_numbers,
                         signs=True)
    select["se"] = (number("se", col["stderr"], lambda c: c, "_bw_csv_senum", reading.stderr_numbers)
                    if "stderr" in col else "NULL::DOUBLE")
    if "n_items" in col:
        odd = odd_cells(col["n_items"], lambda c: f"regexp_full_match({c}, '{reading.PLAIN_COUNT}')")
        count = f"CAST({col['n_items']} AS INTEGER)"
        if odd.empty:
            select.update({"n_items": f"nullif({count}, 0)", "bad_n": f"{count} = 0"})
        else:
            temp_table(con, "_bw_csv_counts", reading.count_table(odd))
            joins.append(f"LEFT JOIN _bw_csv_counts nc ON nc.cell = {col['n_items']}")
            select.update({"n_items": f"CASE WHEN nc.cell IS NULL THEN nullif({count}, 0) ELSE nc.value END",
                           "bad_n": f"CASE WHEN nc.cell IS NULL THEN {count} = 0 ELSE nc.bad END"})
        select["n_cell"] = col["n_items"]
    else:
        select.update({"n_items": "NULL::INTEGER", "bad_n": "false", "n_cell": "NULL::VARCHAR"})
    for c in reading.DATE_COLUMNS:
        if c in col:
            select[c] = f"d_{c}.value"
            joins.append(f"LEFT JOIN _bw_csv_dates d_{c} ON d_{c}.cell = {col[c]}")
        else:
            select[c] = "NULL::TIMESTAMP"
    lines = Lines(", ".join(f"{expr} AS {quote_ident(name)}" for name, expr in select.items()), " ".join(joins))
    lines.view(con, "_bw_csv_rows", "(SELECT rowid AS rn, * FROM _bw_csv_raw)")
    return lines


@dataclass(frozen=True)
class Lines:
    """The SELECT list and joins that give data lines their values (`cell_tables`), over a source
    of raw lines `r` with their line number `rn`."""

    columns: str
    joins: str

    def view(self, con: duckdb.DuckDBPyConnection, name: str, source: str, extra: str = "") -> None:
        con.execute(f"CREATE OR REPLACE TEMP VIEW {quote_ident(name)} AS SELECT {self.columns}{extra} "
                    f"FROM {source} r {self.joins}")

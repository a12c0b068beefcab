"""Ingest of the generic `csv` source inside DuckDB: read, validate and store without a row in Python.

The pandas path (`CsvScraper.parse_checked` then `store_snapshot`) turns every cell into a
Python object several times, so its cost grows with every cell of a large file. Here DuckDB's CSV reader
loads the file (every cell as text) into a temporary table of the writer's connection, the
score checks `scrapers.base.validate` evaluates in pandas, declared once in `common.checks`,
run compiled to SQL (`storage.checks_sql`: one reject stage per row, duplicates by a grouped
count), and the rows go to `scores` with one INSERT … SELECT. What depends on a cell's text
in Python terms (cleaned names, metric kinds, dates, numbers that are not plain decimals,
alias and identity resolution) is computed once per *distinct* cell by the source's own
reading, handed down by the job with the header layout (`CsvReading`), and joined back.
A line's values and stage are views over the read cells, computed where they are read: the
only other full-size table is _bw_csv_keys (line, name ids, stage). Joins do not keep the file
order (DuckDB interleaves its threads' blocks), so the INSERT sorts by line; rejected rows are
sorted once into _bw_csv_rej and written from it alone, as their values (`reject_rows`,
migration 033), not as ~340 bytes of JSON each.

Same result as the pandas path, row for row (tests/integration/test_csv_ingest.py compares them): the
same stored rows, rejects in the same order with the same reasons and row JSON, the same
snapshot row. Whenever this path cannot promise that, `ingest_csv` returns None before writing
anything and the caller takes the pandas path, which also words every file-level error as
before: a header it does not read itself (`scrapers.csv.native_layout`), a file DuckDB's reader
refuses (malformed: the pandas error names the line), short rows, no data rows, a scale it
cannot decide, no row kept, or a file that changed on disk after it was hashed.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Sequence

import pandas as pd

from common.naming import NO_RULES, NamingRules
from common.checks import REASON_PERCENT_IN_PROPORTIONS, SCORE_UNIQUE, json_fragments
from common.units import AmbiguousScale, percent_scale_from_counts
from storage.checks_sql import (CHECK_STAGES, DUPLICATE_STAGE, N_REASON_KEYS, PARSER_STAGE, first_stage, reason_frame,
                                reason_keys)
from storage.db import next_ids, quote_ident, registered_frame, transaction
from storage.engine import duckdb
from storage.ingest import (IngestResult, logged, canonical_duplicate_reason, canonical_duplicate_warning,
                            check_observed_after_release, finish_snapshot, known_snapshot,
                            parse_observed_at, snapshot_hash)
from storage.responses import Response, store_blobs
from storage.registry_sync import NameMapper
from storage.csv_cells import CsvReading, Lines, cell_tables, one_row, temp_table  # noqa: F401 - CsvReading re-exported

log = logging.getLogger("benchwatch.storage")

SOURCE = "csv"
MAX_COLUMNS = 1000          # a wider header is read by the pandas path
# Text the JSON writer copies as it is (no quote, backslash, slash, control or non-ASCII character).
SAFE_TEXT = "[0-9A-Za-z .,%+_-]*"
# A number whose DuckDB text pandas' JSON writer prints alike: fixed notation, below 1,000, at most
# 6 decimals (the writer rounds to 10), not -0.0 (it writes 0.0); any other goes through that writer.
SAFE_NUMBER = "0[.]0|-?([1-9][0-9]{0,2}[.][0-9]{1,6}|0[.][0-9]{0,5}[1-9])"
NO_NULL = "\x00"            # DuckDB's NULL text: a NUL, which `native_layout` never lets through (cells stay text)
# A rejected row in reject_rows (migration 033): its values, and the JSON text (j_*) of those the
# view `rejects` does not write as `validate`'s JSON writer does (the view assembles the row JSON).
REJECT_VALUES = ("benchmark", "model", "setting", "score", "raw_value", "metric", "stderr", "n_items")
REJECT_PARTS = ("benchmark", "model", "setting", "score", "raw_value", "metric", "stderr",
                "model_release_date", "knowledge_cutoff", "evaluated_at")
# Reject stages: the declared checks' (storage.checks_sql, in `validate`'s order: a row gets the
# first that applies); SIGN_IN_PROPORTIONS is the parser's own reject (a '%' cell in a column of
# proportions), before them; DUPLICATE the declared unique key's, after them.
SIGN_IN_PROPORTIONS, BAD_N_ITEMS, DUPLICATE = PARSER_STAGE, CHECK_STAGES["bad_n_items"], DUPLICATE_STAGE
# The columns of a staged row (_bw_csv_staged) the declared rules read (the others are NULL here).
STAGED_COLUMNS = frozenset(("benchmark", "model", "setting", "score", "metric", "stderr", "lo", "hi", "bad_n",
                            "n_cell"))
# Views: a data line's values and stage are computed where they are read (no full-size copy).
_VIEWS = ("_bw_csv_checked", "_bw_csv_lines", "_bw_csv_staged", "_bw_csv_rows")
_TEMP = ("_bw_csv_raw", "_bw_csv_names", "_bw_csv_metrics", "_bw_csv_settings", "_bw_csv_dates",
         "_bw_csv_scorenum", "_bw_csv_senum", "_bw_csv_counts", "_bw_csv_units", "_bw_csv_keys", "_bw_csv_repeats",
         "_bw_csv_bench", "_bw_csv_models", "_bw_csv_canon", "_bw_csv_dupreasons", "_bw_csv_rej",
         "_bw_csv_jtext", "_bw_csv_jnum", "_bw_csv_jdate", "_bw_csv_reasons")


@dataclass(frozen=True)
class FileStamp:
    """What identifies the bytes that were hashed: a file rewritten since is not read again."""

    size: int
    mtime_ns: int
    inode: int

    @classmethod
    def of(cls, path: str | os.PathLike) -> "FileStamp":
        st = os.stat(path)
        return cls(st.st_size, st.st_mtime_ns, st.st_ino)


def ingest_csv(con: duckdb.DuckDBPyConnection, path: str | os.PathLike, stamp: FileStamp,
               layout: CsvReading, responses: Sequence[Response], *, observed_at: datetime, origin: str,
               parser_version: int, shrink_max_drop: float | None = None,
               naming: NamingRules = NO_RULES) -> IngestResult | None:
    """Store the CSV at `path` (whose bytes are `responses[0]`) as a snapshot; None: use the pandas path
    (nothing written). `shrink_max_drop` and `naming`: the source's own shrink limit and naming
    rules (`Scraper.shrink_max_drop`, `Scraper.NAMING`), handed down by the job."""
    now = datetime.now(timezone.utc)
    observed_at = parse_observed_at(observed_at, now=now)
    known = known_snapshot(con, SOURCE, responses, origin=origin, now=now)
    if known is not None:
        return known
    con.execute("SET enable_progress_bar = false")    # long statements would draw DuckDB's bar on stderr
    try:
        units = _prepare(con, path, stamp, layout)
        if units is None:
            return None
        return _store(con, units, responses, observed_at=observed_at, now=now, origin=origin,
                      parser_version=parser_version, max_drop=shrink_max_drop, naming=naming)
    finally:
        for name in _VIEWS:
            con.execute(f"DROP VIEW IF EXISTS temp.{quote_ident(name)}")
        for name in _TEMP:
            con.execute(f"DROP TABLE IF EXISTS temp.{quote_ident(name)}")


def _read(con: duckdb.DuckDBPyConnection, path: str | os.PathLike, n_cells: int) -> bool:
    """The data lines into _bw_csv_raw (c0 … cN, all text; `rowid` = file order); False when DuckDB
    refuses the file (malformed: the pandas path words the error)."""
    columns = "{" + ", ".join(f"'c{i}': 'VARCHAR'" for i in range(n_cells)) + "}"
    try:
        con.execute(f"""CREATE OR REPLACE TEMP TABLE _bw_csv_raw AS
                        SELECT * FROM read_csv(?, header = false, skip = 1, auto_detect = false, delim = ',',
                                               quote = '"', escape = '"', columns = {columns}, strict_mode = true,
                                               null_padding = false, nullstr = ?, allow_quoted_nulls = false,
                                               encoding = 'utf-8')""", [str(path), NO_NULL])
    except duckdb.Error as exc:
        log.info("[csv] DuckDB's reader refused %s (%s): reading it with pandas", path, str(exc).splitlines()[0])
        return False
    return True


def _prepare(con: duckdb.DuckDBPyConnection, path: str | os.PathLike, stamp: FileStamp,
             layout: CsvReading) -> dict[str, str] | None:
    """Read and check the file into _bw_csv_checked (every data line with its values and reject
    stage). The accuracy units per benchmark, or None when the pandas path must read it."""
    if layout.n_cells > MAX_COLUMNS or not _read(con, path, layout.n_cells):
        return None
    if FileStamp.of(path) != stamp:
        log.warning("[csv] %s changed while it was read: reading the bytes already hashed with pandas", path)
        return None
    col = {name: f"r.c{i}" for name, i in layout.columns.items()}
    n_rows, n_null = one_row(con,
        "SELECT count(*), count(*) FILTER (WHERE " + " OR ".join(f"{c} IS NULL" for c in col.values()) + ") "
        "FROM _bw_csv_raw r")
    if n_rows == 0 or n_null:
        return None
    return _check(con, cell_tables(con, col, layout))


def _store(con: duckdb.DuckDBPyConnection, units: dict[str, str], responses: Sequence[Response],
           *, observed_at: datetime, now: datetime, origin: str,
           parser_version: int, max_drop: float | None, naming: NamingRules) -> IngestResult:
    n_kept, n_rows = one_row(con, "SELECT count(*) FILTER (WHERE stage = 0), count(*) FROM _bw_csv_keys")
    mapper = NameMapper.from_db(con, {SOURCE: naming})
    bench = con.execute(_KEPT_NAMES.format(id="b_id")).df()
    bench["cell"] = bench["cell"].astype("object")
    bench["mapped"] = mapper.map("benchmark", bench["cell"]).astype("object")
    bench["mapped_id"] = pd.factorize(bench["mapped"])[0]
    bench["shared"] = bench["mapped"].duplicated(keep=False)
    check_observed_after_release(con, list(bench["mapped"]), observed_at)
    n_rejects, rejected = _rejects(con, n_rows - n_kept)
    with transaction(con):
        snapshot_id = next_ids(con, "snapshots")[0]   # a sequence on a file; max + 1 on a lake
        store_blobs(con, responses, now)
        temp_table(con, "_bw_csv_bench", bench)
        _model_table(con, mapper, snapshot_id)
        warnings = _canonical_duplicates(con, bool(bench["shared"].any()))
        # In file order: the joins do not keep it (DuckDB interleaves its threads' morsels).
        excluded, canon = "''", ""
        if warnings:
            excluded = "CASE WHEN c.rn > k.first_rn THEN d.reason ELSE '' END"
            canon = """LEFT JOIN _bw_csv_canon k ON k.bm = b.mapped_id AND k.mm = m.mapped_id AND k.s_id = c.s_id
                       LEFT JOIN _bw_csv_dupreasons d ON d.first_raw = k.first_raw AND d.mapped = m.mapped"""
        con.execute(f"""
            INSERT INTO scores BY NAME
            SELECT $id AS snapshot_id, $source AS source, b.mapped AS benchmark, c.benchmark AS benchmark_raw,
                   m.model, c.model AS model_raw, m.variant, m.population, NULL::VARCHAR AS model_tag, m.underlying,
                   c.setting, c.score, c.raw_value, c.metric, c.stderr, NULL::DOUBLE AS ci_low, NULL::DOUBLE AS ci_high,
                   c.n_items, c.model_release_date, c.knowledge_cutoff, c.evaluated_at::TIMESTAMPTZ AS evaluated_at,
                   {excluded} AS excluded_reason
            FROM _bw_csv_checked c
            JOIN _bw_csv_bench b ON b.b_id = c.b_id
            JOIN _bw_csv_models m ON m.m_id = c.m_id
            {canon}
            WHERE c.stage = 0
            ORDER BY c.rn""", {"id": snapshot_id, "source": SOURCE})
        con.execute("""
            INSERT INTO model_dates BY NAME
            SELECT m.mapped AS model, c.model AS model_raw, $source AS source, $id AS snapshot_id,
                   c.model_release_date AS release_date, c.knowledge_cutoff, 'leaderboard' AS provenance,
                   NULL::VARCHAR AS org, $observed AS observed_at
            FROM _bw_csv_checked c JOIN _bw_csv_models m ON m.m_id = c.m_id
            WHERE c.stage = 0 AND (c.model_release_date IS NOT NULL OR c.knowledge_cutoff IS NOT NULL)
            QUALIFY row_number() OVER (PARTITION BY c.model, c.model_release_date, c.knowledge_cutoff
                                       ORDER BY c.rn) = 1
            ORDER BY c.rn""", {"id": snapshot_id, "source": SOURCE, "observed": observed_at})
        if n_rejects:
            con.execute(f"INSERT INTO reject_rows (snapshot_id, source, file_name, {', '.join(REJECT_VALUES)}, "
                        f"{', '.join('j_' + c for c in REJECT_PARTS)}, reason, created_at) {rejected}",
                        {"id": snapshot_id, "source": SOURCE, "file": responses[0].file_name, "now": now,
                         "duplicate": SCORE_UNIQUE.reason, "sign": REASON_PERCENT_IN_PROPORTIONS})
        result = finish_snapshot(con, IngestResult(SOURCE, "new", snapshot_id, snapshot_hash(responses), n_kept, 0, 0,
                                                   n_rejects, warnings),
                                 responses, observed_at=observed_at, now=now, origin=origin,
                                 parser_version=parser_version, meta={"accuracy_unit": units}, max_drop=max_drop)
    if n_rejects:
        log.warning("[%s] %d row(s) rejected (kept in the rejects table)", SOURCE, n_rejects)
    return logged(result)


# The distinct kept names of one column (b_id or m_id: an id per distinct cleaned name).
_KEPT_NAMES = """SELECT n.name_id AS {id}, any_value(n.name) AS cell
                 FROM (SELECT DISTINCT {id} FROM _bw_csv_keys WHERE stage = 0) k
                 JOIN _bw_csv_names n ON n.name_id = k.{id} GROUP BY ALL"""


def _check(con: duckdb.DuckDBPyConnection, lines: Lines) -> dict[str, str] | None:
    """Decide percent vs proportion per benchmark for the rows whose metric leaves it open (from
    the valid values, `percent_scale`), scale, and stage every row: the views _bw_csv_staged
    (first_stage: the declared checks) and _bw_csv_checked (stage: also the repeated keys), and
    _bw_csv_keys, the only full-size table besides the file's cells (line, name ids, stage).
    The units; None when the scale is ambiguous or no row would be kept."""
    units: dict[str, bool] = {}
    if one_row(con, "SELECT bool_or(undeclared) FROM _bw_csv_metrics")[0]:
        counts = con.execute("""
            SELECT coalesce(benchmark, '') AS bench,
                   count(*) FILTER (WHERE sign AND isfinite(x) AND x >= 0 AND x <= 100) AS signs,
                   count(*) FILTER (WHERE NOT sign AND isfinite(x) AND x > 1 AND x <= 100) AS above,
                   count(*) FILTER (WHERE NOT sign AND isfinite(x) AND x > 0 AND x <= 1) AS below
            FROM _bw_csv_rows WHERE undeclared GROUP BY ALL""").fetchall()
        for bench, signs, above, below in counts:
            try:
                units[bench] = percent_scale_from_counts(int(above), int(below), signed=int(signs))
            except AmbiguousScale:
                return None
    temp_table(con, "_bw_csv_units", pd.DataFrame({"bench": pd.Series(list(units), dtype="object"),
                                                    "is_percent": pd.Series(list(units.values()), dtype="bool")}))
    pct = ("CASE WHEN r.undeclared THEN u.is_percent ELSE (r.declared_percent OR r.sign) AND r.accuracy END"
           if units else "(r.declared_percent OR r.sign) AND r.accuracy")
    units_join = ("LEFT JOIN _bw_csv_units u ON r.undeclared AND u.bench = coalesce(r.benchmark, '')"
                  if units else "")

    def staged(rows: str, first: bool = True) -> str:
        """The lines of the view `rows` scaled, and (`first`) their first stage: the declared checks."""
        stage = (f""", CASE WHEN undeclared AND sign AND NOT pct THEN {SIGN_IN_PROPORTIONS}
                         ELSE {first_stage(STAGED_COLUMNS)} END AS first_stage""" if first else "")
        return f"""
            WITH scaled AS (SELECT r.*, {pct} AS pct FROM {rows} r {units_join}),
            valued AS (
                SELECT * EXCLUDE (se), CASE WHEN pct THEN x / 100.0::DOUBLE ELSE x END AS score,
                       CASE WHEN pct THEN se / 100.0::DOUBLE ELSE se END AS stderr
                FROM scaled)
            SELECT *{stage} FROM valued"""

    con.execute(f"CREATE OR REPLACE TEMP VIEW _bw_csv_staged AS {staged('_bw_csv_rows')}")
    con.execute("""CREATE OR REPLACE TEMP TABLE _bw_csv_keys AS
                   SELECT rn, b_id, m_id, s_id, first_stage FROM _bw_csv_staged""")
    # a second row of one (benchmark, model, setting): rejected (the first row is kept)
    con.execute("""CREATE OR REPLACE TEMP TABLE _bw_csv_repeats AS
                   SELECT b_id, m_id, s_id, min(rn) AS first_rn, count(*) AS n FROM _bw_csv_keys
                   WHERE first_stage = 0 GROUP BY ALL HAVING count(*) > 1""")
    if not one_row(con, "SELECT count(*) FROM _bw_csv_repeats")[0]:     # no repeated key: the stages stand
        con.execute("ALTER TABLE _bw_csv_keys RENAME COLUMN first_stage TO stage")
        if one_row(con, "SELECT bool_or(stage > 0) FROM _bw_csv_keys")[0]:
            con.execute("CREATE OR REPLACE TEMP VIEW _bw_csv_checked AS SELECT * RENAME (first_stage AS stage) "
                        "FROM _bw_csv_staged")
        else:       # every line kept: its lines are not checked again
            con.execute(f"CREATE OR REPLACE TEMP VIEW _bw_csv_checked AS SELECT *, 0 AS stage "
                        f"FROM ({staged('_bw_csv_rows', first=False)})")
    else:
        stage = f"CASE WHEN s.first_stage = 0 AND s.rn > p.first_rn THEN {DUPLICATE} ELSE s.first_stage END AS stage"
        repeats = "LEFT JOIN _bw_csv_repeats p ON p.b_id = s.b_id AND p.m_id = s.m_id AND p.s_id = s.s_id"
        con.execute(f"""CREATE OR REPLACE TEMP TABLE _bw_csv_keys AS
                        SELECT s.rn, s.b_id, s.m_id, s.s_id, {stage} FROM _bw_csv_keys s {repeats}""")
        # Each line's stage is read from _bw_csv_keys, joined by line before the cells' tables: a
        # filter on the stage (the kept lines, the rejected ones) is pushed into that table's scan,
        # so only those lines are looked up and checked again.
        lines.view(con, "_bw_csv_lines", """(SELECT r.rowid AS rn, r.*, k.stage FROM _bw_csv_raw r
                                             JOIN _bw_csv_keys k ON k.rn = r.rowid)""", ", r.stage AS stage")
        con.execute(f"CREATE OR REPLACE TEMP VIEW _bw_csv_checked AS {staged('_bw_csv_lines', first=False)}")
    if not one_row(con, "SELECT EXISTS (SELECT 1 FROM _bw_csv_keys WHERE stage = 0)")[0]:
        return None
    return _unit_names(units)


def _unit_names(units: dict[str, bool]) -> dict[str, str]:
    """`parsed.meta['accuracy_unit']`: benchmark -> 'percent' | 'proportion', by benchmark name."""
    return {bench: "percent" if pct else "proportion" for bench, pct in sorted(units.items())}


def _rejects(con: duckdb.DuckDBPyConnection, n_rejected: int) -> tuple[int, str]:
    """_bw_csv_rej: every rejected row in the order the pandas path stores them (stage, line),
    and the SELECT of their reject_rows columns: each value's JSON text and the reason as
    `validate` writes them (its JSON writer, its reason functions), in SQL: text the JSON writer
    copies as it is and numbers both writers print alike directly; any other value's text (j_*)
    and the declared checks' reasons are filled in by an UPDATE of the rows that need them from
    a table per distinct value, so the SELECT reads _bw_csv_rej alone, in its order.
    The number of rejected rows and that SELECT ('' when none)."""
    if not n_rejected:
        return 0, ""
    n, n_checks = one_row(con, f"""SELECT count(*), count(*) FILTER (WHERE stage NOT IN ({DUPLICATE}, {SIGN_IN_PROPORTIONS}))
                                FROM _bw_csv_keys WHERE stage > 0""")
    text_columns = ("benchmark", "model", "setting", "raw_value", "metric")
    # what only the declared checks' reasons read, when a row failed one
    for_reasons = (f"n_cell, unknown_reason, {', '.join(reason_keys(STAGED_COLUMNS))}, NULL::VARCHAR AS reason, "
                   if n_checks else "")
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE _bw_csv_rej AS
        SELECT stage, rn, benchmark, model, setting, score, raw_value, metric, stderr, {for_reasons}
               CASE WHEN stage = {BAD_N_ITEMS} THEN NULL ELSE n_items END AS n_items,
               model_release_date, knowledge_cutoff, evaluated_at
        FROM _bw_csv_checked WHERE stage > 0 ORDER BY stage, rn""")
    odd: set[str] = set()      # the columns j_<name> added: values whose JSON text is looked up

    def add_parts(columns) -> None:
        for c in columns:
            con.execute(f"ALTER TABLE _bw_csv_rej ADD COLUMN j_{c} VARCHAR")
            odd.add(c)

    def fragments(name: str, sql: str, values, value_type: str) -> bool:
        """A table v -> f: the JSON of each distinct value (`values` makes the column `validate` had);
        False when there is none."""
        v = con.execute(sql).df()["v"]
        if v.empty:
            return False
        frame = pd.DataFrame({"v": v, "f": pd.Series(json_fragments(values(v)), index=v.index, dtype="object")})
        with registered_frame(con, frame) as rel:
            con.execute(f"CREATE OR REPLACE TEMP TABLE {quote_ident(name)} AS "
                        f"SELECT CAST(v AS {value_type}) AS v, CAST(f AS VARCHAR) AS f FROM {rel}")
        return True

    def safe_text(v: str) -> str:
        return f"regexp_full_match({v}, '{SAFE_TEXT}')"

    # the pattern once per distinct text (grouped first: see `odd_cells` in cell_tables)
    if fragments("_bw_csv_jtext", "SELECT v FROM (SELECT any_value(v) AS v FROM (" + " UNION ALL ".join(
            f"SELECT {c} AS v FROM _bw_csv_rej" for c in text_columns) + f") GROUP BY v) WHERE NOT {safe_text('v')}",
            lambda v: v.astype("object"), "VARCHAR"):
        add_parts(text_columns)
        for c in text_columns:
            con.execute(f"UPDATE _bw_csv_rej SET j_{c} = j.f FROM _bw_csv_jtext j WHERE j.v = _bw_csv_rej.{c}")
    # per distinct number, the pattern once each on its text. A number is its value and its sign:
    # as values 0.0 = -0.0, but their texts differ; every NaN is one value (one JSON text). Grouped
    # and joined as doubles, not as text (the join would cast every rejected row's number).
    def neg(v: str) -> str:
        return f"(signbit({v}) AND NOT isnan({v}))"
    if fragments("_bw_csv_jnum", f"""SELECT v FROM (SELECT DISTINCT v, {neg('v')} FROM (
                                         SELECT score AS v FROM _bw_csv_rej UNION ALL SELECT stderr FROM _bw_csv_rej)
                                     WHERE v IS NOT NULL)
                                     WHERE NOT regexp_full_match(CAST(v AS VARCHAR), '{SAFE_NUMBER}')""",
                 lambda v: v.astype("float64"), "DOUBLE"):
        add_parts(("score", "stderr"))
        for c in ("score", "stderr"):     # only numbers whose text is not safe are in _bw_csv_jnum
            con.execute(f"""UPDATE _bw_csv_rej SET j_{c} = j.f FROM _bw_csv_jnum j
                            WHERE j.v = _bw_csv_rej.{c} AND {neg('j.v')} = {neg(f'_bw_csv_rej.{c}')}""")
    if fragments("_bw_csv_jdate", """SELECT DISTINCT v FROM (SELECT model_release_date AS v FROM _bw_csv_rej UNION ALL
                                     SELECT knowledge_cutoff FROM _bw_csv_rej UNION ALL
                                     SELECT evaluated_at FROM _bw_csv_rej) WHERE v IS NOT NULL""",
                 lambda v: pd.Series(pd.to_datetime(v).astype("datetime64[us]"), index=v.index), "TIMESTAMP"):
        add_parts(("model_release_date", "knowledge_cutoff", "evaluated_at"))
        for c in ("model_release_date", "knowledge_cutoff", "evaluated_at"):
            con.execute(f"UPDATE _bw_csv_rej SET j_{c} = j.f FROM _bw_csv_jdate j WHERE j.v = _bw_csv_rej.{c}")
    if n_checks:
        _reason_table(con)
        con.execute("UPDATE _bw_csv_rej SET reason = rs.reason FROM _bw_csv_reasons rs "
                    "WHERE _bw_csv_rej.reason IS NULL AND rs.stage = _bw_csv_rej.stage "
                    + " ".join(f"AND rs.k{i} IS NOT DISTINCT FROM _bw_csv_rej.k{i}" for i in range(N_REASON_KEYS)))

    reason = f"CASE r.stage WHEN {DUPLICATE} THEN $duplicate WHEN {SIGN_IN_PROPORTIONS} THEN $sign"
    reason += " ELSE r.reason END" if n_checks else " END"
    values = ", ".join(f"r.{c}" for c in REJECT_VALUES)
    parts = ", ".join(f"r.j_{c}" if c in odd else "NULL" for c in REJECT_PARTS)
    select = f"SELECT $id, $source, $file, {values}, {parts}, {reason}, $now FROM _bw_csv_rej r"
    return int(n), select


def _reason_table(con: duckdb.DuckDBPyConnection) -> None:
    """_bw_csv_reasons: each declared check's reason for the rejected rows (`checks_sql.reason_frame`)."""
    temp_table(con, "_bw_csv_reasons", reason_frame(con, "_bw_csv_rej", STAGED_COLUMNS))


def _model_table(con: duckdb.DuckDBPyConnection, mapper: NameMapper, snapshot_id: int) -> None:
    """_bw_csv_models: per distinct kept model name, its alias-mapped name and its identity."""
    assert not mapper.naming[SOURCE].benchmark_dependent   # identity by name alone: once per distinct name
    models = con.execute(_KEPT_NAMES.format(id="m_id")).df()
    cells = models["cell"].astype("object")
    ident = mapper.identify(pd.DataFrame({"source": SOURCE, "snapshot_id": snapshot_id, "benchmark": None,
                                          "model_raw": cells, "model_tag": None}))
    frame = pd.DataFrame({"m_id": models["m_id"], "cell": cells, "mapped": mapper.map("model", cells).astype("object"),
                          "model": ident["model"], "variant": ident["variant"], "population": ident["population"],
                          "underlying": ident["underlying"]})
    frame["mapped_id"] = pd.factorize(frame["mapped"])[0]
    frame["shared"] = frame["mapped"].duplicated(keep=False)
    temp_table(con, "_bw_csv_models", frame)


def _canonical_duplicates(con: duckdb.DuckDBPyConnection, shared_benchmarks: bool) -> list[str]:
    """Rows whose names map to the (benchmark, model, setting) of an earlier row are stored but
    excluded (`storage.ingest._canonical_duplicates`): _bw_csv_canon (the repeated keys, their
    first row) and _bw_csv_dupreasons (the excluded_reason per first raw name and canonical name);
    the snapshot's warning (none: no key repeats, and the scores need neither table)."""
    # only names that share their canonical name with another name can repeat a key
    if not shared_benchmarks and not one_row(con, "SELECT bool_or(shared) FROM _bw_csv_models")[0]:
        return []
    con.execute("""
        CREATE OR REPLACE TEMP TABLE _bw_csv_canon AS
        SELECT b.mapped_id AS bm, m.mapped_id AS mm, c.s_id, min(c.rn) AS first_rn, arg_min(m.cell, c.rn) AS first_raw
        FROM _bw_csv_keys c JOIN _bw_csv_bench b ON b.b_id = c.b_id JOIN _bw_csv_models m ON m.m_id = c.m_id
        WHERE c.stage = 0 AND (b.shared OR m.shared) GROUP BY ALL HAVING count(*) > 1""")
    dups = con.execute("""
        SELECT k.first_raw, m.mapped, m.cell, c.rn
        FROM _bw_csv_keys c JOIN _bw_csv_bench b ON b.b_id = c.b_id JOIN _bw_csv_models m ON m.m_id = c.m_id
        JOIN _bw_csv_canon k ON k.bm = b.mapped_id AND k.mm = m.mapped_id AND k.s_id = c.s_id
        WHERE c.stage = 0 AND c.rn > k.first_rn ORDER BY c.rn""").fetchall()
    pairs = list(dict.fromkeys((first_raw, mapped) for first_raw, mapped, _, _ in dups))
    temp_table(con, "_bw_csv_dupreasons", pd.DataFrame({
        "first_raw": pd.Series([p[0] for p in pairs], dtype="object"),
        "mapped": pd.Series([p[1] for p in pairs], dtype="object"),
        "reason": pd.Series([canonical_duplicate_reason(*p) for p in pairs], dtype="object")}))
    if not dups:
        return []
    return [canonical_duplicate_warning(len(dups), dups[0][2], dups[0][1])]

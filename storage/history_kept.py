"""The running-best history of each leaderboard table as the last analysis read it (migration 034),
so that an incremental analysis reads a changed table's new rows, not its whole history.

A history read (storage.saturation.read_running_best_history) stores what it read: the kept rows
of each table of its benchmarks, and the table's *basis*: its score rows up to `max_snapshot_id`,
their count and the XOR of their hashes with their snapshot's date and status and their model's
release date (every input of a row's first observation and date), under the query's text and
parameters (`rule`). A later read reuses a benchmark's kept rows when, for each of its tables,
the rows up to `max_snapshot_id` hash as stored, every later row was observed after all of them
(so its first observation is its own) and, once read, every later row is dated after every kept
one (checked on the result: every date of the read has a kept row). Anything else (a row edited
or deleted, a snapshot held or released, a release date moved, a backfilled snapshot, an
evaluation date among the earlier ones, a new table) reads the benchmark whole. The results are
those of the whole read (tests/integration/test_history_kept.py), only cheaper: no writer has to keep
anything up to date, since the basis is checked against the rows themselves.

Not a case of the keep-or-recompute step (jobs/relations/step.py), which decides per unit, before
computing, between "same inputs: keep the rows" and "other inputs: recompute them": this read
runs inside a table the step recomputes (its inputs did change) and appends to what it kept.
The step's fingerprint of a table covers all its rows and its source's snapshots, so an
appended snapshot and an edited old row both change it; telling them apart needs the digest of
the rows up to the kept `max_snapshot_id` (a boundary that moves with every read), and the last
condition (every later row dated after every kept one) is on the read's result, the dates its
dating rule gives, so it can only be checked after reading (a benchmark that fails it is read
again whole). Both are this read's own, on its own rows, as dbt's incremental filter is the
model's, not the materialisation's.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime

import pandas as pd

from storage.db import insert_frame, registered_frame
from storage.engine import duckdb

TABLE_KEYS = ["source", "benchmark", "table_version"]


def rule_digest(sql: str, lower_is_better: list[str]) -> str:
    """sha256 of the history query's text and its parameters: kept rows of another rule are never reused."""
    return hashlib.sha256(json.dumps([sql, sorted(lower_is_better)]).encode()).hexdigest()


def table_inputs(con: duckdb.DuckDBPyConnection, benchmarks: list[str], releases: str,
                 basis: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per (source, benchmark, table_version) of `benchmarks`' score rows: `n`, `digest` and
    `max_snapshot_id` of all its rows (a basis to store); with `basis` (the stored one), also
    `n_old`, `digest_old` and `old_seen` of its rows up to the basis' `max_snapshot_id` and
    `new_seen`, the first observation of its later rows. `releases`: the registered frame the
    history query dates with."""
    frame = basis[[*TABLE_KEYS, "max_snapshot_id"]] if basis is not None else \
        pd.DataFrame({**{k: pd.Series(dtype="object") for k in TABLE_KEYS},
                      "max_snapshot_id": pd.Series(dtype="int64")})
    with registered_frame(con, frame) as b:
        return con.execute(f"""
            WITH r AS (
                SELECT sc.source, sc.benchmark, coalesce(sc.table_version, '') AS table_version, sc.snapshot_id,
                       sn.observed_at, hash(hash(sc, sn.observed_at, sn.status, rel.release_date)) AS h,   -- mixed (fingerprint.py)
                       sc.snapshot_id <= b.max_snapshot_id AS old
                FROM scores sc LEFT JOIN snapshots sn ON sn.id = sc.snapshot_id
                LEFT JOIN {releases} rel ON rel.model = sc.model
                LEFT JOIN {b} b ON b.source = sc.source AND b.benchmark = sc.benchmark
                                AND b.table_version = coalesce(sc.table_version, '')
                WHERE list_contains(?, sc.benchmark))
            SELECT source, benchmark, table_version, count(*) AS n, coalesce(bit_xor(h), 0) AS digest,
                   max(snapshot_id) AS max_snapshot_id,
                   count(*) FILTER (WHERE old) AS n_old, coalesce(bit_xor(h) FILTER (WHERE old), 0) AS digest_old,
                   max(observed_at) FILTER (WHERE old) AS old_seen,
                   min(observed_at) FILTER (WHERE NOT old) AS new_seen
            FROM r GROUP BY ALL""", [benchmarks]).df()


def stored_basis(con: duckdb.DuckDBPyConnection, benchmarks: list[str], rule: str) -> pd.DataFrame:
    """The stored basis of `benchmarks`' tables under `rule`, with the latest date of each table's kept rows."""
    return con.execute("""
        SELECT b.source, b.benchmark, b.table_version, b.max_snapshot_id, b.n, b.digest,
               (SELECT max(h.date) FROM history_kept h WHERE h.source = b.source AND h.benchmark = b.benchmark
                                                        AND h.table_version = b.table_version) AS max_date
        FROM history_kept_basis b WHERE list_contains(?, b.benchmark) AND b.rule = ?""", [benchmarks, rule]).df()


def reusable_benchmarks(basis: pd.DataFrame, inputs: pd.DataFrame) -> set[str]:
    """The benchmarks whose every table has a basis (`stored_basis`) its rows still match
    (`table_inputs` with that basis), every basis a table, and every later row observed after
    the earlier ones."""
    m = basis.merge(inputs, on=TABLE_KEYS, how="outer", indicator=True, suffixes=("", "_now"))
    ok = ((m["_merge"] == "both") & (m["n_old"] == m["n"]) & (m["digest_old"] == m["digest"])
          & (m["new_seen"].isna() | (m["new_seen"] > m["old_seen"])))
    bad = set(m.loc[~ok.to_numpy(), "benchmark"])
    return set(m["benchmark"]) - bad


def later_rows_dated_after(history: pd.DataFrame, basis: pd.DataFrame) -> set[str]:
    """The benchmarks of `basis` whose rows of later snapshots in `history` (a read on top of the
    kept rows) are all dated after every kept row of their table: else the read is not the
    whole read's (a later row would sit among the earlier ones in a running best)."""
    new = later_rows(history[[*TABLE_KEYS, "snapshot_id", "date"]], basis).merge(
        basis[[*TABLE_KEYS, "max_date"]], on=TABLE_KEYS, how="inner")
    max_date = pd.to_datetime(new["max_date"], utc=True)
    date = pd.to_datetime(new["date"], utc=True)
    late = new["date"].isna() | (max_date.notna() & (date <= max_date))
    return set(basis["benchmark"]) - set(new.loc[late.to_numpy(), "benchmark"])


def later_rows(history: pd.DataFrame, basis: pd.DataFrame) -> pd.DataFrame:
    """The rows of `history` (a read on top of the kept rows of `basis`' tables) of later snapshots
    than their table's basis: what the read adds to the kept rows."""
    since = basis.set_index(TABLE_KEYS)["max_snapshot_id"]
    keys = pd.MultiIndex.from_frame(history[TABLE_KEYS])
    bound = since.reindex(keys).to_numpy(dtype="float64", na_value=float("inf"))
    return history[history["snapshot_id"].to_numpy(dtype="float64") > bound]


def add(con: duckdb.DuckDBPyConnection, rows: pd.DataFrame) -> None:
    """Add the `rows` a read on top of the kept rows read (`later_rows`) to them."""
    if len(rows):
        insert_frame(con, "history_kept", rows)


def store_basis(con: duckdb.DuckDBPyConnection, benchmarks: list[str], inputs: pd.DataFrame, rule: str,
                at: datetime) -> None:
    """The basis of `benchmarks`' tables after a read (`inputs`, its `table_inputs`) whose kept
    rows are stored (a table read whole has put them in `history_kept` itself; `add` the rows a
    read on top of them added)."""
    con.execute("DELETE FROM history_kept_basis WHERE list_contains(?, benchmark)", [benchmarks])
    if len(inputs):
        insert_frame(con, "history_kept_basis",
                     inputs[[*TABLE_KEYS, "max_snapshot_id", "n", "digest"]].assign(rule=rule, stored_at=at))

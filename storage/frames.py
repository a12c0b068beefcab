"""How a DataFrame reaches SQL, the same on a DuckDB file and a DuckLake store: `insert_frame`
(the bulk write of every storage module), `registered_frame` (a frame under a fresh unique name
for an `UPDATE … FROM`), `next_ids` (ids of the sequence-backed tables) and `quote_ident`.

Re-exported by storage.db, where they were written first and where most callers import them.
"""

from __future__ import annotations

import itertools
import os
from contextlib import contextmanager
from typing import TYPE_CHECKING, Iterator, Sequence

from storage import lake
from storage.engine import duckdb
from storage.migrations import sequence_ids

if TYPE_CHECKING:  # annotations only: `query`/`status` open connections without importing pandas
    import pandas as pd


def quote_ident(name: str) -> str:
    """The single identifier-quoting helper; values always go through bound parameters."""
    return '"' + str(name).replace('"', '""') + '"'


_FRAME_NAMES = itertools.count(1)


def _complete(con: duckdb.DuckDBPyConnection) -> None:
    complete = getattr(con, "complete", None)
    if complete is not None:
        complete()


@contextmanager
def registered_frame(con: duckdb.DuckDBPyConnection, frame: pd.DataFrame) -> Iterator[str]:
    """`with registered_frame(con, df) as rel:` — the frame as a relation under a fresh unique name
    (`rel` is the quoted name to put in SQL), unregistered afterwards.

    The one way SQL reads a DataFrame: never DuckDB's scan of a Python local by its variable
    name, which a rename breaks silently (or, worse, binds to another variable of that name).
    """
    name = f"_benchwatch_frame_{os.getpid()}_{next(_FRAME_NAMES)}"
    # DuckDB 2.0 refuses register/unregister while a result of execute() is half read (a
    # `fetchone()` of a nextval or count before); `complete()` runs it to its end, as the next
    # execute() would have done anyway. (DuckDB 1.5 has no `complete()` and no such refusal.)
    _complete(con)
    con.register(name, frame)
    try:
        yield quote_ident(name)
    except BaseException:
        try:
            con.unregister(name)
        except duckdb.Error:   # an aborted transaction refuses it; the name is unique and dies with the connection
            pass
        raise
    _complete(con)
    con.unregister(name)


def next_ids(con: duckdb.DuckDBPyConnection, table: str, n: int = 1) -> list[int]:
    """n fresh ids for `table` (one of `sequence_ids()`): nextval of its sequence on a file; on a
    DuckLake store max(id) + 1 … — safe because a lake writer holds the writer lock
    (storage/lake.py), so no other process allocates meanwhile."""
    column, sequence = sequence_ids()[table]
    if n <= 0:
        return []
    if not lake.is_lake(con):
        return [int(r[0]) for r in con.execute("SELECT nextval(?) FROM range(?)", [sequence, n]).fetchall()]
    row = con.execute(f"SELECT coalesce(max({quote_ident(column)}), 0) FROM {quote_ident(table)}").fetchone()
    start = int(row[0]) if row else 0
    return list(range(start + 1, start + 1 + n))


def _match(keys: Sequence[str], left: str, right: str) -> str:
    return " AND ".join(f"{left}.{quote_ident(k)} = {right}.{quote_ident(k)}" for k in keys)


def insert_frame(con: duckdb.DuckDBPyConnection, table: str, frame: pd.DataFrame, *,
                 columns: Sequence[str] | None = None, or_replace: Sequence[str] | None = None,
                 ignore_conflicts: Sequence[str] | None = None, skip_existing: str | None = None,
                 returning: Sequence[str] | None = None) -> list[tuple]:
    """The bulk write of every storage module: the rows of `frame` into `table`, columns matched
    BY NAME (table columns the frame lacks take their defaults). Returns the `returning` rows.

    `columns`: only these frame columns; `or_replace`: upsert on these key columns (the table's
    primary key); `ignore_conflicts`: leave out rows whose values of these (unique) columns the
    table already holds; `skip_existing`: leave out rows whose value of this key column the
    table already holds (duplicates *within* the frame are the caller's to drop).

    On a DuckDB file these are INSERT OR REPLACE / ON CONFLICT DO NOTHING / RETURNING against
    the table's constraints. A DuckLake store has no constraints, sequences or RETURNING
    (storage/lake.py), so there the named keys are matched explicitly — delete-then-insert, an
    anti-join that also keeps one row per key of the frame — and ids of `sequence_ids()` tables come
    from `next_ids`; the writer lock makes that as safe as the constraints.
    """
    if lake.is_lake(con):
        return _insert_frame_lake(con, table, frame, columns=columns, or_replace=or_replace,
                                  ignore_conflicts=ignore_conflicts, skip_existing=skip_existing, returning=returning)
    select = ", ".join(quote_ident(c) for c in columns) if columns else "*"
    t = quote_ident(table)
    with registered_frame(con, frame) as rel:
        sql = f"INSERT {'OR REPLACE ' if or_replace else ''}INTO {t} BY NAME SELECT {select} FROM {rel}"
        if skip_existing:
            k = quote_ident(skip_existing)
            sql += f" WHERE {k} NOT IN (SELECT {k} FROM {t})"
        if ignore_conflicts:
            sql += f" ON CONFLICT ({', '.join(quote_ident(c) for c in ignore_conflicts)}) DO NOTHING"
        if returning:
            sql += f" RETURNING {', '.join(quote_ident(c) for c in returning)}"
            return con.execute(sql).fetchall()
        con.execute(sql)
        return []


def _insert_frame_lake(con: duckdb.DuckDBPyConnection, table: str, frame: pd.DataFrame, *,
                       columns: Sequence[str] | None, or_replace: Sequence[str] | None,
                       ignore_conflicts: Sequence[str] | None, skip_existing: str | None,
                       returning: Sequence[str] | None) -> list[tuple]:
    """insert_frame on a DuckLake store (see there)."""
    t = quote_ident(table)
    select = ", ".join(f"f.{quote_ident(c)}" for c in columns) if columns else "f.*"
    id_column = sequence_ids().get(table, (None, None))[0]
    needs_ids = id_column is not None and id_column not in (columns or frame.columns)
    with registered_frame(con, frame) as rel:
        where = []
        if skip_existing:
            k = quote_ident(skip_existing)
            where.append(f"f.{k} NOT IN (SELECT {k} FROM {t})")
        if ignore_conflicts:
            where.append(f"NOT EXISTS (SELECT 1 FROM {t} t WHERE {_match(ignore_conflicts, 't', 'f')})")
        rows = f"SELECT {select} FROM {rel} f" + (f" WHERE {' AND '.join(where)}" if where else "")
        if ignore_conflicts:
            rows += f" QUALIFY row_number() OVER (PARTITION BY {', '.join(f'f.{quote_ident(c)}' for c in ignore_conflicts)}) = 1"
        if or_replace:
            con.execute(f"DELETE FROM {t} t WHERE EXISTS (SELECT 1 FROM {rel} f WHERE {_match(or_replace, 't', 'f')})")
        if not needs_ids and not returning:
            con.execute(f"INSERT INTO {t} BY NAME {rows}")
            return []
        fresh = con.execute(rows).df()
    if needs_ids:
        fresh[id_column] = next_ids(con, table, len(fresh))
    if len(fresh):
        insert_frame(con, table, fresh)
    if not returning:
        return []
    with registered_frame(con, fresh[list(returning)]) as rel:   # the Python types RETURNING gives
        return con.execute(f"SELECT * FROM {rel}").fetchall()

"""Read-only ad hoc SQL for people: statements are checked, the connection cannot write."""

from __future__ import annotations

import os
from typing import Callable

import duckdb
import pandas as pd

from storage.db import DEFAULT_WAIT_SECONDS, StorageError, open_connection

ALLOWED_STATEMENTS = {duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN}


class ReadOnlyViolation(StorageError):
    """A statement that would change something, refused before it runs."""


def check_read_only(sql: str) -> None:
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as exc:
        raise StorageError(f"cannot parse SQL: {exc}") from exc
    if not statements:
        raise StorageError("no SQL statement given")
    for st in statements:
        if st.type not in ALLOWED_STATEMENTS:
            kind = str(st.type).rsplit(".", 1)[-1]
            raise ReadOnlyViolation(
                f"refused: `benchwatch query` is read-only and only runs SELECT/EXPLAIN statements "
                f"(got {kind}: {st.query.strip()[:80]!r})")


def run_query(sql: str, path: str | os.PathLike | None = None, *, wait: float = DEFAULT_WAIT_SECONDS,
              on_wait: Callable[[str], None] | None = None) -> pd.DataFrame:
    """Run read-only SQL; the result of the last statement as a DataFrame."""
    check_read_only(sql)
    con = open_connection(path, read_only=True, wait=wait, on_wait=on_wait, sandboxed=True)
    try:
        con.execute("SET TimeZone = 'UTC'")
        result = None
        for st in duckdb.extract_statements(sql):
            result = con.execute(st)
        return result.df()
    except duckdb.Error as exc:
        raise StorageError(f"query failed: {str(exc).splitlines()[0]}") from exc
    finally:
        con.close()

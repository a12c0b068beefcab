"""Tables corrected under a changed rule (migration 040, issue 49): recorded once, said once.

Migration 040 keeps the tables `latest_scores` showed before the per-table rule
(`table_corrections_basis`, with their models) and restores the rows the old duplicate key
dropped. `settle_corrections` compares that basis with the view as it is now and records each
table whose models in use changed, appeared or left (`table_corrections`); the digest reads
the records not yet notified (`pending_corrections`) and marks them when a message said so
(`mark_notified`), so the correction is one line per table instead of a burst of level changes.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Sequence

from storage.engine import duckdb

log = logging.getLogger("benchwatch.storage")


@dataclass(frozen=True)
class Correction:
    """One table a corrected rule changed: what changed, in a few words."""

    table_id: str
    detail: str
    corrected_at: datetime


def settle_corrections(con: duckdb.DuckDBPyConnection, *, now: datetime) -> int:
    """Record (once) the tables whose models in use the rule change of migration 040 changed;
    returns how many. The basis is emptied: a later call records nothing."""
    basis = con.execute("SELECT count(*) FROM table_corrections_basis").fetchone()
    if not basis or not basis[0]:
        return 0
    rows = con.execute("""
        WITH now_ AS (SELECT table_id, benchmark, source, coalesce(table_version, '') AS table_version,
                             count(DISTINCT model) AS n
                      FROM latest_scores GROUP BY ALL)
        SELECT coalesce(b.table_id, n.table_id) AS table_id, b.n_models, n.n,
               coalesce(n.benchmark, b.benchmark), coalesce(n.source, b.source),
               coalesce(n.table_version, b.table_version)
        FROM table_corrections_basis b FULL JOIN now_ n USING (table_id)
        WHERE b.n_models IS DISTINCT FROM n.n
        ORDER BY 1""").fetchall()
    def models(n: int) -> str:
        return f"{n} model{'' if n == 1 else 's'}"
    details = [(t, f"{before} -> {models(after)} in use" if before is not None and after is not None
                else f"now in use ({models(after)})" if before is None
                else f"no longer in use (was {models(before)})", key)
               for t, before, after, *key in rows]
    if details:
        con.executemany("INSERT INTO table_corrections (table_id, detail, corrected_at, benchmark, source, "
                        "table_version) VALUES (?, ?, ?, ?, ?, ?)",
                        [[t, d, now, *key] for t, d, key in details])
        log.warning("[storage] %d leaderboard table(s) corrected by the per-table rule (migration 040): %s",
                    len(details), ", ".join(t for t, _, _ in details[:5]) + (" …" if len(details) > 5 else ""))
    con.execute("DELETE FROM table_corrections_basis")
    return len(details)


def pending_corrections(con: duckdb.DuckDBPyConnection) -> list[Correction]:
    """The recorded corrections no digest has said yet, by table."""
    return [Correction(t, d, c) for t, d, c in con.execute(
        "SELECT table_id, detail, corrected_at FROM table_corrections WHERE notified_at IS NULL "
        "ORDER BY table_id, corrected_at").fetchall()]


def mark_notified(con: duckdb.DuckDBPyConnection, corrections: Sequence[Correction], *, now: datetime) -> None:
    """The digest said these corrections: never again."""
    if corrections:
        con.executemany("UPDATE table_corrections SET notified_at = ? WHERE table_id = ? AND corrected_at = ?",
                        [[now, c.table_id, c.corrected_at] for c in corrections])

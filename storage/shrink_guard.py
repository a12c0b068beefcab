"""The shrink guard: a snapshot whose tables shrank is held, table by table.

A snapshot in which some table — a benchmark's scores of one
`table_version` (a release, a board: a top-30 list is its own table, never compared with the
full one), or a benchmark's item results — has dropped more than `SHRINK_MAX_DROP` of the rows
of the table's recent maximum (the largest of the previous usable snapshot of the same source
that has that table and those within `SHRINK_LOOKBACK` before it, back to the newest accepted or
confirmed one: gradual shrinking is held too) is stored with status `held` and the tables that
shrank in `held_tables`: those are kept out of `latest_scores`, `latest_item_results` and the
analysis; its other tables are used (the table is the unit). A truncated download (a CSV or markdown table cut at a
line boundary: a new user's was cut to 55 %) looks exactly like this. A source that prunes on
purpose sets its own limit (`Scraper.shrink_max_drop`). It is released when a later
*collection* (fetch or replay, not a re-ingested file) sees the same content again (status
`confirmed`: the source really serves it) or by `benchwatch accept SNAPSHOT` (status
`accepted`).

The guard runs inside the snapshot's own transaction (storage/ingest.py `finish_snapshot`), after
its rows are written: it compares their counts.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Sequence

from storage.engine import duckdb

log = logging.getLogger("benchwatch.storage")

# A snapshot that drops more than this share of a table's rows (vs the source's previous usable
# snapshot of that table) is held; a source that prunes on purpose sets Scraper.shrink_max_drop.
SHRINK_MAX_DROP = 0.20
# The guard compares with the table's largest size over this span before a snapshot (and always
# with the previous snapshot), back to the newest snapshot accepted or confirmed: a table that
# shrinks a little at a time (100 -> 81 -> 66 -> 54, each step under the limit) is held too.
SHRINK_LOOKBACK = timedelta(days=90)


def shrink_max_drop(own: float | None) -> float:
    """The share of a table's rows a snapshot may drop before it is held: the source's own limit
    (`Scraper.shrink_max_drop`, handed down with its rows) when it declares one, else SHRINK_MAX_DROP."""
    return SHRINK_MAX_DROP if own is None else float(own)


def shrink_reason(con: duckdb.DuckDBPyConnection, source: str, snapshot_id: int, observed_at: datetime, *,
                  max_drop: float | None = None) -> str:
    """Why snapshot `snapshot_id` (its rows already written) must be held, or '' (`shrink_check`)."""
    return shrink_check(con, source, snapshot_id, observed_at, max_drop=max_drop)[0]


def held_table_key(kind: str, benchmark: str, version: str = "") -> str:
    """A table's key in `snapshots.held_tables` (migration 041): 'scores' or 'items', benchmark,
    table_version, joined by chr(31) (the reads repeat it: 'items' has no version)."""
    return f"scores\x1f{benchmark}\x1f{version}" if kind == "scores" else f"items\x1f{benchmark}"


def shrink_check(con: duckdb.DuckDBPyConnection, source: str, snapshot_id: int, observed_at: datetime, *,
                 max_drop: float | None = None) -> tuple[str, list[str]]:
    """Why snapshot `snapshot_id` (its rows already written) must be held, or '' (the shrink guard),
    and the keys of the tables that shrank (`held_table_key`): only those are kept out; the
    snapshot's other tables are used.

    For each table it has (a benchmark's scores of one table_version; a benchmark's item results),
    compare its row count with the table's recent maximum: the largest count among the usable
    (non-held) snapshots of the source having that table observed before it — the previous one,
    and those within SHRINK_LOOKBACK, back to the newest accepted or confirmed one (a size a
    person or the source confirmed is the new reference). Held when some table dropped more
    than `shrink_max_drop(max_drop)` of its rows.
    """
    max_drop = shrink_max_drop(max_drop)
    rows = con.execute("""
        WITH counts AS (
            SELECT 'scores' AS kind, snapshot_id, benchmark, coalesce(table_version, '') AS version,
                   count(*) AS n FROM scores
            WHERE source = $source GROUP BY ALL
            UNION ALL
            SELECT 'item results', snapshot_id, benchmark, '', count(*) FROM item_results
            WHERE source = $source GROUP BY ALL),
        new AS (SELECT kind, benchmark, version, n FROM counts WHERE snapshot_id = $id),
        prev AS (        -- the usable snapshots of each table observed before it, newest first
            SELECT c.kind, c.benchmark, c.version, c.n, c.snapshot_id, sn.observed_at,
                   row_number() OVER t AS rn,
                   max(CASE WHEN sn.status IN ('accepted', 'confirmed') THEN (sn.observed_at, sn.id) END) OVER t
                       AS released
            FROM counts c JOIN snapshots sn ON sn.id = c.snapshot_id
            WHERE c.snapshot_id <> $id
              AND (sn.status IS DISTINCT FROM 'held'      -- a held snapshot's tables that did not shrink (041)
                   OR NOT coalesce(list_contains(sn.held_tables, CASE c.kind WHEN 'scores'
                        THEN 'scores' || chr(31) || c.benchmark || chr(31) || c.version
                        ELSE 'items' || chr(31) || c.benchmark END), true))
              AND (sn.observed_at < $at OR (sn.observed_at = $at AND sn.id < $id))
            WINDOW t AS (PARTITION BY c.kind, c.benchmark, c.version ORDER BY sn.observed_at DESC, sn.id DESC
                         ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)),
        reference AS (   -- the table's recent maximum: the previous snapshot and those within the
                         -- lookback, back to the newest size a person or a re-fetch released
            SELECT p.kind, p.benchmark, p.version, max(p.n) AS n, arg_max(p.snapshot_id, p.n) AS snapshot_id
            FROM prev p JOIN snapshots sn ON sn.id = p.snapshot_id
            WHERE p.rn = 1 OR (p.observed_at >= $since
                               AND (p.released IS NULL OR (sn.observed_at, sn.id) >= p.released))
            GROUP BY ALL)
        SELECT new.kind, new.benchmark, new.version, new.n, prev.n, prev.snapshot_id
        FROM new JOIN reference prev USING (kind, benchmark, version)
        WHERE prev.n - new.n > $drop * prev.n
        ORDER BY new.n / prev.n, new.benchmark, new.version""",
        {"source": source, "id": snapshot_id, "at": observed_at, "drop": max_drop,
         "since": observed_at - SHRINK_LOOKBACK}).fetchall()
    if not rows:
        return "", []
    shown = "; ".join(f"{b}{f' ({v})' if v else ''}: {n} {kind} vs {p} in snapshot {sid}"
                      for kind, b, v, n, p, sid in rows[:3])
    more = f" (+{len(rows) - 3} more)" if len(rows) > 3 else ""
    keys = [held_table_key("scores" if kind == "scores" else "items", b, v) for kind, b, v, *_ in rows]
    return (f"dropped more than {max_drop:.0%} of a table's rows (its recent maximum; only these tables are "
            f"held): {shown}{more}"), keys


def confirm_held(con: duckdb.DuckDBPyConnection, snapshot_ids: Sequence[int], now: datetime) -> None:
    """Held snapshots whose content a later collection saw again: the source really serves them
    (released as confirmed)."""
    con.execute("UPDATE snapshots SET status = 'confirmed', released_at = ? WHERE list_contains(?::BIGINT[], id)",
                [now, list(snapshot_ids)])
    for snapshot_id in snapshot_ids:
        log.warning("[storage] held snapshot %d seen again on a later fetch: released (confirmed)", snapshot_id)

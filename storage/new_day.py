"""The stored analysis moved to a new day without new data (issue 23): only the columns that are
relative to the day of the analysis change, in place, in one transaction.

A full analysis on that day would compute the same rows; what differs is the day itself:

- `trends`: `as_of` (= now) and `stale_days` (= whole days from `trend_end` to now, truncated
  as analysis.trends computes it), for the rows of parameter `k`;
- the newest contamination run: its `run_at`, its post-cutoff scores' `window_end` (= now), and
  the `updated_at` of the open suspicions it tested (analysis.contamination.suspicions: a run
  over the same data moves nothing else).

jobs/analyze.py decides when this applies (the inputs' fingerprint without the day unchanged).
"""

from __future__ import annotations

from datetime import datetime

from storage.db import transaction
from storage.engine import duckdb

# The newest contamination run, as storage.contamination reads it.
_LAST_RUN = "(SELECT run_id FROM contamination_runs ORDER BY run_at DESC, run_id LIMIT 1)"


def day_sensitive_counts(con: duckdb.DuckDBPyConnection, now: datetime) -> tuple[int, int, int]:
    """How many stored inputs lie after `now`: score rows (evaluated, else observed), dated items,
    claimed release dates. Time only moves forward, so the same counts on a later day mean the
    same rows: nothing came into the analysis's window (one statement)."""
    row = con.execute("""
        SELECT (SELECT count(*) FROM scores sc JOIN snapshots sn ON sn.id = sc.snapshot_id
                WHERE coalesce(sc.evaluated_at, sn.observed_at) > $now),
               (SELECT count(*) FROM item_results WHERE item_date > CAST($now AS DATE)),
               (SELECT count(*) FROM model_cutoffs WHERE CAST(release_date AS TIMESTAMPTZ) > $now)""",
                      {"now": now}).fetchone()
    return (0, 0, 0) if row is None else (int(row[0]), int(row[1]), int(row[2]))


def move_to_day(con: duckdb.DuckDBPyConnection, now: datetime, *, k: int, resolved_state: str) -> None:
    """Set the day-relative columns of the stored analysis to the day of `now` (module docstring);
    `resolved_state`: the suspicion state a run leaves alone."""
    with transaction(con):
        con.execute("""
            UPDATE trends SET as_of = $now,
                   stale_days = CASE WHEN trend_end IS NULL THEN NULL
                                     ELSE CAST(trunc((epoch_us(CAST($now AS TIMESTAMPTZ)) - epoch_us(trend_end))
                                                     / 86400000000.0) AS INTEGER) END
            WHERE k = $k""", {"now": now, "k": k})
        con.execute(f"UPDATE contamination_runs SET run_at = $now WHERE run_id = {_LAST_RUN}", {"now": now})
        con.execute(f"""UPDATE post_cutoff_slices SET window_end = timezone('UTC', CAST($now AS TIMESTAMPTZ))
                        WHERE run_id = {_LAST_RUN}""", {"now": now})
        con.execute(f"""
            UPDATE contamination_suspicions s SET updated_at = $now
            WHERE s.state <> $resolved AND s.run_id = {_LAST_RUN} AND EXISTS (
                SELECT 1 FROM contamination_signals t
                WHERE t.run_id = s.run_id AND t.model = s.model AND t.benchmark = s.benchmark
                  AND coalesce(t.source, '') = s.source AND t.signal = s.signal
                  AND coalesce(t.detail, '') = s.detail)""", {"now": now, "resolved": resolved_state})

-- The rows of the snapshot history that signals A1 and A2 can read (issue 22: the pruning rule
-- owned by analysis/, executed by storage.contamination.read_snapshot_history; its pandas
-- twin is the test oracle in tests/system/test_history_pruned.py, which requires both to keep the
-- same rows and the pruned history to give the full history's signals).
--
-- A2 compares a series' last two values and A1/A2 read models' scores on the reference
-- benchmarks as of any time. So a row is kept when its benchmark is a reference benchmark,
-- when it has no model, when its series (source, benchmark, model, setting) has fewer than
-- two usable snapshots, or when it is at or after the second-to-last of them. A usable
-- snapshot of a series is one whose row surely survives
-- analysis.contamination.base.prepare_scores: a proportion score (metric NULL counts as
-- one), not NULL or NaN, with n_items. Snapshots are ordered by (observed_at, snapshot_id).
--
-- Placeholder: history, in braces (storage's usable rows of every snapshot: `sc` scores joined to
-- `sn` snapshots, ending in a WHERE clause). Parameters: the benchmarks of this range, the
-- reference benchmarks.
WITH rows AS ({history} AND list_contains(?, sc.benchmark)),
-- each series' second-to-last usable snapshot (none with fewer than two): the top two of its
-- distinct (observed_at, snapshot_id) in one aggregate, not a window sorting every row (~half the time)
second_last AS (
    SELECT source, benchmark, model, setting_key, last2[2].observed_at AS observed_at,
           last2[2].snapshot_id AS snapshot_id
    FROM (SELECT source, benchmark, model, setting_key,
                 max(struct_pack(observed_at := observed_at, snapshot_id := snapshot_id), 2) AS last2
          FROM (SELECT DISTINCT source, benchmark, model, coalesce(setting, '') AS setting_key,
                                observed_at, snapshot_id
                FROM rows
                WHERE coalesce(metric, 'proportion') = 'proportion' AND score IS NOT NULL
                  AND NOT isnan(score) AND n_items IS NOT NULL)
          GROUP BY ALL)
    WHERE len(last2) = 2
)
SELECT r.* FROM rows r
LEFT JOIN second_last s ON s.source = r.source AND s.benchmark = r.benchmark AND s.model = r.model
                       AND s.setting_key = coalesce(r.setting, '')
WHERE list_contains(?, r.benchmark) OR r.model IS NULL OR s.observed_at IS NULL
   OR r.observed_at > s.observed_at OR (r.observed_at = s.observed_at AND r.snapshot_id >= s.snapshot_id)

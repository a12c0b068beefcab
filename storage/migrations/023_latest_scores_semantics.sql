-- 023: latest_scores shows what a row means (issue 20; the columns are 017's): table_version,
-- is_reference (a reference / baseline row: shown, never in a top k; the reads that feed a top k
-- leave it out) and reported_by ('vendor' = a number the leaderboard copied from its vendor).
-- Redefined in full (was 010), the same rows as before.
CREATE OR REPLACE VIEW latest_scores AS
WITH newest AS (
    SELECT sc.source, sc.benchmark, max_by(sn.id, (sn.observed_at, sn.id)) AS snapshot_id
    FROM scores sc JOIN snapshots sn ON sn.id = sc.snapshot_id
    WHERE sn.status IS DISTINCT FROM 'held'
    GROUP BY sc.source, sc.benchmark
)
SELECT sc.source, sc.benchmark, sc.model, sc.score, sc.metric, sc.stderr, sc.n_items,
       sn.observed_at, sc.setting, sc.model_raw, sc.benchmark_raw, sc.ci_low, sc.ci_high,
       sc.model_release_date, sc.knowledge_cutoff, sc.evaluated_at, sc.snapshot_id,
       sc.variant, sc.population, sc.underlying,            -- identity columns of 007
       sc.table_version, coalesce(sc.is_reference, false) AS is_reference, sc.reported_by,  -- 017
       sc.benchmark || ':' || sc.source                                    -- 018: registry.tables.table_id
           || CASE WHEN coalesce(sc.table_version, '') = '' THEN '' ELSE ':' || sc.table_version END AS table_id
FROM scores sc
JOIN newest n USING (source, benchmark, snapshot_id)
JOIN snapshots sn ON sn.id = sc.snapshot_id
WHERE sc.excluded_reason = '';

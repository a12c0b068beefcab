-- Every committed level change of each saturation series (table, scope, population, k, alpha):
-- the stored hysteresis levels (saturation.level, migration 020) compared with the previous
-- row's, so "which tables became saturated in 2025" is a WHERE clause. A series' first level is a
-- row with from_level NULL. Legacy pooled rows (migration 018) are not a table.
CREATE OR REPLACE VIEW level_changes AS
WITH series AS (
    SELECT benchmark, table_id, source, scope, population, k, alpha, as_of, level, s_index, bin,
           lag(level) OVER (PARTITION BY table_id, scope, population, k, alpha ORDER BY as_of) AS from_level
    FROM saturation
    WHERE source IS DISTINCT FROM 'pooled-legacy' AND level IS NOT NULL
)
SELECT benchmark, table_id, from_level, level AS to_level, as_of AS changed_at,
       CASE WHEN from_level IS NULL THEN 'first'
            WHEN list_position(['very low', 'low', 'moderate', 'high', 'very high'], level)
                 > list_position(['very low', 'low', 'moderate', 'high', 'very high'], from_level) THEN 'up'
            ELSE 'down' END AS direction,
       source, scope, population, k, alpha, s_index, bin
FROM series
WHERE from_level IS DISTINCT FROM level;

COMMENT ON VIEW level_changes IS 'committed change of a table''s saturation level (after hysteresis), and each series'' first level (from_level NULL): "what became saturated in 2025" is WHERE to_level IN (''high'', ''very high'') AND from_level NOT IN (''high'', ''very high'') AND year(changed_at) = 2025';
COMMENT ON COLUMN level_changes.benchmark IS 'canonical benchmark id';
COMMENT ON COLUMN level_changes.table_id IS 'the leaderboard table: benchmark:source[:version] or benchmark:pooled';
COMMENT ON COLUMN level_changes.from_level IS 'the level before (NULL: the series'' first level)';
COMMENT ON COLUMN level_changes.to_level IS 'the level committed: very low | low | moderate | high | very high (high and very high: saturated)';
COMMENT ON COLUMN level_changes.changed_at IS 'as_of of the snapshot-level row that committed it (its newest observation)';
COMMENT ON COLUMN level_changes.direction IS 'up | down (along very low .. very high) | first';
COMMENT ON COLUMN level_changes.source IS 'the table''s source (''pooled'' for a declared pool)';
COMMENT ON COLUMN level_changes.scope IS 'all | post_cutoff';
COMMENT ON COLUMN level_changes.population IS 'models | systems | systems_per_model';
COMMENT ON COLUMN level_changes.k IS 'how many top entries the index compares';
COMMENT ON COLUMN level_changes.alpha IS 'n_eff = n ** alpha';
COMMENT ON COLUMN level_changes.s_index IS 'S of the committing row';
COMMENT ON COLUMN level_changes.bin IS 'the raw bin of that S (may differ from to_level: hysteresis)';

-- Every change of a saturation series' level (table, scope, population, k, alpha), from two
-- histories told apart by `basis`, so "which tables became saturated in 2025" is a WHERE clause:
--   history  the bins of saturation_history: S reconstructed in calendar time from each result's
--            own date (how the table got there; raw bins, no hysteresis, so a bin near an edge
--            may move back and forth);
--   alerts   the committed levels of the snapshot-level rows (saturation.level after hysteresis,
--            migration 020): what the saturation alert announces, dated when it was committed.
-- A series' first level is a row with from_level NULL. Legacy pooled rows (018) are not a table.
CREATE OR REPLACE VIEW level_changes AS
WITH history AS (
    SELECT benchmark, table_id, source, scope, population, k, alpha, as_of, bin AS level, s_index,
           lag(bin) OVER (PARTITION BY table_id, scope, population, k, alpha ORDER BY as_of) AS from_level
    FROM saturation_history
    WHERE bin IS NOT NULL
), alerts AS (
    -- dated when the level was committed (level_since: a row's as_of, or the day a move had
    -- stood LEVEL_DWELL_DAYS, analysis/hysteresis.py), not by the row it is stored on
    SELECT benchmark, table_id, source, scope, population, k, alpha, coalesce(level_since, as_of) AS as_of,
           level, s_index, from_level
    FROM (SELECT *, lag(level) OVER (PARTITION BY table_id, scope, population, k, alpha ORDER BY as_of) AS from_level
          FROM saturation
          WHERE source IS DISTINCT FROM 'pooled-legacy' AND level IS NOT NULL)
), changes AS (
    SELECT *, 'history' AS basis FROM history WHERE from_level IS DISTINCT FROM level
    UNION ALL
    SELECT *, 'alerts' AS basis FROM alerts WHERE from_level IS DISTINCT FROM level
)
SELECT benchmark, table_id, from_level, level AS to_level, as_of AS changed_at, basis,
       CASE WHEN from_level IS NULL THEN 'first'
            WHEN list_position(['very low', 'low', 'moderate', 'high', 'very high'], level)
                 > list_position(['very low', 'low', 'moderate', 'high', 'very high'], from_level) THEN 'up'
            ELSE 'down' END AS direction,
       source, scope, population, k, alpha, s_index
FROM changes;

COMMENT ON VIEW level_changes IS 'change of a table''s saturation level (and each series'' first level, from_level NULL), basis ''history'' (calendar time, saturation_history''s bins) or ''alerts'' (committed levels after hysteresis, as the alerts announce them): what became saturated in 2025 is WHERE basis = ''history'' AND to_level IN (''high'', ''very high'') AND from_level NOT IN (''high'', ''very high'') AND year(changed_at) = 2025';
COMMENT ON COLUMN level_changes.benchmark IS 'canonical benchmark id';
COMMENT ON COLUMN level_changes.table_id IS 'the leaderboard table: benchmark:source[:version] or benchmark:pooled';
COMMENT ON COLUMN level_changes.from_level IS 'the level before: very low | low | moderate | high | very high (NULL: the series'' first level)';
COMMENT ON COLUMN level_changes.to_level IS 'the level after (high and very high: saturated)';
COMMENT ON COLUMN level_changes.changed_at IS 'history: the date from which the top k gave the new bin; alerts: when the level was committed (level_since: an observation, or the day a move had stood 7 days)';
COMMENT ON COLUMN level_changes.basis IS 'history (saturation_history: reconstructed in calendar time, raw bins) | alerts (saturation.level: observed snapshots, after hysteresis)';
COMMENT ON COLUMN level_changes.direction IS 'up | down (along very low .. very high) | first';
COMMENT ON COLUMN level_changes.source IS 'the table''s source (''pooled'' for a declared pool)';
COMMENT ON COLUMN level_changes.scope IS 'all | post_cutoff';
COMMENT ON COLUMN level_changes.population IS 'models | systems | systems_per_model';
COMMENT ON COLUMN level_changes.k IS 'how many top entries the index compares';
COMMENT ON COLUMN level_changes.alpha IS 'n_eff = n ** alpha';
COMMENT ON COLUMN level_changes.s_index IS 'S at changed_at';

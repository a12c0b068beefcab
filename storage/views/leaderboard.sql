-- One row per (leaderboard table, population, model): the model's best row of latest_scores
-- (effort levels, precision builds, settings and labels are variants of one model), the variant
-- that gave it named, ranked within its table and population. Models and systems are split
-- before the best is chosen ({{entity_key}}: common.naming.ENTITY_KEY), so a model's custom
-- system run never hides its standard runs. "Best" follows the metric's direction (common.units).
CREATE OR REPLACE VIEW leaderboard AS
WITH signed AS (
    SELECT *, CASE WHEN metric IN ({{lower_is_better}}) THEN -score ELSE score END AS _better
    FROM latest_scores
), best AS (
    SELECT *, count(*) OVER (PARTITION BY {{entity_key}}) AS n_variants
    FROM signed
    QUALIFY row_number() OVER (PARTITION BY {{entity_key}}
                               ORDER BY is_reference, _better DESC, variant, setting, model_raw) = 1
)
SELECT table_id, benchmark, source, table_version, population,
       CASE WHEN NOT is_reference
            THEN rank() OVER (PARTITION BY table_id, population, metric, is_reference ORDER BY _better DESC) END AS rank,
       model, EXISTS (SELECT 1 FROM models m WHERE m.id = best.model) AS model_known,
       coalesce((SELECT m.name FROM models m WHERE m.id = best.model), model) AS model_name,
       score, metric, stderr, ci_low, ci_high, n_items,
       variant, setting, model_raw, n_variants, is_reference, reported_by, underlying,
       model_release_date, evaluated_at, observed_at, snapshot_id
FROM best;

COMMENT ON VIEW leaderboard IS 'leaderboard table, population and model: the model''s best variant in the newest snapshot among its rows of that population (latest_scores keeps every variant), the variant named, ranked within the table and population';
COMMENT ON COLUMN leaderboard.table_id IS 'the leaderboard table: benchmark:source[:table_version]';
COMMENT ON COLUMN leaderboard.benchmark IS 'canonical benchmark id';
COMMENT ON COLUMN leaderboard.source IS 'the leaderboard site';
COMMENT ON COLUMN leaderboard.table_version IS 'the release of the question set the source states ('''' or NULL: unversioned)';
COMMENT ON COLUMN leaderboard.population IS 'models (model runs) | systems (agent systems): rank is within one population';
COMMENT ON COLUMN leaderboard.rank IS 'rank of the best variant among the table''s entries of the same population and metric (1 = best; ties share a rank; NULL for a reference row)';
COMMENT ON COLUMN leaderboard.model IS 'canonical model id when known (model_known), else the page''s name without its variant markers; a system''s own name';
COMMENT ON COLUMN leaderboard.model_name IS 'the model''s display name: the registry''s (models.name) when model_known, else the page''s name without its variant markers (model); the page''s own name is model_raw';
COMMENT ON COLUMN leaderboard.model_known IS 'true: model is a registry id (model_info.model); false: the page''s name, unknown to the registry (benchwatch status lists model runs'' ones)';
COMMENT ON COLUMN leaderboard.score IS 'the best variant''s score (a proportion in [0, 1] for accuracy-like metrics)';
COMMENT ON COLUMN leaderboard.metric IS 'kind of score: proportion | elo | score_10 | index | cost_usd (lower is better: best = smallest) | minutes (a time horizon)';
COMMENT ON COLUMN leaderboard.stderr IS 'standard error the page states for that variant (NULL: none)';
COMMENT ON COLUMN leaderboard.ci_low IS 'lower end of the interval the page states for that variant (NULL: none)';
COMMENT ON COLUMN leaderboard.ci_high IS 'upper end of the interval the page states for that variant (NULL: none)';
COMMENT ON COLUMN leaderboard.n_items IS 'test-set size the page states for that variant (NULL: not stated)';
COMMENT ON COLUMN leaderboard.variant IS 'the variant that gave the best score: ''effort=high'', ''label=report'', '''' for the plain model';
COMMENT ON COLUMN leaderboard.setting IS 'the page''s evaluation setting of that variant ('''' for none)';
COMMENT ON COLUMN leaderboard.model_raw IS 'the page''s name of that variant';
COMMENT ON COLUMN leaderboard.n_variants IS 'rows the model has in the table and population in latest_scores (1: no other variant)';
COMMENT ON COLUMN leaderboard.is_reference IS 'a reference/baseline row: shown, never ranked';
COMMENT ON COLUMN leaderboard.reported_by IS '''vendor'' when the board copied the vendor''s own number (NULL: measured by the board)';
COMMENT ON COLUMN leaderboard.underlying IS 'for a system: the one canonical model it runs on (NULL: unknown or several)';
COMMENT ON COLUMN leaderboard.model_release_date IS 'release date of the model the page states (NULL: none)';
COMMENT ON COLUMN leaderboard.evaluated_at IS 'when the page says that variant was evaluated (NULL: not stated)';
COMMENT ON COLUMN leaderboard.observed_at IS 'when the snapshot was observed (UTC)';
COMMENT ON COLUMN leaderboard.snapshot_id IS 'the snapshot the row comes from (snapshots.id)';

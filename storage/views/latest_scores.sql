-- Each source's newest non-held snapshot per benchmark, with the leaderboard table each row
-- belongs to (the expression of registry.tables.table_id; a declared pool is applied by the
-- analysis) and what a row means (017). Rows of one snapshot that map to one canonical
-- (benchmark, model, setting) are excluded at store time after the first (excluded_reason).
CREATE OR REPLACE VIEW latest_scores AS
WITH newest AS (   -- the snapshots of each (source, benchmark) first: one small row per snapshot, not per score
    SELECT sc.source, sc.benchmark, max_by(sn.id, (sn.observed_at, sn.id)) AS snapshot_id
    FROM (SELECT DISTINCT source, benchmark, snapshot_id FROM scores) sc JOIN snapshots sn ON sn.id = sc.snapshot_id
    WHERE sn.status IS DISTINCT FROM 'held'
    GROUP BY sc.source, sc.benchmark
)
SELECT sc.source, sc.benchmark, sc.model, sc.score, sc.metric, sc.stderr, sc.n_items,
       sn.observed_at, sc.setting, sc.model_raw, sc.benchmark_raw, sc.ci_low, sc.ci_high,
       sc.model_release_date, sc.knowledge_cutoff, sc.evaluated_at, sc.snapshot_id,
       sc.variant, sc.population, sc.underlying,
       sc.table_version, coalesce(sc.is_reference, false) AS is_reference, sc.reported_by,
       sc.benchmark || ':' || sc.source
           || CASE WHEN coalesce(sc.table_version, '') = '' THEN '' ELSE ':' || sc.table_version END AS table_id
FROM scores sc
JOIN newest n USING (source, benchmark, snapshot_id)
JOIN snapshots sn ON sn.id = sc.snapshot_id
WHERE sc.excluded_reason = '';

COMMENT ON VIEW latest_scores IS 'score row in the newest non-held snapshot of each (source, benchmark), raw: a model with several variants (effort levels, settings) has several rows — `leaderboard` keeps its best; adversarial/test entries and second raw names of one model (o3/O3) excluded';
COMMENT ON COLUMN latest_scores.source IS 'the leaderboard site (a scraper name: lmarena, swebench, …)';
COMMENT ON COLUMN latest_scores.benchmark IS 'canonical benchmark id (benchmark_info.benchmark) when known, else the page''s name';
COMMENT ON COLUMN latest_scores.model IS 'canonical model id (model_info.model) when known, else the page''s name';
COMMENT ON COLUMN latest_scores.score IS 'the score as a number: a proportion in [0, 1] for accuracy-like metrics, else in the unit `metric` names';
COMMENT ON COLUMN latest_scores.metric IS 'kind of score: proportion | elo | score_10 | index | cost_usd (lower is better) | minutes (a time horizon)';
COMMENT ON COLUMN latest_scores.stderr IS 'standard error the page states (NULL: none stated)';
COMMENT ON COLUMN latest_scores.n_items IS 'test-set size the page states for the row (NULL: not stated)';
COMMENT ON COLUMN latest_scores.observed_at IS 'when the snapshot holding the row was observed (UTC)';
COMMENT ON COLUMN latest_scores.setting IS 'the page''s evaluation setting of the row ('''' for none)';
COMMENT ON COLUMN latest_scores.model_raw IS 'the model name exactly as the page writes it';
COMMENT ON COLUMN latest_scores.benchmark_raw IS 'the benchmark name exactly as the page writes it';
COMMENT ON COLUMN latest_scores.ci_low IS 'lower end of the confidence interval the page states (NULL: none)';
COMMENT ON COLUMN latest_scores.ci_high IS 'upper end of the confidence interval the page states (NULL: none)';
COMMENT ON COLUMN latest_scores.model_release_date IS 'release date of the model the page states (NULL: none)';
COMMENT ON COLUMN latest_scores.knowledge_cutoff IS 'knowledge cutoff of the model the page states (NULL: none)';
COMMENT ON COLUMN latest_scores.evaluated_at IS 'when the page says the row was evaluated (NULL: not stated)';
COMMENT ON COLUMN latest_scores.snapshot_id IS 'the snapshot the row comes from (snapshots.id)';
COMMENT ON COLUMN latest_scores.variant IS 'what separates the row from others of its model: ''effort=high'', ''label=report'', '''' for none';
COMMENT ON COLUMN latest_scores.population IS 'models (a model run) | systems (an agent system: a scaffold over models)';
COMMENT ON COLUMN latest_scores.underlying IS 'for a system: the one canonical model it runs on (NULL: unknown or several)';
COMMENT ON COLUMN latest_scores.table_version IS 'the release of the question set the source states ('''' or NULL: unversioned)';
COMMENT ON COLUMN latest_scores.is_reference IS 'a reference/baseline row (AlpacaEval''s reference model at 50 %): shown, never in a top k';
COMMENT ON COLUMN latest_scores.reported_by IS '''vendor'' when the leaderboard copied the vendor''s own number (NULL: measured by the board)';
COMMENT ON COLUMN latest_scores.table_id IS 'the leaderboard table: benchmark:source[:table_version] (one question set under one harness)';

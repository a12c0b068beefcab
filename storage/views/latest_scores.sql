-- Each leaderboard table's newest non-held snapshot (a table is (benchmark, source,
-- table_version): common.table_ids), for the tables their source still serves: the
-- newest release of a source's releases, by the release's own date (never by the order its
-- snapshots were stored in); a board (a split, a version, none) while the source's newest
-- snapshot of the benchmark's boards holds it; a partial page (top<N>) only while the source has
-- no full board of the benchmark (registry.tables.version_kind, repeated here). Rows of one table
-- of one snapshot that map to one canonical (benchmark, model, setting) are excluded at store time
-- after the first (excluded_reason).
CREATE OR REPLACE VIEW latest_scores AS
WITH tables AS (   -- one small row per (table, snapshot) first, not per score
    SELECT DISTINCT source, benchmark, coalesce(table_version, '') AS version, snapshot_id FROM scores
), newest AS (     -- each table's newest usable snapshot
    SELECT t.source, t.benchmark, t.version, max_by(sn.id, (sn.observed_at, sn.id)) AS snapshot_id,
           max((sn.observed_at, sn.id)) AS seen,
           CASE WHEN regexp_full_match(t.version, '\d{4}-\d{2}-\d{2}') THEN 'release'
                WHEN regexp_full_match(t.version, 'top\d+') THEN 'partial' ELSE 'board' END AS kind
    FROM tables t JOIN snapshots sn ON sn.id = t.snapshot_id
    WHERE sn.status IS DISTINCT FROM 'held'         -- a held snapshot's tables that did not shrink are used (041)
       OR NOT coalesce(list_contains(sn.held_tables, 'scores' || chr(31) || t.benchmark || chr(31) || t.version), true)
    GROUP BY t.source, t.benchmark, t.version
), ranked AS (
    SELECT *, max(version) FILTER (WHERE kind = 'release') OVER w AS newest_release,
           max(seen) FILTER (WHERE kind = 'board') OVER w AS newest_board,
           max(seen) FILTER (WHERE kind = 'partial') OVER w AS newest_page,
           count(*) FILTER (WHERE kind <> 'partial') OVER w AS full_tables
    FROM newest
    WINDOW w AS (PARTITION BY source, benchmark)
), current AS (    -- the tables the source still serves
    SELECT source, benchmark, version, snapshot_id FROM ranked
    WHERE CASE kind WHEN 'release' THEN version = newest_release
                    WHEN 'board' THEN seen = newest_board
                    ELSE full_tables = 0 AND seen = newest_page END
)
SELECT sc.source, sc.benchmark, sc.model, sc.score, sc.metric, sc.stderr, sc.n_items,
       sn.observed_at, sc.setting, sc.model_raw, sc.benchmark_raw, sc.ci_low, sc.ci_high,
       sc.model_release_date, sc.knowledge_cutoff, sc.evaluated_at, sc.snapshot_id,
       sc.variant, sc.population, sc.underlying,
       sc.table_version, coalesce(sc.is_reference, false) AS is_reference, sc.reported_by,
       {{table_id(sc.benchmark, sc.source, sc.table_version)}} AS table_id
FROM scores sc
JOIN current c ON c.source = sc.source AND c.benchmark = sc.benchmark AND c.snapshot_id = sc.snapshot_id
                 AND c.version = coalesce(sc.table_version, '')
JOIN snapshots sn ON sn.id = sc.snapshot_id
WHERE sc.excluded_reason = '';

COMMENT ON VIEW latest_scores IS 'score row in the newest non-held snapshot of each leaderboard table its source still serves (the newest release by its own date; a board in the source''s newest snapshot of the benchmark; a top-N page only without a full board), raw: a model with several variants (effort levels, settings) has several rows — `leaderboard` keeps its best; adversarial/test entries and second raw names of one model (o3/O3) excluded';
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

-- Newest snapshot-level saturation row per current table, scope, population, k and alpha: a
-- release its source has replaced (benchmark_tables.is_current false) keeps its rows in
-- `saturation`, not a current level; legacy pooled rows (migration 018) are not a table.
-- Every column of `saturation` (so a column a migration adds is listed; comment it here).
-- `top_names` and `top_known` (issue 51): each top model's registry display name (its identified
-- name when the registry does not know it), and whether it is a registry id, beside the
-- canonical ids (`top_models`) and the pages' names (`top_variants`).
CREATE OR REPLACE VIEW saturation_latest AS
WITH registry_names AS (SELECT map(list(id), list(name)) AS names FROM models)
SELECT s.*,
       list_transform(s.top_models, m -> coalesce(r.names[m], m)) AS top_names,
       list_transform(s.top_models, m -> r.names[m] IS NOT NULL) AS top_known
FROM saturation s, registry_names r
WHERE s.source IS DISTINCT FROM 'pooled-legacy'
  AND s.table_id NOT IN (SELECT table_id FROM benchmark_tables WHERE NOT coalesce(is_current, true))
QUALIFY row_number() OVER (PARTITION BY s.table_id, s.scope, s.population, s.k, s.alpha ORDER BY s.as_of DESC) = 1;

COMMENT ON VIEW saturation_latest IS 'current leaderboard table, scope and population (and k, alpha): its newest saturation index S with the committed `level` — never across tables, sources or releases';
COMMENT ON COLUMN saturation_latest.table_id IS 'the leaderboard table: benchmark:source[:version], or benchmark:pooled for a pool registry/tables.csv declares';
COMMENT ON COLUMN saturation_latest.benchmark IS 'canonical benchmark id';
COMMENT ON COLUMN saturation_latest.source IS 'the table''s source (''pooled'' for a declared pool)';
COMMENT ON COLUMN saturation_latest.table_version IS 'the release of the question set the source states ('''' unversioned; migration 084)';
COMMENT ON COLUMN saturation_latest.sources IS 'the sources whose rows the table holds (a pool''s members)';
COMMENT ON COLUMN saturation_latest.as_of IS 'newest observation (snapshots.observed_at) behind the scores of the row';
COMMENT ON COLUMN saturation_latest.scope IS 'which scores: all | post_cutoff (only items after each model''s cutoff)';
COMMENT ON COLUMN saturation_latest.population IS 'models (model runs) | systems (agent systems) | systems_per_model (each underlying model once, its best system)';
COMMENT ON COLUMN saturation_latest.k IS 'how many top entries the index compares (the paper''s k = 5)';
COMMENT ON COLUMN saturation_latest.alpha IS 'n_eff = n ** alpha (the paper''s alpha = 0.5)';
COMMENT ON COLUMN saturation_latest.z IS 'statistically similar when s1 - sk <= z * se_delta';
COMMENT ON COLUMN saturation_latest.metric IS 'kind of score of the table (proportion, elo, …)';
COMMENT ON COLUMN saturation_latest.n_items IS 'test-set size the index used (NULL: unknown, no binomial index)';
COMMENT ON COLUMN saturation_latest.n_assumed IS 'n is a nominal size from the registry (a dynamic benchmark)';
COMMENT ON COLUMN saturation_latest.n_models IS 'entries of the population in the table';
COMMENT ON COLUMN saturation_latest.top_scores IS 'the top-k scores, best first';
COMMENT ON COLUMN saturation_latest.top_models IS 'the canonical ids behind top_scores, rank order';
COMMENT ON COLUMN saturation_latest.top_variants IS 'the page''s name [+ setting] of the row used for each top model';
COMMENT ON COLUMN saturation_latest.top_names IS 'each top model''s display name (registry models.name), its identified page name when the registry does not know it (top_known false)';
COMMENT ON COLUMN saturation_latest.top_known IS 'for each top model: true when it is a registry id (top_names is the registry''s name), false when it is a page''s name the registry does not know';
COMMENT ON COLUMN saturation_latest.s1 IS 'the best score';
COMMENT ON COLUMN saturation_latest.sk IS 'the k-th best score';
COMMENT ON COLUMN saturation_latest.se_delta IS 'standard error of s1 - sk';
COMMENT ON COLUMN saturation_latest.r_norm IS '(s1 - sk) / se_delta';
COMMENT ON COLUMN saturation_latest.s_index IS 'saturation index S = exp(-r_norm^2) in [0, 1] (NULL: no index, `reason` says why)';
COMMENT ON COLUMN saturation_latest.bin IS 'the bin of this S alone: very low | low | moderate | high | very high (the alerting one is `level`)';
COMMENT ON COLUMN saturation_latest.statistically_similar IS 's1 - sk <= z * se_delta';
COMMENT ON COLUMN saturation_latest.saturated IS 'bin high or very high';
COMMENT ON COLUMN saturation_latest.stagnation IS 'saturated while the frontier is >= 20 % of the chance-to-ceiling range below the ceiling';
COMMENT ON COLUMN saturation_latest.headroom IS '(ceiling - s1) / (ceiling - chance)';
COMMENT ON COLUMN saturation_latest.uncertainty IS 'which standard errors: binomial(n_eff=n^alpha) | published_stderr | assumed';
COMMENT ON COLUMN saturation_latest.reason IS 'why there is no index (fewer than k models, n unknown, …; NULL when there is one)';
COMMENT ON COLUMN saturation_latest.run_at IS 'when the analysis wrote the row (UTC)';
COMMENT ON COLUMN saturation_latest.scale IS 'the S scale: paper_binomial | published_stderr | assumed_n (only paper_binomial compares across tables)';
COMMENT ON COLUMN saturation_latest.comparable IS 'scale = paper_binomial: comparable with the paper and other tables';
COMMENT ON COLUMN saturation_latest.bin_probs IS 'probability of each bin (very low .. very high) under re-evaluation noise';
COMMENT ON COLUMN saturation_latest.bin_hold_prob IS 'probability that the row''s bin holds under re-evaluation noise';
COMMENT ON COLUMN saturation_latest.resample_noise IS 'the noise bin_probs were drawn with: binomial(n=…) | normal(published_stderr)';
COMMENT ON COLUMN saturation_latest.resample_draws IS 'draws behind bin_probs';
COMMENT ON COLUMN saturation_latest.resample_seed IS 'numpy default_rng seed of the draws';
COMMENT ON COLUMN saturation_latest.level IS 'the committed level after hysteresis (what alerts and the report show; NULL: no index yet)';
COMMENT ON COLUMN saturation_latest.level_since IS 'when the current level was committed (analysis/hysteresis.py: a snapshot, or the day a move had stood LEVEL_DWELL_DAYS)';
COMMENT ON COLUMN saturation_latest.pending_bin IS 'the level a move waits to commit to (NULL: none pending)';
COMMENT ON COLUMN saturation_latest.pending_count IS 'snapshots that proposed the pending move so far (0: none; a count, not what commits it)';
COMMENT ON COLUMN saturation_latest.pending_since IS 'as_of of the snapshot that first proposed the pending move (NULL: none pending); it commits LEVEL_DWELL_DAYS days later unless undone';

-- S_index through calendar time per table, reconstructed from each result's own date.
CREATE OR REPLACE VIEW saturation_history AS
WITH registry_names AS (SELECT map(list(id), list(name)) AS names FROM models)
SELECT table_id, benchmark, source, sources, as_of, s_index, bin, scope, k, alpha, r_norm, se_delta, n_models,
       n_items, top_scores, uncertainty, population, top_models, top_variants, table_version,
       list_transform(top_models, m -> coalesce(r.names[m], m)) AS top_names,
       list_transform(top_models, m -> r.names[m] IS NOT NULL) AS top_known
FROM saturation_trajectory, registry_names r;

COMMENT ON VIEW saturation_history IS 'table, population and date: S reconstructed back in time from each result''s own date (its evaluation date, else its first observation; a model''s release date never moves an evaluated result); raw bins, no hysteresis (level_changes lists their changes, basis ''history'', beside the committed levels)';
COMMENT ON COLUMN saturation_history.table_id IS 'the leaderboard table: benchmark:source[:version] or benchmark:pooled';
COMMENT ON COLUMN saturation_history.benchmark IS 'canonical benchmark id';
COMMENT ON COLUMN saturation_history.source IS 'the table''s source (''pooled'' for a declared pool)';
COMMENT ON COLUMN saturation_history.table_version IS 'the release of the question set the source states ('''' unversioned; migration 084)';
COMMENT ON COLUMN saturation_history.sources IS 'the sources whose rows the table holds';
COMMENT ON COLUMN saturation_history.as_of IS 'the date: the top k among results dated at or before it';
COMMENT ON COLUMN saturation_history.s_index IS 'saturation index S at that date (NULL: no index)';
COMMENT ON COLUMN saturation_history.bin IS 'the bin of that S: very low | low | moderate | high | very high';
COMMENT ON COLUMN saturation_history.scope IS 'all | post_cutoff';
COMMENT ON COLUMN saturation_history.k IS 'how many top entries the index compares';
COMMENT ON COLUMN saturation_history.alpha IS 'n_eff = n ** alpha';
COMMENT ON COLUMN saturation_history.r_norm IS '(s1 - sk) / se_delta';
COMMENT ON COLUMN saturation_history.se_delta IS 'standard error of s1 - sk';
COMMENT ON COLUMN saturation_history.n_models IS 'entries dated at or before as_of';
COMMENT ON COLUMN saturation_history.n_items IS 'test-set size used (NULL: unknown)';
COMMENT ON COLUMN saturation_history.top_scores IS 'the top-k scores at that date, best first';
COMMENT ON COLUMN saturation_history.uncertainty IS 'which standard errors: binomial(n_eff=n^alpha) | published_stderr | assumed';
COMMENT ON COLUMN saturation_history.population IS 'models | systems | systems_per_model';
COMMENT ON COLUMN saturation_history.top_models IS 'the canonical ids behind top_scores, rank order';
COMMENT ON COLUMN saturation_history.top_variants IS 'the page''s name [+ setting] of the row used for each top model';
COMMENT ON COLUMN saturation_history.top_names IS 'each top model''s display name (registry models.name), its identified page name when the registry does not know it (top_known false)';
COMMENT ON COLUMN saturation_history.top_known IS 'for each top model: true when it is a registry id, false when it is a page''s name the registry does not know';

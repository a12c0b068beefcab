-- 005: the parametric-bootstrap SE of S_index, which sets the hysteresis margin of bin changes
-- (h = max(0.05, s_index_se), docs/statistics.md, "Bin changes without flapping"). NULL for rows computed before this migration.
ALTER TABLE saturation ADD COLUMN IF NOT EXISTS s_index_se DOUBLE;

CREATE OR REPLACE VIEW saturation_latest AS
SELECT benchmark, s_index, bin, r_norm, se_delta, n_items, k, alpha, as_of, scope,
       z, n_models, top_scores, statistically_similar, saturated, stagnation, headroom,
       uncertainty, reason, metric, run_at, s_index_se
FROM saturation
QUALIFY row_number() OVER (PARTITION BY benchmark, scope, k, alpha ORDER BY as_of DESC) = 1;

-- The models table under the key name every other view uses (`model`, not `id`).
CREATE OR REPLACE VIEW model_info AS
SELECT id AS model, name, org, release_date, knowledge_cutoff, cutoff_provenance, open_weights,
       predecessor, source
FROM models;

COMMENT ON VIEW model_info IS 'model in the registry (registry/models.csv and models found in data), keyed by `model` as every view is (the `models` table calls it id)';
COMMENT ON COLUMN model_info.model IS 'canonical model id (models.id)';
COMMENT ON COLUMN model_info.name IS 'display name';
COMMENT ON COLUMN model_info.org IS 'the organisation that released it';
COMMENT ON COLUMN model_info.release_date IS 'release date in the registry (resolved_cutoffs has the one the analysis used)';
COMMENT ON COLUMN model_info.knowledge_cutoff IS 'knowledge cutoff in the registry (resolved_cutoffs has the one the analysis used)';
COMMENT ON COLUMN model_info.cutoff_provenance IS 'what the registry''s cutoff rests on';
COMMENT ON COLUMN model_info.open_weights IS 'the weights are published';
COMMENT ON COLUMN model_info.predecessor IS 'the model it succeeds (A2 compares the two)';
COMMENT ON COLUMN model_info.source IS 'where the registry row comes from';

-- One row per date claim (registry and every source); the resolution with priorities is
-- analysis.cutoffs' job (resolved_cutoffs). Conflicts are visible by comparing rows of one model.
-- A row of model_dates without a date (a source stating only who made a model: learned_models)
-- is no date claim.
CREATE OR REPLACE VIEW model_cutoffs AS
SELECT model, knowledge_cutoff, release_date, provenance, source,
       any_value(model_raw) AS model_raw, max(snapshot_id) AS snapshot_id,
       min(observed_at) AS first_observed_at, max(observed_at) AS last_observed_at
FROM model_dates
WHERE release_date IS NOT NULL OR knowledge_cutoff IS NOT NULL
GROUP BY model, knowledge_cutoff, release_date, provenance, source;

COMMENT ON VIEW model_cutoffs IS 'claim about a model''s dates, from the registry and every source (conflicts stay visible: compare the rows of one model; resolved_cutoffs has the one used)';
COMMENT ON COLUMN model_cutoffs.model IS 'canonical model id';
COMMENT ON COLUMN model_cutoffs.knowledge_cutoff IS 'the knowledge cutoff claimed (NULL: the claim is about the release date only)';
COMMENT ON COLUMN model_cutoffs.release_date IS 'the release date claimed (NULL: not part of this claim)';
COMMENT ON COLUMN model_cutoffs.provenance IS 'what the claim rests on: vendor_doc | model_card | leaderboard | listing | inferred | registry';
COMMENT ON COLUMN model_cutoffs.source IS 'who claims it: registry or a scraper source name';
COMMENT ON COLUMN model_cutoffs.model_raw IS 'one name the model had where the claim was read';
COMMENT ON COLUMN model_cutoffs.snapshot_id IS 'the newest snapshot stating the claim (NULL: the registry)';
COMMENT ON COLUMN model_cutoffs.first_observed_at IS 'when the claim was first seen (UTC)';
COMMENT ON COLUMN model_cutoffs.last_observed_at IS 'when the claim was last seen (UTC)';

-- The newest run's resolved model dates (every column of cutoff_resolutions).
CREATE OR REPLACE VIEW resolved_cutoffs AS
SELECT c.* EXCLUDE (run_id), r.run_id
FROM cutoff_resolutions c
JOIN latest_contamination_run r USING (run_id);

COMMENT ON VIEW resolved_cutoffs IS 'model: the knowledge cutoff and release date the newest analysis used, with provenance, trust and conflicts';
COMMENT ON COLUMN resolved_cutoffs.model IS 'canonical model id';
COMMENT ON COLUMN resolved_cutoffs.c_lo IS 'cutoff interval, lower end: the stated cutoff, or release - 12 months';
COMMENT ON COLUMN resolved_cutoffs.c_hi IS 'cutoff interval, upper end: the stated cutoff, or the release date';
COMMENT ON COLUMN resolved_cutoffs.knowledge_cutoff IS 'the chosen stated cutoff (NULL: none stated)';
COMMENT ON COLUMN resolved_cutoffs.cutoff_known IS 'a cutoff is stated';
COMMENT ON COLUMN resolved_cutoffs.cutoff_provenance IS 'what the cutoff rests on: vendor_doc | model_card | registry | leaderboard | listing | inferred';
COMMENT ON COLUMN resolved_cutoffs.cutoff_source IS 'who stated the cutoff';
COMMENT ON COLUMN resolved_cutoffs.release_date IS 'the chosen release date';
COMMENT ON COLUMN resolved_cutoffs.release_provenance IS 'what the release date rests on';
COMMENT ON COLUMN resolved_cutoffs.release_source IS 'who stated the release date';
COMMENT ON COLUMN resolved_cutoffs.conflict IS 'claims of one field more than 31 days apart';
COMMENT ON COLUMN resolved_cutoffs.conflicts IS 'every disagreeing claim: field, source, provenance, value (JSON)';
COMMENT ON COLUMN resolved_cutoffs.n_claims IS 'date claims about the model';
COMMENT ON COLUMN resolved_cutoffs.cutoff_trust IS 'stated | inferred | placeholder (a default many models of one source share: never a clean A3 reference)';
COMMENT ON COLUMN resolved_cutoffs.run_id IS 'the contamination run (latest_contamination_run)';

-- The newest contamination run (the views below show its rows).
CREATE OR REPLACE VIEW latest_contamination_run AS
SELECT * FROM contamination_runs ORDER BY run_at DESC, run_id LIMIT 1;

COMMENT ON VIEW latest_contamination_run IS 'the newest contamination analysis run (one row): what it read and how many tests it flagged';
COMMENT ON COLUMN latest_contamination_run.run_id IS 'hash of what the run read (snapshot ids, parameters, seed)';
COMMENT ON COLUMN latest_contamination_run.run_at IS 'when the run was (last) computed (UTC)';
COMMENT ON COLUMN latest_contamination_run.as_of IS 'newest snapshot observation behind its inputs';
COMMENT ON COLUMN latest_contamination_run.snapshot_ids IS 'every snapshot its inputs came from';
COMMENT ON COLUMN latest_contamination_run.seed IS 'the A1 bootstrap''s random seed';
COMMENT ON COLUMN latest_contamination_run.parameters IS 'the thresholds used (analysis.contamination.Thresholds), JSON';
COMMENT ON COLUMN latest_contamination_run.n_tests IS 'tests run';
COMMENT ON COLUMN latest_contamination_run.n_flagged IS 'tests flagged';

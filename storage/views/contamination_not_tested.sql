-- The models a signal could not test in the newest run, and why.
CREATE OR REPLACE VIEW contamination_not_tested AS
SELECT s.* EXCLUDE (run_id), r.run_id
FROM contamination_skips s
JOIN latest_contamination_run r USING (run_id);

COMMENT ON VIEW contamination_not_tested IS 'model a signal could not test in the newest analysis, and why (a placeholder cutoff, windows below the floors, too few clean references)';
COMMENT ON COLUMN contamination_not_tested.signal IS 'A1 | A2 | A3';
COMMENT ON COLUMN contamination_not_tested.source IS 'the leaderboard site';
COMMENT ON COLUMN contamination_not_tested.benchmark IS 'canonical benchmark id';
COMMENT ON COLUMN contamination_not_tested.model IS 'canonical model id';
COMMENT ON COLUMN contamination_not_tested.cutoff IS 'the cutoff the test would have used';
COMMENT ON COLUMN contamination_not_tested.cutoff_trust IS 'stated | inferred | placeholder';
COMMENT ON COLUMN contamination_not_tested.reason IS 'why it was not tested';
COMMENT ON COLUMN contamination_not_tested.run_id IS 'the contamination run (latest_contamination_run)';

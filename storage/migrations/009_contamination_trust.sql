-- 009: the trust of each resolved knowledge cutoff (analysis/cutoffs.py, docs/statistics.md
-- "Trust of a cutoff claim"): stated | inferred | placeholder. A placeholder date (a default
-- many models of one source share) never makes a model a clean A3 reference. NULL for runs
-- stored before this migration.
ALTER TABLE cutoff_resolutions ADD COLUMN IF NOT EXISTS cutoff_trust VARCHAR;

-- Redefined (same definition as 003) so that the view lists the new column.
CREATE OR REPLACE VIEW resolved_cutoffs AS
SELECT c.* EXCLUDE (run_id), r.run_id
FROM cutoff_resolutions c
JOIN latest_contamination_run r USING (run_id);

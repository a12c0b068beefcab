-- 020: the committed saturation level, stored (issue 19).
--
-- `bin` is the raw bin of a row's S_index; `level` is the bin committed by the hysteresis of
-- analysis/hysteresis.py over the stored snapshot-level rows of the row's series (the series key
-- is analysis.constants.SERIES_KEY, plus k and alpha), computed by `analyze`. The report,
-- `benchwatch alerts` and Slack show `level`; the saturation alert compares stored levels.
--   level          committed level after this row (NULL: no S_index yet in the series)
--   level_since    as_of of the row at which the current level was committed
--   pending_bin    the bin a move waits to commit to, while the hysteresis proposes one (else NULL)
--   pending_count  consecutive snapshots that proposed that move so far (0 when none; NULL before analyze)
-- saturation_latest (SELECT * of saturation) shows them without being redefined. Rows written
-- before 020 are filled by the first analyze after the upgrade (from their whole history, the
-- same computation the alert rule ran at notify time, so no alert resolves or fires anew).
ALTER TABLE saturation ADD COLUMN IF NOT EXISTS level VARCHAR;
ALTER TABLE saturation ADD COLUMN IF NOT EXISTS level_since TIMESTAMPTZ;
ALTER TABLE saturation ADD COLUMN IF NOT EXISTS pending_bin VARCHAR;
ALTER TABLE saturation ADD COLUMN IF NOT EXISTS pending_count INTEGER;   -- no DEFAULT: a DuckLake store refuses one in ADD COLUMN

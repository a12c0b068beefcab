-- 055: when a pending level move was first proposed (issue 50).
--
-- A level move is committed on evidence, not on a count of snapshots (analysis/hysteresis.py):
-- a one-bin move once the snapshot that first proposed it has stood LEVEL_DWELL_DAYS days,
-- which a frozen source reaches without a new snapshot. `pending_since` is that snapshot's
-- as_of (NULL when no move is pending); `level_since` is now when the level was committed (a
-- day, which need not be a row's as_of). Filled by the next analyze, which recomputes every
-- row's level from its series.
ALTER TABLE saturation ADD COLUMN IF NOT EXISTS pending_since TIMESTAMPTZ;

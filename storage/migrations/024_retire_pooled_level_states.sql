-- 024: saturation alert states recorded before leaderboard tables (migration 018) are retired.
-- They were keyed by benchmark (scores of every source pooled); the rule now keys a level by its
-- table (label `table`), so those states can never be evaluated again and would stay "firing"
-- in `benchwatch alerts` forever. They go inactive without a message (nothing changed in the
-- data); the tables' own levels are announced once as "now watching" lines in the next digest.
UPDATE alerts
SET state = 'inactive', since = now(),
    muted_by = 'superseded: a level is per leaderboard table since migration 018 (migration 024)'
WHERE kind = 'saturation_bin_changed' AND state IN ('pending', 'firing')
  AND json_extract_string(labels, '$.table') IS NULL;

-- 040: the leaderboard table is the unit wherever rows are compared (issue 49). Existing files
-- are corrected here, and the next digest says once which tables were (storage/corrections.py):
--
-- 1. A model seen in two splits of one ARC-AGI version (or any two tables of one snapshot) was
--    stored as a "duplicate after name mapping" in every table after the first: the duplicate
--    key left out table_version. In each (snapshot, benchmark, model, setting, table_version)
--    whose rows are all excluded as such a duplicate, the first row is used again. Two names of
--    one model within one table stay one (a usable row is there: nothing changes).
-- 2. latest_scores now takes each table's newest snapshot and says which tables are current by
--    the source's own order (views/latest_scores.sql): the tables it showed, with their models,
--    are kept in `table_corrections_basis` before the view changes; the first notify after this
--    compares them with the new view and records each table that changed in `table_corrections`.
CREATE TABLE IF NOT EXISTS table_corrections (
    table_id     VARCHAR NOT NULL,
    detail       VARCHAR NOT NULL,         -- what changed: '12 -> 148 models in use', 'now current', …
    corrected_at TIMESTAMPTZ NOT NULL,     -- when the change was recorded
    notified_at  TIMESTAMPTZ,              -- when a digest said so (NULL: not yet)
    PRIMARY KEY (table_id, corrected_at)
);
CREATE TABLE IF NOT EXISTS table_corrections_basis (
    table_id VARCHAR PRIMARY KEY,          -- a table of latest_scores before migration 040
    n_models BIGINT NOT NULL               -- its distinct models then
);
INSERT INTO table_corrections_basis
SELECT table_id, count(DISTINCT model) FROM latest_scores GROUP BY table_id;

UPDATE scores SET excluded_reason = ''
WHERE rowid IN (
    SELECT min(rowid) FILTER (WHERE excluded_reason LIKE 'duplicate of model %after name mapping%')
    FROM scores
    WHERE snapshot_id IN (SELECT DISTINCT snapshot_id FROM scores
                          WHERE excluded_reason LIKE 'duplicate of model %after name mapping%')
    GROUP BY snapshot_id, benchmark, model, setting, coalesce(table_version, '')
    HAVING count(*) FILTER (WHERE excluded_reason = '') = 0
       AND count(*) FILTER (WHERE excluded_reason LIKE 'duplicate of model %after name mapping%') > 0);

-- 3. ARC-AGI-3's board states what the whole run cost (`cost`; interactive games: no fixed task
--    set), which was stored as a cost per task. The stored rows of a version >= 3 move to
--    `<benchmark>_run_cost` (scrapers/arc_agi.py RUN_COST_FROM_VERSION); the boards of those
--    versions publish `cost` only, so no stored row of them is a cost per task.
UPDATE scores SET benchmark = regexp_replace(benchmark, '_cost_per_task$', '_run_cost'),
                  benchmark_raw = regexp_replace(benchmark_raw, '_cost_per_task$', '_run_cost')
WHERE source = 'arc_agi' AND regexp_full_match(benchmark, 'arc_agi_([3-9]|[1-9][0-9]+)_cost_per_task');

-- 4. LMArena's elo_data.json lists each category's leader per date (a top-1 list), stored under
--    the category's own table: it was compared with the catalogue's full boards (and held as their
--    shrink). Its rows become table_version 'top1' (scrapers/lmarena.py ELO_MAX_BOARD): a partial
--    table of its own. A snapshot held for that reason stays held (`benchwatch accept` releases it).
UPDATE scores SET table_version = 'top1'
WHERE source = 'lmarena' AND coalesce(table_version, '') = ''
  AND snapshot_id IN (SELECT id FROM snapshots
                      WHERE source = 'lmarena' AND CAST(meta AS VARCHAR) LIKE '%"elo_max_derived"%');

-- Recompute every table on the next analysis (its inputs changed under it); the kept history is
-- a cache (034): read whole again.
DELETE FROM analysis_inputs;
DELETE FROM analysis_unit_inputs;
DELETE FROM history_kept;
DELETE FROM history_kept_basis;

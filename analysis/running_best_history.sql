-- The rows of the score history that can change a running top k or a frontier, dated by the
-- history's dating rule, which is owned here and nowhere else (storage.saturation.read_running_best_history
-- only executes it; tests/dating_oracle.py restates it in pandas over the whole history, and
-- tests/system/test_history_pruned.py requires both to give the same results). Placeholders: releases (a registered frame of
-- model, release_date) and order (and those below); parameters: the benchmarks of this range, the metric
-- kinds for which lower is better, the benchmarks of this range again.
--
-- A result is one (source, benchmark, table_version, model_raw, setting, score), at its first
-- observation. Its date: its evaluation date where the page gives one (a model's release date
-- never moves it); else its first observation, raised to its model's release date where that
-- is later. A row is left out when, within its (table, metric, population, model), a row of a
-- strictly earlier date had a score at least as good (at least as low for a cost); rows of
-- one date are all kept, and one row per (table, metric, population, has an underlying model,
-- date) is kept besides, so every date stays a date of the trajectory. No window crosses a
-- table (table = benchmark, source, table_version: registry.tables.table_id).
--
-- Read whole, the placeholders basis_join, only_new, context and stored are empty. Read on top
-- of the kept rows of an earlier read (storage/history_kept.py, which checks first that the rows
-- they came from are unchanged and that every newer row is dated after them), per table of a
-- registered frame (source, benchmark, table_version, max_snapshot_id): only the rows of later
-- snapshots are read, less those whose result an earlier row already showed (not a first
-- observation); the kept rows stand in for the earlier rows in the running best (a model's best
-- earlier score is among them) and come back with the new ones.
WITH first AS (
    SELECT sc.rowid AS _rid, sc.benchmark, sc.source, coalesce(sc.table_version, '') AS _tv,
           sc.model, sc.metric, coalesce(sc.population, 'models') AS _pop,
           sc.underlying IS NULL AS _no_under, sc.score, sc.evaluated_at, sn.observed_at, sn.id AS snapshot_id
    FROM scores sc JOIN snapshots sn ON sn.id = sc.snapshot_id {basis_join}
    WHERE sc.excluded_reason = '' AND (sn.status IS DISTINCT FROM 'held' OR NOT coalesce(list_contains(sn.held_tables, 'scores' || chr(31) || sc.benchmark || chr(31) || coalesce(sc.table_version, '')), true))   -- shrink guard (010, 041)
      AND NOT coalesce(sc.is_reference, false)                             -- never in a top k (017)
      AND list_contains(?, sc.benchmark) {only_new}
    -- a result's key (storage.saturation._running_best's only_new tests it against the earlier rows)
    QUALIFY row_number() OVER (PARTITION BY sc.source, sc.benchmark, coalesce(sc.table_version, ''), sc.model_raw,
                                            sc.setting, sc.score
                               ORDER BY sn.observed_at, sn.id) = 1
),
dated AS (
    SELECT f.*, CASE WHEN f.evaluated_at IS NOT NULL THEN f.evaluated_at
                     WHEN r.release_date IS NOT NULL AND CAST(r.release_date AS TIMESTAMPTZ) > f.observed_at
                     THEN CAST(r.release_date AS TIMESTAMPTZ)
                     ELSE f.observed_at END AS _date,
           CAST(r.release_date AS TIMESTAMPTZ) AS _release,
           f.score IS NOT NULL AND NOT isnan(f.score) AS _scored
    FROM first f LEFT JOIN {releases} r ON r.model = f.model
),
-- per (table, metric, population, has an underlying model, date) its first row, best score first
-- (NaN above every number, NULL last, as ORDER BY score DESC NULLS LAST sorts), then lowest row id:
-- an aggregate into a few hundred groups, not a window sorting every row (the sort was most of a range's time)
firsts AS (
    SELECT arg_max(_rid, row(score IS NOT NULL, coalesce(score, 0), -_rid)) AS _rid
    FROM dated GROUP BY benchmark, source, _tv, metric, _pop, _no_under, _date
),
kept AS (
    SELECT _rid, observed_at, snapshot_id, _date, _release FROM (
        SELECT _rid, observed_at, snapshot_id, metric, score, model, _date, _release, _scored, _context,
               max(score) FILTER (WHERE _scored) OVER w AS _best_before,
               min(score) FILTER (WHERE _scored) OVER w AS _least_before
        FROM (SELECT *, false AS _context FROM dated {context})
        WINDOW w AS (PARTITION BY benchmark, source, _tv, metric, _pop, model ORDER BY _date
                     RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW EXCLUDE GROUP))
    WHERE NOT _context AND (NOT _scored OR model IS NULL OR _date IS NULL OR _rid IN (SELECT _rid FROM firsts)
       OR _best_before IS NULL OR score > _best_before
       OR (list_contains(?, metric) AND score < _least_before))
)
SELECT * FROM (
    SELECT sc.source, sc.benchmark, coalesce(sc.table_version, '') AS table_version, sc.model, sc.model_raw,
           sc.setting, sc.variant, sc.population, sc.underlying, sc.score, sc.metric, sc.stderr, sc.ci_low,
           sc.ci_high, sc.n_items, sc.evaluated_at, k.observed_at AS first_observed_at, k.observed_at,
           k.snapshot_id,
           -- the date the result enters the trajectory, and why: its own evaluation date; else its
           -- first observation, raised to its model's release where that is later. A release
           -- later than an evaluation date is a conflict (an aliased name or a wrong release
           -- date): flagged, never used to move the result.
           k._release AS release_date, k._date AS date,
           CASE WHEN sc.evaluated_at IS NOT NULL THEN 'evaluated_at'
                WHEN k._release IS NOT NULL AND k._release > k.observed_at THEN 'release_date'
                ELSE 'first_observed_at' END AS date_source,
           coalesce(sc.evaluated_at IS NOT NULL AND k._release > sc.evaluated_at, false) AS date_conflict
    FROM kept k JOIN scores sc ON sc.rowid = k._rid
    WHERE list_contains(?, sc.benchmark)   -- the kept rows' benchmarks: the scan reads their rows only
    {stored})
{order}

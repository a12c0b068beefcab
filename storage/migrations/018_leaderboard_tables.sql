-- 018: a leaderboard table is the unit (issue 20; registry/tables.py owns the rule).
-- A table is (benchmark, source, table_version): table_id = 'benchmark:source', or
-- 'benchmark:source:version' when the source states a version (017's scores.table_version); a
-- pool the registry declares is 'benchmark:pooled' (source 'pooled', `sources` lists its members).
-- Saturation, its trajectory, the frontier and the trends are keyed by table_id from here on.

-- LiveBench rows stored before its parser set table_version: the release their snapshot's file
-- name states (table_YYYY_MM_DD), as scrapers/livebench.py now reads it.
UPDATE scores SET table_version = v.release
FROM (SELECT id, regexp_replace(regexp_extract(array_to_string(file_names, ' '),
                                               'table_(\d{4}_\d{2}_\d{2})', 1), '_', '-', 'g') AS release
      FROM snapshots WHERE source = 'livebench') v
WHERE scores.snapshot_id = v.id AND scores.source = 'livebench' AND coalesce(scores.table_version, '') = ''
  AND v.release <> '';

-- LMArena's Arena-Hard-Auto rows likewise: the version their file's name states (`_v0.1`).
UPDATE scores SET table_version = 'v' || v.version
FROM (SELECT id, regexp_extract(array_to_string(file_names, ' '), 'arena_hard_auto[a-z_]*_v(\d+(\.\d+)*)', 1)
                 AS version
      FROM snapshots WHERE source = 'lmarena') v
WHERE scores.snapshot_id = v.id AND scores.source = 'lmarena' AND scores.benchmark = 'arena_hard_auto'
  AND coalesce(scores.table_version, '') = '' AND v.version <> '';

-- Redefined in full (was 010): each source's newest non-held snapshot per benchmark, with the
-- table each row belongs to (the expression of registry.tables.table_id; a declared pool is
-- applied by the jobs) and 017's row semantics.
CREATE OR REPLACE VIEW latest_scores AS
WITH newest AS (
    SELECT sc.source, sc.benchmark, max_by(sn.id, (sn.observed_at, sn.id)) AS snapshot_id
    FROM scores sc JOIN snapshots sn ON sn.id = sc.snapshot_id
    WHERE sn.status IS DISTINCT FROM 'held'
    GROUP BY sc.source, sc.benchmark
)
SELECT sc.source, sc.benchmark, sc.model, sc.score, sc.metric, sc.stderr, sc.n_items,
       sn.observed_at, sc.setting, sc.model_raw, sc.benchmark_raw, sc.ci_low, sc.ci_high,
       sc.model_release_date, sc.knowledge_cutoff, sc.evaluated_at, sc.snapshot_id,
       sc.variant, sc.population, sc.underlying,                            -- identity columns of 007
       coalesce(sc.table_version, '') AS table_version,
       sc.benchmark || ':' || sc.source
           || CASE WHEN coalesce(sc.table_version, '') = '' THEN '' ELSE ':' || sc.table_version END AS table_id,
       sc.is_reference, sc.reported_by                                      -- 017
FROM scores sc
JOIN newest n USING (source, benchmark, snapshot_id)
JOIN snapshots sn ON sn.id = sc.snapshot_id
WHERE sc.excluded_reason = '';

-- Snapshot-level saturation keyed by table. Rows computed before 018 pooled every source of a
-- benchmark: a benchmark whose stored scores form one table keeps them under that table; the
-- others keep them as '<benchmark>:pooled-legacy' (source 'pooled-legacy'), left out of
-- saturation_latest and of the alert series (storage/saturation.py), kept for the record.
-- DuckDB cannot change a primary key in place: rebuilt with every column (as 007 did). The
-- columns are added first so that a file migrated again keeps the table ids it has.
ALTER TABLE saturation ADD COLUMN IF NOT EXISTS table_id VARCHAR;
ALTER TABLE saturation ADD COLUMN IF NOT EXISTS source VARCHAR;
ALTER TABLE saturation ADD COLUMN IF NOT EXISTS sources VARCHAR[];
CREATE TABLE saturation_018 (
    table_id              VARCHAR NOT NULL,
    benchmark             VARCHAR NOT NULL,
    source                VARCHAR,
    sources               VARCHAR[],
    as_of                 TIMESTAMPTZ NOT NULL,
    scope                 VARCHAR NOT NULL,
    population            VARCHAR NOT NULL DEFAULT 'models',
    k                     INTEGER NOT NULL,
    alpha                 DOUBLE NOT NULL,
    z                     DOUBLE NOT NULL,
    metric                VARCHAR,
    n_items               INTEGER,
    n_assumed             BOOLEAN,
    n_models              INTEGER,
    top_scores            DOUBLE[],
    top_models            VARCHAR[],
    top_variants          VARCHAR[],
    s1                    DOUBLE,
    sk                    DOUBLE,
    se_delta              DOUBLE,
    r_norm                DOUBLE,
    s_index               DOUBLE,
    bin                   VARCHAR,
    statistically_similar BOOLEAN,
    saturated             BOOLEAN,
    stagnation            BOOLEAN,
    headroom              DOUBLE,
    uncertainty           VARCHAR,
    reason                VARCHAR,
    run_at                TIMESTAMPTZ NOT NULL,
    scale                 VARCHAR,
    comparable            BOOLEAN,
    bin_probs             DOUBLE[],
    bin_hold_prob         DOUBLE,
    resample_noise        VARCHAR,
    resample_draws        INTEGER,
    resample_seed         BIGINT,
    PRIMARY KEY (table_id, as_of, scope, population, k, alpha)
);
INSERT INTO saturation_018 BY NAME
WITH one_table AS (
    SELECT benchmark, min(source) AS source,
           min(benchmark || ':' || source
               || CASE WHEN coalesce(table_version, '') = '' THEN '' ELSE ':' || table_version END) AS table_id
    FROM scores GROUP BY benchmark
    HAVING count(DISTINCT benchmark || ':' || source || ':' || coalesce(table_version, '')) = 1
)
SELECT s.* EXCLUDE (table_id, source, sources),
       coalesce(s.table_id, o.table_id, s.benchmark || ':pooled-legacy') AS table_id,
       CASE WHEN s.table_id IS NOT NULL THEN s.source ELSE coalesce(o.source, 'pooled-legacy') END AS source,
       CASE WHEN s.table_id IS NOT NULL THEN s.sources WHEN o.source IS NULL THEN NULL ELSE [o.source] END AS sources
FROM saturation s LEFT JOIN one_table o USING (benchmark);
DROP TABLE saturation;
ALTER TABLE saturation_018 RENAME TO saturation;

-- Trajectory, frontier and trends are recomputed from the stored history on every analyze run:
-- rebuilt empty, filled by the next run (the stored input fingerprint is cleared below).
DROP TABLE saturation_trajectory;
CREATE TABLE saturation_trajectory (
    table_id              VARCHAR NOT NULL,
    benchmark             VARCHAR NOT NULL,
    source                VARCHAR,
    sources               VARCHAR[],
    as_of                 TIMESTAMPTZ NOT NULL,
    scope                 VARCHAR NOT NULL,
    population            VARCHAR NOT NULL DEFAULT 'models',
    k                     INTEGER NOT NULL,
    alpha                 DOUBLE NOT NULL,
    z                     DOUBLE NOT NULL,
    n_items               INTEGER,
    n_models              INTEGER NOT NULL,
    top_scores            DOUBLE[],
    top_models            VARCHAR[],
    top_variants          VARCHAR[],
    s1                    DOUBLE,
    sk                    DOUBLE,
    se_delta              DOUBLE,
    r_norm                DOUBLE,
    s_index               DOUBLE,
    bin                   VARCHAR,
    statistically_similar BOOLEAN,
    uncertainty           VARCHAR,
    run_at                TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (table_id, as_of, scope, population, k, alpha)
);

DROP TABLE frontier;
CREATE TABLE frontier (
    table_id       VARCHAR NOT NULL,
    benchmark      VARCHAR NOT NULL,
    source         VARCHAR,
    sources        VARCHAR[],
    as_of          TIMESTAMPTZ NOT NULL,
    k              INTEGER NOT NULL,
    n_models       INTEGER NOT NULL,
    frontier       DOUBLE NOT NULL,
    frontier_model VARCHAR,
    topk_mean      DOUBLE,
    cv_topk        DOUBLE,
    cv_topk_90d    DOUBLE,
    is_record      BOOLEAN NOT NULL,
    run_at         TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (table_id, as_of, k)
);

DROP TABLE trends;
CREATE TABLE trends (
    table_id               VARCHAR NOT NULL,
    benchmark              VARCHAR NOT NULL,
    source                 VARCHAR,
    sources                VARCHAR[],
    k                      INTEGER NOT NULL,
    as_of                  TIMESTAMPTZ NOT NULL,
    metric                 VARCHAR,
    n_models               INTEGER,
    frontier               DOUBLE,
    frontier_model         VARCHAR,
    last_record_at         TIMESTAMPTZ,
    n_records              INTEGER,
    topk_mean              DOUBLE,
    cv_topk                DOUBLE,
    cv_topk_90d            DOUBLE,
    slope_per_month        DOUBLE,
    slope_ci_low           DOUBLE,
    slope_ci_high          DOUBLE,
    slope_unit             VARCHAR,
    slope_points           INTEGER,
    stalled                BOOLEAN,
    forecast_threshold     DOUBLE,
    forecast_status        VARCHAR,
    forecast_method        VARCHAR,
    forecast_date          TIMESTAMPTZ,
    forecast_ci_low        TIMESTAMPTZ,
    forecast_ci_high       TIMESTAMPTZ,
    logistic_k             DOUBLE,
    logistic_t0            TIMESTAMPTZ,
    logistic_L             DOUBLE,
    logistic_forecast_date TIMESTAMPTZ,
    forecast_reason        VARCHAR,
    run_at                 TIMESTAMPTZ NOT NULL,
    population             VARCHAR DEFAULT 'models',
    direction              VARCHAR,
    trend_status           VARCHAR,
    trend_start            TIMESTAMPTZ,
    trend_end              TIMESTAMPTZ,
    stale_days             INTEGER,
    plateau_p              DOUBLE,
    plateau_df             INTEGER,
    PRIMARY KEY (table_id, k)
);

-- Every table a benchmark has (written by each analyze run, replaced as a whole): its source
-- (or 'pooled' and its members), version, question-set size, models, whether it is the
-- benchmark's primary table (registry/tables.csv), and when it was first and last observed.
CREATE TABLE IF NOT EXISTS benchmark_tables (
    table_id          VARCHAR PRIMARY KEY,
    benchmark         VARCHAR NOT NULL,
    source            VARCHAR NOT NULL,
    sources           VARCHAR[],
    table_version     VARCHAR,
    name              VARCHAR,              -- 'HumanEval (EvalPlus)'
    n_items           INTEGER,              -- the question-set size the index uses (NULL: unknown)
    is_primary        BOOLEAN NOT NULL,
    is_current        BOOLEAN,              -- the table is in the latest scores (a replaced release: false)
    n_models          INTEGER,              -- distinct models with a result in the table (all its history)
    first_observed_at TIMESTAMPTZ,
    last_observed_at  TIMESTAMPTZ,
    run_at            TIMESTAMPTZ NOT NULL
);

-- Newest row per current table: a release its source has replaced (benchmark_tables.is_current
-- false since the analysis saw it go) keeps its rows in `saturation` and its history, not a
-- current level; legacy pooled rows (above) are not a table.
CREATE OR REPLACE VIEW saturation_latest AS
SELECT *
FROM saturation
WHERE source IS DISTINCT FROM 'pooled-legacy'
  AND table_id NOT IN (SELECT table_id FROM benchmark_tables WHERE NOT coalesce(is_current, true))
QUALIFY row_number() OVER (PARTITION BY table_id, scope, population, k, alpha ORDER BY as_of DESC) = 1;

CREATE OR REPLACE VIEW saturation_history AS
SELECT table_id, benchmark, source, sources, as_of, s_index, bin, scope, k, alpha, r_norm, se_delta, n_models,
       n_items, top_scores, uncertainty, population, top_models, top_variants
FROM saturation_trajectory;

-- Recompute on the next run even when the stored data did not change.
DELETE FROM analysis_inputs;

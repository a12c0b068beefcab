-- 007: model identity (registry/identity.py) and per-population saturation.
-- scores: what registry.identity resolved for each page row (model_raw stays the page's name).
--   variant     what separates the row from its model: 'effort=high', 'label=report', '' for none
--   population  models (a model run) | systems (an agent system: a scaffold over models)
--   model_tag   the page's `Model: …` tags of a system (raw), underlying: their one canonical model
ALTER TABLE scores ADD COLUMN IF NOT EXISTS variant VARCHAR DEFAULT '';
ALTER TABLE scores ADD COLUMN IF NOT EXISTS population VARCHAR DEFAULT 'models';
ALTER TABLE scores ADD COLUMN IF NOT EXISTS model_tag VARCHAR;
ALTER TABLE scores ADD COLUMN IF NOT EXISTS underlying VARCHAR;

-- Saturation rows gain `population` (models | systems | systems_per_model) as part of the key,
-- and the entities behind the top k: top_models (canonical ids, rank order) and top_variants
-- (the page's name [+ setting] of the row used for each). Rows written before 007 were computed
-- from name-string de-duplication and are kept as population 'models'.
-- DuckDB cannot change a primary key in place: the two tables are rebuilt with every column.
CREATE TABLE saturation_new (
    benchmark             VARCHAR NOT NULL,
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
    s_index_se            DOUBLE,
    PRIMARY KEY (benchmark, as_of, scope, population, k, alpha)
);
INSERT INTO saturation_new BY NAME SELECT * FROM saturation;
DROP TABLE saturation;
ALTER TABLE saturation_new RENAME TO saturation;

CREATE TABLE saturation_trajectory_new (
    benchmark             VARCHAR NOT NULL,
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
    PRIMARY KEY (benchmark, as_of, scope, population, k, alpha)
);
INSERT INTO saturation_trajectory_new BY NAME SELECT * FROM saturation_trajectory;
DROP TABLE saturation_trajectory;
ALTER TABLE saturation_trajectory_new RENAME TO saturation_trajectory;

-- Redefined (full definitions): every source's newest snapshot per benchmark, now with identity.
CREATE OR REPLACE VIEW latest_scores AS
WITH newest AS (
    SELECT sc.source, sc.benchmark, max_by(sn.id, (sn.observed_at, sn.id)) AS snapshot_id
    FROM scores sc JOIN snapshots sn ON sn.id = sc.snapshot_id
    GROUP BY sc.source, sc.benchmark
)
SELECT sc.source, sc.benchmark, sc.model, sc.score, sc.metric, sc.stderr, sc.n_items,
       sn.observed_at, sc.setting, sc.model_raw, sc.benchmark_raw, sc.ci_low, sc.ci_high,
       sc.model_release_date, sc.knowledge_cutoff, sc.evaluated_at, sc.snapshot_id,
       sc.variant, sc.population, sc.underlying
FROM scores sc
JOIN newest n USING (source, benchmark, snapshot_id)
JOIN snapshots sn ON sn.id = sc.snapshot_id
WHERE sc.excluded_reason = '';

CREATE OR REPLACE VIEW saturation_latest AS
SELECT benchmark, s_index, bin, r_norm, se_delta, n_items, k, alpha, as_of, scope,
       z, n_models, top_scores, statistically_similar, saturated, stagnation, headroom,
       uncertainty, reason, metric, run_at, s_index_se, population, top_models, top_variants
FROM saturation
QUALIFY row_number() OVER (PARTITION BY benchmark, scope, population, k, alpha ORDER BY as_of DESC) = 1;

CREATE OR REPLACE VIEW saturation_history AS
SELECT benchmark, as_of, s_index, bin, scope, k, alpha, r_norm, se_delta, n_models, n_items,
       top_scores, uncertainty, population, top_models, top_variants
FROM saturation_trajectory;

-- Re-resolve every stored row through registry.identity on the next registry sync.
DELETE FROM meta WHERE key = 'registry_sha256';

-- The trend of a benchmark follows its primary population (models where it has model runs).
ALTER TABLE trends ADD COLUMN IF NOT EXISTS population VARCHAR DEFAULT 'models';

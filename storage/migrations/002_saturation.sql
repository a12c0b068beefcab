-- 002: saturation (Akhtar, Reuel et al. 2026), its history in calendar time, frontier and trends.
-- Written by storage/saturation.py only; computed by analysis/saturation.py and analysis/trends.py.

-- Snapshot-level saturation: one row per benchmark each time its latest scores change.
-- as_of = the newest observation (snapshots.observed_at) behind the scores, so re-running
-- `benchwatch analyze` on the same data replaces the same rows instead of adding any.
-- s_index NULL: no index (reason says why: fewer than k models, n unknown, ...).
CREATE TABLE IF NOT EXISTS saturation (
    benchmark             VARCHAR NOT NULL,
    as_of                 TIMESTAMPTZ NOT NULL,
    scope                 VARCHAR NOT NULL,      -- all | post_cutoff | ...
    k                     INTEGER NOT NULL,
    alpha                 DOUBLE NOT NULL,       -- n_eff = n ** alpha
    z                     DOUBLE NOT NULL,       -- statistically similar: s1 - sk <= z * se_delta
    metric                VARCHAR,
    n_items               INTEGER,               -- test-set size used (NULL: unknown)
    n_assumed             BOOLEAN,               -- n is a nominal size (dynamic benchmark)
    n_models              INTEGER,
    top_scores            DOUBLE[],              -- the top-k scores, best first
    s1                    DOUBLE,
    sk                    DOUBLE,
    se_delta              DOUBLE,
    r_norm                DOUBLE,
    s_index               DOUBLE,
    bin                   VARCHAR,               -- very low | low | moderate | high | very high
    statistically_similar BOOLEAN,
    saturated             BOOLEAN,               -- bin high or very high
    stagnation            BOOLEAN,               -- saturated far below the ceiling
    headroom              DOUBLE,                -- (ceiling - s1) / (ceiling - chance)
    uncertainty           VARCHAR,               -- binomial(n_eff=n^alpha) | published_stderr | assumed | a + of two
    reason                VARCHAR,
    run_at                TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (benchmark, as_of, scope, k, alpha)
);

-- Saturation reconstructed back in time from model dates: the top k among models dated <= as_of.
-- Recomputed from all stored data on every analyze run (a new model with an old date changes
-- the past), so each (scope, k, alpha) slice is replaced as a whole.
CREATE TABLE IF NOT EXISTS saturation_trajectory (
    benchmark             VARCHAR NOT NULL,
    as_of                 TIMESTAMPTZ NOT NULL,
    scope                 VARCHAR NOT NULL,
    k                     INTEGER NOT NULL,
    alpha                 DOUBLE NOT NULL,
    z                     DOUBLE NOT NULL,
    n_items               INTEGER,
    n_models              INTEGER NOT NULL,
    top_scores            DOUBLE[],
    s1                    DOUBLE,
    sk                    DOUBLE,
    se_delta              DOUBLE,
    r_norm                DOUBLE,
    s_index               DOUBLE,
    bin                   VARCHAR,
    statistically_similar BOOLEAN,
    uncertainty           VARCHAR,
    run_at                TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (benchmark, as_of, scope, k, alpha)
);

-- Frontier over time (calendar time from model dates), replaced per k on every analyze run.
CREATE TABLE IF NOT EXISTS frontier (
    benchmark      VARCHAR NOT NULL,
    as_of          TIMESTAMPTZ NOT NULL,
    k              INTEGER NOT NULL,
    n_models       INTEGER NOT NULL,      -- models dated <= as_of
    frontier       DOUBLE NOT NULL,       -- best score among them
    frontier_model VARCHAR,
    topk_mean      DOUBLE,
    cv_topk        DOUBLE,                -- sd / mean of the top k (population sd)
    cv_topk_90d    DOUBLE,                -- mean of cv_topk over the trailing 90 days
    is_record      BOOLEAN NOT NULL,      -- the frontier rose at this date
    run_at         TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (benchmark, as_of, k)
);

-- Trend and forecast per benchmark as of the last analyze run (replaced per k on every run).
CREATE TABLE IF NOT EXISTS trends (
    benchmark              VARCHAR NOT NULL,
    k                      INTEGER NOT NULL,
    as_of                  TIMESTAMPTZ NOT NULL,   -- the run's "now"
    metric                 VARCHAR,
    n_models               INTEGER,
    frontier               DOUBLE,
    frontier_model         VARCHAR,
    last_record_at         TIMESTAMPTZ,
    n_records              INTEGER,
    topk_mean              DOUBLE,
    cv_topk                DOUBLE,
    cv_topk_90d            DOUBLE,
    slope_per_month        DOUBLE,                 -- Theil-Sen over the trailing 365 days
    slope_ci_low           DOUBLE,
    slope_ci_high          DOUBLE,
    slope_unit             VARCHAR,                -- pp/month for proportions
    slope_points           INTEGER,
    stalled                BOOLEAN,                -- CI contains 0 and last record > 180 days old
    forecast_threshold     DOUBLE,
    forecast_status        VARCHAR,                -- ok | reached | plateau | insufficient_data | unavailable
    forecast_method        VARCHAR,                -- logistic | theil_sen | observed
    forecast_date          TIMESTAMPTZ,
    forecast_ci_low        TIMESTAMPTZ,
    forecast_ci_high       TIMESTAMPTZ,
    logistic_k             DOUBLE,                 -- per year
    logistic_t0            TIMESTAMPTZ,
    logistic_L             DOUBLE,
    logistic_forecast_date TIMESTAMPTZ,
    forecast_reason        VARCHAR,
    run_at                 TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (benchmark, k)
);

-- The newest snapshot-level saturation of each benchmark (per scope and parameters).
CREATE OR REPLACE VIEW saturation_latest AS
SELECT benchmark, s_index, bin, r_norm, se_delta, n_items, k, alpha, as_of, scope,
       z, n_models, top_scores, statistically_similar, saturated, stagnation, headroom,
       uncertainty, reason, metric, run_at
FROM saturation
QUALIFY row_number() OVER (PARTITION BY benchmark, scope, k, alpha ORDER BY as_of DESC) = 1;

-- S_index through calendar time, reconstructed from model dates.
CREATE OR REPLACE VIEW saturation_history AS
SELECT benchmark, as_of, s_index, bin, scope, k, alpha, r_norm, se_delta, n_models, n_items,
       top_scores, uncertainty
FROM saturation_trajectory;

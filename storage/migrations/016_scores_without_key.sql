-- 016: `scores` without its PRIMARY KEY (snapshot_id, benchmark_raw, model_raw, setting).
-- The key is unique by construction: validation rejects a second row of one (benchmark, model,
-- setting) of a response before anything is stored (scrapers.base.validate and, for the csv
-- source, storage/csv_ingest.py), and a snapshot's rows are written once, in its own
-- transaction. Nothing upserts into scores. DuckDB's index over four text columns cost more than
-- the rest of a large ingest (half of it at commit; issue 12).
-- Same columns in the same order, types, defaults and NOT NULLs; the rows keep their order.
CREATE TABLE scores_016 (
    snapshot_id        BIGINT NOT NULL,
    source             VARCHAR NOT NULL,
    benchmark          VARCHAR NOT NULL,
    benchmark_raw      VARCHAR NOT NULL,
    model              VARCHAR NOT NULL,
    model_raw          VARCHAR NOT NULL,
    setting            VARCHAR NOT NULL,
    score              DOUBLE NOT NULL,
    raw_value          VARCHAR,
    metric             VARCHAR NOT NULL,
    stderr             DOUBLE,
    ci_low             DOUBLE,
    ci_high            DOUBLE,
    n_items            INTEGER,
    model_release_date DATE,
    knowledge_cutoff   DATE,
    evaluated_at       TIMESTAMPTZ,
    excluded_reason    VARCHAR NOT NULL,
    variant            VARCHAR DEFAULT '',
    population         VARCHAR DEFAULT 'models',
    model_tag          VARCHAR,
    underlying         VARCHAR
);
-- the columns listed (not *): a later migration's column never reaches this copy
INSERT INTO scores_016 BY NAME
SELECT snapshot_id, source, benchmark, benchmark_raw, model, model_raw, setting, score, raw_value, metric, stderr,
       ci_low, ci_high, n_items, model_release_date, knowledge_cutoff, evaluated_at, excluded_reason, variant,
       population, model_tag, underlying
FROM scores;
DROP TABLE scores;
ALTER TABLE scores_016 RENAME TO scores;

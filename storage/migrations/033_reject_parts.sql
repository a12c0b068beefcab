-- 033: a rejected row kept in parts (issue 23). The csv ingest inside DuckDB rejects up to
-- millions of rows per file; writing each row's ~340-byte JSON whole cost more than storing the
-- kept rows. `reject_rows` keeps either that JSON (`row_json`, the pandas path's writer) or the
-- row's values (typed, as a score row stores them) with the JSON text of any value the view
-- cannot write itself (j_*: text with characters the JSON writer escapes, numbers it prints in
-- another notation, dates), and the view `rejects` (storage/views/rejects.sql) assembles the same
-- row_json from them: what a query reads is unchanged. Rows keep their order.
CREATE TABLE reject_rows (
    snapshot_id          BIGINT,
    source               VARCHAR NOT NULL,
    file_name            VARCHAR,
    row_json             VARCHAR,
    benchmark            VARCHAR,
    model                VARCHAR,
    setting              VARCHAR,
    score                DOUBLE,
    raw_value            VARCHAR,
    metric               VARCHAR,
    stderr               DOUBLE,
    n_items              INTEGER,
    j_benchmark          VARCHAR,
    j_model              VARCHAR,
    j_setting            VARCHAR,
    j_score              VARCHAR,
    j_raw_value          VARCHAR,
    j_metric             VARCHAR,
    j_stderr             VARCHAR,
    j_model_release_date VARCHAR,
    j_knowledge_cutoff   VARCHAR,
    j_evaluated_at       VARCHAR,
    reason               VARCHAR NOT NULL,
    created_at           TIMESTAMPTZ NOT NULL
);
INSERT INTO reject_rows BY NAME
SELECT snapshot_id, source, file_name, row_json, reason, created_at FROM rejects;
DROP TABLE rejects;

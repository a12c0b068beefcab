-- 034: the running-best history of each leaderboard table as the last analysis read it (issue 23:
-- an incremental analysis reads a changed table's new rows, not its whole history). `history_kept`
-- holds the rows of analysis/running_best_history.sql for the tables of `history_kept_basis`, whose
-- row says what they were read from: the table's score rows up to `max_snapshot_id`, their count
-- and the XOR of their hashes with their snapshot's date and status and their model's release date
-- (`digest`), under the query's text and parameters (`rule`, a sha256). A read reuses a table's
-- rows only when those inputs hash the same now and every newer row is dated after them
-- (storage/history_kept.py); else it reads the table whole. A cache: deleting both tables' rows
-- loses nothing.
CREATE TABLE IF NOT EXISTS history_kept (
    source            VARCHAR,
    benchmark         VARCHAR,
    table_version     VARCHAR,
    model             VARCHAR,
    model_raw         VARCHAR,
    setting           VARCHAR,
    variant           VARCHAR,
    population        VARCHAR,
    underlying        VARCHAR,
    score             DOUBLE,
    metric            VARCHAR,
    stderr            DOUBLE,
    ci_low            DOUBLE,
    ci_high           DOUBLE,
    n_items           INTEGER,
    evaluated_at      TIMESTAMPTZ,
    first_observed_at TIMESTAMPTZ,
    observed_at       TIMESTAMPTZ,
    snapshot_id       BIGINT,
    release_date      TIMESTAMPTZ,
    date              TIMESTAMPTZ,
    date_source       VARCHAR,
    date_conflict     BOOLEAN
);
CREATE TABLE IF NOT EXISTS history_kept_basis (
    source          VARCHAR NOT NULL,
    benchmark       VARCHAR NOT NULL,
    table_version   VARCHAR NOT NULL,
    max_snapshot_id BIGINT NOT NULL,
    n               BIGINT NOT NULL,
    digest          UBIGINT NOT NULL,
    rule            VARCHAR NOT NULL,
    stored_at       TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (source, benchmark, table_version)
);

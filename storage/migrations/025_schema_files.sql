-- 025: views have one current definition each (issue 22). A view's definition and its comments
-- (COMMENT ON VIEW / COLUMN) live in storage/views/<name>.sql, the comments of a user-facing
-- table in storage/views/tables/<name>.sql; storage/views applies a file after the migrations
-- whenever its SHA-256 differs from the one recorded here (CREATE OR REPLACE VIEW drops a view's
-- comments, so one file holds both and one hash covers both). The migrations before 025 keep
-- their view definitions as history; the files are the current truth.
CREATE TABLE IF NOT EXISTS schema_files (
    path       VARCHAR PRIMARY KEY,     -- relative to storage/views: 'latest_scores.sql', 'tables/trends.sql'
    sha256     VARCHAR NOT NULL,        -- of the text applied (placeholders filled)
    applied_at TIMESTAMPTZ NOT NULL
);

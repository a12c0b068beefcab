-- The rows parsers rejected (table reject_rows, migration 033): a row's JSON is stored whole, or
-- as its values with the JSON text of those this view cannot write itself (j_*), assembled here
-- into the same text.
CREATE OR REPLACE VIEW rejects AS
SELECT snapshot_id, source, file_name,
       coalesce(row_json,
                '{"benchmark":' || coalesce(j_benchmark, '"' || benchmark || '"', 'null')
                || ',"model":' || coalesce(j_model, '"' || model || '"', 'null')
                || ',"setting":' || coalesce(j_setting, '"' || setting || '"', 'null')
                || ',"score":' || coalesce(j_score, CAST(score AS VARCHAR), 'null')
                || ',"raw_value":' || coalesce(j_raw_value, '"' || raw_value || '"', 'null')
                || ',"metric":' || coalesce(j_metric, '"' || metric || '"', 'null')
                || ',"stderr":' || coalesce(j_stderr, CAST(stderr AS VARCHAR), 'null')
                || ',"ci_low":null,"ci_high":null,"n_items":' || coalesce(CAST(n_items AS VARCHAR), 'null')
                || ',"model_release_date":' || coalesce(j_model_release_date, 'null')
                || ',"knowledge_cutoff":' || coalesce(j_knowledge_cutoff, 'null')
                || ',"evaluated_at":' || coalesce(j_evaluated_at, 'null')
                || ',"excluded_reason":"","model_tag":null,"table_version":"","is_reference":false,"reported_by":null}'
       ) AS row_json,
       reason, created_at
FROM reject_rows;

COMMENT ON VIEW rejects IS 'row a parser rejected, with the reason';
COMMENT ON COLUMN rejects.snapshot_id IS 'the snapshot (NULL: the whole file was rejected)';
COMMENT ON COLUMN rejects.source IS 'the leaderboard site';
COMMENT ON COLUMN rejects.file_name IS 'the file it was in';
COMMENT ON COLUMN rejects.row_json IS 'the row as read (JSON text)';
COMMENT ON COLUMN rejects.reason IS 'why it was rejected';
COMMENT ON COLUMN rejects.created_at IS 'when (UTC)';

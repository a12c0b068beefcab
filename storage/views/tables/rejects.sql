COMMENT ON TABLE rejects IS 'row a parser rejected, with the reason';
COMMENT ON COLUMN rejects.snapshot_id IS 'the snapshot (NULL: the whole file was rejected)';
COMMENT ON COLUMN rejects.source IS 'the leaderboard site';
COMMENT ON COLUMN rejects.file_name IS 'the file it was in';
COMMENT ON COLUMN rejects.row_json IS 'the row as read (JSON text)';
COMMENT ON COLUMN rejects.reason IS 'why it was rejected';
COMMENT ON COLUMN rejects.created_at IS 'when (UTC)';

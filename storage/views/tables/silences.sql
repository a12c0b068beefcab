COMMENT ON TABLE silences IS 'silence (`benchwatch silence add`): alerts whose labels match are muted between starts_at and ends_at';
COMMENT ON COLUMN silences.id IS 'silence id (`benchwatch silence expire ID`)';
COMMENT ON COLUMN silences.matchers IS '{"label": "value", …}: all must equal (JSON)';
COMMENT ON COLUMN silences.starts_at IS 'start (UTC)';
COMMENT ON COLUMN silences.ends_at IS 'end (UTC)';
COMMENT ON COLUMN silences.author IS 'who added it';
COMMENT ON COLUMN silences.comment IS 'why';
COMMENT ON COLUMN silences.created_at IS 'when it was added';
COMMENT ON COLUMN silences.expired_at IS 'when `benchwatch silence expire` ended it (NULL: not expired)';

-- What was (or is to be) sent where and when.
CREATE OR REPLACE VIEW notification_log AS
SELECT id, created_at, kind, transition, payload->'labels' AS labels, delivered_at, receiver, attempts, last_error
FROM notifications;

COMMENT ON VIEW notification_log IS 'notification of a firing or resolved transition: what was sent where and when (delivered_at NULL: still to deliver)';
COMMENT ON COLUMN notification_log.id IS 'notification id';
COMMENT ON COLUMN notification_log.created_at IS 'when the transition queued it (UTC)';
COMMENT ON COLUMN notification_log.kind IS 'the alert kind';
COMMENT ON COLUMN notification_log.transition IS 'firing | resolved';
COMMENT ON COLUMN notification_log.labels IS 'the alert''s labels (JSON)';
COMMENT ON COLUMN notification_log.delivered_at IS 'when Slack or the console took it (NULL: not yet; retried by every notify run)';
COMMENT ON COLUMN notification_log.receiver IS 'slack-webhook | slack-web:#channel | console';
COMMENT ON COLUMN notification_log.attempts IS 'failed delivery attempts';
COMMENT ON COLUMN notification_log.last_error IS 'the last delivery error, redacted, one line';

-- Alerts in state firing, their labels as columns.
CREATE OR REPLACE VIEW alerts_firing AS
SELECT kind, labels->>'benchmark' AS benchmark, labels->>'model' AS model, labels->>'source' AS source,
       labels->>'scope' AS scope, labels->>'level' AS level, since, muted_by, annotations, fingerprint
FROM alerts
WHERE state = 'firing';

COMMENT ON VIEW alerts_firing IS 'alert in state firing (the `alerts` table has every state)';
COMMENT ON COLUMN alerts_firing.kind IS 'saturation_bin_changed | contamination_suspect | source_failing | …';
COMMENT ON COLUMN alerts_firing.benchmark IS 'the benchmark label (NULL: not about one benchmark)';
COMMENT ON COLUMN alerts_firing.model IS 'the model label (NULL: not about one model)';
COMMENT ON COLUMN alerts_firing.source IS 'the source label (NULL: not about one source)';
COMMENT ON COLUMN alerts_firing.scope IS 'the scope label (all | post_cutoff; NULL: none)';
COMMENT ON COLUMN alerts_firing.level IS 'the level label of a saturation alert (NULL: none)';
COMMENT ON COLUMN alerts_firing.since IS 'when it started firing (UTC)';
COMMENT ON COLUMN alerts_firing.muted_by IS '''silence 3'' or ''inhibited by …'' when muted, else ''''';
COMMENT ON COLUMN alerts_firing.annotations IS 'numbers, evidence, why and the SQL that shows it (JSON)';
COMMENT ON COLUMN alerts_firing.fingerprint IS 'the alert''s identity (hash of its sorted labels; alerts.fingerprint)';

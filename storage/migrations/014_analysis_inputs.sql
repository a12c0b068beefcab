-- 014: the input fingerprint of the last analysis (issue 12, unchanged cycle). A cycle whose
-- analysis inputs (stored data, registry, parameters, UTC day) hash to the stored fingerprint
-- skips the analysis: its results would be the ones already stored.
CREATE TABLE IF NOT EXISTS analysis_inputs (
    part        VARCHAR PRIMARY KEY,        -- 'analyze'
    fingerprint VARCHAR NOT NULL,           -- sha256 hex of the inputs (storage/fingerprint.py)
    computed_at TIMESTAMPTZ NOT NULL,       -- when the analysis of these inputs finished (UTC)
    summary     VARCHAR                     -- its per-benchmark summary (JSON records), reported when skipped
);

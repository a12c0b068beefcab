-- 022: contamination suspicions as stored states (issue 19; docs/statistics.md, "Suspicions").
-- One row per contamination test that was ever flagged, keyed by (model, benchmark, source,
-- signal, detail); written by storage/contamination.py in the transaction of the run that moved
-- it, read by the contamination_suspect alert rule (which never recomputes a test).
--   state: pending   flagged, the first-notification rule not met yet (seen on one data version);
--          confirmed flagged on two analyses of distinct data, or q <= SUSPICION_CONFIRM_Q at
--                    once, or corroborated by another signal or source: the alert fires;
--          resolved  a later analysis of NEW data for that test no longer flags it.
-- A test's data is the snapshots its rows came from (`snapshot_ids`): an analysis that another
-- source triggered leaves them unchanged, so the test keeps its stored p, effect and flag and
-- the suspicion holds (only its q may move with its BH family).
CREATE TABLE IF NOT EXISTS contamination_suspicions (
    model             VARCHAR NOT NULL,
    benchmark         VARCHAR NOT NULL,
    source            VARCHAR NOT NULL,
    signal            VARCHAR NOT NULL,
    detail            VARCHAR NOT NULL,
    state             VARCHAR NOT NULL,        -- pending | confirmed | resolved
    confirmed_by      VARCHAR,                 -- distinct_data | strong_q | corroborated (NULL: pending)
    first_flagged_at  TIMESTAMPTZ NOT NULL,    -- run time of the analysis that first flagged it (this episode)
    confirmed_at      TIMESTAMPTZ,
    updated_at        TIMESTAMPTZ NOT NULL,    -- run time of the last analysis that moved the row
    run_id            VARCHAR NOT NULL,        -- that analysis
    distinct_data     INTEGER NOT NULL,        -- data versions (snapshot sets) it was flagged on, this episode
    snapshot_ids      BIGINT[] NOT NULL,       -- the data the current numbers rest on
    data_as_of        TIMESTAMPTZ,             -- newest observation among those snapshots
    effect            DOUBLE,
    se                DOUBLE,
    ci_low            DOUBLE,
    ci_high           DOUBLE,
    p_value           DOUBLE,                  -- stored with its data: unchanged while the data are
    q_value           DOUBLE,                  -- BH q of the last analysis (moves with the family)
    evidence          JSON,
    resolved_at       TIMESTAMPTZ,
    resolved_snapshot_ids BIGINT[],            -- the new data that no longer flag it
    resolved_data_as_of   TIMESTAMPTZ,
    resolution        JSON,                    -- p, q, effect on the new data, or why it was not tested
    PRIMARY KEY (model, benchmark, source, signal, detail)
);

-- An upgrade neither resolves nor re-fires: the flags of the newest run become suspicions
-- (persisted or corroborated ones confirmed, as the former rule fired them; the others pending).
INSERT INTO contamination_suspicions
SELECT s.model, s.benchmark, s.source, s.signal, s.detail,
       CASE WHEN s.status IN ('persisted', 'corroborated') THEN 'confirmed' ELSE 'pending' END,
       CASE WHEN s.status = 'persisted' THEN 'distinct_data'
            WHEN s.status = 'corroborated' THEN 'corroborated' END,
       r.run_at,
       CASE WHEN s.status IN ('persisted', 'corroborated') THEN r.run_at END,
       r.run_at, r.run_id,
       CASE WHEN s.status = 'persisted' THEN 2 ELSE 1 END,
       coalesce(CAST(json_extract(s.evidence, '$.snapshot_ids') AS BIGINT[]), []::BIGINT[]),
       r.as_of, s.effect, s.se, s.ci_low, s.ci_high, s.p_value, s.q_value, s.evidence,
       NULL, NULL, NULL, NULL
FROM contamination_signals s
JOIN (SELECT * FROM contamination_runs ORDER BY run_at DESC, run_id LIMIT 1) r USING (run_id)
WHERE s.flagged;

-- The models a signal could not test in a run, and why (a placeholder cutoff, windows below the
-- floors, too few clean references): listed by `benchwatch status` and the report instead of
-- dropped silently.
CREATE TABLE IF NOT EXISTS contamination_skips (
    run_id       VARCHAR NOT NULL,
    signal       VARCHAR NOT NULL,
    source       VARCHAR NOT NULL,
    benchmark    VARCHAR NOT NULL,
    model        VARCHAR NOT NULL,
    cutoff       DATE,
    cutoff_trust VARCHAR,
    reason       VARCHAR NOT NULL,
    PRIMARY KEY (run_id, signal, source, benchmark, model)
);

CREATE OR REPLACE VIEW contamination_not_tested AS
SELECT s.* EXCLUDE (run_id), r.run_id
FROM contamination_skips s
JOIN latest_contamination_run r USING (run_id);

-- 003: post-cutoff slices and contamination-suspect signals (docs/statistics.md, "Model dates and post-cutoff slices", "Contamination-suspect signals").
-- Written by storage/contamination.py only; computed by analysis/cutoffs.py and
-- analysis/contamination.py. One run = one evaluation of the stored data; run_id is a hash
-- of what the run read (snapshot ids, parameters, seed), so re-running on the same data
-- replaces that run's rows instead of adding any. The views show the newest run.

CREATE TABLE IF NOT EXISTS contamination_runs (
    run_id       VARCHAR PRIMARY KEY,
    run_at       TIMESTAMPTZ NOT NULL,          -- when it was (last) computed
    as_of        TIMESTAMPTZ,                   -- newest snapshot observation behind the inputs
    snapshot_ids BIGINT[] NOT NULL,             -- every snapshot the inputs came from
    seed         BIGINT NOT NULL,               -- the A1 bootstrap's random seed
    parameters   JSON NOT NULL,                 -- analysis.contamination.Thresholds
    n_tests      INTEGER NOT NULL,
    n_flagged    INTEGER NOT NULL
);

-- Each model's resolved dates: the chosen claim per field, the cutoff interval, conflicts.
CREATE TABLE IF NOT EXISTS cutoff_resolutions (
    run_id             VARCHAR NOT NULL,
    model              VARCHAR NOT NULL,
    c_lo               DATE,                    -- cutoff interval: stated cutoff, or release - 12 months
    c_hi               DATE,                    -- stated cutoff, or the release date (upper bound)
    knowledge_cutoff   DATE,                    -- the chosen stated cutoff (NULL: none stated)
    cutoff_known       BOOLEAN NOT NULL,
    cutoff_provenance  VARCHAR,                 -- vendor_doc | model_card | registry | leaderboard | listing | inferred
    cutoff_source      VARCHAR,
    release_date       DATE,
    release_provenance VARCHAR,
    release_source     VARCHAR,
    conflict           BOOLEAN NOT NULL,        -- claims of one field more than 31 days apart
    conflicts          JSON,                    -- every disagreeing claim: field, source, provenance, value
    n_claims           INTEGER NOT NULL,
    PRIMARY KEY (run_id, model)
);

-- Benchmark-level slice (docs/statistics.md, "Model dates and post-cutoff slices") for every (benchmark, model) with a latest score.
CREATE TABLE IF NOT EXISTS benchmark_slices (
    run_id         VARCHAR NOT NULL,
    benchmark      VARCHAR NOT NULL,
    model          VARCHAR NOT NULL,
    status         VARCHAR NOT NULL,            -- post | pre | ambiguous | unknown
    material_start DATE,                        -- earliest source material (dated items), else = material_date
    material_date  DATE,                        -- latest source material R_b
    c_lo           DATE,
    c_hi           DATE,
    PRIMARY KEY (run_id, benchmark, model)
);

-- Item-level slice (docs/statistics.md, "Model dates and post-cutoff slices"): S_post over items dated in (c_hi + g, window_end], S_pre over items <= c_lo.
CREATE TABLE IF NOT EXISTS post_cutoff_slices (
    run_id         VARCHAR NOT NULL,
    source         VARCHAR NOT NULL,
    benchmark      VARCHAR NOT NULL,
    model          VARCHAR NOT NULL,
    score          DOUBLE,                      -- S_post, mean pass fraction (NULL: no post-cutoff item)
    n_items        INTEGER NOT NULL,
    stderr         DOUBLE,                      -- item-clustered: sd / sqrt(n)
    window_start   TIMESTAMP NOT NULL,          -- c_hi + guard (exclusive)
    window_end     TIMESTAMP NOT NULL,          -- the run's time (inclusive)
    low_n          BOOLEAN NOT NULL,            -- n_items < 100: "use a larger window"
    score_std      DOUBLE,                      -- S_post reweighted to the benchmark's all-time difficulty mix
    score_pre      DOUBLE,
    n_pre          INTEGER NOT NULL,
    stderr_pre     DOUBLE,
    pre_window_end TIMESTAMP,                   -- c_lo (inclusive)
    n_undated      INTEGER NOT NULL,
    PRIMARY KEY (run_id, source, benchmark, model)
);

-- Every contamination test of a run (flagged or not), with its evidence.
CREATE TABLE IF NOT EXISTS contamination_signals (
    run_id    VARCHAR NOT NULL,
    model     VARCHAR NOT NULL,
    benchmark VARCHAR NOT NULL,
    source    VARCHAR NOT NULL,
    signal    VARCHAR NOT NULL,                 -- A1 | A2 | A3
    detail    VARCHAR NOT NULL,                 -- '' or which A2 comparison ('predecessor X', 'rescore <setting>')
    effect    DOUBLE,                           -- proportion: A1 δ, A2 J, A3 excess gap E
    se        DOUBLE,
    ci_low    DOUBLE,
    ci_high   DOUBLE,
    p_value   DOUBLE,
    q_value   DOUBLE,                           -- Benjamini-Hochberg over every test of the run
    flagged   BOOLEAN NOT NULL,
    status    VARCHAR NOT NULL,                 -- corroborated | persisted | suspect | not_flagged
    evidence  JSON NOT NULL,
    PRIMARY KEY (run_id, model, benchmark, source, signal, detail)
);

CREATE OR REPLACE VIEW latest_contamination_run AS
SELECT * FROM contamination_runs ORDER BY run_at DESC, run_id LIMIT 1;

-- Contract: post_cutoff_scores(model, benchmark, score, n_items, stderr, window_start, window_end)
-- score = mean pass over items dated after the model's cutoff + 30 days; low_n under 100 items.
CREATE OR REPLACE VIEW post_cutoff_scores AS
SELECT p.model, p.benchmark, p.score, p.n_items, p.stderr, p.window_start, p.window_end,
       p.source, p.low_n, p.score_std, p.score_pre, p.n_pre, p.stderr_pre, p.pre_window_end,
       c.cutoff_provenance, c.cutoff_source, c.conflict AS cutoff_conflict, r.run_id, r.as_of
FROM post_cutoff_slices p
JOIN latest_contamination_run r USING (run_id)
LEFT JOIN cutoff_resolutions c ON c.run_id = p.run_id AND c.model = p.model;

-- Contract: suspects(model, benchmark, signal, effect, q_value, status, evidence). Every test of
-- the newest run; a flag is status <> 'not_flagged' and is a suspicion, never a verdict.
CREATE OR REPLACE VIEW suspects AS
SELECT s.model, s.benchmark, s.signal, s.effect, s.q_value, s.status, s.evidence,
       s.source, s.detail, s.se, s.ci_low, s.ci_high, s.p_value, s.flagged, r.run_id, r.as_of
FROM contamination_signals s
JOIN latest_contamination_run r USING (run_id);

-- The newest run's resolved model dates.
CREATE OR REPLACE VIEW resolved_cutoffs AS
SELECT c.* EXCLUDE (run_id), r.run_id
FROM cutoff_resolutions c
JOIN latest_contamination_run r USING (run_id);

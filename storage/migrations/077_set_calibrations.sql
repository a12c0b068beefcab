-- 077: A3's placebo calibration per item set, as `analyze` computes it on the set's own data (issue
-- 50; docs/statistics.md, "One calibration per item set"). One row per (signal, source, benchmark,
-- input_key): input_key is the content key of what the set's placebo reads (its clean models' item
-- results, its item dates, thresholds, trials, seed; analysis.contamination.set_calibration), so a
-- snapshot that changes none of it finds its row and computes nothing, and the same inputs always
-- give the same row (the draws are seeded by the key). `ok` is `benchwatch calibrate`'s pass rule:
-- the 95 % interval of placebo P(p < 0.01), P(p < 0.05) and the family-wise BH false-flag rate
-- reaches down to 1 %, 5 % and 5 %; NULL when the set allows no placebo test. A suspicion names the
-- key it is judged by (contamination_suspicions.calibration_key, 078).
CREATE TABLE IF NOT EXISTS contamination_set_calibrations (
    signal         VARCHAR NOT NULL,
    source         VARCHAR NOT NULL,
    benchmark      VARCHAR NOT NULL,
    input_key      VARCHAR NOT NULL,     -- content key of the set's placebo inputs
    calibrated_at  TIMESTAMPTZ NOT NULL, -- the analysis (or calibrate) that computed it first
    as_of          TIMESTAMPTZ,          -- the newest observation of the set's items then
    trials         INTEGER NOT NULL,
    seed           BIGINT NOT NULL,
    tests          BIGINT NOT NULL,      -- placebo tests (0: no placebo test possible, ok NULL)
    units          INTEGER,              -- the set's clean models
    p01            DOUBLE, p01_lo DOUBLE, p01_hi DOUBLE,
    p05            DOUBLE, p05_lo DOUBLE, p05_hi DOUBLE,
    fw_bh          DOUBLE, fw_bh_lo DOUBLE, fw_bh_hi DOUBLE,
    fw_rule        DOUBLE, fw_rule_lo DOUBLE, fw_rule_hi DOUBLE,
    ok             BOOLEAN,
    PRIMARY KEY (signal, source, benchmark, input_key)
);

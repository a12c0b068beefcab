-- 050: the placebo calibration of each contamination signal as `benchwatch calibrate` last found it
-- (issue 50; docs/statistics.md, "Placebo calibration"). One row per (calibration, signal): the
-- share of placebo p below 0.01 and 0.05 and the family-wise false-flag rate after BH, each with
-- its 95 % CI, and `ok` (the CI of each reaches down to 1 %, 5 % and 5 %). The contamination_suspect
-- rule reads the newest row of each signal: a signal found miscalibrated (ok = false) on the data
-- it runs on has its flags shown as unconfirmed, with that reason, never delivered as confirmed.
CREATE TABLE IF NOT EXISTS contamination_calibrations (
    calibration_id VARCHAR NOT NULL,     -- one run of `benchwatch calibrate`
    calibrated_at  TIMESTAMPTZ NOT NULL,
    as_of          TIMESTAMPTZ,          -- the newest observation in the data it read
    signal         VARCHAR NOT NULL,
    trials         INTEGER NOT NULL,
    seed           BIGINT NOT NULL,
    tests          BIGINT NOT NULL,      -- placebo tests (0: no placebo test possible, ok NULL)
    p01            DOUBLE, p01_lo DOUBLE, p01_hi DOUBLE,
    p05            DOUBLE, p05_lo DOUBLE, p05_hi DOUBLE,
    fw_bh          DOUBLE, fw_bh_lo DOUBLE, fw_bh_hi DOUBLE,
    fw_rule        DOUBLE, fw_rule_lo DOUBLE, fw_rule_hi DOUBLE,
    ok             BOOLEAN,              -- NULL: no placebo test possible
    PRIMARY KEY (calibration_id, signal)
);

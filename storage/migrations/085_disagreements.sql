-- 085: when sources disagree, as `analyze` found it (issue 52; the analysis: issue 54).
--
-- The view source_disagreements pairs two sources' rows of one model on one question set;
-- analysis/disagreement.py decides which gaps are findings. That decision is stored here, once per
-- analysis, so the alert rule, `status` and the report read one result instead of each deciding
-- again. `disagreements`: every row of the view as the analysis saw it, with its part (`role`:
-- 'compared', 'listed' without comparison, 'transcription' for a copy beside its origin), its
-- place in that part (`pos`) and what the analysis added (NULL where a part has none).
-- `disagreement_offsets`: the systematic offset of each pair of tables with enough models.
-- Replaced whole by each analysis that recomputes (jobs/relations/disagreements.py), which notes
-- when in meta ('disagreements_stored_at'). Empty until the first analysis after this migration
-- (new code makes that analysis a full one); until then the rule reads nothing and its alerts
-- keep their state.
CREATE TABLE IF NOT EXISTS disagreements (
    role          VARCHAR NOT NULL,     -- compared | listed | transcription
    pos           BIGINT NOT NULL,      -- the row's place among its part's rows
    model         VARCHAR,
    benchmark     VARCHAR,
    source_a      VARCHAR,
    source_b      VARCHAR,
    score_a       DOUBLE,
    score_b       DOUBLE,
    se_a          DOUBLE,
    se_b          DOUBLE,
    diff          DOUBLE,
    se_diff       DOUBLE,
    z             DOUBLE,
    date_a        DATE,
    date_b        DATE,
    why           VARCHAR,
    kind          VARCHAR,
    comparable    BOOLEAN,
    table_a       VARCHAR,
    table_b       VARCHAR,
    metric        VARCHAR,
    setting_a     VARCHAR,
    setting_b     VARCHAR,
    se_from_a     VARCHAR,
    se_from_b     VARCHAR,
    model_raw_a   VARCHAR,
    model_raw_b   VARCHAR,
    snapshot_a    BIGINT,
    snapshot_b    BIGINT,
    table_offset  DOUBLE,               -- compared: the other pairs' median gap (leave one out)
    offset_se     DOUBLE,
    tau           DOUBLE,               -- the two harnesses' spread beyond sampling noise
    offset_pairs  BIGINT,               -- models the offset is estimated from (0: none estimated)
    z_resid       DOUBLE,               -- the gap against the offset, in its uncertainty
    p             DOUBLE,
    unit_pairs    BIGINT,               -- pairs of the (benchmark, model) unit
    p_unit_adj    DOUBLE,               -- p · unit_pairs (Bonferroni within the unit)
    q             DOUBLE,               -- the unit's Benjamini-Hochberg q
    finding       BOOLEAN,
    mismatch      BOOLEAN,              -- transcription: the copy is off its origin beyond rounding
    run_at        TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (role, pos)
);

CREATE TABLE IF NOT EXISTS disagreement_offsets (
    pos           BIGINT PRIMARY KEY,
    benchmark     VARCHAR,
    table_a       VARCHAR,
    table_b       VARCHAR,
    source_a      VARCHAR,
    source_b      VARCHAR,
    metric        VARCHAR,
    n_pairs       BIGINT,
    table_offset  DOUBLE,               -- the median gap a − b over the pair of tables' models
    offset_se     DOUBLE,
    tau           DOUBLE,
    systematic    BOOLEAN,              -- |offset| beyond OFFSET_SIGNIFICANT_SE standard errors
    run_at        TIMESTAMPTZ NOT NULL
);

-- 008: honest uncertainty for S_index (analysis/saturation.py, docs/statistics.md).
--
-- s_index_se (005) was a parametric bootstrap with the paper's deflated n_eff = n^alpha noise:
-- not centred on S and not a standard error. It is dropped; rows computed before 008 lose it.
-- In its place, how firm the bin is under the real sampling noise of one re-evaluation, with
-- what produced it, and which S scale a row is on (only the paper's scale is comparable).
ALTER TABLE saturation DROP COLUMN IF EXISTS s_index_se;
ALTER TABLE saturation ADD COLUMN IF NOT EXISTS scale VARCHAR;            -- paper_binomial | published_stderr | assumed_n
ALTER TABLE saturation ADD COLUMN IF NOT EXISTS comparable BOOLEAN;       -- scale = paper_binomial
ALTER TABLE saturation ADD COLUMN IF NOT EXISTS bin_probs DOUBLE[];       -- P(S* in each bin), very low .. very high
ALTER TABLE saturation ADD COLUMN IF NOT EXISTS bin_hold_prob DOUBLE;     -- P(S* in the row's bin)
ALTER TABLE saturation ADD COLUMN IF NOT EXISTS resample_noise VARCHAR;   -- binomial(n=…) | normal(published_stderr)
ALTER TABLE saturation ADD COLUMN IF NOT EXISTS resample_draws INTEGER;
ALTER TABLE saturation ADD COLUMN IF NOT EXISTS resample_seed BIGINT;     -- numpy default_rng(seed)

-- Every column of the table (so columns other migrations add stay visible), newest row per key.
CREATE OR REPLACE VIEW saturation_latest AS
SELECT *
FROM saturation
QUALIFY row_number() OVER (PARTITION BY benchmark, scope, population, k, alpha ORDER BY as_of DESC) = 1;

-- 012: honest trends (docs/statistics.md, "Trends and forecasts"). A trend ends at the benchmark's
-- last dated result, not at the run's clock, and says how stale it is; its status says when the
-- window holds no data (slope NULL) or no record (slope 0 without a CI); a plateau call stores its
-- F-test; the frontier's direction (lower is better for costs) is explicit.
ALTER TABLE trends ADD COLUMN IF NOT EXISTS direction VARCHAR;        -- higher | lower (the better way)
ALTER TABLE trends ADD COLUMN IF NOT EXISTS trend_status VARCHAR;     -- ok | too_few_points | no_record_in_window | no_data_in_window
ALTER TABLE trends ADD COLUMN IF NOT EXISTS trend_start TIMESTAMPTZ;  -- window start = trend_end - 365 days
ALTER TABLE trends ADD COLUMN IF NOT EXISTS trend_end TIMESTAMPTZ;    -- the benchmark's last dated result
ALTER TABLE trends ADD COLUMN IF NOT EXISTS stale_days INTEGER;       -- days from trend_end to the run's now (as_of)
ALTER TABLE trends ADD COLUMN IF NOT EXISTS plateau_p DOUBLE;         -- F-test of L = threshold vs a lower L
ALTER TABLE trends ADD COLUMN IF NOT EXISTS plateau_df INTEGER;       -- its residual df (records - 3)

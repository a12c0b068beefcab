-- 006: a model's predecessor in its product line (registry/models.csv), for the A2 signal
-- "a new family member jumps more than its reference benchmarks predict" (docs/statistics.md, "The signals", A2).
ALTER TABLE models ADD COLUMN IF NOT EXISTS predecessor VARCHAR;

-- 006: a model's predecessor in its product line (registry/models.csv), for the A2 signal
-- "a new family member jumps more than its reference benchmarks predict" (DESIGN §5).
ALTER TABLE models ADD COLUMN IF NOT EXISTS predecessor VARCHAR;

-- 084: a stored leaderboard table row carries its table's key as columns (issue 52).
--
-- A table is (benchmark, source, table_version) (018); `table_id` is their one spelling
-- (common/tables.py). The tables below carried `table_id` without every part of it, so readers
-- split it again: each now has benchmark, source and table_version ('' without a version; a
-- declared pool is source 'pooled', 018's legacy rows source 'pooled-legacy'), written by the
-- analysis beside `table_id`. Existing rows get their parts from their `table_id`, split as
-- registry.tables.table_key splits it: benchmark, source, then the rest (a version may hold ':').
-- This is the one place SQL splits a table id, for the rows stored before it.

ALTER TABLE saturation ADD COLUMN IF NOT EXISTS table_version VARCHAR;
ALTER TABLE saturation_trajectory ADD COLUMN IF NOT EXISTS table_version VARCHAR;
ALTER TABLE frontier ADD COLUMN IF NOT EXISTS table_version VARCHAR;
ALTER TABLE trends ADD COLUMN IF NOT EXISTS table_version VARCHAR;
ALTER TABLE forecast_backtest ADD COLUMN IF NOT EXISTS source VARCHAR;
ALTER TABLE forecast_backtest ADD COLUMN IF NOT EXISTS table_version VARCHAR;
ALTER TABLE forecast_backtest_crossings ADD COLUMN IF NOT EXISTS source VARCHAR;
ALTER TABLE forecast_backtest_crossings ADD COLUMN IF NOT EXISTS table_version VARCHAR;
ALTER TABLE table_corrections ADD COLUMN IF NOT EXISTS benchmark VARCHAR;
ALTER TABLE table_corrections ADD COLUMN IF NOT EXISTS source VARCHAR;
ALTER TABLE table_corrections ADD COLUMN IF NOT EXISTS table_version VARCHAR;
ALTER TABLE table_corrections_basis ADD COLUMN IF NOT EXISTS benchmark VARCHAR;
ALTER TABLE table_corrections_basis ADD COLUMN IF NOT EXISTS source VARCHAR;
ALTER TABLE table_corrections_basis ADD COLUMN IF NOT EXISTS table_version VARCHAR;

-- The tables that kept benchmark and source: only the version was missing (their source is the
-- table's: 'pooled' for a pool, as the id says).
UPDATE saturation SET table_version = regexp_extract(table_id, '^[^:]*(?::[^:]*(?::(.*))?)?$', 1)
WHERE table_version IS NULL;
UPDATE saturation_trajectory SET table_version = regexp_extract(table_id, '^[^:]*(?::[^:]*(?::(.*))?)?$', 1)
WHERE table_version IS NULL;
UPDATE frontier SET table_version = regexp_extract(table_id, '^[^:]*(?::[^:]*(?::(.*))?)?$', 1)
WHERE table_version IS NULL;
UPDATE trends SET table_version = regexp_extract(table_id, '^[^:]*(?::[^:]*(?::(.*))?)?$', 1)
WHERE table_version IS NULL;

UPDATE forecast_backtest
SET source = regexp_extract(table_id, '^[^:]*(?::([^:]*)(?::(.*))?)?$', 1),
    table_version = regexp_extract(table_id, '^[^:]*(?::([^:]*)(?::(.*))?)?$', 2)
WHERE source IS NULL;
UPDATE forecast_backtest_crossings
SET source = regexp_extract(table_id, '^[^:]*(?::([^:]*)(?::(.*))?)?$', 1),
    table_version = regexp_extract(table_id, '^[^:]*(?::([^:]*)(?::(.*))?)?$', 2)
WHERE source IS NULL;
UPDATE table_corrections
SET benchmark = regexp_extract(table_id, '^([^:]*)(?::([^:]*)(?::(.*))?)?$', 1),
    source = regexp_extract(table_id, '^([^:]*)(?::([^:]*)(?::(.*))?)?$', 2),
    table_version = regexp_extract(table_id, '^([^:]*)(?::([^:]*)(?::(.*))?)?$', 3)
WHERE benchmark IS NULL;
UPDATE table_corrections_basis
SET benchmark = regexp_extract(table_id, '^([^:]*)(?::([^:]*)(?::(.*))?)?$', 1),
    source = regexp_extract(table_id, '^([^:]*)(?::([^:]*)(?::(.*))?)?$', 2),
    table_version = regexp_extract(table_id, '^([^:]*)(?::([^:]*)(?::(.*))?)?$', 3)
WHERE benchmark IS NULL;

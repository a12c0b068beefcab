-- 060: a benchmark's primary table, where registry/tables.csv declares none, is the table with the
-- longest dated history among the source's own runs (an external report only when nothing else
-- measures the benchmark): each table's first and last result date (a result's evaluation date,
-- else its first observation) and the reason its primary flag was given, said in the report.
ALTER TABLE benchmark_tables ADD COLUMN IF NOT EXISTS first_dated_at TIMESTAMPTZ;
ALTER TABLE benchmark_tables ADD COLUMN IF NOT EXISTS last_dated_at TIMESTAMPTZ;
ALTER TABLE benchmark_tables ADD COLUMN IF NOT EXISTS primary_reason VARCHAR;

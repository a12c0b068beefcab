-- 017: what a score row means, as its source states it (issue 20).
--   table_version  the version / release / board / harness within the source that makes the row's
--                  question set distinct ('' = the source's one table for that benchmark); a new
--                  LiveBench release or a τ²-bench legacy list is another value, so another table
--   is_reference   a reference / baseline row (AlpacaEval's built-in reference model, …): stored and
--                  shown, never in a top k
--   reported_by    who produced the number when it is not the leaderboard's own run ('vendor', …)
ALTER TABLE scores ADD COLUMN IF NOT EXISTS table_version VARCHAR DEFAULT '';
ALTER TABLE scores ADD COLUMN IF NOT EXISTS is_reference BOOLEAN DEFAULT false;
ALTER TABLE scores ADD COLUMN IF NOT EXISTS reported_by VARCHAR;

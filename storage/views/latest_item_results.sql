-- Each source's newest non-held snapshot per benchmark, item by item; two raw names of one
-- snapshot that map to one canonical model (o3 / O3) give one row per item (the smallest model_raw).
CREATE OR REPLACE VIEW latest_item_results AS
WITH newest AS (
    SELECT ir.source, ir.benchmark, max_by(sn.id, (sn.observed_at, sn.id)) AS snapshot_id
    FROM item_results ir JOIN snapshots sn ON sn.id = ir.snapshot_id
    WHERE sn.status IS DISTINCT FROM 'held'
       OR NOT coalesce(list_contains(sn.held_tables, 'items' || chr(31) || ir.benchmark), true)
    GROUP BY ir.source, ir.benchmark
)
SELECT ir.source, ir.benchmark, ir.model, ir.item_id, ir.item_date, ir.score,
       ir.difficulty, ir.platform, ir.model_raw, ir.snapshot_id
FROM item_results ir
JOIN newest n USING (source, benchmark, snapshot_id)
QUALIFY row_number() OVER (PARTITION BY ir.source, ir.benchmark, ir.model, ir.item_id ORDER BY ir.model_raw) = 1;

COMMENT ON VIEW latest_item_results IS 'item-level result (a LiveCodeBench problem, a SWE-bench instance) of a model in the newest non-held snapshot of each (source, benchmark)';
COMMENT ON COLUMN latest_item_results.source IS 'the leaderboard site';
COMMENT ON COLUMN latest_item_results.benchmark IS 'canonical benchmark id';
COMMENT ON COLUMN latest_item_results.model IS 'canonical model id when known, else the page''s name';
COMMENT ON COLUMN latest_item_results.item_id IS 'the item''s id on the page (problem or instance id)';
COMMENT ON COLUMN latest_item_results.item_date IS 'when the item was released (contest date, issue date; NULL: undated)';
COMMENT ON COLUMN latest_item_results.score IS 'pass fraction of the model on the item, in [0, 1]';
COMMENT ON COLUMN latest_item_results.difficulty IS 'the item''s difficulty as the page states it (NULL: none)';
COMMENT ON COLUMN latest_item_results.platform IS 'where the item comes from (LeetCode, AtCoder, a repository; NULL: not stated)';
COMMENT ON COLUMN latest_item_results.model_raw IS 'the model name exactly as the page writes it';
COMMENT ON COLUMN latest_item_results.snapshot_id IS 'the snapshot the row comes from (snapshots.id)';

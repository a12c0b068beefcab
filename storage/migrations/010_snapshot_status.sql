-- 010: the shrink guard (storage/ingest.py). A snapshot that keeps at most half of the
-- previous snapshot's rows for a (source, benchmark) is stored with status 'held' and kept out
-- of latest_scores / latest_item_results and of the analysis until a later fetch sees the same
-- content again (status 'confirmed') or `benchwatch accept SNAPSHOT` releases it ('accepted').
-- Status values: ok | held | confirmed | accepted. Only 'held' is excluded anywhere.
ALTER TABLE snapshots ADD COLUMN IF NOT EXISTS status VARCHAR DEFAULT 'ok';
ALTER TABLE snapshots ADD COLUMN IF NOT EXISTS held_reason VARCHAR;
ALTER TABLE snapshots ADD COLUMN IF NOT EXISTS released_at TIMESTAMPTZ;
UPDATE snapshots SET status = 'ok' WHERE status IS NULL;

-- Redefined in full (was 001): held snapshots never become the newest. Rows of one snapshot
-- that map to one canonical (benchmark, model, setting) are excluded at store time after the
-- first (excluded_reason), so the view needs no de-duplication of scores.
CREATE OR REPLACE VIEW latest_scores AS
WITH newest AS (
    SELECT sc.source, sc.benchmark, max_by(sn.id, (sn.observed_at, sn.id)) AS snapshot_id
    FROM scores sc JOIN snapshots sn ON sn.id = sc.snapshot_id
    WHERE sn.status IS DISTINCT FROM 'held'
    GROUP BY sc.source, sc.benchmark
)
SELECT sc.source, sc.benchmark, sc.model, sc.score, sc.metric, sc.stderr, sc.n_items,
       sn.observed_at, sc.setting, sc.model_raw, sc.benchmark_raw, sc.ci_low, sc.ci_high,
       sc.model_release_date, sc.knowledge_cutoff, sc.evaluated_at, sc.snapshot_id,
       sc.variant, sc.population, sc.underlying            -- identity columns of 007
FROM scores sc
JOIN newest n USING (source, benchmark, snapshot_id)
JOIN snapshots sn ON sn.id = sc.snapshot_id
WHERE sc.excluded_reason = '';

-- Redefined in full (was 001): held snapshots skipped; two raw names of one snapshot that map
-- to one canonical model (o3 / O3) give one row per item (the smallest model_raw).
CREATE OR REPLACE VIEW latest_item_results AS
WITH newest AS (
    SELECT ir.source, ir.benchmark, max_by(sn.id, (sn.observed_at, sn.id)) AS snapshot_id
    FROM item_results ir JOIN snapshots sn ON sn.id = ir.snapshot_id
    WHERE sn.status IS DISTINCT FROM 'held'
    GROUP BY ir.source, ir.benchmark
)
SELECT ir.source, ir.benchmark, ir.model, ir.item_id, ir.item_date, ir.score,
       ir.difficulty, ir.platform, ir.model_raw, ir.snapshot_id
FROM item_results ir
JOIN newest n USING (source, benchmark, snapshot_id)
QUALIFY row_number() OVER (PARTITION BY ir.source, ir.benchmark, ir.model, ir.item_id ORDER BY ir.model_raw) = 1;

-- The benchmarks table under the key name every other view uses (`benchmark`, not `id`).
CREATE OR REPLACE VIEW benchmark_info AS
SELECT id AS benchmark, name, release_date, material_date, n_items, metric_kind, chance, ceiling,
       access, dynamic, skill, reference_benchmarks, paper_id, notes
FROM benchmarks;

COMMENT ON VIEW benchmark_info IS 'benchmark in the registry (registry/benchmarks.csv and names found in data), keyed by `benchmark` as every view is (the `benchmarks` table calls it id)';
COMMENT ON COLUMN benchmark_info.benchmark IS 'canonical benchmark id (benchmarks.id)';
COMMENT ON COLUMN benchmark_info.name IS 'display name';
COMMENT ON COLUMN benchmark_info.release_date IS 'when the benchmark was released';
COMMENT ON COLUMN benchmark_info.material_date IS 'date of its newest source material (the post-cutoff slices'' R_b)';
COMMENT ON COLUMN benchmark_info.n_items IS 'question-set size (NULL: unknown; a table may state its own)';
COMMENT ON COLUMN benchmark_info.metric_kind IS 'proportion | elo | score_10 | index | cost_usd | minutes';
COMMENT ON COLUMN benchmark_info.chance IS 'score of random guessing (headroom''s floor)';
COMMENT ON COLUMN benchmark_info.ceiling IS 'best attainable score';
COMMENT ON COLUMN benchmark_info.access IS 'public | private | … (how the question set is published)';
COMMENT ON COLUMN benchmark_info.dynamic IS 'the question set changes over time (n is nominal)';
COMMENT ON COLUMN benchmark_info.skill IS 'skill family (reference benchmarks share it)';
COMMENT ON COLUMN benchmark_info.reference_benchmarks IS 'benchmarks A1/A2 predict this one from (same skill, lower contamination risk)';
COMMENT ON COLUMN benchmark_info.paper_id IS 'row of the benchmark in Akhtar, Reuel et al. 2026 (NULL: not in the paper)';
COMMENT ON COLUMN benchmark_info.notes IS 'registry notes';

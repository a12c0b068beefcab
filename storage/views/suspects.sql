-- Every contamination test of the newest run; a flag is status <> 'not_flagged' and is a
-- suspicion, never a verdict. `why` says it in words (the numbers are in the other columns).
CREATE OR REPLACE VIEW suspects AS
SELECT s.model, s.benchmark, s.signal, s.effect, s.q_value, s.status, s.evidence,
       s.source, s.detail, s.se, s.ci_low, s.ci_high, s.p_value, s.flagged, r.run_id, r.as_of,
       CASE s.signal
           WHEN 'A1' THEN 'scores ' || coalesce(printf('%+.1f', 100 * s.effect), '?')
                          || ' pp against what its scores on the reference benchmarks predict'
           WHEN 'A2' THEN 'moved ' || coalesce(printf('%+.1f', 100 * s.effect), '?')
                          || ' pp beyond what the reference benchmarks predict ('
                          || coalesce(nullif(s.detail, ''), 'between snapshots') || ')'
           WHEN 'A3' THEN 'its pre- minus post-cutoff accuracy gap exceeds that of clean reference models by '
                          || coalesce(printf('%+.1f', 100 * s.effect), '?') || ' pp'
           ELSE s.signal || ' effect ' || coalesce(printf('%+.1f', 100 * s.effect), '?') || ' pp'
       END
       || CASE WHEN s.q_value IS NULL THEN '' ELSE printf(' (q = %.3g', s.q_value) || ', ' || s.status || ')' END AS why
FROM contamination_signals s
JOIN latest_contamination_run r USING (run_id);

COMMENT ON VIEW suspects IS 'contamination-suspect test of the newest analysis, flagged or not, with its evidence and why in words; a flag (status <> ''not_flagged'') is a suspicion, never a verdict';
COMMENT ON COLUMN suspects.model IS 'canonical model id';
COMMENT ON COLUMN suspects.benchmark IS 'canonical benchmark id';
COMMENT ON COLUMN suspects.signal IS 'A1 cross-benchmark residual | A2 jump | A3 pre/post-cutoff gap (docs/statistics.md)';
COMMENT ON COLUMN suspects.effect IS 'proportion: A1 residual δ, A2 jump J, A3 excess gap E (positive: suspicious direction)';
COMMENT ON COLUMN suspects.q_value IS 'Benjamini-Hochberg q within the signal''s family of the run';
COMMENT ON COLUMN suspects.status IS 'not_flagged | suspect | persisted (two distinct data versions) | corroborated (another signal or source agrees)';
COMMENT ON COLUMN suspects.evidence IS 'the numbers behind the test (JSON: windows, counts, references, snapshot ids, …)';
COMMENT ON COLUMN suspects.source IS 'the leaderboard site the tested scores come from';
COMMENT ON COLUMN suspects.detail IS 'which comparison, part of the test''s key: A2 ''predecessor <model>'' or ''rescore <setting>''; '''' for A1 and A3 (one test per model, benchmark and source)';
COMMENT ON COLUMN suspects.se IS 'standard error of effect';
COMMENT ON COLUMN suspects.ci_low IS 'lower end of the 95 % interval of effect';
COMMENT ON COLUMN suspects.ci_high IS 'upper end of the 95 % interval of effect';
COMMENT ON COLUMN suspects.p_value IS 'one-sided p-value of the test';
COMMENT ON COLUMN suspects.flagged IS 'q, effect size and floors all passed';
COMMENT ON COLUMN suspects.run_id IS 'the contamination run (latest_contamination_run)';
COMMENT ON COLUMN suspects.as_of IS 'newest snapshot observation behind the run';
COMMENT ON COLUMN suspects.why IS 'the test in words: what the effect means, q and status';

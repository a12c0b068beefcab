-- Item-level post-cutoff slices of the newest run, with the cutoff they rest on.
CREATE OR REPLACE VIEW post_cutoff_scores AS
SELECT p.model, p.benchmark, p.score, p.n_items, p.stderr, p.window_start, p.window_end,
       p.source, p.low_n, p.score_std, p.score_pre, p.n_pre, p.stderr_pre, p.pre_window_end,
       c.cutoff_provenance, c.cutoff_source, c.conflict AS cutoff_conflict, r.run_id, r.as_of
FROM post_cutoff_slices p
JOIN latest_contamination_run r USING (run_id)
LEFT JOIN cutoff_resolutions c ON c.run_id = p.run_id AND c.model = p.model;

COMMENT ON VIEW post_cutoff_scores IS '(model, benchmark, source) with dated items: the model''s mean over items dated after its cutoff + 30 days (S_post) beside its mean before the cutoff, newest analysis';
COMMENT ON COLUMN post_cutoff_scores.model IS 'canonical model id';
COMMENT ON COLUMN post_cutoff_scores.benchmark IS 'canonical benchmark id';
COMMENT ON COLUMN post_cutoff_scores.score IS 'S_post: mean pass fraction over items dated in (window_start, window_end] (NULL: no such item)';
COMMENT ON COLUMN post_cutoff_scores.n_items IS 'items in the post-cutoff window';
COMMENT ON COLUMN post_cutoff_scores.stderr IS 'item-clustered standard error of score: sd / sqrt(n)';
COMMENT ON COLUMN post_cutoff_scores.window_start IS 'cutoff (upper end of its interval) + 30 days, exclusive';
COMMENT ON COLUMN post_cutoff_scores.window_end IS 'the analysis time, inclusive';
COMMENT ON COLUMN post_cutoff_scores.source IS 'the leaderboard site the items come from';
COMMENT ON COLUMN post_cutoff_scores.low_n IS 'fewer than 100 post-cutoff items: use a larger window';
COMMENT ON COLUMN post_cutoff_scores.score_std IS 'S_post reweighted to the benchmark''s all-time difficulty mix';
COMMENT ON COLUMN post_cutoff_scores.score_pre IS 'mean pass fraction over items dated at or before the cutoff''s lower end';
COMMENT ON COLUMN post_cutoff_scores.n_pre IS 'items in the pre-cutoff window';
COMMENT ON COLUMN post_cutoff_scores.stderr_pre IS 'standard error of score_pre';
COMMENT ON COLUMN post_cutoff_scores.pre_window_end IS 'end of the pre-cutoff window (the cutoff''s lower end, inclusive)';
COMMENT ON COLUMN post_cutoff_scores.cutoff_provenance IS 'what the cutoff used rests on: vendor_doc | model_card | registry | leaderboard | listing | inferred';
COMMENT ON COLUMN post_cutoff_scores.cutoff_source IS 'who stated the cutoff used';
COMMENT ON COLUMN post_cutoff_scores.cutoff_conflict IS 'the model''s date claims disagree by more than 31 days';
COMMENT ON COLUMN post_cutoff_scores.run_id IS 'the contamination run (latest_contamination_run)';
COMMENT ON COLUMN post_cutoff_scores.as_of IS 'newest snapshot observation behind the run';

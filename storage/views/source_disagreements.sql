-- One row per (model, benchmark, pair of leaderboard tables of two sources) that measure the model
-- on the same question set: how far apart the two numbers are, in their own uncertainty (issue 54).
--
-- Which tables pair: two tables of one benchmark from different sources whose question-set version
-- is the same (a row's version is its table's; an `external` row's is the release its `version=`
-- setting names, else none), or a pair registry/comparisons.csv declares (rendered into `decl`
-- below): `copy` (an Epoch `*_external` member and the board it copies: kind 'transcription', kept
-- out of the statistics) or `harness` (the same question set, the harness difference named).
-- A declared pair replaces the default pairing of its two tables. Within one metric only.
--
-- Which rows: each table's newest usable snapshot (held tables left out, as latest_scores); an agent
-- system counts for the one model it runs on (`underlying`). A row's setting key is its effort /
-- thinking budget / reasoning mode, from the variant and the setting ('' = the plain run: none
-- stated, 'unknown', 'default', 'no thinking', 'non-reasoning'); other settings (shots, scaffold,
-- edit format) are named in `why`. Each side's best row per key is used (the `leaderboard`
-- convention); for a transcription, the copy's row closest to the origin's at a common key (the
-- check asks whether the origin's number was copied, not which of several rows is best). The pair is compared at a key both sides state (the plain run first, else the key of
-- side a's best); when they share none, each side's best row is listed with comparable = false and
-- the mismatch named in `why`, never compared silently.
--
-- Standard errors: the page's, else its 95 % interval / 3.92, else for a proportion from n (the
-- row's n, else the registry's): sqrt(p(1-p)/n) with p shrunk to (pn + 1/2)/(n + 1) so a 0 or 1 has
-- one. se_diff = sqrt(se_a² + se_b²) treats the two runs as independent: when both ran the same
-- items (the usual case) their item sampling errors are positively correlated, so the true SE of
-- the difference is smaller and this z is conservative.
CREATE OR REPLACE VIEW source_disagreements AS
WITH tables AS (   -- one small row per (table, snapshot) first, not per score
    SELECT DISTINCT source, benchmark, coalesce(table_version, '') AS version, snapshot_id FROM scores
), newest AS (     -- each table's newest usable snapshot (a replaced release too: its question set stays)
    SELECT t.source, t.benchmark, t.version, max_by(sn.id, (sn.observed_at, sn.id)) AS snapshot_id
    FROM tables t JOIN snapshots sn ON sn.id = t.snapshot_id
    WHERE sn.status IS DISTINCT FROM 'held'
       OR NOT coalesce(list_contains(sn.held_tables, 'scores' || chr(31) || t.benchmark || chr(31) || t.version), true)
    GROUP BY t.source, t.benchmark, t.version
), shared AS (     -- benchmarks that two sources measure
    SELECT benchmark FROM newest GROUP BY benchmark HAVING count(DISTINCT source) > 1
), decl AS (
    SELECT * FROM (VALUES {{source_comparisons}}) v(kind, benchmark, a_source, a_version, b_source, b_version, reason)
    WHERE kind IS NOT NULL
), raw AS (
    SELECT sc.source, sc.benchmark, coalesce(sc.table_version, '') AS tv,
           CASE WHEN sc.population = 'systems' THEN sc.underlying ELSE sc.model END AS model,
           sc.population, sc.model_raw, sc.score, sc.metric, sc.stderr, sc.ci_low, sc.ci_high,
           coalesce(sc.n_items, b.n_items) AS n,
           CASE WHEN sc.n_items IS NOT NULL THEN 'page' WHEN b.n_items IS NOT NULL THEN 'registry' END AS n_from,
           coalesce(sc.evaluated_at, sn.observed_at)::DATE AS day, sc.snapshot_id, sc.setting,
           trim(regexp_replace(sc.setting, '(^|;\s*)(run|effort|thinking|mode|version)=[^;]*', '', 'g'), '; ') AS shown_setting,
           regexp_extract(sc.setting, '(?:^|;\s*)version=([^;]*)', 1) AS stated_version,
           list_transform(string_split(coalesce(sc.variant, '') || ';' || sc.setting, ';'),
                          lambda p: [lower(trim(split_part(p, '=', 1))), lower(trim(split_part(p, '=', 2)))]) AS kv,
           CASE WHEN sc.metric IN ({{lower_is_better}}) THEN -sc.score ELSE sc.score END AS better
    FROM scores sc
    JOIN newest nw ON nw.source = sc.source AND nw.benchmark = sc.benchmark AND nw.snapshot_id = sc.snapshot_id
                  AND nw.version = coalesce(sc.table_version, '')
    JOIN shared sh ON sh.benchmark = sc.benchmark
    JOIN snapshots sn ON sn.id = sc.snapshot_id
    LEFT JOIN benchmarks b ON b.id = sc.benchmark
    WHERE sc.excluded_reason = '' AND NOT coalesce(sc.is_reference, false)
), r AS MATERIALIZED (
    SELECT *, row_number() OVER (ORDER BY source, benchmark, tv, model, model_raw, setting, snapshot_id) AS rid,
           source || CASE WHEN tv = '' THEN '' ELSE ':' || tv END AS label,
           CASE WHEN tv <> 'external' THEN tv
                WHEN regexp_matches(stated_version, '\d{4}-\d{2}-\d{2}')
                    THEN regexp_extract(stated_version, '\d{4}-\d{2}-\d{2}')
                ELSE trim(stated_version) END AS rv,
           array_to_string(list_sort(list_distinct(list_filter(list_transform(kv, lambda x:
               CASE WHEN x[1] NOT IN ('effort', 'thinking', 'mode') THEN ''
                    WHEN x[2] IN ('thinking', 'reasoning', 'on') THEN 'on'
                    WHEN x[2] IN ('', 'unknown', 'default', 'default think', 'default thinking', 'no', 'none', 'off',
                                  'non-reasoning', 'no thinking', 'no think', 'nothinking') THEN ''
                    ELSE regexp_replace(x[2], '\s*(thinking|think|tokens)\s*', '', 'g') END),
               lambda x: x <> ''))), ',') AS skey
    FROM raw WHERE model IS NOT NULL AND model <> ''
), cand AS MATERIALIZED (       -- every pair of rows of one model in two paired tables
    SELECT CASE d.kind WHEN 'copy' THEN 'transcription' ELSE 'measurement' END AS kind, d.reason,
           a.benchmark, a.model, a.label AS ta, b.label AS tb, a.rid AS a_rid, b.rid AS b_rid,
           a.skey AS skey_a, b.skey AS skey_b, abs(a.score - b.score) AS gap
    FROM decl d
    JOIN r a ON a.benchmark = d.benchmark AND a.source = d.a_source AND a.tv = d.a_version
    JOIN r b ON b.benchmark = a.benchmark AND b.model = a.model AND b.metric = a.metric AND b.source = d.b_source
            AND CASE WHEN d.b_version = '*' THEN b.tv = a.rv ELSE b.tv = d.b_version END
    UNION ALL
    SELECT 'measurement', '', a.benchmark, a.model, a.label, b.label, a.rid, b.rid, a.skey, b.skey,
           abs(a.score - b.score)
    FROM r a
    JOIN r b ON b.benchmark = a.benchmark AND b.model = a.model AND b.metric = a.metric AND a.source < b.source
            AND a.rv = b.rv
    WHERE NOT EXISTS (SELECT 1 FROM decl d WHERE d.benchmark = a.benchmark
                      AND ((d.a_source = a.source AND d.a_version = a.tv AND d.b_source = b.source)
                        OR (d.a_source = b.source AND d.a_version = b.tv AND d.b_source = a.source)))
), info AS MATERIALIZED (  -- one id per pair: (kind, benchmark, model, table a, table b)
    SELECT DISTINCT kind, reason, benchmark, model, ta, tb,
           dense_rank() OVER (ORDER BY kind, reason, benchmark, model, ta, tb) AS pid
    FROM cand
), rows AS MATERIALIZED (
    SELECT i.pid, c.a_rid, c.b_rid, c.skey_a, c.skey_b, c.gap FROM cand c
    JOIN info i ON i.kind = c.kind AND i.reason = c.reason AND i.benchmark = c.benchmark AND i.model = c.model
               AND i.ta = c.ta AND i.tb = c.tb
), sides AS (
    SELECT DISTINCT pid, 'a' AS side, a_rid AS rid FROM rows
    UNION
    SELECT DISTINCT pid, 'b' AS side, b_rid AS rid FROM rows
), best AS MATERIALIZED (   -- each side's best row per setting key, and how many rows it was chosen from
    SELECT s.pid, s.side, r.skey, arg_max(r.rid, (r.better, -r.rid)) AS rid, max(r.better) AS top,
           count(*) AS n_rows
    FROM sides s JOIN r USING (rid)
    GROUP BY s.pid, s.side, r.skey
), keys AS (       -- the keys each side states, for the `why` of a mismatch
    SELECT pid, side, string_agg(CASE WHEN skey = '' THEN 'none' ELSE skey END, ' | ' ORDER BY skey) AS stated,
           arg_max(rid, (top, skey)) AS best_rid, arg_max(n_rows, (top, skey)) AS best_n
    FROM best GROUP BY pid, side
), matched AS MATERIALIZED (
    -- a measurement: each side's best row at the chosen common key
    SELECT a.pid, a.rid AS a_rid, b.rid AS b_rid, a.n_rows AS n_a, b.n_rows AS n_b, a.skey AS skey
    FROM best a
    JOIN best b ON b.pid = a.pid AND b.side = 'b' AND b.skey = a.skey
    JOIN info i ON i.pid = a.pid
    WHERE a.side = 'a' AND i.kind = 'measurement'
    QUALIFY row_number() OVER (PARTITION BY a.pid ORDER BY a.skey <> '', a.top DESC, a.skey) = 1
    UNION ALL      -- a transcription: the copy closest to the origin's row at a common key (does the
                   -- origin's number appear among the copy's rows? not which run is best)
    SELECT x.pid, x.a_rid, x.b_rid, ba.n_rows, bb.n_rows, x.skey_a
    FROM rows x
    JOIN info i ON i.pid = x.pid
    JOIN best ba ON ba.pid = x.pid AND ba.side = 'a' AND ba.skey = x.skey_a
    JOIN best bb ON bb.pid = x.pid AND bb.side = 'b' AND bb.skey = x.skey_b
    WHERE i.kind = 'transcription' AND x.skey_a = x.skey_b
    QUALIFY row_number() OVER (PARTITION BY x.pid ORDER BY x.gap, x.skey_a, x.a_rid, x.b_rid) = 1
), pairs AS (
    SELECT i.*, m.a_rid, m.b_rid, m.n_a, m.n_b, true AS comparable, m.skey,
           NULL::VARCHAR AS stated_a, NULL::VARCHAR AS stated_b
    FROM matched m JOIN info i USING (pid)
    UNION ALL      -- no key in common: each side's best row, listed, not compared
    SELECT i.*, a.best_rid, b.best_rid, a.best_n, b.best_n, false, NULL, a.stated, b.stated
    FROM keys a
    JOIN keys b ON b.pid = a.pid AND b.side = 'b'
    JOIN info i ON i.pid = a.pid
    WHERE a.side = 'a' AND a.pid NOT IN (SELECT pid FROM matched)
), sized AS (
    SELECT p.*, ra.source AS source_a, rb.source AS source_b, ra.score AS score_a, rb.score AS score_b,
           ra.metric, ra.day AS date_a, rb.day AS date_b, ra.model_raw AS model_raw_a, rb.model_raw AS model_raw_b,
           ra.skey AS setting_a, rb.skey AS setting_b, ra.snapshot_id AS snapshot_a, rb.snapshot_id AS snapshot_b,
           ra.population AS population_a, rb.population AS population_b,
           ra.shown_setting AS shown_a, rb.shown_setting AS shown_b,
           CASE WHEN ra.stderr IS NOT NULL THEN ra.stderr
                WHEN ra.ci_high > ra.ci_low THEN (ra.ci_high - ra.ci_low) / 3.919927969
                WHEN ra.metric = 'proportion' AND ra.n > 0
                    THEN sqrt(((ra.score * ra.n + 0.5) / (ra.n + 1)) * (1 - (ra.score * ra.n + 0.5) / (ra.n + 1)) / ra.n)
           END AS se_a,
           CASE WHEN rb.stderr IS NOT NULL THEN rb.stderr
                WHEN rb.ci_high > rb.ci_low THEN (rb.ci_high - rb.ci_low) / 3.919927969
                WHEN rb.metric = 'proportion' AND rb.n > 0
                    THEN sqrt(((rb.score * rb.n + 0.5) / (rb.n + 1)) * (1 - (rb.score * rb.n + 0.5) / (rb.n + 1)) / rb.n)
           END AS se_b,
           CASE WHEN ra.stderr IS NOT NULL THEN 'published' WHEN ra.ci_high > ra.ci_low THEN 'interval'
                WHEN ra.metric = 'proportion' AND ra.n > 0 THEN 'n=' || ra.n || ' (' || ra.n_from || ')' END AS se_from_a,
           CASE WHEN rb.stderr IS NOT NULL THEN 'published' WHEN rb.ci_high > rb.ci_low THEN 'interval'
                WHEN rb.metric = 'proportion' AND rb.n > 0 THEN 'n=' || rb.n || ' (' || rb.n_from || ')' END AS se_from_b
    FROM pairs p JOIN r ra ON ra.rid = p.a_rid JOIN r rb ON rb.rid = p.b_rid
)
SELECT model, benchmark, source_a, source_b, score_a, score_b, se_a, se_b,
       score_a - score_b AS diff, sqrt(se_a * se_a + se_b * se_b) AS se_diff,
       CASE WHEN se_a * se_a + se_b * se_b > 0 THEN (score_a - score_b) / sqrt(se_a * se_a + se_b * se_b) END AS z,
       date_a, date_b,
       concat_ws('; ',
           CASE WHEN kind = 'transcription' THEN 'transcription check: ' || reason
                ELSE coalesce(nullif(reason, ''), 'each source''s own harness (no difference declared in registry/comparisons.csv)') END,
           CASE WHEN NOT comparable THEN 'settings differ, not compared: ' || ta || ' states ' || stated_a || ', '
                                         || tb || ' states ' || stated_b END,
           CASE WHEN comparable AND skey <> '' THEN 'both at ' || skey END,
           CASE WHEN population_a = 'systems' THEN ta || ' system ' || model_raw_a END,
           CASE WHEN population_b = 'systems' THEN tb || ' system ' || model_raw_b END,
           CASE WHEN n_a > 1 THEN ta || CASE kind WHEN 'transcription' THEN ' closest' ELSE ' best' END
                                   || ' of ' || n_a || ' rows' END,
           CASE WHEN n_b > 1 THEN tb || CASE kind WHEN 'transcription' THEN ' closest' ELSE ' best' END
                                   || ' of ' || n_b || ' rows' END,
           CASE WHEN population_a <> 'systems' AND shown_a <> '' THEN ta || ' setting ' || shown_a END,
           CASE WHEN population_b <> 'systems' AND shown_b <> '' THEN tb || ' setting ' || shown_b END,
           CASE WHEN NOT EXISTS (SELECT 1 FROM models mo WHERE mo.id = sized.model)
                THEN 'model matched by name (not in the registry)' END,
           CASE WHEN se_a IS NULL OR se_b IS NULL THEN 'no standard error for '
                || concat_ws(' and ', CASE WHEN se_a IS NULL THEN ta END, CASE WHEN se_b IS NULL THEN tb END) END
       ) AS why,
       kind, comparable, ta AS table_a, tb AS table_b, metric, setting_a, setting_b, se_from_a, se_from_b,
       model_raw_a, model_raw_b, snapshot_a, snapshot_b
FROM sized;

COMMENT ON VIEW source_disagreements IS 'model, benchmark and pair of leaderboard tables of two sources measuring it on the same question set (same benchmark and version, or a pair registry/comparisons.csv declares): both scores, their standard errors and the z of the gap; kind transcription = an Epoch *_external copy beside the board it copies (a check, not a measurement); comparable false = the two sides state no common setting (listed, not compared); docs/disagreements.md';
COMMENT ON COLUMN source_disagreements.model IS 'canonical model id (model_info.model); for an agent system the one model it runs on';
COMMENT ON COLUMN source_disagreements.benchmark IS 'canonical benchmark id (benchmark_info.benchmark)';
COMMENT ON COLUMN source_disagreements.source_a IS 'the first source (the declared table of registry/comparisons.csv, else the first by name)';
COMMENT ON COLUMN source_disagreements.source_b IS 'the second source (the board a transcription copies)';
COMMENT ON COLUMN source_disagreements.score_a IS 'source a''s score (the best row at the compared setting; a proportion in [0, 1] for accuracy-like metrics)';
COMMENT ON COLUMN source_disagreements.score_b IS 'source b''s score, same metric and scale as score_a';
COMMENT ON COLUMN source_disagreements.se_a IS 'standard error of score_a: published, else from its 95 % interval, else from n for a proportion (se_from_a says which); NULL: none';
COMMENT ON COLUMN source_disagreements.se_b IS 'standard error of score_b (se_from_b says where it comes from); NULL: none';
COMMENT ON COLUMN source_disagreements.diff IS 'score_a - score_b';
COMMENT ON COLUMN source_disagreements.se_diff IS 'sqrt(se_a² + se_b²): treats the two runs as independent; conservative (too large) when both ran the same items, as they usually do';
COMMENT ON COLUMN source_disagreements.z IS 'diff / se_diff (NULL without both standard errors); conservative for the same reason as se_diff; before any systematic offset between the two sources (analysis/disagreement.py estimates it)';
COMMENT ON COLUMN source_disagreements.date_a IS 'when source a''s row was evaluated (the page''s date), else when its snapshot was observed';
COMMENT ON COLUMN source_disagreements.date_b IS 'when source b''s row was evaluated (the page''s date), else when its snapshot was observed';
COMMENT ON COLUMN source_disagreements.why IS 'why the two are paired and what differs: the declared harness difference or the copy, the compared setting or the settings that differ, systems, rows chosen from, other stated settings, a missing standard error';
COMMENT ON COLUMN source_disagreements.kind IS 'measurement (two runs on one question set) | transcription (a copy beside its origin: any gap beyond rounding is an error, kept out of the statistics)';
COMMENT ON COLUMN source_disagreements.comparable IS 'true: compared at a setting both sides state; false: they state none in common (each side''s best row shown, the mismatch named in why)';
COMMENT ON COLUMN source_disagreements.table_a IS 'source a''s table: source[:table_version] (epoch:external = numbers Epoch copied)';
COMMENT ON COLUMN source_disagreements.table_b IS 'source b''s table: source[:table_version]';
COMMENT ON COLUMN source_disagreements.metric IS 'kind of score both rows share (proportion, elo, …): pairs are formed within one metric only';
COMMENT ON COLUMN source_disagreements.setting_a IS 'source a''s row''s setting key: effort, thinking budget or reasoning mode (''''= the plain run)';
COMMENT ON COLUMN source_disagreements.setting_b IS 'source b''s row''s setting key (''''= the plain run)';
COMMENT ON COLUMN source_disagreements.se_from_a IS 'where se_a comes from: published | interval | n=<n> (page or registry); NULL: none';
COMMENT ON COLUMN source_disagreements.se_from_b IS 'where se_b comes from: published | interval | n=<n> (page or registry); NULL: none';
COMMENT ON COLUMN source_disagreements.model_raw_a IS 'the model (or system) name as source a writes it';
COMMENT ON COLUMN source_disagreements.model_raw_b IS 'the model (or system) name as source b writes it';
COMMENT ON COLUMN source_disagreements.snapshot_a IS 'the snapshot source a''s row comes from (snapshots.id)';
COMMENT ON COLUMN source_disagreements.snapshot_b IS 'the snapshot source b''s row comes from (snapshots.id)';

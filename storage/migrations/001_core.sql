-- 001: core history store. Append-only: snapshots are never rewritten; re-ingesting the same
-- bytes adds no rows (idempotent by content hash). All instants are TIMESTAMPTZ (UTC sessions).

CREATE SEQUENCE IF NOT EXISTS fetch_id_seq START 1;
CREATE SEQUENCE IF NOT EXISTS snapshot_id_seq START 1;

-- Every attempt to obtain a source's response (HTTP, replay or a local file).
CREATE TABLE IF NOT EXISTS fetches (
    id            BIGINT PRIMARY KEY DEFAULT nextval('fetch_id_seq'),
    run_id        VARCHAR,
    source        VARCHAR NOT NULL,
    url           VARCHAR NOT NULL,
    started_at    TIMESTAMPTZ NOT NULL,
    finished_at   TIMESTAMPTZ,
    status        VARCHAR NOT NULL,          -- ok | not_modified | error | unchanged | parse_error
    http_status   INTEGER,
    bytes         BIGINT,
    sha256        VARCHAR,
    etag          VARCHAR,
    last_modified VARCHAR,
    error         VARCHAR
);

-- Raw bytes of every distinct response, zlib-compressed, keyed by SHA-256 of the raw bytes.
CREATE TABLE IF NOT EXISTS blobs (
    sha256      VARCHAR PRIMARY KEY,
    size        BIGINT NOT NULL,
    compression VARCHAR NOT NULL,            -- zlib
    content     BLOB NOT NULL,
    first_seen  TIMESTAMPTZ NOT NULL
);

-- One row per distinct content of a source (primary response + aux responses).
CREATE TABLE IF NOT EXISTS snapshots (
    id             BIGINT PRIMARY KEY DEFAULT nextval('snapshot_id_seq'),
    source         VARCHAR NOT NULL,
    sha256         VARCHAR NOT NULL,          -- of the primary + aux hashes (= primary hash when no aux)
    blob_sha256    VARCHAR[] NOT NULL,        -- primary first, then aux
    file_names     VARCHAR[] NOT NULL,
    observed_at    TIMESTAMPTZ NOT NULL,      -- when the content was (first) observed; --observed-at for backfills
    first_seen     TIMESTAMPTZ NOT NULL,
    last_seen      TIMESTAMPTZ NOT NULL,
    origin         VARCHAR NOT NULL,          -- ingest | fetch | replay
    parser_version INTEGER NOT NULL,
    n_scores       INTEGER NOT NULL,
    n_items        INTEGER NOT NULL,
    n_models       INTEGER NOT NULL,
    n_rejects      INTEGER NOT NULL,
    warnings       VARCHAR[],
    meta           JSON,
    UNIQUE (source, sha256)
);

-- Registry (loaded from registry/*.csv at every migration run, plus names discovered in data).
CREATE TABLE IF NOT EXISTS benchmarks (
    id                   VARCHAR PRIMARY KEY,
    name                 VARCHAR,
    paper_id             INTEGER,
    release_date         DATE,
    material_date        DATE,
    n_items              INTEGER,
    metric_kind          VARCHAR,
    chance               DOUBLE,
    ceiling              DOUBLE,
    access               VARCHAR,
    dynamic              BOOLEAN,
    skill                VARCHAR,
    reference_benchmarks VARCHAR[],
    notes                VARCHAR
);

CREATE TABLE IF NOT EXISTS models (
    id                VARCHAR PRIMARY KEY,
    name              VARCHAR,
    org               VARCHAR,
    release_date      DATE,
    knowledge_cutoff  DATE,
    cutoff_provenance VARCHAR,
    open_weights      BOOLEAN,
    source            VARCHAR
);

CREATE TABLE IF NOT EXISTS aliases (
    kind      VARCHAR NOT NULL,               -- model | benchmark
    alias_key VARCHAR NOT NULL,               -- registry.alias_key(alias)
    alias     VARCHAR NOT NULL,
    canonical VARCHAR NOT NULL,
    PRIMARY KEY (kind, alias_key)
);

-- Scores as each snapshot states them, after name mapping. excluded_reason <> '' = stored, not used.
CREATE TABLE IF NOT EXISTS scores (
    snapshot_id        BIGINT NOT NULL,
    source             VARCHAR NOT NULL,
    benchmark          VARCHAR NOT NULL,      -- canonical id when known, else the page's name
    benchmark_raw      VARCHAR NOT NULL,
    model              VARCHAR NOT NULL,      -- canonical id when known, else the page's name
    model_raw          VARCHAR NOT NULL,
    setting            VARCHAR NOT NULL,
    score              DOUBLE NOT NULL,
    raw_value          VARCHAR,
    metric             VARCHAR NOT NULL,
    stderr             DOUBLE,
    ci_low             DOUBLE,
    ci_high            DOUBLE,
    n_items            INTEGER,
    model_release_date DATE,
    knowledge_cutoff   DATE,
    evaluated_at       TIMESTAMPTZ,
    excluded_reason    VARCHAR NOT NULL,
    PRIMARY KEY (snapshot_id, benchmark_raw, model_raw, setting)
);

CREATE TABLE IF NOT EXISTS item_results (
    snapshot_id BIGINT NOT NULL,
    source      VARCHAR NOT NULL,
    benchmark   VARCHAR NOT NULL,
    model       VARCHAR NOT NULL,
    model_raw   VARCHAR NOT NULL,
    item_id     VARCHAR NOT NULL,
    item_date   DATE,
    difficulty  VARCHAR,
    platform    VARCHAR,
    score       DOUBLE NOT NULL,
    PRIMARY KEY (snapshot_id, benchmark, model_raw, item_id)
);

-- Every claim about a model's dates, from any source, with provenance. Conflicts stay visible.
CREATE TABLE IF NOT EXISTS model_dates (
    model            VARCHAR NOT NULL,
    model_raw        VARCHAR NOT NULL,
    source           VARCHAR NOT NULL,        -- registry | a scraper source name
    snapshot_id      BIGINT,                  -- NULL for the registry
    release_date     DATE,
    knowledge_cutoff DATE,
    provenance       VARCHAR NOT NULL,        -- vendor_doc | model_card | leaderboard | listing | inferred | registry
    org              VARCHAR,
    observed_at      TIMESTAMPTZ NOT NULL
);

CREATE TABLE IF NOT EXISTS rejects (
    snapshot_id BIGINT,
    source      VARCHAR NOT NULL,
    file_name   VARCHAR,
    row_json    VARCHAR,
    reason      VARCHAR NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL
);

-- For each (source, benchmark): the rows of the newest snapshot of that source that contains the
-- benchmark. Excluded rows (adversarial/test entries) are left out; they stay in `scores`.
CREATE OR REPLACE VIEW latest_scores AS
WITH newest AS (
    SELECT sc.source, sc.benchmark, max_by(sn.id, (sn.observed_at, sn.id)) AS snapshot_id
    FROM scores sc JOIN snapshots sn ON sn.id = sc.snapshot_id
    GROUP BY sc.source, sc.benchmark
)
SELECT sc.source, sc.benchmark, sc.model, sc.score, sc.metric, sc.stderr, sc.n_items,
       sn.observed_at, sc.setting, sc.model_raw, sc.benchmark_raw, sc.ci_low, sc.ci_high,
       sc.model_release_date, sc.knowledge_cutoff, sc.evaluated_at, sc.snapshot_id
FROM scores sc
JOIN newest n USING (source, benchmark, snapshot_id)
JOIN snapshots sn ON sn.id = sc.snapshot_id
WHERE sc.excluded_reason = '';

CREATE OR REPLACE VIEW latest_item_results AS
WITH newest AS (
    SELECT ir.source, ir.benchmark, max_by(sn.id, (sn.observed_at, sn.id)) AS snapshot_id
    FROM item_results ir JOIN snapshots sn ON sn.id = ir.snapshot_id
    GROUP BY ir.source, ir.benchmark
)
SELECT ir.source, ir.benchmark, ir.model, ir.item_id, ir.item_date, ir.score,
       ir.difficulty, ir.platform, ir.model_raw, ir.snapshot_id
FROM item_results ir
JOIN newest n USING (source, benchmark, snapshot_id);

-- One row per date claim (registry and every source); the resolution with priorities is
-- analysis.cutoffs' job. Conflicts are visible by comparing rows of one model.
CREATE OR REPLACE VIEW model_cutoffs AS
SELECT model, knowledge_cutoff, release_date, provenance, source,
       any_value(model_raw) AS model_raw, max(snapshot_id) AS snapshot_id,
       min(observed_at) AS first_observed_at, max(observed_at) AS last_observed_at
FROM model_dates
GROUP BY model, knowledge_cutoff, release_date, provenance, source;

-- Key/value facts about this database file (registry hash, …).
CREATE TABLE IF NOT EXISTS meta (
    key   VARCHAR PRIMARY KEY,
    value VARCHAR
);

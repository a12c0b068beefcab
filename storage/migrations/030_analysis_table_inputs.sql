-- 030: the input fingerprint of each unit of the last analysis (issue 23, incremental analysis).
-- A unit is a leaderboard table (part 'table', key = table_id), an item group A3 tests (part
-- 'a3', key = source || chr(31) || benchmark) or the inputs every unit shares (part 'global',
-- key ''): analysis code and constants, the registry. `analyze` recomputes the units whose
-- fingerprint changed and keeps the stored results of the others (jobs/analyze.py).
CREATE TABLE IF NOT EXISTS analysis_unit_inputs (
    part        VARCHAR NOT NULL,
    key         VARCHAR NOT NULL,
    fingerprint VARCHAR NOT NULL,           -- sha256 hex (storage/fingerprint.py, jobs/analyze.py)
    computed_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (part, key)
);

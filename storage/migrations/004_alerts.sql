-- 004: alert state, the immutable alert event log, the notification outbox/log, and silences.
-- Written by storage/alerts.py only; the rules and the state machine live in alerts/rules.py.
-- Delivery is outbox-based: an evaluation writes states, events and notifications in one
-- transaction; a notification is marked delivered only after Slack (or the console) took it.

CREATE SEQUENCE IF NOT EXISTS notification_id_seq START 1;
CREATE SEQUENCE IF NOT EXISTS silence_id_seq START 1;

-- One row per alert identity (fingerprint = hash of the sorted labels), updated in place.
CREATE TABLE IF NOT EXISTS alerts (
    fingerprint    VARCHAR PRIMARY KEY,
    kind           VARCHAR NOT NULL,          -- saturation_bin_changed | contamination_suspect | source_failing | ...
    labels         JSON NOT NULL,             -- kind, benchmark, model, source, scope, signal, level
    state          VARCHAR NOT NULL,          -- pending | firing | resolved | inactive
    since          TIMESTAMPTZ NOT NULL,      -- when it entered `state`
    last_evaluated TIMESTAMPTZ NOT NULL,
    fired_at       TIMESTAMPTZ,               -- start of the current/last firing episode
    pending_count  INTEGER NOT NULL,
    data_as_of     TIMESTAMPTZ,               -- newest data version counted
    notified       VARCHAR NOT NULL,          -- none | queued | muted | baseline (firing of this episode)
    muted_by       VARCHAR NOT NULL,          -- '' or 'silence 3' / 'inhibited by source_failing{source=x}'
    annotations    JSON NOT NULL              -- numbers, evidence, why, sql
);

-- Immutable audit log: state transitions and committed saturation moves (SaturationBinChanged).
CREATE TABLE IF NOT EXISTS alert_events (
    key         VARCHAR PRIMARY KEY,          -- re-evaluating the same data re-asserts, never duplicates
    occurred_at TIMESTAMPTZ NOT NULL,
    kind        VARCHAR NOT NULL,
    event       VARCHAR NOT NULL,             -- SaturationBinChanged | AlertPending | AlertFiring | AlertResolved | ...
    fingerprint VARCHAR NOT NULL,
    detail      JSON NOT NULL,
    recorded_at TIMESTAMPTZ NOT NULL
);

-- Outbox and notification log: one row per firing/resolved transition, never two.
CREATE TABLE IF NOT EXISTS notifications (
    id            BIGINT PRIMARY KEY DEFAULT nextval('notification_id_seq'),
    fingerprint   VARCHAR NOT NULL,
    kind          VARCHAR NOT NULL,
    transition    VARCHAR NOT NULL,           -- firing | resolved
    episode       TIMESTAMPTZ NOT NULL,       -- fired_at of the firing episode
    payload       JSON NOT NULL,              -- labels and annotations as evaluated
    created_at    TIMESTAMPTZ NOT NULL,
    delivered_at  TIMESTAMPTZ,                -- NULL: still to deliver (retried by every notify run)
    receiver      VARCHAR,                    -- slack-webhook | slack-web:#channel | console
    attempts      INTEGER NOT NULL DEFAULT 0, -- failed delivery attempts
    last_error    VARCHAR,                    -- redacted, one line
    claimed_until TIMESTAMPTZ,                -- a notify run is delivering it (lease against a concurrent run)
    UNIQUE (fingerprint, transition, episode)
);

CREATE TABLE IF NOT EXISTS silences (
    id         BIGINT PRIMARY KEY DEFAULT nextval('silence_id_seq'),
    matchers   JSON NOT NULL,                 -- {"label": "value", ...}: all must equal
    starts_at  TIMESTAMPTZ NOT NULL,
    ends_at    TIMESTAMPTZ NOT NULL,
    author     VARCHAR NOT NULL,
    comment    VARCHAR NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    expired_at TIMESTAMPTZ                    -- set by `benchwatch silence expire`
);

CREATE OR REPLACE VIEW alerts_firing AS
SELECT kind, labels->>'benchmark' AS benchmark, labels->>'model' AS model, labels->>'source' AS source,
       labels->>'scope' AS scope, labels->>'level' AS level, since, muted_by, annotations, fingerprint
FROM alerts
WHERE state = 'firing';

CREATE OR REPLACE VIEW notification_log AS
SELECT id, created_at, kind, transition, payload->'labels' AS labels, delivered_at, receiver, attempts, last_error
FROM notifications;

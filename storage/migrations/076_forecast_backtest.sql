-- 076: forecasts with a track record (issue 53; analysis/backtest.py, `benchwatch backtest`).
-- forecast_backtest: every scored forecast of the last backtest (table, monthly origin, horizon,
-- method); forecast_backtest_summary: per metric kind, horizon and method, the figures the report
-- and `benchwatch backtest` show; forecast_backtest_crossings: forecast against actual crossing
-- dates. Each run replaces all three.
CREATE TABLE IF NOT EXISTS forecast_backtest (
    table_id           VARCHAR NOT NULL,
    benchmark          VARCHAR,
    metric             VARCHAR,
    origin             TIMESTAMPTZ NOT NULL,
    horizon_months     INTEGER NOT NULL,
    method             VARCHAR NOT NULL,
    frontier_at_origin DOUBLE,
    forecast           DOUBLE,
    low                DOUBLE,
    high               DOUBLE,
    raw_low            DOUBLE,
    raw_high           DOUBLE,
    observed           DOUBLE,
    inside             BOOLEAN,
    n_records          INTEGER,
    run_at             TIMESTAMPTZ NOT NULL
);
CREATE TABLE IF NOT EXISTS forecast_backtest_summary (
    kind               VARCHAR NOT NULL,
    unit               VARCHAR,
    horizon_months     INTEGER NOT NULL,
    method             VARCHAR NOT NULL,
    n                  INTEGER,
    n_tables           INTEGER,
    mae                DOUBLE,
    mae_low            DOUBLE,
    mae_high           DOUBLE,
    naive_mae          DOUBLE,
    naive_mae_low      DOUBLE,
    naive_mae_high     DOUBLE,
    bias               DOUBLE,
    coverage           DOUBLE,
    coverage_low       DOUBLE,
    coverage_high      DOUBLE,
    raw_coverage       DOUBLE,
    n_raw              INTEGER,
    q_low              DOUBLE,
    q_high             DOUBLE,
    nominal            DOUBLE,
    chosen             BOOLEAN,
    damping            DOUBLE,
    run_at             TIMESTAMPTZ NOT NULL
);
CREATE TABLE IF NOT EXISTS forecast_backtest_crossings (
    table_id           VARCHAR NOT NULL,
    benchmark          VARCHAR,
    metric             VARCHAR,
    origin             TIMESTAMPTZ NOT NULL,
    method             VARCHAR NOT NULL,
    threshold          DOUBLE,
    forecast_crossing  TIMESTAMPTZ,
    actual_crossing    TIMESTAMPTZ,
    error_months       DOUBLE,
    run_at             TIMESTAMPTZ NOT NULL
);

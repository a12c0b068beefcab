"""The inputs of the alert rules: each rule's `read(con, settings)` loads its frame here
(storage.alerts holds the alert state itself: states, silences, the outbox).

A read returns None where there is no data yet (the analysis has not produced its table: the
alerts keep their state) and adds the display names the messages show.
"""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pandas as pd

from common.time import utc_columns
from analysis.constants import SET_CALIBRATED_SIGNALS
from storage.contamination import read_latest_calibration, read_set_calibrations, read_suspicions
from storage.engine import duckdb
from storage.reads import with_display_names
from storage.saturation import read_saturation
from registry.tables import table_name

# Fetch attempts of one source without a run id belong to one collection run when they start
# less than this apart (retries with backoff take seconds; scheduled runs are hours apart).
RUN_SESSION_GAP = timedelta(minutes=10)
FAILED_FETCH_STATUSES = ("error", "parse_error")


def read_saturation_series(con: duckdb.DuckDBPyConnection, *, k: int, alpha: float) -> pd.DataFrame | None:
    """The snapshot-level S_index series of every table and scope (k, alpha fixed), with
    benchmark names, the table's name ("HumanEval (EvalPlus)") and its sources (one, or a
    declared pool's members).

    None when the analysis has not produced any saturation yet (no data, not "resolved").
    """
    try:   # (a missing relation, a file from before the analysis tables, fails the statement
        # alone: the caller's transaction goes on; cheaper than asking the catalog first)
        frame = read_saturation(con, scope=None, k=k, alpha=alpha)      # every scope in one read
    except duckdb.CatalogException:
        return None
    if frame.empty and con.execute("SELECT count(*) FROM saturation").fetchone() == (0,):
        return None
    frame = with_display_names(con, frame)
    if "table_id" in frame.columns:
        # a table its source no longer serves (a replaced release, a board gone): its level leaves
        try:
            current = dict(con.execute("SELECT table_id, is_current FROM benchmark_tables").fetchall())
        except duckdb.CatalogException:
            current = {}
        frame["is_current"] = [current.get(t, True) is not False for t in frame["table_id"]]
    return _with_table_names(frame)


def _with_table_names(frame: pd.DataFrame) -> pd.DataFrame:
    """Add table_name ('HumanEval (EvalPlus)', registry.tables.table_name) to rows with table_id
    (and its key's columns: source, table_version, migration 084)."""
    if "table_id" not in frame.columns:
        return frame
    sources = frame["sources"] if "sources" in frame.columns else pd.Series([None] * len(frame), index=frame.index)
    frame["sources"] = [list(v) if isinstance(v, (list, tuple, np.ndarray)) else [] for v in sources]
    versions = frame["table_version"].fillna("")
    src = frame["source"] if "source" in frame.columns else pd.Series([None] * len(frame), index=frame.index)
    frame["table_name"] = [table_name(n, s, v, ss) for n, s, v, ss in
                           zip(frame["benchmark_name"], src, versions, frame["sources"])]
    return frame


def read_frontier_holders(con: duckdb.DuckDBPyConnection, *, k: int) -> pd.DataFrame | None:
    """The current record holder of every leaderboard table (table `frontier`, newest as_of)."""
    try:
        holders = con.execute("""
            SELECT table_id, benchmark, source, table_version, sources, frontier_model AS model, frontier AS score, as_of
            FROM frontier WHERE k = ? AND frontier_model IS NOT NULL
            QUALIFY row_number() OVER (PARTITION BY table_id ORDER BY as_of DESC) = 1""", [k]).df()
    except duckdb.CatalogException:     # a file from before the frontier table
        return None
    return _with_table_names(with_display_names(con, holders))


# Source health reads the fetches of this long before the newest attempt first (a week of hourly
# collections is a few thousand rows; a year of them, a quarter of a million): a source whose
# newest successful run lies in it is settled there; only a source failing for longer, or not
# fetched in it, is read over its whole history (read_source_health).
SOURCE_HEALTH_WINDOW = timedelta(days=7)

# Per source: failed collection runs in a row (newest first), the last error, the last attempt,
# the newest run that did not fail and the last new snapshot, from the fetches `{rows}` selects;
# each row also carries the window's start (`since`) and the oldest attempt.
_HEALTH_SQL = """
        WITH bound AS (
            SELECT max(started_at) - to_seconds(?) AS since, min(started_at) AS oldest FROM fetches),
        f AS (
            SELECT id, source, url, status, error, started_at, nullif(run_id, '') AS run_id FROM fetches
            WHERE {rows}),
        gaps AS (
            SELECT id, source, started_at,
                   started_at - lag(started_at) OVER (PARTITION BY source ORDER BY started_at, id) AS gap
            FROM f WHERE run_id IS NULL),
        sessions AS (
            SELECT id, sum(CASE WHEN gap IS NULL OR gap > to_seconds(?) THEN 1 ELSE 0 END)
                           OVER (PARTITION BY source ORDER BY started_at, id) AS session
            FROM gaps),
        keyed AS (
            SELECT f.*, coalesce(f.run_id, 'session-' || CAST(s.session AS VARCHAR)) AS run
            FROM f LEFT JOIN sessions s USING (id)),
        per_url AS (
            SELECT source, run, url, arg_max(status, (started_at, id)) AS status,
                   arg_max(error, (started_at, id)) AS error, max(started_at) AS url_at
            FROM keyed GROUP BY source, run, url),
        runs AS (
            SELECT source, run, max(url_at) AS run_at, bool_or(list_contains(?, status)) AS failed,
                   arg_max(error, url_at) FILTER (WHERE list_contains(?, status)) AS error
            FROM per_url GROUP BY source, run),
        streak AS (
            SELECT *, sum(CASE WHEN failed THEN 0 ELSE 1 END)
                          OVER (PARTITION BY source ORDER BY run_at DESC, run DESC ROWS UNBOUNDED PRECEDING) AS ok_since
            FROM runs),
        health AS (
            SELECT source, count(*) FILTER (WHERE failed AND ok_since = 0) AS consecutive_failures,
                   arg_max(error, run_at) FILTER (WHERE failed AND ok_since = 0) AS last_error,
                   max(run_at) AS last_attempt_at, max(run_at) FILTER (WHERE NOT failed) AS newest_ok_at
            FROM streak GROUP BY source),
        snaps AS (SELECT source, max(first_seen) AS last_new_snapshot_at FROM snapshots GROUP BY source)
        SELECT coalesce(h.source, s.source) AS source, coalesce(h.consecutive_failures, 0) AS consecutive_failures,
               s.last_new_snapshot_at, h.last_attempt_at, h.last_error, h.newest_ok_at,
               (SELECT since FROM bound) AS since, (SELECT oldest FROM bound) AS oldest
        FROM health h FULL JOIN snaps s ON s.source = h.source
        ORDER BY source"""
_HEALTH_COLUMNS = ["source", "consecutive_failures", "last_new_snapshot_at", "last_attempt_at", "last_error"]
# The window's rows: those that start in it, every row of a run with one in it (a run that began
# before it), and every attempt without a run id (their sessions are cut by the gaps between
# them, so all of them are kept).
_RECENT = """started_at >= (SELECT since FROM bound) OR run_id IS NULL OR run_id = ''
                  OR run_id IN (SELECT run_id FROM fetches WHERE started_at >= (SELECT since FROM bound))"""


def read_source_health(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Per source: failed collection runs in a row (newest first), last error, last attempt, last new snapshot.

    A run is the fetches of one run id (attempts without one are grouped by RUN_SESSION_GAP);
    it failed when the final attempt of any of its URLs is an error or a parse error.

    The fetches grow by every URL of every collection, so the runs of the recent window
    (SOURCE_HEALTH_WINDOW before the newest attempt) are read first, in one statement. A source
    whose newest run that did not fail ended in the window is settled by them: every later
    run, with all its rows, is in the window too. The others (failing all through the window,
    or not fetched in it) are read again over their whole history, so the result is the one of
    reading everything (tests/integration/test_source_health.py checks it against that on random histories).
    """
    failed = list(FAILED_FETCH_STATUSES)
    params = [RUN_SESSION_GAP.total_seconds(), failed, failed]
    window = SOURCE_HEALTH_WINDOW.total_seconds()
    # rows, not .df(): a DataFrame of eight columns from DuckDB costs more than the few rows do
    rows = con.execute(_HEALTH_SQL.format(rows=_RECENT), [window, *params]).fetchall()
    since, oldest = rows[0][-2:] if rows else (None, None)
    if since is not None and oldest < since:              # older rows exist: does any source need them?
        settled = {r[0] for r in rows if r[5] is not None and r[5] >= since}
        if len(settled) < len(rows):
            rest = con.execute(_HEALTH_SQL.format(rows="source NOT IN (SELECT unnest(?::VARCHAR[]))"),
                               [window, sorted(settled), *params]).fetchall()
            rows = sorted([r for r in rows if r[0] in settled] + [r for r in rest if r[0] not in settled])
    health = pd.DataFrame([r[:5] for r in rows], columns=_HEALTH_COLUMNS)
    if not rows:        # (a column of Python ints is int64 already)
        health = health.astype({"consecutive_failures": "int64"})
    return utc_columns(health, "last_new_snapshot_at", "last_attempt_at")


def read_suspicion_alerts(con: duckdb.DuckDBPyConnection) -> pd.DataFrame | None:
    """The suspicion states with display names (the contamination_suspect rule's input); None
    before any suspicion was stored (no data: alerts keep their state)."""
    df = read_suspicions(con)
    if df.empty:
        return None
    df = with_calibration(df, read_latest_calibration(con), read_set_calibrations(con))
    return with_display_names(con, df)


def with_calibration(suspicions: pd.DataFrame, calibration: pd.DataFrame,
                     set_calibrations: pd.DataFrame | None = None) -> pd.DataFrame:
    """`suspicions` with the placebo calibration each one is judged by: for a signal calibrated per
    item set (A3, migration 077), the calibration of its own set under its `calibration_key` (078:
    the one its current evidence was judged with); for the others, the newest `benchwatch calibrate`
    of its signal (050). `calibration_ok` (NULL: none on record, or no placebo test possible) and
    `calibration` (its shares and CIs, a dict; `item_set` says which kind), which the
    contamination_suspect rule reads to hold an uncalibrated or miscalibrated signal's flags as
    unconfirmed."""
    out = suspicions.copy()
    keep = ("calibrated_at", "trials", "tests", "p01", "p01_lo", "p01_hi", "p05", "p05_lo", "p05_hi",
            "fw_bh", "fw_bh_lo", "fw_bh_hi")
    by = {r["signal"]: r for r in calibration.to_dict("records")} if not calibration.empty else {}
    sets = {(r["signal"], r["source"], r["benchmark"], r["input_key"]): r
            for r in (set_calibrations.to_dict("records") if set_calibrations is not None else [])}
    keys = out["calibration_key"] if "calibration_key" in out.columns else pd.Series(None, index=out.index)
    oks, cals = [], []
    for signal, source, bench, key in zip(out["signal"], out["source"], out["benchmark"], keys):
        if signal in SET_CALIBRATED_SIGNALS:
            c = sets.get((signal, str(source or ""), bench, key)) if isinstance(key, str) else None
            extra = {"item_set": f"{source}/{bench}" if source else str(bench),
                     "units": None if c is None else c.get("units")}
        else:
            c, extra = by.get(signal), {"item_set": None}
        oks.append(None if c is None or c["ok"] is None or pd.isna(c["ok"]) else bool(c["ok"]))
        cals.append(None if c is None else {**{k: c[k] for k in keep}, **extra})
    out["calibration_ok"], out["calibration"] = oks, cals
    return out

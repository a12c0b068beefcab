"""The reads behind `benchwatch report`: levels, trends, suspects and firing alerts in one place."""

from __future__ import annotations

import pandas as pd

from storage.backtest import read_backtest_summary
from storage.disagreements import read_disagreement_rows
from storage.engine import duckdb
from storage.rule_inputs import FAILED_FETCH_STATUSES, read_source_health


def _exists(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    return bool(con.execute("SELECT count(*) FROM duckdb_views() WHERE view_name = ? "
                            "UNION ALL SELECT count(*) FROM duckdb_tables() WHERE table_name = ?",
                            [name, name]).df().iloc[:, 0].sum())


def _disagreements(con: duckdb.DuckDBPyConnection) -> dict[str, pd.DataFrame]:
    """The stored disagreement analysis: its rows and offsets (report/disagreements.py lays them
    out with analysis.disagreement.from_rows); empty frames before any."""
    rows, offsets = read_disagreement_rows(con) or (pd.DataFrame(), pd.DataFrame())
    return {"disagreements": rows, "disagreement_offsets": offsets}


def read_report(con: duckdb.DuckDBPyConnection) -> dict[str, pd.DataFrame]:
    """Frames for a person: saturation levels with trends, contamination suspects, firing alerts.

    One level per leaderboard table (`name`: "HumanEval (EvalPlus)"; `is_primary`: the
    benchmark's primary table). Levels are ranked by S within each scope among comparable rows
    (the paper's scale) first; rows on another scale follow, ranked among themselves.
    """
    empty = pd.DataFrame()
    levels = con.execute("""
        SELECT l.benchmark, l.table_id, l.source, coalesce(bt.name, b.name, l.benchmark) AS name,
               coalesce(bt.is_primary, true) AS is_primary, l.scope, l.population, l.top_models, l.top_names, l.top_known,
               l.s_index,
               l.bin_hold_prob, l.resample_noise, l.resample_draws, l.comparable, l.scale, l.bin,
               l.level, l.level_since, l.pending_bin, l.pending_count, l.pending_since,   -- the level (020, 055)
               l.r_norm, l.se_delta, l.n_items, l.n_models, l.uncertainty, l.stagnation, l.as_of,
               t.frontier, t.slope_per_month, t.slope_ci_low, t.slope_ci_high, t.slope_unit, t.stalled,
               t.trend_status, t.trend_end, t.stale_days, t.forecast_status, t.forecast_method, t.forecast_date, t.reached_at,
               t.metric
        FROM saturation_latest l
        LEFT JOIN benchmarks b ON b.id = l.benchmark
        LEFT JOIN benchmark_tables bt ON bt.table_id = l.table_id       -- 'HumanEval (EvalPlus)' (018)
        LEFT JOIN trends t ON t.table_id = l.table_id AND t.k = l.k AND l.scope = 'all'   -- trends are scope all
                          AND t.population = l.population        -- and follow the primary population
        WHERE l.s_index IS NOT NULL
        ORDER BY l.scope, l.population, coalesce(l.comparable, false) DESC, l.s_index DESC,   -- one scale per ranking
                 l.table_id                                                   -- ties (S 1.000) in one order
        """).df() if _exists(con, "saturation_latest") else empty
    suspects = con.execute("""
        SELECT model, benchmark, source, signal, detail, effect, se, p_value, q_value, status
        FROM suspects WHERE status <> 'not_flagged'
        ORDER BY q_value, model, benchmark, source, signal""").df() if _exists(con, "suspects") else empty
    firing = con.execute(_FIRING_SQL).df() if _exists(con, "alerts_firing") else empty
    return {"levels": levels, "suspects": suspects, "firing": firing, "backtest": read_backtest_summary(con),
            **_disagreements(con)}


def unanalysed(con: duckdb.DuckDBPyConnection) -> bool:
    """True when the database holds scores but no analysis has stored a result yet (a backfill
    without `analyze`): the report then says what to run instead of "(none)" everywhere. An
    analysis stores a row (an index, or why none) for every table with scores, so a store with
    no score at all (knowledge cutoffs, a release list) is never waiting for one."""
    if not (_exists(con, "scores") and _exists(con, "saturation")):
        return False
    row = con.execute("SELECT EXISTS (SELECT 1 FROM scores), EXISTS (SELECT 1 FROM saturation)").fetchone()
    return bool(row and row[0] and not row[1])


# --- the HTML report (report/html.py renders these frames) ---------------------------------

def _read(con: duckdb.DuckDBPyConnection, relation: str, sql: str, params: list | None = None) -> pd.DataFrame:
    """`sql`'s rows, or an empty frame when `relation` does not exist (a database before migrations)."""
    return con.execute(sql, params or []).df() if _exists(con, relation) else pd.DataFrame()


_LEVELS_SQL = """
        SELECT l.*, coalesce(b.name, l.benchmark) AS name, b.ceiling, b.chance, b.skill AS area,
               coalesce(bt.name, b.name, l.benchmark) AS table_name, coalesce(bt.is_primary, true) AS is_primary
        FROM saturation_latest l LEFT JOIN benchmarks b ON b.id = l.benchmark
        LEFT JOIN benchmark_tables bt ON bt.table_id = l.table_id
        ORDER BY l.benchmark, NOT coalesce(bt.is_primary, true), l.table_id, l.scope, l.population"""
_SIGNALS_SQL = "SELECT * FROM suspects ORDER BY q_value NULLS LAST, model, benchmark, source, signal"
# The firing alerts, newest first; ties in one order, so a page is the same every run.
_FIRING_SQL = """SELECT kind, benchmark, model, source, scope, level, since, muted_by FROM alerts_firing
                 ORDER BY since DESC, kind, benchmark, model, source, scope, level"""


def read_overview_frames(con: duckdb.DuckDBPyConnection) -> dict[str, pd.DataFrame]:
    """The frames of `read_html_report` the overview draws (levels, signals): what a run without a
    report folder publishes (Prefect artifacts), without reading the history the page plots."""
    return {"levels": _read(con, "saturation_latest", _LEVELS_SQL), "signals": _read(con, "suspects", _SIGNALS_SQL)}


# A group's item scores in item order: the list aggregates then add them in that order, every run.
_IN_ORDER = "list({0} ORDER BY item_id)"


def read_item_accuracy(con: duckdb.DuckDBPyConnection) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(item_months, item_windows) of `read_html_report`: each model's mean item score and its SE
    per item release month, and over the items released on or after each quarter's start."""
    # Means and SEs over the items in item order (`_IN_ORDER`): DuckDB's avg and stddev_samp add in
    # thread order, and a mean on a rounding edge then showed 21.6 % in one run and 21.7 % in the next.
    item_months = _read(con, "latest_item_results", f"""
        SELECT source, benchmark, model, CAST(date_trunc('month', item_date) AS DATE) AS month,
               list_avg({_IN_ORDER.format("score")}) AS accuracy, count(*) AS n_items,
               list_aggregate({_IN_ORDER.format("score")}, 'stddev_samp') / sqrt(count(*)) AS se   -- the month's mean: its SE
        FROM latest_item_results WHERE item_date IS NOT NULL
        GROUP BY ALL ORDER BY source, benchmark, model, month""")
    # the time-window control: each model's accuracy on the items released on or after each quarter's start
    item_windows = _read(con, "latest_item_results", f"""
        WITH items AS (SELECT source, benchmark, model, item_id, item_date, score
                       FROM latest_item_results WHERE item_date IS NOT NULL),
             starts AS (SELECT DISTINCT source, benchmark, CAST(date_trunc('quarter', item_date) AS DATE) AS window_start
                        FROM items)
        SELECT s.source, s.benchmark, s.window_start, i.model, list_avg({_IN_ORDER.format("i.score")}) AS accuracy,
               count(*) AS n_items, list_aggregate({_IN_ORDER.format("i.score")}, 'stddev_samp') / sqrt(count(*)) AS se
        FROM starts s JOIN items i ON i.source = s.source AND i.benchmark = s.benchmark
                                   AND i.item_date >= s.window_start
        GROUP BY ALL ORDER BY source, benchmark, window_start, accuracy DESC, model""")
    return item_months, item_windows


def read_html_report(con: duckdb.DuckDBPyConnection) -> dict[str, pd.DataFrame]:
    """Every frame the HTML report draws; `SELECT *` from the analysis views, so columns other
    branches add (top_models, population, a bin-hold probability, staleness, ...) reach the
    renderer without a change here. Instants stay UTC-aware; the renderer converts.

    Keys: levels (saturation_latest + benchmark name/ceiling/chance, the table's name and primary
    flag), history (saturation_history), frontier, trends (all per leaderboard table), tables
    (benchmark_tables), item_months (mean pass and its SE per source, benchmark, model and item release
    month of the newest item-level snapshot), item_windows (the same per model over the items released
    on or after each quarter's start), level_changes (`read_level_changes`), cutoffs (resolved_cutoffs), post_cutoff (post_cutoff_scores),
    signals (every test of the newest contamination run, flagged or not), firing (alerts_firing),
    sources (health per source), disagreements and disagreement_offsets (the stored analysis of
    source_disagreements).
    """
    levels = _read(con, "saturation_latest", _LEVELS_SQL)
    history = _read(con, "saturation_history",
                    "SELECT * FROM saturation_history ORDER BY benchmark, table_id, scope, population, as_of")
    frontier = _read(con, "frontier", "SELECT * FROM frontier ORDER BY benchmark, table_id, k, as_of")
    trends = _read(con, "trends", "SELECT * FROM trends ORDER BY benchmark, table_id, k")
    tables = _read(con, "benchmark_tables", """SELECT * FROM benchmark_tables
                                               ORDER BY benchmark, is_primary DESC, table_id""")
    item_months, item_windows = read_item_accuracy(con)
    level_changes = read_level_changes(con)
    cutoffs = _read(con, "resolved_cutoffs", "SELECT * FROM resolved_cutoffs ORDER BY model")
    post_cutoff = _read(con, "post_cutoff_scores", "SELECT * FROM post_cutoff_scores ORDER BY benchmark, model, window_start")
    signals = _read(con, "suspects", _SIGNALS_SQL)
    firing = _read(con, "alerts_firing", _FIRING_SQL)
    sources = con.execute("""
        WITH f AS (
            SELECT source, max(started_at) FILTER (WHERE NOT list_contains(?, status)) AS last_success_at,
                   count(*) FILTER (WHERE list_contains(?, status)) AS failed_fetches,
                   count(*) AS fetches
            FROM fetches GROUP BY source),
        s AS (
            SELECT source, count(*) AS snapshots, max(observed_at) AS newest_observed_at,
                   arg_max(n_scores, (observed_at, id)) AS rows_scores, arg_max(n_items, (observed_at, id)) AS rows_items,
                   arg_max(n_rejects, (observed_at, id)) AS rejects_latest
            FROM snapshots GROUP BY source),
        r AS (SELECT source, count(*) AS rejects_total FROM rejects GROUP BY source)
        SELECT coalesce(s.source, f.source) AS source, f.last_success_at, coalesce(f.failed_fetches, 0) AS failed_fetches,
               coalesce(f.fetches, 0) AS fetches, coalesce(s.snapshots, 0) AS snapshots, s.newest_observed_at,
               s.rows_scores, s.rows_items, coalesce(s.rejects_latest, 0) AS rejects_latest,
               coalesce(r.rejects_total, 0) AS rejects_total
        FROM s FULL JOIN f ON f.source = s.source LEFT JOIN r ON r.source = coalesce(s.source, f.source)
        ORDER BY 1""", [list(FAILED_FETCH_STATUSES), list(FAILED_FETCH_STATUSES)]).df()
    health = read_source_health(con)
    if len(health):
        sources = sources.merge(health, on="source", how="outer")
    return {"levels": levels, "history": history, "frontier": frontier, "trends": trends, "tables": tables,
            "backtest": read_backtest_summary(con),
            "item_months": item_months, "item_windows": item_windows, "level_changes": level_changes,
            "cutoffs": cutoffs, "post_cutoff": post_cutoff,
            "signals": signals, "firing": firing, "sources": sources, **_disagreements(con)}


def read_level_changes(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """The newest change of committed level of each series (table_id, scope, population, k, alpha):
    from_level, to_level, changed_at, from the `level_changes` view (its 'alerts' basis, which
    defines a change once); a first level (nothing before it) is no change."""
    return _read(con, "level_changes", """
        SELECT table_id, any_value(benchmark) AS benchmark, scope, population, k, alpha,
               arg_max(from_level, changed_at) AS from_level, arg_max(to_level, changed_at) AS to_level,
               max(changed_at) AS changed_at
        FROM level_changes WHERE basis = 'alerts' AND from_level IS NOT NULL
        GROUP BY table_id, scope, population, k, alpha
        ORDER BY changed_at DESC, table_id, scope, population, k, alpha""")

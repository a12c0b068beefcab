"""The reads behind `benchwatch report`: levels, trends, suspects and firing alerts in one place."""

from __future__ import annotations

import duckdb
import pandas as pd


def _exists(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    return bool(con.execute("SELECT count(*) FROM duckdb_views() WHERE view_name = ? "
                            "UNION ALL SELECT count(*) FROM duckdb_tables() WHERE table_name = ?",
                            [name, name]).df().iloc[:, 0].sum())


def read_report(con: duckdb.DuckDBPyConnection) -> dict[str, pd.DataFrame]:
    """Frames for a person: saturation levels with trends, contamination suspects, firing alerts.

    Levels are ranked by S within each scope among comparable rows (the paper's scale) first;
    rows on another scale follow, ranked among themselves.
    """
    empty = pd.DataFrame()
    levels = con.execute("""
        SELECT l.benchmark, coalesce(b.name, l.benchmark) AS name, l.scope, l.population, l.top_models, l.s_index,
               l.bin_hold_prob, l.resample_noise, l.resample_draws, l.comparable, l.scale, l.bin,
               l.r_norm, l.se_delta, l.n_items, l.n_models, l.uncertainty, l.stagnation, l.as_of,
               t.frontier, t.slope_per_month, t.slope_ci_low, t.slope_ci_high, t.slope_unit, t.stalled,
               t.trend_status, t.trend_end, t.stale_days, t.forecast_status, t.forecast_date
        FROM saturation_latest l
        LEFT JOIN benchmarks b ON b.id = l.benchmark
        LEFT JOIN trends t ON t.benchmark = l.benchmark AND t.k = l.k AND l.scope = 'all'   -- trends are scope all
                          AND t.population = l.population        -- and follow the primary population
        WHERE l.s_index IS NOT NULL
        ORDER BY l.scope, l.population, coalesce(l.comparable, false) DESC, l.s_index DESC   -- one scale per ranking
        """).df() if _exists(con, "saturation_latest") else empty
    suspects = con.execute("""
        SELECT model, benchmark, source, signal, detail, effect, se, q_value, status
        FROM suspects WHERE status <> 'not_flagged' ORDER BY q_value""").df() if _exists(con, "suspects") else empty
    firing = con.execute("""SELECT kind, benchmark, model, source, scope, level, since, muted_by
                            FROM alerts_firing ORDER BY since DESC""").df() if _exists(con, "alerts_firing") else empty
    return {"levels": levels, "suspects": suspects, "firing": firing}

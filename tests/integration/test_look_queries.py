"""storage/look_queries.py: the queries alert messages show are valid SQL over the views they
name, their values quoted, and a filter left out when its value is empty."""

from __future__ import annotations

from storage import db as storage_db
from storage import look_queries as look


def test_each_query_runs_on_a_migrated_database(tmp_path):
    path = str(tmp_path / "l.duckdb")
    queries = [look.saturation_series("math", scope="all", table_id="math:x", population="systems", k=5, alpha=0.05),
               look.saturation_series("it's"), look.frontier("b", "b:s"), look.frontier("b"),
               look.source_fetches("s'q"), look.source_snapshots("s"), look.suspicions("m", "b"),
               look.disagreements("b", "m'x"), look.RECENT_FETCHES, look.CORRECTIONS]
    with storage_db.connect(path) as con:
        for sql in queries:
            con.execute(sql).fetchall()


def test_filters_and_quoting():
    assert look.sql_literal("it's") == "'it''s'"
    assert look.saturation_series("math", scope="all", table_id="math:x", population="models", k=5, alpha=0.05) == (
        "SELECT as_of, s_index, bin, level, r_norm, se_delta, n_models FROM saturation WHERE benchmark = 'math' "
        "AND scope = 'all' AND table_id = 'math:x' AND k = 5 AND alpha = 0.05 ORDER BY as_of DESC LIMIT 10")
    assert look.frontier("b") == "SELECT * FROM frontier WHERE benchmark = 'b' ORDER BY table_id, k, as_of"
    assert look.frontier("b", "b:s") == ("SELECT * FROM frontier WHERE benchmark = 'b' AND table_id = 'b:s' "
                                         "ORDER BY table_id, k, as_of")

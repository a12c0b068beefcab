"""storage/look_queries.py: the queries alert messages show are valid SQL over the views they
name, their values quoted, and a filter left out when its value is empty."""

from __future__ import annotations

from storage import db as storage_db
from storage import look_queries as look


QUERIES = [look.saturation_series("math", scope="all", table_id="math:x", population="systems", k=5, alpha=0.05),
           look.saturation_series("it's"), look.frontier("b", "b:s"), look.frontier("b"),
           look.source_fetches("s'q"), look.source_snapshots("s"), look.suspicions("m", "b"),
           look.disagreements("b", "m'x"), look.RECENT_FETCHES, look.CORRECTIONS]


def test_each_query_runs_on_a_migrated_database(tmp_path):
    path = str(tmp_path / "l.duckdb")
    with storage_db.connect(path) as con:
        for sql in QUERIES:
            con.execute(sql).fetchall()


def test_each_query_sorts_its_rows():
    """Pasted into `benchwatch query`, a query prints its rows in the same order every time."""
    for sql in QUERIES:
        assert " ORDER BY " in sql, sql


def test_suspicions_sort_by_the_rest_of_their_key(tmp_path):
    """One model on one benchmark: the other columns of contamination_suspicions' primary key."""
    with storage_db.connect(str(tmp_path / "k.duckdb")) as con:
        key = con.execute("SELECT constraint_column_names FROM duckdb_constraints() "
                          "WHERE table_name = 'contamination_suspicions' AND constraint_type = 'PRIMARY KEY'").fetchone()[0]
    rest = [c for c in key if c not in ("model", "benchmark")]
    assert look.suspicions("m", "b").endswith(" ORDER BY " + ", ".join(rest))


def test_filters_and_quoting():
    assert look.sql_literal("it's") == "'it''s'"
    assert look.saturation_series("math", scope="all", table_id="math:x", population="models", k=5, alpha=0.05) == (
        "SELECT as_of, s_index, bin, level, r_norm, se_delta, n_models FROM saturation WHERE benchmark = 'math' "
        "AND scope = 'all' AND table_id = 'math:x' AND k = 5 AND alpha = 0.05 ORDER BY as_of DESC LIMIT 10")
    assert look.frontier("b") == "SELECT * FROM frontier WHERE benchmark = 'b' ORDER BY table_id, k, as_of"
    assert look.frontier("b", "b:s") == ("SELECT * FROM frontier WHERE benchmark = 'b' AND table_id = 'b:s' "
                                         "ORDER BY table_id, k, as_of")

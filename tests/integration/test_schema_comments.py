"""Views have one current definition each (storage/views, issue 22) and describe themselves
(issue 25): every view and every column of it has a comment, docs/query.md's table is generated from
the comments, a changed file is re-applied (comments included), and the views without traps —
`leaderboard` (one row per table and model) and `level_changes` — mean what their comments say."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from storage import db, views
from storage.db import insert_frame
import storage.views.__main__ as views_main

pytestmark = pytest.mark.xdist_group("test_schema_comments")   # its module fixture is built once

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def schema() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    db.migrate(con)
    return con


def _comments(con: duckdb.DuckDBPyConnection, name: str) -> dict[str, str | None]:
    rows = con.execute("SELECT column_name, comment FROM duckdb_columns() WHERE table_name = ? ORDER BY column_index",
                       [name]).fetchall()
    return dict(rows)


def test_every_view_has_a_file_and_every_column_of_it_a_comment(schema):
    present = {r[0] for r in schema.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}
    assert present == set(views.view_names()), "a view without a file in storage/views (or a file without its view)"
    for name, comment in schema.execute("SELECT view_name, comment FROM duckdb_views() WHERE NOT internal").fetchall():
        assert comment and comment.strip(), f"view {name} has no comment"
        columns = _comments(schema, name)
        assert columns, name
        missing = [c for c, text in columns.items() if not (text and text.strip())]
        assert not missing, f"columns of view {name} without a comment: {missing}"


def test_every_column_of_every_commented_table_has_a_comment(schema):
    tables = dict(schema.execute("SELECT table_name, comment FROM duckdb_tables()").fetchall())
    assert {"scores", "saturation", "trends", "benchmark_tables", "contamination_suspicions"} <= set(views.commented_tables())
    for name in views.commented_tables():
        assert tables.get(name), f"table {name} has no comment"
        missing = [c for c, text in _comments(schema, name).items() if not text]
        assert not missing, f"columns of table {name} without a comment: {missing}"


def test_the_readme_view_table_is_the_one_generated_from_the_comments():
    readme = (ROOT / "docs" / "query.md").read_text(encoding="utf-8")
    assert views_main.readme_block(readme) == views_main.generated(), \
        "docs/query.md's view table is stale: run `python -m storage.views --write`"
    for name in views.view_names():
        assert f"| `{name}` |" in readme


def test_each_view_comes_after_the_views_it_names():
    order = [f.name for f in views.files() if f.is_view]
    for i, f in enumerate(v for v in views.files() if v.is_view):
        body = re.sub(r"--[^\n]*", "", f.sql.split("COMMENT ON", 1)[0])   # the statement, not its notes
        later = [o for o in order[i + 1:] if re.search(rf"\b{o}\b", body)]
        assert not later, f"{f.name} names {later}, applied after it"


def test_a_changed_file_is_reapplied_with_its_comments_and_an_unchanged_one_is_not(tmp_path):
    path = tmp_path / "v.duckdb"
    with db.connect(path) as con:
        first = dict(con.execute("SELECT path, applied_at FROM schema_files").fetchall())
    assert set(first) == {f.path for f in views.files()}
    with db.connect(path) as con:      # nothing changed: nothing re-applied
        assert dict(con.execute("SELECT path, applied_at FROM schema_files").fetchall()) == first
        # an older definition (as a former release left it): other text, no comments
        con.execute("CREATE OR REPLACE VIEW leaderboard AS SELECT 1 AS x")
        con.execute("UPDATE schema_files SET sha256 = 'older' WHERE path = 'leaderboard.sql'")
    ro = db.open_current(path)         # a read-only command brings the file current first
    try:
        columns = _comments(ro, "leaderboard")
        assert "x" not in columns and "variant" in columns and all(columns.values())
        assert ro.execute("SELECT comment FROM duckdb_views() WHERE view_name = 'leaderboard'").fetchone()[0]
        again = dict(ro.execute("SELECT path, applied_at FROM schema_files").fetchall())
    finally:
        ro.close()
    assert again["leaderboard.sql"] > first["leaderboard.sql"]
    assert {p: t for p, t in again.items() if p != "leaderboard.sql"} == \
        {p: t for p, t in first.items() if p != "leaderboard.sql"}


def test_a_file_of_the_previous_release_gets_the_view_files(tmp_path, monkeypatch):
    path = tmp_path / "old.duckdb"
    shipped = db.migrations()
    monkeypatch.setattr(db, "migrations", lambda: tuple(m for m in shipped if m[0] < 25))
    with db.connect(path) as con:      # as 024 left it: views from the migrations, no comments
        assert not con.execute("SELECT count(*) FROM duckdb_views() WHERE view_name = 'leaderboard'").fetchone()[0]
        assert con.execute("SELECT comment FROM duckdb_views() WHERE view_name = 'latest_scores'").fetchone()[0] is None
    monkeypatch.setattr(db, "migrations", lambda: shipped)
    with db.connect(path) as con:
        assert con.execute("SELECT comment FROM duckdb_views() WHERE view_name = 'latest_scores'").fetchone()[0]
        assert all(_comments(con, "leaderboard").values())


# --- the views without traps ---------------------------------------------------------------------

def _snapshot(sid: int, source: str, observed: str) -> dict:
    t = pd.Timestamp(observed, tz="UTC")
    return {"id": sid, "source": source, "sha256": f"s{sid}", "blob_sha256": [f"s{sid}"], "file_names": ["f.csv"],
            "observed_at": t, "first_seen": t, "last_seen": t, "origin": "ingest", "parser_version": 1,
            "n_scores": 0, "n_items": 0, "n_models": 0, "n_rejects": 0, "status": "ok"}


def _score(sid: int, source: str, bench: str, model: str, value: float, *, variant: str = "", metric: str = "proportion",
           reference: bool = False) -> dict:
    return {"snapshot_id": sid, "source": source, "benchmark": bench, "benchmark_raw": bench, "model": model,
            "model_raw": f"{model} {variant}".strip(), "setting": "", "score": value, "metric": metric, "n_items": 100,
            "excluded_reason": "", "variant": variant, "population": "models", "table_version": "",
            "is_reference": reference}


def test_leaderboard_has_one_row_per_table_and_model_its_best_variant_named(tmp_path):
    path = tmp_path / "l.duckdb"
    with db.connect(path) as con:
        insert_frame(con, "snapshots", pd.DataFrame([_snapshot(1, "boards", "2025-01-01"), _snapshot(2, "costs", "2025-01-01")]))
        insert_frame(con, "scores", pd.DataFrame([
            _score(1, "boards", "b", "m1", 0.70, variant="effort=low"),
            _score(1, "boards", "b", "m1", 0.90, variant="effort=high"),
            _score(1, "boards", "b", "m1", 0.80, variant="effort=medium"),
            _score(1, "boards", "b", "m2", 0.85),
            _score(1, "boards", "b", "m3", 0.85),
            _score(1, "boards", "b", "ref", 0.95, reference=True),
            _score(2, "costs", "c", "m1", 12.0, variant="effort=high", metric="cost_usd"),
            _score(2, "costs", "c", "m1", 3.0, variant="effort=low", metric="cost_usd"),
            _score(2, "costs", "c", "m2", 5.0, metric="cost_usd")]))
        latest = con.execute("SELECT count(*) FROM latest_scores").fetchone()[0]
        board = con.execute("SELECT table_id, model, variant, score, rank, n_variants, is_reference FROM leaderboard "
                            "ORDER BY table_id, rank NULLS LAST, model").fetchall()
    assert latest == 9                              # the raw view keeps every variant
    assert board == [("b:boards", "m1", "effort=high", 0.90, 1, 3, False),
                     ("b:boards", "m2", "", 0.85, 2, 1, False),
                     ("b:boards", "m3", "", 0.85, 2, 1, False),   # a tie shares its rank
                     ("b:boards", "ref", "", 0.95, None, 1, True),  # shown, never ranked
                     ("c:costs", "m1", "effort=low", 3.0, 1, 2, False),   # cost: lower is better
                     ("c:costs", "m2", "", 5.0, 2, 1, False)]


def _sat(as_of: str, level: str | None, bin_: str, s: float, table: str = "b:boards") -> dict:
    return {"table_id": table, "benchmark": table.split(":")[0], "source": table.split(":")[1],
            "as_of": pd.Timestamp(as_of, tz="UTC"), "scope": "all", "population": "models", "k": 5, "alpha": 0.5,
            "z": 1.96, "s_index": s, "bin": bin_, "level": level, "run_at": pd.Timestamp("2026-01-01", tz="UTC")}


def test_level_changes_lists_committed_and_historical_moves_so_a_year_is_a_where_clause(tmp_path):
    path = tmp_path / "c.duckdb"
    with db.connect(path) as con:
        insert_frame(con, "saturation", pd.DataFrame([
            _sat("2024-11-01", "moderate", "moderate", 0.5),
            _sat("2025-02-01", "moderate", "high", 0.75),       # a bin the hysteresis did not commit yet
            _sat("2025-03-01", "high", "high", 0.8),
            _sat("2025-04-01", "high", "high", 0.85),
            _sat("2026-01-01", "moderate", "moderate", 0.6),
            _sat("2025-05-01", None, "low", 0.2, table="x:other")]))   # no level yet: no change
        trajectory = pd.DataFrame([_sat(d, None, b, s) for d, b, s in
                                   [("2024-06-01", "low", 0.2), ("2025-01-15", "high", 0.72), ("2025-01-20", "high", 0.75)]])
        trajectory["n_models"] = 5
        insert_frame(con, "saturation_trajectory", trajectory.drop(columns=["level"]))
        rows = con.execute("SELECT basis, from_level, to_level, changed_at::DATE::VARCHAR, direction FROM level_changes "
                           "ORDER BY basis, changed_at").fetchall()
        saturated_2025 = con.execute("""
            SELECT basis, table_id FROM level_changes WHERE to_level IN ('high', 'very high')
              AND from_level NOT IN ('high', 'very high') AND year(changed_at) = 2025 ORDER BY basis""").fetchall()
    assert rows == [("alerts", None, "moderate", "2024-11-01", "first"),
                    ("alerts", "moderate", "high", "2025-03-01", "up"),
                    ("alerts", "high", "moderate", "2026-01-01", "down"),
                    ("history", None, "low", "2024-06-01", "first"),
                    ("history", "low", "high", "2025-01-15", "up")]
    assert saturated_2025 == [("alerts", "b:boards"), ("history", "b:boards")]


def test_query_reads_this_releases_views_on_a_file_an_older_release_left(tmp_path, capsys, schema):
    from cli.main import main
    path = tmp_path / "q.duckdb"
    with db.connect(path) as con:
        con.execute("CREATE OR REPLACE VIEW leaderboard AS SELECT 1 AS x")   # a former definition
        con.execute("UPDATE schema_files SET sha256 = 'older' WHERE path = 'leaderboard.sql'")
    assert main(["query", "--db", str(path), "--format", "csv",
                 "SELECT count(*) AS n FROM duckdb_columns() WHERE table_name = 'leaderboard' AND comment IS NOT NULL"]) == 0
    assert int(capsys.readouterr().out.splitlines()[1]) == len(_comments(schema, "leaderboard")) > 20

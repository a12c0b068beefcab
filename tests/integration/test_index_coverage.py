"""`benchwatch status`: every table without an S names the registry line that would give it one (or
the registry's reason there is none), and the share of latest-result models with a release date."""

from __future__ import annotations

from pathlib import Path

from cli.main import main
from jobs.ingest import ingest_file
from jobs.saturation import run_saturation
from storage import db
from jobs.sync import connect_synced
from storage.status import index_coverage, release_date_coverage
from storage.store import open_store

FIX = Path(__file__).resolve().parents[1] / "fixtures"
MODELS = ["acme-a", "acme-b", "acme-c", "acme-d", "acme-e", "acme-f"]


def _csv(path: Path, benchmark: str) -> Path:
    rows = "".join(f"{m},{benchmark},{0.5 + i / 100}\n" for i, m in enumerate(MODELS))
    path.write_text("model,benchmark,score\n" + rows)
    return path


def test_status_names_the_registry_line_or_the_reason_for_each_table_without_s(synced_db, tmp_path, capsys):
    ingest_file(open_store(synced_db), "matharena", FIX / "matharena" / "table_data.js", observed_at="2025-02-09")
    ingest_file(open_store(synced_db), "csv", _csv(tmp_path / "a.csv", "scicode"), observed_at="2026-04-01")
    ingest_file(open_store(synced_db), "csv", _csv(tmp_path / "b.csv", "bfcl_overall"), observed_at="2026-04-01")
    ingest_file(open_store(synced_db), "arc_agi", FIX / "arc_agi" / "evaluations.json", observed_at="2025-04-16",
                aux_paths=[FIX / "arc_agi" / "models.json"])
    with connect_synced(open_store(synced_db)) as con:     # the saturation part of `analyze` (contamination is not needed)
        run_saturation(con, now="2026-05-01")
    with db.connect(synced_db, read_only=True) as con:
        table = index_coverage(con)
        models, dated, _ = release_date_coverage(con)
    rows = {(r[1], r[2]): dict(zip(table.columns, r)) for r in table.rows}   # (benchmark, population)
    assert rows[("aime_2025", "models")]["has_s"] and rows[("aime_2025", "models")]["action"] is None
    assert rows[("scicode", "models")]["action"] == "add n_items for scicode in registry/benchmarks.csv"
    assert rows[("bfcl_overall", "models")]["action"].startswith("no index: Overall Acc is a weighted combination")
    assert rows[("arc_agi_cost_per_task", "models")]["action"].startswith("no index: a cost")
    # ARC's models file dates 8 of its 10 models (the human panel and the hidden rows aside)
    assert 0 < dated < models
    assert main(["status", "--db", str(synced_db)]) == 0
    out = capsys.readouterr().out
    assert f"release dates: {dated} of {models} models with a latest result" in out
    assert "index coverage (newest analysis, scope all): " in out and "proportion " in out
    assert "add n_items for scicode in registry/benchmarks.csv" in out


def test_status_remedies_fit_the_metric(synced_db, tmp_path):
    """Issue 49: a cost never gets 'add n' (registered or not), nor a rate whose denominator differs
    per model (the registry's `No index:` note says why); GDPval's index points to its Elo table,
    whose interval the board publishes."""
    rows = [{"datasetId": "v3_Public_Preview", "modelId": f"m{i}", "score": 0.1 + 0.01 * i, "costPerTask": 1.0 + i}
            for i in range(6)]
    import json
    (tmp_path / "e.json").write_text(json.dumps(rows))
    ingest_file(open_store(synced_db), "arc_agi", tmp_path / "e.json", observed_at="2026-06-01")
    ingest_file(open_store(synced_db), "csv", _csv(tmp_path / "h.csv", "aa_omniscience_non_hallucination"), observed_at="2026-06-01")
    ingest_file(open_store(synced_db), "artificial_analysis", FIX / "artificial_analysis" / "gdpval_breakdowns.json",
                observed_at="2026-06-01")
    with connect_synced(open_store(synced_db)) as con:
        run_saturation(con, now="2026-06-02")
    with db.connect(synced_db, read_only=True) as con:
        table = index_coverage(con)
    action = {r[1]: r[-1] for r in table.rows if r[2] == "models"}
    assert action["arc_agi_3_cost_per_task"].startswith("no index: a cost")
    assert "n_items" not in action["arc_agi_3_cost_per_task"]
    assert action["aa_omniscience_non_hallucination"].startswith("no index: its denominator")
    assert "n_items" not in action["aa_omniscience_non_hallucination"]
    # GDPval's normalized index has no interval; its Elo (with the board's interval) is named
    assert "gdpval_aa_elo" in action["gdpval_aa"] and "publishes no" not in action["gdpval_aa"]


def test_status_names_the_database_it_read(synced_db, tmp_path, monkeypatch, capsys):
    # without --db it read $BENCHWATCH_DB (else ./benchwatch.duckdb): the first line names that file,
    # not "default"
    from common import settings
    monkeypatch.setenv(settings.DB, str(synced_db))
    assert main(["status"]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith(f"database: {synced_db}   schema version: ")
    monkeypatch.delenv(settings.DB)
    monkeypatch.chdir(tmp_path)
    with db.connect(str(tmp_path / "benchwatch.duckdb")):
        pass
    assert main(["status"]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("database: benchwatch.duckdb   schema version: ")

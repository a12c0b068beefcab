"""Issue 24 on a real DuckLake store (PostgreSQL from tests/pg.py): `ingest csv`, the password
in every message, the query sandbox, PostgreSQL stopping mid-backfill.

Skips with the reason when PostgreSQL's binaries or the DuckLake extensions are missing.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from cli.main import EXIT_BUG, main
from storage import lake

import pg

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
PASSWORD = "Pw-4f9c1e77-secret"


@pytest.fixture(scope="module")
def server():
    yield from pg.lake_server()


@pytest.fixture
def lake_url(server, tmp_path, monkeypatch, request):
    name = "bw_" + request.node.name.lower().replace("[", "_").replace("]", "").replace("-", "_")[:40]
    server.create_database(name)
    monkeypatch.setenv(lake.DATA_PATH_ENV, str(tmp_path / "lake-data"))
    for var in ("SLACK_WEBHOOK_URL", "SLACK_BOT_TOKEN", "SLACK_CHANNEL", "PREFECT_API_URL"):
        monkeypatch.delenv(var, raising=False)
    return "ducklake:postgres:" + server.conninfo(name)


def _one_line(err: str) -> str:
    lines = [line for line in err.strip().splitlines() if line]
    assert "Traceback" not in err and len(lines) == 1, err
    return lines[0]


# --- 8. `ingest csv` on a lake ---------------------------------------------------------------------

def test_ingest_csv_stores_a_snapshot_on_a_lake(lake_url, capsys):
    code = main(["ingest", "csv", str(FIXTURES / "csv" / "scores_proportion.csv"), "--db", lake_url])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert main(["query", "SELECT count(*) AS n, min(snapshot_id) AS s FROM scores WHERE source = 'csv'",
                 "--db", lake_url, "--format", "csv"]) == 0
    n, snapshot = capsys.readouterr().out.strip().splitlines()[1].split(",")
    assert int(n) > 0 and int(snapshot) >= 1
    # the same file again adds nothing; another file gets the next id
    assert main(["ingest", "csv", str(FIXTURES / "csv" / "scores_proportion.csv"), "--db", lake_url]) == 0
    assert main(["ingest", "csv", str(FIXTURES / "csv" / "scores_other_benchmark.csv"), "--db", lake_url]) == 0
    capsys.readouterr()
    assert main(["query", "SELECT count(DISTINCT snapshot_id) AS n FROM scores WHERE source = 'csv'",
                 "--db", lake_url, "--format", "csv"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[1] == "2"

"""Issue 24, "Done when": no secret in Prefect's database, artifacts or logs.

Two `benchwatch run` cycles as Prefect flow runs (in this process, against Prefect's test server:
a real server on a real SQLite file) on a DuckLake store whose PostgreSQL role needs a password
(scram-sha-256 for that role only, so the password really is used: without it the store does not
open). The first run gets the catalog's password in keyword form and a Slack webhook that fails
(the digest stays queued, the run fails with a message); the second gets it in URI form and a bot
token, and delivers the digest. Then, through Prefect's client API, the flow runs (parameters,
state messages), task runs, artifacts and logs, and afterwards every text column of every table of
the server's SQLite file (and its raw bytes, and the result storage): 0 hits of the password, the
webhook's secret path or the token. A deployment run with the password in db_path is refused by
the server (the parameter schema) before it is stored.

Skips with the reason without PostgreSQL's binaries or the DuckLake extensions (tests/pg.py).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import time
from pathlib import Path

import pytest

from cli.main import main
from storage import lake

from storage.store import open_store

pytestmark = pytest.mark.xdist_group("servers")   # starts PostgreSQL and Prefect: one server test at a time

ROOT = Path(__file__).resolve().parents[2]
REPLAY = ROOT / "tests" / "fixtures" / "replay"
SIMPLE_EVALS_HISTORY = [ROOT / "tests" / "fixtures" / "simple_evals" / f"readme_{d}.md"
                        for d in ("2024-09-11", "2025-07-09")]
ROLE = "bw_secret_role"
PASSWORD = "Pw-7d3a91c0-prefect-scan"
FAKE_TOKEN = "xoxb-000FAKE-333FAKE-PrefectScanToken91"
SOURCES = "simple_evals,swebench"


@pytest.fixture(scope="module")
def server(lake_pg):
    return lake_pg           # the session's PostgreSQL (tests/conftest.py)


@pytest.fixture
def lake_role(server):
    """A catalog database owned by a role that must give its password (scram-sha-256 on 127.0.0.1)."""
    server.psql(f"DROP DATABASE IF EXISTS bw_prefect_scan")
    server.psql(f"DROP ROLE IF EXISTS {ROLE}")
    server.psql(f"CREATE ROLE {ROLE} LOGIN PASSWORD '{PASSWORD}'")
    server.psql(f"CREATE DATABASE bw_prefect_scan OWNER {ROLE}")
    hba = server.root / "data" / "pg_hba.conf"
    original = hba.read_text()
    hba.write_text(f"host all {ROLE} 127.0.0.1/32 scram-sha-256\n" + original)   # same owner: rewritten in place
    server.psql("SELECT pg_reload_conf()")
    yield f"dbname=bw_prefect_scan host=127.0.0.1 port={server.port} user={ROLE}"
    hba.write_text(original)
    server.psql("SELECT pg_reload_conf()")


def _sqlite_text(path: Path) -> str:
    """Every cell of every table of Prefect's SQLite database, as text (blobs decoded)."""
    cells: list[str] = []
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = [name for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        assert {"flow_run", "artifact", "log", "task_run"} <= set(tables), tables
        for table in tables:
            for row in con.execute(f'SELECT * FROM "{table}"'):
                for value in row:
                    if isinstance(value, bytes):
                        cells.append(value.decode("latin-1"))
                    elif value is not None:
                        cells.append(str(value))
    finally:
        con.close()
    return "\n".join(cells)


@pytest.mark.slow
def test_no_secret_reaches_prefects_database_artifacts_or_logs(lake_role, tmp_path, monkeypatch):
    from fake_slack import FakeSlack
    from jobs.cycle import run_cycle
    from jobs.migrate import migrate_to_lake

    keyword = f"ducklake:postgres:{lake_role} password={PASSWORD}"
    host_port_db = lake_role.split("host=")[1].split()[0] + ":" + lake_role.split("port=")[1].split()[0]
    uri = f"ducklake:postgres:postgresql://{ROLE}:{PASSWORD}@{host_port_db}/bw_prefect_scan"
    monkeypatch.setenv(lake.DATA_PATH_ENV, str(tmp_path / "lake-data"))
    for var in ("SLACK_WEBHOOK_URL", "SLACK_BOT_TOKEN", "SLACK_CHANNEL", "SLACK_API_URL", "PREFECT_API_URL",
                "BENCHWATCH_DB", "BENCHWATCH_REPORT_DIR", "PGPASSWORD", "PGPASSFILE"):
        monkeypatch.setenv(var, "")                     # recorded, so that what `run` sets (PGPASSWORD)
        monkeypatch.delenv(var)                         # is undone after the test
    monkeypatch.setenv("PGPASSFILE", str(tmp_path / "no-pgpass"))

    # The role's password is really checked: the store does not open without it.
    assert main(["status", "--db", "ducklake:postgres:" + lake_role]) != 0

    # History (plain functions, console alerts): MGSM low, then a pending move, so that the
    # flow run's replay commits "low -> high" and has a digest to send (as tests/system/test_e2e_prefect.py).
    # The two cycles run on a file, copied into the lake through the keyword form (`benchwatch
    # migrate --to`; cycles on a lake are test_ducklake.py's).
    seed = tmp_path / "seed.duckdb"
    for i, readme in enumerate(SIMPLE_EVALS_HISTORY):
        (tmp_path / f"history{i}" / "simple_evals").mkdir(parents=True)
        shutil.copy(readme, tmp_path / f"history{i}" / "simple_evals" / "README.md")
        seeded = run_cycle(open_store(seed), ["simple_evals"], replay_dir=tmp_path / f"history{i}")
        assert seeded.ok, seeded.text()
    assert migrate_to_lake(open_store(seed), open_store(keyword)).ok

    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import LogFilter, LogFilterFlowRunId
    from prefect.settings import (PREFECT_RESULTS_LOCAL_STORAGE_PATH, PREFECT_SERVER_DATABASE_CONNECTION_URL,
                                  temporary_settings)
    from prefect.testing.utilities import prefect_test_harness

    results = tmp_path / "prefect-results"
    with FakeSlack() as slack:
        webhook_secret = slack.webhook_url.split("/services/", 1)[1]
        secrets = [PASSWORD, FAKE_TOKEN, FAKE_TOKEN.split("-", 1)[1], webhook_secret,
                   webhook_secret.rsplit("/", 1)[-1]]
        with temporary_settings({PREFECT_RESULTS_LOCAL_STORAGE_PATH: results}), \
                prefect_test_harness(server_startup_timeout=120):
            database = Path(PREFECT_SERVER_DATABASE_CONNECTION_URL.value().split(":///", 1)[1])
            # 1: keyword form, a webhook Slack refuses (the digest stays queued; the run fails)
            monkeypatch.setenv("SLACK_WEBHOOK_URL", slack.webhook_url)
            monkeypatch.setenv("SLACK_BOT_TOKEN", FAKE_TOKEN)
            monkeypatch.setenv("SLACK_CHANNEL", "C000FAKE")
            slack.outage(500)
            assert main(["run", "--replay", str(REPLAY), "--sources", SOURCES, "--db", keyword]) == 1
            # 2: URI form, the bot token (Web API): the queued digest is delivered
            slack.recover()
            monkeypatch.delenv("SLACK_WEBHOOK_URL")
            monkeypatch.setenv("SLACK_API_URL", slack.api_url)
            monkeypatch.delenv("PGPASSWORD", raising=False)           # the URI's own password must get it there
            assert main(["run", "--replay", str(REPLAY), "--sources", SOURCES, "--db", uri]) == 0
            assert slack.messages(), "no digest delivered: the scan would prove nothing about Slack"
            assert any(FAKE_TOKEN in json.dumps(r.headers) for r in slack.requests), "the token was never used"
            assert any(r.path.startswith("/services/") for r in slack.requests), "the webhook was never used"

            with get_client(sync_client=True) as client:
                # a deployment run with the password: the server refuses it before storing it
                from flows import pipeline as pl
                from prefect.exceptions import PrefectHTTPStatusError
                flow_id = client.create_flow_from_name("pipeline")
                deployment = client.create_deployment(flow_id, "scan", enforce_parameter_schema=True,
                                                      parameter_openapi_schema=pl.pipeline.parameters.model_dump())
                with pytest.raises(PrefectHTTPStatusError) as refused:
                    client.create_flow_run_from_deployment(deployment, parameters={"db_path": uri})
                assert refused.value.response.status_code == 409
                runs = client.read_flow_runs()
                ids = [r.id for r in runs]
                time.sleep(2)                          # the API log worker sends in batches
                api = {"flow runs": [r.model_dump_json() for r in runs],
                       "task runs": [t.model_dump_json() for t in client.read_task_runs()],
                       "artifacts": [a.model_dump_json() for a in client.read_artifacts()],
                       "logs": [lg.model_dump_json() for lg in client.read_logs(
                           LogFilter(flow_run_id=LogFilterFlowRunId(any_=ids)))]}
            # the scan sees what it must: both runs with their db_path, the artifacts, the logs
            db_paths = sorted(r.parameters["db_path"] for r in runs)
            assert len(db_paths) == 2 and all(p.startswith("ducklake:postgres:") for p in db_paths), db_paths
            assert len(api["artifacts"]) >= 4 and any("MGSM" in a for a in api["artifacts"]), api["artifacts"][:2]
            # the flow's run logger carries the report, Slack's refusal included
            assert any("delivery to slack-webhook failed" in lg for lg in api["logs"]), api["logs"][:3]
        # the harness has stopped (its logs drained): the whole database file, as stored
        places = {name: "\n".join(texts) for name, texts in api.items()}
        places["sqlite tables"] = _sqlite_text(database)
        places["sqlite files (raw)"] = "\n".join(
            p.read_bytes().decode("latin-1") for p in database.parent.glob(database.name + "*"))
        places["result storage"] = "\n".join(
            p.read_bytes().decode("latin-1") for p in results.rglob("*") if p.is_file()) if results.exists() else ""
    hits = [(secret, name) for name, text in places.items() for secret in secrets if secret in text]
    assert hits == [], hits
    assert db_paths == sorted([f"ducklake:postgres:{lake_role}",      # the password left, the rest kept
                               f"ducklake:postgres:postgresql://{ROLE}@{host_port_db}/bw_prefect_scan"])


def test_a_flow_refuses_a_db_path_with_a_password_in_one_line():
    """The refusal names db_path, never the value; Prefect's own log record of the refused
    parameters (which quotes them) is redacted too (flows.pipeline installs common.redact)."""
    import logging
    from flows import pipeline as pl
    from flows.secrets import DB_PATH_PASSWORD_REFUSED
    from prefect.exceptions import ParameterTypeError
    from prefect.utilities.schema_tools.validation import ValidationError, validate
    seen: list[logging.LogRecord] = []
    recorder = logging.Handler(logging.ERROR)
    recorder.emit = seen.append                      # type: ignore[method-assign]
    logging.getLogger("prefect").addHandler(recorder)  # Prefect's loggers do not propagate to the root
    for db_path in (f"ducklake:postgres:dbname=x host=h password={PASSWORD}",
                    f"ducklake:postgres:postgresql://u:{PASSWORD}@h/x",
                    f"ducklake:postgres:postgresql://u@h/x?password={PASSWORD}"):
        for flow_ in (pl.pipeline, pl.collect, pl.analyze, pl.notify):
            with pytest.raises(ParameterTypeError) as caught:
                flow_.validate_parameters({"db_path": db_path})
            message = str(caught.value)
            assert DB_PATH_PASSWORD_REFUSED in message and PASSWORD not in message, message
            # the same rule in the parameter schema (the server's check of a deployment run)
            with pytest.raises(ValidationError):
                validate({"db_path": db_path}, flow_.parameters.model_dump(), raise_on_error=True)
    logging.getLogger("prefect").removeHandler(recorder)
    refused = [r.getMessage() for r in seen]
    assert len(refused) == 3 * 4 and all("db_path" in m and PASSWORD not in m for m in refused), refused[:1]
    for ok in (None, "/data/bw.duckdb", "ducklake:postgres:postgresql://u@h:5432/x?sslmode=require"):
        validate({"db_path": ok}, pl.pipeline.parameters.model_dump(), raise_on_error=True)
    assert pl.pipeline.validate_parameters({"db_path": "ducklake:postgres:dbname=x host=h user=u"})
    assert pl.pipeline.validate_parameters({"db_path": "/data/password=odd.duckdb"})


def test_serve_registers_deployments_without_the_password(monkeypatch):
    """`benchwatch serve --db <lake URL with a password>`: the deployments it registers (stored on
    the server with their parameters) carry the URL without it; PGPASSWORD of the serving process,
    which its flow runs inherit, carries it. Prefect's `serve` itself is replaced by a recorder:
    what is checked is what benchwatch hands to it."""
    import argparse
    import os
    import prefect
    from prefect.settings import PREFECT_API_URL, temporary_settings
    from cli.commands import serve
    registered = []
    monkeypatch.setattr(prefect, "serve", lambda *deployments, **kw: registered.extend(deployments))
    monkeypatch.setenv("PGPASSWORD", "")      # recorded: restored after the test
    monkeypatch.delenv("PGPASSWORD")
    url = f"ducklake:postgres:dbname=bw host=db.internal user=bw password={PASSWORD}"
    with temporary_settings({PREFECT_API_URL: "http://127.0.0.1:9/api"}):
        assert serve.run(argparse.Namespace(db=url, sources=None)) == 0
    assert len(registered) == 4
    assert {d.parameters["db_path"] for d in registered} == {"ducklake:postgres:dbname=bw host=db.internal user=bw"}
    assert PASSWORD not in repr([d.model_dump() for d in registered])
    assert os.environ["PGPASSWORD"] == PASSWORD

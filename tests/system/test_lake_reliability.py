"""Issue 24 on a real DuckLake store (PostgreSQL from tests/pg.py): `ingest csv`, the password
in every message, the query sandbox, PostgreSQL stopping mid-backfill.

Skips with the reason when PostgreSQL's binaries or the DuckLake extensions are missing.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from cli.main import EXIT_BUG, main
from storage import lake

import pg
from storage.store import open_store

pytestmark = pytest.mark.xdist_group("servers")   # starts PostgreSQL: one server test at a time

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
PASSWORD = "Pw-4f9c1e77-secret"


@pytest.fixture(scope="module")
def server(lake_pg):
    return lake_pg           # the session's PostgreSQL (tests/conftest.py)


@pytest.fixture(autouse=True)
def no_prefect_handlers_from_earlier_tests():
    """A Prefect console handler an earlier test in this process left on the root logger writes to
    that test's (closed) captured stream and prints "--- Logging error ---" with a traceback for
    every warning: not what a `benchwatch` process does. Detached for these tests, then restored."""
    import logging
    root = logging.getLogger()
    foreign = [h for h in root.handlers if type(h).__module__.startswith("prefect")]
    for handler in foreign:
        root.removeHandler(handler)
    yield
    for handler in foreign:
        root.addHandler(handler)


def _db_name(request) -> str:
    return "bw_" + request.node.name.lower().replace("[", "_").replace("]", "").replace("-", "_")[:40]


def _console_only(monkeypatch) -> None:
    for var in ("SLACK_WEBHOOK_URL", "SLACK_BOT_TOKEN", "SLACK_CHANNEL", "PREFECT_API_URL"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def lake_url(server, tmp_path, monkeypatch, request):
    """A PostgreSQL database that holds no store yet: the test's first command creates it."""
    name = _db_name(request)
    server.create_database(name)
    monkeypatch.setenv(lake.DATA_PATH_ENV, str(tmp_path / "lake-data"))
    _console_only(monkeypatch)
    return "ducklake:postgres:" + server.conninfo(name)


@pytest.fixture
def store_url(lake_store_url, monkeypatch):
    """A database holding an empty store (tests/conftest.py: a copy of the session's migrated
    template), for a test about what a store does rather than about its creation, which
    `lake_url`'s tests and test_command_matrix.py's no_store state cover."""
    _console_only(monkeypatch)
    return lake_store_url


def _one_line(err: str) -> str:
    lines = [line for line in err.strip().splitlines() if line]
    assert "Traceback" not in err and len(lines) == 1, err
    return lines[0]


# --- 8. `ingest csv` on a lake ---------------------------------------------------------------------

@pytest.mark.slow
def test_ingest_csv_stores_a_snapshot_on_a_lake(store_url, capsys):
    code = main(["ingest", "csv", str(FIXTURES / "csv" / "scores_proportion.csv"), "--db", store_url])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert main(["query", "SELECT count(*) AS n, min(snapshot_id) AS s FROM scores WHERE source = 'csv'",
                 "--db", store_url, "--format", "csv"]) == 0
    n, snapshot = capsys.readouterr().out.strip().splitlines()[1].split(",")
    assert int(n) > 0 and int(snapshot) >= 1
    # the same file again adds nothing; another file gets the next id
    assert main(["ingest", "csv", str(FIXTURES / "csv" / "scores_proportion.csv"), "--db", store_url]) == 0
    assert main(["ingest", "csv", str(FIXTURES / "csv" / "scores_other_benchmark.csv"), "--db", store_url]) == 0
    capsys.readouterr()
    assert main(["query", "SELECT count(DISTINCT snapshot_id) AS n FROM scores WHERE source = 'csv'",
                 "--db", store_url, "--format", "csv"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[1] == "2"


# --- 9. the PostgreSQL password never printed --------------------------------------------------------

def _forms(conninfo: str, password: str) -> dict[str, str]:
    """A catalog conninfo with a password, keyword form and URI form."""
    parts = dict(p.split("=", 1) for p in conninfo.split())
    return {"keyword": f"{conninfo} password={password}",
            "uri": f"postgresql://{parts['user']}:{password}@{parts['host']}:{parts['port']}/{parts['dbname']}"}


DOWN = "dbname=bw host=127.0.0.1 port=1 user=bw"     # nothing listens on port 1
COMMANDS_9 = (["status"], ["analyze"], ["query", "SELECT 1"], ["notify"], ["report"],
              ["ingest", "csv", str(FIXTURES / "csv" / "scores_proportion.csv")])


@pytest.mark.parametrize("form", ["keyword", pytest.param("uri", marks=pytest.mark.slow)])   # fast: one form
@pytest.mark.parametrize("commands", [pytest.param(COMMANDS_9[:2], id="some"),
                                      pytest.param(COMMANDS_9[2:], id="more", marks=pytest.mark.slow)])
def test_the_password_is_never_printed_when_postgresql_is_down(form, commands, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv(lake.DATA_PATH_ENV, str(tmp_path / "data"))
    url = "ducklake:postgres:" + _forms(DOWN, PASSWORD)[form]
    for argv in commands:
        for verbose in ([], ["-v"]):
            code = main([*verbose, *argv, "--db", url])
            out = capsys.readouterr()
            assert code == 1, (argv, out.err)
            assert PASSWORD not in out.out + out.err, (argv, out.err)
            if not verbose:
                _one_line(out.err)


@pytest.mark.slow
def test_the_password_is_never_printed_by_a_working_lake(lake_url, capsys):
    conninfo = lake_url.removeprefix("ducklake:postgres:")
    for form, with_password in _forms(conninfo, PASSWORD).items():
        url = "ducklake:postgres:" + with_password
        for argv in (["ingest", "csv", str(FIXTURES / "csv" / "scores_proportion.csv")], ["status"], ["analyze"],
                     ["query", "SELECT * FROM no_such_table"], ["query", "SELECT count(*) FROM scores"],
                     ["report"], ["-v", "query", "SELECT 1/"]):
            main([*argv, "--db", url])
            out = capsys.readouterr()
            assert PASSWORD not in out.out + out.err, (form, argv, out.out[-500:], out.err)
        assert main(["status", "--db", url]) == 0
        assert "[REDACTED]" in capsys.readouterr().out.splitlines()[0]


def test_redact_removes_a_conninfo_password_in_both_forms():
    from common.redact import redact
    for text in (f"password={PASSWORD} host=h", f"password = '{PASSWORD} x' host=h",
                 f"postgresql://bw:{PASSWORD}@h:5432/db", f"postgres://bw:{PASSWORD}@h/db?x=1",
                 f'Unable to connect to Postgres at "dbname=x password={PASSWORD}": refused'):
        assert PASSWORD not in redact(text), text
        assert "[REDACTED]" in redact(text)
    assert redact("https://example.org:8080/a@b") == "https://example.org:8080/a@b"   # no userinfo


# --- 10. `query` on a lake reads the store's tables and nothing else ------------------------------------

def _escapes(server, url: str) -> list[str]:
    other = server.conninfo("postgres")
    return [
        f"SELECT * FROM postgres_scan('{other}', 'pg_catalog', 'pg_authid')",
        f"FROM postgres_scan_pushdown('{other}', 'pg_catalog', 'pg_authid')",
        "SELECT * FROM postgres_query('__ducklake_metadata_lake', 'SELECT pg_read_file(''PG_VERSION'')')",
        f"SELECT * FROM postgres_execute('{other}', 'CREATE TABLE owned (a int)')",
        f"SELECT count(*) FROM scores WHERE source IN (SELECT usename FROM postgres_query('{other}', 'SELECT usename FROM pg_user'))",
        f"WITH x AS (SELECT * FROM query('SELECT * FROM postgres_scan(''{other}'', ''pg_catalog'', ''pg_authid'')')) SELECT * FROM x",
        "SELECT * FROM __ducklake_metadata_lake.pg_catalog.pg_authid",
        "SELECT * FROM __ducklake_metadata_lake.public.ducklake_snapshot",
        "EXPLAIN SELECT * FROM postgres_scan('x', 'y', 'z')",
        "SELECT pg_clear_cache()",
        "SELECT * FROM ducklake_expire_snapshots('lake', dry_run => true)",
        "SELECT * FROM ducklake_cleanup_old_files('lake', dry_run => true)",
        f"CALL postgres_attach('{other}')",
        "IMPORT DATABASE '/tmp'",
        "SELECT 1; IMPORT DATABASE '/tmp'",
        *NESTED(other),
    ]


def NESTED(other: str) -> list[str]:
    """Issue 55 item 1: SQL run by a function the parse-tree check never looked inside, and the
    catalog functions that showed the conninfo (item 6)."""
    return [
        f"SELECT * FROM json_execute_serialized_sql(json_serialize_sql('SELECT rolname FROM postgres_scan(''{other}'', "
        "''pg_catalog'', ''pg_authid'')'))",
        "SELECT * FROM json_execute_serialized_sql(json_serialize_sql('SELECT * FROM postgres_query("
        "''__ducklake_metadata_lake'', ''SELECT pg_read_file(''''PG_VERSION'''')'')'))",
        "SELECT * FROM json_execute_serialized_sql(json_serialize_sql('SELECT * FROM postgres_execute("
        "''__ducklake_metadata_lake'', ''COPY (SELECT 1) TO PROGRAM ''''touch /tmp/bw-owned'''''')'))",
        "SELECT path FROM duckdb_databases()", "SELECT * FROM duckdb_settings()", "SELECT * FROM duckdb_secrets()",
    ]


@pytest.mark.slow
def test_query_on_a_lake_refuses_the_postgres_scanner_and_store_maintenance(server, store_url, capsys):
    assert main(["ingest", "csv", str(FIXTURES / "csv" / "scores_proportion.csv"), "--db", store_url]) == 0
    capsys.readouterr()
    for sql in _escapes(server, store_url):
        code = main(["query", sql, "--db", store_url, "--format", "csv"])
        out = capsys.readouterr()
        assert code == 1, (sql, out.out[:300], out.err)
        assert "refused" in _one_line(out.err), sql
        assert "rolsuper" not in out.out and "postgres" not in out.out, sql
    assert "owned" not in server.psql("SELECT string_agg(tablename, ',') FROM pg_tables WHERE schemaname = 'public'")
    # what readers need still works: the store's tables and views, DuckLake's inspection functions
    for sql in ("SELECT count(*) AS n FROM scores", "SELECT count(*) AS n FROM latest_scores",
                "SELECT count(*) AS n FROM ducklake_snapshots('lake')", "SELECT count(*) AS n FROM lake.snapshots()",
                "EXPLAIN SELECT * FROM scores", "SELECT upper(model) AS m FROM scores LIMIT 1"):
        assert main(["query", sql, "--db", store_url, "--format", "csv"]) == 0, (sql, capsys.readouterr().err)
        capsys.readouterr()


def test_nested_execution_and_catalog_functions_are_refused_on_a_lake(server, store_url, capsys):
    """Before: each of these ran (rows of pg_authid, a file of the catalog host, a shell command,
    the conninfo with its password). Refused before the catalog is even attached."""
    from storage import db
    with db.connect(store_url):       # a store: on the old code each statement ran against it
        pass
    url = "ducklake:postgres:" + _forms(store_url.removeprefix("ducklake:postgres:"), PASSWORD)["keyword"]
    for sql in NESTED(server.conninfo("postgres")):
        code = main(["query", sql, "--db", url, "--format", "csv"])
        out = capsys.readouterr()
        assert code == 1, (sql, out.out[:300], out.err)
        assert "refused" in _one_line(out.err), sql
        assert PASSWORD not in out.out + out.err and "postgres" not in out.out, sql
    assert not Path("/tmp/bw-owned").exists()


@pytest.mark.parametrize("read_only", [True, False], ids=["ro", "rw"])
def test_no_function_shows_the_password(store_url, read_only):
    """Item 6, below the query filter: the session itself (read-only or writing) holds the password
    only in a temporary secret, which DuckDB shows redacted; before, duckdb_databases().path and
    the allowed_paths setting showed the whole conninfo."""
    from storage import db
    url = "ducklake:postgres:" + _forms(store_url.removeprefix("ducklake:postgres:"), PASSWORD)["keyword"]
    with db.connect(url):                                   # the store, through the password form
        pass
    con = db.open_connection(url, read_only=read_only, sandboxed=read_only)
    try:
        assert con.execute("SELECT count(*) FROM meta").fetchone()[0] >= 0      # attached and readable
        seen = [str(row) for sql in ("SELECT * FROM duckdb_databases()", "SELECT * FROM duckdb_settings()",
                                     "SELECT * FROM duckdb_secrets()")
                for row in con.execute(sql).fetchall()]
        assert any("dbname=" in row for row in seen)         # the scan reads what held the conninfo
        assert [row for row in seen if PASSWORD in row] == []
        with pytest.raises(Exception, match="(?i)redact|allow_unredacted|lock"):
            con.execute("SELECT * FROM duckdb_secrets(redact => false)").fetchall()
    finally:
        con.close()
        lake.release(con)


def test_the_documented_reader_role_reads_and_can_do_nothing_else(server, store_url, request, capsys):
    """docs/deploy.md's read-only role (pg.grant_reader: CONNECT, USAGE, SELECT and default
    privileges) with a password PostgreSQL checks: `query` reads the store through it, and even a
    session that skipped the query filter could not read files or pg_authid, run programs, or
    write, in PostgreSQL or in the store."""
    from storage import db
    assert main(["ingest", "csv", str(FIXTURES / "csv" / "scores_proportion.csv"), "--db", store_url]) == 0
    role, password = f"bw_reader_{abs(hash(request.node.name)) % 10**8}", "Rd-71c3aa90-secret"
    dbname = dict(p.split("=", 1) for p in store_url.removeprefix("ducklake:postgres:").split())["dbname"]
    server.create_role(role, password)
    server.grant_reader(role, dbname)
    snapshots_before = server.psql("SELECT count(*) FROM ducklake_snapshot", dbname).strip()
    base = store_url.removeprefix("ducklake:postgres:").replace("user=postgres", f"user={role}")
    reader = f"ducklake:postgres:{base} password={password}"
    capsys.readouterr()
    assert main(["query", "SELECT count(*) AS n FROM scores", "--db", reader, "--format", "csv"]) == 0
    assert int(capsys.readouterr().out.splitlines()[1]) > 0
    assert main(["query", "SELECT 1", "--db", f"ducklake:postgres:{base} password=wrong-password"]) == 1
    assert "password authentication failed" in capsys.readouterr().err       # the password is what let it in
    con = db.open_connection(reader, read_only=True)       # no filter: what the role itself allows
    try:
        for sql in ("SELECT * FROM postgres_query('__ducklake_metadata_lake', 'SELECT pg_read_file(''PG_VERSION'')')",
                    "SELECT * FROM postgres_query('__ducklake_metadata_lake', 'SELECT rolpassword FROM pg_authid')",
                    "SELECT * FROM postgres_execute('__ducklake_metadata_lake', 'COPY (SELECT 1) TO PROGRAM ''true''')",
                    "SELECT * FROM postgres_execute('__ducklake_metadata_lake', 'CREATE TABLE owned (a int)')",
                    "SELECT * FROM postgres_execute('__ducklake_metadata_lake', 'DELETE FROM ducklake_snapshot')"):
            with pytest.raises(Exception, match="(?i)permission denied|must be superuser|read-only transaction"):
                con.execute(sql).fetchall()
    finally:
        con.close()
    import psycopg      # the role itself, outside DuckDB's read-only transaction
    with psycopg.connect(f"{base} password={password}", autocommit=True) as pg_con:
        for sql in ("SELECT pg_read_file('PG_VERSION')", "SELECT rolpassword FROM pg_authid",
                    "COPY (SELECT 1) TO PROGRAM 'true'", "CREATE TABLE owned (a int)",
                    "DELETE FROM ducklake_snapshot", "UPDATE ducklake_metadata SET value = value"):
            with pytest.raises(psycopg.Error, match="(?i)permission denied|must be superuser|privilege"):
                pg_con.execute(sql)
    # a write as the reader fails (at DuckLake's commit: exit 70, its TransactionException is not
    # classified yet) and stores nothing
    assert main(["ingest", "csv", str(FIXTURES / "csv" / "scores_other_benchmark.csv"), "--db", reader]) != 0
    assert "owned" not in server.psql("SELECT string_agg(tablename, ',') FROM pg_tables", dbname)
    assert server.psql("SELECT count(*) FROM ducklake_snapshot", dbname).strip() == snapshots_before
    # tables the writer creates later are readable too (ALTER DEFAULT PRIVILEGES)
    assert main(["ingest", "csv", str(FIXTURES / "csv" / "scores_other_benchmark.csv"), "--db", store_url]) == 0
    capsys.readouterr()
    assert main(["query", "SELECT count(DISTINCT snapshot_id) AS n FROM scores", "--db", reader, "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines()[1] == "2"


def test_the_lake_sandbox_check_judges_the_parse_tree():
    """The check `query` runs on a lake session (fast: the extensions loaded, no server needed)."""
    import duckdb
    from storage.query import ReadOnlyViolation, check_allowed, check_read_only
    con = duckdb.connect()
    try:
        lake.load_extensions(con)
    except lake.LakeError as exc:
        pytest.skip(str(exc))
    for sql in ("SELECT * FROM postgres_scan('x', 'y', 'z')", "SELECT * FROM (SELECT 1) t, POSTGRES_QUERY('a', 'b')",
                "SELECT * FROM query('SELECT 1')", "EXPLAIN SELECT pg_clear_cache()",
                "SELECT * FROM __ducklake_metadata_lake.public.ducklake_snapshot",
                "SELECT * FROM __ducklake_metadata_lake.ducklake_snapshot",
                "SELECT 1 WHERE 1 IN (SELECT * FROM ducklake_expire_snapshots('lake'))",
                "SELECT * FROM json_execute_serialized_sql(json_serialize_sql('SELECT * FROM postgres_scan(''x'', ''y'', ''z'')'))",
                "SELECT postgres_hstore_get('a', 'b')", "SELECT * FROM read_postgres_binary('x')",
                "SELECT * FROM other.main.x"):
        with pytest.raises(ReadOnlyViolation, match="refused"):
            check_allowed(con, check_read_only(sql), lake=True)
    check_allowed(con, check_read_only("SELECT upper('a'), * FROM range(3); SELECT * FROM ducklake_snapshots('x')"),
                  lake=True)
    with pytest.raises(ReadOnlyViolation, match="ducklake_snapshots"):   # not on a DuckDB file
        check_allowed(con, check_read_only("SELECT * FROM ducklake_snapshots('x')"), lake=False)
    con.close()


def test_import_database_is_refused_before_anything_reads_the_directory(tmp_path, capsys):
    """DuckDB's parser expands IMPORT DATABASE into the directory's SQL files: refused by name."""
    folder = tmp_path / "dump"
    folder.mkdir()
    (folder / "schema.sql").write_text("SELECT 42;\n")
    (folder / "load.sql").write_text("SELECT 43;\n")
    from storage import db
    path = tmp_path / "bw.duckdb"
    with db.connect(str(path)):
        pass
    for sql in (f"IMPORT DATABASE '{folder}'", f"import   database '{folder}'"):
        assert main(["query", sql, "--db", str(path)]) == 1
        assert "refused" in _one_line(capsys.readouterr().err)


# --- 13. a killed migrate leaves no orphan Parquet files after its rerun; PostgreSQL gone --------------

def _orphans(url: str) -> list[str]:
    """Data files in the store's folder that its catalog does not reference (DuckLake's own check)."""
    import duckdb
    con = duckdb.connect()
    lake.load_extensions(con)
    target = lake.parse(url)
    con.execute(f"ATTACH {lake.literal(target.url)} AS l (DATA_PATH {lake.literal(target.data_path)})")
    rows = con.execute("SELECT path FROM ducklake_delete_orphaned_files('l', dry_run => true, cleanup_all => true)"
                       ).fetchall()
    con.close()
    return [r[0] for r in rows]


def _source_file(tmp_path: Path) -> Path:
    from jobs.collect import collect
    path = tmp_path / "source.duckdb"
    outcomes = collect(open_store(str(path)), ["swebench", "livecodebench", "lmarena", "aider_polyglot", "livebench"],
                       replay_dir=str(ROOT / "tests" / "fixtures" / "replay"))
    assert all(o.status == "new" for o in outcomes), [o.line() for o in outcomes]
    return path


def _cli_process(*argv: str):
    import subprocess
    import sys
    return subprocess.Popen([sys.executable, "-m", "cli", *argv], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.mark.slow
def test_a_killed_migrate_leaves_no_orphan_files_after_the_rerun(lake_url, tmp_path):
    import signal
    import time
    source = _source_file(tmp_path)
    data = Path(os.environ[lake.DATA_PATH_ENV])
    from storage import db
    with db.connect(lake_url):                 # the store exists, empty, before the copy starts
        pass
    before = {p for p in data.rglob("*.parquet")}
    killed = False
    for _ in range(5):      # kill the copy once it has written data files but not committed them
        proc = _cli_process("migrate", "--db", str(source), "--to", lake_url)
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            if len({p for p in data.rglob("*.parquet")} - before) >= 2:
                proc.send_signal(signal.SIGKILL)
                killed = True
                break
            time.sleep(0.005)
        proc.wait(timeout=60)
        if killed and proc.returncode == -signal.SIGKILL:
            break
        pytest.skip("the copy finished before it could be killed")   # pragma: no cover
    assert _orphans(lake_url), "the kill left no uncommitted data files: the check below could not fail"
    rerun = _cli_process("migrate", "--db", str(source), "--to", lake_url)
    out, err = rerun.communicate(timeout=300)
    assert rerun.returncode == 0, err
    assert _orphans(lake_url) == []


@pytest.mark.slow
def test_postgresql_stopped_mid_backfill_is_one_line(tmp_path, monkeypatch):
    """PostgreSQL stops while a backfill writes (the writer holds its lock and is storing a large
    file): exit 1 with one line, not a bug (70) nor an abort."""
    import subprocess
    import time
    server = pg.start()
    try:
        url = "ducklake:postgres:" + server.create_database("bw_stopped")
        monkeypatch.setenv(lake.DATA_PATH_ENV, str(tmp_path / "data"))
        folder = tmp_path / "archive" / "csv"
        folder.mkdir(parents=True)
        for day in range(1, 4):
            rows = "".join(f"m{i},bench{i % 50},{(i % 997) / 1000}\n" for i in range(150_000))
            (folder / f"csv_2025-01-{day:02d}.csv").write_text("model,benchmark,score\n" + rows)
        proc = _cli_process("backfill", str(tmp_path / "archive"), "--db", url)
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:   # the writer holds its lock
            if server.psql("SELECT count(*) FROM pg_stat_activity "
                           "WHERE application_name = 'benchwatch-writer'").strip() not in ("", "0"):
                break
            time.sleep(0.05)
        time.sleep(1.0)                                                 # … and is storing rows
        subprocess.run(server._as_owner(["pg_ctl", "-D", str(server.root / "data"), "-m", "immediate", "-w",
                                         "stop"]), capture_output=True, timeout=60)
        out, err = proc.communicate(timeout=180)
        assert proc.returncode == 1, err
        line = _one_line("\n".join(x for x in err.splitlines() if x.startswith("benchwatch")))
        assert ("PostgreSQL" in line or "ducklake:postgres:" in line or "DuckLake catalog" in line), line
        assert "terminate called" not in err, err
    finally:
        server.stop()


@pytest.mark.slow
def test_postgresql_stopped_during_a_runs_analyze_is_one_line(tmp_path, monkeypatch):
    """Issue 55 item 8: PostgreSQL stops while `run` analyzes (the writer lock held for seconds
    after a collect that found nothing new). Before: ~100 lines, a traceback per failed step
    (analyze, then notify, which cannot reach the store either) and the errors' multi-line text
    (exit 1). Now: one line saying what happened and what to do, exit 1."""
    import subprocess
    import time
    server = pg.start()
    try:
        url = "ducklake:postgres:" + server.create_database("bw_stopped_analyze")
        monkeypatch.setenv(lake.DATA_PATH_ENV, str(tmp_path / "data"))
        # every replayed source: an analysis long enough to be caught holding the lock on a fast machine.
        # What `run --no-prefect --collect-only` stores, collected into a file and copied in
        # (`benchwatch migrate --to`): the same rows without a catalog commit per source.
        from jobs.cycle import run_cycle
        from jobs.migrate import migrate_to_lake
        replay = str(ROOT / "tests" / "fixtures" / "replay")
        seed = str(tmp_path / "seed.duckdb")
        assert run_cycle(open_store(seed), replay_dir=replay, collect_only=True).ok
        assert migrate_to_lake(open_store(seed), open_store(url)).ok
        proc = _cli_process("run", "--no-prefect", "--replay", replay, "--db", url)
        held_since, deadline = None, time.monotonic() + 240
        while proc.poll() is None and time.monotonic() < deadline:   # the analysis holds the writer lock
            writers = server.psql("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'benchwatch-writer'")
            if writers.strip() not in ("", "0"):
                held_since = held_since or time.monotonic()
                if time.monotonic() - held_since > 1:     # held past a collect's brief writes: analyzing
                    break
            else:
                held_since = None
            time.sleep(0.1)
        assert proc.poll() is None, "the run ended before PostgreSQL could be stopped"
        subprocess.run(server._as_owner(["pg_ctl", "-D", str(server.root / "data"), "-m", "immediate", "-w",
                                         "stop"]), capture_output=True, timeout=60)
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 1, err
        line = _one_line(err)
        assert "lost the connection to PostgreSQL" in line and "run it again" in line, line
        assert out.strip() == "", out
    finally:
        server.stop()


def test_a_store_error_on_a_reachable_catalog_is_the_steps_own_failure(store_url):
    """The lost-catalog rule asks the catalog (storage.lake.catalog_lost): a store error whose
    words once meant a lost catalog is a step's own failure while a fresh connection to the
    catalog succeeds: raised as it is, reported, and the cycle goes on."""
    import duckdb

    from jobs.cycle import CycleReport, reported
    lake.forget_probes()
    report = CycleReport([])
    store = open_store(store_url)
    with reported(report, "analyze", store, log_failure=False):
        with store.connect():
            raise duckdb.IOException("server closed the connection unexpectedly")
    assert report.failures == ["analyze failed: IOException: server closed the connection unexpectedly"]
    lake.forget_probes()


@pytest.mark.slow
def test_any_store_error_after_postgresql_stopped_is_a_lost_catalog(tmp_path, monkeypatch):
    """PostgreSQL stops while a connection of the store is open: the next statement fails with
    whatever DuckLake says then, and the store raises it as CatalogLost (a fresh connection to the
    catalog fails), which the cycle and the CLI turn into one line."""
    import subprocess

    from cli.main import LOST_CATALOG, environment_failure
    server = pg.start()
    try:
        url = "ducklake:postgres:" + server.create_database("bw_stopped_statement")
        monkeypatch.setenv(lake.DATA_PATH_ENV, str(tmp_path / "data"))
        store = open_store(url)
        lake.forget_probes()
        with pytest.raises(lake.CatalogLost) as lost:
            with store.connect() as con:
                subprocess.run(server._as_owner(["pg_ctl", "-D", str(server.root / "data"), "-m", "immediate",
                                                 "-w", "stop"]), capture_output=True, timeout=60)
                con.execute("SELECT count(*) FROM snapshots").fetchall()
        assert environment_failure(lost.value) == LOST_CATALOG
    finally:
        lake.forget_probes()
        server.stop()


# --- the secret scan (issue 24, "Done when") ---------------------------------------------------------

FAKE_TOKEN = "xoxb-000FAKE-222FAKE-LakeSecretToken77"
SCAN_SOURCES = ["simple_evals", "swebench", "livebench", "lmarena"]


def _lake_text_cells(url: str) -> list[str]:
    """Every text-like cell of every table of the store, and every blob decompressed."""
    import zlib
    from storage import db
    cells: list[str] = []
    with db.connect(url, read_only=True) as con:
        cols = con.execute("""SELECT table_name, column_name, data_type FROM duckdb_columns()
                              WHERE database_name = current_database() AND schema_name = 'main'
                                AND table_name IN (SELECT table_name FROM duckdb_tables()
                                                   WHERE database_name = current_database())
                                AND (data_type IN ('VARCHAR', 'JSON', 'BLOB') OR data_type LIKE '%[]'
                                     OR data_type LIKE 'STRUCT%' OR data_type LIKE 'MAP%')""").fetchall()
        assert len(cols) > 20, "too few text columns: the scan would prove little"
        q = db.quote_ident
        for table, column, dtype in cols:
            for (value,) in con.execute(f"SELECT {q(column)} FROM {q(table)} WHERE {q(column)} IS NOT NULL").fetchall():
                if isinstance(value, (bytes, bytearray)):
                    cells.append(bytes(value).decode("latin-1"))
                else:
                    cells.append(str(value))
        blobs = con.execute("SELECT compression, content FROM blobs").fetchall()
        assert blobs, "no blobs: the scan would prove nothing about them"
        for compression, content in blobs:
            raw = zlib.decompress(content) if compression == "zlib" else bytes(content)
            cells.append(raw.decode("utf-8", "replace"))
    return cells


@pytest.mark.slow
def test_no_secret_reaches_output_tables_blobs_the_report_or_logs(lake_url, tmp_path, monkeypatch, caplog, capsys):
    """A full cycle on a DuckLake store with a Slack token, a webhook URL and the catalog's
    PostgreSQL password in keyword and URI form; then report --format html, status, query (a
    good one, a failing one) with either form. Nothing of any secret anywhere: 0 hits."""
    import logging
    from fake_slack import FakeSlack
    conninfo = lake_url.removeprefix("ducklake:postgres:")
    forms = _forms(conninfo, PASSWORD)
    keyword, uri = ("ducklake:postgres:" + forms["keyword"]), ("ducklake:postgres:" + forms["uri"])
    page = tmp_path / "report.html"
    caplog.set_level(logging.DEBUG)
    with FakeSlack() as slack:
        webhook_tail = slack.webhook_url.split("/services/", 1)[1]
        secrets = [PASSWORD, FAKE_TOKEN, FAKE_TOKEN.split("-", 1)[1], webhook_tail, webhook_tail.rsplit("/", 1)[-1]]
        monkeypatch.setenv("SLACK_WEBHOOK_URL", slack.webhook_url)
        monkeypatch.setenv("SLACK_BOT_TOKEN", FAKE_TOKEN)
        monkeypatch.setenv("SLACK_CHANNEL", "C000FAKE")
        monkeypatch.setenv("BENCHWATCH_REPORT_BASE_URL", f"https://u:{PASSWORD}@reports.example/x")
        slack.outage(500)                       # errors are logged and stored (notifications.last_error)
        assert main(["-vv", "run", "--no-prefect", "--replay", str(ROOT / "tests" / "fixtures" / "replay"),
                     "--sources", ",".join(SCAN_SOURCES), "--db", keyword]) in (0, 1)
        from alerts.render import render_digest
        from alerts.slack import load_settings, make_notifier
        from tests.unit.test_alerts_render import NOW, contamination
        failed = make_notifier(load_settings()).send(render_digest([contamination("m")], now=NOW))
        assert not failed.ok
        logging.getLogger("benchwatch.alerts").warning("[alerts] delivery failed: %s", failed.error)
        slack.recover()
        assert main(["-vv", "notify", "--db", uri]) in (0, 1)
        monkeypatch.delenv("SLACK_WEBHOOK_URL")                 # the Web API with the bot token
        monkeypatch.setenv("SLACK_API_URL", slack.api_url)
        assert make_notifier(load_settings()).send(render_digest([contamination("n")], now=NOW)).ok
        assert main(["-vv", "notify", "--db", keyword]) in (0, 1)
        assert slack.requests, "Slack was never called: the scan would prove nothing"
        token_seen = any(FAKE_TOKEN in json.dumps(r.headers) for r in slack.requests)
        assert token_seen, "the bot token was never used: the scan would prove nothing about it"
    for argv in (["report", "--format", "html", "--out", str(page), "--db", uri], ["status", "--db", keyword],
                 ["status", "--db", uri], ["query", "SELECT * FROM fetches", "--db", uri],
                 ["query", "SELECT * FROM notifications", "--format", "json", "--db", keyword],
                 ["-v", "query", "SELECT * FROM no_such_table", "--db", uri],
                 ["-v", "analyze", "--db", uri]):
        main(argv)
    out = capsys.readouterr()
    logs = "\n".join(r.getMessage() + (r.exc_text or "") for r in caplog.records)
    places = {"stdout": out.out, "stderr": out.err, "logs": logs, "report.html": page.read_text(),
              "tables and blobs": "\n".join(_lake_text_cells(lake_url))}
    assert "benchwatch report" in page.read_text() or "<!DOCTYPE html>" in page.read_text()
    hits = [(secret, name) for name, text in places.items() for secret in secrets if secret in text]
    assert hits == [], hits

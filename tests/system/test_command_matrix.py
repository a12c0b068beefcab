"""Every command survives every database state (issue 11).

States: no file, an empty (migrated) database, a database migrated only up to the previous
schema, metadata only (cut-offs and model metadata), item data only, each replay fixture
ingested alone, and all sources. Commands: analyze, report, notify, calibrate, backtest, status, query,
alerts, silence list. Each must end with exit 0 or 1 (an expected failure, said on stderr in
one line), never with a traceback or the "bug" code 70. The per-source part is slow. The lake
variant (at the end) runs every command on a DuckLake store too (slow; skips without PostgreSQL).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import duckdb
import pytest

import scrapers
from jobs.collect import collect
from helpers import lane
from cli.main import EXIT_BUG, main
from storage import db as storage_db
from storage.store import open_store

pytestmark = pytest.mark.xdist_group("test_command_matrix")   # its module fixtures are built once

ROOT = Path(__file__).resolve().parents[2]
REPLAY = ROOT / "tests" / "fixtures" / "replay"
PREVIOUS_SCHEMA = 6          # the last migration of the release before issue 11's work
METADATA_ONLY = ("knowledge_cutoffs", "openrouter")
ITEM_DATA_ONLY = ("livecodebench",)

COMMANDS = {
    "analyze": ["analyze"],
    "report": ["report"],
    "notify": ["notify"],
    "calibrate": ["calibrate", "--trials", "2", "--bootstrap", "50"],
    "backtest": ["backtest"],
    "status": ["status"],
    "query": ["query", "SELECT * FROM saturation_latest"],
    "query-latest": ["query", "SELECT count(*) AS n FROM latest_scores"],
    "alerts": ["alerts"],
    "silence-list": ["silence", "list"],
}


@pytest.fixture(autouse=True)
def console_only(monkeypatch):
    for name in ("SLACK_WEBHOOK_URL", "SLACK_BOT_TOKEN", "SLACK_CHANNEL", "PREFECT_API_URL"):
        monkeypatch.delenv(name, raising=False)


def _previous_schema(path: Path) -> None:
    """A file as the previous release left it: migrations up to PREVIOUS_SCHEMA only."""
    con = duckdb.connect(str(path))
    con.execute("""CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name VARCHAR NOT NULL,
                   applied_at TIMESTAMPTZ NOT NULL)""")
    for version, name, sql in storage_db.migrations():
        if version <= PREVIOUS_SCHEMA:
            con.execute(sql)
            con.execute("INSERT INTO schema_migrations VALUES (?, ?, now())", [version, name])
    con.close()


def _build(path: Path, state: str) -> None:
    if state == "missing":
        return
    if state == "previous_schema":
        _previous_schema(path)
        return
    if state == "empty":
        with storage_db.connect(str(path)):
            pass
        return
    sources = {"metadata_only": METADATA_ONLY, "item_data_only": ITEM_DATA_ONLY,
               "all": tuple(scrapers.enabled_sources())}.get(state)
    if sources is None:
        sources = (state.removeprefix("source:"),)
    outcomes = collect(open_store(str(path)), list(sources), replay_dir=str(REPLAY))
    assert all(o.status == "new" for o in outcomes), [o.line() for o in outcomes]


@pytest.fixture(scope="module")
def templates(tmp_path_factory):
    """One built database per state, copied for each command (analyze and notify write)."""
    root = tmp_path_factory.mktemp("states")
    cache: dict[str, Path] = {}

    def get(state: str) -> Path:
        if state not in cache:
            path = root / f"{state.replace(':', '_')}.duckdb"
            _build(path, state)
            cache[state] = path
        return cache[state]
    return get


def _run(templates, tmp_path, capsys, state: str, command: str) -> tuple[int, str, str]:
    src = templates(state)
    path = tmp_path / "bw.duckdb"
    if src.exists():
        shutil.copy(src, path)
    code = main([*COMMANDS[command][:1], *COMMANDS[command][1:], "--db", str(path)]
                if command not in ("silence-list",) else ["silence", "list", "--db", str(path)])
    out = capsys.readouterr()
    return code, out.out, out.err


def _check(code: int, out: str, err: str, state: str, command: str) -> None:
    where = f"{command} on {state}"
    assert "Traceback" not in err and "Traceback" not in out, f"{where}: traceback\n{err[-2000:]}"
    assert code != EXIT_BUG, f"{where}: a bug: {err.strip()}"
    assert code in (0, 1), f"{where}: exit {code}: {err.strip()}"
    if code == 1:
        lines = [line for line in err.strip().splitlines() if line.startswith("benchwatch")]
        assert lines, f"{where}: exit 1 without saying why: {err!r} / {out[-500:]!r}"


BASIC_STATES = ["missing", "empty", "previous_schema", "metadata_only", "item_data_only"]


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("state", lane(BASIC_STATES, ("missing", "previous_schema")))
def test_every_command_survives_the_basic_states(templates, tmp_path, capsys, state, command):
    code, out, err = _run(templates, tmp_path, capsys, state, command)
    _check(code, out, err, state, command)
    if state == "missing" and command not in ("analyze", "notify"):
        # a read command never creates the file it was pointed at by mistake
        assert not (tmp_path / "bw.duckdb").exists()


@pytest.mark.slow
@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("state", ["all"] + [f"source:{s}" for s in scrapers.enabled_sources()])
def test_every_command_survives_each_source_alone_and_all(templates, tmp_path, capsys, state, command):
    code, out, err = _run(templates, tmp_path, capsys, state, command)
    _check(code, out, err, state, command)


# --- one line, not a traceback (issue 11, defect 9) ------------------------------------------------------

def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    return err


def test_a_sqlite_file_as_db_is_named_and_no_extension_is_fetched(tmp_path, capsys):
    import sqlite3
    path = tmp_path / "other.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (a)")
    con.commit()
    con.close()
    for argv in (["status"], ["analyze"], ["query", "SELECT 1"]):
        assert main([*argv, "--db", str(path)]) == 1
        assert "is a SQLite file, not a benchwatch DuckDB database" in _one_line(capsys)
    assert storage_db.BASE_CONFIG["autoinstall_known_extensions"] is False
    assert storage_db.BASE_CONFIG["autoload_known_extensions"] is False


def test_a_sqlite_file_is_never_opened_through_an_extension(tmp_path):
    """Even past the name check, DuckDB is told not to install or load the sqlite extension."""
    import sqlite3
    path = tmp_path / "x.db"
    sqlite3.connect(path).execute("CREATE TABLE t (a)").connection.commit()
    with pytest.raises(duckdb.Error, match="(?i)extension|not a valid"):
        duckdb.connect(str(path), config=storage_db.BASE_CONFIG)
    assert not list(Path.home().glob(".duckdb/extensions/*/*/sqlite_scanner.duckdb_extension"))


def test_a_damaged_database_is_one_line(tmp_path, capsys):
    path = tmp_path / "bw.duckdb"
    with storage_db.connect(str(path)):
        pass
    data = bytearray(path.read_bytes())
    data[12288:] = bytes((i * 7 + 3) % 251 for i in range(len(data) - 12288))  # every block after the headers
    path.write_bytes(bytes(data))
    for argv in (["status"], ["analyze"], ["query", "SELECT * FROM snapshots"], ["notify"]):
        code = main([*argv, "--db", str(path)])
        assert code == 1, argv
        _one_line(capsys)
    garbage = tmp_path / "garbage.duckdb"
    garbage.write_bytes(b"\x00garbage" * 1000)
    assert main(["status", "--db", str(garbage)]) == 1
    assert "cannot open database" in _one_line(capsys)


def test_a_newer_schema_is_refused_not_written_to(tmp_path, capsys):
    path = tmp_path / "bw.duckdb"
    with storage_db.connect(str(path)):
        pass
    newest = storage_db.migrations()[-1][0]
    con = duckdb.connect(str(path))
    con.execute("INSERT INTO schema_migrations VALUES (?, 'from_the_future', now())", [newest + 5])
    before = con.execute("SELECT count(*) FROM silences").fetchone()[0]
    con.close()
    code = main(["silence", "add", "--match", "kind=x", "--for", "1d", "--comment", "c", "--db", str(path)])
    assert code == 1
    assert f"schema version {newest + 5}, newer than this benchwatch knows ({newest})" in _one_line(capsys)
    assert main(["analyze", "--db", str(path)]) == 1
    _one_line(capsys)
    con = duckdb.connect(str(path))
    assert con.execute("SELECT count(*) FROM silences").fetchone()[0] == before
    con.close()


def test_a_silence_too_long_for_a_date_is_a_usage_error(tmp_path, capsys):
    for duration in ("99999999d", "9" * 30 + "d"):
        code = main(["silence", "add", "--match", "kind=x", "--for", duration, "--comment", "c",
                     "--db", str(tmp_path / "bw.duckdb")])
        assert code == 2
        assert "at most 3650d" in _one_line(capsys)


def test_a_mistyped_replay_dir_is_refused_before_anything_runs(tmp_path, capsys):
    """Before: every source was recorded as a real fetch failure (source_failing alerts after
    three runs), and `--replay ""` silently fetched live."""
    path = tmp_path / "bw.duckdb"
    for replay in (str(tmp_path / "typo"), "", str(ROOT / "tests" / "fixtures" / "swebench")):
        assert main(["run", "--no-prefect", "--replay", replay, "--db", str(path)]) == 2
        assert "--replay" in _one_line(capsys)
    assert not path.exists()


def test_a_replay_dir_without_its_recorded_files_is_refused_before_anything_runs(tmp_path, capsys):
    """Issue 24 (2): `<source>/` folders without their recorded responses (or one empty folder)
    were collected as 13 real fetch failures, and the third run paged Slack with `source_failing`."""
    path = tmp_path / "bw.duckdb"
    hollow = tmp_path / "hollow"
    for name in scrapers.enabled_sources():
        (hollow / name).mkdir(parents=True)
    partial = tmp_path / "partial"
    shutil.copytree(REPLAY, partial)
    for f in (partial / "swebench").iterdir():
        f.unlink()                                       # an empty swebench/ beside complete folders
    half = tmp_path / "half"
    shutil.copytree(REPLAY / "livebench", half / "livebench")
    next((half / "livebench").glob("categories_*")).unlink()      # one of a source's two files missing
    for replay, named in ((hollow, "swebench"), (partial, "swebench/leaderboards.json"),
                          (half, "livebench/categories_")):
        assert main(["run", "--no-prefect", "--replay", str(replay), "--db", str(path)]) == 2
        line = _one_line(capsys)
        assert "--replay" in line and named in line, line
    assert not path.exists()


def test_a_source_without_a_recording_is_not_a_fetch_failure(tmp_path):
    """Replayed sources whose files are not in the folder are reported failed by the cycle, but no
    fetch attempt is recorded for them: they never count towards `source_failing`."""
    replay = tmp_path / "replay"
    shutil.copytree(REPLAY / "swebench", replay / "swebench")
    path = tmp_path / "bw.duckdb"
    outcomes = {o.source: o for o in collect(open_store(path), ["swebench", "bfcl"], replay_dir=replay)}
    assert outcomes["swebench"].status == "new"
    assert outcomes["bfcl"].status == "failed" and "no recorded response" in outcomes["bfcl"].detail
    con = duckdb.connect(str(path), read_only=True)
    try:
        assert con.execute("SELECT DISTINCT source FROM fetches").fetchall() == [("swebench",)]
    finally:
        con.close()


def test_an_unexpected_exception_is_one_line_with_the_place_and_exit_70(tmp_path, capsys, monkeypatch):
    from storage import status as status_store
    path = tmp_path / "bw.duckdb"
    with storage_db.connect(str(path)):
        pass

    def broken(con):
        return {}["no such key"]
    monkeypatch.setattr(status_store, "source_status", broken)
    assert main(["status", "--db", str(path)]) == EXIT_BUG
    line = _one_line(capsys)
    assert line.startswith("benchwatch status: unexpected KeyError in commands/status.py:")
    assert line.endswith("(a bug; run with -v for the traceback)")
    assert main(["-v", "status", "--db", str(path)]) == EXIT_BUG
    assert "Traceback" in capsys.readouterr().err


def test_a_reader_that_goes_away_is_not_a_bug(tmp_path):
    """`benchwatch status | head -1`: the pipe closes under us; no "unexpected BrokenPipeError … (a
    bug)", exit 141 as a process killed by SIGPIPE."""
    import subprocess
    import sys
    path = tmp_path / "bw.duckdb"
    with storage_db.connect(path):                          # a migrated, empty file
        pass
    proc = subprocess.Popen([sys.executable, "-m", "cli", "query", "--db", str(path), "--format", "csv",
                             "SELECT range AS i FROM range(200000)"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    proc.stdout.readline()
    proc.stdout.close()                                     # the reader went away after one line
    err = proc.stderr.read().decode() if proc.stderr else ""
    assert proc.wait(timeout=60) == 141, err
    assert "BrokenPipe" not in err and "a bug" not in err, err


# --- the same on a DuckLake store (issue 24, item 8) ------------------------------------------------
# Every command that takes --db, on a PostgreSQL database that holds no store yet, an empty
# (migrated) store and one with every source; `migrate` (its target is the lake: test_ducklake.py)
# and `serve` (needs a Prefect server) aside. Each state is built once as a PostgreSQL template
# database and copied per command (CREATE DATABASE … TEMPLATE: the Parquet files are shared and
# never rewritten). Slow: each command loads the DuckLake extensions and attaches the catalog.

LAKE_STATES = ["no_store", "empty", "all"]
LAKE_COMMANDS = {
    **COMMANDS,
    "silence-list": ["silence", "list"],
    "silence-add": ["silence", "add", "--match", "benchmark=mmlu", "--for", "1d", "--comment", "matrix"],
    "silence-expire": ["silence", "expire", "1"],
    "ingest-csv": ["ingest", "csv", str(ROOT / "tests" / "fixtures" / "csv" / "scores_proportion.csv")],
    "ingest-swebench": ["ingest", "swebench", str(REPLAY / "swebench" / "leaderboards.json"),
                        "--observed-at", "2026-01-01"],
    "backfill": ["backfill", "{backfill}"],
    "reparse": ["reparse"],
    "accept": ["accept", "999999"],
    "report-html": ["report", "--format", "html", "--out", "{tmp}/report.html"],
    "run": ["run", "--no-prefect", "--replay", str(REPLAY), "--sources", "swebench,aider_polyglot"],
}


@pytest.fixture(scope="module")
def lake_templates(tmp_path_factory, lake_pg):
    from storage import lake
    server = lake_pg                     # the session's PostgreSQL (tests/conftest.py)
    data = tmp_path_factory.mktemp("lake-data")
    cache: dict[str, str] = {}
    previous = os.environ.get(lake.DATA_PATH_ENV)
    os.environ[lake.DATA_PATH_ENV] = str(data)

    def get(state: str) -> tuple[object, str]:
        if state not in cache:
            name = f"tmpl_{state}"
            url = "ducklake:postgres:" + server.create_database(name)
            if state == "empty":
                with storage_db.connect(url):
                    pass
            elif state == "all":
                outcomes = collect(open_store(url), list(scrapers.enabled_sources()), replay_dir=str(REPLAY))
                assert all(o.status == "new" for o in outcomes), [o.line() for o in outcomes]
            cache[state] = name
        return server, cache[state]
    try:
        yield get
    finally:
        if previous is None:
            os.environ.pop(lake.DATA_PATH_ENV, None)
        else:
            os.environ[lake.DATA_PATH_ENV] = previous


def _backfill_dir(root: Path) -> Path:
    folder = root / "archive" / "swebench"
    folder.mkdir(parents=True)
    shutil.copy(REPLAY / "swebench" / "leaderboards.json", folder / "swebench_2026-01-02.json")
    return root / "archive"


@pytest.mark.xdist_group("servers")   # starts PostgreSQL
@pytest.mark.slow
@pytest.mark.parametrize("command", list(LAKE_COMMANDS))
@pytest.mark.parametrize("state", LAKE_STATES)
def test_every_command_survives_each_state_of_a_lake(lake_templates, tmp_path, capsys, state, command):
    server, template = lake_templates(state)
    name = f"m_{state}_{command.replace('-', '_')}"
    server.psql(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    url = "ducklake:postgres:" + server.conninfo(name)
    argv = [a.format(tmp=tmp_path, backfill=_backfill_dir(tmp_path) if "{backfill}" in a else "")
            for a in LAKE_COMMANDS[command]]
    code = main([*argv, "--db", url])
    out = capsys.readouterr()
    _check(code, out.out, out.err, f"lake:{state}", command)
    if command in ("ingest-csv", "ingest-swebench", "run", "backfill"):
        assert code == 0, f"{command} on lake:{state}: {out.err}"   # the commands that store work on a lake

"""`benchwatch query`: read-only (EXPLAIN ANALYZE refused, configuration locked), bounded in time
and memory, interruptible, and inert output (issue 11, defects 5, 6 and 9)."""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from cli.main import main
from cli.commands.query import inert_csv, inert_text
from storage.db import StorageError
from storage.query import (QueryCutOff, ReadOnlyViolation, check_read_only, parse_memory_limit, run_query)

ROOT = Path(__file__).resolve().parent.parent
# ~10^10 pair checks: minutes for DuckDB, so only a limit or an interrupt ends it in a test
SLOW_SQL = "SELECT count(*) FROM t a, t b WHERE (a.a * 7 + b.a) % 1000003 = 5"


@pytest.fixture
def db(tmp_path) -> str:
    path = str(tmp_path / "q.duckdb")
    con = duckdb.connect(path)
    con.execute("CREATE TABLE t AS SELECT range AS a FROM range(100000)")
    con.execute("CREATE TABLE names (name VARCHAR)")
    con.executemany("INSERT INTO names VALUES (?)", [["=HYPERLINK(\"http://evil.example\",\"x\")"],
                                                      ["\x1b]0;pwned\x07\x1b[31mred"], ["-1"], ["plain"]])
    con.close()
    return path


@pytest.mark.parametrize("sql", [
    "EXPLAIN ANALYZE SELECT 1",
    "/* hi */ explain analyse select 1",
    "EXPLAIN (ANALYZE) SELECT 1",
    "EXPLAIN (FORMAT json, ANALYZE true) SELECT 1",
    "EXPLAIN -- comment\n ANALYZE SET memory_limit = '10GB'",
    "EXPLAIN ANALYZE CREATE TEMP TABLE x AS SELECT 1",
    "EXPLAIN ANALYZE CHECKPOINT",
    "EXPLAIN ANALYZE COPY (SELECT 1) TO 'out.csv'",
    "EXPLAIN SET memory_limit = '10GB'",
    "SELECT 1; EXPLAIN ANALYZE CALL checkpoint()",
    "SET memory_limit = '10GB'", "CREATE TEMP TABLE x AS SELECT 1", "CHECKPOINT", "CALL checkpoint()",
    "COPY t TO 'x.csv'", "PRAGMA enable_profiling", "ATTACH 'other.duckdb'",
])
def test_statements_that_run_or_change_something_are_refused(sql):
    with pytest.raises(ReadOnlyViolation):
        check_read_only(sql)


@pytest.mark.parametrize("sql", ["SELECT 1", "EXPLAIN SELECT 1", "EXPLAIN (FORMAT json) SELECT 1", "FROM t",
                                 "SUMMARIZE t", "DESCRIBE t", "WITH x AS (SELECT 1) SELECT * FROM x"])
def test_reading_statements_pass_the_filter(sql):
    check_read_only(sql)


def test_explain_analyze_changes_nothing_end_to_end(db, tmp_path):
    """Before the fix EXPLAIN ANALYZE ran its statement: a CREATE TEMP, a SET … went through."""
    with pytest.raises(ReadOnlyViolation):
        run_query("EXPLAIN ANALYZE COPY (SELECT 1) TO '" + str(tmp_path / "leak.csv") + "'", db)
    assert not (tmp_path / "leak.csv").exists()


def test_the_configuration_is_locked_and_nothing_spills(db):
    """Even a statement that slipped past the filter could not lift a limit: lock_configuration."""
    from storage.db import open_connection
    con = open_connection(db, read_only=True, sandboxed=True, memory_limit="300MB", threads=1)
    try:
        assert con.execute("SELECT current_setting('temp_directory')").fetchone()[0] == ""
        assert con.execute("SELECT current_setting('threads')").fetchone()[0] == 1
        for sql in ("SET memory_limit = '10GB'", "RESET memory_limit", "SET lock_configuration = false",
                    "SET enable_external_access = true", "SET temp_directory = '/tmp'"):
            with pytest.raises(duckdb.Error, match="lock|configuration"):
                con.execute(sql)
    finally:
        con.close()


def test_a_runaway_query_is_cut_off_at_the_timeout(db):
    started = time.monotonic()
    with pytest.raises(QueryCutOff, match="cut off after 1 s"):
        run_query(SLOW_SQL, db, timeout=1, threads=1)
    assert time.monotonic() - started < 8
    # the file is free again: a writer gets it at once
    duckdb.connect(db).close()


def test_a_query_over_its_memory_limit_is_cut_off_with_the_limit_named(db):
    sql = "SELECT list(a::VARCHAR || repeat('x', 1000)) FROM (SELECT a.a FROM t a, range(100) b)"
    with pytest.raises(QueryCutOff, match="more memory than the 50MB limit"):
        run_query(sql, db, memory_limit="50MB", threads=1)
    assert not Path(db + ".tmp").exists()        # nothing spilled next to the database


def test_memory_limits_are_validated():
    assert parse_memory_limit("512mb") == "512MB" and parse_memory_limit("2 GiB") == "2GiB"
    for bad in ("", "lots", "-1GB", "0MB", "1PB"):
        with pytest.raises(ValueError):
            parse_memory_limit(bad)


def test_sql_errors_are_one_line(db):
    with pytest.raises(StorageError, match="^query failed: Catalog Error") as err:
        run_query("SELECT * FROM nope", db)
    assert "\n" not in str(err.value)


@pytest.mark.slow   # a fault test: a long join in a subprocess, then SIGINT
def test_ctrl_c_interrupts_a_long_join_at_once(db):
    """SIGINT to `benchwatch query`: one line, exit 130, within a second or two (was 15–30 s)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "cli.main", "query", "--db", db, "--threads", "1", SLOW_SQL],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(6)                                 # imports (~3 s) and the query under way
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert time.monotonic() - sent < 5
    assert proc.returncode == 130, err
    assert err.strip().splitlines() == ["benchwatch: query interrupted (Ctrl-C)"]


def _query(capsys, db, sql, fmt):
    code = main(["query", "--db", db, "--format", fmt, sql])
    return code, capsys.readouterr()


def test_table_and_csv_output_are_inert_and_json_exact(db, capsys):
    code, out = _query(capsys, db, "SELECT name FROM names", "table")
    assert code == 0
    assert "\x1b" not in out.out and "\x07" not in out.out and "\\x1b]0;pwned\\x07\\x1b[31mred" in out.out
    code, out = _query(capsys, db, "SELECT name FROM names", "csv")
    rows = out.out.splitlines()
    assert code == 0 and "\x1b" not in out.out
    assert rows[1].startswith("\"'=HYPERLINK(")          # a spreadsheet shows it as text
    assert rows[3] == "-1"                                # a plain number is not touched
    code, out = _query(capsys, db, "SELECT name FROM names", "json")
    assert [r["name"] for r in json.loads(out.out)][:2] == ["=HYPERLINK(\"http://evil.example\",\"x\")",
                                                             "\x1b]0;pwned\x07\x1b[31mred"]


def test_column_names_are_neutralised_too(db, capsys):
    code, out = _query(capsys, db, "SELECT 1 AS \"=cmd\x1b[2J\"", "csv")
    assert code == 0 and out.out.splitlines()[0] == "'=cmd\\x1b[2J"


def test_cell_helpers():
    assert inert_text("a\x9bb") == "a\\x9bb" and inert_text(3) == 3
    assert inert_csv("+cmd") == "'+cmd" and inert_csv("@SUM(1)") == "'@SUM(1)" and inert_csv("-2.5e3") == "-2.5e3"


def test_query_options_are_checked_as_usage_errors(db):
    for bad in (["--timeout", "0"], ["--timeout", "x"], ["--memory", "huge"], ["--threads", "0"]):
        with pytest.raises(SystemExit) as exit_:
            main(["query", "--db", db, *bad, "SELECT 1"])
        assert exit_.value.code == 2


def test_query_waits_for_a_writer_and_says_so(db, capsys, monkeypatch):
    """Kept from before: a query during a write waits for the lock instead of failing.

    The writer holds the file until its stdin closes, which the query's first wait does: the
    query has met the lock, said so, and waits (no fixed sleep of the writer to outlast)."""
    from types import SimpleNamespace

    from storage import db as storage_db

    holder = subprocess.Popen([sys.executable, "-c",
                               "import duckdb, sys; c = duckdb.connect(%r); c.execute('SELECT 1'); "
                               "print('held', flush=True); sys.stdin.read()" % db],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"

    def release_then_sleep(seconds: float) -> None:
        if not holder.stdin.closed:
            holder.stdin.close()
        time.sleep(seconds)

    monkeypatch.setattr(storage_db, "time", SimpleNamespace(monotonic=time.monotonic, sleep=release_then_sleep))
    try:
        code = main(["query", "--db", db, "--wait", "30", "SELECT count(*) AS n FROM t"])
    finally:
        if not holder.stdin.closed:
            holder.stdin.close()
        holder.wait(10)
    out = capsys.readouterr()
    assert code == 0 and "100000" in out.out
    assert "is locked by another process; waiting up to 30 s" in out.err


def test_namespace_defaults_are_sane():
    from cli.main import build_parser
    args = build_parser().parse_args(["query", "SELECT 1"])
    assert isinstance(args, argparse.Namespace)
    assert (args.timeout, args.memory, args.threads) == (60.0, "1GB", 2)


def test_ctrl_c_before_the_statement_starts_still_stops_it(db):
    """A Ctrl-C that lands before the worker's statement has begun (DuckDB ignores an interrupt
    with nothing running) must still stop the query once it starts, not leave it running."""
    import _thread
    import threading
    seen: list[str] = []

    def late_fetch(con, statement):
        time.sleep(0.5)                            # the interrupt arrives in this gap
        try:
            return con.execute(SLOW_SQL).fetchall()
        except duckdb.InterruptException:
            seen.append("interrupted")
            raise

    threading.Timer(0.1, _thread.interrupt_main).start()
    with pytest.raises(QueryCutOff) as cut:
        run_query("SELECT 1", db, fetch=late_fetch, threads=1)
    assert cut.value.interrupted
    assert seen == ["interrupted"]                 # the statement itself was stopped, not abandoned

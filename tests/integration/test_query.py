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
from helpers import copy_db, lane, stratified
from storage.store import open_store

pytestmark = pytest.mark.xdist_group("test_query")   # its module fixture is built once

ROOT = Path(__file__).resolve().parents[2]
# ~10^10 pair checks: minutes for DuckDB, so only a limit or an interrupt ends it in a test
SLOW_SQL = "SELECT count(*) FROM t a, t b WHERE (a.a * 7 + b.a) % 1000003 = 5"


@pytest.fixture(scope="module")
def _db_template(tmp_path_factory) -> Path:
    path = str(tmp_path_factory.mktemp("query") / "q.duckdb")
    con = duckdb.connect(path)
    con.execute("CREATE TABLE t AS SELECT range AS a FROM range(100000)")
    con.execute("CREATE TABLE names (name VARCHAR)")
    con.executemany("INSERT INTO names VALUES (?)", [["=HYPERLINK(\"http://evil.example\",\"x\")"],
                                                      ["\x1b]0;pwned\x07\x1b[31mred"], ["-1"], ["plain"]])
    con.close()
    return Path(path)


@pytest.fixture
def db(_db_template, tmp_path) -> str:
    """A private copy of the module's database (a copy is cheaper than building it)."""
    return str(copy_db(_db_template, tmp_path / "q.duckdb"))


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
        run_query("EXPLAIN ANALYZE COPY (SELECT 1) TO '" + str(tmp_path / "leak.csv") + "'", open_store(db))
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
    with pytest.raises(QueryCutOff, match=r"cut off after 0\.25 s"):      # a quarter second of CPU, not one
        run_query(SLOW_SQL, open_store(db), timeout=0.25, threads=1)
    assert time.monotonic() - started < 8
    # the file is free again: a writer gets it at once
    duckdb.connect(db).close()


def test_a_query_over_its_memory_limit_is_cut_off_with_the_limit_named(db):
    sql = "SELECT list(a::VARCHAR || repeat('x', 1000)) FROM (SELECT a.a FROM t a, range(100) b)"
    with pytest.raises(QueryCutOff, match="more memory than the 50MB limit"):
        run_query(sql, open_store(db), memory_limit="50MB", threads=1)
    assert not Path(db + ".tmp").exists()        # nothing spilled next to the database


def test_memory_limits_are_validated():
    assert parse_memory_limit("512mb") == "512MB" and parse_memory_limit("2 GiB") == "2GiB"
    for bad in ("", "lots", "-1GB", "0MB", "1PB"):
        with pytest.raises(ValueError):
            parse_memory_limit(bad)


def test_sql_errors_keep_duckdbs_hints_after_a_one_line_summary(db, capsys):
    """Issue 25: "Candidate bindings" and "Did you mean" are DuckDB's answer to the mistake."""
    with pytest.raises(StorageError, match="^query failed: Catalog Error") as err:
        run_query("SELECT * FROM name", open_store(db))
    assert 'Did you mean "names"' in str(err.value)
    assert main(["query", "--db", db, "SELECT nam FROM names"]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("benchwatch: query failed: Binder Error: ") and 'nam' in lines[0]
    assert any(line.startswith("Candidate bindings:") and '"name"' in line for line in lines[1:])
    assert any(line.startswith("LINE 1: SELECT nam FROM names") for line in lines)
    assert main(["query", "--db", db, "SELEC 1"]) == 1
    err_lines = capsys.readouterr().err.splitlines()
    assert err_lines[0].startswith("benchwatch: cannot parse SQL: Parser Error") and "LINE 1: SELEC 1" in err_lines


def test_null_is_an_empty_cell_and_json_columns_are_nested(db, capsys):
    sql = ("SELECT 1.5::DOUBLE AS x, NULL::DOUBLE AS d, NULL::VARCHAR AS v, NULL::INTEGER AS i, NULL::TIMESTAMPTZ AS t, "
           "'{\"why\": [1, null], \"n\": 2}'::JSON AS evidence, 'x' AS tail")
    code, out = _query(capsys, db, sql, "table")
    assert code == 0 and "NaN" not in out.out and "None" not in out.out and "<NA>" not in out.out and "NaT" not in out.out
    header, row = out.out.splitlines()
    assert header.split() == ["x", "d", "v", "i", "t", "evidence", "tail"] and row.split()[0] == "1.5"
    code, out = _query(capsys, db, sql, "csv")
    assert out.out.splitlines()[1] == '1.5,,,,,"{""why"": [1, null], ""n"": 2}",x'
    code, out = _query(capsys, db, sql, "json")
    record = json.loads(out.out)[0]
    assert record["evidence"] == {"why": [1, None], "n": 2}          # an object, not a JSON string
    assert record["d"] is None and record["v"] is None and record["tail"] == "x"
    code, out = _query(capsys, db, "SELECT 'not json' AS evidence", "json")
    assert json.loads(out.out) == [{"evidence": "not json"}]          # text stays text


@pytest.mark.slow   # a fault test: a long join in a subprocess, then SIGINT
def test_ctrl_c_interrupts_a_long_join_at_once(db):
    """SIGINT to `benchwatch query`: one line, exit 130, within a second or two (was 15–30 s)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "cli.main", "query", "--db", db, "--threads", "1", SLOW_SQL],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(6)                                 # imports and the query under way
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
    import signal
    import threading
    seen: list[str] = []

    def late_fetch(con, statement):
        # the interrupt arrives in this gap (timed from here, not from the start: on a loaded
        # machine opening the file may take longer than 0.1 s, and Ctrl-C during the open is
        # another case)
        threading.Timer(0.1, os.kill, (os.getpid(), signal.SIGINT)).start()
        time.sleep(0.5)
        try:
            return con.execute(SLOW_SQL).fetchall()
        except duckdb.InterruptException:
            seen.append("interrupted")
            raise

    with pytest.raises(QueryCutOff) as cut:
        run_query("SELECT 1", open_store(db), fetch=late_fetch, threads=1)
    assert cut.value.interrupted
    assert seen == ["interrupted"]                 # the statement itself was stopped, not abandoned


# --- the result is bounded too (issue 24, item 4) ----------------------------------------------------

def _run_measured(tmp_path, *args: str) -> tuple[int, str, str, int]:
    """(exit code, stdout, stderr, peak RSS in MB) of `benchwatch query ARGS` in a process of its own."""
    out, err = tmp_path / "out.txt", tmp_path / "err.txt"
    probe = ("import resource, subprocess, sys; "
             "code = subprocess.call(sys.argv[3:], stdout=open(sys.argv[1], 'w'), stderr=open(sys.argv[2], 'w')); "
             "print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", probe, str(out), str(err), sys.executable, "-m", "cli.main",
                           "query", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    code, peak = map(int, done.stdout.split())
    return code, out.read_text()[:5000], err.read_text(), peak


def test_a_huge_value_is_cut_off_within_the_memory_limit(db, tmp_path):
    """Before: `query --memory 100MB "select repeat('a',2000000000)"` took 9.9 GB and exited 0: DuckDB's
    memory_limit does not cover a value, nor the result copied into Python."""
    code, out, err, peak = _run_measured(tmp_path, "--db", db, "--memory", "50MB",
                                         "SELECT repeat('a', 400000000) AS x")
    assert code == 1 and out == "", err
    assert err.strip().splitlines() == ["benchwatch: query needs more memory than the 50MB limit (--memory); "
                                        "narrow it or raise the limit"]
    assert peak < 400, f"peak RSS {peak} MB"


def test_a_long_result_is_streamed_not_fetched_whole(db, tmp_path):
    """Before: `select range, … from range(300000000)` took 15.7 GB to print 200 rows."""
    code, out, err, peak = _run_measured(tmp_path, "--db", db, "--max-rows", "5",
                                         "SELECT range, range / 3 AS third FROM range(20000000)")
    assert code == 0, err
    assert len(out.strip().splitlines()) == 6 and out.splitlines()[1].split()[0] == "0"   # header + 5 rows
    assert err.strip() == "benchwatch: more than 5 rows: the first 5 shown (--max-rows)"
    assert peak < 300, f"peak RSS {peak} MB"


@pytest.mark.parametrize("fmt", ["csv", "json", "table"])
def test_a_result_larger_than_the_memory_limit_is_cut_with_a_line(db, capsys, fmt):
    sql = "SELECT range, repeat('x', 2000) || range AS pad, range / 7 AS f FROM range(200000)"
    code = main(["query", "--db", db, "--format", fmt, "--memory", "20MB", "--max-rows", "3000000", sql])
    out = capsys.readouterr()
    assert code == 1
    assert out.err.strip().splitlines()[-1].startswith("benchwatch: result cut off: larger than the 20MB limit")
    if fmt != "table":                                  # an export is never half written
        assert out.out == ""
    assert len(out.out) < 40_000_000


def test_fetch_bounded_keeps_types_and_stops_early(db):
    from storage.query import fetch_bounded
    con = duckdb.connect(db, read_only=True)
    try:
        got = fetch_bounded(con.execute("SELECT range AS a, range / 2 AS b FROM range(100000)"), max_rows=10,
                            max_bytes=10**9)
        assert got.more_rows and not got.over_bytes and got.frame["a"].tolist() == list(range(10))
        assert got.rows_read <= 2048
        whole = fetch_bounded(con.execute("SELECT range AS a FROM range(5000)"), max_rows=None, max_bytes=10**9)
        assert not whole.more_rows and whole.frame["a"].tolist() == list(range(5000))
        empty = fetch_bounded(con.execute("SELECT 1 AS a WHERE false"), max_rows=5, max_bytes=10)
        assert list(empty.frame.columns) == ["a"] and len(empty.frame) == 0
    finally:
        con.close()


# --- SIGTERM (issue 24, item 7) ------------------------------------------------------------------------

def _threads(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return 0


def _query_then_sigterm(db: str, delay: float, *, running: bool = False) -> tuple[int, str]:
    """SIGTERM `delay` s after start, or (`running`) `delay` s after DuckDB's threads run the query."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONFAULTHANDLER": "1"}   # SIGABRT prints every thread's stack
    proc = subprocess.Popen([sys.executable, "-m", "cli.main", "query", "--db", db, "--threads", "2", SLOW_SQL],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if running:     # the query's worker and DuckDB's second thread beside the main thread
        deadline = time.monotonic() + 30
        while _threads(proc.pid) < 3 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
    time.sleep(delay)
    sent = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    try:
        out, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:   # say where it hangs: the threads' stacks, from faulthandler
        proc.send_signal(signal.SIGABRT)
        out, err = proc.communicate(timeout=30)
        pytest.fail(f"still running 30 s after SIGTERM ({delay:g} s after the start); stacks:\n{err[-8000:]}")
    assert time.monotonic() - sent < 5
    return proc.returncode, err


@pytest.mark.parametrize("delay", lane([0.3, 0.6, 0.9], (0.6,)))   # a process and a real wait each
def test_sigterm_during_a_query_exits_143(db, delay):
    """Before: SIGTERM while DuckDB ran the query ended in SIGABRT ("terminate called without an
    active exception"): the process exited with the statement still running in its thread."""
    code, err = _query_then_sigterm(db, delay, running=True)
    assert code == 143, err
    assert err.strip().splitlines() == ["benchwatch query: terminated (SIGTERM)"]


@pytest.mark.slow   # 10 processes (the fast lane keeps test_sigterm_during_a_query_exits_143)
def test_sigterm_at_random_points_of_a_query_exits_143(db):
    """SIGTERM at seeded random moments from 0.2 s to 5 s after the start, one in each tenth of
    that window on a log scale (`stratified`): the start-up, the open, the allow-list check and
    the query's first seconds each get signals; the running query itself is also the subject of
    test_sigterm_during_a_query_exits_143 (20 independent uniform draws spent half on it)."""
    import random
    rng = random.Random(24)
    codes = []
    for delay in stratified(rng, 10, 0.2, 5.0, log=True):
        code, err = _query_then_sigterm(db, delay)
        # before the handler is installed (interpreter start-up) the default action ends it: -15
        assert code in (143, -signal.SIGTERM), (code, err)
        assert "terminate called" not in err and "Traceback" not in err
        codes.append(code)
    assert codes.count(143) >= 5


def test_a_duckdb_file_benchwatch_did_not_write_is_queried_as_it_is(db, capsys):
    """`query` brings an older benchwatch file current first (its views and comments); a DuckDB
    file without benchwatch's schema is someone else's: read, never migrated (before: the whole
    schema was written into it, and a SIGTERM could land in that write)."""
    before = Path(db).stat().st_mtime_ns, Path(db).stat().st_size
    assert main(["query", "--db", db, "SELECT count(*) AS n FROM t"]) == 0
    assert "100000" in capsys.readouterr().out
    assert (Path(db).stat().st_mtime_ns, Path(db).stat().st_size) == before
    with duckdb.connect(db, read_only=True) as con:
        assert [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() ORDER BY 1").fetchall()] == ["names", "t"]


# --- the allow-list (issue 55, items 1 and 6): what a query may call, on DuckDB's parse tree ---------

NESTED_AND_BEYOND = [
    # nested execution: SQL the statement filter never sees
    "SELECT * FROM json_execute_serialized_sql(json_serialize_sql('SELECT 42'))",
    "SELECT * FROM t WHERE a IN (SELECT * FROM json_execute_serialized_sql(json_serialize_sql('SELECT 1')))",
    "SELECT * FROM query('SELECT 42')", "SELECT * FROM query_table('t')",
    "SELECT json_serialize_plan('SELECT 1')", "SELECT list_aggregate([1], 'sum')",
    # what the catalog functions show: paths, settings, secrets (a lake's conninfo and password)
    "SELECT path FROM duckdb_databases()", "SELECT * FROM duckdb_databases", "SELECT * FROM main.duckdb_databases",
    "SELECT * FROM system.main.duckdb_databases", "SHOW databases", "SELECT * FROM pragma_database_list",
    "SELECT * FROM duckdb_settings()", "SELECT * FROM pg_settings", "SELECT * FROM pg_catalog.pg_settings",
    "SELECT * FROM duckdb_secrets()", "SELECT * FROM which_secret('s3://x', 's3')", "SELECT * FROM duckdb_extensions()",
    "SELECT current_setting('memory_limit')", "SELECT getvariable('x')",
    "DESCRIBE SELECT * FROM duckdb_settings()",
    "WITH duckdb_databases AS (SELECT 1) SELECT * FROM duckdb_databases",
    "SELECT * FROM (WITH x AS (SELECT 1) SELECT * FROM x), duckdb_databases",
    # files and state
    "SELECT * FROM read_csv('/etc/passwd')", "SELECT * FROM '/etc/passwd'", "SELECT * FROM 'x.parquet'",
    "SELECT * FROM glob('/*')", "SELECT * FROM read_text('/etc/hostname')", "SELECT nextval('s')",
    "SELECT * FROM other.main.t", "SELECT setseed(0.5)", "SELECT * FROM summary(t)",
]


@pytest.mark.parametrize("sql", NESTED_AND_BEYOND)
def test_what_the_allow_list_does_not_name_is_refused(db, sql):
    """Before: only statement types were checked on a DuckDB file, so SQL text run by
    json_execute_serialized_sql or query() (never seen by the filter) and duckdb_databases() /
    duckdb_settings() (a lake's conninfo) went through."""
    with pytest.raises(ReadOnlyViolation, match="^refused: "):
        run_query(sql, open_store(db))


def test_nested_execution_is_refused_end_to_end_in_one_line(db, capsys):
    assert main(["query", "--db", db, "--format", "csv",
                 "SELECT * FROM json_execute_serialized_sql(json_serialize_sql('SELECT 4242 AS x'))"]) == 1
    out = capsys.readouterr()
    assert "4242" not in out.out
    assert len(out.err.strip().splitlines()) == 1 and "json_execute_serialized_sql() is not allowed" in out.err


@pytest.mark.parametrize("sql", [
    "SELECT 1", "FROM t", "DESCRIBE t", "SUMMARIZE t", "SHOW TABLES", "SHOW ALL TABLES", "EXPLAIN SELECT * FROM t",
    "WITH x AS (SELECT a FROM t) SELECT count(*), avg(a), stddev_samp(a), median(a), quantile_cont(a, 0.9) FROM x",
    "SELECT a, row_number() OVER (ORDER BY a DESC), lag(a) OVER w, sum(a) OVER w FROM t "
    "WINDOW w AS (ORDER BY a) QUALIFY a < 3",
    "SELECT date_trunc('month', DATE '2025-03-04'), strftime(now(), '%Y'), year(current_date), "
    "upper(name), regexp_replace(name, 'a', 'b'), round(10 / 3, 2), 1.5::DECIMAL(10, 2), coalesce(name, ''), "
    "name ILIKE '%p%', length(name), '{\"k\": 1}'::JSON ->> 'k', [1, 2][1], {'a': 1}.a, list_sum([1, 2]) FROM names",
    "SELECT column_name, comment FROM duckdb_columns() WHERE table_name = 'names'",
    "SELECT table_name FROM information_schema.tables", "SELECT * FROM range(3) r(i) JOIN t ON t.a = r.i",
    "SELECT * FROM t a JOIN t b USING (a) LEFT JOIN t c ON c.a = a.a WHERE a.a < 2",
    "SELECT a FROM t WHERE a < 2 UNION ALL SELECT a FROM t WHERE a IN (SELECT a FROM t WHERE a < 1)",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r",
    "SELECT * FROM main.t LIMIT 1", "SELECT * FROM q.main.t LIMIT 1", "SELECT * FROM (VALUES (1), (2)) v(x)",
    "SELECT unnest([1, 2]) AS x, generate_series(1, 3) AS s", "SELECT * FROM unnest([1, 2]) u(x)",
    "SELECT CASE WHEN a BETWEEN 1 AND 2 THEN 'x' END, a::VARCHAR, TRY_CAST('1' AS INTEGER) FROM t LIMIT 3",
])
def test_reasonable_queries_pass_the_allow_list_and_run(db, sql):
    run_query(sql, open_store(db))


def _documented_queries() -> list[str]:
    """Every SQL block of the README (the questions a user asks the store) and every
    `benchwatch query "…"` example of the README and the docs."""
    import re
    readme = (ROOT / "README.md").read_text()
    texts = [readme] + [p.read_text() for p in sorted((ROOT / "docs").glob("*.md"))]
    found = re.findall(r"```sql\n(.*?)```", readme, re.DOTALL)
    for text in texts:
        found += [q for q in re.findall(r'benchwatch query (?:--\S+ \S+ )*"([^"]+)"', text) if q not in ("SQL",)]
    return found


def test_the_views_and_the_documented_queries_pass_the_allow_list(synced_db):
    """The allow-list names what real questions use: each view's own SELECT (CTEs, window
    functions, QUALIFY, joins) and every query the README and docs show."""
    import re
    from storage.db import open_connection
    from storage.query import check_allowed
    con = open_connection(synced_db, read_only=True, sandboxed=True)
    try:
        bodies = [re.sub(r"(?is)^\s*CREATE\s+VIEW\s+\S+\s+AS\s+", "", sql) for (sql,) in con.execute(
            "SELECT sql FROM duckdb_views() WHERE NOT internal AND database_name = current_database()").fetchall()]
        documented = _documented_queries()
        assert len(bodies) >= 15 and len(documented) >= 10     # the check below checks something
        for sql in bodies + documented:
            check_allowed(con, check_read_only(sql, con))
    finally:
        con.close()

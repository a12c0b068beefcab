"""DuckLake on PostgreSQL (storage/lake.py): same tables as a file, concurrent writers, readers
that never wait, `benchwatch migrate --to`.

The PostgreSQL server comes from the machine's binaries (tests/pg.py); the DuckLake extensions
from the duckdb-extension-* wheels (`benchwatch[ducklake]`) or DuckDB's repository. Without
either, these tests skip with the reason.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from storage import db, lake

import pg
from storage.store import open_store

pytestmark = pytest.mark.xdist_group("servers")   # starts PostgreSQL: one server test at a time

ROOT = Path(__file__).resolve().parents[2]
REPLAY = ROOT / "tests" / "fixtures" / "replay"
NOW = datetime(2026, 11, 1, tzinfo=timezone.utc)
READER_DEADLOCK_TIMEOUT = 120   # seconds; only ends a reader that waits for a writer forever
SOURCES = ["aider_polyglot", "livecodebench", "swebench", "lmarena"]
# Tables the replayed cycle fills (the comparisons below count every table of the store).
HISTORY_TABLES = ["snapshots", "scores", "item_results", "model_dates", "blobs", "fetches",
                  "saturation", "saturation_trajectory", "frontier", "trends", "contamination_runs",
                  "alerts", "alert_events", "analysis_inputs"]


# --- no server needed ----------------------------------------------------------------------------

def _schema(con: duckdb.DuckDBPyConnection) -> dict[str, list[tuple[str, str]]]:
    rows = con.execute("""SELECT table_name, column_name, data_type FROM information_schema.columns
                          WHERE table_schema = 'main' ORDER BY table_name, ordinal_position""").fetchall()
    out: dict[str, list[tuple[str, str]]] = {}
    for table, column, kind in rows:
        out.setdefault(table, []).append((column, kind))
    return out


def test_translated_migrations_give_the_same_tables_without_keys_or_sequences():
    """Every migration, translated for DuckLake, builds the same tables, columns, types and views
    as the original — and nothing DuckLake refuses (keys, UNIQUE, sequences, nextval defaults)."""
    plain, translated = duckdb.connect(), duckdb.connect()
    for con, ddl in ((plain, lambda s: s), (translated, lake.translate_ddl)):
        for _, _, sql in db.migrations():
            con.execute(ddl(sql))
    assert _schema(translated) == _schema(plain)
    kinds = {r[0] for r in translated.execute("SELECT constraint_type FROM duckdb_constraints()").fetchall()}
    assert not kinds & {"PRIMARY KEY", "UNIQUE"}, kinds
    assert translated.execute("SELECT count(*) FROM duckdb_sequences()").fetchone()[0] == 0
    assert plain.execute("SELECT count(*) FROM duckdb_sequences()").fetchone()[0] > 0   # the check can fail
    defaults = translated.execute("SELECT count(*) FROM duckdb_columns() WHERE column_default ILIKE '%nextval%'")
    assert defaults.fetchone()[0] == 0


def test_sequence_ids_are_the_migrations_nextval_defaults():
    """storage.db.sequence_ids() (read from the migrations; where next_ids allocates on a lake) lists exactly the columns a
    sequence fills on a file, so no table loses its ids on DuckLake."""
    con = duckdb.connect()
    db.migrate(con)
    rows = con.execute("SELECT table_name, column_name, column_default FROM duckdb_columns() "
                       "WHERE column_default ILIKE 'nextval%'").fetchall()
    found = {(t, c, re.search(r"nextval\('([^']+)'", d)[1]) for t, c, d in rows}
    assert found == {(t, c, q) for t, (c, q) in db.sequence_ids().items()}


def test_a_translated_primary_key_column_is_not_null():
    out = lake.translate_ddl("CREATE TABLE t (id BIGINT PRIMARY KEY DEFAULT nextval('s'), k VARCHAR, UNIQUE (k));")
    con = duckdb.connect()
    con.execute(out)
    with pytest.raises(duckdb.ConstraintException):
        con.execute("INSERT INTO t (k) VALUES ('a')")


def test_lake_url_needs_postgres_and_a_data_path(monkeypatch):
    monkeypatch.delenv(lake.DATA_PATH_ENV, raising=False)
    with pytest.raises(lake.LakeError, match="BENCHWATCH_DATA_PATH"):
        lake.parse("ducklake:postgres:dbname=x")
    with pytest.raises(lake.LakeError, match="PostgreSQL"):
        lake.parse("ducklake:metadata.ducklake", "/tmp/x")
    t = lake.parse("ducklake:postgres:dbname=x password=s3cret host=h", "/tmp/d")
    assert t.conninfo == "dbname=x password=s3cret host=h" and t.data_path == "/tmp/d/"
    assert "s3cret" not in t.redacted()


# --- against a real PostgreSQL ------------------------------------------------------------------

@pytest.fixture(scope="module")
def server(lake_pg):
    return lake_pg           # the session's PostgreSQL (tests/conftest.py)


@pytest.fixture
def lake_url(server, tmp_path, monkeypatch, request):
    name = "bw_" + request.node.name.lower().replace("[", "_").replace("]", "")[:40]
    server.create_database(name)
    data = tmp_path / "lake-data"
    monkeypatch.setenv(lake.DATA_PATH_ENV, str(data))
    return "ducklake:postgres:" + server.conninfo(name)


def _cycle(target: str) -> None:
    from jobs.alerts import run_notify
    from jobs.analyze import analyze
    from jobs.collect import collect
    outcomes = collect(open_store(target), SOURCES, replay_dir=REPLAY)
    assert [o.status for o in outcomes] == ["new"] * len(SOURCES), [o.line() for o in outcomes]
    analyze(open_store(target), now=NOW)
    run_notify(open_store(target), now=NOW)


def _counts(target: str) -> dict[str, int]:
    """Rows of every table of the store (schema_migrations aside: its times differ)."""
    with db.connect(target, read_only=True) as con:
        tables = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() "
                                            "WHERE database_name = current_database() AND schema_name = 'main' "
                                            "AND table_name <> 'schema_migrations'").fetchall()]
        return {t: con.execute(f"SELECT count(*) FROM {db.quote_ident(t)}").fetchone()[0] for t in sorted(tables)}


def _table(target: str, sql: str) -> pd.DataFrame:
    with db.connect(target, read_only=True) as con:
        return con.execute(sql).df()


def _frames() -> dict[str, pd.DataFrame]:
    t = pd.Timestamp("2026-11-01", tz="UTC")
    return {
        "meta": pd.DataFrame({"key": ["a", "b"], "value": ["1", "2"]}),
        "blobs": pd.DataFrame({"sha256": ["x", "y"], "size": [1, 2], "compression": "zlib",
                               "content": [b"1", b"2"], "first_seen": [t, t]}),
        "notifications": pd.DataFrame({"fingerprint": ["f", "f", "g"], "kind": "k", "transition": "firing",
                                       "episode": [t, t, t], "payload": "{}", "created_at": [t, t, t]}),
        "fetches": pd.DataFrame({"source": ["s", "s"], "url": "u", "started_at": [t, t], "status": "ok"}),
    }


def _insert_twice(target: str) -> tuple[list[list[tuple]], dict[str, list[tuple]]]:
    """Every insert_frame option, twice (the second time everything conflicts or is replaced)."""
    returned = []
    with db.connect(target) as con:
        # Replacement scans are off on a lake session too: a frame reaches SQL only by registration.
        assert con.execute("SELECT current_setting('python_enable_replacements')").fetchone()[0] is False
        for round_ in range(2):
            f = _frames()
            f["meta"]["value"] = [f"{v}.{round_}" for v in f["meta"]["value"]]
            db.insert_frame(con, "meta", f["meta"], or_replace=["key"])
            db.insert_frame(con, "blobs", f["blobs"], skip_existing="sha256")
            returned.append(db.insert_frame(
                con, "notifications", f["notifications"], ignore_conflicts=["fingerprint", "transition", "episode"],
                columns=["fingerprint", "kind", "transition", "episode", "payload", "created_at"], returning=["id"]))
            db.insert_frame(con, "fetches", f["fetches"])
        rows = {t: con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall()
                for t in ("meta", "blobs", "notifications", "fetches")}
    return returned, rows


@pytest.mark.slow
def test_insert_frame_writes_the_same_rows_on_a_lake_as_on_a_file(lake_store_url, tmp_path):
    """One verb for both stores: upsert on the named key, conflicts skipped (one row per key of
    the frame too), RETURNING ids, sequence ids allocated on the lake."""
    on_file, on_lake = _insert_twice(str(tmp_path / "f.duckdb")), _insert_twice(lake_store_url)
    assert on_lake == on_file
    returned, rows = on_lake
    assert returned == [[(1,), (2,)], []]
    assert [r[1] for r in rows["meta"] if r[0] in ("a", "b")] == ["1.1", "2.1"]
    assert len(rows["blobs"]) == 2 and [r[0] for r in rows["fetches"]] == [1, 2, 3, 4]


# as_of is the replayed fetch's time and run_at the analysis's: they differ between the two runs.
SATURATION_SQL = """SELECT * EXCLUDE (run_at, as_of, level_since) FROM saturation   -- level_since: an as_of
                    ORDER BY benchmark, scope, population, k, alpha, as_of"""


@pytest.mark.slow
def test_collect_analyze_notify_on_a_lake_equals_a_file(lake_url, tmp_path, monkeypatch):
    file_db = str(tmp_path / "one.duckdb")
    _cycle(file_db)
    _cycle(lake_url)
    file_counts, lake_counts = _counts(file_db), _counts(lake_url)
    assert lake_counts == file_counts
    assert file_counts["snapshots"] == len(SOURCES)
    assert [t for t in HISTORY_TABLES if not file_counts[t]] == []
    pd.testing.assert_frame_equal(_table(lake_url, SATURATION_SQL), _table(file_db, SATURATION_SQL))
    latest = "SELECT * FROM latest_scores ORDER BY source, benchmark, model, setting, model_raw"
    pd.testing.assert_frame_equal(_table(lake_url, latest).drop(columns="observed_at"),
                                  _table(file_db, latest).drop(columns="observed_at"))
    # Re-collecting the same content stores nothing new (idempotent by content hash).
    from jobs.collect import collect
    again = collect(open_store(lake_url), SOURCES, replay_dir=REPLAY)
    assert {o.status for o in again} == {"unchanged"}
    assert _counts(lake_url)["snapshots"] == len(SOURCES)
    # benchwatch query reads the lake through the same bounded, read-only path.
    from cli import main as cli
    assert cli.main(["query", "SELECT count(*) AS n FROM snapshots", "--format", "csv", "--db", lake_url]) == 0
    assert cli.main(["query", "DELETE FROM snapshots", "--db", lake_url]) == 1
    assert cli.main(["status", "--db", lake_url]) == 0

    # benchwatch migrate --to copies the file into an empty catalog and verifies counts.
    report_target = _fresh_catalog(lake_url, "copy")
    assert cli.main(["migrate", "--db", file_db, "--to", report_target]) == 0
    copied = _counts(report_target)
    assert copied == file_counts
    blobs = "SELECT sha256, content FROM blobs ORDER BY sha256"
    pd.testing.assert_frame_equal(_table(report_target, blobs), _table(file_db, blobs))
    assert cli.main(["migrate", "--db", file_db, "--to", report_target]) == 1     # refuses to mix histories


def _fresh_catalog(lake_url: str, suffix: str) -> str:
    info = lake.parse(lake_url)
    conninfo = dict(part.split("=", 1) for part in info.conninfo.split())
    name = conninfo["dbname"] + "_" + suffix
    port = int(conninfo["port"])
    pg.PgServer(root=Path("/nonexistent"), port=port).create_database(name)
    conninfo["dbname"] = name
    return "ducklake:postgres:" + " ".join(f"{k}={v}" for k, v in conninfo.items())


DISTINCT = [("aider_polyglot", REPLAY / "aider_polyglot" / "polyglot_leaderboard.yml"),
            ("aider_edit", REPLAY / "aider_edit" / "edit_leaderboard.yml"),
            ("swebench", REPLAY / "swebench" / "leaderboards.json"),
            ("evalplus", REPLAY / "evalplus" / "results.json"),
            ("livecodebench", REPLAY / "livecodebench" / "performances_generation.json")]
SAME = ("bfcl", REPLAY / "bfcl" / "data_overall.csv")
N_SAME = 4
N_VARIANTS = 3
READ_PAUSE = 0.5        # seconds between the reader's reads during the concurrent ingests


def _variants(tmp_path: Path) -> list[tuple[str, Path]]:
    """Distinct contents of one real file: the BFCL table without its i-th data row (a real
    format, a leaderboard that lost a model), so one source gets several snapshots at once."""
    lines = SAME[1].read_bytes().splitlines(keepends=True)
    out = []
    for i in range(N_VARIANTS):
        path = tmp_path / f"variant{i}" / SAME[1].name
        path.parent.mkdir()
        path.write_bytes(b"".join(lines[:1 + i] + lines[2 + i:]))
        out.append(("bfcl", path))
    return out


def _ingest_proc(target: str, source: str, path: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    # --wait: a dozen writers queue for one lock; on a loaded 2-core box the last waited over 60 s
    return subprocess.Popen([sys.executable, "-m", "cli", "ingest", source, str(path), "--db", target, "--wait", "600"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.slow
def test_concurrent_ingests_store_each_snapshot_once_with_no_lost_rows(lake_store_url, tmp_path):
    """Distinct files (several of one source) and N_SAME copies of one file, ingested by as many
    processes at once, against the same files ingested one after another into a DuckDB file."""
    distinct = DISTINCT + _variants(tmp_path)
    file_db = str(tmp_path / "serial.duckdb")
    from jobs.ingest import ingest_file
    for source, path in [*distinct, SAME]:
        ingest_file(open_store(file_db), source, path)
    expected = _counts(file_db)
    lake_url = lake_store_url              # the schema exists before the race (migrations are locked too)
    started = time.monotonic()
    procs = [_ingest_proc(lake_url, s, p) for s, p in distinct] + [_ingest_proc(lake_url, *SAME)
                                                                     for _ in range(N_SAME)]
    # A reader meanwhile: every query answers, from a committed snapshot, without waiting for the writers.
    answers: list[tuple[float, int]] = []
    stop = threading.Event()

    def read_loop() -> None:
        while not stop.is_set():
            t0 = time.monotonic()
            with db.connect(lake_url, read_only=True, wait=0) as con:
                n = con.execute("SELECT count(*) FROM scores").fetchone()[0]
            answers.append((time.monotonic() - t0, n))
            stop.wait(READ_PAUSE)       # each read attaches the catalog: back to back it starved the writers

    reader = threading.Thread(target=read_loop)
    reader.start()
    outs = [p.communicate(timeout=600) for p in procs]
    stop.set()
    reader.join()
    elapsed = time.monotonic() - started
    codes = [p.returncode for p in procs]
    assert codes == [0] * len(procs), [o[1][-1500:] for o, c in zip(outs, codes) if c]
    assert sum("unchanged" in o[0] for o in outs[:len(distinct)]) == 0
    same_lines = [o[0] for o in outs[len(distinct):]]
    assert sum("unchanged" in line for line in same_lines) == N_SAME - 1, same_lines
    got = _counts(lake_url)
    for table in ("snapshots", "scores", "item_results", "model_dates", "reject_rows", "blobs", "fetches"):
        assert got[table] == expected[table], (table, got[table], expected[table])
    with db.connect(lake_url, read_only=True) as con:
        dup_ids = con.execute("SELECT count(*) - count(DISTINCT id) FROM snapshots").fetchone()[0]
        dup_content = con.execute("SELECT count(*) - count(DISTINCT (source, sha256)) FROM snapshots").fetchone()[0]
        dup_scores = con.execute("""SELECT count(*) FROM (SELECT 1 FROM scores
                                     GROUP BY snapshot_id, benchmark_raw, model_raw, setting HAVING count(*) > 1)""").fetchone()[0]
        orphans = con.execute("SELECT count(*) FROM scores WHERE snapshot_id NOT IN (SELECT id FROM snapshots)").fetchone()[0]
    assert (dup_ids, dup_content, dup_scores, orphans) == (0, 0, 0, 0)
    assert got["snapshots"] == len(distinct) + 1
    assert answers, "the reader never answered"
    slowest = max(a[0] for a in answers)                # reported, not asserted (no timed tests)
    counts_seen = [a[1] for a in answers]
    assert counts_seen == sorted(counts_seen)           # snapshots only grow, no half-written state seen
    print(f"\n[ducklake] {len(procs)} concurrent ingests ({len(distinct)} distinct, {N_SAME} same file) in "
          f"{elapsed:.1f} s: {got['snapshots']} snapshots, {got['scores']} scores (serial file: "
          f"{expected['scores']}); {len(answers)} reads meanwhile, slowest {slowest:.2f} s")


@pytest.mark.slow
def test_a_reader_does_not_wait_for_an_open_writer(lake_url, monkeypatch):
    with pytest.raises(db.StorageError, match="holds no benchwatch store yet"):
        db.open_connection(lake_url, read_only=True)            # a reader never creates the catalog
    seen: dict[str, str] = {}

    def read() -> None:
        with db.connect(lake_url, read_only=True, wait=0) as reader:
            seen.update(reader.execute("SELECT key, value FROM meta WHERE key LIKE 'probe%'").fetchall())

    with db.connect(lake_url) as writer:
        writer.execute("INSERT INTO meta VALUES ('probe', 'committed')")   # autocommit
        writer.execute("BEGIN TRANSACTION")
        writer.execute("INSERT INTO meta VALUES ('probe2', 'not yet')")
        # The writer holds its lock and an open transaction until the reader is done: a reader
        # that waited for either would never finish (the timeout only ends such a deadlock).
        reader = threading.Thread(target=read)
        reader.start()
        reader.join(timeout=READER_DEADLOCK_TIMEOUT)
        assert not reader.is_alive(), "the reader waited for the open writer"
        writer.execute("COMMIT")
        # A second writer is refused while the first holds the writer lock (wait=0).
        with pytest.raises(db.DatabaseLocked):
            with db.connect(lake_url, wait=0):
                pass
    assert seen == {"probe": "committed"}
    with db.connect(lake_url, wait=0):       # the lock was given back on close
        pass
    monkeypatch.delenv(lake.DATA_PATH_ENV)   # a reader finds the data files through the catalog
    with db.connect(lake_url, read_only=True) as reader:
        assert reader.execute("SELECT count(*) FROM meta WHERE key LIKE 'probe%'").fetchone()[0] == 2


def test_a_boolean_add_column_default_becomes_a_literal_ducklake_accepts():
    """DuckLake refuses `ADD COLUMN … DEFAULT false` as a non-literal default (migration 017 broke
    every new lake store): the translation writes 'false', the same default on a file."""
    out = lake.translate_ddl("ALTER TABLE t ADD COLUMN IF NOT EXISTS r BOOLEAN DEFAULT false;\n"
                             "ALTER TABLE t ADD COLUMN s BOOLEAN DEFAULT TRUE;")
    assert "DEFAULT 'false'" in out and "DEFAULT 'true'" in out
    con = duckdb.connect()
    con.execute("CREATE TABLE t (a INTEGER)")
    con.execute(out)
    con.execute("INSERT INTO t (a) VALUES (1)")
    assert con.execute("SELECT r, s FROM t").fetchone() == (False, True)


@pytest.mark.slow
def test_the_view_files_apply_on_a_lake_once_with_their_comments(lake_url):
    """storage/views serves both stores: the same views, the view and table comments (a lake
    refuses comments on a view's columns, lake.translate_view_file), applied once per change."""
    from storage import views
    with db.connect(lake_url) as con:
        here = "database_name = current_database()"
        got = dict(con.execute(f"SELECT view_name, comment FROM duckdb_views() WHERE {here} AND NOT internal").fetchall())
        assert set(got) == set(views.view_names()) and all(got.values())
        tables = dict(con.execute(f"SELECT table_name, comment FROM duckdb_tables() WHERE {here}").fetchall())
        assert all(tables[t] for t in views.commented_tables())
        columns = con.execute(f"SELECT count(*), count(comment) FROM duckdb_columns() WHERE {here} AND table_name = 'scores'")
        n, commented = columns.fetchone()
        assert n == commented > 0
        assert not views.stale(con)
        con.execute("SELECT * FROM leaderboard JOIN level_changes USING (table_id) LIMIT 1").fetchall()
    with db.connect(lake_url) as con:
        assert views.apply(con) == []


def test_a_new_store_is_made_whole_or_not_at_all(lake_url):
    """A new lake store gets every migration in one catalog transaction: one that fails part-way
    leaves no table of the earlier ones and no recorded version, and the next open makes the store."""
    shipped = db.migrations()
    broken = [*shipped[:-1], (shipped[-1][0], shipped[-1][1], "SELECT * FROM no_such_table_anywhere")]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(db, "migrations", lambda: broken)
        with pytest.raises(duckdb.Error, match="no_such_table_anywhere"):
            with db.connect(lake_url):
                pass
    with db.connect(lake_url, read_only=True) as con:
        here = "database_name = current_database()"
        tables = {r[0] for r in con.execute(f"SELECT table_name FROM duckdb_tables() WHERE {here}").fetchall()}
        assert tables == {"schema_migrations"}, tables       # the one table made before the transaction
        assert con.execute("SELECT count(*) FROM schema_migrations").fetchone()[0] == 0
    with db.connect(lake_url) as con:
        assert db.schema_version(con) == shipped[-1][0]
        assert "scores" in {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}


def test_a_uri_conninfo_becomes_key_value_pairs_for_the_secret():
    """The catalog's password goes in a DuckDB secret whose `password=…` the postgres extension
    appends to the conninfo: a URI (what `split_conninfo_password` leaves of
    postgresql://user:PW@host/db) must be key=value pairs first, else the attach fails."""
    from common.redact import split_conninfo_password
    rest, password = split_conninfo_password("postgresql://bw:S3cr%40t@db.internal:5433/bench?sslmode=require")
    assert password == "S3cr@t"
    assert lake.keyword_conninfo(rest) == "user=bw host=db.internal port=5433 dbname=bench sslmode=require"
    assert lake.keyword_conninfo("postgres://u%20x@h1:1,h2:2/d?application_name=it%27s") == \
        "user='u x' host=h1,h2 port=1,2 dbname=d application_name='it\\'s'"
    assert lake.keyword_conninfo("dbname=x host=h user=u") == "dbname=x host=h user=u"

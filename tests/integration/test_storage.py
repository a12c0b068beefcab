"""The history store: ingest, idempotency, normalization, atomicity, read-only queries, lock wait."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import duckdb
import pytest

from cli.main import main
from jobs.ingest import ingest_file
from scrapers.base import ScrapeError
from storage import db, registry_sync
from storage.query import ReadOnlyViolation, run_query
from jobs.sync import connect_synced
from helpers import file_at_version
from storage.store import open_store

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "csv"
DATA_TABLES = ("snapshots", "blobs", "scores", "item_results", "model_dates", "rejects", "fetches")


def counts(path) -> dict[str, int]:
    with db.connect(path) as con:
        return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in DATA_TABLES}


@pytest.fixture()
def dbpath(synced_db) -> Path:
    return synced_db


def test_ingest_is_idempotent(dbpath):
    first = ingest_file(open_store(dbpath), "csv", FIX / "scores_percent.csv", observed_at="2025-08-01")
    assert first.status == "new" and first.n_scores == 5
    before = counts(dbpath)
    again = ingest_file(open_store(dbpath), "csv", FIX / "scores_percent.csv", observed_at="2025-09-01")
    assert again.status == "unchanged" and again.snapshot_id == first.snapshot_id
    assert counts(dbpath) == before


def test_percent_and_proportion_files_are_stored_as_proportions(dbpath):
    ingest_file(open_store(dbpath), "csv", FIX / "scores_percent.csv")
    ingest_file(open_store(dbpath), "csv", FIX / "scores_proportion.csv")
    rows = dict(run_query("SELECT model_raw || '/' || benchmark, score FROM scores", open_store(dbpath)).itertuples(index=False))
    assert rows["o3/math_500"] == pytest.approx(0.992)
    assert rows["Claude Opus 4/math_500"] == pytest.approx(0.982)
    assert rows["o3/gpqa_diamond"] == pytest.approx(0.833)
    raw = run_query("SELECT raw_value FROM scores WHERE model_raw = 'o3' AND benchmark = 'math_500'", open_store(dbpath))
    assert raw.iloc[0, 0] == "99.2"


def test_model_dates_from_the_file_become_claims(dbpath):
    ingest_file(open_store(dbpath), "csv", FIX / "scores_percent.csv")
    claims = run_query("SELECT model_raw, knowledge_cutoff FROM model_cutoffs WHERE source = 'csv' "
                       "AND knowledge_cutoff IS NOT NULL ORDER BY model_raw", open_store(dbpath))
    assert list(claims["model_raw"]) == ["Claude Opus 4", "o3"]
    assert str(claims["knowledge_cutoff"].iloc[1])[:10] == "2024-06-01"


def test_bad_file_leaves_every_table_unchanged(dbpath, capsys):
    ingest_file(open_store(dbpath), "csv", FIX / "scores_proportion.csv")
    before = counts(dbpath)
    with pytest.raises(ScrapeError) as err:
        ingest_file(open_store(dbpath), "csv", FIX / "scores_bad.csv")
    assert "missing required column" in err.value.reason
    assert counts(dbpath) == before
    code = main(["ingest", "csv", str(FIX / "scores_bad.csv"), "--db", str(dbpath)])
    out = capsys.readouterr()
    assert code == 1
    assert out.err.count("\n") == 1 and "scores_bad.csv" in out.err and "csv" in out.err
    assert "Traceback" not in out.err
    assert counts(dbpath) == before


def test_out_of_range_rows_are_rejected_not_clipped(dbpath, tmp_path):
    f = tmp_path / "mixed.csv"
    f.write_text("model,benchmark,score\na,mmlu,85\nb,mmlu,101\nc,mmlu,70\n")
    res = ingest_file(open_store(dbpath), "csv", f)
    assert (res.n_scores, res.n_rejects) == (2, 1)
    reason = run_query("SELECT reason FROM rejects", open_store(dbpath)).iloc[0, 0]
    assert "outside the range" in reason


def test_latest_scores_keeps_benchmarks_of_older_snapshots(dbpath, tmp_path):
    ingest_file(open_store(dbpath), "csv", FIX / "scores_percent.csv", observed_at="2025-08-01")
    ingest_file(open_store(dbpath), "csv", FIX / "scores_other_benchmark.csv", observed_at="2025-09-01")
    latest = run_query("SELECT benchmark, count(*) n FROM latest_scores GROUP BY benchmark ORDER BY 1", open_store(dbpath))
    assert dict(latest.itertuples(index=False)) == {"math_500": 5, "simpleqa": 1}
    # a newer file about math_500 with one model dropped: it leaves latest_scores
    # (dropping more than a fifth would be held by the shrink guard: tests/integration/test_shrink_guard.py)
    f = tmp_path / "math_new.csv"
    f.write_text("model,benchmark,score,n_items\no3,math_500,99.4,500\nGrok-4,math_500,99.1,500\n"
                 "DeepSeek R1,math_500,98.0,500\nGLM-4.5,math_500,98.1,500\n")
    ingest_file(open_store(dbpath), "csv", f, observed_at="2025-10-01")
    latest = run_query("SELECT model_raw, score FROM latest_scores WHERE benchmark = 'math_500' ORDER BY 1", open_store(dbpath))
    assert list(latest["model_raw"]) == ["DeepSeek R1", "GLM-4.5", "Grok-4", "o3"]
    assert latest["score"].iloc[3] == pytest.approx(0.994)


def test_query_is_read_only(dbpath, capsys):
    ingest_file(open_store(dbpath), "csv", FIX / "scores_proportion.csv")
    for sql in ("DELETE FROM scores", "INSERT INTO meta VALUES ('x', 'y')", "DROP VIEW latest_scores",
                "COPY scores TO 'out.csv'", "SELECT 1; UPDATE scores SET score = 0", "ATTACH 'other.duckdb'"):
        with pytest.raises(ReadOnlyViolation):
            run_query(sql, open_store(dbpath))
    with pytest.raises(ReadOnlyViolation, match=r"read_csv\(\) is not allowed"):   # the allow-list (issue 55)
        run_query("SELECT * FROM read_csv('/etc/passwd')", open_store(dbpath))
    assert main(["query", "DELETE FROM scores", "--db", str(dbpath)]) == 1
    assert "read-only" in capsys.readouterr().err
    assert counts(dbpath)["scores"] == 3
    assert main(["query", "SELECT count(*) AS n FROM scores", "--db", str(dbpath), "--format", "json"]) == 0
    assert capsys.readouterr().out.strip() == '[{"n":3}]'


HOLDER = textwrap.dedent("""
    import sys, time, duckdb
    con = duckdb.connect(sys.argv[1])
    con.execute("INSERT OR REPLACE INTO meta VALUES ('holder', 'x')")
    print("locked", flush=True)
    time.sleep(float(sys.argv[2]))
    con.close()
""")


@pytest.mark.slow   # a writer subprocess held for seconds
def test_query_waits_for_a_writer_in_another_process(dbpath, capsys):
    ingest_file(open_store(dbpath), "csv", FIX / "scores_proportion.csv")
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(dbpath), "3"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        start = time.monotonic()
        assert main(["query", "SELECT count(*) AS n FROM scores", "--db", str(dbpath), "--format", "csv"]) == 0
        waited = time.monotonic() - start
    finally:
        holder.wait(timeout=30)
    out = capsys.readouterr()
    assert "locked by another process; waiting" in out.err
    assert out.out.splitlines() == ["n", "3"]
    assert waited > 1.0
    # and a short --wait gives up with a clear message instead of a DuckDB traceback
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(dbpath), "3"], stdout=subprocess.PIPE, text=True)
    try:
        holder.stdout.readline()
        assert main(["query", "SELECT 1", "--db", str(dbpath), "--wait", "0.5"]) == 1
    finally:
        holder.wait(timeout=30)
    assert "gave up" in capsys.readouterr().err


@pytest.mark.parametrize("upto", [1, 6])
def test_migrations_apply_to_an_existing_file(tmp_path, upto):
    # A file created by an earlier version, with data in it: re-opening applies the missing
    # migrations and keeps the data.
    dbpath = tmp_path / "old.duckdb"
    file_at_version(dbpath, upto)
    raw = duckdb.connect(str(dbpath))
    raw.execute("""INSERT INTO snapshots VALUES (1, 'csv', 'abc', ['abc'], ['f.csv'], '2025-01-01', '2025-01-01',
                   '2025-01-01', 'ingest', 1, 1, 0, 1, 0, [], NULL)""")
    raw.execute("""INSERT INTO scores (snapshot_id, source, benchmark, benchmark_raw, model, model_raw, setting, score,
                   metric, excluded_reason) VALUES (1, 'csv', 'mmlu', 'mmlu', 'o3', 'o3', '', 0.9, 'proportion', '')""")
    if upto >= 2:
        raw.execute("""INSERT INTO saturation (benchmark, as_of, scope, k, alpha, z, s_index, bin, run_at)
                       VALUES ('mmlu', '2025-01-01', 'all', 5, 0.5, 1.96, 0.5, 'moderate', '2025-01-01')""")
    raw.close()
    with db.connect(dbpath) as con:      # the schema alone: the registry is synced explicitly
        assert db.schema_version(con) == max(v for v, _, _ in db.migrations())
        assert con.execute("SELECT count(*) FROM benchmarks").fetchone()[0] == 0
    with connect_synced(open_store(dbpath)) as con:
        assert db.schema_version(con) == max(v for v, _, _ in db.migrations())
        assert con.execute("SELECT count(*) FROM scores").fetchone()[0] == 1
        assert con.execute("SELECT model, population FROM latest_scores").fetchall() == [("o3-2025-04-16", "models")]  # re-identified
        if upto >= 2:
            assert con.execute("SELECT benchmark, population, bin FROM saturation_latest").fetchall() == \
                [("mmlu", "models", "moderate")]
    with db.connect(dbpath) as con:
        assert db.migrate(con) == []


def test_connections_are_utc(dbpath):
    with db.connect(dbpath) as con:
        assert con.execute("SELECT current_setting('TimeZone')").fetchone()[0] == "UTC"


def test_benchwatch_threads_caps_every_instance_and_a_bad_value_is_named(dbpath, monkeypatch, capsys):
    monkeypatch.setenv("BENCHWATCH_THREADS", "3")
    with db.connect(dbpath) as con:
        assert con.execute("SELECT current_setting('threads')").fetchone()[0] == 3
    with db.connect(dbpath, read_only=True) as con:
        assert con.execute("SELECT current_setting('threads')").fetchone()[0] == 3
    monkeypatch.setenv("BENCHWATCH_THREADS", "")           # empty: DuckDB's default, a thread per core
    with db.connect(dbpath) as con, duckdb.connect() as plain:
        assert con.execute("SELECT current_setting('threads')").fetchone()[0] == \
            plain.execute("SELECT current_setting('threads')").fetchone()[0]
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv("BENCHWATCH_THREADS", bad)
        capsys.readouterr()
        assert main(["status", "--db", str(dbpath)]) != 0
        err = capsys.readouterr().err
        assert f"BENCHWATCH_THREADS='{bad}' is not a thread count" in err, err
        assert "Traceback" not in err


NO_DATABASE = {"saturation"}   # commands that never open the database (no --db)


def _leaf_parsers(parser, path=()):
    """(command path, parser) of every runnable (sub)command, from the parsers argparse built."""
    import argparse
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, parser
    for action in subs:
        for name, child in action.choices.items():
            yield from _leaf_parsers(child, path + (name,))


def test_help_texts(capsys):
    """Every command of the CLI's registry (cli.commands.COMMANDS) is listed by --help, has its own
    --help with a description, and takes --db unless it never opens the database."""
    from cli.commands import COMMANDS
    from cli.main import build_parser

    with pytest.raises(SystemExit) as top:
        main(["--help"])
    out = capsys.readouterr().out
    assert top.value.code == 0
    leaves = list(_leaf_parsers(build_parser()))
    assert {path[0] for path, _ in leaves} == set(COMMANDS)      # every registered command is reachable
    for cmd in COMMANDS:
        assert f"\n    {cmd} " in out or f"\n    {cmd}\n" in out, f"{cmd} missing from benchwatch --help"
    for path, parser in leaves:
        with pytest.raises(SystemExit) as info:
            main([*path, "--help"])
        text = capsys.readouterr().out
        assert info.value.code == 0, path
        assert text.startswith(f"usage: benchwatch {' '.join(path)}"), path
        assert parser.description or parser.format_help().count("\n") > 3, f"{path}: no description"
        if path[0] not in NO_DATABASE:
            assert "--db" in text, f"benchwatch {' '.join(path)} has no --db"
    assert len(leaves) >= len(COMMANDS)


def test_status_lists_sources_and_unknown_names(dbpath, tmp_path, capsys):
    f = tmp_path / "unknown.csv"
    f.write_text("model,benchmark,score\nacme-internal-7b,acme_private_eval,0.5\n")
    ingest_file(open_store(dbpath), "csv", f)
    assert main(["status", "--db", str(dbpath)]) == 0
    out = capsys.readouterr().out
    assert "schema version" in out and "csv" in out
    # not in the registry: listed so a person can add an alias
    assert "acme-internal-7b" in out and "acme_private_eval" in out



def test_status_lists_tables_whose_standard_errors_imply_fewer_items(dbpath, tmp_path, capsys):
    # gpqa_diamond (registry n = 198): s = .5, se = .06 -> n = .25 / .0036 = 69 < 99 (half of 198): listed.
    # math_500 (n = 500): se = .0129 at s = .5 -> n = 1502: several samples per item, normal: not listed.
    # A reference row (is_reference) never counts; fewer than 3 rows are not judged (mmlu).
    f = tmp_path / "sizes.csv"
    f.write_text("model,benchmark,score,stderr,metric\n"
                 + "".join(f"m{i},gpqa_diamond,{0.5 + 0.01 * i},0.06,proportion\n" for i in range(5))
                 + "".join(f"m{i},math_500,0.5,0.0129,proportion\n" for i in range(5))
                 + "m1,mmlu,0.5,0.2,proportion\nm2,mmlu,0.5,0.2,proportion\n")
    ingest_file(open_store(dbpath), "csv", f)
    assert main(["status", "--db", str(dbpath)]) == 0
    out = capsys.readouterr().out
    assert "fewer items than the registry's n (1 table(s))" in out
    line = next(ln for ln in out.splitlines() if "gpqa_diamond" in ln and "stderr" in ln)
    assert line.split()[-4:] == ["5", "69", "198", "0.35"]
    assert not any("math_500" in ln or " mmlu " in ln for ln in out.split("fewer items")[1].splitlines())


def test_implied_n_and_its_verdicts():
    from analysis.sizes import CONSISTENT, FEWER_ITEMS, SEVERAL_SAMPLES, implied_n, size_checks
    assert implied_n(0.5, 0.05) == pytest.approx(100.0)
    assert implied_n(0.836, 0.0223) == pytest.approx(0.836 * 0.164 / 0.0223 ** 2)   # Epoch GPQA: ~276 for 198
    assert implied_n(1.0, 0.01) is None and implied_n(0.5, 0.0) is None and implied_n(0.5, None) is None
    assert implied_n(float("nan"), 0.1) is None
    rows = ([("stderr", "s", "b", "", 0.5, 0.05, None, 400)] * 3             # 100 < 200: fewer items
            + [("stderr", "s", "c", "v2", 0.5, 0.01, None, 400)] * 3        # 2500 > 800: several samples
            + [("items", "s", "d", "", None, None, 380, 400)] * 3           # 380 items of 400: consistent
            + [("stderr", "s", "e", "", 0.5, 0.05, None, None)] * 3         # no registry n: not judged
            + [("stderr", "s", "f", "", 0.5, 0.05, None, 400)] * 2)         # too few rows
    got = {(c.benchmark, c.table_version): (c.verdict, c.rows, round(c.median_n)) for c in size_checks(rows)}
    assert got == {("b", ""): (FEWER_ITEMS, 3, 100), ("c", "v2"): (SEVERAL_SAMPLES, 3, 2500),
                   ("d", ""): (CONSISTENT, 3, 380)}


def test_unknown_names_count_every_name_past_the_row_limit(dbpath, tmp_path):
    from storage.status import unknown
    f = tmp_path / "unknown.csv"
    f.write_text("model,benchmark,score\nacme-a,acme_eval,0.5\nacme-b,acme_eval,0.6\nacme-c,acme_eval,0.7\n")
    ingest_file(open_store(dbpath), "csv", f)
    with db.connect(dbpath, read_only=True) as con:
        table, counts = unknown(con, limit=2)
    assert counts == {"benchmarks": 1, "models": 3, "learned": 0}    # the models past the limit are counted too
    assert table.columns == ["kind", "name", "sources", "rows"]
    assert table.rows == [("benchmark", "acme_eval", ["csv"], 3), ("model", "acme-a", ["csv"], 1)]

def test_unknown_names_are_the_same_counted_per_row_or_per_group_first(dbpath, tmp_path, monkeypatch, capsys):
    """`status` on a large history counts the names per (name, source) first and reads on every
    thread (storage.status.LARGE_ROWS): the same table, counts and printed page as per row."""
    from storage import status
    f = tmp_path / "a.csv"     # names in two sources, several rows of one name, known names beside
    f.write_text("model,benchmark,score\nacme-a,acme_eval,0.5\nacme-b,acme_eval,0.6\nacme-a,beta_eval,0.7\n"
                 "gpt-4o-2024-05-13,acme_eval,0.4\nacme-c,gpqa_diamond,0.3\nacme-d,beta_eval,0.1\n")
    ingest_file(open_store(dbpath), "csv", f)
    with db.connect(dbpath) as con:       # a second source's rows (the csv source names only itself)
        con.execute("UPDATE scores SET source = 'zeta' WHERE model_raw IN ('acme-b', 'acme-d')")
    with db.connect(dbpath, read_only=True) as con:
        for limit in (50, 3, 1):
            assert status.unknown(con, limit, large=True) == status.unknown(con, limit, large=False)
        table, counts = status.unknown(con, large=True)
    assert counts == {"benchmarks": 2, "models": 4, "learned": 0}
    assert table.rows[:2] == [("benchmark", "acme_eval", ["csv", "zeta"], 3), ("benchmark", "beta_eval", ["csv", "zeta"], 2)]
    assert ("model", "acme-a", ["csv"], 2) in table.rows and ("model", "acme-d", ["zeta"], 1) in table.rows
    assert main(["status", "--db", str(dbpath)]) == 0
    small = capsys.readouterr().out
    monkeypatch.setattr(status, "LARGE_ROWS", 1)
    assert status.is_large({"scores": 1}) and not status.is_large({})
    assert main(["status", "--db", str(dbpath)]) == 0
    assert capsys.readouterr().out == small


def test_duckdb_file_is_a_plain_duckdb_database(dbpath):
    ingest_file(open_store(dbpath), "csv", FIX / "scores_proportion.csv")
    con = duckdb.connect(str(dbpath), read_only=True)
    assert con.execute("SELECT count(*) FROM latest_scores").fetchone()[0] == 3
    con.close()


def test_a_new_alias_remaps_stored_history_without_reingesting(dbpath, tmp_path, monkeypatch):
    import pandas as pd
    import registry
    f = tmp_path / "new_name.csv"
    f.write_text("model,benchmark,score\nOpenAI o3 (April),math_500,0.99\n")
    ingest_file(open_store(dbpath), "csv", f)
    assert run_query("SELECT model FROM scores", open_store(dbpath))["model"][0] == "OpenAI o3 (April)"
    aliases = registry.load_aliases()
    extra = pd.DataFrame({"kind": ["model"], "alias": ["OpenAI o3 (April)"], "canonical": ["o3-2025-04-16"]})
    monkeypatch.setattr(registry, "load_aliases", lambda: pd.concat([aliases, extra], ignore_index=True))
    # the digest is of the registry files' bytes: an edited aliases.csv, as far as the sync can tell
    monkeypatch.setattr(registry_sync, "registry_digest", lambda: "aliases.csv edited")
    with db.connect(dbpath):        # a plain write connection leaves the registry alone …
        pass
    assert run_query("SELECT model FROM scores", open_store(dbpath))["model"][0] == "OpenAI o3 (April)"
    with connect_synced(open_store(dbpath)):    # … the jobs' connection syncs the changed registry
        pass
    row = run_query("SELECT model, model_raw FROM scores", open_store(dbpath)).iloc[0]
    assert (row["model"], row["model_raw"]) == ("o3-2025-04-16", "OpenAI o3 (April)")


def test_registry_digest_follows_the_bytes_of_every_registry_file(tmp_path):
    import shutil
    import registry
    shipped = Path(registry.__file__).parent
    for name in registry_sync.REGISTRY_FILES:
        shutil.copy(shipped / name, tmp_path / name)
    assert registry_sync.registry_digest(tmp_path) == registry_sync.registry_digest()
    for name in registry_sync.REGISTRY_FILES:
        before = registry_sync.registry_digest(tmp_path)
        with open(tmp_path / name, "ab") as fh:     # a longer file: (mtime, size) key a new digest
            fh.write(b"\n")
        assert registry_sync.registry_digest(tmp_path) != before, name


def test_a_read_only_command_brings_an_older_file_up_to_date_first(tmp_path, capsys):
    """`status` on a file an older benchwatch wrote: migrated (and the registry synced) on a short
    write connection, then read."""
    dbpath = tmp_path / "old.duckdb"     # a plain connect: migrated, registry never synced
    newest = db.latest_version()
    file_at_version(dbpath, 13)                      # as a benchwatch of schema 13 left it: migrations 1-13 only
    con = duckdb.connect(str(dbpath))
    assert con.execute("SELECT count(*) FROM meta WHERE key = 'registry_sha256'").fetchone()[0] == 0
    con.close()
    assert main(["status", "--db", str(dbpath)]) == 0
    assert f"schema version: {newest}" in capsys.readouterr().out
    with db.connect(dbpath, read_only=True) as con:
        assert db.schema_version(con) == newest
        assert con.execute("SELECT count(*) FROM analysis_inputs").fetchone()[0] == 0
        assert con.execute("SELECT count(*) FROM meta WHERE key = 'registry_sha256'").fetchone()[0] == 1


def test_saturation_states_from_before_tables_go_inactive_without_a_message(tmp_path):
    """Migration 024: a level state keyed by benchmark (no `table` label, pooled sources) can never
    be evaluated again; it goes inactive silently. A per-table state is untouched."""
    dbpath = tmp_path / "old.duckdb"
    file_at_version(dbpath, 23)
    con = duckdb.connect(str(dbpath))
    old = {"kind": "saturation_bin_changed", "benchmark": "mmlu", "scope": "all", "level": "high", "source": ""}
    new = {**old, "table": "mmlu:simple_evals", "source": "simple_evals"}
    for fp, labels in (("old", old), ("new", new)):
        con.execute("""INSERT INTO alerts VALUES (?, 'saturation_bin_changed', ?, 'firing', now(), now(), now(), 1,
                       now(), 'queued', '', '{}')""", [fp, json.dumps(labels)])
    con.close()
    with db.connect(dbpath) as con:
        states = dict(con.execute("SELECT fingerprint, state FROM alerts ORDER BY 1").fetchall())
        assert states == {"new": "firing", "old": "inactive"}
        assert con.execute("SELECT count(*) FROM notifications").fetchone()[0] == 0


def test_status_clears_an_error_a_later_success_superseded(dbpath):
    """`last_error` is the error of the newest fetch: after a failure and then a success it is empty,
    never the stale message beside `last_fetch_status ok`."""
    from storage import status
    from storage.db import connect

    with connect(dbpath) as con:
        con.execute("""INSERT INTO fetches (source, url, started_at, status, error) VALUES
                       ('swebench', 'u', '2026-01-01 00:00:00+00', 'error', 'HTTP 503'),
                       ('swebench', 'u', '2026-01-02 00:00:00+00', 'ok', NULL),
                       ('bfcl', 'u', '2026-01-01 00:00:00+00', 'ok', NULL),
                       ('bfcl', 'u', '2026-01-02 00:00:00+00', 'error', 'HTTP 500')""")
        table = status.source_status(con)
    rows = {r[table.columns.index("source")]: dict(zip(table.columns, r)) for r in table.rows}
    assert (rows["swebench"]["last_fetch_status"], rows["swebench"]["last_error"]) == ("ok", None)
    assert (rows["bfcl"]["last_fetch_status"], rows["bfcl"]["last_error"]) == ("error", "HTTP 500")

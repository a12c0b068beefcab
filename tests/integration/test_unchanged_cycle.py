"""The unchanged cycle (issue 12): a second `run` over identical responses parses nothing and
does not recompute the analysis (storage.fingerprint, migration 014); any change of its inputs
makes the next cycle recompute."""

from __future__ import annotations

import shutil
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import pytest

import jobs.collect
import jobs.cycle as cycle
import jobs.relations.step
import scrapers
from storage import db
from storage import fingerprint as fp
from storage.store import open_store

REPLAY = Path(__file__).resolve().parents[1] / "fixtures" / "replay"
SOURCES = ["aider_polyglot", "knowledge_cutoffs"]
pytestmark = [pytest.mark.usefixtures("one_utc_day"), pytest.mark.xdist_group("test_unchanged_cycle")]     # a test's cycles see one UTC day


def opens(monkeypatch) -> list[str]:
    """Every DuckDB instance storage.db opens from now on (its path)."""
    opened: list[str] = []
    real = duckdb.connect

    def counted(database=":memory:", *args, **kwargs):
        opened.append(str(database))
        return real(database, *args, **kwargs)

    monkeypatch.setattr(db.duckdb, "connect", counted)
    return opened


def _boom(*args, **kwargs):
    raise AssertionError("called on an unchanged cycle")


def test_second_cycle_skips_parse_and_analysis_and_a_change_recomputes(synced_db, tmp_path, monkeypatch):
    path = synced_db
    first = cycle.run_cycle(open_store(path), SOURCES, replay_dir=REPLAY)
    assert first.analysis is not None and not first.analysis["skipped"], first.text()
    assert {o.status for o in first.outcomes} == {"new"}

    calls = {"analysis": 0}
    real = jobs.relations.step.materialize

    def counted(*args, **kwargs):
        calls["analysis"] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(jobs.relations.step, "materialize", counted)
    for name in SOURCES:   # an unchanged cycle must not parse
        monkeypatch.setattr(type(scrapers.get(name)), "parse_checked", _boom)
    opened = opens(monkeypatch)
    second = cycle.run_cycle(open_store(path), SOURCES, replay_dir=REPLAY)
    assert [o.status for o in second.outcomes] == ["unchanged", "unchanged"], second.text()
    # one short connection per step: collect's settling, the analysis check, notify (no connection
    # is kept between the steps, nor across a fetch or a call to Slack: tests/integration/test_held_file.py)
    assert opened == [str(path)] * 3, opened
    assert second.analysis["skipped"] and calls["analysis"] == 0
    assert "inputs unchanged" in second.text()
    kept, computed = second.analysis["saturation"], first.analysis["saturation"]
    assert list(kept.columns) == list(computed.columns) and len(kept) == len(computed) > 0
    assert kept["benchmark"].tolist() == computed["benchmark"].tolist()
    assert kept["s_index"].astype(float).round(12).equals(computed["s_index"].astype(float).round(12))

    with db.connect(path) as con:   # an input changes: one score row less
        before = fp.stored_fingerprint(con)
        con.execute("DELETE FROM scores WHERE rowid = (SELECT min(rowid) FROM scores)")
    third = cycle.run_cycle(open_store(path), SOURCES, replay_dir=REPLAY)
    assert not third.analysis["skipped"] and calls["analysis"] == 1
    with db.connect(path) as con:
        assert fp.stored_fingerprint(con) not in (None, before)


@pytest.fixture(scope="module")
def collected(tmp_path_factory) -> Path:
    """The replayed sources collected once; each test changes its own copy."""
    path = tmp_path_factory.mktemp("collected") / "f.duckdb"
    jobs.collect.collect(open_store(path), SOURCES, replay_dir=REPLAY)
    return path


@pytest.mark.parametrize("change", [
    "UPDATE snapshots SET status = 'held' WHERE id = (SELECT min(id) FROM snapshots)",
    "UPDATE scores SET score = score / 2 WHERE rowid = (SELECT min(rowid) FROM scores)",
    "DELETE FROM model_dates WHERE rowid = (SELECT min(rowid) FROM model_dates)",
    "UPDATE benchmarks SET n_items = coalesce(n_items, 0) + 1 WHERE id = (SELECT min(id) FROM benchmarks)",
])
def test_fingerprint_sees_every_input_change_but_not_last_seen(collected, tmp_path, change):
    path = tmp_path / "f.duckdb"
    shutil.copyfile(collected, path)
    params = {"day": "2025-01-01"}
    with db.connect(path) as con:
        base = fp.input_fingerprint(con, params)
        con.execute("UPDATE snapshots SET last_seen = last_seen + INTERVAL 1 DAY")   # seen again: no change
        assert fp.input_fingerprint(con, params) == base
        assert fp.input_fingerprint(con, {"day": "2025-01-02"}) != base
        con.execute(change)
        assert fp.input_fingerprint(con, params) != base


def test_a_changed_response_beside_unchanged_ones_is_parsed_and_reanalysed(synced_db, tmp_path, monkeypatch):
    """collect settles every unchanged source in one connection: the changed one must still be
    parsed (and only it), stored as a new snapshot, and the analysis recomputed."""
    import shutil
    replay = tmp_path / "replay"
    for name in SOURCES:
        shutil.copytree(REPLAY / name, replay / name)
    path = synced_db
    first = cycle.run_cycle(open_store(path), SOURCES, replay_dir=replay)
    assert {o.status for o in first.outcomes} == {"new"}, first.text()

    board = replay / "aider_polyglot" / "polyglot_leaderboard.yml"
    text = board.read_text()
    assert "pass_rate_2: 35.6" in text
    board.write_text(text.replace("pass_rate_2: 35.6", "pass_rate_2: 45.6", 1))
    parsed = []
    aider = type(scrapers.get("aider_polyglot"))
    real_parse = aider.parse_checked

    def counted(self, *args, **kwargs):
        parsed.append(self.name)
        return real_parse(self, *args, **kwargs)

    monkeypatch.setattr(aider, "parse_checked", counted)
    monkeypatch.setattr(type(scrapers.get("knowledge_cutoffs")), "parse_checked", _boom)
    second = cycle.run_cycle(open_store(path), SOURCES, replay_dir=replay)
    assert [o.status for o in second.outcomes] == ["new", "unchanged"], second.text()
    assert parsed == ["aider_polyglot"] and not second.analysis["skipped"]
    with db.connect(path) as con:
        assert con.execute("SELECT count(*) FROM snapshots WHERE source = 'aider_polyglot'").fetchone()[0] == 2
        per_run = con.execute("SELECT count(DISTINCT source) FROM fetches GROUP BY run_id").fetchall()
        assert sorted(per_run) == [(2,), (2,)]    # each cycle recorded both sources' fetches


def test_the_digests_see_two_rows_changed_alike(synced_db):
    """Row hashes are XOR-ed into a digest; DuckDB's hash of several values (or of a row's
    columns) XORs the last one in, so two rows whose last value changed alike once cancelled
    out: a snapshot held under an even number of item rows, or the last column of two score rows
    set alike, left the digests as they were (storage.fingerprint hashes each row's hash again)."""
    now = datetime(2025, 6, 1, tzinfo=timezone.utc)
    with db.connect(synced_db) as con:
        con.execute("""INSERT INTO snapshots (id, source, sha256, blob_sha256, file_names, observed_at, first_seen,
                                              last_seen, origin, parser_version, n_scores, n_items, n_models, n_rejects, status)
                       VALUES (1, 'livecodebench', 'a', ['a'], ['a.json'], TIMESTAMPTZ '2025-01-01', TIMESTAMPTZ '2025-01-01',
                               TIMESTAMPTZ '2025-01-01', 'ingest', 1, 2, 2, 2, 0, 'ok')""")
        con.execute("""INSERT INTO item_results (snapshot_id, source, benchmark, model, model_raw, item_id, item_date,
                                                 difficulty, platform, score)
                       SELECT 1, 'livecodebench', 'livecodebench', m, m, 'i' || i, DATE '2024-06-01', 'easy', 'leetcode', 1.0
                       FROM (VALUES ('m1'), ('m2')) t(m), range(2) r(i)""")
        con.execute("""INSERT INTO scores (snapshot_id, source, benchmark, benchmark_raw, model, model_raw, setting, score,
                                           metric, excluded_reason, population)
                       SELECT 1, 'livecodebench', 'livecodebench', 'livecodebench', m, m, '', 0.5, 'proportion', '', 'models'
                       FROM (VALUES ('m1'), ('m2')) t(m)""")
        last = con.execute("SELECT column_name FROM duckdb_columns() WHERE table_name = 'scores' "
                           "ORDER BY column_index DESC LIMIT 1").fetchone()[0]
        items, scores = fp.item_groups(con, now), fp.score_table_groups(con, now)
        tables = fp.table_digests(con)
        con.execute("UPDATE snapshots SET status = 'held'")        # over 4 item rows and 2 score rows
        assert not fp.item_groups(con, now)["xor"].equals(items["xor"])
        assert not fp.score_table_groups(con, now)["xor"].equals(scores["xor"])
        con.execute("UPDATE snapshots SET status = 'ok'")
        assert fp.item_groups(con, now)["xor"].equals(items["xor"])
        con.execute(f"UPDATE scores SET {last} = DEFAULT")           # both rows alike (their last column)
        con.execute(f"UPDATE scores SET {last} = 'someone'" if last == "reported_by" else
                    f"UPDATE scores SET {last} = NOT coalesce({last}, false)")
        assert not fp.score_table_groups(con, now)["raw"].equals(scores["raw"])
        assert fp.table_digests(con) != tables

"""An incremental analysis reads a changed table's history on top of the rows the last read kept
(storage/history_kept.py): only the rows of newer snapshots, when the earlier rows are as they
were read and every newer row is dated after them; else the benchmark is read whole. Either way
the rows are those of a whole read (analysis/running_best_history.sql), checked here on random
histories against every change that must send a benchmark back to the whole read, and on the
change that must not."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from jobs.relations.shared import read_dated_history
from helpers import reads_on_top
from jobs.sync import connect_synced
from storage import saturation as store
from tests.system.test_history_pruned import random_db
from storage.store import open_store

LATE = ["2024-08-01", "2024-08-15"]     # the last two snapshots: after every model's release date


def _history_with_late_snapshots(path, seed: int) -> None:
    """random_db's history, its last two snapshots moved after every release date (so their rows
    can be read on top of the earlier ones) and their rows' evaluation dates cleared."""
    random_db(path, seed)
    with connect_synced(open_store(path)) as con:
        last = con.execute("SELECT max(id) FROM snapshots").fetchone()[0]
        for sid, at in zip((last - 1, last), LATE):
            con.execute("UPDATE snapshots SET observed_at = CAST(? AS TIMESTAMPTZ), first_seen = CAST(? AS TIMESTAMPTZ), "
                        "last_seen = CAST(? AS TIMESTAMPTZ), status = 'ok' WHERE id = ?", [at, at, at, sid])
        con.execute("UPDATE scores SET evaluated_at = NULL WHERE snapshot_id >= ?", [last - 1])


def _hide_last(con, n: int = 2) -> int:
    """Move the score rows of the last `n` snapshots aside (table `hidden`); the first hidden id."""
    first = con.execute("SELECT max(id) FROM snapshots").fetchone()[0] - n + 1
    con.execute("CREATE TABLE hidden AS SELECT * FROM scores WHERE snapshot_id >= ?", [first])
    con.execute("DELETE FROM scores WHERE snapshot_id >= ?", [first])
    return first


def _whole(path, tmp_path) -> pd.DataFrame:
    """The whole read of `path`'s history, on a copy (nothing stored, nothing reused)."""
    copy = tmp_path / "whole.duckdb"
    shutil.copyfile(path, copy)
    with connect_synced(open_store(copy)) as con:
        return read_dated_history(con)


def _kept_rows(con) -> pd.DataFrame:
    df = con.execute("SELECT * FROM history_kept").df()
    return df.sort_values(list(df.columns), ignore_index=True)


def _stored_after_whole_read(path, tmp_path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The kept rows and basis a read that stores, reading whole, leaves on a copy of `path`."""
    copy = tmp_path / "stored.duckdb"
    shutil.copyfile(path, copy)
    with connect_synced(open_store(copy)) as con:
        con.execute("DELETE FROM history_kept; DELETE FROM history_kept_basis")
        read_dated_history(con, keep=True)
        return _kept_rows(con), con.execute("SELECT * EXCLUDE (stored_at) FROM history_kept_basis ORDER BY ALL").df()


# each change, and whether every benchmark may still be read on top of its kept rows
CHANGES = {
    "new snapshots only": (None, True),
    "a row of an earlier snapshot edited": ("UPDATE scores SET score = score + 0.001 WHERE rowid = "
                                           "(SELECT min(rowid) FROM scores WHERE snapshot_id = 2 AND benchmark = 'rb_prop')",
                                           False),
    "a row of an earlier snapshot deleted": ("DELETE FROM scores WHERE rowid = (SELECT min(rowid) FROM scores "
                                            "WHERE snapshot_id = 3 AND benchmark = 'rb_cost')", False),
    "an earlier snapshot held": ("UPDATE snapshots SET status = 'held' WHERE id = 2", False),
    "a model's release date moved": ("UPDATE model_dates SET release_date = release_date + 20 WHERE model = 'rm-0'",
                                     False),
    "a newer snapshot observed before the earlier ones": (
        "UPDATE snapshots SET observed_at = TIMESTAMPTZ '2024-01-02' WHERE id = (SELECT max(id) FROM snapshots)", False),
    "a newer row evaluated among the earlier ones": (     # a new result (no earlier row showed its score)
        "INSERT INTO scores SELECT * REPLACE (0.4321 AS score, TIMESTAMPTZ '2024-02-01' AS evaluated_at) FROM scores "
        "WHERE rowid = (SELECT max(rowid) FROM scores WHERE benchmark = 'rb_prop')", False),
    "a newer row repeating an earlier result": (
        "INSERT INTO scores SELECT * REPLACE ((SELECT max(id) FROM snapshots) AS snapshot_id) FROM scores "
        "WHERE snapshot_id = 1 AND benchmark = 'rb_ties'", True),
}


@pytest.mark.parametrize("change", list(CHANGES))
@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow)])
def test_a_read_on_top_of_the_kept_rows_gives_the_whole_read(synced_db, tmp_path, monkeypatch, seed, change):
    sql, may_reuse = CHANGES[change]
    monkeypatch.setattr(store, "HISTORY_CHUNK_ROWS", 2000)       # several ranges of benchmarks per read
    path = synced_db
    _history_with_late_snapshots(path, seed)
    with connect_synced(open_store(path)) as con:
        first_hidden = _hide_last(con)
        read_dated_history(con, keep=True)                   # what the last analysis read and kept
        con.execute("INSERT INTO scores SELECT * FROM hidden")   # then the newer snapshots came
        con.execute("DROP TABLE hidden")
        if sql:
            con.execute(sql)
        benchmarks = [r[0] for r in con.execute("SELECT DISTINCT benchmark FROM scores ORDER BY 1").fetchall()]
        assert con.execute("SELECT count(*) FROM scores WHERE snapshot_id >= ?", [first_hidden]).fetchone()[0]
    want = _whole(path, tmp_path)
    on_top = reads_on_top(monkeypatch)
    with connect_synced(open_store(path)) as con:
        got = read_dated_history(con, keep=True, reuse=True)
        kept_rows = _kept_rows(con)
        basis = con.execute("SELECT * EXCLUDE (stored_at) FROM history_kept_basis ORDER BY ALL").df()
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    read_on_top = sorted(b for chunk in on_top for b in chunk)
    if may_reuse:
        assert read_on_top == benchmarks, on_top
    else:
        assert read_on_top != benchmarks, on_top      # the changed benchmark, at least, read whole
    # what it stored is what a whole read stores: the next read on top of it starts right
    want_rows, want_basis = _stored_after_whole_read(path, tmp_path)
    pd.testing.assert_frame_equal(kept_rows, want_rows, check_exact=True)
    pd.testing.assert_frame_equal(basis, want_basis, check_exact=True)


def test_a_read_that_stores_nothing_reuses_nothing(synced_db, monkeypatch):
    """The whole read (a full analysis, or any reader) never reads the kept rows; without `keep`
    it leaves them as they are."""
    path = synced_db
    _history_with_late_snapshots(path, 0)
    with connect_synced(open_store(path)) as con:
        read_dated_history(con)
        assert con.execute("SELECT count(*) FROM history_kept").fetchone()[0] == 0
        read_dated_history(con, keep=True)
        n = con.execute("SELECT count(*) FROM history_kept").fetchone()[0]
        assert n > 0
        con.execute("UPDATE history_kept SET score = -1")          # a kept row the read must not trust
        on_top = reads_on_top(monkeypatch)
        whole = read_dated_history(con, keep=True)            # a full analysis' read: whole, stored again
        assert on_top == [] and (whole["score"] != -1).all()
        assert con.execute("SELECT count(*) FROM history_kept WHERE score = -1").fetchone()[0] == 0

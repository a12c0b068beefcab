"""Issue 54 on the real history (../shared/snapshots with Epoch's hub): the view lists every
cross-source pair, a 15 pp error planted in a real row surfaces as a finding naming the model and both
sources, and docs/disagreements.md is what docs/disagreements.py produces. Nothing is tuned to the
files: the planted row is chosen by a rule any history satisfies."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis.constants import DISAGREEMENT_Z
from analysis.disagreement import analyse
from helpers import SNAPSHOTS, docs_module, needs
from storage.query import run_query
from storage.store import open_store

pytestmark = [needs(SNAPSHOTS), pytest.mark.slow, pytest.mark.xdist_group("real-history")]   # a real-history backfill (shared once a session)

MIN_PAIRS = 20       # issue 54: the real history has at least 20 cross-source pairs


def _rows(db) -> pd.DataFrame:
    return run_query("SELECT * FROM source_disagreements ORDER BY benchmark, model, table_a, table_b", open_store(db))


def test_the_view_lists_every_cross_source_pair_of_the_real_history(real_history_backfilled):
    rows = _rows(real_history_backfilled)
    assert len(rows) >= MIN_PAIRS
    # every pair of current rows of one model on one benchmark from two sources with one version is in the view
    expected = run_query("""
        WITH l AS (SELECT DISTINCT benchmark, source, model, coalesce(table_version, '') AS v, metric
                   FROM latest_scores WHERE population = 'models' AND NOT coalesce(is_reference, false)
                     AND coalesce(table_version, '') = '')
        SELECT DISTINCT a.benchmark, a.model, a.source AS sa, b.source AS sb
        FROM l a JOIN l b ON a.benchmark = b.benchmark AND a.model = b.model AND a.metric = b.metric
                         AND a.source < b.source""", open_store(real_history_backfilled))
    got = {(r.benchmark, r.model, *sorted((r.source_a, r.source_b))) for r in rows.itertuples()}
    missing = [k for k in expected.itertuples(index=False) if tuple(k) not in got]
    assert missing == []
    assert set(rows["kind"]) <= {"measurement", "transcription"}
    assert (rows["source_a"] != rows["source_b"]).all() or (rows["table_a"] != rows["table_b"]).all()
    # a pair whose sides share no setting is listed and says so, never compared silently
    listed = rows[~rows["comparable"].astype(bool)]
    assert listed["why"].str.contains("settings differ, not compared").all()
    # z is the gap over the combined SE wherever both SEs exist
    both = rows.dropna(subset=["se_a", "se_b"])
    assert ((both["z"] - both["diff"] / both["se_diff"]).abs() < 1e-9).all()


def test_a_15_pp_error_planted_in_a_real_row_is_found_and_named(real_history_copy):
    rows = _rows(real_history_copy)
    result = analyse(rows)
    # the rule: a compared pair in a group with an estimated offset, not a finding now, whose planted
    # 15 pp would be at least 4 of its residual SEs (so that |z| >= 3 is expected, not lucky)
    pairs = result.pairs[(result.pairs["offset_pairs"] > 0) & ~result.pairs["finding"]
                         & (result.pairs["z_resid"].abs() < 1)]
    resid_se = (pairs["se_diff"] ** 2 + pairs["tau"] ** 2 + pairs["offset_se"] ** 2) ** 0.5
    pairs = pairs[0.15 / resid_se >= 4].sort_values(["benchmark", "model", "table_a"])
    if pairs.empty:
        pytest.skip("no real pair precise enough for a 15 pp plant")
    target = pairs.iloc[0]
    from storage.db import connect
    with connect(real_history_copy) as con:
        n = con.execute("""UPDATE scores SET score = score + 0.15
                           WHERE snapshot_id = ? AND model_raw = ? AND benchmark = ?
                           RETURNING 1""", [int(target["snapshot_a"]), target["model_raw_a"],
                                            target["benchmark"]]).fetchall()
    assert len(n) >= 1
    found = analyse(_rows(real_history_copy)).findings
    hit = found[(found["model"] == target["model"]) & (found["benchmark"] == target["benchmark"])
                & (found["table_a"] == target["table_a"]) & (found["table_b"] == target["table_b"])]
    assert len(hit) == 1 and abs(float(hit["z_resid"].iloc[0])) >= DISAGREEMENT_Z
    assert {hit["source_a"].iloc[0], hit["source_b"].iloc[0]} == {target["source_a"], target["source_b"]}


def test_docs_disagreements_is_what_its_generator_produces(real_history_backfilled):
    module = docs_module("disagreements")
    assert module.main(["--from-db", str(real_history_backfilled), "--check"]) == 0


def test_the_analysis_stores_what_analysing_the_view_gives(real_history):
    """`analyze` stores the disagreement analysis (jobs/relations/disagreements.py) that the alert
    rule, `status` and the report read: on the real history, equal to analysing the view's rows now,
    frame by frame, and in the report's frames (storage.report) the same again."""
    from report.disagreements import of_frames
    from storage.disagreements import read_disagreements
    from storage.report import read_report
    want = analyse(_rows(real_history))
    with open_store(real_history).open(read_only=True) as con:
        got = read_disagreements(con)
        frames = read_report(con)
    assert got is not None and got.n_rows == len(_rows(real_history)) >= MIN_PAIRS
    for result in (got, of_frames(frames)):
        for part in ("pairs", "offsets", "transcriptions", "listed", "findings", "mismatches"):
            pd.testing.assert_frame_equal(getattr(result, part), getattr(want, part), check_exact=True, obj=part)
        assert result.n_units == want.n_units

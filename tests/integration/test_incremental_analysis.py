"""Incremental analysis per table (issue 23): after one source changed, `analyze` recomputes only
the tables (and A3 item groups) whose inputs changed, and every analysis table is the same as a
full analyze of a copy gives; a new day without new data recomputes only the day-relative
columns (jobs/analyze.py, jobs/relations/step.py, storage.fingerprint, migration 030)."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest

import analysis.contamination.a1
import analysis.trends
import jobs.collect
from jobs.analyze import DAY_ONLY_PLAN, analyze
from jobs.relations.contamination import RESOLVED_STATE
from helpers import reads_on_top
from storage import db
from storage.store import open_store

pytestmark = pytest.mark.xdist_group("test_incremental_analysis")   # its module fixtures are built once

REPLAY = Path(__file__).resolve().parents[1] / "fixtures" / "replay"
# several sources: ARC-AGI (no reference benchmarks), A1 on simple-evals' MMLU (references from Artificial Analysis and Epoch),
# A3 on LiveCodeBench's and MathArena's items, model dates from the cutoff tables and OpenRouter
SOURCES = ["arc_agi", "aider_polyglot", "simple_evals", "artificial_analysis", "epoch", "livecodebench", "matharena",
           "evalplus", "knowledge_cutoffs", "openrouter"]
# every table the analysis writes; `run_at` / `computed_at` say when a row was computed, which
# is the one thing an incremental run keeps from the earlier run for the rows it did not recompute
RESULT_TABLES = ["saturation", "saturation_trajectory", "frontier", "trends", "benchmark_tables",
                 "contamination_runs", "cutoff_resolutions", "benchmark_slices", "post_cutoff_slices",
                 "contamination_signals", "contamination_skips", "contamination_suspicions",
                 "disagreements", "disagreement_offsets",
                 # and what the history reads kept (storage/history_kept.py): the same rows as a full read keeps
                 "history_kept", "history_kept_basis"]
WHEN_COMPUTED = {"run_at", "computed_at", "stored_at"}
JSON_COLUMNS = {"evidence", "resolution", "conflicts", "parameters"}


# the fast lane's slice: a table nothing else reads, one item group (A3), the model dates
FAST_SOURCES = ["arc_agi", "livecodebench", "knowledge_cutoffs"]


def _analysed(tmp_path_factory, sources: list[str]) -> tuple[Path, datetime]:
    path = tmp_path_factory.mktemp("incr") / "base.duckdb"
    jobs.collect.collect(open_store(path), sources, replay_dir=REPLAY)
    now = datetime.now(timezone.utc).replace(microsecond=0) + timedelta(days=1)
    result = analyze(open_store(path), now=now)
    assert result["plan"] == "full"
    return path, now


@pytest.fixture(scope="module")
def analysed(tmp_path_factory) -> tuple[Path, datetime]:
    """The sources collected and analysed once (a full analysis); each test changes a copy."""
    return _analysed(tmp_path_factory, SOURCES)


@pytest.fixture(scope="module")
def analysed_fast(tmp_path_factory) -> tuple[Path, datetime]:
    return _analysed(tmp_path_factory, FAST_SOURCES)


def _copy(src: Path, dst: Path) -> Path:
    shutil.copyfile(src, dst)
    return dst


def _result_tables(path: Path) -> dict[str, pd.DataFrame]:
    out = {}
    with db.connect(path, read_only=True) as con:
        for table in RESULT_TABLES:
            cols = [r[0] for r in con.execute(f"DESCRIBE {table}").fetchall() if r[0] not in WHEN_COMPUTED]
            df = con.execute(f"SELECT {', '.join(cols)} FROM {table}").df()
            for col in JSON_COLUMNS & set(df.columns):   # the same JSON, whatever the key order
                df[col] = [v if not isinstance(v, str) else json.dumps(json.loads(v), sort_keys=True)
                           for v in df[col]]
            order = df.astype(str)
            df = df.loc[order.sort_values(list(order.columns)).index].reset_index(drop=True)
            out[table] = df
    return out


def assert_same_results(incremental: Path, full: Path) -> None:
    got, want = _result_tables(incremental), _result_tables(full)
    for table in RESULT_TABLES:
        assert len(want[table]) == len(got[table]), table
        pd.testing.assert_frame_equal(got[table], want[table], check_exact=True, obj=table)


def _change_source(path: Path, source: str, when: datetime) -> None:
    """A new snapshot of `source` observed at `when`: its newest rows again, one score moved by
    a point, one item result flipped (what a collection of a changed page stores)."""
    with db.connect(path) as con:
        last = con.execute("SELECT max(id) FROM snapshots WHERE source = ? AND status IS DISTINCT FROM 'held'",
                           [source]).fetchone()[0]
        new = con.execute("SELECT max(id) + 1 FROM snapshots").fetchone()[0]
        con.execute("""INSERT INTO snapshots SELECT * REPLACE (? AS id, sha256 || '-changed' AS sha256,
                           CAST(? AS TIMESTAMPTZ) AS observed_at, CAST(? AS TIMESTAMPTZ) AS first_seen,
                           CAST(? AS TIMESTAMPTZ) AS last_seen)
                       FROM snapshots WHERE id = ?""", [new, when, when, when, last])
        con.execute("""INSERT INTO scores SELECT * REPLACE (? AS snapshot_id,
                           CASE WHEN row_number() OVER (ORDER BY benchmark, model, setting) = 1 AND metric = 'proportion'
                                THEN greatest(0.0, score - 0.01) ELSE score END AS score)
                       FROM scores WHERE snapshot_id = ?""", [new, last])
        con.execute("""INSERT INTO item_results SELECT * REPLACE (? AS snapshot_id,
                           CASE WHEN row_number() OVER (ORDER BY benchmark, model, item_id) = 1 THEN 1 - score
                                ELSE score END AS score)
                       FROM item_results WHERE snapshot_id = ?""", [new, last])


@pytest.mark.parametrize("source, a3, link", [
    # the fast lane keeps the unlinked table (test_..._fast); these repeat it with A1 and A3 recomputed
    pytest.param("arc_agi", False, False, marks=pytest.mark.slow),   # tables nothing else reads
    pytest.param("livecodebench", True, True, marks=pytest.mark.slow),   # items (A3); a reference of Aider's
    pytest.param("simple_evals", False, True, marks=pytest.mark.slow),   # MMLU's references: A1/A2 recomputed
])
def test_one_changed_source_gives_the_results_of_a_full_analysis(analysed, tmp_path, monkeypatch, source, a3, link):
    _check_one_changed_source(analysed, tmp_path, monkeypatch, source, a3, link)


def test_one_changed_source_gives_the_results_of_a_full_analysis_fast(analysed_fast, tmp_path, monkeypatch):
    """The fast lane's case: ARC-AGI changed beside LiveCodeBench's items (A3 kept as stored)."""
    _check_one_changed_source(analysed_fast, tmp_path, monkeypatch, "arc_agi", False, False)


def _check_one_changed_source(analysed, tmp_path, monkeypatch, source, a3, link):
    base, now = analysed
    inc = _copy(base, tmp_path / "incremental.duckdb")
    _change_source(inc, source, now + timedelta(hours=1))
    full = _copy(inc, tmp_path / "full.duckdb")
    later = now + timedelta(hours=2)

    computed: list[str] = []
    real = analysis.trends.trends_table

    def traced(df, **kwargs):
        computed.extend(sorted(set(df["table_id"])))
        return real(df, **kwargs)

    monkeypatch.setattr("jobs.relations.trends.trends_table", traced)
    on_top = reads_on_top(monkeypatch)    # per read, the benchmarks read on top of their kept rows
    result = analyze(open_store(inc), now=later)
    with db.connect(inc, read_only=True) as con:
        # the source's tables, and every table of a benchmark whose dated items it changed (material dates)
        ours = {r[0] for r in con.execute("""SELECT DISTINCT table_id FROM benchmark_tables WHERE list_contains(sources, ?)
                                                OR benchmark IN (SELECT benchmark FROM item_results WHERE source = ?)""",
                                          [source, source]).fetchall()}
        n_tables = con.execute("SELECT count(*) FROM analysis_unit_inputs WHERE part = 'table'").fetchone()[0]
    recomputed = int(result["plan"].split(" table(s)")[0])   # also tables of only excluded rows, if any
    assert len(ours) <= recomputed < n_tables, (result["plan"], ours)
    assert (" 0 A3" not in result["plan"]) == a3 and ("A1/A2" in result["plan"]) == link, result["plan"]
    assert set(computed) <= ours and len(ours) < n_tables
    read_on_top = [b for read in on_top for b in read]
    assert read_on_top and set(read_on_top) <= {t.split(":")[0] for t in ours}, on_top
    monkeypatch.setattr("jobs.relations.trends.trends_table", real)
    full_result = analyze(open_store(full), now=later, incremental=False)
    assert full_result["plan"] == "full"
    assert_same_results(inc, full)
    kept = result["saturation"].sort_values(["table_id", "population"], ignore_index=True)
    want = full_result["saturation"].sort_values(["table_id", "population"], ignore_index=True)
    assert kept["table_id"].tolist() == want["table_id"].tolist()
    assert kept["s_index"].astype(float).round(12).equals(want["s_index"].astype(float).round(12))


def test_a_new_day_without_new_data_recomputes_only_the_day_relative_columns(analysed_fast, tmp_path, monkeypatch):
    base, now = analysed_fast
    inc = _copy(base, tmp_path / "incremental.duckdb")
    full = _copy(base, tmp_path / "full.duckdb")
    next_day = now + timedelta(days=1)

    def boom(*args, **kwargs):
        raise AssertionError("recomputed on a new day without new data")

    def on_no_rows(real):
        def call(df, *args, **kwargs):
            assert df.empty, "recomputed on a new day without new data"
            return real(df, *args, **kwargs)
        return call

    import jobs.relations.shared
    import jobs.relations.trajectory
    import jobs.relations.trends
    for module, name in ((jobs.relations.trends, "trends_table"), (jobs.relations.trajectory, "saturation_trajectory"),
                         (jobs.relations.shared, "saturation_table")):
        monkeypatch.setattr(module, name, on_no_rows(getattr(module, name)))
    for name in ("analysis.contamination.a1.a1_one", "analysis.contamination.a3.a3_one"):
        monkeypatch.setattr(name, boom)
    monkeypatch.setattr("jobs.relations.step.plan", boom)     # not even planned: the stored results move
    result = analyze(open_store(inc), now=next_day)
    assert result["plan"] == DAY_ONLY_PLAN and not result["skipped"]
    monkeypatch.undo()
    with db.connect(inc, read_only=True) as con:
        trends = con.execute("SELECT as_of, stale_days, trend_end FROM trends").df()
    assert len(trends) and (pd.to_datetime(trends["as_of"], utc=True) == pd.Timestamp(next_day)).all()
    with db.connect(base, read_only=True) as con:
        before = con.execute("SELECT sum(stale_days) FROM trends").fetchone()[0]
    assert trends["stale_days"].sum() == before + len(trends.dropna(subset=["stale_days"]))
    analyze(open_store(full), now=next_day, incremental=False)
    assert_same_results(inc, full)


@pytest.mark.slow   # three analyses; the fast lane keeps test_a_new_day_without_new_data_recomputes_only_the_day_relative_columns
def test_a_new_day_that_brings_a_dated_row_into_the_window_is_analysed(analysed_fast, tmp_path):
    """A row dated after the last analysis' day (an evaluation announced ahead) enters the analysis
    when its day comes: not a move of the day-relative columns, and the same results as a full run."""
    base, now = analysed_fast
    inc = _copy(base, tmp_path / "incremental.duckdb")
    with db.connect(inc) as con:
        con.execute("""UPDATE scores SET evaluated_at = CAST(? AS TIMESTAMPTZ)
                       WHERE rowid = (SELECT min(rowid) FROM scores WHERE source = 'arc_agi')""",
                    [now + timedelta(hours=12)])
    analyze(open_store(inc), now=now)                     # the row lies ahead: stored, not analysed yet
    full = _copy(inc, tmp_path / "full.duckdb")
    next_day = now + timedelta(days=1)
    result = analyze(open_store(inc), now=next_day)
    assert result["plan"] not in (DAY_ONLY_PLAN, "full") and result["plan"].split(" ")[0] != "0", result["plan"]
    analyze(open_store(full), now=next_day, incremental=False)
    assert_same_results(inc, full)


def test_the_resolved_state_named_by_the_day_move_is_the_analysis_one():
    from analysis.contamination.suspicions import RESOLVED
    assert RESOLVED_STATE == RESOLVED


def _changed_tables(path: Path, now: datetime) -> str:
    return analyze(open_store(path), now=now)["plan"]


@pytest.mark.slow
def test_a_changed_row_of_an_old_snapshot_is_analysed_again(analysed_fast, tmp_path):
    """A score row of an earlier snapshot changed in place (same count, same snapshot, a table
    whose newest rows did not move): its table is recomputed, as a full analysis would."""
    base, now = analysed_fast
    inc = _copy(base, tmp_path / "incremental.duckdb")
    with db.connect(inc) as con:
        con.execute("""UPDATE scores SET score = score * 0.5
                       WHERE rowid = (SELECT min(sc.rowid) FROM scores sc WHERE sc.source = 'arc_agi'
                                        AND sc.metric = 'proportion' AND sc.score > 0
                                        AND sc.snapshot_id < (SELECT max(id) FROM snapshots WHERE source = 'arc_agi'))""")
    full = _copy(inc, tmp_path / "full.duckdb")
    plan = _changed_tables(inc, now + timedelta(hours=1))
    assert plan != "full" and not plan.startswith("0 "), plan
    analyze(open_store(full), now=now + timedelta(hours=1), incremental=False)
    assert_same_results(inc, full)


@pytest.mark.slow
def test_a_model_whose_dates_changed_has_its_tables_analysed_again(analysed_fast, tmp_path, monkeypatch):
    """A model's release date changed (a claim of model_dates, no score row moved): every table
    holding the model is recomputed (its units compare the models' own fingerprints), and the
    results are those of a full analysis; without that comparison they would not be."""
    base, now = analysed_fast
    inc = _copy(base, tmp_path / "incremental.duckdb")
    with db.connect(inc) as con:
        model = con.execute("""SELECT model FROM model_dates WHERE source = 'arc_agi' AND release_date IS NOT NULL
                               ORDER BY model LIMIT 1""").fetchone()[0]
        con.execute("UPDATE model_dates SET release_date = release_date + INTERVAL 400 DAY WHERE model = ?", [model])
    full, blind = _copy(inc, tmp_path / "full.duckdb"), _copy(inc, tmp_path / "blind.duckdb")
    later = now + timedelta(hours=1)
    plan = _changed_tables(inc, later)
    assert plan != "full" and not plan.startswith("0 "), plan
    analyze(open_store(full), now=later, incremental=False)
    assert_same_results(inc, full)
    # the same change seen without the models' fingerprints: no table recomputed, other results
    monkeypatch.setattr("storage.fingerprint.models_in", lambda con, models: (set(), set()))
    assert _changed_tables(blind, later).startswith("0 ")
    with pytest.raises(AssertionError):
        assert_same_results(blind, full)


@pytest.mark.slow   # the module's full analysis with A1 (simple-evals' MMLU), then one more
def test_a_run_on_the_data_of_an_earlier_run_holds_its_tests(analysed, tmp_path, monkeypatch):
    """Only a model date changed (a claim of model_dates; no score or item moved): the contamination
    run has the key of the stored run (the same snapshots), and every test of that run is held at its
    stored numbers; A1 draws no bootstrap for them (storage.contamination.read_stored_tests). Before,
    the hold read only the newest run of *another* key, so every A1 p-value was drawn again."""
    base, now = analysed
    inc = _copy(base, tmp_path / "incremental.duckdb")
    with db.connect(inc) as con:
        before = con.execute("SELECT run_id, model, benchmark, source, signal, detail, p_value, effect, flagged "
                             "FROM contamination_signals").df()
        model = con.execute("""SELECT model FROM model_dates WHERE release_date IS NOT NULL
                               ORDER BY model LIMIT 1""").fetchone()[0]
        con.execute("UPDATE model_dates SET release_date = release_date + INTERVAL 30 DAY WHERE model = ?", [model])
    assert before["run_id"].nunique() == 1 and (before["signal"] == "A1").sum() >= 5
    calls = []
    real = analysis.contamination.a1.a1_one
    monkeypatch.setattr("analysis.contamination.a1.a1_one", lambda *a, **k: calls.append(a[0]["model"]) or real(*a, **k))
    analyze(open_store(inc), now=now + timedelta(hours=1), incremental=False)
    with db.connect(inc, read_only=True) as con:
        after = con.execute("SELECT run_id, model, benchmark, source, signal, detail, p_value, effect, flagged, "
                            "evidence FROM contamination_signals").df()
    assert after["run_id"].unique().tolist() == before["run_id"].unique().tolist()     # the same key, replaced
    keys = ["model", "benchmark", "source", "signal", "detail"]
    both = after.merge(before, on=keys, suffixes=("", "_before"))
    held = [json.loads(e)["held"] for e in both["evidence"]]
    assert len(both) and all(h is not None and h["from_run"] == both.at[0, "run_id"] for h in held)
    for col in ("p_value", "effect", "flagged"):
        assert both[col].tolist() == both[f"{col}_before"].tolist(), col
    new_a1 = after[after["signal"] == "A1"].merge(before[keys], on=keys, how="left", indicator=True)
    assert len(calls) == int((new_a1["_merge"] == "left_only").sum())       # only tests the base run lacked

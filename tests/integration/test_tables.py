"""A leaderboard table is the unit (issue 20): the table rule (registry/tables.py), per-table
saturation, trajectory, frontier and trends that never cross a table or a release, the result
dating rule (a cross-source alias never moves a result's date) and migration 018."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import jobs.saturation as job
from jobs.relations.shared import read_dated_history
from jobs.relations.post_cutoff import post_cutoff_saturation
from dating_oracle import dated_history
from registry import tables as rt
from storage import db, reads
from storage import saturation as store
from storage.db import insert_frame
from jobs.sync import connect_synced
from storage.store import open_store

NOW = pd.Timestamp("2026-01-01")


# --- the rule -------------------------------------------------------------------------------------

def test_table_id_names_benchmark_source_and_version():
    assert rt.table_id("humaneval", "evalplus") == "humaneval:evalplus"
    assert rt.table_id("humaneval", "evalplus", "") == "humaneval:evalplus"
    assert rt.table_id("humaneval", "evalplus", None) == "humaneval:evalplus"
    assert rt.table_id("livebench", "livebench", "2024-11-25") == "livebench:livebench:2024-11-25"
    assert rt.table_name("HumanEval", "evalplus") == "HumanEval (EvalPlus)"
    assert rt.table_name("LiveBench", "livebench", "2024-11-25") == "LiveBench (LiveBench 2024-11-25)"
    assert rt.table_name("MMLU", "pooled", "", ["lmarena", "simple_evals"]) == "MMLU (pooled: LMArena, simple-evals)"


def test_the_shipped_declarations_load_and_name_the_owners():
    rules = rt.load_table_rules()
    assert rules.primary_source("humaneval") == "evalplus"
    assert rules.primary_source("humaneval_plus") == "evalplus"
    assert rules.primary_source("swebench_verified") == "swebench"
    assert rules.primary_source("livebench_task_amps_hard") == "livebench"
    assert rules.primary_source("gpqa_diamond") is None          # no owner leaderboard: the default rule
    assert all(r.kind != "pool" for r in rules.rules)             # default: no pooling


def write_rules(tmp_path, body: str):
    (tmp_path / "tables.csv").write_text("kind,benchmark,sources,reason\n" + body, encoding="utf-8")
    return rt.load_table_rules(tmp_path)


@pytest.mark.parametrize("body, message", [
    ("primary,mmlu,a;b,why\n", "exactly one source"),
    ("pool,mmlu,a,why\n", "at least two"),
    ("primary,mmlu,a,\n", "reason"),
    ("merge,mmlu,a,why\n", "kind"),
    ("pool,mmlu,a;b,why\npool,mmlu,b;c,why\n", "two pools"),
])
def test_a_malformed_declaration_names_its_line(tmp_path, body, message):
    with pytest.raises(ValueError, match=message):
        write_rules(tmp_path, body)


def test_a_declared_pool_is_one_table_but_never_pools_a_release(tmp_path):
    rules = write_rules(tmp_path, "pool,mmlu,lmarena;simple_evals,same 14042 questions and harness (test)\n")
    frame = pd.DataFrame({"benchmark": ["mmlu", "mmlu", "mmlu", "mmlu", "gpqa_diamond"],
                          "source": ["lmarena", "simple_evals", "epoch", "lmarena", "simple_evals"],
                          "table_version": ["", "", "", "v2", ""]})
    out = rt.assign_tables(frame, rules)
    assert out["table_id"].tolist() == ["mmlu:pooled", "mmlu:pooled", "mmlu:epoch", "mmlu:lmarena:v2",
                                        "gpqa_diamond:simple_evals"]
    assert out["table_source"].tolist() == ["pooled", "pooled", "epoch", "lmarena", "simple_evals"]


def test_primary_is_the_owner_its_newest_release_else_the_largest_table():
    tables = pd.DataFrame([
        ("humaneval:simple_evals", "humaneval", "simple_evals", "", 300),
        ("humaneval:evalplus", "humaneval", "evalplus", "", 100),
        ("livebench:livebench:2024-11-25", "livebench", "livebench", "2024-11-25", 90),
        ("livebench:livebench:2026-01-08", "livebench", "livebench", "2026-01-08", 80),
        ("gpqa_diamond:simple_evals", "gpqa_diamond", "simple_evals", "", 26),
        ("gpqa_diamond:epoch", "gpqa_diamond", "epoch", "", 130),
    ], columns=["table_id", "benchmark", "source", "table_version", "n_models"])
    primary = tables.loc[rt.primary_flags(tables).to_numpy(), "table_id"].tolist()
    assert sorted(primary) == ["gpqa_diamond:epoch", "humaneval:evalplus", "livebench:livebench:2026-01-08"]


def test_undeclared_primary_is_the_own_run_with_the_longest_dated_history_and_says_why():
    """GPQA (no owner's board declared): Epoch's own runs, dated over years, lead — not a two-point
    Artificial Analysis series with more models, nor Epoch's external report of others' numbers.
    Without dates the rule falls back to the most models; a declared primary keeps its reason."""
    T = pd.Timestamp
    tables = pd.DataFrame([
        ("gpqa_diamond:artificial_analysis", "gpqa_diamond", "artificial_analysis", "", 300, T("2026-01-01"), T("2026-02-01")),
        ("gpqa_diamond:epoch", "gpqa_diamond", "epoch", "", 120, T("2023-06-01"), T("2026-03-01")),
        ("gpqa_diamond:epoch:external", "gpqa_diamond", "epoch", "external", 400, T("2022-01-01"), T("2026-03-01")),
        ("mmlu:epoch:external", "mmlu", "epoch", "external", 90, T("2021-01-01"), T("2025-01-01")),
        ("mmlu:simple_evals", "mmlu", "simple_evals", "", 20, T("2024-04-01"), T("2024-06-01")),
        ("humaneval:simple_evals", "humaneval", "simple_evals", "", 300, T("2023-01-01"), T("2025-01-01")),
        ("humaneval:evalplus", "humaneval", "evalplus", "", 100, T("2024-01-01"), T("2024-03-01")),
    ], columns=["table_id", "benchmark", "source", "table_version", "n_models", "first_dated_at", "last_dated_at"])
    flags, reasons = rt.primary_flags(tables), rt.primary_reasons(tables)
    assert sorted(tables.loc[flags.to_numpy(), "table_id"]) == ["gpqa_diamond:epoch", "humaneval:evalplus",
                                                                 "mmlu:simple_evals"]
    why = dict(zip(tables["table_id"], reasons))
    assert why["gpqa_diamond:epoch"].startswith("the longest dated history (1004 days")
    assert "own runs come before an external report" in why["mmlu:simple_evals"]
    assert why["humaneval:evalplus"].startswith("declared in registry/tables.csv: ")
    assert pd.isna(why["gpqa_diamond:artificial_analysis"])
    undated = tables.drop(columns=["first_dated_at", "last_dated_at"])
    assert "gpqa_diamond:artificial_analysis" in set(undated.loc[rt.primary_flags(undated).to_numpy(), "table_id"])


# --- per table, end to end ----------------------------------------------------------------------

def snapshot(sid: int, source: str, observed: str, file_name: str = "f.csv") -> dict:
    t = pd.Timestamp(observed, tz="UTC")
    return {"id": sid, "source": source, "sha256": f"s{sid}", "blob_sha256": [f"s{sid}"], "file_names": [file_name],
            "observed_at": t, "first_seen": t, "last_seen": t, "origin": "ingest", "parser_version": 1,
            "n_scores": 0, "n_items": 0, "n_models": 0, "n_rejects": 0, "status": "ok"}


def score(sid: int, source: str, bench: str, model: str, value: float, version: str = "", evaluated=None) -> dict:
    return {"snapshot_id": sid, "source": source, "benchmark": bench, "benchmark_raw": bench, "model": model,
            "model_raw": model, "setting": "", "score": value, "metric": "proportion", "n_items": 164,
            "excluded_reason": "", "evaluated_at": pd.Timestamp(evaluated, tz="UTC") if evaluated else pd.NaT,
            "variant": "", "population": "models", "table_version": version}


def fill(path, snaps: list[dict], scores: list[dict], dates: list[tuple[str, str, str]] = ()) -> None:
    with connect_synced(open_store(path)) as con:
        insert_frame(con, "snapshots", pd.DataFrame(snaps))
        frame = pd.DataFrame(scores)
        frame["evaluated_at"] = pd.to_datetime(frame["evaluated_at"], utc=True)
        insert_frame(con, "scores", frame)
        if dates:
            insert_frame(con, "model_dates", pd.DataFrame(
                [{"model": m, "model_raw": m, "source": src, "snapshot_id": 1, "release_date": pd.Timestamp(d).date(),
                  "knowledge_cutoff": None, "provenance": "leaderboard", "org": None,
                  "observed_at": pd.Timestamp("2024-01-01", tz="UTC")} for m, src, d in dates]))


def two_sources_and_two_releases(path) -> None:
    """HumanEval from EvalPlus (spread-out top 5) and simple-evals (bunched top 5); a LiveBench-like
    source whose old release has a record (0.95) its new release never reaches."""
    snaps = [snapshot(1, "evalplus", "2024-06-01"), snapshot(2, "simple_evals", "2024-07-01"),
             snapshot(3, "livebench", "2024-11-25", "livebench_table_2024_11_25.csv"),
             snapshot(4, "livebench", "2025-06-01", "livebench_table_2025_05_30.csv")]
    rows = [score(1, "evalplus", "humaneval", f"m{i}", v) for i, v in enumerate([0.95, 0.85, 0.75, 0.65, 0.55, 0.5])]
    rows += [score(2, "simple_evals", "humaneval", f"m{i}", v)
             for i, v in enumerate([0.90, 0.899, 0.898, 0.897, 0.896, 0.7])]
    rows += [score(3, "livebench", "livebench", f"m{i}", v, "2024-11-25")
             for i, v in enumerate([0.95, 0.6, 0.5, 0.45, 0.4, 0.3])]
    rows += [score(4, "livebench", "livebench", f"m{i}", v, "2025-05-30")
             for i, v in enumerate([0.55, 0.54, 0.53, 0.52, 0.51, 0.5])]
    fill(path, snaps, rows)


def test_every_result_is_per_table_and_no_running_best_crosses_a_release(synced_db):
    two_sources_and_two_releases(synced_db)
    with connect_synced(open_store(synced_db)) as con:
        job.run_saturation(con, now=NOW)
        latest = con.execute("SELECT * FROM saturation_latest WHERE scope = 'all'").df().set_index("table_id")
        traj = con.execute("SELECT * FROM saturation_trajectory").df()
        frontier = con.execute("SELECT * FROM frontier").df()
        trends = con.execute("SELECT * FROM trends").df().set_index("table_id")
        tables = con.execute("SELECT * FROM benchmark_tables").df().set_index("table_id")
    # HumanEval: one row per source, each from its own top 5 (the paper's formula, n = 164)
    for table, top in (("humaneval:evalplus", (0.95, 0.55)), ("humaneval:simple_evals", (0.90, 0.896))):
        s1, sk = top
        se = np.sqrt(s1 * (1 - s1) / 164 ** 0.5 + sk * (1 - sk) / 164 ** 0.5)
        assert latest.loc[table, "s_index"] == pytest.approx(np.exp(-((s1 - sk) / se) ** 2))
        assert latest.loc[table, "source"] == table.split(":")[1]
        assert list(latest.loc[table, "sources"]) == [table.split(":")[1]]
        assert latest.loc[table, "benchmark"] == "humaneval"
    # LiveBench: only the newest release has a current level; its frontier is its own best
    assert "livebench:livebench:2024-11-25" not in latest.index
    assert trends.loc["livebench:livebench:2025-05-30", "frontier"] == pytest.approx(0.55)
    assert trends.loc["livebench:livebench:2024-11-25", "frontier"] == pytest.approx(0.95)
    new = frontier[frontier["table_id"] == "livebench:livebench:2025-05-30"]
    assert new["frontier"].max() == pytest.approx(0.55)
    new_traj = traj[traj["table_id"] == "livebench:livebench:2025-05-30"]
    assert all(max(t) <= 0.55 + 1e-12 for t in new_traj["top_scores"])
    # every stored row names one table of one source
    for frame in (traj, frontier):
        assert set(frame["source"]) <= {"evalplus", "simple_evals", "livebench"}
        assert (frame["table_id"].str.split(":").str[1] == frame["source"]).all()
    assert tables.loc["humaneval:evalplus", "is_primary"] and not tables.loc["humaneval:simple_evals", "is_primary"]
    assert tables.loc["livebench:livebench:2025-05-30", "is_primary"]
    assert not tables.loc["livebench:livebench:2024-11-25", "is_primary"]
    assert tables.loc["humaneval:evalplus", "name"] == "HumanEval (EvalPlus)"
    assert tables.loc["livebench:livebench:2024-11-25", "table_version"] == "2024-11-25"


def test_latest_scores_table_id_is_the_registry_rule(synced_db):
    two_sources_and_two_releases(synced_db)
    with connect_synced(open_store(synced_db)) as con:
        view = con.execute("SELECT benchmark, source, table_version, table_id FROM latest_scores").df()
    assert len(view)
    assert view["table_id"].tolist() == [rt.table_id(b, s, v) for b, s, v in
                                         zip(view["benchmark"], view["source"], view["table_version"])]


def test_post_cutoff_scope_is_per_table_too():
    latest = pd.DataFrame([score(1, "evalplus", "humaneval", f"m{i}", v) for i, v in
                           enumerate([0.95, 0.85, 0.75, 0.65, 0.55])]
                          + [score(2, "simple_evals", "humaneval", f"m{i}", v) for i, v in
                             enumerate([0.90, 0.899, 0.898, 0.897, 0.896])])
    latest["observed_at"] = pd.Timestamp("2024-07-01")
    slices = pd.DataFrame({"benchmark": "humaneval", "model": [f"m{i}" for i in range(5)], "status": "post"})
    registry = pd.DataFrame({"id": ["humaneval"], "n_items": [164], "ceiling": [1.0], "chance": [0.0]})
    sat = post_cutoff_saturation(latest, slices, registry).set_index("table_id")
    assert sorted(sat.index) == ["humaneval:evalplus", "humaneval:simple_evals"]
    assert sat.loc["humaneval:simple_evals", "s_index"] > 0.9 > sat.loc["humaneval:evalplus", "s_index"]
    assert list(sat.loc["humaneval:evalplus", "sources"]) == ["evalplus"]


# --- dating: a cross-source alias never moves a result's date ------------------------------------

def test_a_release_date_from_another_source_never_moves_an_evaluated_result(synced_db, caplog):
    """Aider's deepseek-chat row (evaluated 2024-12-21) shares its name with Epoch's deepseek-chat
    (released 2025-12-01): the result stays at 2024-12-21, in pandas and in SQL; the conflict is
    counted and logged. A result without an evaluation date is still bounded by the release."""
    snaps = [snapshot(1, "aider_polyglot", "2024-12-22")]
    rows = [score(1, "aider_polyglot", "aider_polyglot", "deepseek-chat", 0.48, evaluated="2024-12-21")]
    rows += [score(1, "aider_polyglot", "aider_polyglot", f"m{i}", 0.3 + i / 100, evaluated="2024-12-01")
             for i in range(5)]
    rows += [score(1, "aider_polyglot", "aider_polyglot", "undated", 0.2)]
    fill(synced_db, snaps, rows, dates=[("deepseek-chat", "epoch", "2025-12-01"), ("undated", "epoch", "2025-02-01")])
    caplog.set_level("INFO", logger="benchwatch.analysis.dating")
    with connect_synced(open_store(synced_db)) as con:
        full = dated_history(store.read_score_history(con), reads.read_model_date_claims(con))
        pruned = read_dated_history(con)
        job.run_saturation(con, now=NOW)
        frontier = con.execute("SELECT as_of, frontier_model FROM frontier ORDER BY as_of").df()
        trend_end = con.execute("SELECT trend_end FROM trends").fetchone()[0]
    for h in (full, pruned):
        row = h[h["model"] == "deepseek-chat"].iloc[0]
        assert row["date"] == pd.Timestamp("2024-12-21") and row["date_source"] == "evaluated_at"
        assert bool(row["date_conflict"])
        undated = h[h["model"] == "undated"].iloc[0]
        assert undated["date"] == pd.Timestamp("2025-02-01") and undated["date_source"] == "release_date"
    assert "evaluated before their model's release date" in caplog.text
    record = frontier[frontier["frontier_model"] == "deepseek-chat"]["as_of"].iloc[0]
    assert pd.Timestamp(record).tz_convert(None) == pd.Timestamp("2024-12-21")
    assert pd.Timestamp(trend_end).tz_convert(None) == pd.Timestamp("2025-02-01")   # never 2025-12-01


# --- migration 018 --------------------------------------------------------------------------------

def test_migration_018_keys_old_rows_by_table_and_keeps_pooled_ones_as_legacy(tmp_path, monkeypatch):
    path = tmp_path / "old.duckdb"
    shipped = db.migrations()
    monkeypatch.setattr(db, "migrations", lambda: tuple(m for m in shipped if m[0] < 18))
    with db.connect(path) as con:                           # a file as benchwatch 017 left it
        insert_frame(con, "snapshots", pd.DataFrame([
            snapshot(1, "evalplus", "2024-06-01"), snapshot(2, "simple_evals", "2024-07-01"),
            snapshot(3, "livebench", "2024-11-25", "livebench_table_2024_11_25_2024-11-25.csv"),
            snapshot(4, "aider_polyglot", "2024-12-22")]))
        frame = pd.DataFrame([score(1, "evalplus", "humaneval", "a", 0.9), score(2, "simple_evals", "humaneval", "a", 0.8),
                              score(3, "livebench", "livebench", "a", 0.5),
                              score(4, "aider_polyglot", "aider_polyglot", "a", 0.4)]).drop(columns="table_version")
        insert_frame(con, "scores", frame)
        sat = pd.DataFrame({"benchmark": ["humaneval", "aider_polyglot", "livebench"], "as_of": pd.Timestamp("2024-12-22", tz="UTC"),
                            "scope": "all", "population": "models", "k": 5, "alpha": 0.5, "z": 1.96, "s_index": 0.5,
                            "bin": "moderate", "run_at": pd.Timestamp("2024-12-22", tz="UTC")})
        insert_frame(con, "saturation", sat)
        insert_frame(con, "frontier", pd.DataFrame({"benchmark": ["humaneval"], "as_of": pd.Timestamp("2024-06-01", tz="UTC"),
                                                    "k": 5, "n_models": 5, "frontier": 0.9, "is_record": True,
                                                    "run_at": pd.Timestamp("2024-12-22", tz="UTC")}))
    monkeypatch.undo()
    with db.connect(path) as con:
        rows = con.execute("SELECT benchmark, table_id, source FROM saturation ORDER BY benchmark").fetchall()
        latest = con.execute("SELECT table_id FROM saturation_latest ORDER BY table_id").fetchall()
        versions = con.execute("SELECT source, table_version FROM scores ORDER BY source").fetchall()
        assert con.execute("SELECT count(*) FROM frontier").fetchone()[0] == 0      # recomputed by the next run
    assert rows == [("aider_polyglot", "aider_polyglot:aider_polyglot", "aider_polyglot"),
                    ("humaneval", "humaneval:pooled-legacy", "pooled-legacy"),
                    ("livebench", "livebench:livebench:2024-11-25", "livebench")]
    assert latest == [("aider_polyglot:aider_polyglot",), ("livebench:livebench:2024-11-25",)]
    assert dict(versions)["livebench"] == "2024-11-25" and dict(versions)["evalplus"] == ""


def test_the_shrink_guard_compares_a_release_with_its_own_table_only(synced_db):
    """A new LiveBench release with fewer models is another table, not a truncated download; a
    truncated copy of that release is still held."""
    from storage.shrink_guard import shrink_reason
    snaps = [snapshot(1, "livebench", "2024-11-25"), snapshot(2, "livebench", "2025-06-01"),
             snapshot(3, "livebench", "2025-06-02")]
    rows = [score(1, "livebench", "livebench", f"m{i}", 0.5, "2024-11-25") for i in range(10)]
    rows += [score(2, "livebench", "livebench", f"m{i}", 0.5, "2025-05-30") for i in range(3)]
    rows += [score(3, "livebench", "livebench", "m0", 0.5, "2025-05-30")]
    fill(synced_db, snaps, rows)
    with connect_synced(open_store(synced_db)) as con:
        assert shrink_reason(con, "livebench", 2, pd.Timestamp("2025-06-01", tz="UTC")) == ""
        assert "livebench (2025-05-30): 1 scores vs 3" in shrink_reason(con, "livebench", 3,
                                                                         pd.Timestamp("2025-06-02", tz="UTC"))


def test_the_html_report_draws_the_primary_table_its_releases_and_the_other_tables(synced_db):
    """The section of a benchmark is headed by its primary table; each release of the primary
    source is its own series with a marked break; another source's table is shown beside."""
    from report.html import render_report
    from storage.report import read_html_report
    two_sources_and_two_releases(synced_db)
    with connect_synced(open_store(synced_db)) as con:
        job.run_saturation(con, now=NOW)
        frames = read_html_report(con)
    page = render_report(frames, now=NOW.to_pydatetime())
    section = page[page.index('id="bench-livebench"'):]
    section = section[:section.index("</section>")]
    assert "LiveBench (global average) (LiveBench 2025-05-30)" in section
    assert "release 2025-05-30" in section                      # the marked break
    assert "frontier 2024-11-25" in section and "frontier 2025-05-30" in section   # one series per release
    humaneval = page[page.index('id="bench-humaneval"'):]
    humaneval = humaneval[:humaneval.index("</section>")]
    assert "<h3>HumanEval (EvalPlus)" in humaneval
    assert "<h4>HumanEval (simple-evals)" in humaneval            # the other table, beside


def test_a_declared_pool_is_computed_as_one_table_with_its_sources(synced_db, tmp_path, monkeypatch):
    rules = write_rules(tmp_path, "pool,humaneval,evalplus;simple_evals,same items and harness (a test's claim)\n")
    monkeypatch.setattr(rt, "load_table_rules", lambda directory=None: rules)
    two_sources_and_two_releases(synced_db)
    with connect_synced(open_store(synced_db)) as con:
        job.run_saturation(con, now=NOW)
        row = con.execute("""SELECT table_id, source, sources, top_scores FROM saturation_latest
                             WHERE benchmark = 'humaneval' AND scope = 'all'""").fetchall()
        tables = con.execute("SELECT table_id, source, sources, name FROM benchmark_tables "
                             "WHERE benchmark = 'humaneval'").fetchall()
    assert [(t, s, list(ss)) for t, s, ss, _ in row] == [("humaneval:pooled", "pooled", ["evalplus", "simple_evals"])]
    assert list(row[0][3]) == pytest.approx([0.95, 0.899, 0.898, 0.897, 0.896])   # each model at its best of both
    assert tables == [("humaneval:pooled", "pooled", ["evalplus", "simple_evals"],
                       "HumanEval (pooled: EvalPlus, simple-evals)")]


def test_a_replaced_release_keeps_its_rows_but_is_no_current_level(synced_db):
    """Analysed while it was current, the old release keeps its saturation rows; once the new
    release is in, saturation_latest shows only the current table (benchmark_tables says which)."""
    snaps = [snapshot(3, "livebench", "2024-11-25", "livebench_table_2024_11_25.csv")]
    rows = [score(3, "livebench", "livebench", f"m{i}", v, "2024-11-25") for i, v in enumerate([0.95, 0.6, 0.5, 0.45, 0.4])]
    fill(synced_db, snaps, rows)
    with connect_synced(open_store(synced_db)) as con:
        job.run_saturation(con, now=pd.Timestamp("2024-12-01"))
        insert_frame(con, "snapshots", pd.DataFrame([snapshot(4, "livebench", "2025-06-01",
                                                              "livebench_table_2025_05_30.csv")]))
        new = pd.DataFrame([score(4, "livebench", "livebench", f"m{i}", v, "2025-05-30")
                            for i, v in enumerate([0.55, 0.54, 0.53, 0.52, 0.51])])
        new["evaluated_at"] = pd.to_datetime(new["evaluated_at"], utc=True)
        insert_frame(con, "scores", new)
        job.run_saturation(con, now=NOW)
        stored = sorted(r[0] for r in con.execute("SELECT DISTINCT table_id FROM saturation").fetchall())
        latest = [r[0] for r in con.execute("SELECT table_id FROM saturation_latest WHERE scope = 'all'").fetchall()]
        current = dict(con.execute("SELECT table_id, is_current FROM benchmark_tables").fetchall())
    assert stored == ["livebench:livebench:2024-11-25", "livebench:livebench:2025-05-30"]
    assert latest == ["livebench:livebench:2025-05-30"]
    assert current == {"livebench:livebench:2024-11-25": False, "livebench:livebench:2025-05-30": True}


def test_two_tables_of_one_benchmark_are_two_saturation_alerts():
    from alerts.records import fingerprint
    from alerts.rules.saturation_bin_changed import saturation_conditions
    days = pd.date_range("2025-01-01", periods=3, freq="D")
    frame = pd.DataFrame({
        "table_id": ["humaneval:evalplus"] * 3 + ["humaneval:simple_evals"] * 3,
        "benchmark": "humaneval", "source": ["evalplus"] * 3 + ["simple_evals"] * 3,
        "benchmark_name": "HumanEval", "table_name": ["HumanEval (EvalPlus)"] * 3 + ["HumanEval (simple-evals)"] * 3,
        "scope": "all", "population": "models", "as_of": list(days) * 2,
        "s_index": [0.8, 0.8, 0.8, 0.4, 0.4, 0.4]})
    from helpers import with_levels
    conditions, _, groups = saturation_conditions(with_levels(frame))
    firing = {c.labels["table"]: c for c in conditions if c.fire_after == 1}
    assert set(firing) == {"humaneval:evalplus", "humaneval:simple_evals"}
    assert firing["humaneval:evalplus"].labels["level"] == "high"
    assert firing["humaneval:simple_evals"].labels["level"] == "moderate"
    assert firing["humaneval:evalplus"].annotations["benchmark_name"] == "HumanEval (EvalPlus)"
    assert len({fingerprint(c.labels) for c in firing.values()}) == 2 and len(groups) == 2


def test_a_table_its_source_no_longer_serves_leaves_its_level():
    """A replaced release (benchmark_tables.is_current false): its level alert resolves, saying
    why, instead of staying firing beside the release that replaced it."""
    from alerts.rules.saturation_bin_changed import RETIRED, saturation_conditions
    from helpers import with_levels
    days = pd.date_range("2025-01-01", periods=2, freq="D")
    frame = with_levels(pd.DataFrame({
        "table_id": ["livebench:livebench:2024-11-25"] * 2 + ["livebench:livebench:2025-04-02"] * 2,
        "benchmark": "livebench", "source": "livebench", "scope": "all", "population": "models",
        "as_of": list(days) * 2, "s_index": [0.8, 0.8, 0.4, 0.4], "is_current": [False, False, True, True]}))
    conditions, _, groups = saturation_conditions(frame)
    old = [c for c in conditions if c.labels["table"].endswith("2024-11-25")]
    new = [c for c in conditions if c.labels["table"].endswith("2025-04-02")]
    assert [(c.resolves, c.labels["level"], c.annotations["retired"]) for c in old] == [(True, "high", RETIRED)]
    assert [(c.resolves, c.labels["level"]) for c in new] == [(False, "moderate")]
    assert len(groups) == 2


def test_every_source_has_a_display_name():
    """Pages and messages name a source by its display name ('τ²-bench', not 'tau2_bench'): one per source."""
    import scrapers
    missing = [s for s in scrapers.SOURCES if rt.source_name(s) == s and s not in ("csv",)]
    assert missing == [], f"add to registry.tables.SOURCE_NAMES: {missing}"


# --- migration 084: the table key stored as columns -------------------------------------------

def _keyed_tables(con) -> list[str]:
    """Every stored table (not a view) with a table_id column."""
    return [r[0] for r in con.execute("""
        SELECT c.table_name FROM duckdb_columns() c JOIN duckdb_tables() t USING (database_name, schema_name, table_name)
        WHERE c.column_name = 'table_id' AND c.database_name = current_database() ORDER BY 1""").fetchall()]


def _analysed(path, tmp_path, monkeypatch) -> None:
    """Two sources of one benchmark pooled by a declaration, two releases of a versioned source,
    analysed and backtested, and one table correction recorded: every table keyed by table_id
    gets rows."""
    from jobs.backtest import run_backtest
    from storage.corrections import settle_corrections
    rules = write_rules(tmp_path, "pool,humaneval,evalplus;simple_evals,same items and harness (a test's claim)\n")
    monkeypatch.setattr(rt, "load_table_rules", lambda directory=None: rules)
    two_sources_and_two_releases(path)
    with connect_synced(open_store(path)) as con:
        job.run_saturation(con, now=NOW)
        result = run_backtest(con, now=NOW)      # too short a history to score a forecast: one row by hand
        if not len(result["rows"]):
            from storage.backtest import ROW_COLUMNS, CROSSING_COLUMNS, SUMMARY_COLUMNS, store_backtest
            key = con.execute("SELECT table_id, benchmark, source, table_version, metric FROM trends "
                              "WHERE table_id LIKE 'livebench:%' LIMIT 1").df()
            row = key.assign(origin=NOW, horizon_months=3, method="persistence", frontier_at_origin=0.5, forecast=0.5,
                             low=0.4, high=0.6, raw_low=0.4, raw_high=0.6, observed=0.55, inside=True, n_records=2)
            crossing = key.assign(origin=NOW, method="persistence", threshold=0.9, forecast_crossing=NOW,
                                  actual_crossing=NOW, error_months=0.0)
            store_backtest(con, rows=row[ROW_COLUMNS], summary=pd.DataFrame(columns=SUMMARY_COLUMNS),
                           crossings=crossing[CROSSING_COLUMNS], run_at=NOW.tz_localize("UTC").to_pydatetime())
        con.execute("INSERT INTO table_corrections_basis (table_id, n_models, benchmark, source, table_version) "
                    "VALUES ('livebench:livebench:2024-11-25', 3, 'livebench', 'livebench', '2024-11-25')")
        settle_corrections(con, now=NOW.tz_localize("UTC").to_pydatetime())


def test_every_stored_row_keyed_by_table_carries_the_key_its_id_is_spelled_from(synced_db, tmp_path, monkeypatch):
    from common.table_ids import table_id
    _analysed(synced_db, tmp_path, monkeypatch)
    with connect_synced(open_store(synced_db)) as con:
        keyed = _keyed_tables(con)
        assert {"saturation", "saturation_trajectory", "frontier", "trends", "benchmark_tables", "forecast_backtest",
                "forecast_backtest_crossings", "table_corrections"} <= set(keyed)
        seen = set()
        for name in keyed:
            rows = con.execute(f"SELECT DISTINCT table_id, benchmark, source, table_version FROM {name}").fetchall()
            assert rows or name == "table_corrections_basis", f"{name}: no rows"     # settled: emptied
            for tid, bench, source, version in rows:
                assert None not in (bench, source, version), (name, tid, bench, source, version)
                assert table_id(bench, source, version) == tid, (name, tid)
                seen.add((tid, source, version))
    assert ("humaneval:pooled", "pooled", "") in seen and ("livebench:livebench:2025-05-30", "livebench",
                                                            "2025-05-30") in seen


def test_a_file_of_the_previous_schema_migrated_holds_what_a_fresh_one_holds(synced_db, tmp_path, monkeypatch):
    """The rows the analysis wrote under migration 083's schema (every column but the key's new
    ones), migrated: each keyed table equals, column for column, the one this code wrote."""
    import duckdb
    from helpers import file_at_version
    _analysed(synced_db, tmp_path, monkeypatch)
    old = tmp_path / "old.duckdb"
    file_at_version(old, 83)
    con = duckdb.connect(str(old))
    con.execute(f"ATTACH '{synced_db}' AS fresh (READ_ONLY)")
    for name in _keyed_tables(con):
        columns = ", ".join(f'"{c}"' for c, in con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE database_name = current_database() AND table_name = ? "
            "ORDER BY column_index", [name]).fetchall())
        assert "table_version" not in columns or name == "benchmark_tables"      # the schema before 084
        con.execute(f"INSERT INTO {name} ({columns}) SELECT {columns} FROM fresh.{name}")
    con.close()
    with db.connect(old) as con:
        con.execute(f"ATTACH '{synced_db}' AS fresh (READ_ONLY)")
        keyed = _keyed_tables(con)
        assert len(keyed) >= 9
        for name in keyed:
            n = con.execute(f"SELECT count(*) FROM {name}").fetchone()[0]
            differ = con.execute(f"""SELECT count(*) FROM (
                (SELECT * FROM {name} EXCEPT ALL SELECT * FROM fresh.{name})
                UNION ALL (SELECT * FROM fresh.{name} EXCEPT ALL SELECT * FROM {name}))""").fetchone()[0]
            assert differ == 0, f"{name}: {differ} of {n} row(s) differ after the upgrade"

"""The Prefect flows (flows/pipeline.py), prefect.yaml and the replay fixture layout.

Flow tests run under `prefect_test_harness` (a temporary server subprocess on a temporary
SQLite database), started once for this module. Results storage goes to a temporary
directory too, or cached results would leak between sessions (ENGINEERING-NOTES §2.2). The
harness is module-scoped rather than session-scoped on purpose: while it is active every
Prefect client in the process talks to it, and later test modules (Slack settings look for
Prefect Secret blocks when an API is configured) must not.
"""

from __future__ import annotations

import importlib.util
import math
import re
import shutil
from pathlib import Path

import duckdb
import pytest
import yaml

import scrapers
from analysis.level_changes import LevelChange, level_changes
from jobs.collect import SourceOutcome
from jobs.cycle import CycleReport, run_cycle
from storage.store import open_store

pytestmark = pytest.mark.xdist_group("servers")   # starts Prefect's test server: one server test at a time

# Prefect and flows.pipeline are imported inside the tests: importing Prefect costs seconds, and
# collection (the fast lane's included) must not pay it. Tests under the harness are `slow`
# (tests/conftest.py marks every test that uses the `harness` fixture).

ROOT = Path(__file__).resolve().parents[2]
REPLAY = ROOT / "tests" / "fixtures" / "replay"
ANALYSIS_READY = all(importlib.util.find_spec(m) for m in (
    "jobs.saturation", "jobs.contamination", "jobs.alerts"))


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    from prefect.settings import temporary_settings
    from prefect.settings import PREFECT_RESULTS_LOCAL_STORAGE_PATH
    from prefect.testing.utilities import prefect_test_harness
    storage = tmp_path_factory.mktemp("prefect-results")
    with temporary_settings({PREFECT_RESULTS_LOCAL_STORAGE_PATH: storage}):
        with prefect_test_harness(server_startup_timeout=60):
            yield


@pytest.fixture
def db_path(tmp_path) -> str:
    return str(tmp_path / "bw.duckdb")


def artifacts_of(state) -> dict[str, object]:
    """{key: artifact} of the flow run behind a final state."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId
    run_id = state.state_details.flow_run_id
    with get_client(sync_client=True) as client:
        found = client.read_artifacts(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[run_id])))
    return {a.key: a for a in found}


def snapshot_counts(path: str) -> dict[str, int]:
    con = duckdb.connect(path, read_only=True)
    try:
        return dict(con.execute("SELECT source, n_scores FROM snapshots ORDER BY source").fetchall())
    finally:
        con.close()


# --- replay layout and prefect.yaml (no Prefect server needed) ---------------------------------------

def test_replay_files_belong_to_registered_sources_and_urls():
    allowed = {"README.md"}
    for path in sorted(p for p in REPLAY.rglob("*") if p.is_file()):
        rel = path.relative_to(REPLAY)
        if str(rel) in allowed:
            continue
        assert len(rel.parts) == 2, f"{rel}: expected <source>/<file>"
        source, name = rel.parts
        assert source in scrapers.SOURCES, f"{rel}: {source} is not a registered source"
        scraper = scrapers.get(source)
        planned = [scraper.response_name(u) for u in scraper.plan()]
        primary = REPLAY / source / planned[0]
        if primary.is_file():   # URLs its primary response names (a manifest's entries)
            planned += [scraper.response_name(u) for u in scraper.discover(primary.read_bytes())]
        assert name in planned, f"{rel}: {source} fetches {planned}, not {name}"


def test_replay_covers_every_enabled_source():
    for source in scrapers.enabled_sources():
        for url in scrapers.get(source).plan():
            assert (REPLAY / source / scrapers.get(source).response_name(url)).is_file(), f"no replay file for {url}"


def test_prefect_yaml_declares_one_deployment_per_flow_with_the_code_schedules():
    from flows import pipeline as pl
    spec = yaml.safe_load((ROOT / "prefect.yaml").read_text())
    deployments = {d["entrypoint"]: d for d in spec["deployments"]}
    assert set(deployments) == {f"flows/pipeline.py:{f}" for f in ("pipeline", "collect", "analyze", "notify")}
    flows = {"pipeline": pl.pipeline, "collect": pl.collect, "analyze": pl.analyze, "notify": pl.notify}
    expected = {"pipeline": (pl.PIPELINE_DEPLOYMENT, PIPELINE := pl.PIPELINE_CRON),
                "collect": (pl.COLLECT_DEPLOYMENT, pl.COLLECT_CRON),
                "analyze": (pl.MANUAL_DEPLOYMENT, None), "notify": (pl.MANUAL_DEPLOYMENT, None)}
    assert PIPELINE == "0 6 * * *"
    for name, flow in flows.items():
        d = deployments[f"flows/pipeline.py:{name}"]
        want_name, want_cron = expected[name]
        assert d["name"] == want_name
        crons = [(s["cron"], s["timezone"]) for s in d.get("schedules") or []]
        assert crons == ([(want_cron, pl.TIMEZONE)] if want_cron else [])
        assert d["concurrency_limit"] == 1
        assert d["work_pool"]["name"] == "benchwatch"
        params = set(d["parameters"])
        assert params <= set(flow.parameters.properties), f"{name}: unknown parameters {params}"
        assert "db_path" in params
        env = d["work_pool"]["job_variables"]["env"]
        assert env["BENCHWATCH_DB"] == "data/benchwatch.duckdb"
        assert not {"SLACK_WEBHOOK_URL", "SLACK_BOT_TOKEN"} & set(env), "secrets must not be in prefect.yaml"
    step = spec["pull"][0]["prefect.deployments.steps.set_working_directory"]
    assert step["directory"] == "{{ $PWD }}"


# --- pure helpers ------------------------------------------------------------------------------------

def test_summary_lists_failed_sources_and_errors_with_pipes_escaped():
    from flows import pipeline as pl
    report = CycleReport([SourceOutcome("swebench", "new", "64 scores"),
                          SourceOutcome("lmarena", "failed", "HTTP 503 | Service Unavailable"),
                          SourceOutcome("bfcl", "unchanged", "same content as snapshot 3")],
                         failures=["notify failed: RuntimeError: boom"])
    md = pl.summary_markdown(report, "pipeline")
    assert "Sources: 1 new snapshot(s), 1 unchanged, 1 failed." in md
    assert "| lmarena | HTTP 503 \\| Service Unavailable |" in md
    assert "swebench |" not in md
    assert "- notify failed: RuntimeError: boom" in md


def test_saturation_rows_keep_indexed_benchmarks_best_first_and_json_safe():
    from flows import pipeline as pl
    import pandas as pd
    frame = pd.DataFrame({"benchmark": ["a", "b", "c"], "bin": ["low", None, "high"],
                          "s_index": [0.2, math.nan, 0.81234], "se_delta": [0.1, math.nan, 0.05],
                          "n_models": [9, 3, 12], "n_items": [500.0, math.nan, 300.0],
                          "uncertainty": ["assumed", None, "binomial(n_eff=n^alpha)"],
                          "as_of": ["2026-11-01", "2026-11-01", "2026-11-02"],
                          "stalled": [False, None, True], "forecast_status": ["ok", None, "fallback"],
                          "reason": [None, "only 3 model score(s), fewer than k=5", None]})
    rows = pl.saturation_rows(frame)
    assert [r["benchmark"] for r in rows] == ["c", "a"]
    assert rows[0]["s_index"] == 0.812 and rows[0]["bin"] == "high" and rows[0]["n_items"] == 300
    assert rows[1]["stalled"] is False
    assert all(v is None or not isinstance(v, float) or math.isfinite(v) for r in rows for v in r.values())
    assert pl.saturation_rows(None) == [] and pl.saturation_rows(frame.iloc[0:0]) == []
    # the stored level is shown beside the bin, and where they differ the artifact says why
    levels = pd.DataFrame({"benchmark": ["a", "c"], "scope": "all", "level": ["very low", "high"],
                           "pending_bin": ["low", None], "pending_since": [pd.Timestamp("2026-11-01"), None]})
    rows = pl.saturation_rows(frame, levels)
    assert [(r["level"], r["bin"]) for r in rows] == [("high", "high"), ("very low", "low")]
    assert rows[0]["level_note"] is None
    assert rows[1]["level_note"] == ("S 0.20 is in the low range since 2026-11-01; the level stays very low until "
                                     "2026-11-08 (7 days), unless a newer snapshot undoes the move")


def test_level_changes_name_each_table_that_moved_and_the_first_levels():
    import pandas as pd
    before = pd.DataFrame({"table_id": ["mgsm:simple_evals", "gpqa:epoch", "swe:swebench"],
                           "scope": ["all", "all", "all"], "population": ["models", "models", "systems"],
                           "level": ["low", "high", "medium"]})
    after = pd.DataFrame({"table_id": ["mgsm:simple_evals", "gpqa:epoch", "swe:swebench", "new:x"],
                          "scope": ["all", "all", "all", "post_cutoff"], "population": ["models", "models", "systems", "models"],
                          "level": ["high", "high", "medium", "low"]})
    changes = level_changes(before, after)
    assert changes == [LevelChange("mgsm:simple_evals", "low", "high"),
                       LevelChange("new:x (post_cutoff)", None, "low")]
    assert level_changes(None, before)[2] == LevelChange("swe:swebench (systems)", None, "medium")
    assert level_changes(before, before) == [] and level_changes(before, None) == []


def test_summary_says_what_changed_this_run():
    from flows import pipeline as pl
    from jobs.alerts import NotifySummary
    from jobs.publish import PublishedReport
    note = NotifySummary(receiver="slack-webhook", enqueued=1, to_deliver=1, delivered=1,
                         sent_titles=["MGSM (simple-evals): level low → high"])
    report = CycleReport([SourceOutcome("swebench", "new", "64 scores"), SourceOutcome("bfcl", "unchanged", "")],
                         analysis={"skipped": False, "level_changes": [
                             LevelChange("mgsm:simple_evals", "low", "high"),
                             LevelChange("gpqa:epoch", None, "high")]},
                         notification=note, published=PublishedReport(url="https://intranet.example/bw/report.html"))
    md = pl.summary_markdown(report, "pipeline")
    assert ("## What changed\n\n- New snapshots (1):\n  - swebench: 64 scores\n- Analysis: recomputed\n"
            "- Levels changed: 1 (1 table(s) got their first level)\n  - mgsm:simple_evals: low → high\n"
            "- Alerts sent: 1 to slack-webhook\n  - MGSM (simple-evals): level low → high\n"
            "- Report: <https://intranet.example/bw/report.html>\n") in md
    quiet = pl.summary_markdown(CycleReport([SourceOutcome("bfcl", "unchanged", "")],
                                            analysis={"skipped": True}), "pipeline")
    assert "- New snapshots: none\n- Analysis: inputs unchanged, stored results kept\n- Levels changed: 0" in quiet


def test_serve_refuses_without_a_server(capsys):
    from prefect.settings import temporary_settings
    from prefect.settings import PREFECT_API_URL
    import argparse
    from cli.commands import serve
    with temporary_settings(restore_defaults={PREFECT_API_URL}):
        code = serve.run(argparse.Namespace(db=None, sources=None))
    assert code == 2
    assert "PREFECT_API_URL" in capsys.readouterr().err


# --- flows under the harness ---------------------------------------------------------------------------

def test_collect_replays_sources_into_duckdb_and_publishes_a_summary(harness, db_path):
    from flows import pipeline as pl
    state = pl.collect(db_path=db_path, sources=["swebench", "livebench", "simple_evals"], replay_dir=str(REPLAY),
                       return_state=True)
    assert state.is_completed(), state.message
    report = state.result()
    assert [(o.source, o.status) for o in report.outcomes] == [
        ("swebench", "new"), ("livebench", "new"), ("simple_evals", "new")]
    # rows checked by hand against the replay files (tests/fixtures/replay/README.md); livebench:
    # 12 models x (19 tasks + 6 category averages + the global average) = 312
    # livebench_releases: the changelog livebench's release discovery read, stored as a snapshot (no rows)
    assert snapshot_counts(db_path) == {"livebench": 312, "livebench_releases": 0, "simple_evals": 103, "swebench": 64}
    md = artifacts_of(state)["benchwatch-collect-summary"]
    assert md.type == "markdown"
    assert "Sources: 3 new snapshot(s), 0 unchanged, 0 failed." in md.data

    again = pl.collect(db_path=db_path, sources=["swebench"], replay_dir=str(REPLAY))
    assert [(o.source, o.status) for o in again.outcomes] == [("swebench", "unchanged")]


def test_a_failing_source_is_reported_and_the_run_completes(harness, db_path, tmp_path):
    from flows import pipeline as pl
    partial = tmp_path / "replay"
    shutil.copytree(REPLAY / "simple_evals", partial / "simple_evals")
    state = pl.collect(db_path=db_path, sources=["lmarena", "simple_evals"], replay_dir=str(partial),
                       return_state=True)
    assert state.is_completed(), state.message
    outcomes = {o.source: o for o in state.result().outcomes}
    assert outcomes["simple_evals"].status == "new"
    assert outcomes["lmarena"].status == "failed"
    assert "no recorded response" in outcomes["lmarena"].detail
    md = artifacts_of(state)["benchwatch-collect-summary"].data
    assert "## Failed sources" in md and "| lmarena | no recorded response for" in md


def test_every_source_failing_fails_the_run_but_the_cli_still_gets_its_report(harness, db_path, tmp_path):
    from flows import pipeline as pl
    empty = tmp_path / "empty"
    empty.mkdir()
    state = pl.collect(db_path=db_path, sources=["swebench", "lmarena"], replay_dir=str(empty), return_state=True)
    assert state.is_failed()
    assert "every source failed (swebench, lmarena)" in state.message
    from flows.ephemeral import run_pipeline
    report = run_pipeline(db_path=db_path, sources=["swebench"], replay_dir=str(empty), collect_only=True)
    assert isinstance(report, CycleReport) and not report.ok
    assert report.outcomes[0].status == "failed"


@pytest.mark.parametrize("params, message", [
    ({"sources": ["nope"]}, "sources.0: Input should be "),   # followed by the known names
    ({"sources": ["csv"]}, "csv: no URLs to collect (local files only: use `benchwatch ingest`)"),
    ({"sources": []}, "sources: List should have at least 1 item"),
    ({"replay_dir": "/nonexistent/replay"}, "replay_dir '/nonexistent/replay' is not a directory"),
    ({"db_path": ""}, "db_path: String should have at least 1 character"),
])
def test_bad_parameters_are_rejected_with_the_field_named(harness, db_path, params, message):
    from prefect.exceptions import ParameterTypeError
    from flows import pipeline as pl
    with pytest.raises(ParameterTypeError, match="invalid parameters") as err:
        pl.collect(**{"db_path": db_path, **params})
    assert message in str(err.value)


@pytest.fixture
def fast_retries(monkeypatch):
    from flows import pipeline as pl
    monkeypatch.setattr(pl, "collect_source_task", pl.collect_source_task.with_options(retry_delay_seconds=0))


def _fake_collect(results: dict[str, list]):
    """A stand-in for jobs.collect.collect_source answering from per-source queues; records the calls."""
    calls: list[str] = []

    def fake(db_path, source, *, replay_dir=None, run_id="", fetcher=None, secrets=None):
        calls.append(source)
        answer = results[source].pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer
    return fake, calls


def _use_fake(monkeypatch, fake) -> None:
    """`fake` as jobs.collect.collect_source, and jobs.collect.collect (the flow's one collection task)
    made of it: each source in turn, an exception raised out of the whole collection as the real one does."""
    def batch(db_path, sources=None, *, replay_dir=None, run_id="", secrets=None):
        return [fake(db_path, s, replay_dir=replay_dir, run_id=run_id) for s in sources]
    monkeypatch.setattr("jobs.collect.collect_source", fake)
    monkeypatch.setattr("jobs.collect.collect", batch)


def test_an_unreachable_live_source_is_retried_and_a_parse_error_is_not(harness, db_path, monkeypatch, fast_retries):
    from flows import pipeline as pl
    unreachable = SourceOutcome("swebench", "failed", "GET … failed after 4 attempts: connection failed",
                                unreachable=True)
    fake, calls = _fake_collect({
        "swebench": [unreachable, SourceOutcome("swebench", "new", "64 scores")],
        "livebench": [SourceOutcome("livebench", "failed", "below the floor (raw response kept)")],
    })
    _use_fake(monkeypatch, fake)
    report = pl.collect(db_path=db_path, sources=["swebench", "livebench"])
    assert calls == ["swebench", "livebench", "swebench"]     # the collection, then swebench's retry
    assert [(o.source, o.status) for o in report.outcomes] == [("swebench", "new"), ("livebench", "failed")]


def test_a_source_still_unreachable_after_the_retries_keeps_its_reason(harness, db_path, monkeypatch, fast_retries):
    from flows import pipeline as pl
    down = SourceOutcome("lmarena", "failed", "HTTP 503 Service Unavailable", unreachable=True)
    fake, calls = _fake_collect({"lmarena": [down, down, down],
                                 "simple_evals": [SourceOutcome("simple_evals", "new", "")]})
    _use_fake(monkeypatch, fake)
    report = pl.collect(db_path=db_path, sources=["lmarena", "simple_evals"])
    assert calls == ["lmarena", "simple_evals"] + ["lmarena"] * pl.COLLECT_RETRIES
    assert report.outcomes[0].detail == "HTTP 503 Service Unavailable" and report.outcomes[0].unreachable


def test_a_crashing_source_does_not_stop_the_others(harness, db_path, monkeypatch, fast_retries):
    from flows import pipeline as pl
    fake, calls = _fake_collect({"lmarena": [RuntimeError("parser bug")] * 2,
                                 "simple_evals": [SourceOutcome("simple_evals", "new", "61 scores")]})
    _use_fake(monkeypatch, fake)
    report = pl.collect(db_path=db_path, sources=["lmarena", "simple_evals"])
    # the collection task fails; then each source in a task of its own, and a bug is not retried
    assert calls == ["lmarena", "lmarena", "simple_evals"]
    assert report.outcomes[0].status == "failed" and report.outcomes[0].detail == "RuntimeError: parser bug"
    assert report.outcomes[1].status == "new" and report.ok


def _active_writer_slots() -> tuple[int, int]:
    from prefect.client.orchestration import get_client
    from flows import pipeline as pl
    with get_client(sync_client=True) as client:
        limit = client.read_global_concurrency_limit_by_name(pl.WRITER_LIMIT)
    return limit.limit, limit.active_slots


def test_the_run_holds_the_single_writer_slot(harness, db_path, monkeypatch):
    from flows import pipeline as pl
    seen = []

    def fake(db_path, source, *, replay_dir=None, run_id="", fetcher=None, secrets=None):
        seen.append(_active_writer_slots())
        return SourceOutcome(source, "new", "")
    _use_fake(monkeypatch, fake)
    pl.collect(db_path=db_path, sources=["simple_evals"])
    assert seen == [(1, 1)]                      # created with one slot, held while collecting
    assert _active_writer_slots() == (1, 0)      # released after the run


def test_a_second_writer_waits_for_the_slot_and_gives_up_after_the_wait(harness, db_path, monkeypatch):
    from prefect.concurrency.sync import concurrency
    from flows import pipeline as pl
    monkeypatch.setattr(pl, "WRITER_WAIT_SECONDS", 2)
    pl.ensure_writer_limit()
    with concurrency(pl.WRITER_LIMIT, occupy=1, strict=True):      # another run is writing
        with pytest.raises(TimeoutError):
            pl.collect(db_path=db_path, sources=["simple_evals"], replay_dir=str(REPLAY))
    assert not Path(db_path).exists()            # it never opened the database


def test_notify_runs_after_a_failed_analyze_and_the_run_fails(harness, db_path, monkeypatch):
    from flows import pipeline as pl
    def broken_analyze(db_path, **kwargs):
        raise ValueError("saturation table is inconsistent")
    monkeypatch.setattr("jobs.analyze_step.analyze", broken_analyze)
    monkeypatch.setattr("jobs.alerts.run_notify", lambda db_path, **kw: "1 notification(s) sent to the console")
    state = pl.pipeline(db_path=db_path, sources=["simple_evals"], replay_dir=str(REPLAY), return_state=True)
    assert state.is_failed()
    assert "analyze failed: ValueError: saturation table is inconsistent" in state.message
    from flows.ephemeral import run_pipeline
    report = run_pipeline(db_path=db_path, sources=["simple_evals"], replay_dir=str(REPLAY))
    assert report.notification == "1 notification(s) sent to the console"
    assert report.errors == ["analyze failed: ValueError: saturation table is inconsistent"]
    md = artifacts_of(state)["benchwatch-pipeline-summary"].data
    assert "## Errors" in md and "## Alerts" in md


@pytest.mark.skipif(not ANALYSIS_READY, reason="analyze/notify jobs not in this tree yet")
def test_pipeline_full_cycle_publishes_the_saturation_table(harness, db_path, monkeypatch):
    from flows import pipeline as pl
    monkeypatch.delenv("SLACK_WEBHOOK_URL", raising=False)
    monkeypatch.delenv("SLACK_BOT_TOKEN", raising=False)
    state = pl.pipeline(db_path=db_path, replay_dir=str(REPLAY), return_state=True)
    assert state.is_completed(), state.message
    report = state.result()
    assert all(o.status == "new" for o in report.outcomes) and len(report.outcomes) == len(scrapers.enabled_sources())
    table = artifacts_of(state)[pl.SATURATION_ARTIFACT]
    assert table.type == "table"
    rows = pl.saturation_rows(report.analysis["saturation"])
    import json
    published = json.loads(table.data)
    assert [r["benchmark"] for r in published] == [r["benchmark"] for r in rows]
    by_name = {r["benchmark"]: r for r in published}
    # swebench_verified: 30 replayed rows of the 2025-05-07 board (+ epoch's copy with published
    # stderrs); n = 500 is known, so the paper's binomial SE applies to every model
    assert by_name["swebench_verified"]["uncertainty"] == "binomial(n_eff=n^alpha)"
    assert all(0.0 <= r["s_index"] <= 1.0 for r in published)


def test_a_digest_slack_refused_fails_the_run(harness, db_path, monkeypatch):
    from flows import pipeline as pl
    class Undelivered:
        ok = False

        def __str__(self) -> str:
            return ("2 alert(s) firing (0 muted), 0 pending; 2 new notification(s); delivery to slack-webhook "
                    "failed (HTTP 404 no_service): 2 kept for the next run\n  - MGSM: saturation low → high")
    monkeypatch.setattr("jobs.analyze_step.analyze", lambda db_path, **kw: {"saturation": None, "suspects": None})
    monkeypatch.setattr("jobs.alerts.run_notify", lambda db_path, **kw: Undelivered())
    state = pl.pipeline(db_path=db_path, sources=["simple_evals"], replay_dir=str(REPLAY), return_state=True)
    assert state.is_failed()
    assert "notify: 2 alert(s) firing" in state.message and "2 kept for the next run" in state.message


def test_a_source_that_hangs_is_cut_off_by_the_task_timeout(harness, db_path, monkeypatch):
    from flows import pipeline as pl
    import time as _time

    def fake(db_path, source, *, replay_dir=None, run_id="", fetcher=None, secrets=None):
        if source == "lmarena":
            _time.sleep(30)
        return SourceOutcome(source, "new", "")
    _use_fake(monkeypatch, fake)
    monkeypatch.setattr(pl, "collect_source_task", pl.collect_source_task.with_options(timeout_seconds=1))
    monkeypatch.setattr(pl, "collect_task", pl.collect_task.with_options(timeout_seconds=1))
    started = _time.monotonic()
    report = pl.collect(db_path=db_path, sources=["lmarena", "simple_evals"])
    assert _time.monotonic() - started < 20
    assert report.outcomes[0].status == "failed" and "TimeoutError" in report.outcomes[0].detail
    assert report.outcomes[1].status == "new"


def test_summary_markdown_keeps_scraped_text_inert():
    from flows import pipeline as pl
    from jobs.collect import SourceOutcome
    evil = "bad cell <img src=x onerror=alert(1)> [click](http://evil.example) `code` | pipe"
    md = pl.summary_markdown(CycleReport([SourceOutcome("bfcl", "failed", evil)]), "collect")
    row = next(line for line in md.splitlines() if line.startswith("| bfcl |"))
    assert "<img" not in row and "&lt;img" in row
    assert "[click]" not in row                      # no markdown link
    assert "`" not in row and row.count(" | ") == 1 and "\\|" in row


# --- issue 11: honest Failed states, retries on lock contention only, the ephemeral server -------------

def test_a_failed_run_carries_an_exception_prefect_can_raise_and_the_report(harness, db_path, tmp_path):
    """Before: the Failed state's data was the CycleReport itself, and Prefect (a worker resolving
    the state, or a direct call of the flow) failed with its own "Unexpected result for failed
    state: CycleReport(...) cannot be resolved into an exception"."""
    from flows import pipeline as pl
    from prefect.states import get_state_exception
    empty = tmp_path / "empty"
    empty.mkdir()
    state = pl.collect(db_path=db_path, sources=["swebench"], replay_dir=str(empty), return_state=True)
    assert state.is_failed()
    exc = get_state_exception(state)
    assert isinstance(exc, pl.CycleFailed) and "every source failed (swebench)" in str(exc)
    assert exc.report.outcomes[0].source == "swebench" and not exc.report.ok
    with pytest.raises(pl.CycleFailed, match="every source failed"):
        pl.collect(db_path=db_path, sources=["swebench"], replay_dir=str(empty))
    # the summary artifact is still attached to the failed run
    assert "## Failed sources" in artifacts_of(state)["benchwatch-collect-summary"].data


def test_a_failed_analyze_is_an_exception_with_the_report(harness, db_path, monkeypatch):
    from flows import pipeline as pl
    from prefect.states import get_state_exception

    def broken(db_path, **kwargs):
        raise ValueError("inconsistent")
    monkeypatch.setattr("jobs.analyze_step.analyze", broken)
    state = pl.analyze(db_path=db_path, return_state=True)
    assert state.is_failed()
    exc = get_state_exception(state)
    assert isinstance(exc, pl.CycleFailed) and exc.report.errors == ["analyze failed: ValueError: inconsistent"]


def test_only_lock_contention_is_retried_not_a_permanent_storage_error(harness, db_path, monkeypatch, fast_retries):
    """Before: every StorageError was retried (60 s, 300 s per source: > 400 s for an unwritable file)."""
    from flows import pipeline as pl
    from storage.db import DatabaseLocked, StorageError
    fake, calls = _fake_collect({
        "swebench": [StorageError("cannot open database /ro/bw.duckdb: Permission denied")] * 2,
        "simple_evals": [DatabaseLocked("database is locked by another process"), SourceOutcome("simple_evals", "new", "")],
    })
    _use_fake(monkeypatch, fake)
    report = pl.collect(db_path=db_path, sources=["swebench", "simple_evals"])
    # the collection task fails on swebench; then each source in a task of its own
    assert calls == ["swebench", "swebench", "simple_evals", "simple_evals"]
    assert report.outcomes[0].status == "failed" and "Permission denied" in report.outcomes[0].detail
    assert report.outcomes[1].status == "new"


def test_an_empty_replay_dir_is_refused_not_taken_as_live(harness, db_path):
    from prefect.exceptions import ParameterTypeError
    from flows import pipeline as pl
    with pytest.raises(ParameterTypeError, match="replay_dir is empty"):
        pl.collect(db_path=db_path, replay_dir="")


def test_ephemeral_start_up_timeout_defaults_longer_than_prefects(monkeypatch):
    from flows import ephemeral
    monkeypatch.delenv("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", raising=False)
    assert ephemeral.startup_timeout() == ephemeral.EPHEMERAL_STARTUP_TIMEOUT_SECONDS > 20
    monkeypatch.setenv("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "45")
    assert ephemeral.startup_timeout() == 45


@pytest.mark.slow   # imports Prefect's server and runs the CLI cycle
def test_an_ephemeral_server_that_does_not_start_is_one_line(monkeypatch, tmp_path, capsys):
    """Before: Prefect's RuntimeError reached the terminal as a traceback."""
    from flows import ephemeral
    import prefect.server.api.server as server_module
    from cli.main import main
    monkeypatch.setattr(ephemeral, "server_configured", lambda: False)
    monkeypatch.setattr(server_module.SubprocessASGIServer, "_instances", {})   # not the harness's server

    def never(self, timeout=None):
        raise RuntimeError("Timed out while attempting to connect to ephemeral Prefect API server.")
    monkeypatch.setattr(server_module.SubprocessASGIServer, "start", never)
    monkeypatch.setattr(server_module.SubprocessASGIServer, "stop", lambda self: None)
    code = main(["run", "--replay", str(REPLAY), "--sources", "swebench", "--db", str(tmp_path / "bw.duckdb")])
    err = capsys.readouterr().err
    assert code == 1
    assert err.strip().splitlines() == [
        f"benchwatch run: Prefect's temporary server did not start within {ephemeral.startup_timeout()} s (Timed out "
        "while attempting to connect to ephemeral Prefect API server.); raise "
        "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS, point PREFECT_API_URL at a server, or use --no-prefect"]


# --- issue 22: one cycle, `run --no-prefect` and the pipeline flow do the same work ------------------

SAME_WORK_SOURCES = ["swebench", "simple_evals", "aider_polyglot", "knowledge_cutoffs"]
# What legitimately differs between two runs of the same cycle: when (timestamp columns, and times
# inside text such as an alert's JSON or an event id), the run that fetched (`run_id`: local-<uuid>
# vs the flow run's id), and what hashes those times (the analysis' input fingerprint and summary).
VOLATILE_COLUMNS = {"run_id", "summary", "fingerprint"}
TIME_IN_TEXT = r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?( ?UTC|Z|\+00:00)?"


def table_contents(path: str) -> dict[str, list[tuple]]:
    """Every base table's rows, timestamps and run ids left out, sorted."""
    con = duckdb.connect(path, read_only=True)
    try:
        out = {}
        tables = [t for (t,) in con.execute("SELECT table_name FROM information_schema.tables "
                                            "WHERE table_type = 'BASE TABLE' ORDER BY 1").fetchall()]
        for table in tables:
            cols = [c for c, kind in con.execute(
                "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ? "
                "ORDER BY ordinal_position", [table]).fetchall()
                    if "TIMESTAMP" not in kind and c not in VOLATILE_COLUMNS]
            rows = con.execute("SELECT " + ", ".join(f'"{c}"' for c in cols) + f' FROM "{table}"').fetchall()
            out[table] = sorted((tuple(re.sub(TIME_IN_TEXT, "<time>", v) if isinstance(v, str) else v for v in row)
                                 for row in rows), key=repr)
        return out
    finally:
        con.close()


def _page(path: Path) -> list[str]:
    """The report page without the times it was made at (the two runs ran seconds apart), as its
    sorted table rows and other pieces: two rows that tie on the report's ORDER BY (a table's
    model and system rows: storage/report.py orders saturation_latest without the population)
    may come in either order."""
    return sorted(re.sub(TIME_IN_TEXT, "<time>", path.read_text(encoding="utf-8")).split("<tr>"))


@pytest.mark.skipif(not ANALYSIS_READY, reason="analyze/notify jobs not in this tree yet")
def test_run_without_prefect_and_the_pipeline_flow_do_the_same_work(harness, tmp_path, monkeypatch, one_utc_day):
    """Before: only the flow published the HTML report, and only `run` skipped an unchanged analysis."""
    import json
    from flows import pipeline as pl
    from jobs.relations import step as relations_step
    for name in ("SLACK_WEBHOOK_URL", "SLACK_BOT_TOKEN", "BENCHWATCH_REPORT_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    computed = []
    real = relations_step.materialize
    monkeypatch.setattr(relations_step, "materialize", lambda *a, **kw: computed.append(1) or real(*a, **kw))
    # both runs fetch at one instant: a result without a date of its own is dated at its fetch, so
    # fetches seconds apart moved the pages' calendar-time charts (CI: an axis tick 475.0 vs 475.1 px)
    import scrapers.http
    monkeypatch.setattr(scrapers.http, "utcnow", lambda: one_utc_day)
    plain_db, flow_db = str(tmp_path / "plain.duckdb"), str(tmp_path / "flow.duckdb")

    monkeypatch.setenv("BENCHWATCH_REPORT_DIR", str(tmp_path / "plain-site"))
    plain = run_cycle(open_store(plain_db), SAME_WORK_SOURCES, replay_dir=REPLAY)
    monkeypatch.setenv("BENCHWATCH_REPORT_DIR", str(tmp_path / "flow-site"))
    state = pl.pipeline(db_path=flow_db, sources=SAME_WORK_SOURCES, replay_dir=str(REPLAY), return_state=True)
    assert plain.ok and state.is_completed(), (plain.text(), state.message)
    flowed = state.result()
    assert computed == [1, 1]
    assert [(o.source, o.status, o.detail) for o in plain.outcomes] == \
        [(o.source, o.status, o.detail) for o in flowed.outcomes]
    # the same notification, but for the minute it names (the two runs can straddle one)
    assert re.sub(TIME_IN_TEXT, "<time>", str(plain.notification)) == \
        re.sub(TIME_IN_TEXT, "<time>", str(flowed.notification))

    # the same tables, row for row
    a, b = table_contents(plain_db), table_contents(flow_db)
    assert a.keys() == b.keys()
    differ = {t: next(((x, y) for x, y in zip(a[t], b[t]) if x != y), (len(a[t]), len(b[t])))
              for t in a if a[t] != b[t]}
    assert differ == {}
    assert len(a["saturation"]) > 0 and len(a["alerts"]) > 0 and len(a["notifications"]) > 0
    # the same page, published by both
    assert plain.published.path == tmp_path / "plain-site" / "report.html"
    assert flowed.published.path == tmp_path / "flow-site" / "report.html"
    assert _page(plain.published.path) == _page(flowed.published.path)

    # the flow run's artifacts: the saturation table names table and population; the page is linked
    found = artifacts_of(state)
    assert (tmp_path / "flow-site" / "report.html").as_uri() in found[pl.REPORT_LINK_ARTIFACT].data
    rows = json.loads(found[pl.SATURATION_ARTIFACT].data)
    assert {"table_id", "population"} <= set(rows[0])
    assert len({(r["table_id"], r["population"]) for r in rows}) == len(rows)
    summary = found["benchwatch-pipeline-summary"].data
    assert "## What changed" in summary and "- Analysis: recomputed" in summary
    assert "  - swebench: 64 scores" in summary and "table(s) got their first level" in summary

    # a second cycle over the same responses: both skip the unchanged analysis and keep the page
    written = {p: p.stat().st_mtime_ns for p in (plain.published.path, flowed.published.path)}
    monkeypatch.setenv("BENCHWATCH_REPORT_DIR", str(tmp_path / "plain-site"))
    again_plain = run_cycle(open_store(plain_db), SAME_WORK_SOURCES, replay_dir=REPLAY)
    monkeypatch.setenv("BENCHWATCH_REPORT_DIR", str(tmp_path / "flow-site"))
    again = pl.pipeline(db_path=flow_db, sources=SAME_WORK_SOURCES, replay_dir=str(REPLAY), return_state=True)
    assert again.is_completed(), again.message
    assert again_plain.analysis["skipped"] and again.result().analysis["skipped"]
    assert computed == [1, 1]
    assert {p: p.stat().st_mtime_ns for p in written} == written
    assert again_plain.published.path == plain.published.path and again.result().published.path == flowed.published.path
    kept = artifacts_of(again)
    assert pl.REPORT_LINK_ARTIFACT in kept and pl.REPORT_ARTIFACT + "-overview" not in kept
    assert "- Analysis: inputs unchanged, stored results kept" in artifacts_of(again)["benchwatch-pipeline-summary"].data


@pytest.mark.slow   # CLI runs in subprocesses
@pytest.mark.parametrize("mode", [["--no-prefect"], []], ids=["no-prefect", "prefect"])
def test_a_failed_source_is_printed_once_on_the_terminal(tmp_path, mode, request):
    """Before: 4 times (the HTTP layer's error, the collection's warning, the flow run's report
    lines on stderr; the report on stdout). Now the report says it; the logs elsewhere keep theirs.
    With Prefect, the run is the flow on this module's test server (PREFECT_API_URL set, as on a
    deployment's machine) rather than on a temporary server of its own: the lines printed are the
    flow's either way, and starting a temporary server on a new database is test_e2e_prefect.py's
    ephemeral-mode test."""
    import os
    import subprocess
    import sys
    replay = tmp_path / "replay"
    shutil.copytree(REPLAY / "simple_evals", replay / "simple_evals")     # swebench: no recorded response
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "SLACK_", "BENCHWATCH_"))}
    env.update(PYTHONPATH=str(ROOT), PREFECT_HOME=str(tmp_path / "prefect"), DO_NOT_TRACK="1",
               PREFECT_SERVER_ANALYTICS_ENABLED="false", PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="120")
    if not mode:
        request.getfixturevalue("harness")
        from prefect.settings import PREFECT_API_URL
        env["PREFECT_API_URL"] = PREFECT_API_URL.value()
    done = subprocess.run([sys.executable, "-m", "cli.main", "run", *mode, "--replay", str(replay), "--sources",
                           "swebench,simple_evals", "--db", str(tmp_path / "bw.duckdb")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "swebench             failed     no recorded response for" in done.stdout
    assert (done.stdout + done.stderr).count("no recorded response for") == 1, done.stdout + done.stderr
    assert "simple_evals         new" in done.stdout and "[simple_evals]" not in done.stderr

"""What the fast paths do not import (issue 12): `query`, `status` and `--help` start without
Prefect, scipy, pandas, slack_sdk, requests or bs4; an unchanged cycle's notify (console
delivery) without Prefect, scipy, slack_sdk or requests. Behaviour, not timing (bench/run.py measures the time): each check runs in a fresh
interpreter and lists the heavy modules present in `sys.modules` afterwards."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from jobs.ingest import ingest_file
from storage.store import open_store

ROOT = Path(__file__).resolve().parents[2]
FIX = Path(__file__).resolve().parents[1] / "fixtures" / "csv"
HEAVY = ("prefect", "scipy", "pandas", "numpy", "slack_sdk", "requests", "bs4", "pytz")


def _loaded_after(code: str, tmp_path: Path) -> dict:
    """Run `code` in a fresh interpreter (repository on the path, no Prefect API, an empty home);
    returns what it prints as JSON under the key 'out' and the heavy modules it left loaded."""
    script = textwrap.dedent(code) + textwrap.dedent(f"""
        import json as _json, sys as _sys
        _heavy = sorted(m for m in {HEAVY!r} if m in _sys.modules)
        print("@@" + _json.dumps({{"heavy": _heavy, "out": globals().get("out")}}))
    """)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "SLACK_"))}
    env.update(PYTHONPATH=str(ROOT), HOME=str(tmp_path), BENCHWATCH_DB=str(tmp_path / "none.duckdb"))
    cp = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                        timeout=300)
    assert cp.returncode == 0, cp.stderr[-2000:]
    return json.loads(cp.stdout.rsplit("@@", 1)[1])


def test_query_status_and_help_import_nothing_heavy(tmp_path):
    db = tmp_path / "bw.duckdb"
    ingest_file(open_store(db), "csv", FIX / "scores_proportion.csv")
    got = _loaded_after(f"""
        import contextlib, io
        from cli.main import main
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            codes = [main(["query", "SELECT count(*) AS n FROM scores", "--db", {str(db)!r}]),
                     main(["status", "--db", {str(db)!r}])]
            try:
                main(["--help"])
            except SystemExit as exc:
                codes.append(exc.code)
        out = {{"codes": codes, "text": buf.getvalue()}}
    """, tmp_path)
    assert got["out"]["codes"] == [0, 0, 0]
    text = got["out"]["text"]
    assert "\n3\n" in text.replace(" ", "")           # the query's one row: 3 scores
    assert "sources (times UTC):" in text and "csv" in text and "usage: benchwatch" in text
    assert got["heavy"] == []


def test_building_the_parser_imports_no_command_implementation(tmp_path):
    got = _loaded_after("""
        from cli.main import build_parser
        build_parser()
        out = sorted(m for m in __import__("sys").modules if m.split(".")[0] in ("jobs", "flows", "alerts", "analysis")
                     and m not in ("analysis", "analysis.constants", "analysis.sizes"))   # status's own small checks
    """, tmp_path)
    assert got["heavy"] == [] and got["out"] == []


def test_notify_path_imports_no_prefect_scipy_or_slack_sdk_without_slack_or_prefect_settings(tmp_path):
    got = _loaded_after("""
        import jobs.alerts
        from flows.secrets import slack_settings
        settings = slack_settings({})
        out = [settings.mode, settings.reason]
    """, tmp_path)
    assert not {"prefect", "scipy", "slack_sdk", "requests"} & set(got["heavy"]), got["heavy"]
    assert got["out"][0] == "console" and "no Prefect API configured" in got["out"][1]


def test_a_prefect_profile_with_an_api_url_is_asked(tmp_path):
    """A Prefect API set in a profile (not the environment) counts as configured, so the Secret
    blocks are still looked up there; finding that out imports no Prefect."""
    (tmp_path / ".prefect").mkdir()
    (tmp_path / ".prefect" / "profiles.toml").write_text(
        'active = "x"\n[profiles.x]\nPREFECT_API_URL = "http://127.0.0.1:9/api"\n')
    got = _loaded_after("""
        from flows.secrets import prefect_api_hinted
        import os
        out = prefect_api_hinted(os.environ)
    """, tmp_path)
    assert got["out"] is True and "prefect" not in got["heavy"]


def test_the_disagreement_analysis_imports_no_scipy(tmp_path):
    """`status`, the report and the disagreement rule analyse disagreements with BH alone
    (analysis/fdr.py). Before: BH came from the contamination package, whose signals load scipy,
    so `status` on a store with two sources of one benchmark imported scipy.optimize."""
    got = _loaded_after("""
        import analysis.disagreement, report.disagreements, alerts.rules.source_disagreement
        out = analysis.disagreement.benjamini_hochberg([0.01, 0.04, 0.03]).round(3).tolist()
    """, tmp_path)
    assert got["out"] == [0.03, 0.04, 0.04]
    assert "scipy" not in got["heavy"] and "pandas" in got["heavy"]


def test_the_report_imports_no_scipy(tmp_path):
    """The report prints stored numbers: its live forecast is arithmetic on the backtest's stored
    record (analysis/live_forecast.py). Before: it came from analysis/backtest.py, whose fits
    import scipy.optimize, so `benchwatch report` (text or HTML) loaded an optimiser it never ran."""
    from jobs.analyze import analyze
    db = tmp_path / "bw.duckdb"
    ingest_file(open_store(db), "csv", FIX / "scores_proportion.csv")
    analyze(open_store(db))
    page = tmp_path / "index.html"
    got = _loaded_after(f"""
        import contextlib, io
        from cli.main import main
        with contextlib.redirect_stdout(io.StringIO()):
            out = [main(["report", "--db", {str(db)!r}]), main(["report", "--db", {str(db)!r}, "--out", {str(page)!r}])]
    """, tmp_path)
    assert got["out"] == [0, 0] and page.stat().st_size > 0
    assert "scipy" not in got["heavy"] and "pandas" in got["heavy"]


@pytest.mark.slow   # imports Prefect
def test_a_deployments_flow_module_imports_no_prefect_server(tmp_path):
    """A deployment's flow-run process imports its entrypoint's module (prefect.yaml) and only
    talks to the server as a client. Before: flows/pipeline.py imported the ephemeral server's
    module, and with it Prefect's whole web application, in every deployed run."""
    entrypoints = sorted({d["entrypoint"].split(":")[0]
                          for d in yaml.safe_load((ROOT / "prefect.yaml").read_text())["deployments"]})
    assert entrypoints == ["flows/pipeline.py"]
    got = _loaded_after("""
        import sys
        import flows.pipeline
        out = sorted(m for m in sys.modules if m.startswith(("prefect.server.api", "prefect.server.database")))
    """, tmp_path)
    assert "prefect" in got["heavy"] and got["out"] == []


def _freeze_count_at_exit(call: str, tmp_path: Path) -> int:
    """gc.get_freeze_count() as the interpreter exits, after `call` (a checker registered with
    atexit before it, so it runs after whatever the call registers)."""
    script = textwrap.dedent(f"""
        import atexit, gc, sys
        atexit.register(lambda: print("@@frozen", gc.get_freeze_count()))
        sys.argv = ["benchwatch", "query", "SELECT 1 AS one", "--db", {str(tmp_path / "bw.duckdb")!r}]
        from cli.main import main
        code = {call}
    """)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "SLACK_"))}
    env.update(PYTHONPATH=str(ROOT), HOME=str(tmp_path))
    cp = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                        timeout=300)
    assert cp.returncode == 0, cp.stderr[-2000:]
    assert "one" in cp.stdout
    return int(cp.stdout.rsplit("@@frozen", 1)[1])


def test_a_command_leaves_the_collector_as_python_runs_it(tmp_path):
    """Issue 52: no exit-time gc tricks. A command process (its own command line, as the console
    script runs it) and a test's main([...]) both exit with nothing frozen: an exit-time
    `gc.freeze` did not clear the issue's bar for keeping an optimisation (bench/run.py's cold
    line, alternated pairs)."""
    ingest_file(open_store(tmp_path / "bw.duckdb"), "csv", FIX / "scores_proportion.csv")
    assert _freeze_count_at_exit("main()", tmp_path) == 0
    assert _freeze_count_at_exit("main(sys.argv[1:])", tmp_path) == 0

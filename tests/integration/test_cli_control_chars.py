"""What the CLI prints on the terminal: every line free of raw control characters (issue 55,
item 8), and log lines at the chosen verbosity only.

`backfill` printed a file name's raw escape sequences (`\\x1b]0;…\\x07` retitles the terminal) and
newlines (a forged line), and a newline in SLACK_CHANNEL was echoed raw by `notify --test`.
Both failed before the fix.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cli.main import main

ROOT = Path(__file__).resolve().parents[2]


def _no_raw_controls(text: str) -> None:
    assert not any((ord(c) < 0x20 and c not in "\n\t") or 0x7f <= ord(c) <= 0x9f for c in text), repr(text)


def test_backfill_escapes_control_characters_of_file_names(synced_db, tmp_path, capsys):
    folder = tmp_path / "archive" / "csv"
    folder.mkdir(parents=True)
    name = "scores\x1b]0;owned\x07\nFORGED LINE_2025-01-02.csv"
    (folder / name).write_text("model,benchmark,score\no3,gpqa_diamond,0.8\n")
    (folder / "notes\x1b[2J.txt").write_text("not a copy")
    main(["backfill", str(tmp_path / "archive"), "--db", str(synced_db)])
    out, err = capsys.readouterr()
    _no_raw_controls(out + err)
    assert not any(line.startswith("FORGED") for line in (out + err).splitlines())
    assert "\\x1b]0;owned\\x07\\x0aFORGED LINE" in out


def test_notify_test_escapes_a_newline_in_the_channel(fake_slack, monkeypatch, capsys):
    for var in ("SLACK_WEBHOOK_URL", "PREFECT_API_URL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-123456789012-fakeBotTokenSecretValue")
    monkeypatch.setenv("SLACK_CHANNEL", "#alerts\nbenchwatch: all clear\x1b[8m")
    monkeypatch.setenv("SLACK_API_URL", fake_slack.api_url)
    main(["notify", "--test"])
    out, err = capsys.readouterr()
    _no_raw_controls(out + err)
    assert not any(line.startswith("benchwatch: all clear") for line in (out + err).splitlines())
    assert "#alerts\\x0abenchwatch: all clear\\x1b[8m" in out + err


@pytest.mark.parametrize("verbose, service", [(0, False), (1, False), (0, True)])
def test_a_librarys_info_lines_reach_the_terminal_only_with_v(verbose, service):
    """Prefect sets its run loggers to INFO (`Beginning flow run …`, `Finished in state …`):
    without -v the terminal shows WARNING and above whatever a library's logger level, with -v
    INFO too (before: every INFO line of an ephemeral `benchwatch run` was printed). `serve`, a
    service whose log is its output, shows them (`All deployments have been paused` at its stop)."""
    code = ("import logging; from cli.main import setup_logging; setup_logging(%d, service=%s); "
            "log = logging.getLogger('prefect.flow_runs'); log.setLevel(logging.INFO); "
            "log.info('run line'); log.warning('run warning')" % (verbose, service))
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert "WARNING prefect.flow_runs: run warning" in lines
    assert ("INFO prefect.flow_runs: run line" in lines) == bool(verbose or service)

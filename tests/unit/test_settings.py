"""common/settings.py: the one reader of the environment (names, defaults, cleaning), and no
other module reading a BENCHWATCH_*, Slack or Prefect variable itself."""

from __future__ import annotations

import re
from pathlib import Path

from common import settings
from helpers import code_folders

ROOT = Path(__file__).resolve().parents[2]


def test_unset_variables_read_as_empty_or_none():
    s = settings.read({})
    assert (s.db, s.data_path, s.threads, s.contact, s.report_dir, s.report_base_url) == (None, "", "", "", None, "")
    assert s.info_alerts == frozenset() and (s.slack_webhook_url, s.slack_bot_token) == ("", "")
    assert (s.slack_channel, s.slack_api_url, s.prefect_api_url, s.pg_password) == (None, None, "", None)


def test_values_are_cleaned_as_their_users_read_them():
    s = settings.read({"BENCHWATCH_DB": " a.duckdb ", "BENCHWATCH_REPORT_DIR": "  ", "BENCHWATCH_THREADS": " 2 ",
                       "BENCHWATCH_INFO_ALERTS": " new_frontier, ,x ", "SLACK_CHANNEL": " #c ",
                       "SLACK_WEBHOOK_URL": " https://hooks.slack.com/services/T0/B0/zz "})
    assert s.db == " a.duckdb "          # a path as given
    assert s.report_dir is None and s.threads == "2" and s.slack_channel == "#c"
    assert s.info_alerts == {"new_frontier", "x"}
    assert s.slack_webhook_url == "https://hooks.slack.com/services/T0/B0/zz"


def test_secrets_stay_out_of_the_repr():
    text = repr(settings.read({"SLACK_WEBHOOK_URL": "https://hooks.slack.com/services/T1/B1/sekrit",
                               "SLACK_BOT_TOKEN": "xoxb-sekrit", "PGPASSWORD": "pw-sekrit"}))
    assert "sekrit" not in text


def test_the_environment_is_read_when_asked(monkeypatch):
    monkeypatch.setenv("BENCHWATCH_CONTACT", "ops@example.org")
    assert settings.read().contact == "ops@example.org"
    monkeypatch.delenv("BENCHWATCH_CONTACT")
    assert settings.read().contact == ""


def test_no_other_module_reads_the_projects_variables():
    names = re.compile(r"""environ(?:\.get)?[\[(]\s*["'](?:BENCHWATCH_|SLACK_|PREFECT_|PGPASSWORD)|"""
                       r"""getenv\(\s*["'](?:BENCHWATCH_|SLACK_|PREFECT_|PGPASSWORD)|"""
                       r"""env\.get\(\s*["'](?:BENCHWATCH_|SLACK_|PREFECT_|PGPASSWORD)""")
    offenders = [f"{path.relative_to(ROOT)}:{n}" for top in code_folders(ROOT) if top.name not in ("bench", "tests")
                 for path in top.rglob("*.py") if path.name != "settings.py" or path.parent.name != "common"
                 for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if names.search(line)]
    assert offenders == []

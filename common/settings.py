"""The environment benchwatch reads, in one place.

Every `BENCHWATCH_*` variable, and the Slack, Prefect and PostgreSQL variables benchwatch reads
itself, is named here and read by `read(env)` into one `Settings` object; the modules that use a
setting take it from that object, so a name, its default and how its text is cleaned are said
once. The environment is read when asked, not at import: a command, a flow run or a test that
sets a variable sees it. `env` (default `os.environ`) is a parameter so that a caller can hand
in another mapping (flows.secrets: the Slack values found in Prefect Secret blocks; tests).

Secrets (the Slack webhook URL and bot token, the PostgreSQL password) are kept out of the
object's repr; whoever uses one registers it with common.redact first (alerts.slack,
flows.secrets), so neither a log line nor an error message can carry it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Mapping

# The variables, by name (docs/deploy.md and docs/commands.md describe them).
DB = "BENCHWATCH_DB"                            # the database path or DuckLake URL
DATA_PATH = "BENCHWATCH_DATA_PATH"              # a DuckLake store's data folder
THREADS = "BENCHWATCH_THREADS"                  # DuckDB threads per instance (storage.threads)
CONTACT = "BENCHWATCH_CONTACT"                  # the operator's contact in the User-Agent
REPORT_DIR = "BENCHWATCH_REPORT_DIR"            # where the pipeline publishes report.html
REPORT_BASE_URL = "BENCHWATCH_REPORT_BASE_URL"  # where that folder is served (links from Slack)
INFO_ALERTS = "BENCHWATCH_INFO_ALERTS"          # info alert kinds turned on, comma-separated
SLACK_WEBHOOK_URL = "SLACK_WEBHOOK_URL"
SLACK_BOT_TOKEN = "SLACK_BOT_TOKEN"
SLACK_CHANNEL = "SLACK_CHANNEL"
SLACK_API_URL = "SLACK_API_URL"
PREFECT_API_URL = "PREFECT_API_URL"
PREFECT_HOME = "PREFECT_HOME"
PREFECT_PROFILES_PATH = "PREFECT_PROFILES_PATH"
PREFECT_EPHEMERAL_STARTUP_TIMEOUT = "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS"
PG_PASSWORD = "PGPASSWORD"                      # libpq's: the DuckLake catalog's password
# Written, never read here: Prefect's own setting, which the CLI defaults (cli.main.quiet_prefect_defaults)
# in the environment before anything imports Prefect, which reads it at import.
PREFECT_SERVER_ANALYTICS = "PREFECT_SERVER_ANALYTICS_ENABLED"


def _text(env: Mapping[str, str], name: str) -> str:
    """The variable's value, white space stripped; "" when unset."""
    return (env.get(name) or "").strip()


@dataclass(frozen=True)
class Settings:
    """What the environment says, cleaned as each user reads it: "" or None when unset."""

    db: str | None                      # as given (a path may end in a space)
    data_path: str                      # as given
    threads: str
    contact: str
    report_dir: str | None
    report_base_url: str
    info_alerts: frozenset[str]
    slack_webhook_url: str = field(repr=False)
    slack_bot_token: str = field(repr=False)
    slack_channel: str | None
    slack_api_url: str | None
    prefect_api_url: str
    prefect_home: str | None            # as given
    prefect_profiles_path: str | None   # as given
    prefect_ephemeral_startup_timeout: str | None   # as given
    pg_password: str | None = field(repr=False)


def read(env: Mapping[str, str] | None = None) -> Settings:
    """The settings of `env` (default: this process's environment, now)."""
    env = os.environ if env is None else env
    return Settings(
        db=env.get(DB) or None,
        data_path=env.get(DATA_PATH) or "",
        threads=_text(env, THREADS),
        contact=_text(env, CONTACT),
        report_dir=_text(env, REPORT_DIR) or None,
        report_base_url=_text(env, REPORT_BASE_URL),
        info_alerts=frozenset(k.strip() for k in (env.get(INFO_ALERTS) or "").split(",") if k.strip()),
        slack_webhook_url=_text(env, SLACK_WEBHOOK_URL),
        slack_bot_token=_text(env, SLACK_BOT_TOKEN),
        slack_channel=_text(env, SLACK_CHANNEL) or None,
        slack_api_url=_text(env, SLACK_API_URL) or None,
        prefect_api_url=_text(env, PREFECT_API_URL),
        prefect_home=env.get(PREFECT_HOME) or None,
        prefect_profiles_path=env.get(PREFECT_PROFILES_PATH) or None,
        prefect_ephemeral_startup_timeout=env.get(PREFECT_EPHEMERAL_STARTUP_TIMEOUT) or None,
        pg_password=env.get(PG_PASSWORD) or None,
    )

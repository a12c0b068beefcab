"""The one resolver of the secrets benchwatch's sources need (issue 22: one owner).

Secrets are resolved at the top — by the CLI (`benchwatch run --no-prefect`) and by the Prefect
tasks (`flows.pipeline`) — and handed down to the jobs as plain values (`jobs.collect.collect(...,
secrets=...)`); nothing below `flows` reads the environment or Prefect for a secret, and a
secret value is never a flow or task *parameter* (Prefect would store it with the run).

A source declares what it needs (`Scraper.secret`, the environment variable, and
`Scraper.secret_block`, the Prefect Secret block). Order, per secret: the environment variable,
then, only when a Prefect API is configured (`prefect_api_hinted`: importing Prefect costs
seconds, and without an API a lookup would start a throw-away server to find nothing), the
Prefect Secret block.
Every value found is registered with `common.redact`. A secret found nowhere is simply absent
from the result: the source that needs it is skipped with one line (jobs.collect).

The Slack settings follow the same order (`slack_settings`): SLACK_WEBHOOK_URL or SLACK_BOT_TOKEN
in the environment; else the Secret block `benchwatch-slack-webhook-url`, then
`benchwatch-slack-bot-token` (its channel from SLACK_CHANNEL or the Prefect Variable
`benchwatch_slack_channel`); the values are handed to `alerts.slack.load_settings`, which never
imports Prefect.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

from common import settings
from common import redact
from alerts import config
from alerts.slack import load_settings
from scrapers.base import ScrapeError
import scrapers
from jobs.store import names_lake, target_password, without_password

if TYPE_CHECKING:
    from alerts.slack import SlackSettings

log = logging.getLogger("benchwatch.flows.secrets")

_PREFECT_LOCAL_SETTINGS = (".env", "prefect.toml", "pyproject.toml")
_PREFECT_API_SETTING = re.compile(r"PREFECT_API_URL|^\s*\[(?:tool\.prefect\.)?api\]|^\s*api\.url\s*=", re.MULTILINE)


# Prefect settings files that can set an API URL (besides PREFECT_API_URL in the environment):
# the profiles file, and the working directory's .env, prefect.toml and pyproject.toml.
def prefect_api_hinted(env: Mapping[str, str]) -> bool:
    """Whether Prefect may have an API configured, without importing Prefect: already
    imported (a flow run, a test harness: asking costs nothing), PREFECT_API_URL set, or a Prefect
    settings file that mentions an API URL. False means no Secret block can be reached."""
    found = settings.read(env)
    if "prefect" in sys.modules or found.prefect_api_url:
        return True
    home = Path(found.prefect_home or Path.home() / ".prefect").expanduser()
    files = [Path(found.prefect_profiles_path or home / "profiles.toml").expanduser(),
             *(Path(name) for name in _PREFECT_LOCAL_SETTINGS)]
    for path in files:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if _PREFECT_API_SETTING.search(text):
            return True
    return False


def _prefect_block(block: str) -> str | None:
    """The value of a Prefect Secret block (None: no API, no such block, or the server is down)."""
    try:
        from prefect.settings import get_current_settings
        if not get_current_settings().api.url:
            return None
        from prefect.blocks.system import Secret
        secret: Any = Secret.load(block)     # a Secret (sync context); typed as possibly a coroutine
        return str(secret.get())
    except Exception as exc:  # noqa: BLE001 - a missing block, an unreachable server: "not configured here"
        log.info("[secrets] Prefect Secret block %r unavailable: %s", block, redact.one_line(exc, 200))
        return None


def resolve_secrets(wanted: Mapping[str, str | None], *, env: Mapping[str, str] | None = None,
                    block_lookup: Callable[[str], str | None] | None = None) -> dict[str, str]:
    """{variable: value} for each secret of `wanted` ({variable: Prefect block or None}) that is configured.

    `env` (default os.environ) and `block_lookup` (default: the Prefect Secret block, only with
    an API configured) are parameters so that tests need neither the process environment nor Prefect.
    """
    env = os.environ if env is None else env
    out: dict[str, str] = {}
    lookup = block_lookup
    if lookup is None and any(wanted.values()) and prefect_api_hinted(env):
        lookup = _prefect_block
    for name, block in wanted.items():
        value = (env.get(name) or "").strip()
        if not value and lookup is not None and block:
            value = (lookup(block) or "").strip()
        if value:
            redact.register_secret(value)
            out[name] = value
    return out


# (webhook, bot token, channel) from Prefect; raises when no API is configured or it is unreachable
SlackLookup = Callable[[], "tuple[str | None, str | None, str | None]"]


def slack_settings(env: Mapping[str, str] | None = None, *, prefect_lookup: SlackLookup | None = None) -> SlackSettings:
    """The Slack settings (`alerts.slack.SlackSettings`): the environment first, then, only when
    neither SLACK_WEBHOOK_URL nor SLACK_BOT_TOKEN is set, the Prefect Secret blocks (see the module
    docstring). `prefect_lookup` replaces the Prefect lookup in tests."""
    env = os.environ if env is None else env
    found = settings.read(env)
    if found.slack_webhook_url or found.slack_bot_token:
        return load_settings(env)
    try:
        webhook, token, channel = (prefect_lookup or (lambda: _slack_from_prefect(env)))()
    except Exception as exc:  # noqa: BLE001 - no API, server down, block missing: "not configured here"
        return load_settings(env, missing=f"; Prefect Secret blocks unavailable: {redact.one_line(exc, 200)}")
    webhook, token = (webhook or "").strip(), (token or "").strip()
    if not webhook and not token:
        from alerts import config
        return load_settings(env, missing=(f"; no Prefect Secret block {config.SECRET_BLOCK_WEBHOOK!r} "
                                           f"or {config.SECRET_BLOCK_BOT_TOKEN!r}"))
    resolved = {**env, settings.SLACK_WEBHOOK_URL: webhook, settings.SLACK_BOT_TOKEN: token}
    if channel and not found.slack_channel:
        resolved[settings.SLACK_CHANNEL] = channel
    return load_settings(resolved, origin="prefect")


def _slack_from_prefect(env: Mapping[str, str]) -> tuple[str | None, str | None, str | None]:
    """Read the Slack Secret blocks (and the channel Variable) from the configured Prefect API.

    Prefect is imported only here (the notify path runs without it), and only used when an API URL is
    configured: without one, a lookup would start a throwaway local server just to find nothing.
    Nor is it imported to find that out when nothing points at an API (`prefect_api_hinted`).
    """
    if not prefect_api_hinted(env):
        raise RuntimeError("no Prefect API configured (PREFECT_API_URL unset)")
    from prefect.settings import get_current_settings

    if not get_current_settings().api.url:
        raise RuntimeError("no Prefect API configured (PREFECT_API_URL unset)")
    from prefect.blocks.system import Secret
    from prefect.variables import Variable

    def secret(name: str) -> str | None:
        try:
            found: Any = Secret.load(name)       # a Secret (sync context); typed as possibly a coroutine
            return str(found.get())
        except ValueError:  # "Unable to find block document named …"
            return None

    webhook = secret(config.SECRET_BLOCK_WEBHOOK)
    token = None if webhook else secret(config.SECRET_BLOCK_BOT_TOKEN)
    channel = Variable.get(config.VARIABLE_CHANNEL, default=None) if token else None
    return webhook, token, (str(channel) if channel else None)


def source_secrets(sources: Iterable[str] | None = None, *, env: Mapping[str, str] | None = None,
                   block_lookup: Callable[[str], str | None] | None = None) -> dict[str, str]:
    """The resolved secrets of `sources` (default: the enabled ones); unknown names are left to
    `collect`, which reports them."""
    wanted: dict[str, str | None] = {}
    for name in (list(sources) if sources else scrapers.enabled_sources()):
        try:
            scraper = scrapers.get(name)
        except ScrapeError:
            continue
        if scraper.secret:
            wanted[scraper.secret] = scraper.secret_block
    return resolve_secrets(wanted, env=env, block_lookup=block_lookup) if wanted else {}


# --- the PostgreSQL password of a DuckLake catalog ------------------------------------------------
# libpq (psycopg's writer lock and DuckDB's postgres extension alike) reads PGPASSWORD when the
# conninfo names no password: that is how the password reaches a Prefect flow run without ever
# being one of its parameters. Where else: ~/.pgpass (libpq reads it too), or the Prefect Secret
# block below, read by the flow run itself.
PG_PASSWORD_ENV = settings.PG_PASSWORD
PG_PASSWORD_BLOCK = "benchwatch-pg-password"

DB_PATH_PASSWORD_REFUSED = (
    "db_path carries a PostgreSQL password; Prefect stores flow parameters with the run, so "
    f"leave it out of the URL and give the worker {PG_PASSWORD_ENV}, a ~/.pgpass file or the "
    f"Prefect Secret block {PG_PASSWORD_BLOCK!r} (docs/deploy.md)")


def db_password(db_path: str | None) -> str | None:
    """The password a `ducklake:postgres:` db_path carries (None for a file path or none)."""
    return target_password(db_path)


def password_to_environment(db_path: str, *, env: Any = None) -> str:
    """`db_path` without its PostgreSQL password, the password moved into PGPASSWORD (of `env`,
    default os.environ: libpq reads it in this process and in the processes it starts).
    `benchwatch run` calls this before handing db_path to the flow; a file path is unchanged."""
    password = db_password(db_path)
    if password is None:
        return db_path
    env = os.environ if env is None else env
    redact.register_secret(password)
    env[PG_PASSWORD_ENV] = password
    return without_password(db_path)


def lake_password_from_block(db_path: str | None, *, env: Any = None,
                             block_lookup: Callable[[str], str | None] | None = None) -> None:
    """In a flow run on a DuckLake store with no PGPASSWORD: the Prefect Secret block
    `benchwatch-pg-password`, when there is one, becomes PGPASSWORD of this (flow-run) process
    (`env`, default os.environ)."""
    env = os.environ if env is None else env
    if not names_lake(db_path) or settings.read(env).pg_password:
        return
    found = resolve_secrets({PG_PASSWORD_ENV: PG_PASSWORD_BLOCK}, env=env, block_lookup=block_lookup)
    if found.get(PG_PASSWORD_ENV):
        env[PG_PASSWORD_ENV] = found[PG_PASSWORD_ENV]

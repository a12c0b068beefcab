"""Alert-rule thresholds and delivery limits (operational settings, not statistics).

Statistical thresholds (bin edges, hysteresis margin, P for committing a bin move, FDR level)
live in `analysis/constants.py`; the constants here decide when a finding becomes a message.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from common import settings

# --- Alert kinds ----------------------------------------------------------------------------------
# Each kind is declared by its rule module (alerts/rules/<rule>.py) and registered in
# alerts.rules.RULES; the kind lists (all_kinds, info_kinds, source_health_kinds) and the kind
# names (SATURATION_BIN_CHANGED, ...) are read from that registry, never declared here.


# Label keys every alert carries ('' when a key does not apply to the kind); the fingerprint
# is a hash of all of them, sorted.
LABEL_KEYS: tuple[str, ...] = ("kind", "benchmark", "table", "model", "source", "scope", "signal", "level")

# --- Rule thresholds ---------------------------------------------------------------------------
# A source is failing after this many failed collection runs in a row (issue: N = 3).
SOURCE_FAILING_RUNS = 3
# A source is stale when it has produced no new snapshot for this many days (issue: D = 14).
SOURCE_STALE_DAYS = 14
# A network outage: in the latest collection run, at least this many sources were attempted and
# every one failed with a network cause (offline, DNS, connection refused, unreachable, timed
# out) for at least SOURCE_FAILING_RUNS runs. It is one alert, and it inhibits the per-source
# failure alerts it explains (alerts/rules/source_health.py).
NETWORK_OUTAGE_MIN_SOURCES = 3
# Sources whose last attempt is this close to the newest attempt belong to the latest run
# (storage.rule_inputs.RUN_SESSION_GAP groups fetch attempts into runs the same way).
LATEST_RUN_WINDOW_MINUTES = 10

# A level whose P(level holds) (the share of re-evaluations of the top k at the real sampling
# noise whose S stays in the level's bin) is below this is not announced as that level: a
# message says the level is not settled and names the stored one (alerts.text.settled).
LEVEL_ANNOUNCE_MIN_P = 0.5
# The scopes whose level changes are announced. A post-cutoff slice's S moves when a model's dates
# move (a cutoff table, another source's release dates) as well as when its leaderboard does, and is
# recomputed back in time, so a message could name no change of the table: its level is stored and
# shown (report, saturation_latest), not alerted.
ANNOUNCED_SCOPES = ("all",)
# The one definition of the one probability messages show, printed once in every digest's footer.
P_LEVEL_HOLDS_DEFINITION = ("P(level holds): the share of re-evaluations of the top models at their real sampling "
                            "noise whose S stays in the level's bin")

# --- Slack delivery -----------------------------------------------------------------------------
# Each handler retries while the request's attempt count (shared by all handlers, slack_sdk
# RetryState) is below its own maximum: a 429 then a dropped connection then a 500 is 3 attempts.
SLACK_RATE_LIMIT_RETRIES = 3      # 429s honoured (Retry-After) before giving up for this run
SLACK_CONNECTION_RETRIES = 2      # dropped connections / resets
SLACK_SERVER_ERROR_RETRIES = 2    # 500 / 503
SLACK_TIMEOUT_SECONDS = 30
# The longest Retry-After one notify run waits out; a longer one (Slack has sent 700 s and more)
# ends the delivery for this run: the notifications stay in the outbox for the next run, and a
# run never outlasts its claim on them (jobs.alerts.NOTIFY_CLAIM_LEASE) while asleep.
SLACK_MAX_RETRY_AFTER_SECONDS = 60

# Block Kit limits (docs/architecture.md, "Prefect and Slack facts"; docs.slack.dev/reference/block-kit/blocks).
SLACK_MAX_BLOCKS = 50
SLACK_MAX_SECTION_TEXT = 3000
SLACK_MAX_HEADER_TEXT = 150
# Slack also caps the cumulative text of a message's blocks, undocumented: maintainers speak of
# "12,000 text characters with a buffer for block containers", and users saw
# msg_blocks_too_long at 13,297 and even 11,341 characters (slackapi/bolt-js#2509, #2867).
SLACK_MAX_MESSAGE_CHARS = 10000
# Longest scraped name shown verbatim (the rest is cut with an ellipsis).
MAX_NAME_CHARS = 200

# Prefect Secret blocks consulted when the environment has no Slack settings.
SECRET_BLOCK_WEBHOOK = "benchwatch-slack-webhook-url"
SECRET_BLOCK_BOT_TOKEN = "benchwatch-slack-bot-token"
# Prefect Variable holding the channel for the bot-token mode (a channel name is not a secret).
VARIABLE_CHANNEL = "benchwatch_slack_channel"


@dataclass(frozen=True)
class RuleSettings:
    """What the rules evaluate; defaults are the constants above."""

    source_failing_runs: int = SOURCE_FAILING_RUNS
    source_stale_days: float = SOURCE_STALE_DAYS
    # info kinds are off unless named: new_frontier, source_disagreement (BENCHWATCH_INFO_ALERTS)
    enabled_info_kinds: frozenset[str] = frozenset()   # e.g. frozenset({'new_frontier'})

    def __post_init__(self) -> None:
        if self.source_failing_runs < 1:
            raise ValueError(f"source_failing_runs must be >= 1, got {self.source_failing_runs}")
        if self.source_stale_days <= 0:
            raise ValueError(f"source_stale_days must be > 0, got {self.source_stale_days}")


# --- HTML report link -----------------------------------------------------------------------------
# The pipeline writes the report as $BENCHWATCH_REPORT_DIR/REPORT_FILE_NAME; when
# $BENCHWATCH_REPORT_BASE_URL says where that folder is served, the digest links to it.
REPORT_FILE_NAME = "report.html"


def report_url_from_env(env: Mapping[str, str] | None = None) -> str | None:
    """The report's URL from `BENCHWATCH_REPORT_BASE_URL` (http or https only), else None."""
    base = settings.read(env).report_base_url
    if not base.lower().startswith(("http://", "https://")):
        return None
    return f"{base.rstrip('/')}/{REPORT_FILE_NAME}"


def rule_settings_from_env(env: Mapping[str, str] | None = None) -> RuleSettings:
    """Defaults, with info kinds turned on by `BENCHWATCH_INFO_ALERTS=new_frontier` (comma-separated)."""
    return RuleSettings(enabled_info_kinds=settings.read(env).info_alerts)

"""Keep Slack secrets out of logs, exception text and CLI output.

A webhook URL is a bearer credential (anyone holding it can post to the channel), and so is a
bot token. They reach log records in two ways: our own messages, and slack_sdk, whose clients
log the request URL and headers at DEBUG/INFO level. `redact` removes the secrets that were
registered when the settings were loaded, plus anything that looks like one:

- `https://hooks.slack.com/services/T…/B…/…` and any other `/services/T…/B…/…` webhook path,
- Slack tokens `xoxb-…`, `xoxp-…`, `xoxa-…`, `xoxr-…`, `xoxs-…`, `xoxe-…`, `xapp-…`,
- `Authorization: Bearer …` header values.

`RedactingFilter` applies it to log records. A logging filter only sees records created on
the logger it is attached to (not records propagated from child loggers), so `install()`
attaches it to every logger benchwatch and slack_sdk log secrets through; the Slack clients
are given `SDK_LOGGER`, which carries the filter too.
"""

from __future__ import annotations

import logging
import re
import threading

REDACTED = "[REDACTED]"

_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # the secret part of a webhook URL is the path after /services/
    (re.compile(r"(/services/)T[A-Za-z0-9_-]*/B[A-Za-z0-9_-]*/[^\s\"'<>|)\]]+"), r"\1" + REDACTED),
    (re.compile(r"\bx(?:ox[abprse]|app)-[A-Za-z0-9-]+"), "xox?-" + REDACTED),
    (re.compile(r"(?i)(bearer\s+)[^\s\"',}]+"), r"\1" + REDACTED),
)

_lock = threading.Lock()
_secrets: set[str] = set()

# Loggers that may carry a secret in a message. Filters do not propagate to child loggers,
# hence the explicit list.
PACKAGE_LOGGERS: tuple[str, ...] = (
    "benchwatch",
    "benchwatch.alerts",
    "benchwatch.flows",
    "benchwatch.storage",
    "benchwatch.alerts.slack_sdk",
    "slack_sdk",
    "slack_sdk.webhook.client",
    "slack_sdk.web.base_client",
    "slack_sdk.web.client",
)

# The logger handed to slack_sdk clients (`logger=`), so their records pass our filter.
SDK_LOGGER = logging.getLogger("benchwatch.alerts.slack_sdk")


def register_secret(value: str | None) -> None:
    """Remember a configured secret so that every later `redact` call removes it verbatim."""
    if value and len(value) >= 8:  # shorter values would redact ordinary words
        with _lock:
            _secrets.add(value)


def redact(text: object) -> str:
    """`text` as a string with every registered secret and secret-looking pattern replaced."""
    out = str(text)
    with _lock:
        secrets = sorted(_secrets, key=len, reverse=True)
    for secret in secrets:
        if secret in out:
            out = out.replace(secret, REDACTED)
    for pattern, replacement in _PATTERNS:
        out = pattern.sub(replacement, out)
    return out


def one_line(text: object, limit: int = 300) -> str:
    """A redacted, single-line, length-capped reason for stored errors and CLI output."""
    flat = " ".join(redact(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class RedactingFilter(logging.Filter):
    """Rewrites a record's message (with its args) and exception text through `redact`."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: leave it to the handler to report
            return True
        record.msg = redact(message)
        record.args = None
        if record.exc_info and record.exc_info[0] is not None:
            # the Formatter reuses exc_text when set, so the traceback is redacted once here
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


_FILTER = RedactingFilter()


def install(logger_names: tuple[str, ...] = PACKAGE_LOGGERS) -> None:
    """Attach the redacting filter to the named loggers (idempotent)."""
    for name in logger_names:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)

"""Deliver a rendered digest: Slack (incoming webhook or Web API) through slack_sdk, or the console.

Settings, first match wins:
1. `SLACK_WEBHOOK_URL` → incoming webhook (`WebhookClient`);
2. `SLACK_BOT_TOKEN` + `SLACK_CHANNEL` → `WebClient.chat_postMessage`
   (`SLACK_API_URL` overrides the Web API base URL, e.g. for a local fake);
3. otherwise the console/log, with a warning saying why.

`load_settings` reads only the mapping it is given (default: the environment). The Prefect Secret
blocks `benchwatch-slack-webhook-url` / `benchwatch-slack-bot-token` (and the channel Variable)
are looked up by the one secret resolver, `flows.secrets.slack_settings`, which hands the values
down: nothing in alerts/ imports Prefect.

Every secret found is registered with `common.redact`, which redacts every record of the
`benchwatch` and `slack_sdk` logger hierarchies, so neither the webhook URL nor a token reaches
a log, an error or the CLI.

slack_sdk facts this relies on (docs/architecture.md, "Slack delivery"): `WebhookClient.send` does not raise on
HTTP errors, it returns the status; `WebClient` raises `SlackApiError`; 429 retries are opt-in
(`RateLimitErrorRetryHandler` sleeps Retry-After + up to 1 s jitter, however long Retry-After
is); the default handlers only retry one dropped connection. Both notifiers therefore install
rate-limit (capped: `config.SLACK_MAX_RETRY_AFTER_SECONDS`, a longer wait is left for the next
run), connection and server-error (500/503) handlers, and never raise for a Slack or network
failure: `send` returns a `DeliveryResult` with a redacted one-line reason.

Delivery is at-least-once (jobs/alerts.py): `send` asks the caller's `still_claimed` before every
request, a retry included, so a run whose claim on the notifications lapsed posts nothing more;
and every message carries a delivery key (the same for the same notifications) in its context
line, so a message that a later run sends again is recognisable. Neither incoming webhooks nor
`chat.postMessage` take an idempotency key.
"""

from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, Mapping, Protocol, Sequence
from urllib.parse import urlsplit
from http.client import HTTPException
import random

from common import settings
from alerts import config
from common import redact
from common.redact import inert_text
from alerts.render import SlackMessage, escape, render_plain
from storage.alert_records import Notification
from common.time import parse_retry_after, utcnow

if TYPE_CHECKING:   # slack_sdk is imported by the Slack notifiers: console delivery needs none of it
    from slack_sdk.http_retry import RetryHandler

log = logging.getLogger("benchwatch.alerts")
# Handed to the slack_sdk clients (`logger=`): their request logs land in our redacted hierarchy.
SDK_LOG = logging.getLogger("benchwatch.alerts.slack_sdk")

WEBHOOK, WEB_API, CONSOLE = "slack-webhook", "slack-web", "console"


@dataclass(frozen=True)
class SlackSettings:
    """Where notifications go. `repr` never shows the secrets."""

    mode: str                      # slack-webhook | slack-web | console
    webhook_url: str | None = None
    bot_token: str | None = None
    channel: str | None = None
    api_url: str | None = None     # Web API base, e.g. http://127.0.0.1:8080/api/
    origin: str = "none"           # env | prefect | none
    reason: str = ""               # why console, when it is

    def __repr__(self) -> str:
        return (f"SlackSettings(mode={self.mode!r}, channel={self.channel!r}, api_url={self.api_url!r}, "
                f"origin={self.origin!r}, webhook_url={'***' if self.webhook_url else None}, "
                f"bot_token={'***' if self.bot_token else None})")

    __str__ = __repr__


@dataclass(frozen=True)
class DeliveryResult:
    """`sent` = how many leading messages Slack accepted; `error` is redacted and one line."""

    ok: bool
    sent: int
    receiver: str
    error: str | None = None


# Asked before each request: None while the caller still owns the notifications, else why not.
ClaimCheck = Callable[[], "str | None"]


class Notifier(Protocol):
    receiver: str

    def send(self, messages: Sequence[SlackMessage], *, still_claimed: ClaimCheck | None = None
             ) -> DeliveryResult: ...


# --- settings -------------------------------------------------------------------------------------

def load_settings(env: Mapping[str, str] | None = None, *, origin: str = "env",
                  missing: str = "") -> SlackSettings:
    """The Slack settings from `env` (default os.environ; see the module docstring); installs log
    redaction first. `origin` says where the caller found the values (`prefect`: Secret blocks,
    flows.secrets) and `missing` why none were found beyond the environment (for the warning)."""
    redact.install()
    found = settings.read(env)
    webhook, token = found.slack_webhook_url, found.slack_bot_token
    channel, api_url = found.slack_channel, found.slack_api_url
    if not webhook and not token:
        log.warning("[alerts] no Slack settings (SLACK_WEBHOOK_URL, or SLACK_BOT_TOKEN + SLACK_CHANNEL%s); "
                    "notifications go to the console/log", missing)
        return SlackSettings(mode=CONSOLE, reason=f"no Slack settings{missing}")
    redact.register_secret(webhook)
    redact.register_secret(token)
    if webhook:
        return SlackSettings(mode=WEBHOOK, webhook_url=webhook, origin=origin)
    if not channel:
        log.warning("[alerts] a Slack bot token is set but no channel (SLACK_CHANNEL or the Prefect Variable %s); "
                    "notifications go to the console/log", config.VARIABLE_CHANNEL)
        return SlackSettings(mode=CONSOLE, origin=origin, reason="bot token without a channel")
    return SlackSettings(mode=WEB_API, bot_token=token, channel=channel, api_url=api_url, origin=origin)


# --- notifiers -------------------------------------------------------------------------------------

class ClaimLapsed(Exception):
    """The caller no longer owns the notifications being sent (raised out of a retry)."""


def retry_after_seconds(headers: Mapping[str, object] | None) -> float | None:
    """A response's Retry-After in seconds (slack_sdk gives header values as lists): delta-seconds
    or an HTTP-date (`common.time.parse_retry_after`, as the fetcher reads it); None if absent or
    unreadable. A date beyond the cap is no "no value": it is left for the next run."""
    for key, value in (headers or {}).items():
        if str(key).lower() == "retry-after":
            first = value[0] if isinstance(value, (list, tuple)) and value else value
            return parse_retry_after(str(first), utcnow())
    return None


def rate_limit_reason(headers: Mapping[str, object] | None) -> str:
    """Why a 429 was not retried, for the DeliveryResult."""
    wait = retry_after_seconds(headers)
    cap = config.SLACK_MAX_RETRY_AFTER_SECONDS
    if wait is not None and wait > cap:
        return (f"HTTP 429: rate limited with Retry-After {wait:g} s, longer than the {cap} s one run waits; "
                "left for the next run")
    return "HTTP 429: rate limited; left for the next run"


def _capped_rate_limit_handler(max_retry_count: int) -> RetryHandler:
    """slack_sdk's rate-limit handler with two limits: it retries only a Retry-After of at most
    `config.SLACK_MAX_RETRY_AFTER_SECONDS` (read when a 429 arrives), and after the wait asks its
    `still_claimed` (set by the notifier for each send) before the request is sent again."""
    from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler

    class CappedRateLimitRetryHandler(RateLimitErrorRetryHandler):
        still_claimed: ClaimCheck | None = None

        def _can_retry(self, *, state, request, response=None, error=None) -> bool:  # type: ignore[no-untyped-def]
            if response is None or response.status_code != 429:
                return False
            wait = retry_after_seconds(response.headers)
            return wait is None or wait <= config.SLACK_MAX_RETRY_AFTER_SECONDS

        def prepare_for_next_attempt(self, *, state, request, response=None, error=None) -> None:  # type: ignore[no-untyped-def]
            if response is None:
                raise error  # type: ignore[misc]
            state.next_attempt_requested = True
            wait = retry_after_seconds(response.headers)
            wait = min(1.0 if wait is None else wait, config.SLACK_MAX_RETRY_AFTER_SECONDS)
            time.sleep(wait + random.uniform(0.0, min(1.0, 0.1 + wait / 4)))     # jitter, as slack_sdk's (< 1 s)
            state.increment_current_attempt()
            reason = self.still_claimed() if self.still_claimed is not None else None
            if reason is not None:
                raise ClaimLapsed(reason)

    return CappedRateLimitRetryHandler(max_retry_count=max_retry_count)


def retry_handlers() -> list[RetryHandler]:
    """Rate limits (Retry-After, capped), dropped connections, and 500/503, each a few times."""
    from slack_sdk.http_retry.builtin_handlers import (
        ConnectionErrorRetryHandler,
        ServerErrorRetryHandler,
    )
    return [
        _capped_rate_limit_handler(config.SLACK_RATE_LIMIT_RETRIES),
        ConnectionErrorRetryHandler(max_retry_count=config.SLACK_CONNECTION_RETRIES),
        ServerErrorRetryHandler(max_retry_count=config.SLACK_SERVER_ERROR_RETRIES),
    ]


def delivery_key(message: SlackMessage) -> str:
    """A short key of the notifications a message carries (fingerprint, transition, episode): the
    same when a later run sends them again, so a repeated message is recognisable."""
    parts = sorted(f"{n.fingerprint}|{n.transition}|{n.episode}" for n in message.notifications)
    return "bw-" + hashlib.sha256("\n".join(parts).encode()).hexdigest()[:12]


def with_delivery_key(message: SlackMessage) -> SlackMessage:
    """The message with its delivery key as the last element of its first context block (or a
    context block of its own when it has none and there is room)."""
    element = {"type": "mrkdwn", "text": f"delivery key `{delivery_key(message)}`"}
    blocks = [dict(b) for b in message.blocks]
    for block in blocks:
        if block.get("type") == "context" and len(block.get("elements", [])) < 10:
            block["elements"] = [*block["elements"], element]
            return replace(message, blocks=blocks)
    if len(blocks) < config.SLACK_MAX_BLOCKS:
        blocks.append({"type": "context", "elements": [element]})
        return replace(message, blocks=blocks)
    return message


def _delivery_errors() -> tuple[type[BaseException], ...]:
    """Exceptions that mean "Slack or the network failed", as opposed to a bug of ours."""
    from slack_sdk.errors import SlackClientError
    return (SlackClientError, OSError, HTTPException)


class _SlackNotifier:
    receiver = ""
    _handlers: list[RetryHandler] = []

    def _post(self, message: SlackMessage) -> str | None:
        """Post one message; None when Slack accepted it, else the reason."""
        raise NotImplementedError

    def send(self, messages: Sequence[SlackMessage], *, still_claimed: ClaimCheck | None = None) -> DeliveryResult:
        """Post the messages in order, stopping at the first failure (later ones stay queued).
        `still_claimed` is asked before every request (a retry after a Retry-After included)."""
        for handler in self._handlers:
            if hasattr(handler, "still_claimed"):
                handler.still_claimed = still_claimed
        for i, message in enumerate(messages):
            reason = still_claimed() if still_claimed is not None else None
            if reason is None:
                try:
                    reason = self._post(with_delivery_key(message))
                except ClaimLapsed as exc:
                    reason = str(exc)
                except _delivery_errors() as exc:
                    reason = f"{type(exc).__name__}: {exc}"
            if reason is not None:
                reason = redact.one_line(reason)
                log.warning("[alerts] Slack delivery failed after %d of %d message(s) to %s: %s",
                            i, len(messages), self.receiver, reason)
                return DeliveryResult(ok=False, sent=i, receiver=self.receiver, error=reason)
        return DeliveryResult(ok=True, sent=len(messages), receiver=self.receiver)


class SlackWebhookNotifier(_SlackNotifier):
    """Incoming webhook: the URL is the credential; Slack answers 200 "ok" or an error body."""

    def __init__(self, url: str, *, timeout: float = config.SLACK_TIMEOUT_SECONDS,
                 handlers: list[RetryHandler] | None = None):
        redact.install()
        redact.register_secret(url)
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"the Slack webhook URL is not an http(s) URL: {redact.redact(url)}")
        from slack_sdk.webhook import WebhookClient
        self.receiver = WEBHOOK
        self._handlers = retry_handlers() if handlers is None else handlers
        self._client = WebhookClient(url, timeout=int(timeout), logger=SDK_LOG, retry_handlers=self._handlers)

    def __repr__(self) -> str:
        return "SlackWebhookNotifier(url=***)"

    def _post(self, message: SlackMessage) -> str | None:
        response = self._client.send(text=message.text, blocks=message.blocks)
        if response.status_code == 200:
            return None
        if response.status_code == 429:
            return rate_limit_reason(response.headers)
        return f"HTTP {response.status_code}: {response.body}"


class SlackWebNotifier(_SlackNotifier):
    """Web API `chat.postMessage` with a bot token."""

    def __init__(self, token: str, channel: str, *, base_url: str | None = None,
                 timeout: float = config.SLACK_TIMEOUT_SECONDS, handlers: list[RetryHandler] | None = None):
        redact.install()
        redact.register_secret(token)
        self.receiver = f"{WEB_API}:{channel}"
        self.channel = channel
        from slack_sdk.web import WebClient
        kwargs: dict[str, Any] = {"base_url": base_url} if base_url else {}
        self._handlers = retry_handlers() if handlers is None else handlers
        self._client = WebClient(token=token, timeout=int(timeout), logger=SDK_LOG,
                                 retry_handlers=self._handlers, **kwargs)

    def __repr__(self) -> str:
        return f"SlackWebNotifier(channel={self.channel!r}, token=***)"

    def _post(self, message: SlackMessage) -> str | None:
        from slack_sdk.errors import SlackApiError
        try:
            response = self._client.chat_postMessage(channel=self.channel, text=message.text,
                                                     blocks=message.blocks)
        except SlackApiError as exc:
            status = getattr(exc.response, "status_code", "?")
            if status == 429:
                return rate_limit_reason(getattr(exc.response, "headers", None))
            error = exc.response.get("error") if exc.response is not None else None
            return f"HTTP {status}: {error or exc}"
        return None if response.get("ok") else f"Slack API error: {response.get('error')}"


class ConsoleNotifier:
    """No Slack configured: the digest as plain text to `write` (default: the log, INFO)."""

    receiver = CONSOLE

    def __init__(self, write: Callable[[str], None] | None = None):
        self._write = write

    def send(self, messages: Sequence[SlackMessage], *, still_claimed: ClaimCheck | None = None) -> DeliveryResult:
        notifications: list[Notification] = [n for m in messages for n in m.notifications]
        if notifications:
            now = max(n.created_at for n in notifications)
            text = redact.redact(render_plain(notifications, now=now))
            if self._write is not None:
                self._write(text)
            else:
                log.info("[alerts] %s", text)
        return DeliveryResult(ok=True, sent=len(messages), receiver=self.receiver)


def destination(settings: SlackSettings) -> str:
    """Where notifications go, in words a person can check, never a secret: the channel, or the
    webhook's scheme and host with the rest of its URL (the credential) masked."""
    if settings.mode == WEBHOOK and settings.webhook_url:
        parts = urlsplit(settings.webhook_url)
        host = parts.hostname or "?"
        port = f":{parts.port}" if parts.port else ""
        return f"the Slack incoming webhook at {parts.scheme}://{host}{port}/*** (the rest of the URL masked)"
    if settings.mode == WEB_API and settings.channel:
        via = ""
        if settings.api_url:
            api = urlsplit(settings.api_url)
            via = f" via {api.scheme}://{api.hostname}{f':{api.port}' if api.port else ''}"
        return f"Slack channel {inert_text(settings.channel)}{via}"     # a newline in the setting: one line
    return f"the console ({settings.reason or 'no Slack settings'})"


def notify_test_message(now: datetime, where: str) -> SlackMessage:
    """The message of `benchwatch notify --test` (no notification: nothing is marked delivered)."""
    text = (f"benchwatch test message ({now:%Y-%m-%d %H:%M} UTC): alerts of this installation are delivered to "
            f"{where}. Nothing to act on.")
    blocks: list[dict] = [
        {"type": "header", "text": {"type": "plain_text", "text": "benchwatch: test message", "emoji": True}},
        {"type": "section", "text": {"type": "mrkdwn", "text": escape(text)}}]
    return SlackMessage(text=escape(text), blocks=blocks, notifications=())


def send_quietly(notifier: Notifier, messages: Sequence[SlackMessage]) -> DeliveryResult:
    """`notifier.send` without its delivery warning: for a caller that reports the returned
    failure itself, in one line (`benchwatch notify --test`)."""
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        return notifier.send(messages)
    finally:
        log.setLevel(level)


def make_notifier(settings: SlackSettings | None = None,
                  console_write: Callable[[str], None] | None = None) -> Notifier:
    """The notifier the settings ask for (resolving them from the environment when None)."""
    settings = load_settings() if settings is None else settings
    if settings.mode == WEBHOOK and settings.webhook_url:
        return SlackWebhookNotifier(settings.webhook_url)
    if settings.mode == WEB_API and settings.bot_token and settings.channel:
        return SlackWebNotifier(settings.bot_token, settings.channel, base_url=settings.api_url)
    return ConsoleNotifier(console_write)

"""Slack delivery with the real slack_sdk against the local fake (tests/fake_slack.py)."""

from __future__ import annotations

import json
import logging
import socket
from datetime import datetime, timezone

import pytest

from helpers import lane

from common import redact
from alerts.render import render_digest
from alerts.rules import Notification, fingerprint, make_labels
from alerts.slack import (
    CONSOLE,
    WEB_API,
    WEBHOOK,
    ConsoleNotifier,
    SlackWebhookNotifier,
    SlackWebNotifier,
    load_settings,
    make_notifier,
    with_delivery_key,
)
from fake_slack import WEBHOOK_PATH, Reply

NOW = datetime(2026, 3, 2, 9, 30, tzinfo=timezone.utc)
TOKEN = "xoxb-123456789012-fakeBotTokenSecretValue"
WEBHOOK_SECRET = WEBHOOK_PATH.rsplit("/", 1)[1]   # the credential part of the webhook URL


def note(model: str = "gpt-x") -> Notification:
    labels = make_labels("contamination_suspect", model=model, benchmark="gpqa_diamond", source="epoch")
    return Notification(fingerprint=fingerprint(labels), kind="contamination_suspect", transition="firing",
                        episode=NOW, labels=labels, created_at=NOW,
                        annotations={"model_name": model, "status": "persisted",
                                     "signals": [{"signal": "A1", "effect": 0.07, "q_value": 0.01}],
                                     "why": "caution", "sql": "SELECT * FROM suspects"})


def digest(*models: str):
    return render_digest([note(m) for m in models or ("gpt-x",)], now=NOW)


@pytest.fixture
def webhook(fake_slack):
    return SlackWebhookNotifier(fake_slack.webhook_url)


@pytest.fixture
def web(fake_slack):
    return SlackWebNotifier(TOKEN, "#alerts", base_url=fake_slack.api_url)


def test_webhook_delivers_the_blocks(fake_slack, webhook):
    messages = digest()
    result = webhook.send(messages)
    assert (result.ok, result.sent, result.receiver, result.error) == (True, 1, WEBHOOK, None)
    (req,) = fake_slack.requests
    assert req.path == WEBHOOK_PATH
    assert req.body == {"text": messages[0].text, "blocks": with_delivery_key(messages[0]).blocks}


def test_web_api_posts_to_the_channel_with_the_token(fake_slack, web):
    result = web.send(digest())
    assert (result.ok, result.sent, result.receiver) == (True, 1, f"{WEB_API}:#alerts")
    (req,) = fake_slack.requests
    assert req.path == "/api/chat.postMessage"
    assert req.headers["Authorization"] == f"Bearer {TOKEN}"
    assert req.body["channel"] == "#alerts"


@pytest.mark.parametrize("client", lane(["webhook", "web"], ("webhook",)))   # a real 1-2 s wait each
def test_429_is_retried_after_retry_after(fake_slack, client, request):
    notifier = request.getfixturevalue(client)
    fake_slack.script(Reply(429, headers={"Retry-After": "1"}))
    result = notifier.send(digest())
    assert result.ok and result.sent == 1
    first, second = fake_slack.requests
    assert (first.status, second.status) == (429, 200)
    assert second.at - first.at >= 1.0        # Retry-After honoured (the SDK adds < 1 s jitter)
    assert len(fake_slack.messages()) == 1


@pytest.mark.parametrize("client", lane(["webhook", "web"], ("webhook",)))
@pytest.mark.parametrize("failure", [Reply(500), pytest.param(Reply(503), marks=pytest.mark.slow),
                                     pytest.param(Reply(drop=True), marks=pytest.mark.slow)], ids=["500", "503", "drop"])
def test_server_errors_and_dropped_connections_are_retried(fake_slack, client, failure, request):
    notifier = request.getfixturevalue(client)
    fake_slack.script(failure)
    result = notifier.send(digest())
    assert result.ok and result.sent == 1
    assert [r.status for r in fake_slack.requests] == [0 if failure.drop else failure.status, 200]
    assert len(fake_slack.messages()) == 1


@pytest.mark.slow   # real retry back-off against a fake Slack outage
@pytest.mark.parametrize("client", ["webhook", "web"])
def test_outage_returns_failed_without_raising(fake_slack, client, request):
    notifier = request.getfixturevalue(client)
    fake_slack.outage(503)
    result = notifier.send(digest("a", "b"))
    assert (result.ok, result.sent) == (False, 0)
    assert result.error.startswith("HTTP 503")
    assert len(fake_slack.requests) == 3        # first try + 2 server-error retries
    assert fake_slack.messages() == []


def test_partial_delivery_reports_how_many_messages_went_through(fake_slack, webhook):
    messages = digest("a") + digest("b")
    fake_slack.script(Reply(200), Reply(400, body="invalid_blocks"))
    result = webhook.send(messages)
    assert (result.ok, result.sent, result.error) == (False, 1, "HTTP 400: invalid_blocks")


def test_slack_rejections_are_reported(fake_slack, web):
    bad = SlackWebNotifier(TOKEN, "", base_url=fake_slack.api_url)
    result = bad.send(digest())
    assert not result.ok and "channel_not_found" in result.error


@pytest.mark.slow   # real retry back-off against a closed port
def test_unreachable_slack_fails_soft():
    with socket.socket() as s:        # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    notifier = SlackWebhookNotifier(f"http://127.0.0.1:{port}{WEBHOOK_PATH}")
    result = notifier.send(digest())
    assert not result.ok and result.sent == 0
    assert "Connection refused" in result.error or "URLError" in result.error


def test_channel_mention_in_a_model_name_arrives_escaped(fake_slack, webhook):
    assert webhook.send(digest("<!channel> <@U123> <http://evil.example|win>")).ok
    raw = json.dumps(fake_slack.requests[0].body, ensure_ascii=False)
    assert "<!channel>" not in raw and "<@U123>" not in raw and "<http" not in raw
    assert "&lt;!channel&gt; &lt;@U123&gt; &lt;`http://evil.example|win&gt;`" in raw   # URL unlinked too
    section = fake_slack.requests[0].body["blocks"][2]["text"]["text"]
    assert section.startswith(":rotating_light: *&lt;!channel&gt; &lt;@U123&gt;")


@pytest.mark.slow   # every delivery path with retries, seconds of back-off
def test_secrets_never_reach_logs_output_or_errors(fake_slack, caplog, capsys, monkeypatch):
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="benchwatch")  # whatever an earlier CLI test left there
    monkeypatch.setenv("SLACK_WEBHOOK_URL", fake_slack.webhook_url)
    settings = load_settings()
    notifier = make_notifier(settings)
    fake_slack.script(Reply(429, headers={"Retry-After": "1"}), Reply(drop=True))
    ok = notifier.send(digest())
    fake_slack.outage(503)
    failed = notifier.send(digest())
    web = SlackWebNotifier(TOKEN, "#alerts", base_url=fake_slack.api_url)
    web_failed = web.send(digest())
    # a malformed URL (urllib would raise ValueError("unknown url type: '<url>'")) is refused up front
    with pytest.raises(ValueError) as broken:
        SlackWebhookNotifier("hooks.slack.com" + WEBHOOK_PATH)
    assert str(broken.value) == "the Slack webhook URL is not an http(s) URL: [REDACTED]"
    assert ok.ok and not failed.ok and not web_failed.ok

    out = capsys.readouterr()
    texts = [caplog.text, out.out, out.err, repr(settings), str(settings), repr(notifier), repr(web),
             failed.error, web_failed.error]
    texts += [redact.redact(r.getMessage()) for r in caplog.records]
    assert "Sending a request" in caplog.text and "retry" in caplog.text.lower()  # SDK logs were captured
    for text in texts:
        assert WEBHOOK_SECRET not in text and TOKEN not in text and "fakeBotTokenSecret" not in text


def test_redact_patterns_and_filter():
    text = ("POST https://hooks.slack.com/services/T01ABC/B02DEF/abcdEFGH1234 with "
            "Authorization: Bearer xoxb-1-2-abc and xoxp-999-zzz")
    out = redact.redact(text)
    assert out == ("POST https://hooks.slack.com/services/[REDACTED] with "
                   "Authorization: Bearer [REDACTED] and xox?-[REDACTED]")
    logger = logging.getLogger("benchwatch.alerts.test_redact")
    logger.addFilter(redact.RedactingFilter())
    record = logger.makeRecord(logger.name, logging.ERROR, __file__, 1, "sent to %s", ("xoxb-1-2-abc",), None)
    assert logger.filters[0].filter(record) and record.getMessage() == "sent to xox?-[REDACTED]"
    try:
        raise RuntimeError("boom " + text)
    except RuntimeError:
        import sys
        record = logger.makeRecord(logger.name, logging.ERROR, __file__, 1, "x", (), sys.exc_info())
    logger.filters[0].filter(record)
    assert "abcdEFGH1234" not in record.exc_text and "[REDACTED]" in record.exc_text


def test_settings_resolution(monkeypatch, caplog):
    assert load_settings({"SLACK_WEBHOOK_URL": "https://hooks.slack.com/services/T1/B1/zzzzzzzz"}).mode == WEBHOOK
    web = load_settings({"SLACK_BOT_TOKEN": TOKEN, "SLACK_CHANNEL": "#a", "SLACK_API_URL": "http://127.0.0.1:9/api/"})
    assert (web.mode, web.channel, web.api_url, web.origin) == (WEB_API, "#a", "http://127.0.0.1:9/api/", "env")
    with caplog.at_level(logging.WARNING):
        no_channel = load_settings({"SLACK_BOT_TOKEN": TOKEN})
        assert no_channel.mode == CONSOLE and "no channel" in caplog.text

    # the Prefect Secret blocks are looked up by the one resolver, flows.secrets, never by alerts/
    from flows.secrets import slack_settings

    def no_api():
        raise RuntimeError("no Prefect API configured (PREFECT_API_URL unset)")
    with caplog.at_level(logging.WARNING):
        console = slack_settings({}, prefect_lookup=no_api)
    assert console.mode == CONSOLE and "no Prefect API configured" in console.reason
    assert "notifications go to the console" in caplog.text
    from_blocks = slack_settings({}, prefect_lookup=lambda: ("https://hooks.slack.com/services/T9/B9/blockSecret1",
                                                             None, None))
    assert (from_blocks.mode, from_blocks.origin) == (WEBHOOK, "prefect")
    assert "blockSecret1" not in repr(from_blocks)
    # the registered secret goes whole
    assert redact.redact("x https://hooks.slack.com/services/T9/B9/blockSecret1 y") == "x [REDACTED] y"
    missing = slack_settings({}, prefect_lookup=lambda: (None, None, None))
    assert missing.mode == CONSOLE and "benchwatch-slack-webhook-url" in missing.reason
    token = slack_settings({"SLACK_CHANNEL": "#env"}, prefect_lookup=lambda: (None, TOKEN, "#var"))
    assert (token.mode, token.channel, token.origin) == (WEB_API, "#env", "prefect")   # the environment first
    # the environment wins without asking Prefect at all
    assert slack_settings({"SLACK_BOT_TOKEN": TOKEN, "SLACK_CHANNEL": "#a"}, prefect_lookup=no_api).mode == WEB_API
    # alerts/ reads only what it is given
    assert load_settings({}).reason == "no Slack settings"


def test_real_prefect_lookup_without_an_api_falls_back_to_console(monkeypatch):
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    from prefect.settings import get_current_settings
    from flows.secrets import slack_settings
    if get_current_settings().api.url:
        pytest.skip("a Prefect API is configured in this environment")
    settings = slack_settings({})
    assert settings.mode == CONSOLE and "no Prefect API configured" in settings.reason


@pytest.mark.xdist_group("servers")   # starts Prefect's test server
@pytest.mark.slow   # starts Prefect's test server
def test_webhook_from_a_prefect_secret_block(fake_slack, monkeypatch, tmp_path):
    """The real Prefect path: a Secret block on a (temporary) Prefect server, env unset."""
    from flows.secrets import slack_settings
    from prefect.blocks.system import Secret
    from prefect.settings import PREFECT_RESULTS_LOCAL_STORAGE_PATH, temporary_settings
    from prefect.testing.utilities import prefect_test_harness

    for var in ("SLACK_WEBHOOK_URL", "SLACK_BOT_TOKEN", "SLACK_CHANNEL"):
        monkeypatch.delenv(var, raising=False)
    with temporary_settings({PREFECT_RESULTS_LOCAL_STORAGE_PATH: tmp_path}):
        with prefect_test_harness(server_startup_timeout=60):
            assert slack_settings().mode == CONSOLE          # no block yet
            Secret(value=fake_slack.webhook_url).save("benchwatch-slack-webhook-url", overwrite=True)
            settings = slack_settings()
            assert (settings.mode, settings.origin) == (WEBHOOK, "prefect")
            assert make_notifier(settings).send(digest()).ok
    assert len(fake_slack.messages()) == 1 and WEBHOOK_SECRET not in repr(settings)


def test_console_notifier_writes_plain_text():
    lines: list[str] = []
    result = ConsoleNotifier(lines.append).send(digest("<b>"))
    assert (result.ok, result.sent, result.receiver) == (True, 1, CONSOLE)
    assert lines[0].split("\n")[1] == "FIRING   <b> on gpqa_diamond: contamination suspect (persisted)"


@pytest.mark.slow   # a subprocess; only the e2e test (slow as well) runs the fake as its own process
def test_fake_slack_as_a_subprocess(tmp_path):
    """The mode the Prefect end-to-end test uses: separate process, URL on stdout, JSONL record."""
    import subprocess
    import sys
    from pathlib import Path
    from urllib.request import Request, urlopen

    record = tmp_path / "slack.jsonl"
    script = Path(__file__).resolve().parents[1] / "fake_slack.py"
    proc = subprocess.Popen([sys.executable, str(script), "--port", "0", "--record", str(record)],
                            stdout=subprocess.PIPE, text=True)
    try:
        base = proc.stdout.readline().strip()
        urlopen(Request(base + "/_fake/script", data=b'[{"status": 429, "headers": {"Retry-After": "1"}}]',
                        method="POST")).read()
        result = SlackWebhookNotifier(base + WEBHOOK_PATH).send(digest())
        assert result.ok
        lines = [json.loads(line) for line in record.read_text().splitlines()]
        assert [(r["status"], r["accepted"]) for r in lines] == [(429, False), (200, True)]
        seen = json.loads(urlopen(base + "/_fake/requests").read())
        assert len(seen) == 2 and seen[1]["body"]["blocks"][0]["type"] == "header"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


# --- benchwatch notify --test ----------------------------------------------------------------------

def _no_slack_env(monkeypatch):
    for name in ("SLACK_WEBHOOK_URL", "SLACK_BOT_TOKEN", "SLACK_CHANNEL", "SLACK_API_URL", "PREFECT_API_URL"):
        monkeypatch.delenv(name, raising=False)


def test_notify_test_names_the_webhook_host_never_the_url(fake_slack, monkeypatch, capsys):
    from cli import main as cli
    _no_slack_env(monkeypatch)
    monkeypatch.setenv("SLACK_WEBHOOK_URL", fake_slack.webhook_url)
    assert cli.main(["notify", "--test"]) == 0
    out, err = capsys.readouterr()
    host = fake_slack.webhook_url.split("/services/")[0]
    assert out == (f"test message sent to the Slack incoming webhook at {host}/*** "
                   "(the rest of the URL masked)\n")
    assert WEBHOOK_SECRET not in out + err and "/services/" not in out + err
    (req,) = fake_slack.requests
    assert req.body["blocks"][0]["text"]["text"] == "benchwatch: test message"
    assert WEBHOOK_SECRET not in json.dumps(req.body)             # the message names the host only


def test_notify_test_names_the_channel_of_a_bot(fake_slack, monkeypatch, capsys):
    from cli import main as cli
    _no_slack_env(monkeypatch)
    monkeypatch.setenv("SLACK_BOT_TOKEN", TOKEN)
    monkeypatch.setenv("SLACK_CHANNEL", "#bench-alerts")
    monkeypatch.setenv("SLACK_API_URL", fake_slack.api_url)
    assert cli.main(["notify", "--test"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("test message sent to Slack channel #bench-alerts via http://127.0.0.1:")
    assert TOKEN not in out
    assert fake_slack.requests[0].body["channel"] == "#bench-alerts"


def test_notify_test_fails_with_one_line_when_slack_refuses(fake_slack, monkeypatch, capsys):
    from cli import main as cli
    _no_slack_env(monkeypatch)
    monkeypatch.setenv("SLACK_WEBHOOK_URL", fake_slack.webhook_url)
    fake_slack.script(Reply(404, body="no_service"))
    assert cli.main(["notify", "--test"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and "the test message to the Slack incoming webhook at http://127.0.0.1:" in err
    assert "failed: HTTP 404: no_service" in err and WEBHOOK_SECRET not in err


@pytest.mark.slow   # the connection retries' back-off against a closed port
def test_notify_test_against_a_dead_port_exits_1_with_the_reason(tmp_path):
    """As a user runs it: a process of its own (log handlers other tests leave behind in this
    process cannot add lines to what the user sees)."""
    import os
    import subprocess
    import sys
    with socket.socket() as s:        # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items()
           if k not in ("SLACK_WEBHOOK_URL", "SLACK_BOT_TOKEN", "SLACK_CHANNEL", "SLACK_API_URL", "PREFECT_API_URL")}
    env.update(SLACK_WEBHOOK_URL=f"http://127.0.0.1:{port}{WEBHOOK_PATH}", PREFECT_HOME=str(tmp_path))
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    done = subprocess.run([sys.executable, "-m", "cli.main", "notify", "--test"], cwd=tmp_path,
                          env={**env, "PYTHONPATH": root}, capture_output=True, text=True, timeout=120)
    out, err = done.stdout, done.stderr
    assert done.returncode == 1, err
    assert out == "" and err.count("\n") == 1, err
    assert f"the test message to the Slack incoming webhook at http://127.0.0.1:{port}/***" in err
    assert "Connection refused" in err and WEBHOOK_SECRET not in err


def test_notify_test_without_slack_says_it_printed_here(monkeypatch, capsys, tmp_path):
    from cli import main as cli
    _no_slack_env(monkeypatch)
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path))         # no Prefect settings file hints at an API
    monkeypatch.chdir(tmp_path)
    assert cli.main(["notify", "--test"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1].startswith("test message sent to the console (no Slack settings")


# --- a long Retry-After (issue 24, item 5) --------------------------------------------------------------

def _send_within(notifier, messages, seconds: float, **kwargs):
    """send() in a thread: (finished, result). Before the cap a Retry-After of 100000 slept for a day."""
    import threading
    out = {}
    worker = threading.Thread(target=lambda: out.setdefault("r", notifier.send(messages, **kwargs)), daemon=True)
    worker.start()
    worker.join(seconds)
    return not worker.is_alive(), out.get("r")


@pytest.mark.parametrize("retry_after", ["700", "100000"])
@pytest.mark.parametrize("client", ["webhook", "web"])
def test_a_retry_after_past_the_cap_is_left_for_the_next_run(fake_slack, client, retry_after, request):
    notifier = request.getfixturevalue(client)
    fake_slack.script(Reply(429, headers={"Retry-After": retry_after}))
    finished, result = _send_within(notifier, digest(), 10)
    assert finished, f"send() still waiting on Retry-After {retry_after}"
    assert (result.ok, result.sent) == (False, 0)
    assert f"Retry-After {retry_after} s" in result.error and "next run" in result.error
    assert len(fake_slack.requests) == 1 and fake_slack.messages() == []


def test_the_retry_after_cap_is_a_setting(fake_slack, webhook, monkeypatch):
    from alerts import config
    monkeypatch.setattr(config, "SLACK_MAX_RETRY_AFTER_SECONDS", 0)
    fake_slack.script(Reply(429, headers={"Retry-After": "1"}))
    finished, result = _send_within(webhook, digest(), 10)
    assert finished and not result.ok and len(fake_slack.requests) == 1


def test_the_claim_is_checked_before_each_post_and_after_a_wait(fake_slack, webhook):
    """A notify run's claim (the outbox lease) can lapse while it waits out a Retry-After; another
    run may then deliver the same notifications. The notifier asks before every request."""
    checks = []

    def lost_after_first() -> str | None:
        checks.append(1)
        return None if len(checks) == 1 else "the claim lapsed"
    fake_slack.script(Reply(429, headers={"Retry-After": "1"}))
    finished, result = _send_within(webhook, digest(), 10, still_claimed=lost_after_first)
    assert finished and (result.ok, result.sent) == (False, 0) and "the claim lapsed" in result.error
    assert len(fake_slack.requests) == 1 and fake_slack.messages() == []   # the retry was not sent
    fake_slack.requests.clear()
    result = webhook.send(digest("a") + digest("b"), still_claimed=lambda: None if not fake_slack.requests else "gone")
    assert (result.sent, len(fake_slack.messages())) == (1, 1)


def test_every_message_carries_a_delivery_key(fake_slack, webhook):
    """At-least-once: a message sent again by a later run has the same key (README, Slack alerts)."""
    assert webhook.send(digest("a")).ok and webhook.send(digest("a")).ok and webhook.send(digest("b")).ok
    keys = [e["text"] for m in fake_slack.messages() for b in m["blocks"] if b["type"] == "context"
            for e in b["elements"] if "delivery key" in e["text"]]
    assert len(keys) == 3 and keys[0] == keys[1] != keys[2]

"""`benchwatch notify`: evaluate the alert rules and deliver what is new (Slack or the console)."""

from __future__ import annotations

import argparse
import sys
import logging
from typing import TYPE_CHECKING

from cli.main import add_db_argument, store_of
from common.redact import one_line
from storage.db import StorageError
from storage.query import claimed_elsewhere

if TYPE_CHECKING:
    from storage.store import Store

SETTINGS_HELP = """\
delivery: SLACK_WEBHOOK_URL (incoming webhook), or SLACK_BOT_TOKEN + SLACK_CHANNEL (Web API;
SLACK_API_URL overrides its base URL), or the Prefect Secret blocks benchwatch-slack-webhook-url /
benchwatch-slack-bot-token when a Prefect API is configured; otherwise the digest is printed here.
Undelivered notifications (Slack down) are kept and retried by the next run.
BENCHWATCH_INFO_ALERTS=new_frontier turns on info alerts.
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("notify", help="evaluate alert rules and deliver new notifications",
                       description="Evaluate the alert rules on what `benchwatch analyze` stored (saturation bins, "
                                   "contamination-suspect signals, source health), record alert states, and deliver "
                                   "one digest of the new firing/resolved notifications plus any a previous run "
                                   "could not deliver.",
                       epilog=SETTINGS_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--test", action="store_true",
                   help="send one test message to the configured destination and say where it went "
                        "(the channel, or the webhook's host; never the URL); exit 1 when it fails")
    add_db_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.test:
        return run_test()
    from alerts.slack import make_notifier
    from flows.secrets import slack_settings   # the one resolver: environment, then Prefect Secret blocks
    from jobs.alerts import run_notify
    from common.time import utcnow
    try:
        store = store_of(args)
        notifier = make_notifier(slack_settings(), console_write=print)
        summary = run_notify(store, now=utcnow(), notifier=notifier)
    except (StorageError, ValueError) as exc:
        print(f"benchwatch: {one_line(exc, 500)}", file=sys.stderr)
        return 1
    print(summary)
    if not summary.to_deliver:
        _say_what_waits(store)
    return 0 if summary.ok else 1


def _say_what_waits(store: Store) -> None:
    """Notifications claimed by another notify run (still delivering, or dead) are not "nothing"."""
    from common.time import utcnow
    with store.connect(read_only=True) as con:
        waiting, until = claimed_elsewhere(con, now=utcnow())
    if waiting:
        print(f"{waiting} undelivered notification(s) are claimed by another notify run (still delivering, "
              f"or it died) until {until:%Y-%m-%d %H:%M} UTC; the first notify after that delivers them")


def run_test() -> int:
    """`notify --test`: one message, where it went, exit 1 with one line when it failed."""
    from common.time import utcnow
    from flows.secrets import slack_settings
    from jobs.alerts import run_notify_test
    from alerts.slack import SDK_LOG as sdk_log  # the SDK logs each failed attempt; the check reports its outcome itself, in one line
    level = sdk_log.level
    sdk_log.setLevel(logging.CRITICAL)
    try:
        result = run_notify_test(now=utcnow(), settings=slack_settings(), console_write=print)
    except ValueError as exc:          # a webhook URL that is not an http(s) URL
        print(f"benchwatch: {one_line(exc, 500)}", file=sys.stderr)
        return 1
    finally:
        sdk_log.setLevel(level)
    if not result.ok:
        print(f"benchwatch: the test message to {result.where} failed: {one_line(result.error or '', 300)}",
              file=sys.stderr)
        return 1
    print(f"test message sent to {result.where}")
    return 0

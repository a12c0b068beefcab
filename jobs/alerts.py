"""`notify`: evaluate the alert rules on the stored analysis, then deliver the outbox.

Three steps; the database is held only for the two short writes, never while Slack is called:

1. One transaction: read the rule inputs (each rule of alerts.rules.RULES reads its own frame;
   silences) and the previous alert states, evaluate, write the new states, the
   events and the new notifications, and claim every undelivered notification (new ones and
   those a previous run failed to deliver) with a lease. The connection is closed.
2. Render one digest of the claimed notifications (split only when Block Kit limits demand
   it) and send it: Slack, or the console when Slack is not configured.
3. One transaction: mark what was delivered; release the rest with the redacted error, so the
   next run retries it at once.

What this guarantees: a notification is enqueued exactly once per transition (unique key),
never lost (it stays in the outbox until a run delivers it), and never sent twice by two
overlapping runs (the lease): before every request to Slack (each message, and each retry after
a Retry-After, which is capped at alerts.config.SLACK_MAX_RETRY_AFTER_SECONDS) the run checks
that it still holds its claim with time to spare (`NOTIFY_SEND_MARGIN`), and it releases only
the claims it still holds. The one window left is at-least-once: if the process dies after Slack
accepted a message and before step 3 commits, or a post times out after Slack received it, the
next run (after the lease, `NOTIFY_CLAIM_LEASE`) sends those notifications again. Neither
incoming webhooks nor chat.postMessage take an idempotency key, so every message shows a
delivery key (alerts.slack.delivery_key): a repeated message has the key of the first.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Callable

from alerts import rules as registry
from alerts.config import RuleSettings, report_url_from_env, rule_settings_from_env
from alerts.engine import evaluate
from alerts.records import FIRING, PENDING, to_utc
from common import shutdown
from common.redact import one_line
from alerts.corrections import correction_lines, correction_message
from alerts.render import render_digest, title
from alerts.slack import (CONSOLE, Notifier, SlackSettings, destination, load_settings, make_notifier,
                          notify_test_message, send_quietly)
from storage import alerts as outbox
from storage import corrections as table_corrections
from storage import db
from storage.alert_records import Notification
from storage.engine import duckdb
from storage.store import Store
from jobs.sync import connect_synced

log = logging.getLogger("benchwatch.jobs.alerts")

# How long a notify run owns the notifications it is delivering; a run that dies is retried
# after this. Longer than a slow delivery (3 rate-limit retries of at most
# SLACK_MAX_RETRY_AFTER_SECONDS, timeouts and back-off).
NOTIFY_CLAIM_LEASE = timedelta(minutes=10)
# No request to Slack starts with less of the lease left than this (a quarter of a shorter lease):
# a post and its connection retries end before another run can take the notifications over.
NOTIFY_SEND_MARGIN = timedelta(minutes=3)
CLAIM_CHECK_WAIT_SECONDS = 10.0    # a writer holding the file this long: the claim counts as unknown


@dataclass
class NotifySummary:
    """What one notify run did; `str()` is the line `benchwatch run` and the Prefect artifact show."""

    receiver: str
    firing: int = 0                   # alerts firing, levels excluded
    levels: int = 0                   # benchmarks' levels held (a state, not an alert that fired)
    pending: int = 0
    muted: int = 0
    enqueued: int = 0                 # new notifications of this evaluation
    to_deliver: int = 0               # claimed: new ones plus retries of earlier failures
    delivered: int = 0
    error: str | None = None          # redacted
    sent_titles: list[str] = field(default_factory=list)
    console_text: str = ""            # the digest, when it went to the console
    corrected: list[str] = field(default_factory=list)   # tables corrected (migration 040), said once

    @property
    def ok(self) -> bool:
        return self.error is None

    def __str__(self) -> str:
        levels = f"{self.levels} level(s) held, " if self.levels else ""
        head = (f"{levels}{self.firing} alert(s) firing ({self.muted} muted), {self.pending} pending; "
                f"{self.enqueued} new notification(s)")
        if not self.to_deliver:
            head += "; nothing to deliver"
        elif self.ok:
            head += f"; delivered {self.delivered} to {self.receiver}"
        else:
            head += (f"; delivery to {self.receiver} failed ({self.error}): "
                     f"{self.to_deliver - self.delivered} kept for the next run")
        lines = [head] + [f"  - {t}" for t in self.corrected] + [f"  - {t}" for t in self.sent_titles]
        if self.console_text:
            lines.append(self.console_text)
        return "\n".join(lines)


def run_notify(store: Store, *, now: datetime, notifier: Notifier | None = None,
               rules: RuleSettings | None = None, lease: timedelta = NOTIFY_CLAIM_LEASE,
               settings: SlackSettings | None = None) -> NotifySummary:
    """Evaluate, enqueue, deliver (see the module docstring). Slack failures are reported, not raised.
    `settings`: resolved by the caller (flows.secrets.slack_settings); None reads the environment."""
    shutdown.check()         # a stopping process (SIGTERM) sends nothing
    now = to_utc(now)
    rules = rule_settings_from_env() if rules is None else rules
    console_lines: list[str] = []
    if notifier is None:
        settings = load_settings() if settings is None else settings
        notifier = make_notifier(settings, console_write=console_lines.append)

    # 1. evaluate and claim, in one transaction (benchmark/model names come from the registry)
    with connect_synced(store) as con:
        with db.transaction(con):
            evaluation = evaluate(now=now, previous=outbox.read_states(con), silences=outbox.read_silences(con),
                                  settings=rules, **read_rule_inputs(con, rules))
            enqueued = outbox.write_evaluation(con, evaluation, recorded_at=now)
            claimed = outbox.claim_undelivered(con, now=now, lease=lease)
            level_kinds = {name for name, kind in registry.kinds().items() if kind.state_line is not None}
            corrections, claimed = _fold_corrections(con, claimed, level_kinds, now=now, receiver=notifier.receiver)
    summary = NotifySummary(
        receiver=notifier.receiver, enqueued=enqueued, to_deliver=len(claimed),
        firing=sum(s.state == FIRING and s.kind not in level_kinds for s in evaluation.states),
        levels=sum(s.state == FIRING and s.kind in level_kinds for s in evaluation.states),
        pending=sum(s.state == PENDING for s in evaluation.states),
        muted=sum(s.state == FIRING and bool(s.muted_by) and s.kind not in level_kinds for s in evaluation.states))
    if not claimed and not corrections:
        log.info("[alerts] %s", summary)
        return summary

    # 2. deliver, without holding the database; the claim is checked before every request
    claimed_until = now + lease
    messages = render_digest(claimed, now=now, report_url=report_url_from_env())
    if corrections:       # said once, first (the corrected tables' level moves are folded into it)
        messages.insert(0, correction_message([(c.table_id, c.detail) for c in corrections], now=now))
    still_claimed = _claim_check(store, [n.id for n in claimed if n.id is not None], until=claimed_until,
                                 lease=lease)
    try:
        result = notifier.send(messages, still_claimed=still_claimed)   # no connection open meanwhile
    except BaseException as exc:  # a bug, not a Slack failure: free the claim, then let it surface
        _finish(store, delivered=[], failed=[n.id for n in claimed], now=now, receiver=notifier.receiver,
                error=one_line(f"{type(exc).__name__}: {exc}"), claimed_until=claimed_until)
        raise
    delivered = [n for m in messages[:result.sent] for n in m.notifications]
    failed = [n for m in messages[result.sent:] for n in m.notifications]

    # 3. record the outcome: what Slack accepted is delivered whoever holds it now (marking it
    # stops a run that took the claim over from sending it again); only our own claims are freed
    if delivered and still_claimed(before_send=False) is not None:
        log.warning("[alerts] the claim on %d delivered notification(s) lapsed before they were marked: "
                    "another run may send them again (at-least-once)", len(delivered))
    _finish(store, delivered=[n.id for n in delivered], failed=[n.id for n in failed], now=now,
            receiver=result.receiver, error=result.error or "not sent", claimed_until=claimed_until)
    if corrections and result.sent:
        with store.connect() as con:
            table_corrections.mark_notified(con, corrections, now=now)
        summary.corrected = correction_lines([(c.table_id, c.detail) for c in corrections])
    summary.delivered = len(delivered)
    summary.error = result.error
    summary.sent_titles = [("resolved: " if n.transition != FIRING else "") + title(n) for n in delivered]
    summary.console_text = "\n".join(console_lines)
    level = logging.INFO if result.ok else logging.WARNING
    log.log(level, "[alerts] %s", str(summary).splitlines()[0])
    return summary


def _fold_corrections(con: duckdb.DuckDBPyConnection, claimed: list[Notification], level_kinds: set[str], *,
                      now: datetime, receiver: str) -> tuple[list[table_corrections.Correction], list[Notification]]:
    """The tables corrected by a rule change (storage/corrections.py) not yet said, and the claimed
    notifications left to render: a level move of a corrected table is the correction itself, so
    it is marked delivered (the correction message says it) instead of being sent as a change."""
    table_corrections.settle_corrections(con, now=now)
    corrections = table_corrections.pending_corrections(con)
    if not corrections:
        return corrections, claimed
    corrected = {c.table_id for c in corrections}
    folded = [n for n in claimed if n.kind in level_kinds and n.labels.get("table") in corrected]
    outbox.mark_delivered(con, [n.id for n in folded if n.id is not None], at=now,
                          receiver=f"{receiver} (folded into the table correction)")
    return corrections, [n for n in claimed if n not in folded]


@dataclass
class NotifyTestResult:
    """What `benchwatch notify --test` did: where the message went (never a secret) and the error."""

    where: str
    error: str | None = None
    text: str = ""

    @property
    def ok(self) -> bool:
        return self.error is None


def run_notify_test(*, now: datetime, settings: SlackSettings | None = None,
                    console_write: Callable[[str], None] | None = None) -> NotifyTestResult:
    """Send one test message to the configured destination (no database, no outbox)."""
    settings = load_settings() if settings is None else settings
    where = destination(settings)
    message = notify_test_message(to_utc(now), where)
    if settings.mode == CONSOLE:
        if console_write is not None:
            console_write(message.text)
        return NotifyTestResult(where=where, text=message.text)
    result = send_quietly(make_notifier(settings), [message])
    return NotifyTestResult(where=where, error=None if result.ok else (result.error or "not sent"), text=message.text)


def read_rule_inputs(con, settings: RuleSettings) -> dict:
    """Each enabled rule's input frame (AlertRule.read), keyed by the rule's `input`."""
    return {rule.input: rule.read(con, settings) for rule in registry.RULES
            if rule.read is not None and rule.enabled(settings)}


def _claim_check(store: Store, ids: list[int], *, until: datetime,
                 lease: timedelta) -> Callable[..., str | None]:
    """`still_claimed` for the notifier: None while this run holds its claim on `ids` with at least
    NOTIFY_SEND_MARGIN (a quarter of a shorter lease) of it left, by the monotonic clock (the
    claim's `now` may be any time) and in the outbox (no other run claimed or delivered one)."""
    started = time.monotonic()
    margin = min(NOTIFY_SEND_MARGIN, lease / 4).total_seconds()

    def check(before_send: bool = True) -> str | None:
        if before_send and shutdown.requested():
            return "stopping (SIGTERM): not sent, left for the next run"
        left = lease.total_seconds() - (time.monotonic() - started)
        if left < (margin if before_send else 0.0):
            return (f"this run's claim on the notifications ends in {max(left, 0):.0f} s "
                    "(NOTIFY_CLAIM_LEASE): not sent, left for the next run")
        try:
            with store.connect(wait=CLAIM_CHECK_WAIT_SECONDS) as con:
                held = outbox.claims_held(con, ids, until=until)
        except Exception as exc:  # noqa: BLE001 - unknown is treated as lost: the next run sends them
            return f"cannot check this run's claim on the notifications ({one_line(exc, 200)}): left for the next run"
        return None if held else "another run claimed or delivered these notifications: not sent by this run"
    return check


def _finish(store: Store, *, delivered: list[int | None], failed: list[int | None],
            now: datetime, receiver: str, error: str, claimed_until: datetime | None = None) -> None:
    with store.connect() as con:
        with db.transaction(con):
            outbox.mark_delivered(con, [i for i in delivered if i is not None], at=now, receiver=receiver)
            outbox.release_failed(con, [i for i in failed if i is not None], error=error, receiver=receiver,
                                  claimed_until=claimed_until)

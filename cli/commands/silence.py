"""`benchwatch silence add|list|expire`: mute notifications of matching alerts for a while.

Silenced alerts are still evaluated and recorded (`benchwatch alerts` shows them as muted);
only their Slack/console notifications are held back. An alert still firing when its silence
ends is notified then.
"""

from __future__ import annotations

import argparse
import getpass
import os
import sys

from datetime import timedelta

from cli.main import add_db_argument, store_of
from storage.db import StorageError

# The longest silence: ten years is "forever" for a leaderboard, and far from datetime's year-9999 edge.
MAX_SILENCE = timedelta(days=3650)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("silence", help="mute notifications of matching alerts (add, list, expire)",
                       description="Silences mute the notifications of alerts whose labels match every "
                                   "key=value matcher. Labels: kind, benchmark, model, source, scope, signal, level.")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = actions.add_parser("add", help="add a silence",
                             epilog='example: benchwatch silence add --match benchmark=livecodebench '
                                    '--for 14d --comment "LCB v6 migration"')
    add.add_argument("--match", nargs="+", action="extend", required=True, metavar="KEY=VALUE",
                     help="label matcher(s); all must match")
    add.add_argument("--for", dest="duration", required=True, metavar="DURATION",
                     help="how long, e.g. 14d, 12h, 2w")
    add.add_argument("--comment", required=True, help="why (shown in `silence list`)")
    add.add_argument("--author", default=None, help="who (default: the login name)")
    add_db_argument(add)
    add.set_defaults(func=run_add)
    lst = actions.add_parser("list", help="active and scheduled silences")
    lst.add_argument("--all", action="store_true", help="include expired and ended silences")
    add_db_argument(lst)
    lst.set_defaults(func=run_list)
    exp = actions.add_parser("expire", help="end a silence now")
    exp.add_argument("id", type=int, metavar="ID")
    add_db_argument(exp)
    exp.set_defaults(func=run_expire)


def _author() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return os.environ.get("USER") or "unknown"


def run_add(args: argparse.Namespace) -> int:
    from alerts.rules import parse_duration, parse_matchers
    from common.time import utcnow
    from storage import alerts as store
    try:
        matchers = parse_matchers(args.match)
        duration = parse_duration(args.duration)
        if duration > MAX_SILENCE:
            raise ValueError(f"--for {args.duration}: at most {MAX_SILENCE.days}d "
                             "(use `silence expire` to end one early)")
    except OverflowError:
        print(f"benchwatch silence add: --for {args.duration}: at most {MAX_SILENCE.days}d", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"benchwatch silence add: {exc}", file=sys.stderr)
        return 2
    if not args.comment.strip():
        print("benchwatch silence add: --comment must say why", file=sys.stderr)
        return 2
    now = utcnow()
    try:
        with store_of(args).connect() as con:
            silence_id = store.add_silence(con, matchers=matchers, starts_at=now, ends_at=now + duration,
                                           author=args.author or _author(), comment=args.comment.strip(),
                                           created_at=now)
    except StorageError as exc:
        print(f"benchwatch: {exc}", file=sys.stderr)
        return 1
    shown = ", ".join(f"{k}={v}" for k, v in matchers.items())
    print(f"silence {silence_id}: {shown} until {now + duration:%Y-%m-%d %H:%M} UTC ({args.duration}), "
          f"by {args.author or _author()}: {args.comment.strip()}")
    return 0


def run_list(args: argparse.Namespace) -> int:
    import pandas as pd

    from common.time import utcnow
    from storage import alerts as store
    try:
        with store_of(args).connect(read_only=True) as con:     # listing never creates or migrates a file
            frame = store.silences_frame(con, now=utcnow(), include_expired=args.all)
    except StorageError as exc:
        print(f"benchwatch: {exc}", file=sys.stderr)
        return 1
    if frame.empty:
        print("no silences" if args.all else "no active silences")
        return 0
    rows = pd.DataFrame({
        "id": frame["id"], "status": frame["status"],
        "matchers": frame["matchers"].map(lambda m: ", ".join(f"{k}={v}" for k, v in m.items())),
        "starts": frame["starts_at"].dt.strftime("%Y-%m-%d %H:%M"),
        "ends": frame["ends_at"].dt.strftime("%Y-%m-%d %H:%M"),
        "author": frame["author"], "comment": frame["comment"],
    })
    with pd.option_context("display.width", 220, "display.max_colwidth", 80):
        print(rows.to_string(index=False))
    return 0


def run_expire(args: argparse.Namespace) -> int:
    from common.time import utcnow
    from storage import alerts as store
    try:
        with store_of(args).connect() as con:
            outcome = store.expire_silence(con, args.id, at=utcnow())
    except StorageError as exc:
        print(f"benchwatch: {exc}", file=sys.stderr)
        return 1
    if outcome == "expired":
        print(f"silence {args.id} expired")
        return 0
    print(f"benchwatch silence expire: silence {args.id}: {outcome}", file=sys.stderr)
    return 1

"""`benchwatch alerts`: the recorded alert states (what is firing, pending, resolved, and why muted)."""

from __future__ import annotations

import argparse
import sys

from cli.main import add_db_argument, store_of
from storage.db import StorageError
from storage.engine import duckdb

STATES = ("firing", "pending", "resolved", "inactive")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("alerts", help="list alert states (e.g. --state firing)",
                       description="List the alerts `benchwatch notify` has evaluated, firing first, with what "
                                   "they say and whether a silence or a failing source mutes them. A benchmark's "
                                   "saturation level is a state (listed as `level`); only a change of level "
                                   "notifies. Read-only.")
    p.add_argument("--state", choices=STATES, default=None, help="only alerts in this state")
    add_db_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import pandas as pd

    from alerts.render import state_text
    from storage import alerts as store
    try:
        with store_of(args).connect(read_only=True) as con:
            frame = store.alerts_frame(con, state=args.state)
    except StorageError as exc:
        print(f"benchwatch: {exc}", file=sys.stderr)
        return 1
    except duckdb.CatalogException:  # a database no notify run has migrated yet
        print("no alerts recorded yet: run `benchwatch notify`")
        return 0
    if frame.empty:
        print(f"no {args.state + ' ' if args.state else ''}alerts")
        return 0
    texts = [state_text(k, s, lab, ann)
             for k, s, lab, ann in zip(frame["kind"], frame["state"], frame["labels"], frame["annotations"])]
    rows = pd.DataFrame({
        "state": [word for word, _ in texts],
        "since": frame["since"].dt.strftime("%Y-%m-%d %H:%M"),
        "alert": [line for _, line in texts],
        "muted by": frame["muted_by"].where(frame["state"] == "firing", ""),
        "fingerprint": frame["fingerprint"],
    })
    # events that fire first, then the levels (states that are listed, never "firing"), then the rest
    rank = rows["state"].map({"firing": 0, "level": 1}).fillna(2)
    rows = rows.iloc[rank.argsort(kind="stable")]
    with pd.option_context("display.width", 220, "display.max_colwidth", 90, "display.max_rows", 1000):
        print(rows.to_string(index=False))
    return 0

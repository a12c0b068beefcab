"""`benchwatch calibrate [--db PATH] [--trials N] [--seed S] [--bootstrap B]`

Placebo check of the contamination signals on the database's data: clean models (trained
before the material) get random fake cutoffs or fake predecessors, and every flag they draw
is a false flag. Prints the false-flag rate per signal; each must stay <= 5 %.
"""

from __future__ import annotations

import argparse
import sys

import pandas as pd

from analysis.constants import CALIBRATION_MAX_FLAG_RATE, CALIBRATION_TRIALS
from flows.cli import add_db_argument, open_read_only
from storage.db import DEFAULT_WAIT_SECONDS


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("calibrate", help="placebo false-flag rate of the contamination signals",
                       description="Assign random fake cutoffs (A3) and fake predecessors (A2) to clean reference "
                                   "models, test clean (model, benchmark) pairs (A1), and count the flags: all "
                                   f"are false. Each signal's rate must stay <= {CALIBRATION_MAX_FLAG_RATE:.0%}; "
                                   "exit status 1 when one does not.")
    add_db_argument(p)
    p.add_argument("--trials", type=int, default=CALIBRATION_TRIALS, help=f"placebo trials (default {CALIBRATION_TRIALS})")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--bootstrap", type=int, default=None, metavar="B",
                   help="A1 bootstrap replicates per placebo test (default: the analysis default)")
    p.add_argument("--wait", type=float, default=DEFAULT_WAIT_SECONDS, metavar="SECONDS",
                   help="how long to wait while another process writes")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from flows.contamination_job import run_calibration
    from flows.jobs import utcnow
    if args.trials < 1:
        print("benchwatch calibrate: --trials must be at least 1", file=sys.stderr)
        return 2
    con = open_read_only(args)
    if con is None:
        return 1
    try:
        table = run_calibration(con, now=utcnow(), trials=args.trials, seed=args.seed, bootstrap_b=args.bootstrap)
    finally:
        con.close()
    shown = table.assign(rate=table["rate"].map(lambda r: "n/a" if pd.isna(r) else f"{r:.2%}"),
                         max_rate=table["max_rate"].map(lambda r: f"{r:.0%}"),
                         ok=table["ok"].map(lambda v: "n/a (no placebo test possible)" if v is None else
                                            "yes" if v else "NO"))
    print(f"placebo calibration: {args.trials} trial(s), seed {args.seed}")
    print(shown[["signal", "tests", "flags", "rate", "max_rate", "ok"]].to_string(index=False))
    bad = table[table["ok"].eq(False)]
    if len(bad):
        print(f"\nfalse-flag rate above {CALIBRATION_MAX_FLAG_RATE:.0%} for {', '.join(bad['signal'])}: raise "
              "MIN_EFFECT in analysis/constants.py (METHODS A, false-positive control 5)", file=sys.stderr)
        return 1
    return 0

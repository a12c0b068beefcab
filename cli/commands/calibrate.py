"""`benchwatch calibrate [--db PATH] [--trials N] [--seed S] [--bootstrap B]`

Placebo check of the contamination signals on the database's data; every placebo test is a
false positive by construction (docs/statistics.md, "Placebo calibration"):

- A3: clean models (trusted cutoff before every item) get random fake cutoffs;
- A1: a random model of each benchmark's reference pool is tested as if new (leave-one-out);
- A2: a random pair of pool models stands in for a model and its predecessor.

Per signal it prints the share of placebo p-values below 0.01 and 0.05 and the share of
trials in which BH alone (q <= 0.05 within the signal's family) raised at least one flag,
each with a 95 % CI. Exit status: 0 when every signal is within its nominal level (or has
no placebo test: "n/a"); 1 when one exceeds it beyond its CI (the CI's lower bound is above
0.01, 0.05 or 0.05 respectively), or the database cannot be opened; 2 on bad arguments.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING
import sys

from analysis.constants import CALIBRATION_TRIALS, FDR_Q
if TYPE_CHECKING:
    import pandas as pd

from cli.main import add_db_argument, open_read_only
from storage.db import DEFAULT_WAIT_SECONDS

EXIT_OK, EXIT_MISCALIBRATED, EXIT_USAGE = 0, 1, 2


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("calibrate", help="placebo calibration of the contamination signals",
                       description="Test placebo cases that cannot be contamination (fake cutoffs on clean models "
                                   "for A3, leave-one-out reference models for A1, fake predecessors for A2) and "
                                   "compare the share of p < 0.01 / p < 0.05 and the per-trial family-wise "
                                   f"false-flag rate after BH (q <= {FDR_Q}) with their nominal levels. Exit status 1 "
                                   "when a signal exceeds a nominal level beyond its 95 % CI, 0 otherwise.")
    add_db_argument(p)
    p.add_argument("--trials", type=int, default=CALIBRATION_TRIALS, help=f"placebo trials (default {CALIBRATION_TRIALS})")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--bootstrap", type=int, default=None, metavar="B",
                   help="A1 bootstrap replicates per placebo test (default: the analysis default)")
    p.add_argument("--wait", type=float, default=DEFAULT_WAIT_SECONDS, metavar="SECONDS",
                   help="how long to wait while another process writes")
    p.set_defaults(func=run)


def _ci(row: pd.Series, name: str) -> str:
    import pandas as pd

    if pd.isna(row.get(name)):
        return "n/a"
    return f"{row[name]:.2%} [{row[f'{name}_lo']:.2%}, {row[f'{name}_hi']:.2%}]"


def render(table: pd.DataFrame) -> str:
    import pandas as pd

    shown = pd.DataFrame({
        "signal": table["signal"], "tests": table["tests"],
        "p<0.01 (nominal 1%)": [_ci(r, "p01") for _, r in table.iterrows()],
        "p<0.05 (nominal 5%)": [_ci(r, "p05") for _, r in table.iterrows()],
        f"trials with a BH flag (nominal {FDR_Q:.0%})": [_ci(r, "fw_bh") for _, r in table.iterrows()],
        "with the full flag rule": [_ci(r, "fw_rule") for _, r in table.iterrows()],
        "ok": table["ok"].map(lambda v: "n/a (no placebo test possible)" if v is None or pd.isna(v) else
                              "yes" if v else "NO"),
    })
    return shown.to_string(index=False)


def run(args: argparse.Namespace) -> int:
    import pandas as pd

    from jobs.contamination import run_calibration
    from common.time import utcnow
    if args.trials < 2:
        print("benchwatch calibrate: --trials must be at least 2", file=sys.stderr)
        return EXIT_USAGE
    con = open_read_only(args)
    if con is None:
        return EXIT_MISCALIBRATED
    try:
        table = run_calibration(con, now=utcnow(), trials=args.trials, seed=args.seed, bootstrap_b=args.bootstrap)
    finally:
        con.close()
    print(f"placebo calibration: {args.trials} trial(s), seed {args.seed}")
    with pd.option_context("display.width", 250):
        print(render(table))
    bad = table[table["ok"].eq(False)]
    if len(bad):
        print(f"\nmiscalibrated: {', '.join(bad['signal'])} exceed(s) a nominal level beyond its 95 % CI; the "
              "q-values of these signals are not to be trusted (docs/statistics.md, placebo calibration)",
              file=sys.stderr)
        return EXIT_MISCALIBRATED
    return EXIT_OK

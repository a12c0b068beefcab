"""`benchwatch analyze`: recompute saturation, trends and contamination signals from stored data."""

from __future__ import annotations

import argparse
import sys

import pandas as pd

from flows.cli import add_db_argument


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("analyze", help="recompute saturation, trends and contamination-suspect signals",
                       description="Recompute, from what the database holds: the saturation index per benchmark "
                                   "(scope all and post_cutoff), its history and trend, post-cutoff slices and the "
                                   "contamination-suspect signals. Results go to the saturation_*, trends, "
                                   "post_cutoff_scores and suspects views.")
    add_db_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from flows.jobs import analyze
    from storage.db import StorageError
    try:
        result = analyze(args.db)
    except StorageError as exc:
        print(f"benchwatch: {exc}", file=sys.stderr)
        return 1
    sat = result["saturation"]
    cols = [c for c in ("benchmark", "scope", "s_index", "bin", "r_norm", "se_delta", "n_items", "reason") if c in sat.columns]
    with pd.option_context("display.width", 200, "display.max_rows", 500, "display.max_colwidth", 60):
        print(sat[cols].to_string(index=False) if len(sat) else "no benchmark has enough models yet")
    sus = result["suspects"]
    flagged = sus[sus["status"] != "not_flagged"] if len(sus) and "status" in sus.columns else sus.iloc[0:0]
    print(f"\ncontamination signals: {len(sus)} test(s), {len(flagged)} suspect flag(s)")
    if len(flagged):
        print(flagged[[c for c in ("model", "benchmark", "signal", "effect", "q_value", "status") if c in flagged.columns]]
              .to_string(index=False))
    return 0

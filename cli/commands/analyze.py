"""`benchwatch analyze`: recompute saturation, trends and contamination signals from stored data."""

from __future__ import annotations

import argparse
import sys
import re

from cli.main import add_db_argument, store_of
from storage.db import StorageError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("analyze", help="recompute saturation, trends and contamination-suspect signals",
                       description="Recompute, from what the database holds: the saturation index per benchmark "
                                   "(scope all and post_cutoff), its history and trend, post-cutoff slices and the "
                                   "contamination-suspect signals. Results go to the saturation_*, trends, "
                                   "post_cutoff_scores and suspects views.")
    add_db_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import pandas as pd

    from jobs.analyze import analyze
    from jobs.analyze_step import flagged_suspects
    try:
        result = analyze(store_of(args))
    except StorageError as exc:
        print(f"benchwatch: {exc}", file=sys.stderr)
        return 1
    levels = result["levels"]
    indexed = levels[levels["s_index"].notna()].sort_values(["scope", "s_index"], ascending=[True, False])
    table = pd.DataFrame({
        "table": indexed["table_id"] if "table_id" in indexed.columns else indexed["benchmark"],
        "scope": indexed["scope"],
        "population": indexed["population"] if "population" in indexed.columns else "models",
        "S_index": indexed["s_index"].map(lambda v: f"{v:.3f}"), "bin": indexed["bin"],
        "R_norm": indexed["r_norm"].map(lambda v: f"{v:.2f}"), "SE_delta": indexed["se_delta"].map(lambda v: f"{v:.4f}"),
        "n": indexed["n_items"].map(lambda v: "" if pd.isna(v) else f"{int(v)}"),
        "models": indexed["n_models"], "uncertainty": indexed["uncertainty"],
        "stagnation": indexed["stagnation"].map(lambda v: "yes" if v is True else ""),
    })
    with pd.option_context("display.width", 200, "display.max_rows", 500, "display.max_colwidth", 40):
        print(table.to_string(index=False) if len(table) else "no benchmark has enough models with a known n yet")
    missing = levels[levels["s_index"].isna()]
    if len(missing):
        print(f"\n{len(missing)} table/scope/population row(s) without an index:")
        for reason, n in missing["reason"].fillna("unknown").map(_reason_kind).value_counts().items():
            print(f"  {n:4d}  {reason}")
        print("  (details: benchwatch query \"SELECT table_id, scope, reason FROM saturation_latest WHERE s_index IS NULL\")")
    sus = result["suspects"]
    flagged = flagged_suspects(sus)
    print(f"\ncontamination signals: {len(sus)} test(s), {len(flagged)} suspect flag(s) (never a verdict: see the evidence)")
    if len(flagged):
        show = flagged.assign(effect=flagged["effect"].map(lambda v: f"{v:+.3f}"),
                              q_value=flagged["q_value"].map(lambda v: f"{v:.2g}"))
        print(show[["model", "benchmark", "signal", "effect", "q_value", "status"]].to_string(index=False))
    return 0


def _reason_kind(reason: str) -> str:
    """Group reasons that differ only in numbers ('only 3 model score(s)…')."""
    return re.sub(r"\d+", "N", reason)

"""`benchwatch saturation --n N [--k 5] [--alpha 0.5] [--z 1.96] [--json] SCORE...`

The paper's saturation index for scores typed on the command line (percents or proportions:
a list whose largest value is above 1 is read as percents).
"""

from __future__ import annotations

import argparse
import json
import sys

from analysis.constants import SATURATION_ALPHA, SATURATION_K, SATURATION_Z


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "saturation", help="compute the saturation index (S_index) of a list of top scores",
        description="Saturation index of Akhtar, Reuel et al. 2026: S = exp(-R_norm^2), "
                    "R_norm = (s1 - sk) / sqrt(SE(s1)^2 + SE(sk)^2), SE(s) = sqrt(s(1-s)/n^alpha).")
    p.add_argument("scores", metavar="SCORE", nargs="+", type=float,
                   help="scores of the models, any order; percents if any value is above 1")
    p.add_argument("--n", dest="n_items", type=float, required=True, help="test-set size (number of items/problems)")
    p.add_argument("--k", type=int, default=SATURATION_K, help=f"top-k models compared (default {SATURATION_K})")
    p.add_argument("--alpha", type=float, default=SATURATION_ALPHA,
                   help=f"n_eff = n^alpha (default {SATURATION_ALPHA})")
    p.add_argument("--z", type=float, default=SATURATION_Z,
                   help=f"statistically similar when s1 - sk <= z SE_delta (default {SATURATION_Z})")
    p.add_argument("--json", action="store_true", help="print the full result as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import pandas as pd

    from analysis.saturation import saturation_index
    from scrapers.normalize import proportions_from

    values = proportions_from(pd.Series(args.scores, dtype="float64"))
    try:
        res = saturation_index(values.tolist(), args.n_items, args.k, args.alpha, args.z)
    except ValueError as exc:
        print(f"benchwatch saturation: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(res.to_dict(), indent=2))
        return 0 if res.s_index is not None else 1
    rows = [(f"top-{res.k} scores (%)", ", ".join(f"{100 * s:.2f}" for s in res.top_scores)),
            ("n / n_eff", f"{res.n_items:g} / {res.n_eff:.4g}   (alpha = {res.alpha:g})")]
    if res.s_index is None:
        rows.append(("no index", res.reason or ""))
    else:
        rows += [
            ("SE_delta", f"{res.se_delta:.6g}"),
            ("R_norm", f"{res.r_norm:.6g}"),
            ("S_index", f"{res.s_index:.6g}"),
            ("bin", res.bin or ""),
            ("statistically similar", f"{'yes' if res.statistically_similar else 'no'}   (z = {res.z:g})"),
            ("saturated", "yes" if res.saturated else "no"),
            ("stagnation", f"{'yes' if res.stagnation else 'no'}   (headroom {res.headroom:.1%})"),
            ("uncertainty", res.uncertainty or ""),
        ]
    width = max(len(label) for label, _ in rows) + 2
    print("\n".join(f"{label:<{width}}{value}" for label, value in rows))
    return 0 if res.s_index is not None else 1

"""`benchwatch calibrate [--db PATH] [--trials N] [--seed S] [--bootstrap B] [--power]`

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

`--power` adds A3's targets (docs/statistics.md, "A3 calibration and power"): the placebo's
P(p < 0.05) within [3 %, 7 %] and P(p < 0.01) <= 2 %, and its power on the database's dated items
with a gain planted in a clean model's pre-cutoff items: P(p < 0.05) >= 50 % at +10 pp and
P(flagged under the full rule after BH) >= 90 % at +20 pp, with items per side, Wilson CIs and the
minimum detectable effect at 80 % power (where a target is out of reach, that is why). The
placebo line names its clean models (the independent units: each keeps its offset at every fake
cutoff) and, when the rate misses its target, the rate's CI across those models. The targets are
reported, not part of the exit status.

The result is stored (table contamination_calibrations): while a signal's newest calibration finds
it miscalibrated, or no passing calibration is on record, the contamination_suspect rule shows its
flags as unconfirmed with that reason and never delivers them as confirmed. A3 is the exception:
its flags are judged by their own item set's calibration, which `analyze` computes on that set's
data (table contamination_set_calibrations); the command lists those per item set as well (with
the analysis' trials and seed, so a stored one is read, not drawn again, and a missing one is
computed and stored). They do not enter the exit status, which stays the pooled rule above.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING
import sys

from typing import Any

from analysis.constants import (
    A3_PLACEBO_P01_MAX,
    A3_PLACEBO_P05,
    A3_POWER_FLAG_AT_20,
    A3_POWER_P05_AT_10,
    CALIBRATION_TRIALS,
    FDR_Q,
)
if TYPE_CHECKING:
    import pandas as pd

from cli.main import add_db_argument, open_read_only, store_of
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
    p.add_argument("--power", action="store_true",
                   help="also report A3's placebo targets and its power at +10/+20 pp planted gains, with the "
                        "minimum detectable effect at 80 %% power")
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
        "placebo models": [("n/a" if pd.isna(r.get("units")) else f"{int(r['units'])}") for _, r in table.iterrows()],
        "p<0.01 (nominal 1%)": [_ci(r, "p01") for _, r in table.iterrows()],
        "p<0.05 (nominal 5%)": [_ci(r, "p05") for _, r in table.iterrows()],
        f"trials with a BH flag (nominal {FDR_Q:.0%})": [_ci(r, "fw_bh") for _, r in table.iterrows()],
        "with the full flag rule": [_ci(r, "fw_rule") for _, r in table.iterrows()],
        "ok": table["ok"].map(lambda v: "n/a (no placebo test possible)" if v is None or pd.isna(v) else
                              "yes" if v else "NO"),
    })
    return shown.to_string(index=False)


def _pct(row: Any, name: str) -> str:
    return f"{row[name]:.1%} [{row[f'{name}_lo']:.1%}, {row[f'{name}_hi']:.1%}]"


def _units_note(r: Any, met: bool) -> str:
    """How many independent units (clean models) the placebo rate rests on, and, when the target is
    missed, whether the rate across them still reaches it (summarize_placebo's p05_unit_lo/hi):
    each clean model keeps its own offset at every fake cutoff, so on a history with few clean
    models a calibrated test's rate lands far from 5 % (docs/statistics.md, A3 calibration)."""
    import pandas as pd

    units = r.get("units")
    if units is None or pd.isna(units):
        return ""
    note = f" ({int(units)} clean model(s)"
    lo, hi = r.get("p05_unit_lo"), r.get("p05_unit_hi")
    if met or lo is None or pd.isna(lo):
        return note + ")"
    within = lo <= A3_PLACEBO_P05[1] and hi >= A3_PLACEBO_P05[0]
    return (note + f"; across them {r['p05']:.1%} [{lo:.1%}, {hi:.1%}], which "
            + ("reaches the target: a calibrated test's rate on so few models may fall this far from 5 %)" if within
               else "misses the target too)"))


def render_power(placebo: pd.DataFrame, power: pd.DataFrame) -> list[str]:
    """A3's placebo targets and power table, each target said met or not (with the minimum
    detectable effect at 80 % power where it is not)."""
    import pandas as pd

    lines = ["A3 targets (docs/statistics.md, A3 calibration and power):"]
    a3 = placebo[placebo["signal"] == "A3"]
    if not len(a3) or not a3["tests"].iloc[0]:
        lines.append("  placebo: no A3 placebo test possible on this database")
    else:
        r = a3.iloc[0]
        ok05 = A3_PLACEBO_P05[0] <= r["p05"] <= A3_PLACEBO_P05[1]
        ok01 = r["p01"] <= A3_PLACEBO_P01_MAX
        lines.append(f"  placebo P(p < 0.05) = {_pct(r, 'p05')}, target {A3_PLACEBO_P05[0]:.0%} to "
                     f"{A3_PLACEBO_P05[1]:.0%}: {'met' if ok05 else 'NOT met'}{_units_note(r, ok05)}")
        lines.append(f"  placebo P(p < 0.01) = {_pct(r, 'p01')}, target at most {A3_PLACEBO_P01_MAX:.0%}: "
                     f"{'met' if ok01 else 'NOT met'}")
    if not len(power):
        lines.append("  power: no benchmark with enough clean models and dated items")
        return lines
    shown = pd.DataFrame({
        "benchmark": power["benchmark"], "planted": power["planted"].map(lambda g: f"+{g * 100:.0f} pp"),
        "items pre/post": [f"{a:.0f} / {b:.0f}" for a, b in zip(power["n_pre"], power["n_post"])],
        "SE": power["se_total"].map(lambda v: f"{v * 100:.1f} pp"),
        "P(p < 0.05)": [_pct(r, "p05") for _, r in power.iterrows()],
        "P(flagged, full rule after BH)": [_pct(r, "flag") for _, r in power.iterrows()],
        "MDE 80% (p<.05 / flag)": [f"{a * 100:.1f} / {b * 100:.1f} pp" for a, b in zip(power["mde_p05"],
                                                                                         power["mde_flag"])],
    })
    lines += ["", shown.to_string(index=False), ""]
    for bench, rows in power.groupby("benchmark", sort=True):
        for gain, col, target, what in ((0.10, "p05", A3_POWER_P05_AT_10, "P(p < 0.05) at +10 pp"),
                                        (0.20, "flag", A3_POWER_FLAG_AT_20, "P(flagged) at +20 pp")):
            r = rows[rows["planted"].round(3) == gain]
            if not len(r):
                continue
            r = r.iloc[0]
            met = r[col] >= target
            why = "" if met else (
                f"; out of reach at {r['n_pre']:.0f}/{r['n_post']:.0f} items: SE {r['se_total'] * 100:.1f} pp, "
                f"so 80 % power needs a gain of {r['mde_p05' if col == 'p05' else 'mde_flag'] * 100:.1f} pp")
            lines.append(f"  {bench}: {what} = {r[col]:.0%}, target at least {target:.0%}: "
                         f"{'met' if met else 'NOT met'}{why}")
    return lines


def render_sets(sets: pd.DataFrame) -> list[str]:
    """A3's calibration per item set: what `analyze` judges each set's flags by."""
    import pandas as pd

    lines = [f"A3 per item set (the calibration each set's flags are judged by; {CALIBRATION_TRIALS} trials, the "
             "analysis' seed):"]
    if not len(sets):
        return lines + ["  no dated item set"]
    shown = pd.DataFrame({
        "item set": [f"{s}/{b}" if s else str(b) for s, b in zip(sets["source"], sets["benchmark"])],
        "clean models": sets["units"].map(lambda v: "n/a" if pd.isna(v) else f"{int(v)}"),
        "tests": sets["tests"],
        "p<0.01": [_ci(r, "p01") for _, r in sets.iterrows()],
        "p<0.05": [_ci(r, "p05") for _, r in sets.iterrows()],
        "trials with a BH flag": [_ci(r, "fw_bh") for _, r in sets.iterrows()],
        "ok": sets["ok"].map(lambda v: "n/a (no placebo test possible)" if v is None or pd.isna(v) else
                             "yes" if v else "NO"),
    })
    return lines + ["  " + line for line in shown.to_string(index=False).splitlines()]


def _record(args: argparse.Namespace, table: "pd.DataFrame", now: Any, sets: "pd.DataFrame | None" = None) -> None:
    """Store the result (the contamination_suspect rule reads the newest of each signal: a signal found
    miscalibrated has its flags shown unconfirmed) and the item-set calibrations computed here. A file
    that cannot be written is said, not fatal."""
    from jobs.contamination import record_calibration
    from jobs.sync import connect_synced
    from storage.contamination import store_set_calibrations
    try:
        with connect_synced(store_of(args)) as con:
            record_calibration(con, table, calibrated_at=now, seed=args.seed)
            if sets is not None and len(sets):
                store_set_calibrations(con, sets, calibrated_at=now)
    except Exception as exc:     # a read-only file or a writer holding it: the figures are still printed
        print(f"benchwatch calibrate: result not stored ({type(exc).__name__}: {exc}); the alert rule keeps "
              "the previous calibration", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    import pandas as pd

    from jobs.contamination import run_calibration, run_power, run_set_calibrations
    from common.time import utcnow
    if args.trials < 2:
        print("benchwatch calibrate: --trials must be at least 2", file=sys.stderr)
        return EXIT_USAGE
    con = open_read_only(args)
    if con is None:
        return EXIT_MISCALIBRATED
    try:
        now = utcnow()
        table = run_calibration(con, now=now, trials=args.trials, seed=args.seed, bootstrap_b=args.bootstrap)
        power = run_power(con, now=now, trials=args.trials, seed=args.seed) if args.power else None
        sets, fresh = run_set_calibrations(con, now=now)
    finally:
        con.close()
    _record(args, table, now, fresh)
    print(f"placebo calibration: {args.trials} trial(s), seed {args.seed}")
    with pd.option_context("display.width", 250):
        print(render(table))
    if power is not None:
        print()
        print("\n".join(render_power(table, power)))
    print()
    with pd.option_context("display.width", 250):
        print("\n".join(render_sets(sets)))
    bad = table[table["ok"].eq(False)]
    if len(bad):
        print(f"\nmiscalibrated: {', '.join(bad['signal'])} exceed(s) a nominal level beyond its 95 % CI; the "
              "q-values of these signals are not to be trusted (docs/statistics.md, placebo calibration)",
              file=sys.stderr)
        return EXIT_MISCALIBRATED
    return EXIT_OK

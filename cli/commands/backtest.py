"""`benchwatch backtest [--db PATH] [--format text|json] [--wait S]`

How good the frontier forecasts would have been (issue 53; docs/statistics.md, "Forecasts with a
track record"): at monthly past origins of every table with enough dated history, each method
(persistence, Theil-Sen, logistic) forecasts the frontier 3, 6 and 12 months ahead from the
results dated on or before the origin, and is scored against the frontier observed then. Prints,
per horizon, the forecasts and tables, MAE (pp for proportions) with its table-clustered 90 % CI,
the no-change forecast's MAE, bias and the share of outcomes inside the calibrated 80 % interval,
for the method each metric kind uses; then crossing dates. The result is stored
(forecast_backtest, forecast_backtest_summary, forecast_backtest_crossings), which the report
quotes.

Exit status: 0 done; 1 the database cannot be opened, holds no analysed frontier (run `benchwatch
analyze` first, or no dated score to forecast from), or the result cannot be stored; 2 usage.
"""

from __future__ import annotations

import argparse
import json
import sys

from cli.main import add_db_argument, open_read_only, store_of
from storage.db import DEFAULT_WAIT_SECONDS

EXIT_OK, EXIT_FAILED = 0, 1


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("backtest", help="how good the frontier forecasts would have been (backtest)",
                       description="Forecast every table's frontier at monthly past origins from the results dated "
                                   "on or before each origin, 3/6/12 months ahead, and score the forecasts against "
                                   "the frontier observed then: MAE beside the no-change forecast's, bias, and the "
                                   "share inside the 80 %% interval. Stores the result for the report.")
    add_db_argument(p)
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format (default text)")
    p.add_argument("--wait", type=float, default=DEFAULT_WAIT_SECONDS, metavar="SECONDS",
                   help="how long to wait while another process writes")
    p.set_defaults(func=run)


def _fmt(v, spec: str = ".1f") -> str:
    return "—" if v is None or v != v else format(v, spec)


def _share(v, low, high) -> str:
    """A share in % with its CI where there is one; a dash without one."""
    if v is None or v != v:
        return "—"
    ci = "" if low is None or low != low else f" [{low * 100:.0f}, {high * 100:.0f}]"
    return f"{v * 100:.0f} %{ci}"


def render(result: dict) -> str:
    """The text output: per kind, the chosen method by horizon, every method beside it, crossings."""
    import pandas as pd

    summary, rows = result["summary"], result["rows"]
    scored = rows[rows["method"] == "persistence"] if len(rows) else rows      # every scored origin and horizon
    lines = [f"forecast backtest: {len(scored)} origin-horizon pair(s) scored from "
             f"{scored['table_id'].nunique() if len(scored) else 0} table(s) (monthly origins, each method seeing only "
             "results dated on or before its origin)"]
    unscored = result.get("unscored")
    if unscored is not None and len(unscored) and int(unscored["outcomes"].iat[0]):
        lines.append(f"{int(unscored['outcomes'].iat[0])} origin-horizon pair(s) not scored: a result first "
                     "observed later may have been achieved by then, so the frontier then is not known")
    if not len(summary):
        lines.append("no table has enough dated history (180 days and 3 records before an origin, and an outcome "
                     "3 months later)")
        return "\n".join(lines)
    for kind, g in summary.groupby("kind", sort=True):
        unit = str(g["unit"].iat[0])
        chosen = g[g["chosen"].astype(bool)].sort_values("horizon_months")
        use = ", ".join(f"{int(h)} mo {'no forecast (none beats no change)' if m == 'persistence' else m}"
                        for h, m in zip(chosen["horizon_months"], chosen["method"]))
        lines += ["", f"{kind} tables ({unit}); forecasts use: {use}"]
        shown = pd.DataFrame({
            "method": g["method"] + g["chosen"].astype(bool).map({True: " *", False: ""}),
            "horizon": g["horizon_months"].map(lambda h: f"{h} mo"), "n": g["n"], "tables": g["n_tables"],
            "MAE [90% CI]": [_fmt(a) + ("" if b != b else f" [{_fmt(b)}, {_fmt(c)}]")
                             for a, b, c in zip(g["mae"], g["mae_low"], g["mae_high"])],
            "no-change MAE": g["naive_mae"].map(_fmt), "bias": g["bias"].map(lambda v: _fmt(v, "+.1f")),
            "inside 80% [90% CI]": [_share(a, b, c) for a, b, c in zip(g["coverage"], g["coverage_low"],
                                                                         g["coverage_high"])],
            "own interval": g["raw_coverage"].map(lambda v: "—" if v != v else f"{v * 100:.0f} %"),
        })
        lines.append(shown.to_string(index=False))
    lines.append("(* the method this kind's forecasts use at that horizon; CIs resample whole tables: a table's "
                 "origins are correlated)")
    cs = result["crossing_summary"]
    if len(cs):
        lines += ["", "crossing dates (origins before a table's frontier reached its threshold):"]
        for r in cs.to_dict("records"):
            head = f"  {r['kind']} {r['method']}: {r['n']} origin(s) of {r['n_tables']} table(s), "
            lines.append(head + ("no crossing date forecast" if not r["n_dated"] else
                                 f"{r['n_dated']} dated; error {_fmt(r['mae_months'])} months mean absolute, "
                                 f"{_fmt(r['bias_months'], '+.1f')} bias (> 0: late)"))
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from common.time import utcnow
    from jobs.backtest import NoFrontier, horizons_json, record_backtest, run_backtest
    from jobs.sync import connect_synced
    con = open_read_only(args)
    if con is None:
        return EXIT_FAILED
    now = utcnow()
    try:
        result = run_backtest(con, now=now, write=False)
    except NoFrontier as exc:
        print(f"benchwatch backtest: {exc}", file=sys.stderr)
        return EXIT_FAILED
    finally:
        con.close()
    try:
        with connect_synced(store_of(args)) as wcon:
            record_backtest(wcon, result, now=now)
    except Exception as exc:     # a read-only file or a writer holding it: said, and the figures still shown
        from common.redact import redact
        print(f"benchwatch backtest: result not stored ({type(exc).__name__}: {redact(exc)})", file=sys.stderr)
        code = EXIT_FAILED
    else:
        code = EXIT_OK
    if args.format == "json":
        print(json.dumps(horizons_json(result["summary"]), indent=2))
    else:
        print(render(result))
    return code

"""Regenerate the figures docs/statistics.md quotes about the real snapshot history.

    python docs/figures.py [--snapshots ../shared/snapshots] [--db FILE] [--check]

Every number docs/statistics.md states about real leaderboards sits between markers
`<!-- figures:NAME -->` … `<!-- /figures:NAME -->` (docs/doc_blocks.py); this script recomputes each
block with the project's own code and rewrites it:

1. backfill the dated leaderboard copies of --snapshots into a temporary database (the
   project's backfill: `benchwatch backfill DIR` where that command exists, else
   scripts/backfill_snapshots.py — both are called as a user would);
2. `analyze` with "now" = the newest observation of the history (not the wall clock, so the
   figures depend on the data alone);
3. placebo calibration (`benchwatch calibrate`'s function) with the current thresholds and
   with the former inference, and a few direct calls (plateau test, scale comparison);
   the paper's 60 top-5s beside the stored trajectory of each benchwatch table
   (docs/paper_agreement.py);
4. rewrite (or, with --check, compare) each block.

--check exits 1 when a block differs from what the code produces now (the doc is stale),
2 when the snapshots folder is missing or the doc lacks a block the script produces.
Numbers are rounded for reading; Monte Carlo figures use fixed seeds, so a rerun of the same
code on the same files reproduces them exactly.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import replace
from datetime import datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:                 # `python docs/figures.py` from a clone
    sys.path.insert(0, str(REPO))

import pandas as pd  # noqa: E402

from docs.doc_blocks import q, rewrite, table  # noqa: E402
from docs.paper_agreement import DEFAULT_PAPER_DATA, block_paper_agreement, paper_agreement  # noqa: E402

DOC = REPO / "docs" / "statistics.md"
DEFAULT_SNAPSHOTS = REPO.parent / "shared" / "snapshots"

CALIBRATION_TRIALS = 100     # placebo trials per calibrate run (as documented with the table)
CALIBRATION_BOOTSTRAP = 200  # A1 bootstrap replicates per placebo test
CALIBRATION_SEED = 0
A3_PLACEBO_TRIALS = 400      # A3's placebo and power figures (`benchwatch calibrate --power`'s functions)
A3_POWER_TRIALS = 200
OTIS_ITEMS = 45              # OTIS Mock AIME 2024-2025: 45 problems (Epoch's description; not in its data file)


# --- running the pipeline -------------------------------------------------------------------

def backfill(root: Path, db: Path) -> None:
    """Ingest every dated copy under `root` into `db` through the project's backfill command."""
    from cli.commands import COMMANDS
    if "backfill" in COMMANDS:
        cmd = [sys.executable, "-m", "cli", "backfill", str(root), "--db", str(db)]
    else:
        cmd = [sys.executable, str(REPO / "scripts" / "backfill_snapshots.py"), str(root), "--db", str(db)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"figures: backfill failed ({' '.join(cmd[1:3])}):\n{done.stderr[-2000:]}")


def history_now(db: Path) -> datetime:
    """The newest observation of the history: the analysis' "now"."""
    t = pd.Timestamp(q(db, "SELECT max(observed_at) AS t FROM snapshots")["t"].iloc[0])
    t = t.tz_localize("UTC") if t.tzinfo is None else t.tz_convert("UTC")
    return t.to_pydatetime()


def calibration(db: Path, now: datetime) -> dict[str, pd.DataFrame]:
    """Placebo tables: the current thresholds and the former inference (anchored link, items independent)."""
    from analysis.contamination import Thresholds
    from jobs.contamination import run_calibration
    from storage.db import connect
    out = {}
    for label, th in (("current", Thresholds()),
                      ("former", replace(Thresholds(), chance_link="anchor", a3_null="item_normal"))):
        with connect(db, read_only=True) as con:
            out[label] = run_calibration(con, now=now, trials=CALIBRATION_TRIALS, seed=CALIBRATION_SEED,
                                         bootstrap_b=CALIBRATION_BOOTSTRAP, th=th)
    return out


# --- formatting -----------------------------------------------------------------------------

def pct(v: float) -> str:
    return "n/a" if v is None or pd.isna(v) else f"{100 * v:.1f} %"


def pct_ci(row: pd.Series, name: str) -> str:
    if pd.isna(row.get(name)):
        return "n/a"
    lo, hi = row.get(f"{name}_lo"), row.get(f"{name}_hi")
    if pd.isna(lo) or (lo == row[name] == hi):
        return pct(row[name])
    return f"{100 * row[name]:.1f} % [{100 * lo:.1f}, {100 * hi:.1f}]"


def f3(v) -> str:
    return "—" if v is None or pd.isna(v) else f"{float(v):.3f}"


# --- the blocks -----------------------------------------------------------------------------

def block_history(db: Path, now: datetime) -> str:
    snaps = q(db, "SELECT source, count(*) AS n, min(observed_at) AS first, max(observed_at) AS last "
                  "FROM snapshots GROUP BY source ORDER BY source")
    per = ", ".join(f"{r.source} {r.n}" for r in snaps.itertuples())
    return (f"{int(snaps['n'].sum())} dated files of {len(snaps)} sources ({per}), observed "
            f"{pd.Timestamp(snaps['first'].min()):%Y-%m-%d} to {pd.Timestamp(snaps['last'].max()):%Y-%m-%d}; "
            f"analyzed with now = {now:%Y-%m-%d} (the newest observation)")


def _levels(db: Path) -> pd.DataFrame:
    return q(db, "SELECT table_id, benchmark, scope, population, n_items, n_models, s_index, bin, bin_hold_prob, "
                 "scale, comparable, stagnation, top_models FROM saturation_latest WHERE s_index IS NOT NULL "
                 "ORDER BY scope, comparable DESC, s_index DESC, table_id, population")


def block_saturation(db: Path) -> str:
    lv = _levels(db)
    rows = []
    for r in lv.itertuples():
        rows.append([r.table_id, r.scope, r.population, "" if pd.isna(r.n_items) else int(r.n_items), r.n_models,
                     f3(r.s_index), r.bin + (" (stagnation)" if not pd.isna(r.stagnation) and bool(r.stagnation) else ""), f3(r.bin_hold_prob),
                     r.scale + ("" if r.comparable else ", not comparable"), ", ".join(list(r.top_models))])
    missing = q(db, "SELECT count(*) AS n FROM saturation_latest WHERE s_index IS NULL")["n"].iloc[0]
    return (table(["table (benchmark:source[:version])", "scope", "population", "n", "models", "S", "bin",
                   "P(bin holds)", "scale", "top models (rank order)"], rows)
            + f"\n\n{len(lv)} rows with an index; {int(missing)} table/scope/population rows without one "
              "(the reason is stored).")


def block_bin_hold(db: Path) -> str:
    lv = _levels(db)
    sat = lv[(lv["scope"] == "all") & lv["comparable"].astype(bool) & lv["bin"].isin(["high", "very high"])]
    parts = [f"{r.table_id}{'' if r.population == 'models' else f' ({r.population})'} {r.bin} {f3(r.bin_hold_prob)}"
             for r in sat.sort_values("bin_hold_prob", ascending=False).itertuples()]
    return "; ".join(parts)


def block_scales(db: Path) -> str:
    from analysis.saturation import saturation_index
    row = q(db, "SELECT s_index, top_scores FROM saturation_latest WHERE benchmark = 'otis_mock_aime_2024_2025' "
                "AND scope = 'all' AND population = 'models'")
    if not len(row) or pd.isna(row["s_index"].iloc[0]):
        return "OTIS Mock AIME: no index in this history"
    published = float(row["s_index"].iloc[0])
    binomial = saturation_index(list(row["top_scores"].iloc[0]), OTIS_ITEMS).s_index
    return (f"S = {published:.2f} from Epoch's published SEs and {binomial:.2f} with the paper's binomial "
            f"at n = {OTIS_ITEMS}")


def block_trends(db: Path) -> str:
    tr = q(db, "SELECT trend_status, slope_ci_low, slope_ci_high, stale_days, forecast_status FROM trends")
    counts = tr["trend_status"].value_counts()
    zero = int(((tr["slope_ci_low"] == 0) & (tr["slope_ci_high"] == 0)).sum())
    fc = tr["forecast_status"].value_counts()
    return (f"{len(tr)} table trends: " + ", ".join(f"{k} {counts[k]}" for k in sorted(counts.index))
            + f"; slope CIs of exactly [0, 0]: {zero}; median staleness {int(tr['stale_days'].median())} days; "
            + "forecasts: " + ", ".join(f"{k} {fc[k]}" for k in sorted(fc.index)))


# --- the trend interval's coverage, by simulation (no data needed) --------------------------

TREND_REGIMES = {"rare records": (0.5, 0.5, 0.05), "slow drift": (0.3, 2.0, 0.05), "fast drift": (2.0, 1.0, 0.02)}
TREND_RUNS = 400             # simulated years per regime
TREND_SEED = 20260
DAYS_PER_MONTH = 365.25 / 12


def step_frontier(rng, mu_pp_month: float, models_per_month: float, shortfall_sd: float, burn_days: int = 730):
    """Models arrive as a Poisson process over [-burn, 365] days; each scores the latent line
    0.3 + mu t minus |N(0, sd)|; the frontier is their running maximum (a step function with true
    drift mu, per day). Returns as_of (days), frontier, is_record, mu."""
    import numpy as np
    mu = mu_pp_month / 100 / DAYS_PER_MONTH
    n = rng.poisson(models_per_month / DAYS_PER_MONTH * (burn_days + 365))
    t = np.sort(rng.uniform(-burn_days, 365, n))
    s = 0.3 + mu * t - np.abs(rng.normal(0, shortfall_sd, n))
    f = np.maximum.accumulate(s)
    return t, f, np.concatenate([[True], f[1:] > f[:-1]]), mu


def trend_ci_coverage(regime: tuple[float, float, float], runs: int = TREND_RUNS,
                      seed: int = TREND_SEED) -> dict[str, dict[str, float]]:
    """Coverage of the true drift by the trend's Theil-Sen 95% CI over one simulated year, split
    by the number of distinct frontier points: `shown` (>= TREND_MIN_POINTS, what benchwatch
    reports) and `few` (3 to TREND_MIN_POINTS - 1, the CI it no longer shows, computed for
    comparison). Per group: fits, covered share, median CI width / drift."""
    import numpy as np

    from analysis.constants import TREND_MIN_POINTS
    from analysis.frontier_trend import frontier_trend
    rng = np.random.default_rng(seed)
    origin = pd.Timestamp("2024-01-01")
    groups: dict[str, list[tuple[bool, float]]] = {"shown": [], "few": []}
    for _ in range(runs):
        t, f, rec, mu = step_frontier(rng, *regime)
        fit = frontier_trend(origin + pd.to_timedelta(t, unit="D"), f, rec, end=origin + pd.Timedelta(days=365),
                             min_points=3)
        if fit.status != "ok":
            continue
        groups["shown" if fit.n_points >= TREND_MIN_POINTS else "few"].append(
            (bool(fit.low <= mu <= fit.high), (fit.high - fit.low) / mu))
    return {g: {"fits": len(v), "coverage": float(np.mean([c for c, _ in v])) if v else float("nan"),
                "width": float(np.median([w for _, w in v])) if v else float("nan")} for g, v in groups.items()}


def block_trend_coverage() -> str:
    from analysis.constants import TREND_MIN_POINTS
    rows = []
    for name, regime in TREND_REGIMES.items():
        cov = trend_ci_coverage(regime)
        shown, few = cov["shown"], cov["few"]
        rows.append([f"{name} ({regime[0]:g} pp/month, {regime[1]:g} models/month, shortfall sd {regime[2]:g})",
                     f"{shown['fits']} of {TREND_RUNS}", f"{shown['coverage']:.2f}", f"{shown['width']:.2f}",
                     str(few["fits"]), f"{few['coverage']:.2f}" if few["fits"] else "—",
                     f"{few['width']:.2f}" if few["fits"] else "—"])
    return (f"seed {TREND_SEED}, {TREND_RUNS} simulated years per regime:\n\n"
            + table(["regime", f"trends with ≥ {TREND_MIN_POINTS} points", "coverage", "median CI width / drift",
                     f"3–{TREND_MIN_POINTS - 1} points (no CI shown)", "their coverage", "their width / drift"],
                    rows))


def block_plateau(db: Path) -> str:
    """The plateau F-test on every benchmark whose logistic fit left L below the threshold."""
    from analysis.constants import FORECAST_PROGRESS
    from analysis.logistic import fit_logistic, plateau_test
    tr = q(db, "SELECT t.table_id, t.population, t.n_records, t.logistic_L, t.forecast_status, t.plateau_p, "
               "b.chance, b.ceiling FROM trends t JOIN benchmarks b ON b.id = t.benchmark "
               "WHERE t.logistic_L IS NOT NULL AND t.forecast_status <> 'reached' ORDER BY t.table_id")
    fr = q(db, "SELECT table_id, as_of, frontier FROM frontier WHERE is_record ORDER BY table_id, as_of")
    rows = []
    for r in tr.itertuples():
        floor, ceiling = float(r.chance or 0.0), float(r.ceiling if pd.notna(r.ceiling) else 1.0)
        target = floor + FORECAST_PROGRESS * (ceiling - floor)
        if not r.logistic_L < target:
            continue
        rec = fr[fr["table_id"] == r.table_id]
        t = ((pd.to_datetime(rec["as_of"]) - pd.to_datetime(rec["as_of"]).iloc[0]).dt.total_seconds()
             .to_numpy() / 86_400 / 365.25)
        y = rec["frontier"].to_numpy(dtype="float64")
        p, df2 = plateau_test(t, y, fit_logistic(t, y, floor=floor, ceiling=ceiling), target, floor=floor)
        rows.append([r.table_id, len(rec), f"{r.logistic_L:.3f}", f"{target:.2f}",
                     "—" if p is None else f"{p:.2g}", df2, r.forecast_status])
    return table(["table", "records", "fitted L", "threshold y", "F-test p (L = y)", "residual df", "forecast"],
                 rows)


def block_placeholders(db: Path) -> str:
    ph = q(db, "SELECT cutoff_source, knowledge_cutoff, count(*) AS n FROM resolved_cutoffs "
               "WHERE cutoff_trust = 'placeholder' GROUP BY ALL ORDER BY cutoff_source, knowledge_cutoff")
    trust = q(db, "SELECT cutoff_trust, count(*) AS n FROM resolved_cutoffs GROUP BY ALL ORDER BY cutoff_trust")
    return (table(["source of the date", "placeholder cutoff", "models"],
                  [[r.cutoff_source, f"{pd.Timestamp(r.knowledge_cutoff):%Y-%m-%d}", r.n] for r in ph.itertuples()])
            + "\n\nResolved cutoffs by trust: " + ", ".join(f"{r.cutoff_trust} {r.n}" for r in trust.itertuples()))


def block_suspects(db: Path) -> str:
    sus = q(db, "SELECT model, benchmark, signal, effect, ci_low, ci_high, p_value, q_value, status, evidence "
                "FROM suspects ORDER BY signal, q_value, model")
    per = sus.groupby("signal").agg(tests=("model", "size"),
                                    flagged=("status", lambda s: int((s != "not_flagged").sum())))
    rows = []
    for r in sus[sus["status"] != "not_flagged"].itertuples():
        ev = json.loads(r.evidence) if isinstance(r.evidence, str) else (r.evidence or {})
        refs = ev.get("reference_models") or []
        effect = f"{100 * r.effect:+.1f} pp [{100 * r.ci_low:+.1f}, {100 * r.ci_high:+.1f}]"
        rows.append([r.model, r.benchmark, r.signal, effect,
                     f"{r.p_value:.2g}", f"{r.q_value:.2g}", len(refs), r.status])
    head = "Tests per signal family: " + ", ".join(f"{s} {int(x.tests)} ({int(x.flagged)} flagged)"
                                                  for s, x in per.iterrows())
    return head + "\n\n" + table(["model", "benchmark", "signal", "effect [95 % CI]", "p", "q (BH in family)",
                                  "references", "status"], rows)


def block_a3(db: Path) -> str:
    """The A3 setting on the history's LiveCodeBench items: windows, references, who is (not) flagged."""
    sus = q(db, "SELECT model, status, q_value, evidence FROM suspects WHERE signal = 'A3' ORDER BY model")
    if not len(sus):
        return "no A3 test in this history"
    ev = [json.loads(e) if isinstance(e, str) else e for e in sus["evidence"]]
    refs = sorted({m for e in ev for m in (e.get("reference_models") or [])})
    flagged = sus.loc[sus["status"] != "not_flagged", "model"].tolist()
    clean = [f"{m} (q = {qv:.2g})" for m, s, qv in zip(sus["model"], sus["status"], sus["q_value"])
             if s == "not_flagged"]
    ids = sorted({int(i) for e in ev for i in (e.get("snapshot_ids") or [])})
    id_list = ", ".join(map(str, ids)) or "NULL"
    obs = q(db, f"SELECT max(observed_at) AS t FROM snapshots WHERE id IN ({id_list})")["t"].iloc[0]
    shown, shown_model = next(((e, m) for e, m in zip(ev, sus["model"]) if m in flagged), (ev[0], sus["model"].iloc[0]))
    return (f"LiveCodeBench items of the snapshot of {pd.Timestamp(obs):%Y-%m-%d}: {len(sus)} model(s) tested; "
            f"for {shown_model} (cutoff {shown['c_hi']}), {shown['n_pre']} items before the pre window's end and "
            f"{shown['n_post']} after the guard band; {len(refs)} trusted clean reference models ({', '.join(refs)}). "
            f"Flagged: {', '.join(flagged) or 'none'}. Not flagged: {', '.join(clean) or 'none'}.")


def block_calibrate(cal: dict[str, pd.DataFrame]) -> str:
    rows = []
    for label, name in (("former", "former inference (anchored link, items independent)"), ("current", "current")):
        for r in cal[label].itertuples(index=False):
            s = pd.Series(r._asdict())
            ok = "n/a" if s["ok"] is None or pd.isna(s["ok"]) else ("yes" if s["ok"] else "**NO**")
            rows.append([s["signal"], name, int(s["tests"]), pct_ci(s, "p01"), pct_ci(s, "p05"), pct_ci(s, "fw_bh"),
                         pct_ci(s, "fw_rule"), ok])
    return (f"{CALIBRATION_TRIALS} trials, seed {CALIBRATION_SEED}, A1 bootstrap {CALIBRATION_BOOTSTRAP}:\n\n"
            + table(["signal", "test", "placebo tests", "P(p < 0.01)", "P(p < 0.05)", "trials with a BH flag",
                     "trials with a flag (full rule)", "ok"], rows))


def a3_power(db: Path, now: datetime) -> dict[str, tuple[pd.Series, pd.DataFrame]]:
    """A3's placebo summary and power (calibrate --power's functions) for the current test and the
    test of issue 10 (the references' placebo z scale, t with R df)."""
    import numpy as np

    from analysis.contamination import Thresholds, a3_placebo, summarize_placebo
    from jobs.contamination import run_power, slice_inputs
    from storage.db import connect
    out = {}
    for label, th in (("former", Thresholds(a3_null="reference_placebo")), ("current", Thresholds())):
        with connect(db, read_only=True) as con:
            data = slice_inputs(con)
            power = run_power(con, now=now, trials=A3_POWER_TRIALS, seed=CALIBRATION_SEED, th=th)
        placebo = a3_placebo(data["items"], data["cutoffs"], rng=np.random.default_rng(CALIBRATION_SEED),
                             now=pd.Timestamp(now).tz_convert("UTC").tz_localize(None), trials=A3_PLACEBO_TRIALS,
                             th=th)
        out[label] = (summarize_placebo(placebo, A3_PLACEBO_TRIALS, th, signals=["A3"]).iloc[0], power)
    return out


def block_a3_power(res: dict[str, tuple[pd.Series, pd.DataFrame]]) -> str:
    from analysis.constants import A3_PLACEBO_P01_MAX, A3_PLACEBO_P05, A3_POWER_FLAG_AT_20, A3_POWER_P05_AT_10
    rows = []
    for label, name in (("former", "issue 10: z / max(1, σ̂), t_R"), ("current", "current: √(SE² + τ̂²), normal")):
        placebo, power = res[label]
        for bench, pw in (power.groupby("benchmark", sort=True) if len(power) else []):
            p10 = pw[pw["planted"].round(3) == 0.10].iloc[0]
            p20 = pw[pw["planted"].round(3) == 0.20].iloc[0]
            rows.append([name, bench, int(placebo["tests"]), pct_ci(placebo, "p01"), pct_ci(placebo, "p05"),
                         f"{p10['n_pre']:.0f} / {p10['n_post']:.0f}", f"{100 * p10['se_total']:.1f} pp",
                         pct_ci(p10, "p05"), pct_ci(p10, "flag"), pct_ci(p20, "flag"),
                         f"{100 * p10['mde_p05']:.1f} / {100 * p10['mde_flag']:.1f} pp"])
    cur, power = res["current"]
    verdicts = [f"placebo P(p < 0.05) {pct(cur['p05'])} (target {100 * A3_PLACEBO_P05[0]:.0f}–"
                f"{100 * A3_PLACEBO_P05[1]:.0f} %): {'met' if A3_PLACEBO_P05[0] <= cur['p05'] <= A3_PLACEBO_P05[1] else 'not met'}",
                f"P(p < 0.01) {pct(cur['p01'])} (target ≤ {100 * A3_PLACEBO_P01_MAX:.0f} %): "
                f"{'met' if cur['p01'] <= A3_PLACEBO_P01_MAX else 'not met'}"]
    for bench, pw in (power.groupby("benchmark", sort=True) if len(power) else []):
        p10 = pw[pw["planted"].round(3) == 0.10].iloc[0]
        p20 = pw[pw["planted"].round(3) == 0.20].iloc[0]
        verdicts.append(f"{bench}: P(p < 0.05) at +10 pp {pct(p10['p05'])} (target ≥ {100 * A3_POWER_P05_AT_10:.0f} %): "
                        f"{'met' if p10['p05'] >= A3_POWER_P05_AT_10 else 'not met'}; P(flagged) at +20 pp "
                        f"{pct(p20['flag'])} (target ≥ {100 * A3_POWER_FLAG_AT_20:.0f} %): "
                        f"{'met' if p20['flag'] >= A3_POWER_FLAG_AT_20 else 'not met'}")
    return (f"{A3_PLACEBO_TRIALS} placebo trials, {A3_POWER_TRIALS} power trials per gain, seed {CALIBRATION_SEED}:\n\n"
            + table(["test", "benchmark", "placebo tests", "P(p < 0.01)", "P(p < 0.05)", "items pre / post",
                     "SE of E", "P(p < 0.05) at +10 pp", "P(flagged) at +10 pp", "P(flagged) at +20 pp",
                     "MDE 80 % (p < .05 / flag)"], rows)
            + "\n\nCurrent test against the targets: " + "; ".join(verdicts) + ".")


def generate(snapshots: Path, db: Path | None = None) -> dict[str, str]:
    """Every block's text, computed from a fresh backfill of `snapshots` (into `db` or a temporary file)."""
    from jobs.analyze import analyze
    from storage.store import open_store
    with tempfile.TemporaryDirectory(prefix="benchwatch-figures-") as tmp:
        path = Path(db) if db else Path(tmp) / "history.duckdb"
        if path.exists():
            path.unlink()
        backfill(snapshots, path)
        now = history_now(path)
        analyze(open_store(path), now=now)
        cal = calibration(path, now)
        power = a3_power(path, now)
        paper_data = snapshots.parent / "data" if (snapshots.parent / "data").is_dir() else DEFAULT_PAPER_DATA
        return {"paper-agreement": block_paper_agreement(paper_agreement(path, paper_data)),
                "a3-power": block_a3_power(power), "history": block_history(path, now), "saturation": block_saturation(path),
                "bin-hold": block_bin_hold(path), "scales": block_scales(path), "trends": block_trends(path),
                "plateau": block_plateau(path), "placeholders": block_placeholders(path),
                "suspects": block_suspects(path), "a3": block_a3(path), "calibrate": block_calibrate(cal),
                "trend-coverage": block_trend_coverage()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--snapshots", type=Path, default=DEFAULT_SNAPSHOTS,
                    help="folder of dated leaderboard copies (default ../shared/snapshots beside the repository)")
    ap.add_argument("--db", type=Path, default=None, help="keep the backfilled database here (overwritten)")
    ap.add_argument("--doc", type=Path, default=DOC, help="the document to rewrite (default docs/statistics.md)")
    ap.add_argument("--check", action="store_true", help="do not write; exit 1 when the document is stale")
    args = ap.parse_args(argv)
    if not args.snapshots.is_dir():
        print(f"figures: snapshots folder {args.snapshots} not found", file=sys.stderr)
        return 2
    return rewrite(args.doc, generate(args.snapshots, args.db), check=args.check, name="figures",
                   command="python docs/figures.py")



if __name__ == "__main__":
    sys.exit(main())

"""Performance measurements, reported as ratios within one run (these machines are noisy).

    python bench/run.py            # all measurements
    python bench/run.py --quick    # smaller sizes

Not part of the test suite. Each measurement compares the implementation with a naive
alternative on the same data in the same process, so the ratio is meaningful even when the
absolute times are not.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.saturation import saturation_index, saturation_trajectory
from scrapers.base import ParsedSnapshot, validate
from storage import db
from storage.ingest import Response, store_snapshot
from storage.registry_sync import connect_synced


def timed(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def synthetic_history(n_bench: int, n_rows: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frames = []
    for b in range(n_bench):
        days = np.sort(rng.integers(0, 1500, n_rows))
        score = np.clip(0.2 + 0.7 * (1 - np.exp(-days / 600)) + rng.normal(0, 0.05, n_rows), 0.001, 0.999)
        frames.append(pd.DataFrame({"benchmark": f"b{b}", "model": [f"m{b}_{i}" for i in range(n_rows)],
                                    "score": score, "date": pd.Timestamp("2022-01-01") + pd.to_timedelta(days, "D")}))
    return pd.concat(frames, ignore_index=True)


def brute_force_trajectory(df: pd.DataFrame, n: int, k: int = 5) -> list[float]:
    """Re-sort every model dated <= t at every date t: the naive O(D · N log N) reconstruction."""
    out = []
    for _, g in df.groupby("benchmark"):
        for t in np.sort(g["date"].unique()):
            top = np.sort(g.loc[g["date"] <= t, "score"].to_numpy())[::-1][:k]
            if len(top) == k:
                out.append(saturation_index(top, n, k=k).s_index)
    return out


def bench_trajectory(quick: bool) -> None:
    n_bench, n_rows = (3, 400) if quick else (5, 1500)
    df = synthetic_history(n_bench, n_rows)
    fast = timed(lambda: saturation_trajectory(df, 500))
    slow = timed(lambda: brute_force_trajectory(df, 500), repeat=1)
    ours = saturation_trajectory(df, 500)["s_index"].to_numpy()
    assert np.allclose(ours, brute_force_trajectory(df, 500)), "trajectory differs from brute force"
    print(f"trajectory  {n_bench} benchmarks x {n_rows} models: incremental {fast * 1e3:8.1f} ms, "
          f"brute force {slow * 1e3:8.1f} ms  -> {slow / fast:6.1f}x faster (same values)")


def bench_ingest(quick: bool) -> None:
    n_items = 20_000 if quick else 100_000
    rng = np.random.default_rng(1)
    items = pd.DataFrame({"benchmark": "livecodebench", "model": rng.choice([f"m{i}" for i in range(50)], n_items),
                          "item_id": [f"q{i}" for i in range(n_items)], "item_date": pd.Timestamp("2024-01-01"),
                          "difficulty": "easy", "platform": "leetcode", "score": rng.random(n_items)})
    scores = pd.DataFrame({"benchmark": "livecodebench", "model": [f"m{i}" for i in range(50)],
                           "score": rng.random(50), "metric": "proportion"})
    now = datetime.now(timezone.utc)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.duckdb"

        def bulk():
            parsed = validate("livecodebench", ParsedSnapshot("livecodebench", scores=scores.copy(), items=items.copy()),
                              min_rows=1, produces="scores")
            with connect_synced(path) as con:
                store_snapshot(con, parsed, [Response("x.json", str(time.perf_counter_ns()).encode())],
                               observed_at=now, origin="ingest", parser_version=1)

        t_bulk = timed(bulk, repeat=2)
        sample = items.head(2000)
        with db.connect(path) as con:
            t0 = time.perf_counter()
            con.execute("BEGIN")
            con.executemany("INSERT INTO item_results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                            [(999, "bench", r.benchmark, r.model, r.model, r.item_id, r.item_date.date(),
                              r.difficulty, r.platform, r.score) for r in sample.itertuples()])
            con.execute("COMMIT")
            t_rows = (time.perf_counter() - t0) * n_items / len(sample)
    print(f"ingest      {n_items} item rows: bulk from DataFrame {t_bulk:6.2f} s, row by row (extrapolated "
          f"from {len(sample)}) {t_rows:6.1f} s  -> {t_rows / t_bulk:6.1f}x faster")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    bench_trajectory(args.quick)
    bench_ingest(args.quick)


if __name__ == "__main__":
    main()

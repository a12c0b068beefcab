"""The real-history replay and A1's isotonic link fits of this checkout alternated with an earlier commit's (issue 52).

    python bench/replay_pairs.py main                  # 3 pairs: that commit, then this checkout
    python bench/replay_pairs.py main --pairs 5 --days 40
    python bench/replay_pairs.py main --only fits      # the link fits alone (no ../shared needed)

CI's largest single item is the day-by-day replay of ../shared/snapshots (tests/conftest.py
`real_history_replay`: docs/alert_timeline.py's `replay`), and most of it is the product's own
analyze. Two lines, each a ratio of this checkout's time to the commit's, the two sides alternated
in one run (these machines are shared and drift, so no absolute time is a result):

  fits    `isotonic_fit_batch` on bootstrap-shaped rows (resampled with replacement, so tied x),
          the same arrays on both sides; the fitted numbers of both sides must be equal
  replay  `replay` of the first --days file dates into a fresh database, ConsoleNotifier

The commit is checked out in a temporary worktree whose `../shared` points at this checkout's, and
each side runs in a child process of its own (its own modules). Goal: ratio <= 0.9 (10 % faster).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.earlier import earlier_checkout  # noqa: E402
ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "BENCHWATCH_DB")}
GOAL = 0.9
# (rows, points): A1's bootstrap rows at a few reference-pool sizes of the min-max path (<= 150 points)
FIT_SHAPES = ((2000, 40), (2000, 90), (400, 140))

CHILD = r"""
import json, os, resource, sys, tempfile, time
from pathlib import Path
repo = Path.cwd()
sys.path[:0] = [str(repo), str(repo / "docs")]
what, days, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
import numpy as np
if what == "fits":
    from analysis.contamination.numerics import isotonic_fit_batch
    shapes = json.loads(sys.argv[4])
    rng = np.random.default_rng(52)
    cases = []
    for b, n in shapes:
        x = np.round(rng.normal(size=n), 2)[rng.integers(0, n, size=(b, n))]
        cases.append((x, 1.3 * x + rng.normal(size=(b, n))))
    t0, c0 = time.perf_counter(), time.process_time()
    fits = [isotonic_fit_batch(x, y)[1] for x, y in cases]
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    np.save(out, np.concatenate([f.reshape(-1) for f in fits]))
else:
    import alert_timeline
    from alerts.slack import ConsoleNotifier
    with tempfile.TemporaryDirectory() as tmp:
        t0, c0 = time.perf_counter(), time.process_time()
        run = alert_timeline.replay(repo.parent / "shared" / "snapshots", Path(tmp) / "replay.duckdb",
                                    ConsoleNotifier(lambda text: None), limit_days=days)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    Path(out).write_text(json.dumps([(d.date, len(d.messages), d.errors) for d in run]))
print(json.dumps({"wall": wall, "cpu": cpu}))
"""


def side(cwd: Path, what: str, days: int, out: Path) -> dict:
    """{wall, cpu} seconds of one measure in a child process run in `cwd` (that side's modules)."""
    done = subprocess.run([sys.executable, "-c", CHILD, what, str(days), str(out), json.dumps(FIT_SHAPES)],
                          cwd=cwd, capture_output=True, text=True, env=ENV)
    if done.returncode:
        raise RuntimeError(f"{what} in {cwd} exited {done.returncode}: {done.stderr[-800:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("commit", help="the earlier commit, e.g. main before an optimisation")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--days", type=int, default=30, help="file dates of the replay (default 30)")
    ap.add_argument("--only", default="fits,replay", help="comma-separated: fits, replay")
    args = ap.parse_args()
    shared = REPO.parent / "shared"
    only = [m for m in ("fits", "replay") if m in args.only.split(",")]
    if "replay" in only and not (shared / "snapshots").is_dir():
        print(f"replay_pairs: no {shared / 'snapshots'}; the replay line is left out", file=sys.stderr)
        only.remove("replay")
    with earlier_checkout(args.commit, "replay-pairs-") as (other, tmp):
        for what in only:
            ratios = []
            for i in range(args.pairs):
                got = {}
                for name, cwd in (("commit", other), ("ours", REPO)):
                    out = Path(tmp) / f"{what}-{name}{'.npy' if what == 'fits' else '.json'}"
                    got[name] = side(cwd, what, args.days, out)
                    print(f"{what:<6} pair {i + 1}  {name:>6}  {got[name]['wall']:7.2f} s  "
                          f"{got[name]['cpu']:7.2f} s CPU", flush=True)
                a, b = (Path(tmp) / f"{what}-{n}{'.npy' if what == 'fits' else '.json'}" for n in ("commit", "ours"))
                same = a.read_bytes() == b.read_bytes()
                ratios.append(got["ours"]["cpu"] / got["commit"]["cpu"])
                print(f"{what:<6} pair {i + 1}  ours / commit (CPU) {ratios[-1]:.3f}  "
                      f"{'same output' if same else 'OUTPUT DIFFERS'}", flush=True)
                if not same:
                    return 1
            med = statistics.median(ratios)
            print(f"{what:<6} median ours / {args.commit} (CPU) {med:.3f} over {len(ratios)} pairs "
                  f"[{min(ratios):.3f}-{max(ratios):.3f}]  goal <= {GOAL}: {'met' if med <= GOAL else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The fast lane of this checkout alternated with the lane of an earlier commit (issue 23).

    python bench/lane_pairs.py 2dac3a0            # 3 pairs: that commit, then this checkout
    python bench/lane_pairs.py 2dac3a0 --pairs 5

The fast lane's goal (a minute on a quiet 2-core machine) is an absolute time, and these machines
drift by 1.5x within an hour. A lane that misses its minute is either heavier or on a slower
machine: running a commit whose lane met the minute beside this one, alternated, tells which. The
commit is checked out in a temporary worktree whose `../shared` points at this checkout's, so the
same tests run or skip on both sides. Each line: the side, wall time, CPU (user + system) and
pytest's summary.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.earlier import earlier_checkout  # noqa: E402
PYTEST = [sys.executable, "-m", "pytest"]
LANE = [*PYTEST, "-n", "2", "-m", "not slow and not e2e", "-q", "-p", "no:cacheprovider"]
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}   # as a developer runs it


def lane(cwd: Path) -> tuple[float, float, str]:
    """(wall s, user + system CPU s of the run and its children, pytest's last line) of one fast lane."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(LANE, cwd=cwd, capture_output=True, text=True, env=ENV)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = [line for line in done.stdout.splitlines() if re.search(r"\d+ (passed|failed)", line)]
    return wall, cpu, (lines[-1].strip("= ") if lines else f"exit {done.returncode}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("commit", help="the earlier commit, e.g. one whose fast lane met its minute")
    ap.add_argument("--pairs", type=int, default=3)
    args = ap.parse_args()
    with earlier_checkout(args.commit, "lane-pairs-") as (other, _):
        for cwd in (other, REPO):      # bytecode and rewritten test modules written before any timing
            subprocess.run([sys.executable, "-m", "compileall", "-q", "."], cwd=cwd, capture_output=True, env=ENV)
            subprocess.run([*PYTEST, "--collect-only", "-q", "-m", "not slow and not e2e"], cwd=cwd,
                           capture_output=True, env=ENV)
        walls: dict[str, list[float]] = {args.commit: [], "this checkout": []}
        for i in range(args.pairs):
            for side, cwd in ((args.commit, other), ("this checkout", REPO)):
                wall, cpu, summary = lane(cwd)
                walls[side].append(wall)
                print(f"pair {i + 1}  {side:>14}  {wall:6.1f} s  {cpu:6.1f} s CPU  {summary}", flush=True)
        for side, times in walls.items():
            print(f"median {side:>14}  {statistics.median(times):6.1f} s  [{min(times):.1f}-{max(times):.1f}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Type check with a ratchet: run mypy over benchwatch's packages and fail when any module has
more errors than .ci/mypy-baseline.txt allows (a module not listed allows none).

The code predates the type checker, so the baseline records the error count per module as it
was when checking started; fixing errors lowers it (`--update` rewrites the file, commit it),
adding errors fails CI with the new messages shown. Settings are pyproject's [tool.mypy]; the
packages are the top-level ones of [tool.setuptools].packages, so a new package is checked
strictly (baseline 0) from its first commit.

    python .ci/mypy_check.py            # check (exit 1 on a regression)
    python .ci/mypy_check.py --update   # accept the current counts as the baseline
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / ".ci" / "mypy-baseline.txt"
ERROR = re.compile(r"^(?P<path>[^:\s]+\.py):\d+(?::\d+)?: error: ")


def packages() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    names = {p.split(".")[0] for p in config["tool"]["setuptools"]["packages"]}
    return sorted(n for n in names if (ROOT / n / "__init__.py").exists())


def run_mypy() -> tuple[Counter[str], list[str]]:
    out = subprocess.run([sys.executable, "-m", "mypy", *packages()], cwd=ROOT, capture_output=True, text=True)
    lines = [line for line in out.stdout.splitlines() if ERROR.match(line)]
    if out.returncode not in (0, 1) or (out.returncode == 1 and not lines):   # a crash or a configuration error
        sys.exit(f"mypy_check: mypy did not run (exit {out.returncode}): {out.stderr.strip() or out.stdout.strip()}")
    return Counter(ERROR.match(line)["path"] for line in lines), lines


def read_baseline() -> dict[str, int]:
    if not BASELINE.exists():
        return {}
    counts = {}
    for line in BASELINE.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            n, path = line.split(maxsplit=1)
            counts[path] = int(n)
    return counts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--update", action="store_true", help="write the current counts as the baseline")
    args = ap.parse_args()
    now, lines = run_mypy()
    if args.update:
        BASELINE.write_text("# mypy errors per module allowed by .ci/mypy_check.py (lower them, never raise them)\n"
                            + "".join(f"{n} {path}\n" for path, n in sorted(now.items())))
        print(f"mypy_check: baseline written: {sum(now.values())} error(s) in {len(now)} module(s)")
        return 0
    allowed = read_baseline()
    worse = {path: n for path, n in now.items() if n > allowed.get(path, 0)}
    better = {path: n for path, n in allowed.items() if now.get(path, 0) < n}
    print(f"mypy_check: {sum(now.values())} error(s) in {len(now)} module(s); baseline allows "
          f"{sum(allowed.values())} in {len(allowed)}")
    for path, n in sorted(worse.items()):
        print(f"mypy_check: {path}: {n} error(s), baseline {allowed.get(path, 0)}:", file=sys.stderr)
        for line in lines:
            if line.startswith(path + ":"):
                print(f"  {line}", file=sys.stderr)
    if better:
        print("mypy_check: fewer errors than the baseline in " + ", ".join(sorted(better))
              + "; run `python .ci/mypy_check.py --update` and commit the lower baseline")
    return 1 if worse else 0


if __name__ == "__main__":
    sys.exit(main())

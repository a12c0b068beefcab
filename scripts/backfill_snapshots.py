"""Ingest a folder of dated leaderboard copies (the layout of ../shared/snapshots) into a database.

    python scripts/backfill_snapshots.py ../shared/snapshots --db history.duckdb

Files are named `<source>/<source>[_<variant>]_<YYYY-MM-DD>.<ext>`; the date becomes the
snapshot's observed_at. LiveBench categories files are passed as --aux to the table of the
same release. Files of folders that are not a source (e.g. model_metadata) are routed by name.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import scrapers
from jobs.cycle import ingest_file
from scrapers.base import ScrapeError

DATE = re.compile(r"_(\d{4}-\d{2}-\d{2})\.[a-z]+$")
ROUTES = {"openrouter_models": "openrouter", "model_metadata_cutoff_dates": "knowledge_cutoffs"}
SKIP = ("modelsdev",)   # a conversion for curating the registry, not a scrape format


def plan(root: Path) -> list[tuple[str, Path, list[Path], str]]:
    jobs = []
    for path in sorted(root.rglob("*")):
        if not path.is_file() or not DATE.search(path.name) or any(s in path.name for s in SKIP):
            continue
        source = path.parent.name
        for prefix, routed in ROUTES.items():
            if path.name.startswith(prefix):
                source = routed
        if source not in scrapers.SOURCES or "categories_" in path.name:
            continue
        aux = []
        m = re.search(r"table_(\d{4}_\d{2}_\d{2})", path.name)
        if source == "livebench" and m:
            aux = sorted(path.parent.glob(f"livebench_categories_{m[1]}_*"))[-1:]
        jobs.append((source, path, aux, DATE.search(path.name)[1]))
    return sorted(jobs, key=lambda j: j[3])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", type=Path)
    ap.add_argument("--db", default=None)
    args = ap.parse_args()
    failed = 0
    for source, path, aux, date in plan(args.root):
        try:
            res = ingest_file(args.db, source, path, aux_paths=aux, observed_at=date)
            print(f"{date} {path.name}: {res.summary()}")
        except ScrapeError as exc:
            failed += 1
            print(f"{date} {path.name}: FAILED {exc}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

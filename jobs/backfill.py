"""Backfill: ingest a folder of dated leaderboard copies, oldest first, each as the snapshot
observed on the date in its file name.

The folder layout (as kept by whoever collected the copies) is
`<source>/<source>[_<variant>]_<YYYY-MM-DD>.<ext>`: the folder names the source, the date
before the extension becomes the snapshot's `observed_at`. Two kinds of file are routed by
name instead of by folder (a folder of model metadata holds the files of two sources), one is
skipped (a registry-curation conversion, not a scrape format), and a LiveBench table is
ingested with the categories JSON of the same release as its auxiliary response (the newest
copy of that categories file, since a release's categories do not change). Files of folders
that are not a registered source are not planned. The function is `benchwatch backfill`.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import scrapers
from jobs.cycle import ingest_file
from scrapers.base import ScrapeError
from storage.ingest import IngestRefused, IngestResult

log = logging.getLogger("benchwatch.jobs.backfill")

DATE = re.compile(r"_(\d{4}-\d{2}-\d{2})\.[A-Za-z0-9]+$")
# file-name prefix -> source, for files kept in a folder that is not their source's name
ROUTES = {"openrouter_models": "openrouter", "model_metadata_cutoff_dates": "knowledge_cutoffs"}
SKIP = ("modelsdev",)   # models.dev conversions for curating the registry, not a scrape format
LIVEBENCH_RELEASE = re.compile(r"table_(\d{4}_\d{2}_\d{2})")


@dataclass(frozen=True)
class BackfillFile:
    """One planned ingest: the source, the file, its auxiliary files and its date (YYYY-MM-DD)."""

    source: str
    path: Path
    aux: tuple[Path, ...]
    date: str


@dataclass
class BackfillReport:
    """What a backfill did, per file: the ingest result or the one-line reason it failed."""

    done: list[tuple[BackfillFile, IngestResult]] = field(default_factory=list)
    failed: list[tuple[BackfillFile, str]] = field(default_factory=list)

    def summary(self) -> str:
        new = sum(1 for _, r in self.done if r.status == "new")
        return (f"backfill: {len(self.done) + len(self.failed)} file(s): {new} new snapshot(s), "
                f"{len(self.done) - new} unchanged, {len(self.failed)} failed")


def plan_backfill(root: str | os.PathLike) -> list[BackfillFile]:
    """The ingests of a backfill of `root`, oldest date first (ties in path order)."""
    planned = []
    for path in sorted(Path(root).rglob("*")):
        match = DATE.search(path.name)
        if not path.is_file() or not match or any(s in path.name for s in SKIP):
            continue
        source = next((routed for prefix, routed in ROUTES.items() if path.name.startswith(prefix)),
                      path.parent.name)
        if source not in scrapers.SOURCES or "categories_" in path.name:
            continue
        aux: list[Path] = []
        release = LIVEBENCH_RELEASE.search(path.name)
        if source == "livebench" and release:
            aux = sorted(path.parent.glob(f"livebench_categories_{release[1]}_*"))[-1:]
        else:   # the source says which sibling files go with this one (ARC's models.json, …)
            names = scrapers.get(source).backfill_aux(path.name, sorted(p.name for p in path.parent.iterdir()))
            if names is None:
                continue
            aux = [path.parent / n for n in names]
        planned.append(BackfillFile(source, path, tuple(aux), match[1]))
    return sorted(planned, key=lambda f: f.date)


def backfill(db_path: str | os.PathLike | None, root: str | os.PathLike, *,
             on_file: Callable[[BackfillFile, IngestResult | None, str | None], None] | None = None) -> BackfillReport:
    """Ingest every planned file of `root` into `db_path`. A file that cannot be parsed or is
    refused is reported and skipped (the database keeps the others); a database that cannot be
    used (StorageError) stops the backfill. `on_file(file, result, error)` is called after each."""
    report = BackfillReport()
    for item in plan_backfill(root):
        try:
            result = ingest_file(db_path, item.source, item.path, aux_paths=item.aux, observed_at=item.date)
        except (ScrapeError, IngestRefused) as exc:
            reason = " ".join(str(exc).split())
            log.warning("[backfill] %s: %s", item.path.name, reason)
            report.failed.append((item, reason))
            if on_file:
                on_file(item, None, reason)
            continue
        report.done.append((item, result))
        if on_file:
            on_file(item, result, None)
    return report

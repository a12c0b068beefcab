"""Backfill: ingest a folder of dated leaderboard copies, oldest first, each as the snapshot
observed on the date in its file name.

The folder layout (as kept by whoever collected the copies) is
`<source>/<source>[_<variant>]_<YYYY-MM-DD>.<ext>`: the folder names the source, the date
before the extension becomes the snapshot's `observed_at`. Two kinds of file are routed by
name instead of by folder (a folder of model metadata holds the files of two sources), one is
skipped (a registry-curation conversion, not a scrape format), and a LiveBench table is
ingested with the categories JSON of the same release as its auxiliary response (the newest
copy of that categories file, since a release's categories do not change): how a source's files
group is the source's own `Scraper.backfill_groups`. What is not ingested — a folder that is no
source, a file without a date, a file its source does not claim, a folder it cannot read, a
link back up the tree (linked folders are followed) — is reported, one line each, never
silently dropped. The function is `benchwatch backfill`.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import scrapers
from common.redact import inert_text
from jobs.ingest import ingest_file
from scrapers.base import ScrapeError
from storage.ingest import IngestRefused, IngestResult
from storage.store import Store

log = logging.getLogger("benchwatch.jobs.backfill")

DATE = re.compile(r"_(\d{4}-\d{2}-\d{2})\.[A-Za-z0-9]+$")
# file-name prefix -> source, for files kept in a folder that is not their source's name
ROUTES = {"openrouter_models": "openrouter", "model_metadata_cutoff_dates": "knowledge_cutoffs",
          "lmarena_history": "lmarena"}
SKIP = {"modelsdev": "a models.dev conversion for curating the registry, not a scrape format"}


@dataclass(frozen=True)
class BackfillFile:
    """One planned ingest: the source, the file, its auxiliary files and its date (YYYY-MM-DD)."""

    source: str
    path: Path
    aux: tuple[Path, ...]
    date: str


@dataclass(frozen=True)
class Skipped:
    """A folder or file of the archive that no source ingests, with the one-line reason."""

    path: Path
    reason: str

    def line(self, root: Path | None = None) -> str:
        shown = self.path.relative_to(root) if root is not None and self.path.is_relative_to(root) else self.path
        return f"skipped {inert_text(str(shown))}{'/' if self.path.is_dir() else ''}: {self.reason}"


@dataclass
class BackfillReport:
    """What a backfill did, per file: the ingest result or the one-line reason it failed; and what
    it skipped (never silently)."""

    done: list[tuple[BackfillFile, IngestResult]] = field(default_factory=list)
    failed: list[tuple[BackfillFile, str]] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)

    def summary(self) -> str:
        new = sum(1 for _, r in self.done if r.status == "new")
        skipped = f", {len(self.skipped)} skipped" if self.skipped else ""
        return (f"backfill: {len(self.done) + len(self.failed)} file(s): {new} new snapshot(s), "
                f"{len(self.done) - new} unchanged, {len(self.failed)} failed{skipped}")


def archive_files(base: Path) -> tuple[list[Path], list[Skipped]]:
    """Every file under `base` in path order, named by the path the user laid out, and the folders
    not read: a link back to a folder above it (read there already) and a folder that cannot be
    read. A folder that is a symbolic link is followed (an archive assembled from links to other
    archives; `Path.rglob` follows none)."""
    files: list[Path] = []
    unread: list[Skipped] = []

    def walk(folder: Path, above: frozenset[str]) -> None:
        real = os.path.realpath(folder)
        if real in above:
            unread.append(Skipped(folder, "a link to a folder above it, read there (not followed again)"))
            return
        try:
            with os.scandir(folder) as entries:
                found = sorted(entries, key=lambda e: e.name)
        except OSError as exc:
            unread.append(Skipped(folder, f"cannot be read: {exc.strerror}"))
            return
        for entry in found:
            if entry.is_dir():
                walk(Path(entry.path), above | {real})
            elif entry.is_file():
                files.append(Path(entry.path))

    walk(base, frozenset())
    return sorted(files), unread


def plan_backfill(root: str | os.PathLike) -> list[BackfillFile]:
    """The ingests of a backfill of `root`, oldest date first (ties in path order)."""
    return plan_with_skips(root)[0]


def plan_with_skips(root: str | os.PathLike) -> tuple[list[BackfillFile], list[Skipped]]:
    """The ingests of a backfill of `root` (oldest date first) and what it skips, each named once:
    a folder that is no source (one line for the folder), a link back up the tree, a folder that
    cannot be read, a file without a date, a file the source's own `backfill_groups` does not
    claim (with its reason)."""
    base = Path(root)
    groups: dict[tuple[Path, str], list[Path]] = {}
    foreign: dict[Path, int] = {}
    files, skipped = archive_files(base)
    for path in files:
        routed = next((src for prefix, src in ROUTES.items() if path.name.startswith(prefix)), None)
        source = routed or path.parent.name
        if path.parent == base:
            skipped.append(Skipped(path, "not in a <source>/ folder"))
            continue
        reason = next((why for marker, why in SKIP.items() if marker in path.name), None)
        if reason is None and source not in scrapers.SOURCES:
            foreign[path.parent] = foreign.get(path.parent, 0) + 1
            continue
        if reason is None and not DATE.search(path.name):
            reason = "no _YYYY-MM-DD date before the extension"
        if reason is not None:
            skipped.append(Skipped(path, reason))
            continue
        groups.setdefault((path.parent, source), []).append(path)
    skipped += [Skipped(folder, f"not a source folder ({n} file(s); known sources: see `benchwatch ingest --help`)")
                for folder, n in sorted(foreign.items())]
    planned = []
    for (folder, source), paths in groups.items():
        ingests, rejected = scrapers.get(source).backfill_groups([p.name for p in paths])
        for primary, aux in ingests:
            match = DATE.search(primary)
            if match is None:
                skipped.append(Skipped(folder / primary, "no _YYYY-MM-DD date before the extension"))
                continue
            planned.append(BackfillFile(source, folder / primary, tuple(folder / a for a in aux), match[1]))
        skipped += [Skipped(folder / name, why) for name, why in sorted(rejected.items())]
    planned.sort(key=lambda f: (f.date, str(f.path)))
    return planned, sorted(skipped, key=lambda s: str(s.path))


def backfill(store: Store, root: str | os.PathLike, *,
             on_file: Callable[[BackfillFile, IngestResult | None, str | None], None] | None = None) -> BackfillReport:
    """Ingest every planned file of `root` into `store`. A file that cannot be parsed or is
    refused is reported and skipped (the database keeps the others); a database that cannot be
    used (StorageError) stops the backfill. `on_file(file, result, error)` is called after each."""
    planned, skipped = plan_with_skips(root)
    report = BackfillReport(skipped=skipped)
    for skip in skipped:
        log.info("[backfill] %s", skip.line(Path(root)))
    for item in planned:
        try:
            result = ingest_file(store, item.source, item.path, aux_paths=item.aux, observed_at=item.date)
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

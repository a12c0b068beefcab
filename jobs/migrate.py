"""Copy a benchwatch DuckDB file into a DuckLake catalog (`benchwatch migrate --to ducklake:…`)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Callable

from storage import db, lake, lake_copy
from storage.store import Store

log = logging.getLogger("benchwatch.jobs")


@dataclass
class MigrateReport:
    source: str
    target: str
    counts: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def mismatches(self) -> dict[str, tuple[int, int]]:
        return {t: c for t, c in self.counts.items() if c[0] != c[1]}

    @property
    def ok(self) -> bool:
        return bool(self.counts) and not self.mismatches


def migrate_to_lake(source: Store, target: Store, *, replace: bool = False,
                    wait: float = db.DEFAULT_WAIT_SECONDS,
                    on_wait: Callable[[str], None] | None = None) -> MigrateReport:
    """Bring the file to this code's schema, then copy every table (history, raw blobs, alert
    state, silences, registry) into the lake under its writer lock and compare row counts."""
    if source.file is None or not source.file.is_file():
        raise db.StorageError(f"migrate copies a DuckDB file: {source.location} is not one")
    if not target.is_lake:
        raise db.StorageError("migrate --to needs a DuckLake URL: ducklake:postgres:<libpq conninfo>")
    source.open_current(wait=wait, on_wait=on_wait).close()   # migrates an older file first
    report = MigrateReport(source.location, lake.parse(target.target).redacted())
    with target.connect(wait=wait, on_wait=on_wait) as con:
        try:
            report.counts = lake_copy.copy_file_into(con, source.location, replace=replace)
        except lake.LakeError as exc:
            raise db.StorageError(str(exc)) from exc
    log.info("[migrate] %s -> %s: %d table(s), %d row(s), %d mismatch(es)", source, report.target,
             len(report.counts), sum(c[1] for c in report.counts.values()), len(report.mismatches))
    return report

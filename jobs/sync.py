"""The registry-synced connection the jobs open, with every source's naming rules handed down.

Identity (`registry.identity`) applies each source's naming rules, declared on its scraper
(`Scraper.NAMING`); registry and storage never import scrapers, so the jobs, which know both,
collect them (`scrapers.naming_rules()`) and hand them to `storage.registry_sync`.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator

import scrapers
from storage import registry_sync
from storage.engine import duckdb
from storage.store import Store


@contextmanager
def connect_synced(store: Store, *, wait: float | None = None,
                   on_wait: Callable[[str], None] | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """`with connect_synced(store) as con:` a write connection (`store.connect`: migrated) whose
    registry tables equal the shipped registry files and whose rows are identified by the sources'
    naming rules (`sync_registry`): what ingest and analysis read."""
    with store.connect(wait=wait, on_wait=on_wait) as con:
        sync_registry(con)
        yield con


def sync_registry(con: duckdb.DuckDBPyConnection) -> bool:
    """`storage.registry_sync.sync_registry` with the sources' naming rules (True when it re-synced)."""
    return registry_sync.sync_registry(con, scrapers.naming_rules())

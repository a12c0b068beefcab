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
    """`storage.registry_sync.connect_synced` with the sources' naming rules: a write connection
    (migrated) whose registry tables and row identities follow the shipped registry and scrapers."""
    with registry_sync.connect_synced(store, naming=scrapers.naming_rules(), wait=wait, on_wait=on_wait) as con:
        yield con


def sync_registry(con: duckdb.DuckDBPyConnection) -> bool:
    """`storage.registry_sync.sync_registry` with the sources' naming rules (True when it re-synced)."""
    return registry_sync.sync_registry(con, scrapers.naming_rules())

"""The store for flows/, which reach storage only through the jobs (tests/unit/test_layers.py): a flow
makes one `Store` from its `db_path` parameter (`open_store`) and hands it to its tasks; the
parameter checks ask whether a value names a DuckLake store, and with which password, here
rather than by reading its prefix themselves (storage/store.py decides file or lake)."""

from storage.store import (LAKE_URL_WITH_PASSWORD, Store, names_lake, open_store, target_password,  # noqa: F401
                           without_password)

__all__ = ["LAKE_URL_WITH_PASSWORD", "Store", "names_lake", "open_store", "target_password", "without_password"]

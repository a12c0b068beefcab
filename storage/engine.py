"""DuckDB for benchwatch: the one module that imports it.

Every other module takes `duckdb` from here (tests/unit/test_layers.py checks it), so the engine
benchwatch runs on is chosen in one place and a test can watch its `connect`.

    from storage.engine import duckdb
"""

from __future__ import annotations

import duckdb

__all__ = ["duckdb"]

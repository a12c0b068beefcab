"""DuckDB for benchwatch: its engine module, `_duckdb`, rather than the `duckdb` package.

`import duckdb` runs the package's `__init__`, which besides loading the engine (~30 ms) looks
its own version up in the installed distributions' metadata (`importlib.metadata`, ~20 ms) and
builds its DB-API type objects (~15 ms): a fifth of the start of a small command such as
`benchwatch status`, for names benchwatch never uses. Every name it does use — `connect`,
`DuckDBPyConnection`, the exceptions, `StatementType`, `__version__` (the engine's, which the
extensions' folders are named by) — is the engine's own; the package re-exports them, so
`engine.duckdb.Error is duckdb.Error` and either may catch the other's errors. A DuckDB build
without a top-level `_duckdb` (the engine's module before the 1.4 package split) gets the package.

    from storage.engine import duckdb
"""

from __future__ import annotations

try:
    import _duckdb as duckdb
except ImportError:  # pragma: no cover - another packaging of DuckDB
    import duckdb  # type: ignore[no-redef]

__all__ = ["duckdb"]

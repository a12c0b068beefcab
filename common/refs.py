"""The `reference_benchmarks` field of registry/benchmarks.csv: one separator rule.

The CSV cell lists benchmark ids separated by `;` (registry/README.md). Every reader (the
registry loader, the registry sync into DuckDB, the contamination analysis) goes through
`parse_refs`, so one cell can never mean two different lists in two places. A `,` or `|`
inside a cell is part of an id, which the registry loader then refuses as an unknown
benchmark id: a wrong separator fails loudly instead of being split differently by
different readers.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

SEPARATOR = ";"


def parse_refs(value: Any) -> tuple[str, ...]:
    """A cell (`'mmlu;gpqa_diamond'`), a list/tuple/array of ids, or missing -> tuple of ids
    (stripped, empty entries dropped, order kept)."""
    if isinstance(value, str):
        return tuple(v.strip() for v in value.split(SEPARATOR) if v.strip())
    if value is None or value is pd.NA or (isinstance(value, float) and pd.isna(value)):
        return ()
    return tuple(str(v).strip() for v in value if v is not None and str(v).strip())

"""The format of registry/comparisons.csv: which leaderboard tables measure one benchmark's question set twice.

The view `source_disagreements` (storage/views/source_disagreements.sql) pairs every model
measured by two tables of one benchmark. By default two tables of different sources pair when
the question set's version is the same (both unversioned, or one release); this file declares
what data cannot say:

- ``copy``: `table`'s numbers are copied from `other` (Epoch's ``*_external`` members, whose
  origin is another board benchwatch also reads). The pair is a *transcription check*, kept
  out of the disagreement statistics: any gap beyond rounding is a copying or parsing error.
- ``harness``: `table` and `other` run the same question set; the reason names the harness
  difference (prompt, scaffold, shots, who ran it), shown in the view's `why`.

A table is ``source`` or ``source:version`` (the version as `scores.table_version` holds it);
`other`'s version ``*`` means "the release each row of `table` names" (a row's ``version=``
setting). A declared pair replaces the default pairing of the same two tables.

Here in `common` (the csv module, no pandas) because the view's text is rendered from it whenever a
command compares the shipped views' hashes (`query`, `status`), which import nothing heavy; the
registry loads the shipped file (`registry.comparisons.load_comparisons`).
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass

__all__ = ["COPY", "HARNESS", "KINDS", "FILE", "Comparison", "parse_comparisons"]

COPY, HARNESS = "copy", "harness"
KINDS = (COPY, HARNESS)
COLUMNS = ("kind", "benchmark", "table", "other", "reason")
FILE = "comparisons.csv"
ANY_RELEASE = "*"
_TABLE = re.compile(r"([a-z][a-z0-9_]*)(?::([A-Za-z0-9_.\-]+|\*))?")
_ID = re.compile(r"[a-z0-9_]+")


@dataclass(frozen=True)
class Comparison:
    """One declared pair of tables of a benchmark."""

    kind: str
    benchmark: str
    source: str
    version: str          # '' = unversioned
    other_source: str
    other_version: str    # '' = unversioned, '*' = the release each row names
    reason: str


def parse_comparisons(text: str, where: str = f"registry/{FILE}") -> tuple[Comparison, ...]:
    """The declarations of `text`; a malformed row raises a ValueError naming its line and column."""
    reader = csv.DictReader(io.StringIO(text))   # the csv module: rendering the view needs no pandas
    if tuple(reader.fieldnames or ()) != COLUMNS:
        raise ValueError(f"{where}: columns are {list(reader.fieldnames or ())}, expected {list(COLUMNS)}")
    out: list[Comparison] = []
    seen: set[tuple[str, str, str]] = set()
    for i, row in enumerate(reader):
        if None in row or any(v is None for v in row.values()):
            raise ValueError(f"{where} line {i + 2}: expected {len(COLUMNS)} cells")
        line = f"{where} line {i + 2}"
        kind, bench, reason = row["kind"].strip(), row["benchmark"].strip(), row["reason"].strip()
        if kind not in KINDS:
            raise ValueError(f"{line} (kind): {kind!r} is not one of {list(KINDS)}")
        if not _ID.fullmatch(bench):
            raise ValueError(f"{line} (benchmark): {bench!r} is not a benchmark id")
        if not reason:
            raise ValueError(f"{line} (reason): a declaration needs its reason")
        tables = []
        for col in ("table", "other"):
            m = _TABLE.fullmatch(row[col].strip())
            if m is None:
                raise ValueError(f"{line} ({col}): {row[col]!r} is not source or source:version")
            tables.append((m.group(1), m.group(2) or ""))
        (source, version), (other, other_version) = tables
        if version == ANY_RELEASE:
            raise ValueError(f"{line} (table): '*' is allowed for `other` only")
        if (source, version) == (other, other_version):
            raise ValueError(f"{line}: a table cannot be compared with itself")
        first, second = sorted([f"{source}:{version}", f"{other}:{other_version}"])
        key = (bench, first, second)
        if key in seen:
            raise ValueError(f"{line}: the pair {key[1]} / {key[2]} of {bench} is declared twice")
        seen.add(key)
        out.append(Comparison(kind, bench, source, version, other, other_version, reason))
    return tuple(out)

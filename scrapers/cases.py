"""Declared test cases of a scraper, kept beside its class (`CASES`, as yt-dlp keeps `_TESTS`).

A case names a file (`tests/fixtures/<file>`, a few real rows cut from the leaderboard, or a real
copy `../shared/snapshots/<file>` with `snap`), how to parse it, and what must come out: row
counts and spot values. `tests/unit/test_scraper_cases.py` collects every source's cases through the
registry (`scrapers.SOURCES`) and runs each; fixture values were checked by hand against the
files, snapshot counts recomputed with plain json/csv/yaml/pandas reads of the raw files.

Spot values: `Spot(where, expect)` finds exactly one row of `table` matching `where` and checks
each expected column: a float is compared with a relative tolerance, a date string against a
datetime column as a Timestamp, None means missing (NaN/NaT/NA), `Has("x")` a substring.
`Absent(where)` says no row matches.

A fixture case with `replay` is also the recorded response of a replay folder
(`tests/fixtures/replay/<source>/<replay>`, its aux files under their names): the replay files
are generated from the cases (`tests/replay_files.py`), never copied by hand.

Pure declarations: no pandas, nothing read at import.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass(frozen=True)
class Has:
    """The cell contains this substring."""

    text: str


@dataclass(frozen=True)
class Spot:
    where: dict[str, Any]
    expect: dict[str, Any]
    table: str = "scores"


@dataclass(frozen=True)
class Absent:
    where: dict[str, Any]
    table: str = "scores"


@dataclass(frozen=True)
class Case:
    file: str                                  # under tests/fixtures/, or ../shared/snapshots/ if snapshot
    snapshot: bool = False
    filename: str | None = "<file>"            # the name passed to parse ("<file>": the file's own name)
    aux: tuple[tuple[str, str], ...] = ()      # (name given to parse, file under the same root)
    real_floor: bool = False                   # parse with the source's real row floor (default: floor 1)
    scores: int | None = None                  # expected row counts (None: not declared)
    items: int | None = None
    models: int | None = None
    rejects: int | None = None
    excluded: int | None = None                # score rows with a non-empty excluded_reason
    unique_models: bool = False                # the models table has one row per model name
    all_missing: tuple[tuple[str, str], ...] = ()   # (table, column) missing on every row
    no_benchmark_like: str | None = None       # a regex no scores.benchmark may contain
    benchmarks: frozenset[str] | None = None   # the exact set of benchmarks in scores
    meta: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()             # each a substring of some warning
    spots: tuple[Spot | Absent, ...] = ()
    id: str = ""
    replay: str | None = None                  # the file's response name in a replay folder (aux files too)
    source: str = ""                           # set by the collector (the class's source name)

    @property
    def name(self) -> str:
        return self.id or f"{'snap' if self.snapshot else 'fix'}:{self.file}"


def S(table: str = "scores", /, **where: Any) -> Callable[..., Spot]:
    """`S(model="x")(score=0.5)`: a spot on `table` (a short way to write Spot)."""
    return lambda **expect: Spot(where, expect, table)


def snap(file: str, scores: int, spots: tuple = (), **kw: Any) -> Case:
    """A real snapshot (../shared/snapshots), parsed with its source's real floor."""
    return Case(file, snapshot=True, real_floor=True, scores=scores, spots=spots, **kw)

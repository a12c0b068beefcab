"""registry/comparisons.csv: the pairs of leaderboard tables the view `source_disagreements` cannot
infer from data (an Epoch `*_external` copy and the board it copies; a harness difference named).
The format and its parser are `common.comparisons` (docs/disagreements.md)."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path

from common.comparisons import ANY_RELEASE, COPY, FILE, HARNESS, KINDS, Comparison, parse_comparisons

__all__ = ["ANY_RELEASE", "COPY", "HARNESS", "KINDS", "Comparison", "load_comparisons", "parse_comparisons"]


@lru_cache(maxsize=4)
def _load(directory: str | None) -> tuple[Comparison, ...]:
    if directory is None:
        text = resources.files("registry").joinpath(FILE).read_text(encoding="utf-8")
    else:
        text = (Path(directory) / FILE).read_text(encoding="utf-8")
    return parse_comparisons(text)


def load_comparisons(directory: str | Path | None = None) -> tuple[Comparison, ...]:
    """The declarations of registry/comparisons.csv (validated)."""
    return _load(None if directory is None else str(directory))

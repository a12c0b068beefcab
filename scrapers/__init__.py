"""Leaderboard scrapers: one module per source, registered below by module name.

The module name is the source name everywhere: the DB `source` value, the `ingest`
argument, the replay sub-directory and the log prefix.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported on first use: `SOURCES` alone (the CLI's help) needs no pandas
    from common.naming import NamingRules
    from scrapers.base import ParsedSnapshot, Scraper, ScrapeError

# One line per source. Adding a leaderboard: write scrapers/<name>.py, add its name here.
SOURCES: tuple[str, ...] = (
    "csv",
    "swebench",
    "aider_polyglot",
    "aider_edit",
    "livecodebench",
    "livebench",
    "evalplus",
    "simple_evals",
    "lmarena",
    "bfcl",
    "epoch",
    "alpacaeval",
    "openrouter",
    "knowledge_cutoffs",
    # issue 21, second set (src2)
    "terminal_bench",
    "arc_agi",
    "artificial_analysis",
    "matharena",
    # issue 21 (src1): new sources
    "tau2_bench",
    "livebench_releases",
)


def get(name: str) -> Scraper:
    """The scraper instance for a source name, or a ScrapeError listing the known ones."""
    from scrapers.base import Scraper, ScrapeError
    if name not in SOURCES:
        raise ScrapeError(name, f"unknown source; known sources: {', '.join(SOURCES)}")
    module = importlib.import_module(f"scrapers.{name}")
    classes = [c for c in vars(module).values()
               if isinstance(c, type) and issubclass(c, Scraper) and c is not Scraper and getattr(c, "name", "") == name]
    if len(classes) != 1:
        raise ScrapeError(name, f"scrapers/{name}.py must define exactly one Scraper subclass with name = {name!r}")
    return classes[0]()


def naming_rules() -> dict[str, NamingRules]:
    """Every source's naming rules (`Scraper.NAMING`), by source name: what the jobs hand to
    registry.identity through storage (neither imports scrapers)."""
    return {n: get(n).NAMING for n in SOURCES}


def enabled_sources() -> list[str]:
    """Sources collected live by `benchwatch run` (those with production URLs)."""
    return [n for n in SOURCES if get(n).enabled and get(n).urls]


def __getattr__(name: str):
    """`scrapers.Scraper`, `ScrapeError`, `ParsedSnapshot`: imported from scrapers.base on first use."""
    if name in ("ParsedSnapshot", "Scraper", "ScrapeError"):
        import scrapers.base as base
        return getattr(base, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["SOURCES", "get", "naming_rules", "enabled_sources", "Scraper", "ScrapeError", "ParsedSnapshot"]

"""Leaderboard tables: the unit a saturation index, a frontier and a trend are computed on (issue 20).

A *table* is one leaderboard's question set under one harness: (benchmark, source, version).
Scores of one benchmark from two sources (HumanEval from EvalPlus and from simple-evals) or
from two releases of one source (LiveBench 2024-11-25 and 2026-01-08) are different tables;
no top k, running best, trend or alert mixes them. This module owns the rule, once:

- `table_id(benchmark, source, table_version)` (common/table_ids.py spells it, here re-exported):
  ``benchmark:source``, or ``benchmark:source:version`` when the source states a version
  (`scores.table_version`). Stored rows carry the three parts as columns (migration 084).
- Declared equivalences (``tables.csv``, kind ``pool``): two or more sources of one benchmark
  that run the same items under the same harness, with the reason; their unversioned tables
  are one table ``benchmark:pooled`` whose source is ``pooled`` (`sources` lists them).
  Default: no pooling.
- Which table is a benchmark's *primary* (kind ``primary``): the benchmark owner's
  leaderboard where one exists; the newest version of a versioned source; where nothing is
  declared, the source's own runs before an external report of them, then the longest dated
  history (first to last result date), then the most models (ties: source name).

- Which of a source's tables of one benchmark are *current* (`version_kind`): a version that is
  a date (``2026-01-08``: LiveBench) is a *release*; a newer release replaces an older one, by
  the release's own date, whatever order their snapshots were stored in. A ``top<N>`` version
  is a *partial* page (a top-30 list): its own table, never compared with the full board and
  current only while the source has no full board of that benchmark. Any other version (an
  ARC-AGI split, an Arena-Hard version, none) is a *board*: current while the source's newest
  snapshot of the benchmark's boards holds it.

The SQL of storage repeats `version_kind`'s expression (view `latest_scores`) and renders `table_id`'s from
common/table_ids.py; tests/integration/test_tables.py checks that they agree. Pure: no DuckDB, no network.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Iterable

import pandas as pd

from common.table_ids import TableKey, table_id, table_key  # noqa: F401 - re-exported (the one spelling)

__all__ = ["POOLED", "TableRules", "table_id", "version_kind", "RELEASE", "PARTIAL", "BOARD", "load_table_rules",
           "assign_tables", "primary_flags", "primary_reasons",
           "table_name", "source_name"]

POOLED = "pooled"
KINDS = ("primary", "pool")
COLUMNS = ("kind", "benchmark", "sources", "reason")
FILE = "tables.csv"

# How a report names a source: "HumanEval (EvalPlus)".
SOURCE_NAMES = {
    "aider_edit": "Aider edit", "aider_polyglot": "Aider polyglot", "alpacaeval": "AlpacaEval", "bfcl": "BFCL",
    "epoch": "Epoch AI", "evalplus": "EvalPlus", "livebench": "LiveBench", "livecodebench": "LiveCodeBench",
    "lmarena": "LMArena", "simple_evals": "simple-evals", "swebench": "SWE-bench", "csv": "CSV",
    "openrouter": "OpenRouter", "knowledge_cutoffs": "knowledge-cutoff tables", "terminal_bench": "Terminal-Bench",
    "arc_agi": "ARC Prize", "artificial_analysis": "Artificial Analysis", "matharena": "MathArena",
    "tau2_bench": "τ²-bench", "livebench_releases": "LiveBench releases",
}


RELEASE, PARTIAL, BOARD = "release", "partial", "board"
_RELEASE_VERSION = re.compile(r"\d{4}-\d{2}-\d{2}")
_PARTIAL_VERSION = re.compile(r"top\d+")


def version_kind(table_version: str | None) -> str:
    """What a table's version says about the table: 'release' (an ISO date: a newer release
    replaces it), 'partial' (``top<N>``: a page of the best N, never the full board) or 'board'."""
    version = "" if table_version is None or (isinstance(table_version, float) and pd.isna(table_version)) \
        else str(table_version)
    if _RELEASE_VERSION.fullmatch(version):
        return RELEASE
    if _PARTIAL_VERSION.fullmatch(version):
        return PARTIAL
    return BOARD


def pooled_id(benchmark: str) -> str:
    return table_id(benchmark, POOLED)


def source_name(source: str) -> str:
    """A source's display name ('evalplus' -> 'EvalPlus'); the module name when not listed."""
    return SOURCE_NAMES.get(str(source), str(source))


def table_name(benchmark_name: str, source: str | None, table_version: str | None = "",
               sources: Iterable[str] | None = None) -> str:
    """'HumanEval (EvalPlus)', 'LiveBench (LiveBench 2024-11-25)', 'MMLU (pooled: LMArena, simple-evals)'."""
    if source is None or (isinstance(source, float) and pd.isna(source)) or source == "":
        return str(benchmark_name)
    if source == POOLED:
        names = ", ".join(source_name(s) for s in (sources or []))
        return f"{benchmark_name} (pooled: {names})" if names else f"{benchmark_name} (pooled)"
    version = "" if table_version is None or (isinstance(table_version, float) and pd.isna(table_version)) \
        else str(table_version)
    return f"{benchmark_name} ({source_name(source)}{' ' + version if version else ''})"


@dataclass(frozen=True)
class Rule:
    kind: str
    benchmark: str          # an id, or a pattern with '*' (fnmatch, case-sensitive)
    sources: tuple[str, ...]
    reason: str

    def matches(self, benchmark: str) -> bool:
        return fnmatchcase(str(benchmark), self.benchmark)


@dataclass(frozen=True)
class TableRules:
    """The declarations of tables.csv: primaries (first match wins) and pools."""

    rules: tuple[Rule, ...] = ()

    def primary_source(self, benchmark: str) -> str | None:
        rule = self.primary_rule(benchmark)
        return None if rule is None else rule.sources[0]

    def primary_rule(self, benchmark: str) -> Rule | None:
        for r in self.rules:
            if r.kind == "primary" and r.matches(benchmark):
                return r
        return None

    def pool_of(self, benchmark: str, source: str) -> Rule | None:
        """The pool declaration that puts (benchmark, source)'s unversioned table in a pool, or None."""
        for r in self.rules:
            if r.kind == "pool" and r.matches(benchmark) and source in r.sources:
                return r
        return None


def _parse(text: str, where: str) -> TableRules:
    frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    if tuple(frame.columns) != COLUMNS:
        raise ValueError(f"{where}: columns are {list(frame.columns)}, expected {list(COLUMNS)}")
    rules = []
    for i, row in enumerate(frame.to_dict("records")):
        line = f"{where} line {i + 2}"
        kind, bench = row["kind"].strip(), row["benchmark"].strip()
        sources = tuple(s.strip() for s in row["sources"].split(";") if s.strip())
        reason = row["reason"].strip()
        if kind not in KINDS:
            raise ValueError(f"{line} (kind): {kind!r} is not one of {list(KINDS)}")
        if not bench:
            raise ValueError(f"{line} (benchmark): empty")
        if not reason:
            raise ValueError(f"{line} (reason): a declaration needs its reason")
        if kind == "primary" and len(sources) != 1:
            raise ValueError(f"{line} (sources): a primary names exactly one source, got {list(sources)}")
        if kind == "pool" and len(set(sources)) < 2:
            raise ValueError(f"{line} (sources): a pool names at least two sources, got {list(sources)}")
        rules.append(Rule(kind, bench, sources, reason))
    pools = [r for r in rules if r.kind == "pool"]
    for a_i, a in enumerate(pools):
        for b in pools[a_i + 1:]:
            if a.benchmark == b.benchmark and set(a.sources) & set(b.sources):
                raise ValueError(f"{where}: a source is in two pools of {a.benchmark!r}")
    return TableRules(tuple(rules))


@lru_cache(maxsize=8)
def _load(directory: str | None) -> TableRules:
    if directory is None:
        text = resources.files("registry").joinpath(FILE).read_text(encoding="utf-8")
    else:
        text = (Path(directory) / FILE).read_text(encoding="utf-8")
    return _parse(text, f"registry/{FILE}")


def load_table_rules(directory: str | Path | None = None) -> TableRules:
    """The declarations of registry/tables.csv (validated; a malformed row raises naming its line)."""
    return _load(None if directory is None else str(directory))


def assign_tables(frame: pd.DataFrame, rules: TableRules | None = None) -> pd.DataFrame:
    """`frame` (benchmark, source, optionally table_version) with `table_id` and `table_source`.

    `table_source` is the row's source, or ``pooled`` for a row of a declared pool (then
    `table_id` = ``benchmark:pooled``). A row with a version is never pooled: a version is
    another question set. The rule is applied once per distinct (benchmark, source, version).
    """
    rules = load_table_rules() if rules is None else rules
    out = frame.copy()
    version = out["table_version"].fillna("").astype(str) if "table_version" in out.columns \
        else pd.Series("", index=out.index)
    keys = pd.DataFrame({"benchmark": out["benchmark"].astype(str), "source": out["source"].astype(str),
                         "table_version": version})
    uniq = keys.drop_duplicates()
    ids, srcs = {}, {}
    for b, s, v in uniq.itertuples(index=False):
        pool = None if v else rules.pool_of(b, s)
        ids[(b, s, v)] = pooled_id(b) if pool is not None else table_id(b, s, v)
        srcs[(b, s, v)] = POOLED if pool is not None else s
    index = pd.MultiIndex.from_frame(keys)
    out["table_version"] = version.to_numpy()
    out["table_id"] = pd.Series(ids).reindex(index).to_numpy(dtype=object) if len(out) else \
        pd.Series(dtype="object")
    out["table_source"] = pd.Series(srcs).reindex(index).to_numpy(dtype=object) if len(out) else \
        pd.Series(dtype="object")
    return out


def primary_flags(tables: pd.DataFrame, rules: TableRules | None = None) -> pd.Series:
    """True for each benchmark's primary table (one per benchmark), False for the others.

    `tables`: one row per table: table_id, benchmark, source (``pooled`` for a pool),
    table_version, n_models, optionally is_current (a table its source still serves). The
    declared source's newest version (a current one first, a full board before a partial page;
    versions compare as text: ISO dates) where the benchmark has a table of it; else (`_primaries`)
    a source's own runs before an external report, the longest dated history, the most models (a
    pool counts as a source), ties by source name.
    """
    flags = pd.Series(False, index=tables.index)
    for index, _ in _primaries(tables, rules):
        flags[index] = True
    return flags


def primary_reasons(tables: pd.DataFrame, rules: TableRules | None = None) -> pd.Series:
    """Why each benchmark's primary table is primary (registry/tables.csv's reason, or the rule
    that chose it with its figures); None on the other tables. The report says it."""
    out = pd.Series(None, index=tables.index, dtype="object")
    for index, reason in _primaries(tables, rules):
        out[index] = reason
    return out


EXTERNAL_VERSION = "external"   # the table_version of a third party's numbers (e.g. Epoch's *_external members)


def _primaries(tables: pd.DataFrame, rules: TableRules | None) -> list[tuple[object, str]]:
    """(index of each benchmark's primary table, why): the one definition behind primary_flags and
    primary_reasons. Undeclared: own runs before an external report, the longest dated history
    (first to last result date; a table without dates counts none), the most models, the source."""
    rules = load_table_rules() if rules is None else rules
    if tables.empty:
        return []
    current = tables["is_current"].fillna(False).astype(bool) if "is_current" in tables.columns else True
    first = pd.to_datetime(tables["first_dated_at"], errors="coerce") if "first_dated_at" in tables.columns else None
    last = pd.to_datetime(tables["last_dated_at"], errors="coerce") if "last_dated_at" in tables.columns else None
    span = ((last - first).dt.days.fillna(0) if first is not None and last is not None
            else pd.Series(0, index=tables.index))
    versions = tables["table_version"].fillna("").astype(str)
    t = tables.assign(_v=versions, _c=current, _full=versions.map(version_kind).ne(PARTIAL),
                      _n=pd.to_numeric(tables["n_models"], errors="coerce").fillna(0), _span=span)
    t["_ext"] = t["_v"] == EXTERNAL_VERSION
    t = t[t["benchmark"].notna()]
    # per benchmark and source: its own runs before an external report, a current table, a full
    # board before a partial page, the newest version (versions compare as text: ISO dates); one
    # sort of every table (stable: ties keep their order), not one per benchmark
    newest = t.sort_values(["benchmark", "source", "_ext", "_c", "_full", "_v"],
                           ascending=[True, True, False, True, True, True]) \
        .groupby(["benchmark", "source"], sort=False).tail(1)
    ranked = newest.sort_values(["benchmark", "_ext", "_span", "_n", "source"],
                                ascending=[True, True, False, False, True])
    best = ranked.groupby("benchmark", sort=False).head(1)
    best = dict(zip(best["benchmark"], zip(best.index, best["_span"], best["_n"], best["_ext"])))
    by_source = dict(zip(zip(newest["benchmark"], newest["source"]), newest.index))
    has_ext = newest.groupby("benchmark", sort=False)["_ext"].any().to_dict()
    sizes = t.groupby("benchmark", sort=False).size()
    out = []
    for bench, size in sizes.items():
        rule = rules.primary_rule(str(bench))
        if rule is not None and (bench, rule.sources[0]) in by_source:
            out.append((by_source[(bench, rule.sources[0])], f"declared in registry/tables.csv: {rule.reason}"))
            continue
        index, span, n, ext = best[bench]
        others = size - 1
        why = (f"the longest dated history ({int(span)} days, {int(n)} models)"
               + (f" of the benchmark's {others + 1} tables" if others else ", its only table"))
        if has_ext[bench] and not ext:
            why += "; the source's own runs come before an external report of them"
        out.append((index, why))
    return out

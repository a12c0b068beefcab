"""The curated registry: benchmarks, models and name aliases, shipped as CSV package data.

Pure loaders (no DuckDB, no network): each reads its CSV through ``importlib.resources`` (so an
installed package works), converts dtypes and validates the whole registry, raising a
``ValueError`` that names the file and row on anything malformed. ``registry/README.md`` documents
every column and the curation rules.

Name lookup is on :func:`alias_key` (casefold, trim, collapse whitespace) and nothing looser, so
``gpt-4o`` and ``gpt-4-o`` stay different names: merging models is a curation decision recorded as
an alias row, never a side effect of normalization.
"""

from __future__ import annotations

import io
import re
from functools import lru_cache
from importlib import resources
from pathlib import Path

import pandas as pd

from common.refs import parse_refs
from common.units import METRIC_RANGES

__all__ = [
    "ALIAS_KINDS", "CUTOFF_PROVENANCES", "SKILLS",
    "alias_key", "alias_map", "resolve",
    "load_benchmarks", "load_models", "load_aliases",
]

BENCHMARK_COLUMNS = ("id", "name", "paper_id", "release_date", "material_date", "n_items", "metric_kind", "chance",
                     "ceiling", "access", "dynamic", "skill", "reference_benchmarks", "notes")
MODEL_COLUMNS = ("id", "name", "org", "release_date", "knowledge_cutoff", "cutoff_provenance", "open_weights",
                 "predecessor", "source")
ALIAS_COLUMNS = ("kind", "alias", "canonical")

ALIAS_KINDS = ("model", "benchmark")
# Same vocabulary as scrapers.base.MODEL_COLUMNS["provenance"]; strongest first.
CUTOFF_PROVENANCES = ("vendor_doc", "model_card", "leaderboard", "listing", "inferred")
# Skill families used to pick A1 reference benchmarks (docs/statistics.md, "The signals", A1: "same skill family").
SKILLS = frozenset({
    "agentic_coding", "chat", "coding", "commonsense", "composite", "data_analysis", "factuality", "image_generation",
    "instruction_following", "knowledge", "language_modeling", "language_understanding", "legal", "math", "medical",
    "reading_comprehension", "reasoning", "reward_modeling", "safety", "tool_use", "translation", "vision",
})
ACCESS_VALUES = ("public", "private", "")
# Metric kinds that are not averages over a fixed item set: n_items stays empty for them.
NON_ITEM_METRICS = frozenset({"elo", "score_10", "index", "cost_usd", "minutes"})

_BENCHMARK_ID = re.compile(r"[a-z0-9]+(?:_[a-z0-9]+)*")
_MODEL_ID = re.compile(r"[a-z0-9][a-z0-9._:-]*")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def alias_key(name: str) -> str:
    """The key every name lookup uses: casefolded, trimmed, internal whitespace collapsed to one space."""
    return " ".join(str(name).split()).casefold()


# --- reading --------------------------------------------------------------------------------------

def _read_text(file_name: str, directory: str | Path | None) -> str:
    if directory is None:
        return resources.files(__name__).joinpath(file_name).read_text(encoding="utf-8")
    return (Path(directory) / file_name).read_text(encoding="utf-8")


def _read_csv(file_name: str, columns: tuple[str, ...], directory: str | Path | None) -> pd.DataFrame:
    """All cells as stripped strings, '' for empty; exactly the expected columns in order."""
    frame = pd.read_csv(io.StringIO(_read_text(file_name, directory)), dtype=str, keep_default_na=False)
    if tuple(frame.columns) != columns:
        raise ValueError(f"registry/{file_name}: columns are {list(frame.columns)}, expected {list(columns)}")
    for col in frame.columns:
        frame[col] = frame[col].str.strip()
    return frame


def _where(file_name: str, row: int, column: str | None = None) -> str:
    """'registry/x.csv line N (column)', counting the header as line 1."""
    return f"registry/{file_name} line {row + 2}" + (f" ({column})" if column else "")


def _dates(frame: pd.DataFrame, column: str, file_name: str) -> pd.Series:
    for i, text in enumerate(frame[column]):
        if text and not _DATE.fullmatch(text):
            raise ValueError(f"{_where(file_name, i, column)}: {text!r} is not a YYYY-MM-DD date")
    try:
        return pd.to_datetime(frame[column].replace("", None), format="%Y-%m-%d").astype("datetime64[us]")
    except ValueError as exc:
        raise ValueError(f"registry/{file_name} ({column}): invalid date: {exc}") from None


def _numbers(frame: pd.DataFrame, column: str, file_name: str) -> pd.Series:
    out = pd.to_numeric(frame[column].replace("", None), errors="coerce").astype("float64")
    bad = out.isna() & frame[column].ne("")
    if bad.any():
        i = int(bad.to_numpy().nonzero()[0][0])
        raise ValueError(f"{_where(file_name, i, column)}: {frame[column].iloc[i]!r} is not a number")
    return out


def _integers(frame: pd.DataFrame, column: str, file_name: str) -> pd.Series:
    for i, text in enumerate(frame[column]):
        if text and not (text.isdigit() and int(text) > 0):
            raise ValueError(f"{_where(file_name, i, column)}: {text!r} is not a positive integer")
    return pd.array([int(t) if t else pd.NA for t in frame[column]], dtype="Int64")


def _choice(frame: pd.DataFrame, column: str, allowed, file_name: str) -> None:
    for i, value in enumerate(frame[column]):
        if value not in allowed:
            raise ValueError(f"{_where(file_name, i, column)}: {value!r} is not one of {sorted(allowed)}")


def _unique_ids(frame: pd.DataFrame, pattern: re.Pattern, file_name: str) -> None:
    seen: dict[str, int] = {}
    for i, ident in enumerate(frame["id"]):
        if not pattern.fullmatch(ident):
            raise ValueError(f"{_where(file_name, i, 'id')}: {ident!r} is not a valid id")
        key = alias_key(ident)
        if key in seen:
            raise ValueError(f"{_where(file_name, i, 'id')}: duplicate id {ident!r} (also on line {seen[key] + 2})")
        seen[key] = i


# --- benchmarks -----------------------------------------------------------------------------------

@lru_cache(maxsize=8)
def _benchmarks(directory: str | None) -> pd.DataFrame:
    name = "benchmarks.csv"
    raw = _read_csv(name, BENCHMARK_COLUMNS, directory)
    _unique_ids(raw, _BENCHMARK_ID, name)
    _choice(raw, "metric_kind", METRIC_RANGES, name)
    _choice(raw, "access", ACCESS_VALUES, name)
    _choice(raw, "dynamic", ("yes", "no"), name)
    _choice(raw, "skill", SKILLS, name)
    for i, row in raw.iterrows():
        if not row["name"]:
            raise ValueError(f"{_where(name, i, 'name')}: empty name for {row['id']!r}")
    out = pd.DataFrame({
        "id": raw["id"],
        "name": raw["name"],
        "paper_id": _integers(raw, "paper_id", name),
        "release_date": _dates(raw, "release_date", name),
        "material_date": _dates(raw, "material_date", name),
        "n_items": _integers(raw, "n_items", name),
        "metric_kind": raw["metric_kind"],
        "chance": _numbers(raw, "chance", name),
        "ceiling": _numbers(raw, "ceiling", name),
        "access": raw["access"],
        "dynamic": raw["dynamic"].eq("yes").astype(bool),
        "skill": raw["skill"],
        # tuples in the cache; load_benchmarks hands out fresh lists
        "reference_benchmarks": [parse_refs(refs) for refs in raw["reference_benchmarks"]],
        "notes": raw["notes"],
    })
    _check_benchmark_rows(out, name)
    return out


def _check_benchmark_rows(frame: pd.DataFrame, name: str) -> None:
    ids = set(frame["id"])
    paper_seen: dict[int, str] = {}
    for i, row in frame.iterrows():
        low, high = METRIC_RANGES[row["metric_kind"]]
        for col in ("chance", "ceiling"):
            value = row[col]
            if pd.notna(value) and not low <= value <= high:
                raise ValueError(f"{_where(name, i, col)}: {value} is outside the {row['metric_kind']} range [{low}, {high}]")
        if pd.notna(row["chance"]) and pd.notna(row["ceiling"]) and row["chance"] >= row["ceiling"]:
            raise ValueError(f"{_where(name, i)}: chance {row['chance']} is not below ceiling {row['ceiling']}")
        if row["metric_kind"] in NON_ITEM_METRICS and pd.notna(row["n_items"]):
            raise ValueError(f"{_where(name, i, 'n_items')}: {row['metric_kind']} benchmarks have no item count")
        if pd.notna(row["material_date"]):
            if row["dynamic"]:
                raise ValueError(f"{_where(name, i, 'material_date')}: dynamic benchmarks have no material_date")
            if pd.notna(row["release_date"]) and row["material_date"] > row["release_date"]:
                raise ValueError(f"{_where(name, i, 'material_date')}: material_date is after release_date")
        for ref in row["reference_benchmarks"]:
            if ref == row["id"]:
                raise ValueError(f"{_where(name, i, 'reference_benchmarks')}: {ref!r} references itself")
            if ref not in ids:
                raise ValueError(f"{_where(name, i, 'reference_benchmarks')}: unknown benchmark id {ref!r}")
        if pd.notna(row["paper_id"]):
            pid = int(row["paper_id"])
            if pid in paper_seen:
                raise ValueError(f"{_where(name, i, 'paper_id')}: paper_id {pid} also used by {paper_seen[pid]!r}")
            paper_seen[pid] = row["id"]


def load_benchmarks(directory: str | Path | None = None) -> pd.DataFrame:
    """Validated ``benchmarks.csv``: one row per canonical benchmark id.

    Dtypes: dates ``datetime64[us]`` (NaT if unknown), ``paper_id``/``n_items`` ``Int64``, ``chance``/``ceiling``
    float (NaN if unknown), ``dynamic`` bool, ``reference_benchmarks`` a list of ids (empty list if none);
    text columns use '' for empty. ``directory`` reads another registry folder (tests); default: package data.
    """
    out = _benchmarks(None if directory is None else str(directory)).copy(deep=True)
    out["reference_benchmarks"] = [list(refs) for refs in out["reference_benchmarks"]]
    return out


# --- models ---------------------------------------------------------------------------------------

@lru_cache(maxsize=8)
def _models(directory: str | None) -> pd.DataFrame:
    name = "models.csv"
    raw = _read_csv(name, MODEL_COLUMNS, directory)
    _unique_ids(raw, _MODEL_ID, name)
    _choice(raw, "cutoff_provenance", CUTOFF_PROVENANCES + ("",), name)
    _choice(raw, "open_weights", ("true", "false", ""), name)
    out = pd.DataFrame({
        "id": raw["id"],
        "name": raw["name"],
        "org": raw["org"],
        "release_date": _dates(raw, "release_date", name),
        "knowledge_cutoff": _dates(raw, "knowledge_cutoff", name),
        "cutoff_provenance": raw["cutoff_provenance"],
        "open_weights": pd.array([{"true": True, "false": False}.get(v, pd.NA) for v in raw["open_weights"]],
                                 dtype="boolean"),
        "predecessor": raw["predecessor"],
        "source": raw["source"],
    })
    known = set(out["id"])
    for i, row in out.iterrows():
        if not row["name"] or not row["org"]:
            raise ValueError(f"{_where(name, i)}: name and org are required for {row['id']!r}")
        has_cutoff = pd.notna(row["knowledge_cutoff"])
        if has_cutoff != bool(row["cutoff_provenance"]):
            raise ValueError(f"{_where(name, i, 'cutoff_provenance')}: a knowledge_cutoff needs a provenance and vice versa")
        if has_cutoff and pd.notna(row["release_date"]) and row["knowledge_cutoff"] > row["release_date"]:
            raise ValueError(f"{_where(name, i, 'knowledge_cutoff')}: cutoff is after the release date")
        if (has_cutoff or pd.notna(row["release_date"])) and not row["source"]:
            raise ValueError(f"{_where(name, i, 'source')}: dates need a source")
        if row["predecessor"] and (row["predecessor"] not in known or row["predecessor"] == row["id"]):
            raise ValueError(f"{_where(name, i, 'predecessor')}: {row['predecessor']!r} is not another model id")
    return out


def load_models(directory: str | Path | None = None) -> pd.DataFrame:
    """Validated ``models.csv``: one row per canonical model id.

    Dtypes: ``release_date``/``knowledge_cutoff`` ``datetime64[us]`` (NaT if unknown; month-precision cutoffs are
    the first of the month), ``open_weights`` nullable ``boolean``; text columns use '' for empty.
    """
    return _models(None if directory is None else str(directory)).copy(deep=True)


# --- aliases --------------------------------------------------------------------------------------

@lru_cache(maxsize=8)
def _aliases(directory: str | None) -> pd.DataFrame:
    name = "aliases.csv"
    raw = _read_csv(name, ALIAS_COLUMNS, directory)
    _choice(raw, "kind", ALIAS_KINDS, name)
    canon_keys = {
        "benchmark": {alias_key(i): i for i in _benchmarks(directory)["id"]},
        "model": {alias_key(i): i for i in _models(directory)["id"]},
    }
    seen: dict[tuple[str, str], tuple[int, str]] = {}
    for i, row in raw.iterrows():
        kind, alias, canonical = row["kind"], row["alias"], row["canonical"]
        if not alias:
            raise ValueError(f"{_where(name, i, 'alias')}: empty alias")
        if canonical not in canon_keys[kind].values():
            raise ValueError(f"{_where(name, i, 'canonical')}: {canonical!r} is not a {kind} id of the registry")
        key = alias_key(alias)
        clash = canon_keys[kind].get(key)
        if clash is not None:
            what = "is the id itself" if clash == canonical else f"is the id of another {kind}, {clash!r}"
            raise ValueError(f"{_where(name, i, 'alias')}: alias {alias!r} {what}")
        if (kind, key) in seen:
            first_row, first_canonical = seen[(kind, key)]
            if first_canonical != canonical:
                raise ValueError(f"{_where(name, i, 'alias')}: {kind} alias {alias!r} maps to two canonicals, "
                                 f"{first_canonical!r} (line {first_row + 2}) and {canonical!r}")
            raise ValueError(f"{_where(name, i, 'alias')}: duplicate {kind} alias {alias!r} (line {first_row + 2})")
        seen[(kind, key)] = (i, canonical)
    return raw


def load_aliases(directory: str | Path | None = None) -> pd.DataFrame:
    """Validated ``aliases.csv`` (kind, alias, canonical); validating it also loads benchmarks and models."""
    return _aliases(None if directory is None else str(directory)).copy(deep=True)


@lru_cache(maxsize=16)
def _alias_map(kind: str, directory: str | None) -> dict[str, str]:
    if kind not in ALIAS_KINDS:
        raise ValueError(f"alias kind must be one of {ALIAS_KINDS}, got {kind!r}")
    ids = (_benchmarks if kind == "benchmark" else _models)(directory)["id"]
    mapping = {alias_key(i): i for i in ids}
    rows = _aliases(directory)
    rows = rows[rows["kind"] == kind]
    mapping.update({alias_key(a): c for a, c in zip(rows["alias"], rows["canonical"])})
    return mapping


def alias_map(kind: str, directory: str | Path | None = None) -> dict[str, str]:
    """``{alias_key(name): canonical id}`` for one kind, covering every alias and every canonical id."""
    return dict(_alias_map(kind, None if directory is None else str(directory)))


def resolve(kind: str, name: str, directory: str | Path | None = None) -> str | None:
    """The canonical id for a name as a page writes it, or None when the registry does not know it."""
    return _alias_map(kind, None if directory is None else str(directory)).get(alias_key(name))

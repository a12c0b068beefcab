"""Model identity: which model (and which variant of it) a leaderboard row is about.

Pure (no I/O): the one place that turns a page's row name into
``(model, variant, population, underlying)``; storage's name mapper applies it at ingest
and again whenever the registry changes (`storage.registry_sync`). The page's own name
stays in ``scores.model_raw``.

- ``model``: the canonical id (registry/models.csv via aliases.csv) of the *base name*, else
  the base name itself (unresolved; listed by ``benchwatch status``). The base name is the
  page's name with a documented variant marker removed; nothing else is ever merged.
- ``variant``: the removed markers, e.g. ``effort=high``, ``precision=fp8``,
  ``thinking=64k; effort=high`` or ``label=report`` ('' when none): ``attr=value`` parts in the
  name's order, each attribute once. Settings are not models (registry/README.md): two efforts
  or two precision builds of one model count once.
- ``population``: ``models`` (a model run: one model, the source's own harness) or
  ``systems`` (an agent system: a scaffold over one or several models). The two are never
  ranked together.
- ``underlying``: for a system, the canonical id of the one model it names (SWE-bench's
  ``Model: …`` tags), NULL when it names none or several.

The markers every source shares are declared once (``COMMON_VARIANTS`` in `common.naming`:
precision and serving builds ``-bf16``/``-fp8``/``-awq``/``-q8_0``, hosts ``-together``/``fireworks/``,
efforts ``-high-effort``/``-thinking-xhigh``/``(high)``/bare ``-high``, budgets ``-thinking-16k``,
``Thinking 16K``, ``(32k thinking)``) and applied after each source's own. Per-source rules are
data declared by each source beside its parser (``NAMING = NamingRules(...)`` on the scraper
class) and handed to this module by the jobs (``scrapers.naming_rules()``: registry never
imports scrapers); docs/architecture.md ("Model identity") lists them. A rule is a variant
marker on the end of the name (a prefix when its pattern starts ``^``: ``fireworks/``), or says which rows are agent systems: every row
(named with ``Model:`` tags, SWE-bench except its ``bash-only`` board, Terminal-Bench), a name
that pairs two models (Aider's architect/editor ``o3 (high) + gpt-4.1``), or a tag (τ²-bench's
``System: custom``).

A *bare* effort suffix (``-low``/``-medium``/``-high``/``-minimal``/``-xhigh``) is also how some
names spell a size (``mistral-medium``), so it is removed only with evidence: the base
resolves in the registry, or the same snapshot of the source lists the base with a second,
different bare suffix or on its own (``o3`` beside ``o3-high``; ``gpt-5-mini-low`` beside
``gpt-5-mini-high``; ARC-AGI's ``o1 - high`` spelling too). Explicit markers (``-high-effort``,
``-thinking-64k``, ``-fp8``, ``(high)``, ``(report)``) need no evidence. When the base does not resolve, the variant still collapses
rows that differ only by the marker (the page says they are one model) and the base name is
the model (unresolved).
"""

from __future__ import annotations

import re
from datetime import date
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Mapping

import numpy as np
import pandas as pd

from common.naming import (BARE_EFFORT, EFFORT, NO_RULES, POPULATION_MODELS, POPULATION_SYSTEMS,
                           POPULATION_SYSTEMS_PER_MODEL, PREVIEW_SUFFIX, RELEASE_AGREES_DAYS, NamingRules)
from registry import alias_key

__all__ = ["POPULATIONS", "MODELS", "SYSTEMS", "SYSTEMS_PER_MODEL", "Identity", "identify", "identify_frame",
           "split_variant", "model_tags", "dated_model"]

MODELS, SYSTEMS, SYSTEMS_PER_MODEL = POPULATION_MODELS, POPULATION_SYSTEMS, POPULATION_SYSTEMS_PER_MODEL
POPULATIONS = (MODELS, SYSTEMS, SYSTEMS_PER_MODEL)

# matched on the stripped tag: `\s*(.+?)\s*$` backtracked quadratically on a long run of spaces
_MODEL_TAG = re.compile(r"Model:\s*+(.+)", re.I)


@dataclass(frozen=True)
class _Compiled:
    """A source's `NamingRules` with its regexes compiled (once per distinct rules)."""

    variants: tuple[tuple[re.Pattern, str, bool], ...]     # (pattern, attribute, is a prefix marker)
    system_name: re.Pattern | None
    system_tag: re.Pattern | None
    system_over: tuple[re.Pattern, ...]


@lru_cache(maxsize=None)
def _compiled(rules: NamingRules) -> _Compiled:
    return _Compiled(tuple((re.compile(p, re.I), attr, p.startswith("^")) for p, attr in rules.all_variants),
                     re.compile(rules.system_name) if rules.system_name else None,
                     re.compile(rules.system_tag, re.I) if rules.system_tag else None,
                     tuple(re.compile(p) for p in rules.system_over))


@dataclass(frozen=True)
class Identity:
    """Who a row is about; see the module docstring."""

    model: str
    variant: str
    population: str
    underlying: str | None


def split_variant(naming: NamingRules, name: str, bare_ok: Callable[[str, str], bool] = lambda base, suffix: True
                  ) -> tuple[str, str]:
    """(base name, variant) by a source's rules and the shared ones (`COMMON_VARIANTS`); (name,
    '') when no marker applies.

    The variant is ``attr=value`` parts joined by ``'; '`` in the name's order, each attribute
    at most once: a marker of an attribute already removed stays in the base (two values of one
    setting are not guessed apart). ``bare_ok(base, suffix)`` decides whether a bare effort
    suffix may be removed (see the module docstring). ``split_variant(NO_RULES, 'o3-high') ==
    ('o3', 'effort=high')``; ``…-thinking-64k-high-effort`` -> ``thinking=64k; effort=high``.
    """
    base = str(name).strip()
    prefix: list[str] = []
    suffix: list[str] = []
    taken: set[str] = set()
    rules = _compiled(naming).variants
    changed = True
    while changed and rules:
        changed = False
        for pattern, attr, is_prefix in rules:
            m = pattern.search(base)
            if not m:
                continue
            stem = base[m.end():].lstrip() if is_prefix else base[:m.start()].rstrip()
            if not stem or (not is_prefix and m.start() == 0):
                continue
            value = m.group(1).lower()
            if attr == BARE_EFFORT:
                attr = "effort"
                if attr in taken or not bare_ok(stem, value):
                    continue
            if attr in taken:
                continue
            taken.add(attr)
            if is_prefix:
                prefix.append(f"{attr}={value}")
            else:
                suffix.insert(0, f"{attr}={value}")
            base = stem
            changed = True
            break
    return base, "; ".join(prefix + suffix)


_BARE = re.compile(rf"^(.*?)(?:-|\s+-\s+)({EFFORT})$", re.I)


def _bare_evidence(names) -> dict[str, set[str]]:
    """alias_key(base) -> the bare suffixes (and '' for the base itself) seen among ``names``."""
    seen: dict[str, set[str]] = {}
    for n in names:
        if not isinstance(n, str):
            continue
        seen.setdefault(alias_key(n), set()).add("")
        m = _BARE.match(n.strip())
        if m:
            seen.setdefault(alias_key(m.group(1)), set()).add(m.group(2).lower())
    return seen


def model_tags(tags: str | None) -> list[str]:
    """The model names of a stored tag string ('Model: a; Model: b; Org: x' -> ['a', 'b'])."""
    if not isinstance(tags, str) or not tags:
        return []
    out = []
    for t in tags.split(";"):
        m = _MODEL_TAG.fullmatch(t.strip())
        if m and m.group(1) not in out:
            out.append(m.group(1))
    return out


def _agrees(a, b) -> bool:
    return abs((pd.Timestamp(a) - pd.Timestamp(b)).days) <= RELEASE_AGREES_DAYS


def dated_model(model: str, base: str, released, resolve: Callable[[str], str | None],
                release_of: Mapping[str, object]) -> str:
    """The registry model of a row that states its model's release date (``released``): ``model``
    when the dates agree or either is unknown; else the registered ``<base>-preview`` whose date
    agrees (`common.naming.RELEASE_AGREES_DAYS`), else still ``model`` (no guess without one)."""
    mine = release_of.get(model)
    if released is None or pd.isna(released) or mine is None or pd.isna(mine) or _agrees(released, mine):
        return model
    preview = resolve(base + PREVIEW_SUFFIX)
    theirs = release_of.get(preview) if preview is not None else None
    if preview is not None and theirs is not None and not pd.isna(theirs) and _agrees(released, theirs):
        return preview
    return model


def identify(naming: NamingRules, benchmark: str, name: str, tags: str | None, resolve: Callable[[str], str | None],
             siblings: Mapping[str, set[str]] | None = None, *, released=None,
             release_of: Mapping[str, object] | None = None) -> Identity:
    """The identity of one row by its source's rules. ``resolve(name)`` is the registry lookup
    (None: unknown); ``siblings``: the bare-suffix evidence of the row's snapshot (``_bare_evidence``);
    ``released``: the model release date the row states, checked against the registry's
    (``release_of``: canonical id -> release date; `dated_model`)."""
    def bare_ok(base: str, suffix: str) -> bool:
        if resolve(base) is not None:
            return True
        seen = (siblings or {}).get(alias_key(base), set())
        return len(seen - {suffix}) > 0

    def model_of(n: str) -> tuple[str, str]:
        """(model, variant) of a model's name, a row's or a `Model:` tag's: by the same rules."""
        direct = resolve(n)
        if direct is not None:
            return dated_model(direct, str(n).strip(), released, resolve, release_of or {}), ""
        base, variant = split_variant(naming, n, bare_ok)
        found = resolve(base)
        return (base if found is None else dated_model(found, base, released, resolve, release_of or {})), variant

    rules = _compiled(naming)
    if naming.systems:   # agent systems named with their models' `Model:` tags
        named = model_tags(tags)
        if benchmark in naming.model_run_benchmarks:   # every model in the same minimal agent: model runs
            return Identity(*model_of(named[0] if len(named) == 1 else str(name).strip()), MODELS, None)
        return Identity(str(name).strip(), "", SYSTEMS, model_of(named[0])[0] if len(named) == 1 else None)
    if rules.system_name is not None and rules.system_name.search(str(name)):   # a pair of models
        return Identity(str(name).strip(), "", SYSTEMS, None)
    if rules.system_tag is not None and isinstance(tags, str) and rules.system_tag.search(tags):   # its own scaffold
        return Identity(str(name).strip(), "", SYSTEMS, None)
    for method in rules.system_over:   # a method named over one model: a system on that model
        over = method.search(str(name).strip())
        if over:
            return Identity(str(name).strip(), "", SYSTEMS, model_of(over.group(1))[0])
    return Identity(*model_of(name), MODELS, None)


def identify_frame(rows: pd.DataFrame, alias_table: Mapping[str, str], naming: Mapping[str, NamingRules],
                   release_of: Mapping[str, object] | None = None) -> pd.DataFrame:
    """``identify`` over a frame of source, benchmark, model_raw, optional model_tag, snapshot_id and
    model_release_date (the date a row states; checked against ``release_of``, the registry's
    release date of each canonical id: `dated_model`).

    ``alias_table``: ``{alias_key(name): canonical id}`` (registry.alias_map or the DB's
    aliases); ``naming``: each source's rules (a source without an entry has none). The bare-suffix evidence is gathered per (source, snapshot_id): the names one
    snapshot lists, whatever the benchmark. Returns model, variant, population, underlying
    aligned with ``rows``.
    """
    def resolve(n: str) -> str | None:
        return alias_table.get(alias_key(n))

    none = pd.Series([None] * len(rows), index=rows.index, dtype="object")
    tags = rows["model_tag"] if "model_tag" in rows.columns else none
    snaps = rows["snapshot_id"] if "snapshot_id" in rows.columns else none
    dates = (pd.to_datetime(rows["model_release_date"]).dt.date.astype("object")
             if "model_release_date" in rows.columns and release_of else none)
    evidence = {ctx: _bare_evidence(g) for ctx, g in
                rows["model_raw"].groupby([rows["source"], snaps.fillna(-1)], sort=False)}
    # identify once per distinct (source, benchmark, name, tag, snapshot), then broadcast by code
    keys = pd.DataFrame({"src": rows["source"].to_numpy(dtype=object), "bench": rows["benchmark"].to_numpy(dtype=object),
                         "raw": rows["model_raw"].to_numpy(dtype=object),
                         "tag": [t if isinstance(t, str) else None for t in tags.tolist()],
                         "snap": snaps.fillna(-1).to_numpy(dtype=object),
                         "released": [d if isinstance(d, date) and not pd.isna(d) else None for d in dates.tolist()]})
    codes = keys.groupby(list(keys.columns), sort=False, dropna=False).ngroup().to_numpy()
    first = keys.drop_duplicates(keep="first")
    out = [identify(naming.get(src, NO_RULES), bench, raw, tag, resolve, evidence.get((src, snap)),
                    released=released, release_of=release_of)
           for src, bench, raw, tag, snap, released in first.itertuples(index=False, name=None)]
    cols = {name: np.array([getattr(i, name) for i in out] or [None], dtype=object)[codes] if len(codes) else []
            for name in ("model", "variant", "population", "underlying")}
    return pd.DataFrame({"model": cols["model"], "variant": cols["variant"], "population": cols["population"],
                         "underlying": cols["underlying"]}, index=rows.index)

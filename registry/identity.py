"""Model identity: which model (and which variant of it) a leaderboard row is about.

Pure (no I/O): the one place that turns a page's row name into
``(model, variant, population, underlying)``; storage's name mapper applies it at ingest
and again whenever the registry changes (`storage.registry_sync`). The page's own name
stays in ``scores.model_raw``.

- ``model``: the canonical id (registry/models.csv via aliases.csv) of the *base name*, else
  the base name itself (unresolved; listed by ``benchwatch status``). The base name is the
  page's name with a documented variant marker removed; nothing else is ever merged.
- ``variant``: the removed marker, e.g. ``effort=high`` or ``label=report`` ('' when none).
  Settings are not models (registry/README.md): two efforts of one model count once.
- ``population``: ``models`` (a model run: one model, the source's own harness) or
  ``systems`` (an agent system: a scaffold over one or several models). The two are never
  ranked together.
- ``underlying``: for a system, the canonical id of the one model it names (SWE-bench's
  ``Model: …`` tags), NULL when it names none or several.

Per-source rules (``SOURCE_RULES``), documented in docs/architecture.md ("Model identity"):

- simple_evals: a trailing ``-low``/``-medium``/``-high`` is the reasoning effort
  (``o3-high``); a trailing ``(report)``, ``(rerun …)``, ``(work in progress)`` is a label.
- aider_polyglot / aider_edit: a trailing parenthesis naming an effort or thinking budget
  (``(high)``, ``(32k thinking tokens)``, ``(no think)``, ``(default)``) or an edit format
  (``(diff)``, ``(whole)``, ``(udiff)``) is a setting; an architect/editor pair
  (``o3 (high) + gpt-4.1``) is a system of two models.
- livebench: trailing ``-thinking-<N>k``, ``-thinking-auto``, ``-(minimal|low|medium|high|xhigh)``,
  ``-<effort>-effort``, ``-highthinking``, ``-nothinking`` are settings (a bare ``-thinking``
  is not: ``kimi-k2-thinking`` is a model of its own).
- epoch: ``_thinking`` and a trailing ``(<N>K thinking)`` are settings (Epoch's own
  effort column is already in ``setting``).
- lmarena: a trailing ``-low``/``-medium``/``-high`` is the effort (``o3-mini-high``).
- artificial_analysis (its slugs): trailing ``-<effort>-effort``, ``-reasoning``,
  ``-non-reasoning`` and a bare ``-<effort>`` (with evidence) are settings.
- matharena: a trailing ``(low)``/``(medium)``/``(high)`` is the effort.
- tau2_bench: a ``custom`` submission (its own agent scaffold; tag ``System: custom``) is a
  system, never ranked with the standard harness's model runs.
- swebench: every board lists agent systems (population ``systems``, underlying model from
  the ``Model:`` tags) except ``bash-only``, where every model runs in the same minimal
  agent: there a row is a model run whose model is its single ``Model:`` tag.
- terminal_bench (``SYSTEM_SOURCES``): every row is an agent system (``Terminus 2
  (claude-opus-4-1)``), its underlying model the one ``Model:`` tag when it names one.

A *bare* effort suffix (``-low``/``-medium``/``-high``/``-minimal``/``-xhigh``) is also how some
names spell a size (``mistral-medium``), so it is removed only with evidence: the base
resolves in the registry, or the same snapshot of the source lists the base with a second,
different bare suffix or on its own (``o3`` beside ``o3-high``; ``gpt-5-mini-low`` beside
``gpt-5-mini-high``). Explicit markers (``-high-effort``, ``-thinking-64k``, ``(high)``,
``(report)``) need no evidence. When the base does not resolve, the variant still collapses
rows that differ only by the marker (the page says they are one model) and the base name is
the model (unresolved).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np
import pandas as pd

from registry import alias_key

__all__ = ["BENCHMARK_DEPENDENT_SOURCES", "POPULATIONS", "MODELS", "SYSTEMS", "SYSTEMS_PER_MODEL", "Identity", "identify", "identify_frame",
           "split_variant", "model_tags"]

MODELS = "models"
SYSTEMS = "systems"
SYSTEMS_PER_MODEL = "systems_per_model"
POPULATIONS = (MODELS, SYSTEMS, SYSTEMS_PER_MODEL)

_EFFORT = r"(?:minimal|low|medium|high|xhigh)"
# (pattern on the name, attribute name) tried in order, repeatedly, on the end of the name.
_Rule = tuple[re.Pattern, str]


def _rules(*pairs: tuple[str, str]) -> tuple[_Rule, ...]:
    return tuple((re.compile(p, re.I), attr) for p, attr in pairs)


_LABEL_PARENS = r"\s*\((report|rerun[^)]*|work in progress)\)$"
SOURCE_RULES: dict[str, tuple[_Rule, ...]] = {
    "simple_evals": _rules((_LABEL_PARENS, "label"), (rf"-({_EFFORT})$", "bare_effort")),
    "lmarena": _rules((rf"-({_EFFORT})$", "bare_effort"),),
    "aider_polyglot": _rules(
        (rf"\s*\(({_EFFORT}|default(?: think(?:ing)?)?|no think(?:ing)?|\d+k think(?:ing)?(?: tokens)?)\)$", "effort"),
        (r"\s*\((diff|whole|udiff|diff-fenced|editor-diff|editor-whole)\)$", "edit_format")),
    "livebench": _rules(
        (rf"-thinking-auto-({_EFFORT})-effort$", "effort"),
        (rf"-({_EFFORT})-effort$", "effort"),
        (r"-(thinking-\d+k)$", "effort"),
        (r"-(highthinking|nothinking)$", "effort"),
        (rf"-({_EFFORT})$", "bare_effort")),
    "epoch": _rules((r"_(thinking)$", "effort"), (r"\s*\((\d+K thinking)\)$", "effort")),
}
SOURCE_RULES["artificial_analysis"] = _rules(   # slugs: gpt-5-4-nano-medium, claude-sonnet-4-6-non-reasoning-low-effort
    (rf"-({_EFFORT})-effort$", "effort"), (r"-(non-reasoning|reasoning)$", "mode"), (rf"-({_EFFORT})$", "bare_effort"))
SOURCE_RULES["matharena"] = _rules((rf"\s*\(({_EFFORT})\)$", "effort"),)   # o3-mini (high)
SOURCE_RULES["aider_edit"] = SOURCE_RULES["aider_polyglot"]
_AIDER_PAIR = re.compile(r"\s\+\s")
_MODEL_TAG = re.compile(r"^\s*Model:\s*(.+?)\s*$", re.I)
_CUSTOM_SYSTEM = re.compile(r"(^|;)\s*System:\s*custom\b", re.I)   # tau2_bench's submission_type custom
BASH_ONLY = "swebench_bash_only"
# Sources whose rows' identity depends on the benchmark too (elsewhere on the name and tag alone).
BENCHMARK_DEPENDENT_SOURCES = frozenset({"swebench"})
# Sources whose every row is an agent system named with its models' `Model:` tags.
SYSTEM_SOURCES = frozenset({"terminal_bench"})


@dataclass(frozen=True)
class Identity:
    """Who a row is about; see the module docstring."""

    model: str
    variant: str
    population: str
    underlying: str | None


def split_variant(source: str, name: str, bare_ok: Callable[[str, str], bool] = lambda base, suffix: True
                  ) -> tuple[str, str]:
    """(base name, variant) by the source's rules; (name, '') when no marker applies.

    ``bare_ok(base, suffix)`` decides whether a bare effort suffix may be removed (see the
    module docstring). ``split_variant('simple_evals', 'o3-high') == ('o3', 'effort=high')``.
    """
    base, parts = str(name).strip(), []
    rules = SOURCE_RULES.get(source, ())
    changed = True
    while changed and rules:
        changed = False
        for pattern, attr in rules:
            m = pattern.search(base)
            if not m or m.start() == 0:
                continue
            value, stem = m.group(1).lower(), base[:m.start()].rstrip()
            if attr == "bare_effort":
                if not bare_ok(stem, value):
                    continue
                attr = "effort"
            parts.insert(0, f"{attr}={value}")
            base = stem
            changed = True
            break
    return base, "; ".join(parts)


_BARE = re.compile(rf"^(.*)-({_EFFORT})$", re.I)


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
        m = _MODEL_TAG.match(t)
        if m and m.group(1) not in out:
            out.append(m.group(1))
    return out


def identify(source: str, benchmark: str, name: str, tags: str | None, resolve: Callable[[str], str | None],
             siblings: Mapping[str, set[str]] | None = None) -> Identity:
    """The identity of one row. ``resolve(name)`` is the registry lookup (None: unknown);
    ``siblings``: the bare-suffix evidence of the row's snapshot (``_bare_evidence``)."""
    def canonical(n: str) -> str:
        return resolve(n) or n

    if source == "swebench":
        named = model_tags(tags)
        if benchmark == BASH_ONLY:
            if len(named) == 1:
                return Identity(canonical(named[0]), "", MODELS, None)
            return Identity(canonical(str(name).strip()), "", MODELS, None)
        under = canonical(named[0]) if len(named) == 1 else None
        return Identity(str(name).strip(), "", SYSTEMS, under)
    if source in SYSTEM_SOURCES:
        named = model_tags(tags)
        return Identity(str(name).strip(), "", SYSTEMS, canonical(named[0]) if len(named) == 1 else None)
    if source in ("aider_polyglot", "aider_edit") and _AIDER_PAIR.search(str(name)):
        return Identity(str(name).strip(), "", SYSTEMS, None)
    if source == "tau2_bench" and isinstance(tags, str) and _CUSTOM_SYSTEM.search(tags):   # a custom scaffold
        return Identity(str(name).strip(), "", SYSTEMS, None)
    direct = resolve(name)
    if direct is not None:
        return Identity(direct, "", MODELS, None)
    def bare_ok(base: str, suffix: str) -> bool:
        if resolve(base) is not None:
            return True
        seen = (siblings or {}).get(alias_key(base), set())
        return len(seen - {suffix}) > 0

    base, variant = split_variant(source, name, bare_ok)
    return Identity(canonical(base), variant, MODELS, None)


def identify_frame(rows: pd.DataFrame, alias_table: Mapping[str, str]) -> pd.DataFrame:
    """``identify`` over a frame of source, benchmark, model_raw, optional model_tag and snapshot_id.

    ``alias_table``: ``{alias_key(name): canonical id}`` (registry.alias_map or the DB's
    aliases). The bare-suffix evidence is gathered per (source, snapshot_id): the names one
    snapshot lists, whatever the benchmark. Returns model, variant, population, underlying
    aligned with ``rows``.
    """
    def resolve(n: str) -> str | None:
        return alias_table.get(alias_key(n))

    none = pd.Series([None] * len(rows), index=rows.index, dtype="object")
    tags = rows["model_tag"] if "model_tag" in rows.columns else none
    snaps = rows["snapshot_id"] if "snapshot_id" in rows.columns else none
    evidence = {ctx: _bare_evidence(g) for ctx, g in
                rows["model_raw"].groupby([rows["source"], snaps.fillna(-1)], sort=False)}
    # identify once per distinct (source, benchmark, name, tag, snapshot), then broadcast by code
    keys = pd.DataFrame({"src": rows["source"].to_numpy(dtype=object), "bench": rows["benchmark"].to_numpy(dtype=object),
                         "raw": rows["model_raw"].to_numpy(dtype=object),
                         "tag": [t if isinstance(t, str) else None for t in tags.tolist()],
                         "snap": snaps.fillna(-1).to_numpy(dtype=object)})
    codes = keys.groupby(list(keys.columns), sort=False, dropna=False).ngroup().to_numpy()
    first = keys.drop_duplicates(keep="first")
    out = [identify(src, bench, raw, tag, resolve, evidence.get((src, snap)))
           for src, bench, raw, tag, snap in first.itertuples(index=False, name=None)]
    cols = {name: np.array([getattr(i, name) for i in out] or [None], dtype=object)[codes] if len(codes) else []
            for name in ("model", "variant", "population", "underlying")}
    return pd.DataFrame({"model": cols["model"], "variant": cols["variant"], "population": cols["population"],
                         "underlying": cols["underlying"]}, index=rows.index)

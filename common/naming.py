"""How a source's page names the model of a row: declared by the source, applied by identity.

Each scraper class declares its `NAMING = NamingRules(...)` beside its parser (a source is one
unit); `registry.identity` applies them, and the jobs hand every source's rules down to it
(`scrapers.naming_rules()`), since registry and storage never import scrapers. Pure data:
regular expressions as text, so the rules hash into the registry digest (`fingerprint`) and a
changed rule re-identifies the stored rows.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

# A reasoning-effort word as the pages spell it (`o3-high`, `(medium)`, `-xhigh-effort`).
EFFORT = r"(?:minimal|low|medium|high|xhigh)"
# The attribute of a variant rule whose marker is a *bare* effort suffix (`-high`): removed only
# with evidence (registry/identity.py), since `mistral-medium` spells a size the same way.
BARE_EFFORT = "bare_effort"


@dataclass(frozen=True)
class NamingRules:
    """A source's naming rules (docs/architecture.md "Model identity").

    - ``variants``: ``(regex, attribute)`` pairs tried in order, repeatedly, on the end of a row's
      name; group 1 is the value (``-(high)-effort$`` -> ``effort=high``). Attribute
      ``BARE_EFFORT`` marks a bare effort suffix (needs evidence; stored as ``effort``).
    - ``systems``: every row is an agent system named with its models' ``Model:`` tags (the
      underlying model is the one tag when it names one).
    - ``model_run_benchmarks``: with ``systems``, benchmarks on which a row is instead a model run
      whose model is its single ``Model:`` tag (identity then depends on the benchmark).
    - ``system_name``: a name matching this regex is a system of several models (no underlying).
    - ``system_tag``: a row whose tags match this regex is a system (its own scaffold).
    """

    variants: tuple[tuple[str, str], ...] = ()
    systems: bool = False
    model_run_benchmarks: frozenset[str] = frozenset()
    system_name: str | None = None
    system_tag: str | None = None

    @property
    def benchmark_dependent(self) -> bool:
        """Whether a row's identity depends on its benchmark too (else on its name and tags alone)."""
        return bool(self.model_run_benchmarks)

    def fingerprint(self) -> str:
        """A canonical text of the rules (sets sorted): equal rules, equal text in every process."""
        return json.dumps({"variants": [list(v) for v in self.variants], "systems": self.systems,
                           "model_run_benchmarks": sorted(self.model_run_benchmarks),
                           "system_name": self.system_name, "system_tag": self.system_tag}, sort_keys=True)


NO_RULES = NamingRules()

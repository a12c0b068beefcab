"""How a source's page names the model of a row: declared by the source, applied by identity.

The markers every page shares (precision and serving builds, efforts, thinking budgets:
`COMMON_VARIANTS`) are declared once here and apply to every source after its own rules; where
a model's best variant is chosen (`ENTITY_KEY`) is defined here too.

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

# A precision or quantized build of one model's weights, as a name's last word spells it
# (`-bf16`, `-FP8`, `-int4`, `-AWQ`, `-GPTQ`, GGUF's `-q8_0`/`-Q4_K_M`, mlx's `-4bit`). Not
# here, because real model names end in them: `-turbo` (gpt-4-turbo is a model; only some
# hosts' `-Turbo` is a quantized build), `-mini`, `-instruct`, `-chat`, `-base`, context sizes (`-32k`).
PRECISION = (r"(?:bf16|fp16|fp32|fp8|fp6|fp4|nvfp4|mxfp4|int8|int4|w8a8|w8a16|w4a16|w4a8|awq|gptq|gguf"
             r"|[48]-?bit|q[2-8]_k(?:_[sml])?|q[2-8]_[01])")
# Inference hosts that re-serve open weights under their own name for a model: a suffix
# (`-together`) or a route prefix (`fireworks/`, `openrouter/`). Model makers' prefixes
# (`meta-llama/`, `openai/`) are aliases, not hosts.
HOSTS = (r"(?:together|together_ai|fireworks|fireworks_ai|groq|deepinfra|cerebras|sambanova|novita|hyperbolic"
         r"|nebius|chutes|openrouter|bedrock|vertex_ai)")

# The variant markers every source shares (issue 49): precision and serving builds, effort
# levels and thinking budgets written into a name are settings of one model wherever a page
# writes them, so they are declared once here and applied after each source's own `variants`
# (registry/identity.py). A pattern that starts with `^` is a prefix marker, every other one a
# suffix. Each attribute is set at most once per name: a second marker of one attribute stays
# in the name, so `effort=thinking-64k; effort=high` cannot arise (`thinking=64k; effort=high`).
COMMON_VARIANTS: tuple[tuple[str, str], ...] = (
    (rf"(?:[-_:]|\s+)({PRECISION})(?:[-_]dynamic)?$", "precision"),    # llama-3.1-405b-instruct-fp8
    (rf"\s*\(({PRECISION})\)$", "precision"),                         # Llama 4 Maverick (FP8)
    (rf"-({HOSTS})$", "host"),                                          # …-Instruct-FP8-together
    (rf"^({HOSTS})/", "host"),                                          # fireworks/kimi-k2p5
    (rf"-({EFFORT}|max)-effort$", "effort"),                            # gpt-5-high-effort
    (rf"-thinking-({EFFORT}|max)$", "effort"),                          # gpt-5-2-…-thinking-xhigh (ARC-AGI)
    (r"-thinking-(\d+k)$", "thinking"),                                 # claude-…-thinking-16k
    (r"\s+thinking\s+(\d+k)$", "thinking"),                            # Claude 3.7 Thinking 16K (ARC-AGI)
    (r"\s*\((\d+k)\s+think(?:ing)?(?:\s+tokens)?\)$", "thinking"),        # gpt-5 (32k thinking tokens) (Aider)
    (rf"\s*\(({EFFORT})\)$", "effort"),                                # o3-mini (high)
    (rf"(?:-|\s+-\s+)({EFFORT})$", BARE_EFFORT),                        # o3-high, o1 - high: with evidence
)


@dataclass(frozen=True)
class NamingRules:
    """A source's naming rules (docs/architecture.md "Model identity").

    - ``variants``: ``(regex, attribute)`` pairs tried in order, repeatedly, on the end of a row's
      name (a pattern starting ``^``: on its start); group 1 is the value (``-(high)-effort$`` ->
      ``effort=high``). Attribute ``BARE_EFFORT`` marks a bare effort suffix (needs evidence;
      stored as ``effort``). The markers every source shares (`COMMON_VARIANTS`) follow them:
      a source declares only what is its own (labels, edit formats, its spellings).
    - ``systems``: every row is an agent system named with its models' ``Model:`` tags (the
      underlying model is the one tag when it names one).
    - ``model_run_benchmarks``: with ``systems``, benchmarks on which a row is instead a model run
      whose model is its single ``Model:`` tag (identity then depends on the benchmark).
    - ``system_name``: a name matching this regex is a system of several models (no underlying).
    - ``system_tag``: a row whose tags match this regex is a system (its own scaffold).
    - ``system_over``: regexes; a name matching one is a system (a prompting method or
      tool framework the source names over a model: Epoch's copied ScienceQA board's
      ``CoT GPT-3 (AE)``, ``Chameleon (GPT-4)``) whose underlying model is the name in group 1.
    """

    variants: tuple[tuple[str, str], ...] = ()
    systems: bool = False
    model_run_benchmarks: frozenset[str] = frozenset()
    system_name: str | None = None
    system_tag: str | None = None
    system_over: tuple[str, ...] = ()

    @property
    def benchmark_dependent(self) -> bool:
        """Whether a row's identity depends on its benchmark too (else on its name and tags alone)."""
        return bool(self.model_run_benchmarks)

    @property
    def all_variants(self) -> tuple[tuple[str, str], ...]:
        """The source's own variant markers, then the shared ones (`COMMON_VARIANTS`)."""
        return self.variants + COMMON_VARIANTS

    def fingerprint(self) -> str:
        """A canonical text of the rules (sets sorted; the shared markers included, so a change
        to them re-identifies stored rows): equal rules, equal text in every process."""
        return json.dumps({"variants": [list(v) for v in self.variants],
                           "common": [list(v) for v in COMMON_VARIANTS], "systems": self.systems,
                           "model_run_benchmarks": sorted(self.model_run_benchmarks),
                           "system_name": self.system_name, "system_tag": self.system_tag,
                           "system_over": list(self.system_over)}, sort_keys=True)


NO_RULES = NamingRules()

# A row that states its model's release date (ARC Prize's `modelReleaseDate`) is about the model
# its name resolves to only if the dates agree within this many days (the 30-day guard band of
# docs/statistics.md): ARC Prize's `o3-low` released 2024-12-20 is the December 2024 preview,
# not the o3 of April 2025 that the name `o3` resolves to. The registry model the row is about
# then is the one registered as `<name>-preview` whose release date does agree
# (registry/identity.py); with none, the name keeps its model (a listing may date a model by its
# announcement: models.dev's o3-mini).
RELEASE_AGREES_DAYS = 30
PREVIEW_SUFFIX = "-preview"

# The populations a score row is ranked in (registry/identity.py decides a row's): model runs,
# agent systems, and (analysis only) each system counted under the one model it runs on.
POPULATION_MODELS, POPULATION_SYSTEMS, POPULATION_SYSTEMS_PER_MODEL = "models", "systems", "systems_per_model"

# What a "model" of a ranking is: one model in one leaderboard table and one population (model
# runs | agent systems). A model's best variant is chosen within this key, never across it, so a
# custom system run of a model cannot hide its standard runs from the models' ranking (issue 49).
# The analysis groups by it (analysis.saturation_tables) and the `leaderboard` view partitions by
# it (`{{entity_key}}`, storage/views): one definition.
ENTITY_KEY: tuple[str, ...] = ("table_id", "population", "model")

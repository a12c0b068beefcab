"""Model names of the shipped sources the registry learned (issue 51), and the merges it must not make.

Each case is a name as a source writes it; identity (registry/identity.py) with the source's own
naming rules and the shipped aliases says which model it is. The false-merge guards are names a
looser rule would map to a different model: they stay unresolved (an unknown name is better than
two models merged)."""

from __future__ import annotations

import pandas as pd
import pytest

import registry
import scrapers
from registry.identity import identify_frame

ALIASES = registry.alias_map("model")


def ident(source: str, names: list[str], benchmark: str = "x") -> pd.DataFrame:
    rows = pd.DataFrame({"source": source, "benchmark": benchmark, "snapshot_id": 1, "model_raw": names,
                         "model_tag": [None] * len(names)})
    return pd.concat([rows, identify_frame(rows, ALIASES, scrapers.naming_rules())], axis=1)


@pytest.mark.parametrize("source, name, model, variant", [
    # LiveBench: a dated Claude id without extended thinking ('-base') beside its '-thinking-32k' run
    ("livebench", "claude-4-sonnet-20250514-base", "claude-sonnet-4-20250514", "mode=base"),
    ("livebench", "claude-4-1-opus-20250805-base", "claude-opus-4-1-20250805", "mode=base"),
    ("livebench", "claude-4-1-opus-20250805", "claude-opus-4-1-20250805", ""),
    ("livebench", "claude-4-1-opus-20250805-thinking-32k", "claude-opus-4-1-20250805", "thinking=32k"),
    # ARC-AGI: 'Claude 3.7' (Anthropic) is the one Claude 3.7 there ever was, Sonnet
    ("arc_agi", "Claude 3.7", "claude-3-7-sonnet-20250219", ""),
    ("arc_agi", "Claude 3.7 Thinking 16K", "claude-3-7-sonnet-20250219", "thinking=16k"),
    # registry rows whose facts are Epoch's (release date, organisation); the names the sources use
    ("aider_edit", "WizardLM-2 8x22B", "wizardlm-2-8x22b", ""),
    ("epoch", "WizardLM-2-8x22B", "wizardlm-2-8x22b", ""),
    ("matharena", "DeepSeek-R1-Distill-Qwen-32B", "deepseek-r1-distill-qwen-32b", ""),
    # Fireworks' id: Epoch lists it with kimi-k2.5's date, organisation and capability-index scores
    ("epoch", "fireworks/kimi-k2p5", "kimi-k2.5", "host=fireworks"),
    ("artificial_analysis", "kimi-k2-5-non-reasoning", "kimi-k2.5", "mode=non-reasoning"),
    ("livebench", "arcee-trinity-large-preview", "trinity-large-preview", ""),
])
def test_a_shipped_name_resolves(source, name, model, variant):
    out = ident(source, [name]).iloc[0]
    assert (out["model"], out["variant"]) == (model, variant)


@pytest.mark.parametrize("source, name", [
    # '-base' is a setting only after a dated API id: an undated '-base' is a pretrained model
    ("livebench", "qwen2.5-72b-base"),
    # undated names that pointed at several snapshots over time (registry/README.md, alias policy)
    ("matharena", "claude-3.5-sonnet"),
    ("simple_evals", "Claude 3.5 Sonnet"),
    ("artificial_analysis", "gpt-4o"),
    # matching the name after a route's vendor prefix would take these for openrouter's
    # deepseek/deepseek-chat (aliased to deepseek-v3) and moonshotai/kimi-k2 (kimi-k2-instruct, 0711):
    # DeepSeek's deepseek-chat pointed at V2, V2.5, V3 and later; Kimi K2 had a 0711 and a 0905
    ("aider_polyglot", "deepseek-chat"),
    ("aider_polyglot", "Kimi K2"),
    ("evalplus", "CodeLlama-7B"),        # base, Python or Instruct: EvalPlus's link (a blog) does not say
    ("evalplus", "CodeLlama-70B"),       # its link says the Python model, which the registry does not hold
    # two experimental snapshots had the name (1219, 01-21): which one is not said
    ("matharena", "gemini-2.0-flash-thinking"),
    # a sibling of a registry model is another model
    ("artificial_analysis", "trinity-large-thinking"),
    ("artificial_analysis", "kimi-k2-thinking-turbo"),
])
def test_a_name_that_would_be_a_false_merge_stays_unresolved(source, name):
    out = ident(source, [name]).iloc[0]
    assert out["model"] not in set(registry.load_models()["id"]), (name, out["model"])


def test_the_base_rule_is_livebench_s_own():
    """Another source's dated '-base' name keeps it: only LiveBench says its '-base' is a run mode."""
    out = ident("lmarena", ["claude-4-sonnet-20250514-base"]).iloc[0]
    assert (out["model"], out["variant"]) == ("claude-4-sonnet-20250514-base", "")

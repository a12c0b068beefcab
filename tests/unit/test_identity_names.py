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
    # Mistral's dated API id of Codestral 22B v0.1 (24.05); EvalPlus links the weights' Hugging Face
    # repo; ollama's tag names the same weights, its quantization a setting
    ("aider_edit", "codestral-2405", "codestral-2405", ""),
    ("evalplus", "Codestral-22B-v0.1", "codestral-2405", ""),
    ("aider_edit", "codestral:22b-v0.1-q8_0", "codestral-2405", "precision=q8_0"),
    ("aider_edit", "qwen2:72b-instruct-q8_0", "qwen2-72b-instruct", "precision=q8_0"),
    # AlpacaEval 2's reference under its first key (2024-01-09: "GPT-4 Turbo", 50 %, 2048 characters),
    # later `gpt4_1106_preview` ("GPT-4 Preview (11/06)", 50 %, 2049)
    ("alpacaeval", "gpt4_turbo", "gpt-4-1106-preview", ""),
    # AlpacaEval's display name and its results key (the samples link); Epoch dates the model
    ("alpacaeval", "Davinci001", "text-davinci-001", ""),
    ("alpacaeval", "text_davinci_001", "text-davinci-001", ""),
    ("epoch", "text-davinci-001", "text-davinci-001", ""),
    ("alpacaeval", "text_davinci_003", "text-davinci-003", ""),
    ("alpacaeval", "Davinci003", "text-davinci-003", ""),
    ("alpacaeval", "gpt-3.5-turbo-16k-0613", "gpt-3.5-turbo-16k-0613", ""),
    ("alpacaeval", "gpt-3.5-turbo-0613", "gpt-3.5-turbo-0613", ""),     # the 4K model stays its own
    # rows of Epoch's copied members without a Model version, named as the paper or HELM names the
    # model: the hub pairs the name with its own Model version elsewhere (Falcon-Instruct (40B),
    # Qwen-Chat 14B, LLaMA2-Chat 13B, T5 (11B)) or dates the Model version the name spells
    ("epoch", "GPT-J (6B)", "gpt-j-6b", ""),
    ("epoch", "GPT-NeoX (20B)", "gpt-neox-20b", ""),
    ("epoch", "GPT-NeoX 20B", "gpt-neox-20b", ""),
    ("epoch", "gpt-neox-20b", "gpt-neox-20b", ""),
    ("epoch", "DeepSeek LLM Chat (67B)", "deepseek-llm-67b-chat", ""),
    ("epoch", "Falcon-Instruct (40B)", "falcon-40b-instruct", ""),
    ("epoch", "QWEN-CHAT 14B (8-shot)", "qwen-14b-chat", "shots=8"),
    ("epoch", "Qwen-14B-Chat", "qwen-14b-chat", ""),
    ("epoch", "LLAMA 2-CHAT 13B (8-shot)", "llama-2-13b-chat", "shots=8"),
    ("epoch", "LLAMA 2-CHAT 70B (8-shot)", "llama-2-70b-chat", "shots=8"),
    ("epoch", "T5 (11B)", "t5-11b", ""),
    ("epoch", "LLAMA 2-CHAT 7B (8-shot)", "llama-2-7b-chat", "shots=8"),
    ("alpacaeval", "llama-2-7b-chat-hf", "llama-2-7b-chat", ""),
    ("lmarena", "Llama-2-7B-chat", "llama-2-7b-chat", ""),
    # HELM classic's names: a version date and a size name one model each
    ("epoch", "Cohere xlarge v20221108 (52.4B)", "cohere-xlarge-v20221108", ""),
    ("epoch", "Cohere xlarge v20220609 (52.4B)", "cohere-xlarge-v20220609", ""),
    ("epoch", "Cohere Command beta (6.1B)", "cohere-command-beta-6.1b", ""),
    ("epoch", "Anthropic-LM v4-s3 (52B)", "anthropic-lm-v4-s3-52b", ""),
    # the GLaM paper's dense and MoE models; its 64B/64E written two ways
    ("epoch", "GLaM (Dense) 8B", "glam-dense-8b", ""),
    ("epoch", "GLaM (MoE) 8B/64E", "glam-moe-8b-64e", ""),
    ("epoch", "GLaM (MoE) 64B/64E", "glam-moe-64b-64e", ""),
    ("epoch", "GLaM (64B/64E) (One-shot)", "glam-moe-64b-64e", "shots=one"),
    ("epoch", "Baichuan2-Chat 13B (8-shot)", "baichuan2-13b-chat", "shots=8"),
    ("epoch", "XVERSE 13B         ", "xverse-13b", ""),
    ("epoch", "T5-Large", "t5-large", ""),
    # dated snapshots of OpenAI's chatgpt-4o-latest pointer, as Epoch and LiveBench write the date
    ("epoch", "chatgpt-4o-01-29-2025", "chatgpt-4o-latest-2025-01-29", ""),
    ("livebench", "chatgpt-4o-latest-2025-01-29", "chatgpt-4o-latest-2025-01-29", ""),
    ("livebench", "chatgpt-4o-latest-2025-03-27", "chatgpt-4o-latest-2025-03-27", ""),
    ("alpacaeval", "gpt35_turbo_instruct", "gpt-3.5-turbo-instruct", ""),
    # pointers only one snapshot ever had; a dated name without 'preview' (Google's 06-05 of 2.5 Pro)
    ("livebench", "open-mistral-nemo", "open-mistral-nemo-2407", ""),
    ("livebench", "gemini-2.5-pro-06-05", "gemini-2.5-pro-preview-06-05", ""),
    ("aider_edit", "gemini-1.5-flash-002 (0924)", "gemini-1.5-flash-002", ""),
    # registry rows whose facts Epoch, Artificial Analysis, LMArena or EvalPlus state; the
    # names the other sources use for the same model
    ("aider_polyglot", "Codestral 25.01", "codestral-2501", ""),
    ("aider_polyglot", "Gemini 2.5 Pro Preview 03-25", "gemini-2.5-pro-preview-03-25", ""),
    ("matharena", "DeepSeek-R1-Distill-Qwen-1.5B", "deepseek-r1-distill-qwen-1.5b", ""),
    ("aider_edit", "Llama-3.1-Nemotron-70B-Instruct-HF", "llama-3.1-nemotron-70b-instruct", ""),
    ("lmarena", "Llama-3.1-Nemotron-70B-Instruct", "llama-3.1-nemotron-70b-instruct", ""),
    ("alpacaeval", "Yi-Large Preview", "yi-large-preview", ""),
    ("aider_edit", "codeqwen:7b-chat-v1.5", "codeqwen1.5-7b-chat", ""),
    ("aider_edit", "qwen2.5-coder:7b-instruct", "qwen2.5-coder-7b-instruct", ""),
    ("simple_evals", "Gemini 1.0 Ultra", "gemini-1.0-ultra", ""),
    ("simple_evals", "Gemini-Ultra-1.0", "gemini-1.0-ultra", ""),
    ("lmarena", "chatgpt-4o-latest-2024-08-08", "chatgpt-4o-latest-2024-08-08", ""),
    ("lmarena", "chatgpt-4o-latest-20240808", "chatgpt-4o-latest-2024-08-08", ""),
    ("aider_edit", "Command R (08-24)", "command-r-08-2024", ""),
    ("epoch", "c4ai-command-r-08-2024", "command-r-08-2024", ""),
    # Mistral NeMo's open weights are the model Mistral's API serves as open-mistral-nemo-2407
    ("epoch", "Mistral-Nemo-Instruct-2407", "open-mistral-nemo-2407", ""),
    ("aider_edit", "ollama/mistral-nemo:12b-instruct-2407", "open-mistral-nemo-2407", ""),
    ("aider_polyglot", "Qwen3 32B", "qwen3-32b", ""),
    # HELM's names, as Epoch copies them, for models LMArena, BFCL, AlpacaEval or Artificial
    # Analysis state facts about
    ("epoch", "Gemini 1.5 Pro (0409 preview)", "gemini-1.5-pro-preview-0409", ""),
    ("lmarena", "gemini-1.5-pro-api-0409-preview", "gemini-1.5-pro-preview-0409", ""),
    ("epoch", "Arctic Instruct", "snowflake-arctic-instruct", ""),
    ("epoch", "Jamba 1.5 Large", "jamba-1.5-large", ""),
    ("epoch", "Jamba 1.5 Mini", "jamba-1.5-mini", ""),
    ("epoch", "Vicuna v1.3 (7B)", "vicuna-7b-v1.3", ""),
    ("alpacaeval", "vicuna-7b-v1.3", "vicuna-7b-v1.3", ""),
    ("epoch", "Alpaca (7B)", "alpaca-7b", ""),
    ("epoch", "Falcon-Instruct (7B)", "falcon-7b-instruct", ""),
    # xAI's beta API models, dated by Epoch: rows of their own, not grok-3 (README: kept separate)
    ("aider_polyglot", "Grok 3 Beta", "grok-3-beta", ""),
    ("aider_polyglot", "Grok 3 Mini Beta", "grok-3-mini-beta", ""),
    ("aider_edit", "gemma2:27b-instruct", "gemma-2-27b-it", ""),
    # DeepSeek's API names the two modes of one model chat (non-thinking) and reasoner (thinking)
    ("aider_polyglot", "DeepSeek-V3.2-Exp (Chat)", "deepseek-v3.2-exp", "mode=chat"),
    ("aider_polyglot", "DeepSeek-V3.2-Exp (Reasoner)", "deepseek-v3.2-exp", "mode=reasoner"),
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
    # a pointer Mistral moved to Codestral 25.01, ollama's default tag
    ("aider_edit", "codestral-latest"),
    ("aider_edit", "ollama/codestral"),
    # ollama's bare size tag is not said to be the instruct model; the later Qwen2.5 is another model
    ("aider_edit", "qwen2:72b"),
    ("aider_edit", "ollama/qwen2.5:32b-instruct"),
    # the display name "GPT-4 Turbo" is a pointer OpenAI moved (1106, 0125, 2024-04-09)
    ("alpacaeval", "GPT-4 Turbo"),
    # another davinci: 002 is neither 001 nor 003
    ("epoch", "text-davinci-002"),
    ("alpacaeval", "gpt-3.5-turbo-16k"),   # the undated pointer of the 16K model
    # a sibling of a registry model is another model
    ("artificial_analysis", "trinity-large-thinking"),
    ("artificial_analysis", "kimi-k2-thinking-turbo"),
    # Epoch's copied members: a name that does not say which size, version or fine-tune
    ("epoch", "GLaM (dense)"),             # which of the four dense sizes: not said
    ("epoch", "GLaM (MoE)"),               # the hub's own entry names no size
    ("epoch", "GPT3 175B"),                # GPT-3 davinci, not the hub's text-davinci-001 (InstructGPT)
    ("epoch", "Llama-2-7b"),               # the base model is not the chat fine-tune
    ("epoch", "Llama-2-13b"),              # the base model is not the chat fine-tune
    ("epoch", "Qwen-14B"),                 # base, not Qwen-14B-Chat
    ("epoch", "QWEN-CHAT 7B (8-shot)"),    # another size
    ("epoch", "falcon-40b"),               # base, not Falcon-40B-Instruct
    ("epoch", "GPT-Neo-2.7B"),             # GPT-Neo, not GPT-NeoX
    ("epoch", "T5-3B"),                    # another T5 size
    ("epoch", "Flan-T5-XXL"),              # a fine-tune of T5 is another model
    ("alpacaeval", "Cohere Command"),      # undated: which Command is not said
    ("epoch", "Cohere xlarge v20221108"),  # HELM's name always states the size: not guessed without it
    ("epoch", "XVerse"),                   # which XVERSE: not said
    ("livebench", "gemini-2.5-flash-06-05"),   # no Flash snapshot of that date is registered
    ("aider_polyglot", "chatgpt-4o-latest (2025-03-29)"),   # a run date, not the snapshot's
    ("epoch", "Mistral-Nemo-Base-2407"),   # the base model, not the API's instruct model
    ("epoch", "CodeQwen1.5-7B"),           # the base model, not the chat fine-tune
    ("aider_edit", "ollama/qwen2.5-coder:14b"),   # ollama's bare size tag: base or instruct not said
    ("epoch", "Qwen2.5-Coder-7B"),         # base, not instruct
    ("lmarena", "Llama-3.1-Nemotron-51B-Instruct"),   # another size
    ("epoch", "c4ai-command-r-plus"),      # R+, undated: neither Command R nor the 08-2024 R+
    ("lmarena", "chatgpt-4o-latest-20240903"),   # another snapshot
])
def test_a_name_that_would_be_a_false_merge_stays_unresolved(source, name):
    out = ident(source, [name]).iloc[0]
    assert out["model"] not in set(registry.load_models()["id"]), (name, out["model"])


def test_the_base_rule_is_livebench_s_own():
    """Another source's dated '-base' name keeps it: only LiveBench says its '-base' is a run mode."""
    out = ident("lmarena", ["claude-4-sonnet-20250514-base"]).iloc[0]
    assert (out["model"], out["variant"]) == ("claude-4-sonnet-20250514-base", "")


RELEASES = dict(zip(registry.load_models()["id"], registry.load_models()["release_date"]))


def ident_dated(source: str, names: list[str], released: list[str | None]) -> pd.DataFrame:
    rows = pd.DataFrame({"source": source, "benchmark": "x", "snapshot_id": 1, "model_raw": names,
                         "model_tag": [None] * len(names),
                         "model_release_date": pd.to_datetime(pd.Series(released, dtype="object"))})
    return pd.concat([rows, identify_frame(rows, ALIASES, scrapers.naming_rules(), RELEASES)], axis=1)


@pytest.mark.parametrize("source, name, released, model", [
    # ARC Prize's April 2025 file: `o3-low`/`o3-high` released 2024-12-20 are the December 2024
    # preview, not the o3 released in April 2025 that the name `o3` resolves to
    ("arc_agi", "o3-low", "2024-12-20", "o3-preview-2024-12-20"),
    ("arc_agi", "o3-high", "2024-12-20", "o3-preview-2024-12-20"),
    # Epoch's copy of the preview's row names it itself
    ("epoch", "o3-preview (Low)", None, "o3-preview-2024-12-20"),
    # guards: the row's date agrees with the resolved model, or states none: unchanged
    ("arc_agi", "o3-low", "2025-04-16", "o3-2025-04-16"),
    ("arc_agi", "o3-high", None, "o3-2025-04-16"),
    # a date far from the model's that no registered preview matches leaves the model as resolved
    # (models.dev dates o3-mini by its announcement, 2024-12-20): no '-preview' guess without one
    ("arc_agi", "o3-mini-high", "2024-12-20", "o3-mini-2025-01-31"),
    # a preview is matched by its date too: o3 stated 2026 is not the 2024 preview
    ("arc_agi", "o3-low", "2026-03-01", "o3-2025-04-16"),
])
def test_a_stated_release_date_picks_the_preview(source, name, released, model):
    assert ident_dated(source, [name], [released]).iloc[0]["model"] == model


@pytest.mark.parametrize("name, model, variant", [
    # the papers Epoch copies write the prompt's shots and an agent's step budget into the name:
    # settings of one model (the runs of one entry count once)
    ("QWEN-CHAT 7B (0-shot)", "QWEN-CHAT 7B", "shots=0"),
    ("QWEN-CHAT 7B (8-shot)", "QWEN-CHAT 7B", "shots=8"),
    ("GLaM (64B/64E) (One-shot)", "glam-moe-64b-64e", "shots=one"),
    ("GLaM (64B/64E) (Zero-shot)", "glam-moe-64b-64e", "shots=zero"),
    ("opencua-32b (100 steps)", "opencua-32b", "steps=100"),
    ("claude-sonnet-4-5-20250929 (100 steps)", "claude-sonnet-4-5-20250929", "steps=100"),
    # guards: a size, an expert count or a context length in parentheses is part of the model's name
    ("GPT-J (6B)", "gpt-j-6b", ""),
    ("GLaM (MoE) 8B/64E", "glam-moe-8b-64e", ""),
    ("Pythia (6.9B)", "Pythia (6.9B)", ""),
    ("Mixtral (8x7B 32K seqlen)", "Mixtral (8x7B 32K seqlen)", ""),
    ("8-shot Minerva", "8-shot Minerva", ""),
])
def test_epoch_shots_and_steps_are_settings(name, model, variant):
    out = ident("epoch", [name]).iloc[0]
    assert (out["model"], out["variant"]) == (model, variant)


def test_shots_and_steps_are_epoch_s_own():
    """Only the papers Epoch copies write shots into a name: another source keeps it."""
    out = ident("lmarena", ["QWEN-CHAT 7B (8-shot)"]).iloc[0]
    assert (out["model"], out["variant"]) == ("QWEN-CHAT 7B (8-shot)", "")


def test_an_epoch_row_named_by_its_agent_is_a_system():
    """OSWorld's rows Epoch left without a Model version are named by the agent (`System: agent`):
    an agent system over a model the hub does not name, never ranked with the model runs."""
    rows = pd.DataFrame({"source": "epoch", "benchmark": "osworld", "snapshot_id": 1,
                         "model_raw": ["acme-agent-1 (50 steps)", "claude-sonnet-4-5-20250929",
                                       "claude-sonnet-4-5-20250929 (100 steps)"],
                         "model_tag": ["System: agent", None, None]})
    out = identify_frame(rows, ALIASES, scrapers.naming_rules())
    assert out["population"].tolist() == ["systems", "models", "models"]
    assert out["underlying"].tolist()[0] is None
    assert out["model"].tolist()[1:] == ["claude-sonnet-4-5-20250929"] * 2


def test_terminal_bench_s_model_tag_names_the_one_qwen3_coder_480b():
    """Terminal-Bench's agents name their model in a `Model:` tag: Qwen3-Coder-480B had one release
    (480B-A35B-Instruct); `Qwen3-235B` (base, instruct or thinking; 2504 or 2507) names none."""
    rows = pd.DataFrame({"source": "terminal_bench", "benchmark": "terminal_bench", "snapshot_id": 1,
                         "model_raw": ["Terminus 2", "Terminus 2"],
                         "model_tag": ["Model: Qwen3-Coder-480B", "Model: Qwen3-235B"]})
    out = identify_frame(rows, ALIASES, scrapers.naming_rules())
    assert out["population"].tolist() == ["systems", "systems"]
    assert out["underlying"].tolist()[0] == "qwen3-coder-480b-a35b-instruct"
    assert out["underlying"].tolist()[1] not in set(registry.load_models()["id"])


@pytest.mark.parametrize("name, underlying", [
    # Epoch's copy of the ScienceQA board names prompting methods and tool frameworks over OpenAI's
    # API models (weights nobody outside OpenAI holds: the method can only prompt them)
    ("CoT GPT-3 (AE)", "GPT-3"),
    ("CoT GPT-3 (ALE)", "GPT-3"),
    ("CoT GPT-3 + Doc", "GPT-3"),
    ("CoT ChatGPT", "ChatGPT"),
    ("DDCoT (ChatGPT)", "ChatGPT"),
    ("Chameleon (GPT-4)", "GPT-4"),
])
def test_an_epoch_method_over_an_api_model_is_a_system_on_it(name, underlying):
    out = ident("epoch", [name]).iloc[0]
    assert (out["model"], out["population"], out["underlying"]) == (name, "systems", underlying)


@pytest.mark.parametrize("name", [
    # the same methods over open weights are fine-tunes (MM-CoT's T5, UnifiedQA fine-tuned with
    # rationales) or other models: model names of their own, never a system on the backbone
    "CoT UnifiedQA", "DDCoT (T5)", "DDCoT (MiniGPT-4)", "LG-VQA (BLIP-2)", "PILL (LLaMA-7B)",
    "Honeybee (Vicuna-13B)", "Multimodal-CoT_Base",
    # a model whose name merely contains an API model's
    "GPT-4 (8-shot)", "ChatGPT",
])
def test_other_method_names_stay_models(name):
    out = ident("epoch", [name]).iloc[0]
    assert out["population"] == "models", name


def test_methods_over_models_are_epoch_s_own():
    out = ident("lmarena", ["CoT GPT-4"]).iloc[0]
    assert (out["model"], out["population"]) == ("CoT GPT-4", "models")


@pytest.mark.parametrize("tag, underlying", [
    # SWE-bench's `Model:` tags: a Hugging Face page or repo id names one model; Mistral's dated ids
    ("Model: https://huggingface.co/Qwen/Qwen3-Coder-30B-A3B-Instruct", "qwen3-coder-30b-a3b-instruct"),
    ("Model: https://huggingface.co/Qwen/Qwen3-Coder-480B-A35B-Instruct", "qwen3-coder-480b-a35b-instruct"),
    ("Model: mistralai/Devstral-Small-2505", "devstral-small-2505"),
    ("Model: devstral-small-2507", "devstral-small-2507"),
])
def test_swebench_tags_name_registered_models(tag, underlying):
    rows = pd.DataFrame({"source": "swebench", "benchmark": "swebench_verified", "snapshot_id": 1,
                         "model_raw": ["Some Agent"], "model_tag": [tag]})
    assert identify_frame(rows, ALIASES, scrapers.naming_rules())["underlying"].tolist() == [underlying]


@pytest.mark.parametrize("name", ["devstral-small", "mistralai/devstral-small", "devstral-small-2", "Qwen3-Coder-30B"])
def test_an_undated_or_other_devstral_or_coder_name_stays_unresolved(name):
    assert ident("swebench", [name]).iloc[0]["underlying"] not in set(registry.load_models()["id"]), name

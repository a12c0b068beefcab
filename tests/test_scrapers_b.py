"""Scrapers evalplus, simple_evals, lmarena, bfcl, epoch, alpacaeval, openrouter, knowledge_cutoffs.

Fixture values were checked by hand against the fixture files (real rows cut from the
snapshots); snapshot counts were recomputed with plain json/csv/pandas reads of the raw
files, and spot values read off the raw files with grep.
"""

from __future__ import annotations

import io
import zipfile
from datetime import datetime
from pathlib import Path

import pandas as pd
import pytest

import scrapers
from helpers import SNAPSHOTS, absent_reason, fixture_scraper as scraper, one, require
from scrapers.base import ParsedSnapshot, ScrapeError

FIXTURES = Path(__file__).parent / "fixtures"
AT = datetime(2026, 1, 1)
MY_SOURCES = ("evalplus", "simple_evals", "lmarena", "bfcl", "epoch", "alpacaeval", "openrouter", "knowledge_cutoffs")
HTML_ERROR = b"<!DOCTYPE html>\n<html><head><title>503 Service Unavailable</title></head><body>busy</body></html>"


def parse_bytes(source: str, content: bytes, *, filename: str | None = None, aux: dict | None = None,
                floor: int | None = 1) -> ParsedSnapshot:
    return scraper(source, floor=floor).parse_checked(content, fetched_at=AT, aux=aux, filename=filename)


def parse(source: str, name: str, **kw) -> ParsedSnapshot:
    path = FIXTURES / source / name
    kw.setdefault("filename", path.name)
    return parse_bytes(source, path.read_bytes(), **kw)




# --- registry --------------------------------------------------------------------------
@pytest.mark.parametrize("source", MY_SOURCES)
def test_registered_with_production_url(source):
    s = scrapers.get(source)
    assert s.name == source and source in scrapers.SOURCES
    assert s.urls and all(u.startswith("https://") for u in s.urls)
    assert s.produces == ("models" if source in ("openrouter", "knowledge_cutoffs") else "scores")


def test_shared_markdown_helper_is_one_place():
    from scrapers import _markdown, knowledge_cutoffs, simple_evals
    assert simple_evals.tables is _markdown.tables and knowledge_cutoffs.tables is _markdown.tables


# --- evalplus --------------------------------------------------------------------------
def test_evalplus_pass1_layout():
    p = parse("evalplus", "results_2024-12-26.json")
    s = p.scores
    assert len(s) == 10 and len(p.rejects) == 0          # Code-13B has null mbpp/mbpp+: no rows
    assert not ((s.model == "Code-13B") & s.benchmark.str.startswith("mbpp")).any()
    r = one(s, benchmark="mbpp_plus", model="OpenCoder-8B-Instruct")
    assert r.score == pytest.approx(0.714) and r.raw_value == "71.4" and r.n_items == 378
    assert one(s, benchmark="humaneval_plus", model="Code-13B").score == pytest.approx(0.524)
    assert one(s, benchmark="humaneval", model="CodeGen-16B").n_items == 164
    assert set(s.metric) == {"proportion"}


def test_evalplus_pre_2024_04_19_layout():
    p = parse("evalplus", "results_2024-04-18.json")
    s = p.scores
    assert len(s) == 10   # CodeGen2-16B: humaneval and humaneval_plus only
    assert one(s, benchmark="mbpp_plus", model="Code-13B").score == pytest.approx(0.426)
    assert pd.isna(one(s, benchmark="mbpp", model="Code-13B").n_items)
    assert one(s, benchmark="humaneval", model="Code-13B").score == pytest.approx(0.561)
    assert one(s, benchmark="humaneval_plus", model="CodeGen2-16B").score == pytest.approx(0.165)
    assert any("MBPP+ version" in w for w in p.warnings)


def test_evalplus_old_humaneval_csv():
    s = parse("evalplus", "humaneval_2024-03-10.csv").scores
    assert len(s) == 6 and set(s.benchmark) == {"humaneval", "humaneval_plus"}
    assert one(s, benchmark="humaneval_plus", model="GPT-4 (May 2023)").score == pytest.approx(0.793)
    assert one(s, benchmark="humaneval", model="GPT-3.5-Turbo (Nov 2023)").score == pytest.approx(0.768)


# --- simple_evals ----------------------------------------------------------------------
def test_simple_evals_2024_04_group_rows_short_rows_and_settings():
    s = parse("simple_evals", "readme_2024-04-13.md").scores
    assert len(s) == 35                                   # 6 models x 6, minus Gemini's GPQA n/a
    assert not s.model.isin(["GPT4s", "REFERENCE"]).any()
    assert one(s, benchmark="drop", model="gpt-4-turbo-2024-04-09", setting="assistant").score == pytest.approx(0.86)
    assert one(s, benchmark="mmlu", model="gpt-4-turbo-2024-04-09", setting="chatgpt").score == pytest.approx(0.865)
    assert one(s, benchmark="gpqa_diamond", model="Claude-3-Opus (rerun w/ api)", setting="lmsys").score == pytest.approx(0.507)
    assert one(s, benchmark="humaneval", model="Gemini-Ultra-1.0 (report)", setting="").score == pytest.approx(0.744)
    assert "math_500" not in set(s.benchmark)


def test_simple_evals_2024_09_math500_from_group_header_and_bold_code_values():
    s = parse("simple_evals", "readme_2024-09-11.md").scores
    assert len(s) == 32
    m500 = s[s.benchmark == "math_500"]
    assert sorted(m500.model) == ["o1 (work in progress)", "o1-mini", "o1-preview"]
    assert one(s, benchmark="math_500", model="o1 (work in progress)").score == pytest.approx(0.948)
    assert one(s, benchmark="math", model="gpt-4o-2024-08-06", setting="assistant").score == pytest.approx(0.759)
    r = one(s, benchmark="humaneval", model="o1-preview")
    assert r.score == pytest.approx(0.924) and r.raw_value == "**`92.4`**" and r.setting == ""
    assert one(s, benchmark="drop", model="Claude 3.5 Sonnet").score == pytest.approx(0.871)   # link + bold cell
    assert one(s, benchmark="mgsm", model="Gemini 1.0 Ultra").score == pytest.approx(0.79)


def test_simple_evals_2025_07_footnoted_math_column_and_ragged_rows():
    s = parse("simple_evals", "readme_2025-07-09.md").scores
    assert len(s) == 61                                   # 9 models x 7, minus o1 '-' and Llama n/a
    math500 = set(s.loc[s.benchmark == "math_500", "model"])
    assert math500 == {"o3-high", "o3", "o1", "o1-preview", "o1-mini", "gpt-4.1-2025-04-14"}
    assert set(s.loc[s.benchmark == "math", "model"]) == {"gpt-4o-2024-11-20", "Claude 3.5 Sonnet", "Llama 3.1 405b"}
    r = one(s, benchmark="simpleqa", model="o1-mini")
    assert r.score == pytest.approx(0.076) and r.raw_value == "07.6"
    assert one(s, benchmark="gpqa_diamond", model="o3").score == pytest.approx(0.828)   # 'o3 [^9] [^10]'
    assert not ((s.model == "o1") & (s.benchmark == "humaneval")).any()
    assert one(s, benchmark="drop", model="Llama 3.1 405b").score == pytest.approx(0.848)  # no trailing pipe
    assert one(s, benchmark="mmlu", model="gpt-4.1-2025-04-14").setting == "assistant"


def test_simple_evals_unseen_version_new_columns():
    md = (b"## Benchmark Results\n| Model | Prompt | HealthBench | MATH-500 | MMLU |\n|-|-|-|-|-|\n"
          b"| **GPT-5** | | | | |\n| gpt-5 [^1] | n/a | 67.2 | 99.1 | 93.0 |\n")
    p = parse_bytes("simple_evals", md)
    s = p.scores.set_index("benchmark").score
    assert s.to_dict() == pytest.approx({"healthbench": 0.672, "math_500": 0.991, "mmlu": 0.93})
    assert set(p.scores.model) == {"gpt-5"}
    assert any("HealthBench" in w for w in p.warnings)


# --- lmarena ---------------------------------------------------------------------------
def test_lmarena_2023_06_table():
    s = parse("lmarena", "leaderboard_table_20230619.csv").scores
    assert len(s) == 12
    assert one(s, benchmark="arena_elo", model="Claude-v1").score == 1178 and set(s[s.benchmark == "arena_elo"].metric) == {"elo"}
    r = one(s, benchmark="mt_bench", model="GPT-4")
    assert r.score == pytest.approx(8.99) and r.metric == "score_10"
    assert one(s, benchmark="mmlu", model="GPT-3.5-turbo").score == pytest.approx(0.7)
    assert s.knowledge_cutoff.isna().all()


def test_lmarena_2023_12_table_missing_elo_is_no_row():
    s = parse("lmarena", "leaderboard_table_20231206.csv").scores
    assert len(s) == 11
    assert sorted(s.loc[s.benchmark == "arena_elo", "model"]) == ["GPT-4-0314", "GPT-4-Turbo"]
    assert one(s, benchmark="arena_elo", model="GPT-4-Turbo").score == 1217
    assert not ((s.model == "GPT-4-Turbo") & (s.benchmark == "mmlu")).any()


def test_lmarena_2025_table_uses_key_and_cutoff():
    p = parse("lmarena", "leaderboard_table_20250511.csv")
    s = p.scores
    assert len(s) == 5 and len(p.rejects) == 0          # yi-34b-chat's identical second line dropped
    assert any("duplicate" in w for w in p.warnings)
    r = one(s, benchmark="mt_bench", model="gpt-4-0314")
    assert r.score == pytest.approx(8.96) and r.knowledge_cutoff == pd.Timestamp("2021-09-01")
    assert one(s, benchmark="mmlu", model="yi-34b-chat").knowledge_cutoff == pd.Timestamp("2023-06-01")
    assert "arena_elo" not in set(s.benchmark)
    online = (FIXTURES / "lmarena" / "leaderboard_table_20250511.csv").read_bytes().replace(b"2021/9", b"Online")
    s2 = parse_bytes("lmarena", online).scores
    assert pd.isna(one(s2, benchmark="mmlu", model="gpt-4-0314").knowledge_cutoff)


def test_lmarena_arena_hard_ci():
    s = parse("lmarena", "arena_hard_auto_leaderboard_v0.1.csv").scores
    assert len(s) == 3 and set(s.benchmark) == {"arena_hard_auto"}
    r = one(s, model="gpt-4-turbo-2024-04-09")
    assert (r.score, r.ci_low, r.ci_high) == pytest.approx((0.8263, 0.8075, 0.846))
    assert r.evaluated_at == pd.Timestamp("2024-07-31")
    # without the quantile columns the CI comes from the "(minus, plus)" offsets
    df = pd.read_csv(FIXTURES / "lmarena" / "arena_hard_auto_leaderboard_v0.1.csv").drop(columns=["rating_q025", "rating_q975"])
    s2 = parse_bytes("lmarena", df.to_csv(index=False).encode()).scores
    r2 = one(s2, model="claude-3-5-sonnet-20240620")
    assert (r2.ci_low, r2.ci_high) == pytest.approx((0.7935 - 0.021, 0.7935 + 0.013))


def test_lmarena_elo_max_derived_json():
    s = parse("lmarena", "elo_data.json").scores
    assert len(s) == 4 and set(s.metric) == {"elo"}
    assert sorted(s.loc[(s.benchmark == "arena_elo_text_full") & (s.model == "gpt-4o-2024-05-13"), "setting"]) == \
        ["2024-06-29", "2024-07-06"]
    r = one(s, benchmark="arena_elo_text_full", model="gemini-2.5-pro-preview-05-06")
    assert r.score == pytest.approx(1446.0525) and r.evaluated_at == pd.Timestamp("2025-05-11")
    assert one(s, benchmark="arena_elo_vision_full").score == pytest.approx(1225.8014)


def test_lmarena_aux_arena_hard_is_parsed_with_the_table():
    aux = {"arena_hard_auto_leaderboard_v0.1.csv": (FIXTURES / "lmarena" / "arena_hard_auto_leaderboard_v0.1.csv").read_bytes()}
    p = parse("lmarena", "leaderboard_table_20250511.csv", aux=aux)
    assert p.scores.benchmark.value_counts().to_dict() == {"mmlu": 3, "mt_bench": 2, "arena_hard_auto": 3}


# --- bfcl ------------------------------------------------------------------------------
def test_bfcl_overall_2024_10_modes_cost_and_na():
    s = parse("bfcl", "data_overall_2024-10-21.csv").scores
    r = one(s, benchmark="bfcl_overall", model="GPT-4o-2024-08-06")
    assert r.score == pytest.approx(0.6219) and r.setting == "FC" and r.raw_value == "62.19%"
    assert one(s, benchmark="bfcl_live_acc", model="GPT-4o-2024-08-06").score == pytest.approx(0.7543)
    c = one(s, benchmark="bfcl_cost_per_1k_function_calls", model="GPT-4-turbo-2024-04-09")
    assert c.score == pytest.approx(19.49) and c.metric == "cost_usd"
    assert one(s, benchmark="bfcl_overall", model="Command-R-Plus").setting == "FC Original"
    assert "bfcl_multi_turn_composite" not in set(s.benchmark)           # all N/A
    assert not s.benchmark.str.contains("latency|rank|license|organization|link").any()
    assert len(s) == 4 * 24   # 23 categories (composite all N/A) + overall + cost, no other N/A


def test_bfcl_overall_2025_12_v4_columns():
    s = parse("bfcl", "data_overall_2025-12-16.csv").scores
    assert one(s, benchmark="bfcl_overall", model="BitAgent-Bounty-8B").setting == ""
    assert one(s, benchmark="bfcl_overall", model="DeepSeek-V3.2-Exp").setting == "Prompt + Thinking"
    t = one(s, benchmark="bfcl_total_cost", model="Claude-Opus-4-5-20251101")
    assert t.score == pytest.approx(86.55) and t.metric == "cost_usd"
    assert one(s, benchmark="bfcl_web_search_acc", model="Claude-Opus-4-5-20251101").score == pytest.approx(0.845)
    assert not s.benchmark.str.contains("format_sensitivity").any()


def test_bfcl_malformed_header_is_realigned_by_type_with_a_warning():
    p = parse("bfcl", "data_v1v2_2024-03-20.csv")
    s = p.scores
    assert len(s) == 36 and s.benchmark.nunique() == 12   # 3 models x (overall + 11 categories)
    assert p.meta["realigned_header"][:6] == ["Rank", "Model", "Model Link", "Organization", "License", "Overall Acc"]
    assert any("realigned" in w for w in p.warnings)
    r = one(s, benchmark="bfcl_overall", model="GPT-4-1106-Preview")
    assert r.score == pytest.approx(0.8428) and r.setting == "FC"
    assert one(s, benchmark="bfcl_relevance_detection", model="GPT-4-1106-Preview").score == pytest.approx(0.8875)
    assert one(s, benchmark="bfcl_ast_summary", model="Gorilla-OpenFunctions-v2").score == pytest.approx(0.8433)
    assert set(s.model) == {"GPT-4-1106-Preview", "GPT-4-0125-Preview", "Gorilla-OpenFunctions-v2"}


def test_bfcl_unrealignable_header_is_an_error():
    lines = (FIXTURES / "bfcl" / "data_v1v2_2024-03-20.csv").read_text().splitlines()
    broken = "\n".join([lines[0]] + [line + ",extra text" for line in lines[1:]]).encode()
    with pytest.raises(ScrapeError, match=r"\[bfcl\].*16 names but rows have 18 fields"):
        parse_bytes("bfcl", broken)


def test_bfcl_v1v2_2024_08_modes():
    s = parse("bfcl", "data_v1v2_2024-08-14.csv").scores
    assert one(s, benchmark="bfcl_overall", model="Claude-3.5-Sonnet-20240620").score == pytest.approx(0.9053)
    assert "FC Any" in set(s.setting)
    assert one(s, benchmark="bfcl_cost_per_1k_function_calls", model="Functionary-Medium-v3.1").score == pytest.approx(85.52)


# --- epoch -----------------------------------------------------------------------------
def test_epoch_runs_csv_with_quoted_newlines():
    s = parse("epoch", "gpqa_diamond.csv").scores
    assert len(s) == 4 and set(s.benchmark) == {"gpqa_diamond"}
    r = one(s, model="gpt-5.4-mini-2026-03-17")    # `_high` is an effort setting, not part of the model
    assert r.score == pytest.approx(0.8358585858585859) and r.stderr == pytest.approx(0.022274469189069883)
    assert r.model_release_date == pd.Timestamp("2026-03-17")
    assert r.evaluated_at == pd.Timestamp("2026-04-15 14:03:19")
    assert r.setting == "effort=high; run=AQF46S9hBhosKPEMy3fyB9"
    assert one(s, model="glm-4.7").score == pytest.approx(0.8333333333333334)   # the row after a multi-line note
    assert pd.isna(one(s, model="grok-4-0709").evaluated_at)


def test_epoch_snapshot_file_name_and_several_runs_of_one_model():
    content = (FIXTURES / "epoch" / "swe_bench_verified.csv").read_bytes()
    p = parse_bytes("epoch", content, filename="epoch_swe_bench_verified_2026-04-19.csv")
    s = p.scores
    assert set(s.benchmark) == {"swebench_verified"} and len(s) == 3 and len(p.rejects) == 0
    runs = s[s.model == "claude-opus-4-6"].set_index("setting").score
    assert runs.to_dict() == pytest.approx({"run=2hH2GAPUFaJR7pfVKhhicg": 0.7871900826446281,
                                            "run=aQiAg6mt8HPHXjKcJvax2d": 0.756198347107438})


def test_epoch_eci_blank_scores_are_skipped_with_a_count():
    p = parse("epoch", "epoch_capabilities_index.csv")
    s = p.scores
    assert len(s) == 2 and set(s.benchmark) == {"epoch_capabilities_index"} and set(s.metric) == {"index"}
    r = one(s, model="claude-3-5-sonnet-20240620")
    assert r.score == 130.0 and r.model_release_date == pd.Timestamp("2024-06-20")
    assert any("3 of 5" in w for w in p.warnings) and len(p.rejects) == 0


def test_epoch_zip_members_name_their_benchmarks():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name in ("gpqa_diamond.csv", "swe_bench_verified.csv", "epoch_capabilities_index.csv"):
            z.write(FIXTURES / "epoch" / name, f"benchmark_data/{name}")
        z.writestr("benchmark_data/gsm8k_external.csv", "Model version,EM,Release date\ngpt-4,0.92,2023-03-14\n")
        z.writestr("benchmark_data/README.md", "Epoch AI data, CC-BY 4.0")
    p = parse_bytes("epoch", buf.getvalue(), filename="benchmark_data.zip")
    assert p.scores.benchmark.value_counts().to_dict() == {"gpqa_diamond": 4, "swebench_verified": 3,
                                                           "epoch_capabilities_index": 2}
    assert any("gsm8k_external.csv" in w for w in p.warnings)


def test_epoch_runs_csv_without_a_name_is_an_error():
    with pytest.raises(ScrapeError, match=r"\[epoch\].*file name"):
        parse_bytes("epoch", (FIXTURES / "epoch" / "gpqa_diamond.csv").read_bytes(), filename=None)


# --- alpacaeval ------------------------------------------------------------------------
def test_alpacaeval_src_csv_with_stderr_and_exclusions():
    p = parse("alpacaeval", "weighted_alpaca_eval_gpt4_turbo_leaderboard.csv")
    s = p.scores
    assert len(s) == 10 and set(s.benchmark) == {"alpacaeval_2_lc", "alpacaeval_2"}
    r = one(s, benchmark="alpacaeval_2_lc", model="SelfMoA_gemma-2-9b-it-WPO-HB")
    assert r.score == pytest.approx(0.7853928111481099) and r.stderr == pytest.approx(0.003042788133382446)
    assert r.n_items == 805 and r.excluded_reason == ""
    null = one(s, benchmark="alpacaeval_2_lc", model="NullModel")
    assert null.score == pytest.approx(0.8645780691307947) and "adversarial" in null.excluded_reason
    assert "adversarial" in one(s, benchmark="alpacaeval_2", model="gpt4_gamed").excluded_reason
    assert pd.isna(one(s, benchmark="alpacaeval_2_lc", model="gpt4_gamed").stderr)
    assert "dev" in one(s, benchmark="alpacaeval_2", model="gpt4_1106_preview_verbose").excluded_reason
    assert one(s, benchmark="alpacaeval_2", model="alpaca-7b_concise").n_items == 804
    assert one(s, benchmark="alpacaeval_2", model="NullModel").stderr == pytest.approx(0.009090102449662572)


def test_alpacaeval_v1_aux_by_file_name():
    aux = {"alpaca_eval_gpt4_leaderboard.csv": (FIXTURES / "alpacaeval" / "alpaca_eval_gpt4_leaderboard.csv").read_bytes()}
    s = parse("alpacaeval", "weighted_alpaca_eval_gpt4_turbo_leaderboard.csv", aux=aux).scores
    v1 = s[s.benchmark == "alpacaeval_1"]
    assert len(v1) == 3
    r = one(v1, model="gpt4_turbo")
    assert r.score == pytest.approx(0.9769900497512438) and r.stderr == pytest.approx(0.005104849118311993)
    assert r.n_items == 804


def test_alpacaeval_docs_csvs():
    old = parse("alpacaeval", "alpacaeval_v2_2024-01-09.csv")
    assert len(old.scores) == 3 and set(old.scores.benchmark) == {"alpacaeval_2"}
    assert one(old.scores, model="GPT-4 Turbo").score == 0.5 and one(old.scores, model="GPT-4").n_items == 805
    assert any("length_controlled_winrate" in w for w in old.warnings)
    new = parse("alpacaeval", "alpacaeval_v2_2024-12-27.csv")
    assert len(new.scores) == 8 and len(new.rejects) == 2   # 'GPT 3.5 Turbo (06/13)' is listed twice
    assert "adversarial" in one(new.scores, benchmark="alpacaeval_2_lc", model="NullModel (adversarial)").excluded_reason
    assert "adversarial" in one(new.scores, benchmark="alpacaeval_2", model="GPT-4 (Adversarial)").excluded_reason
    v1 = parse("alpacaeval", "alpacaeval_v1_2024-05-17.csv").scores
    assert set(v1.benchmark) == {"alpacaeval_1"} and len(v1) == 3
    assert one(v1, model="GPT-4 Preview (11/06)").score == pytest.approx(0.9769900497512438)


def test_alpacaeval_without_file_name_assumes_v2_and_warns():
    p = parse("alpacaeval", "alpacaeval_v2_2024-01-09.csv", filename=None)
    assert set(p.scores.benchmark) == {"alpacaeval_2"} and any("assuming AlpacaEval 2" in w for w in p.warnings)


# --- openrouter ------------------------------------------------------------------------
def test_openrouter_models():
    p = parse("openrouter", "models.json")
    m = p.models.set_index("model")
    assert sorted(m.index) == ["anthropic/claude-opus-4.7-fast", "liquid/lfm-2.5-1.2b-thinking",
                               "openai/gpt-4", "openai/gpt-oss-120b"]
    assert len(p.scores) == 0 and set(m.provenance) == {"listing"}
    gpt4 = m.loc["openai/gpt-4"]
    assert gpt4.release_date == pd.Timestamp("2023-05-28") and gpt4.knowledge_cutoff == pd.Timestamp("2021-09-30")
    assert gpt4.org == "OpenAI" and pd.isna(gpt4.open_weights)
    oss = m.loc["openai/gpt-oss-120b"]
    assert oss.release_date == pd.Timestamp("2025-08-05 17:17:11") and bool(oss.open_weights) is True
    assert m.loc["anthropic/claude-opus-4.7-fast"].release_date == pd.Timestamp("2026-05-12 19:10:11")
    assert m.loc["liquid/lfm-2.5-1.2b-thinking"].org == "LiquidAI"
    assert any("router" in w for w in p.warnings) and any("variant" in w for w in p.warnings)


# --- knowledge_cutoffs -----------------------------------------------------------------
def test_knowledge_cutoffs_2026_readme():
    p = parse("knowledge_cutoffs", "readme_2026-05-04.md")
    m = p.models.set_index("model")
    assert len(m) == 9 and "Qwen3" not in m.index and any("Qwen3" in w for w in p.warnings)
    expect = {
        "GPT-4*": ("2021-09-01", "inferred"),                 # Azure docs, not OpenAI's
        "GPT-4.1": ("2024-06-01", "vendor_doc"),              # platform.openai.com via web.archive.org
        "Claude 2": ("2023-01-01", "inferred"),               # 'early 2023', docsbot.ai
        "Claude 4.5 Sonnet": ("2025-07-01", "vendor_doc"),    # training-data cut-off, later than reliable 2025.01
        "LLama-2-7B, 13B, 70B": ("2023-07-01", "inferred"),   # 'Pretraining 2022.09, Finetuning 2023.07'
        "LLama-3-7B": ("2023-03-01", "vendor_doc"),           # github.com/meta-llama
        "Qwen2-7B-Instruct": ("2023-01-01", "inferred"),      # '2023'
        "Qwen2.5": ("2023-12-01", "inferred"),                # 'end of 2023', an issue thread
    }
    for model, (cutoff, provenance) in expect.items():
        assert (m.loc[model].knowledge_cutoff, m.loc[model].provenance) == (pd.Timestamp(cutoff), provenance), model
    assert m.loc["o1"].org == "OpenAI" and m.loc["Claude 2"].org == "Anthropic"
    assert m.release_date.isna().all()


def test_knowledge_cutoffs_2024_readme_and_floor():
    p = parse("knowledge_cutoffs", "readme_2024-11-14.md")
    m = p.models.set_index("model")
    assert list(m.index) == ["Gemini 1.0 Pro", "Gemini 1.5 Pro"]
    assert m.loc["Gemini 1.0 Pro"].knowledge_cutoff == pd.Timestamp("2023-02-01")
    assert m.loc["Gemini 1.0 Pro"].provenance == "vendor_doc"
    with pytest.raises(ScrapeError, match=r"\[knowledge_cutoffs\].*floor of 20"):
        parse("knowledge_cutoffs", "readme_2024-11-14.md", floor=None)


# --- column order does not matter ------------------------------------------------------
@pytest.mark.parametrize("source,name,filename", [
    ("lmarena", "leaderboard_table_20250511.csv", None),
    ("lmarena", "arena_hard_auto_leaderboard_v0.1.csv", None),
    ("bfcl", "data_overall_2025-12-16.csv", None),
    ("epoch", "gpqa_diamond.csv", "gpqa_diamond.csv"),
    ("alpacaeval", "alpacaeval_v2_2024-12-27.csv", "alpacaeval_v2_2024-12-27.csv"),
    ("alpacaeval", "weighted_alpaca_eval_gpt4_turbo_leaderboard.csv", "weighted_alpaca_eval_gpt4_turbo_leaderboard.csv"),
    ("evalplus", "humaneval_2024-03-10.csv", None),
])
def test_reordered_columns_give_the_same_rows(source, name, filename):
    path = FIXTURES / source / name
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    reordered = df[list(df.columns)[::-1]]
    key = ["benchmark", "model", "setting"]
    a = parse_bytes(source, path.read_bytes(), filename=filename).scores.sort_values(key).reset_index(drop=True)
    b = parse_bytes(source, reordered.to_csv(index=False).encode(), filename=filename).scores
    pd.testing.assert_frame_equal(a, b.sort_values(key).reset_index(drop=True))


# --- errors ----------------------------------------------------------------------------
EMPTY = {
    "evalplus": b"{}",
    "simple_evals": b"## Benchmark Results\n| Model | Prompt | MMLU |\n|:--:|:--:|:--:|\n",
    "lmarena": b"key,Model,MT-bench (score),MMLU,Knowledge cutoff date,License,Organization,Link\n",
    "bfcl": b"Rank,Overall Acc,Model,Model Link,Organization,License\n",
    "epoch": b"Model version,mean_score,Best score (across scorers),Release date,stderr,Started at,id\n",
    "alpacaeval": b",win_rate,standard_error,n_total,length_controlled_winrate,lc_standard_error\n",
    "openrouter": b'{"data": []}',
    "knowledge_cutoffs": b"## OpenAI\n| Model Name | Company | Cut-off | Source |\n| --- | --- | --- | --- |\n",
}
MISSING_COLUMN = {
    "evalplus": (b'{"GPT-4": {"link": "x", "pass@10": {"humaneval": 90.0}}}', "pass@1"),
    "simple_evals": (b"| Name | Prompt | MMLU |\n|--|--|--|\n| gpt-4 | n/a | 86.4 |\n", "Model"),
    "lmarena": (b"name,MT-bench (score)\ngpt-4,8.99\n", "Model"),
    "bfcl": (b"Rank,Model,Live Acc\n1,GPT-4 (FC),70.00%\n", "overall acc"),
    "epoch": (b"Model version,Release date,stderr\ngpt-4,2023-03-14,0.02\n", "mean_score"),
    "alpacaeval": (b",standard_error,n_total\ngpt4,1.0,805\n", "win_rate"),
    "openrouter": (b'{"data": [{"name": "OpenAI: GPT-4", "created": 1685232000}]}', "id"),
    "knowledge_cutoffs": (b"| Model Name | Company | Source |\n|--|--|--|\n| GPT-4 | OpenAI | x |\n", "Cut-off"),
}


@pytest.mark.parametrize("source", MY_SOURCES)
def test_html_error_page_is_a_scrape_error(source):
    with pytest.raises(ScrapeError, match=rf"\[{source}\].*HTML"):
        parse_bytes(source, HTML_ERROR, filename="gpqa_diamond.csv")


@pytest.mark.parametrize("source", MY_SOURCES)
def test_empty_table_is_a_scrape_error(source):
    with pytest.raises(ScrapeError, match=rf"\[{source}\]") as info:
        parse_bytes(source, EMPTY[source], filename="gpqa_diamond.csv")
    assert info.value.source == source


@pytest.mark.parametrize("source", MY_SOURCES)
def test_missing_mandatory_column_names_it(source):
    content, column = MISSING_COLUMN[source]
    with pytest.raises(ScrapeError, match=rf"\[{source}\]") as info:
        parse_bytes(source, content, filename="gpqa_diamond.csv")
    assert column.lower() in info.value.reason.lower()


# --- every snapshot file ---------------------------------------------------------------
# file -> (source, kept rows, rejects, spot checks {(benchmark, model, setting): score})
SNAPSHOT_SCORES = {
    "evalplus/evalplus_2024-04-18.json": ("evalplus", 342, 0, {("humaneval_plus", "Llama3-8B-instruct", ""): 0.567}),
    "evalplus/evalplus_2024-12-26.json": ("evalplus", 428, 0, {("mbpp_plus", "OpenCoder-8B-Instruct", ""): 0.714}),
    "evalplus/evalplus_humaneval_2024-03-10.csv": ("evalplus", 160, 0, {("humaneval", "GPT-4 (May 2023)", ""): 0.884}),
    "simple_evals/simple_evals_readme_2024-04-13.md": ("simple_evals", 64, 0,
                                                       {("mmlu", "gpt-4-turbo-2024-04-09", "chatgpt"): 0.865}),
    "simple_evals/simple_evals_readme_2024-09-11.md": ("simple_evals", 105, 0, {("math_500", "o1-mini", ""): 0.90}),
    "simple_evals/simple_evals_readme_2025-07-09.md": ("simple_evals", 214, 0, {("simpleqa", "o1-mini", ""): 0.076,
                                                                                 ("math_500", "o3-mini-high", ""): 0.979}),
    "lmarena/lmarena_arena_hard_auto_v0.1_2024-08-01.csv": ("lmarena", 60, 0,
                                                            {("arena_hard_auto", "claude-3-opus-20240229", ""): 0.6036}),
    "lmarena/lmarena_elo_max_derived_2025-05-14.json": ("lmarena", 2050, 0,
                                                        {("arena_elo_text_coding", "gemini-2.5-pro-preview-05-06", "2025-05-11"): 1456.6593}),
    "lmarena/lmarena_leaderboard_table_20230619_2023-07-01.csv": ("lmarena", 81, 0, {("mt_bench", "Vicuna-33B", ""): 7.12}),
    "lmarena/lmarena_leaderboard_table_20231206_2023-12-07.csv": ("lmarena", 150, 0, {("arena_elo", "Vicuna-33B", ""): 1093}),
    "lmarena/lmarena_leaderboard_table_20250511_2025-05-12.csv": ("lmarena", 169, 0,
                                                                  {("mmlu", "claude-3-5-sonnet-20240620", ""): 0.887}),
    "bfcl/bfcl_data_overall_2024-10-21.csv": ("bfcl", 1405, 0, {("bfcl_overall", "GPT-4o-2024-08-06", "FC"): 0.6219}),
    "bfcl/bfcl_data_overall_2024-12-31.csv": ("bfcl", 2087, 0, {("bfcl_overall", "watt-tool-70B", "FC"): 0.7424}),
    "bfcl/bfcl_data_overall_2025-12-16.csv": ("bfcl", 2834, 0,
                                              {("bfcl_overall", "Claude-Opus-4-5-20251101", "FC"): 0.7747}),
    "bfcl/bfcl_data_v1v2_2024-03-20.csv": ("bfcl", 264, 0, {("bfcl_overall", "GPT-4-1106-Preview", "FC"): 0.8428}),
    "bfcl/bfcl_data_v1v2_2024-08-14.csv": ("bfcl", 1269, 0,
                                           {("bfcl_overall", "Claude-3.5-Sonnet-20240620", "Prompt"): 0.9053}),
    "epoch/epoch_epoch_capabilities_index_2026-03-12.csv": ("epoch", 283, 0,
                                                            {("epoch_capabilities_index", "claude-3-5-sonnet-20240620", ""): 130.0}),
    "epoch/epoch_epoch_capabilities_index_2026-04-19.csv": ("epoch", 348, 0, {}),
    "epoch/epoch_gpqa_diamond_2026-04-19.csv": ("epoch", 157, 0, {}),
    "epoch/epoch_otis_mock_aime_2024_2025_2026-04-19.csv": ("epoch", 130, 0, {}),
    "epoch/epoch_swe_bench_verified_2026-03-09.csv": ("epoch", 24, 0, {}),
    "epoch/epoch_swe_bench_verified_2026-04-19.csv": ("epoch", 25, 0,
                                                      {("swebench_verified", "gpt-5.3-codex", "effort=high; run=6w5buMbgeEqtRoE55cLZVv"): 0.7479338842975206}),
    "alpacaeval/alpacaeval_v1_2024-05-17.csv": ("alpacaeval", 102, 0, {("alpacaeval_1", "XwinLM 70b V0.3", ""): 0.97636815920398}),
    "alpacaeval/alpacaeval_v2_2024-01-09.csv": ("alpacaeval", 11, 0, {("alpacaeval_2", "Yi 34B Chat", ""): 0.293171781590625}),
    "alpacaeval/alpacaeval_v2_2024-12-27.csv": ("alpacaeval", 420, 2, {}),
    "alpacaeval/alpacaeval_v2_src_with_stderr_2024-06-26.csv": ("alpacaeval", 366, 0,
                                                                {("alpacaeval_2_lc", "Together-MoA", ""): 0.6537996976852163}),
    "alpacaeval/alpacaeval_v2_src_with_stderr_2024-12-28.csv": ("alpacaeval", 446, 0, {}),
}
# epoch: a second run-file spot value per benchmark id
EPOCH_SPOTS = {"epoch/epoch_otis_mock_aime_2024_2025_2026-04-19.csv": ("otis_mock_aime_2024_2025", "o3-2025-04-16", 0.8388888888888889)}


def _snapshot(rel: str) -> Path:
    path = SNAPSHOTS / rel
    if not path.parent.is_dir():
        pytest.skip(absent_reason(path.parent))
    assert path.exists(), f"{rel} listed but missing"
    return path


@pytest.mark.parametrize("rel", sorted(SNAPSHOT_SCORES))
def test_snapshot_scores(rel):
    source, kept, rejected, spots = SNAPSHOT_SCORES[rel]
    path = _snapshot(rel)
    p = parse_bytes(source, path.read_bytes(), filename=path.name, floor=None)
    assert (len(p.scores), len(p.rejects)) == (kept, rejected)
    assert p.scores.model.notna().all() and p.scores.score.notna().all()
    proportion = p.scores[p.scores.metric == "proportion"].score
    assert proportion.between(0, 1).all()
    for (bench, model, setting), score in spots.items():
        assert one(p.scores, benchmark=bench, model=model, setting=setting).score == pytest.approx(score), (bench, model)
    if rel in EPOCH_SPOTS:
        bench, model, score = EPOCH_SPOTS[rel]
        assert one(p.scores, benchmark=bench, model=model).score == pytest.approx(score)


def test_snapshot_folders_have_no_unlisted_files():
    """Every file of my sources' snapshot folders is covered by a parametrized test."""
    for folder in ("evalplus", "simple_evals", "lmarena", "bfcl", "epoch", "alpacaeval"):
        if not (SNAPSHOTS / folder).is_dir():
            pytest.skip(absent_reason(SNAPSHOTS / folder))
        for f in (SNAPSHOTS / folder).iterdir():
            assert f"{folder}/{f.name}" in SNAPSHOT_SCORES, f"unlisted snapshot {folder}/{f.name}"


def test_snapshot_alpacaeval_exclusions():
    path = _snapshot("alpacaeval/alpacaeval_v2_src_with_stderr_2024-12-28.csv")
    s = parse_bytes("alpacaeval", path.read_bytes(), filename=path.name, floor=None).scores
    excluded = s[s.excluded_reason != ""]
    assert set(excluded[excluded.excluded_reason.str.contains("adversarial")].model) == {"NullModel", "gpt4_gamed"}
    assert excluded.model.nunique() == 14    # + 12 mode=dev prompt variants


def test_snapshot_openrouter():
    path = _snapshot("model_metadata/openrouter_models_2026-05-15.json")
    p = parse_bytes("openrouter", path.read_bytes(), filename="models", floor=None)
    m = p.models.set_index("model")
    assert len(m) == 334            # 364 - 5 routers - 8 '~' aliases - 17 folded variants
    assert m.knowledge_cutoff.notna().sum() == 190
    assert m.loc["openai/gpt-oss-120b"].knowledge_cutoff == pd.Timestamp("2024-06-30")


@pytest.mark.parametrize("name,count,spots", [
    ("model_metadata_cutoff_dates_readme_2024-11-14.md", 39,
     {"Claude 3.5 Sonnet": "2024-04-01", "LLama-2-7B,13B,70B": "2023-07-01", "Qwen2.5": "2023-12-01"}),
    ("model_metadata_cutoff_dates_readme_2026-05-04.md", 94,
     {"Claude 4.6 Sonnet": "2026-01-01", "GPT-5": "2024-09-30", "QwQ-32B": "2024-11-28"}),
])
def test_snapshot_knowledge_cutoffs(name, count, spots):
    path = _snapshot(f"model_metadata/{name}")
    m = parse_bytes("knowledge_cutoffs", path.read_bytes(), filename="README.md", floor=None).models.set_index("model")
    assert len(m) == count and m.index.is_unique
    for model, cutoff in spots.items():
        assert m.loc[model].knowledge_cutoff == pd.Timestamp(cutoff), model

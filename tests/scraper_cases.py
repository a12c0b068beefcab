"""Declared test cases of the scrapers: a file, how to parse it, and what must come out.

One parametrised test (tests/test_scraper_cases.py) runs every case. A case names a fixture
(`tests/fixtures/<file>`, real rows cut from the leaderboards) or a real snapshot
(`../shared/snapshots/<file>`, skipped with a reason when absent), and declares row counts and
spot values. Fixture values were checked by hand against the fixture files; snapshot counts were
recomputed with plain json/csv/yaml/pandas reads of the raw files and spot values read off the
raw files with grep. Adding a leaderboard: add its cases here (see README "Add a leaderboard").

Spot values: `Spot(where, expect)` finds exactly one row of `table` matching `where` and checks
each expected column: a float is compared with pytest.approx, a date string against a datetime
column as a Timestamp, None means missing (NaN/NaT/NA), `Has("x")` a substring. `Absent(where)`
says no row matches.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Has:
    """The cell contains this substring."""

    text: str


@dataclass(frozen=True)
class Spot:
    where: dict[str, Any]
    expect: dict[str, Any]
    table: str = "scores"


@dataclass(frozen=True)
class Absent:
    where: dict[str, Any]
    table: str = "scores"


@dataclass(frozen=True)
class Case:
    source: str
    file: str                                  # under tests/fixtures/, or ../shared/snapshots/ if snapshot
    snapshot: bool = False
    filename: str | None = "<file>"            # the name passed to parse ("<file>": the file's own name)
    aux: tuple[tuple[str, str], ...] = ()      # (name given to parse, file under the same root)
    real_floor: bool = False                   # parse with the source's real row floor (default: floor 1)
    scores: int | None = None                  # expected row counts (None: not declared)
    items: int | None = None
    models: int | None = None
    rejects: int | None = None
    excluded: int | None = None                # score rows with a non-empty excluded_reason
    unique_models: bool = False                # the models table has one row per model name
    all_missing: tuple[tuple[str, str], ...] = ()   # (table, column) missing on every row
    no_benchmark_like: str | None = None       # a regex no scores.benchmark may contain
    benchmarks: frozenset[str] | None = None   # the exact set of benchmarks in scores
    meta: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()             # each a substring of some warning
    spots: tuple[Spot | Absent, ...] = ()
    id: str = ""

    @property
    def name(self) -> str:
        return self.id or f"{'snap' if self.snapshot else 'fix'}:{self.file}"


def S(table: str = "scores", /, **where: Any):
    """`S(model="x")(score=0.5)`: a spot on `table` (a short way to write Spot)."""
    return lambda **expect: Spot(where, expect, table)


def snap(source: str, file: str, scores: int, spots: tuple = (), **kw: Any) -> Case:
    """A real snapshot, parsed with its source's real floor."""
    return Case(source, file, snapshot=True, real_floor=True, scores=scores, spots=spots, **kw)


LB_AUX = lambda release: (("categories_%s.json" % release, "livebench/categories_%s.json" % release),)  # noqa: E731

# issue 21 (src1): a tau2_bench manifest with its submission files (aux named as backfill names them)
TAU2_FIX = tuple((f"sub_{d}.json", f"tau2_bench/sub_{d}.json") for d in (
    "glm5-2_zai_2026-06-21", "gpt-5-4_sierra_2026-03-25", "gpt-realtime-1.5_sierra_2026-03-03",
    "gemini-3-pro_google_2025-11-18", "gpt-5_sierra_2025-08-09"))
TAU2_DIRS_2025_12_17 = """claude-3-7-sonnet_anthropic_2024-06-20 claude-opus-4_anthropic_2025-05-22
claude-opus-4-1_anthropic_2025-01-15 claude-sonnet-4_anthropic_2025-05-22 claude-sonnet-4-5_anthropic_2025-10-02
gpt-4-1_openai_2024-06-20 gpt-4-1-mini_openai_2024-06-20 kimi-k2_moonshot-ai_2025-07-11 o3_openai_2025-01-15
o4-mini_openai_2024-06-20 gpt-5_sierra_2025-08-09 qwen3-max_qwen_2024_09_23 gemini-3-pro_google_2025-11-18
deepseek-v3.2_deepseek_2025-12-01 qwen3-max_qwen_2025-10-30 toolorchestra_nvidia_2025-12-02""".split()
TAU2_DIRS_2026_07_01 = """claude-opus-4-5_sierra_2026-02-26 claude-sonnet-4-5_sierra_2026-02-26 gpt-5-2_sierra_2026-02-26
gpt-5-2-none_sierra_2026-02-26 glm-5-think_sierra_2026-03-02 qwen3.5-397b-a17b-think_sierra_2026-03-02
gemini-3-flash_sierra_2026-03-02 gemini-3-pro_sierra_2026-03-02 distyl-buttonagent_distyl_2026-03-25
gpt-5-4_sierra_2026-03-25 raft-30b-a3b_neu_2026-04-29 gpt-5-5_sierra_2026-05-05 claude-opus-4-6_sierra_2026-05-05
claude-opus-4-7_sierra_2026-05-05 gemini-2-5-pro_sierra_2026-05-05 gemini-3-1-pro-preview_sierra_2026-05-05
grok-4-fast_sierra_2026-05-05 grok-4-1-fast_sierra_2026-05-05 grok-4-2_sierra_2026-05-05 glm5-2_zai_2026-06-21
gpt-realtime-1.5_sierra_2026-03-03 gemini-live-2.5-flash_sierra_2026-03-03 xai-realtime_sierra_2026-03-03
grok-voice-think-fast-1-0_xai_2026-04-21 gemini-3-1-flash-live-preview-thinking-high_google_2026-04-02
gemini-3-1-flash-live-preview-thinking-minimal_google_2026-04-13 gpt-realtime-1-0_openai_2026-04-13
livekit-cascaded_livekit_2026-05-19 gpt-realtime-2_openai_2026-06-24 gpt-realtime-2_openai_2026-06-29
gpt-realtime-2-minimal_openai_2026-07-01 claude-3-7-sonnet_anthropic_2024-06-20 claude-opus-4_anthropic_2025-05-22
claude-opus-4-1_anthropic_2025-01-15 claude-sonnet-4_anthropic_2025-05-22 claude-sonnet-4-5_anthropic_2025-10-02
gpt-4-1_openai_2024-06-20 gpt-4-1-mini_openai_2024-06-20 kimi-k2_moonshot-ai_2025-07-11 o3_openai_2025-01-15
o4-mini_openai_2024-06-20 gpt-5_sierra_2025-08-09 qwen3-max_qwen_2024_09_23 gemini-3-pro_google_2025-11-18
deepseek-v3.2_deepseek_2025-12-01 toolorchestra_nvidia_2025-12-02 qwen3-max_qwen_2026-01-23""".split()


LB_OLD = ["2024_11_25", "2024_08_31", "2024_07_26", "2024_06_24", "2024_06_12"]   # livebench_releases


def tau2_snap(date: str, dirs: list[str]) -> tuple[tuple[str, str], ...]:
    """The submission files of one snapshot date, under the names backfill gives them."""
    return tuple((f"tau2_bench_sub_{d}_{date}.json", f"tau2_bench/tau2_bench_sub_{d}_{date}.json") for d in dirs)

CASES: tuple[Case, ...] = (
    # --- swebench -------------------------------------------------------------------------
    Case("swebench", "swebench/leaderboards_2025-05-07.json", scores=5, items=0, meta={"variant": "json"}, spots=(
        S(model="SWE-agent 1.0 (Claude 3.7 Sonnet)")(
            benchmark="swebench_full", setting="20250227_sweagent-claude-3-7-20250219", score=0.3383,
            raw_value="33.83", n_items=2294, evaluated_at="2025-02-27",
            model_release_date=None),      # `date` is a submission date, never a model date
        S(model="Blackbox AI Agent")(benchmark="swebench_verified", n_items=500, score=0.628),
    )),
    Case("swebench", "swebench/leaderboards_2025-11-24.json", scores=6, items=12,
         benchmarks=frozenset({"swebench_bash_only", "swebench_verified", "swebench_multimodal"}), spots=(
             # two Verified entries named "Warp" are kept apart by their folder
             S(model="Warp", setting="20250901_warp")(score=0.756),
             S(model="Warp", setting="20250623_warp")(score=0.71),
             S(model="GUIRepair + o3 (2025-04-16)")(n_items=517),
             # per_instance_details trimmed to 4 instances on 3 entries
             S("items", benchmark="swebench_bash_only", model="Gemini 3 Pro Preview (2025-11-18)",
               item_id="pytest-dev__pytest-10356")(score=0.0, item_date=None),
             S("items", benchmark="swebench_verified", model="mini-SWE-agent + Gemini 3 Pro Preview (2025-11-18)",
               item_id="django__django-11532")(score=1.0),
         )),
    Case("swebench", "swebench/index_2025-05-21.html", scores=6, meta={"variant": "html_table"}, warnings=("folder",),
         spots=(
             S(model="OpenHands")(benchmark="swebench_verified", score=0.658, evaluated_at="2025-04-15"),
             # no folder in this layout: the two "devlo" entries are told apart by submission date
             S(model="devlo", setting="2024-12-13")(score=0.582),
             S(model="devlo", setting="2024-11-08")(score=0.542),
         )),
    Case("swebench", "swebench/index_2025-11-18.html", scores=4, meta={"variant": "html_script"}, spots=(
        S(model="ExpeRepair-v1.0 + Claude 4 Sonnet")(benchmark="swebench_lite", n_items=300, score=0.6033,
                                                       setting="20250625_ExpeRepair-v1_claude-4-sonnet-20250514"),
        S(model="Claude 4 Opus (20250514)")(benchmark="swebench_bash_only"),
    )),
    # --- aider ----------------------------------------------------------------------------
    Case("aider_polyglot", "aider_polyglot/polyglot_leaderboard_2025-10-04.yml", scores=6,
         all_missing=(("scores", "model_release_date"),),
         benchmarks=frozenset({"aider_polyglot"}), spots=(
             S(model="gpt-5 (high)")(setting="diff", score=0.88, raw_value="88.0", n_items=225,
                                     evaluated_at="2025-08-23", model_release_date=None),
             # one model, two edit formats -> two settings
             S(model="Qwen2.5-Coder-32B-Instruct", setting="whole")(),
             S(model="Qwen2.5-Coder-32B-Instruct", setting="diff")(),
             S(model="o3 (high) + gpt-4.1")(n_items=224),
         )),
    Case("aider_edit", "aider_edit/edit_leaderboard_2024-12-22.yml", scores=5, spots=(
        S(model="claude-3-opus-20240229")(model_release_date="2024-02-29",      # from `_released`
                                          score=0.684, setting="diff", n_items=133),
        S(model="claude-3-sonnet-20240229")(model_release_date="2024-02-29",    # from `released`
                                            evaluated_at="2024-03-06"),
        S(model="gpt-4-turbo-2024-04-09 (diff)")(n_items=33),
        S(model="gpt-3.5-turbo-1106")(model_release_date=None),
        # a 225-case polyglot run listed on the 133-task board is kept but excluded (the only one)
        S(model="o1-mini-2024-09-12")(excluded_reason=Has("exceeds")),
    ), excluded=1),
    # --- livecodebench --------------------------------------------------------------------
    Case("livecodebench", "livecodebench/performances_generation_2024-03-17.json", scores=3, items=12, models=3,
         meta={"benchmark": "livecodebench"}, spots=(
             S("items", model="GPT-4-Turbo-1106", item_id="1873_A")(score=0.9, item_date="2023-08-22",
                                                                     difficulty="easy", platform="codeforces"),
             # question_id 2727 is an integer in the real file
             S("items", model="Claude-3-Opus", item_id="2727")(item_date="2023-05-14"),
             # pass@1 90, 0, 100, 0 -> mean 0.475, sd 0.55, stderr 0.55 / 2
             S(model="GPT-4-Turbo-1106")(score=0.475, stderr=0.275, n_items=4, metric="proportion",
                                         raw_value="47.5", knowledge_cutoff="2023-04-30 07:00:00"),  # 1682838000000 ms
             # 100, 100, 100, 0 -> mean 0.75, sd 0.5, stderr 0.25
             S(model="Claude-3-Opus")(score=0.75, stderr=0.25),
             S("models", model="DSCoder-33b-Ins")(knowledge_cutoff="2023-08-30 07:00:00", provenance="leaderboard",
                                                  release_date=None),
         )),
    Case("livecodebench", "livecodebench/performances_repair_2024-10-22.json",
         benchmarks=frozenset({"livecodebench_repair"}), spots=(
             # 100, 100, 100, 80 -> 0.95
             S(model="Claude-3.5-Sonnet-20241022")(score=0.95, n_items=4,
                                                   knowledge_cutoff="2024-03-31"),   # 1711843200000 ms
             S(model="O1-Mini-2024-09-12 (N=1)")(score=1.0, stderr=0.0),
         )),
    # the same bytes under the production name are generation data (the schemas are identical)
    Case("livecodebench", "livecodebench/performances_repair_2024-10-22.json", filename="performances_generation.json",
         benchmarks=frozenset({"livecodebench"}), id="fix:livecodebench/repair-bytes-as-generation"),
    # --- livebench ------------------------------------------------------------------------
    Case("livebench", "livebench/table_2026_01_08.csv", aux=LB_AUX("2026_01_08"),
         # 2 well-formed models x (23 tasks + 7 categories + global); the 21-field row is rejected
         scores=2 * (23 + 7 + 1), rejects=1, meta={"release": "2026_01_08"}, spots=(
             S(model="arcee-trinity-large-preview", benchmark="livebench_task_amps_hard")(score=0.61),
             S(model="arcee-trinity-large-preview", benchmark="livebench_reasoning")(
                 score=(26.923 + 7.5 + 46.0 + 2.0) / 4 / 100),
             S(model="arcee-trinity-large-preview", benchmark="livebench_agentic_coding")(score=10.0 / 3 / 100),
             S(model="arcee-trinity-large-preview", benchmark="livebench_if")(
                 score=(12.55 + 11.0 + 10.6 + 14.617) / 4 / 100),
             S(model="arcee-trinity-large-preview", benchmark="livebench_data_analysis")(
                 score=(6.556 + 20.308 + 94.118) / 3 / 100),
             S(model="arcee-trinity-large-preview", benchmark="livebench")(score=0.3274095, table_version="2026-01-08"),
             Absent({"model": "nemotron-3-super-120b-a12b"}),
         )),
    Case("livebench", "livebench/table_2024_11_25.csv", aux=LB_AUX("2024_11_25"),
         # 3 models x 18 tasks - 1 blank; 3 x 6 categories - 1 (phi-3 Language); global for 2 models
         scores=53 + 17 + 2, rejects=0, spots=(
             Absent({"model": "phi-3-small-8k-instruct", "benchmark": "livebench_task_connections"}),
             Absent({"model": "phi-3-small-8k-instruct", "benchmark": "livebench_language"}),
             Absent({"model": "phi-3-small-8k-instruct", "benchmark": "livebench"}),
             S(model="amazon.nova-lite-v1:0", benchmark="livebench_reasoning")(
                 score=(54.0 + 26.0 + 30.0) / 3 / 100, n_items=None),
             S(model="amazon.nova-micro-v1:0", benchmark="livebench_task_lcb_generation")(
                 raw_value="24.359", table_version="2024-11-25"),   # each release is its own table (issue 20)
         )),
    # --- evalplus -------------------------------------------------------------------------
    Case("evalplus", "evalplus/results_2024-12-26.json", scores=10, rejects=0, spots=(
        # Code-13B has null mbpp/mbpp+: no rows
        Absent({"model": "Code-13B", "benchmark": "mbpp"}), Absent({"model": "Code-13B", "benchmark": "mbpp_plus"}),
        S(benchmark="mbpp_plus", model="OpenCoder-8B-Instruct")(score=0.714, raw_value="71.4", n_items=378,
                                                                  metric="proportion"),
        S(benchmark="humaneval_plus", model="Code-13B")(score=0.524),
        S(benchmark="humaneval", model="CodeGen-16B")(n_items=164),
    )),
    Case("evalplus", "evalplus/results_2024-04-18.json", scores=10,   # CodeGen2-16B: humaneval and humaneval_plus only
         warnings=("MBPP+ version",), spots=(
             S(benchmark="mbpp_plus", model="Code-13B")(score=0.426),
             S(benchmark="mbpp", model="Code-13B")(n_items=None),
             S(benchmark="humaneval", model="Code-13B")(score=0.561),
             S(benchmark="humaneval_plus", model="CodeGen2-16B")(score=0.165),
         )),
    Case("evalplus", "evalplus/humaneval_2024-03-10.csv", scores=6,
         benchmarks=frozenset({"humaneval", "humaneval_plus"}), spots=(
             S(benchmark="humaneval_plus", model="GPT-4 (May 2023)")(score=0.793),
             S(benchmark="humaneval", model="GPT-3.5-Turbo (Nov 2023)")(score=0.768),
         )),
    # --- simple_evals ---------------------------------------------------------------------
    Case("simple_evals", "simple_evals/readme_2024-04-13.md", scores=35, spots=(   # 6 models x 6, minus Gemini's GPQA n/a
        Absent({"model": "GPT4s"}), Absent({"model": "REFERENCE"}), Absent({"benchmark": "math_500"}),
        S(benchmark="drop", model="gpt-4-turbo-2024-04-09", setting="assistant")(score=0.86),
        S(benchmark="mmlu", model="gpt-4-turbo-2024-04-09", setting="chatgpt")(score=0.865),
        S(benchmark="gpqa_diamond", model="Claude-3-Opus (rerun w/ api)", setting="lmsys")(score=0.507),
        S(benchmark="humaneval", model="Gemini-Ultra-1.0 (report)", setting="")(score=0.744, reported_by="vendor"),
        S(benchmark="humaneval", model="Claude-3-Opus (rerun w/ api)", setting="empty")(reported_by=None),
    )),
    Case("simple_evals", "simple_evals/readme_2024-09-11.md", scores=32, spots=(
        S(benchmark="math_500", model="o1 (work in progress)")(score=0.948),
        S(benchmark="math_500", model="o1-mini")(), S(benchmark="math_500", model="o1-preview")(),
        S(benchmark="math", model="gpt-4o-2024-08-06", setting="assistant")(score=0.759),
        S(benchmark="humaneval", model="o1-preview")(score=0.924, raw_value="**`92.4`**", setting=""),
        S(benchmark="drop", model="Claude 3.5 Sonnet")(score=0.871),    # link + bold cell
        S(benchmark="mgsm", model="Gemini 1.0 Ultra")(score=0.79),
    )),
    Case("simple_evals", "simple_evals/readme_2025-07-09.md", scores=61, spots=(   # 9 models x 7, minus o1 '-' and Llama n/a
        S(benchmark="simpleqa", model="o1-mini")(score=0.076, raw_value="07.6"),
        S(benchmark="gpqa_diamond", model="o3")(score=0.828),                     # 'o3 [^9] [^10]'
        Absent({"model": "o1", "benchmark": "humaneval"}),
        S(benchmark="drop", model="Llama 3.1 405b")(score=0.848),                 # no trailing pipe
        S(benchmark="mmlu", model="gpt-4.1-2025-04-14")(setting="assistant"),
    )),
    # The README as it stood between 2024-09 and 2025-07 in shape (rows typed from the real 2024-09 and
    # 2025-07 versions): the o3-mini group carries no MATH-500 note, the o1 group does ("For o1 models").
    # o3-mini's 97.9 is a MATH-500 score (issue 20: filed under MATH, MATH's level jumped across versions).
    Case("simple_evals", "simple_evals/readme_o1_note_only.md", scores=35, spots=(   # 5 models x 7
        S(benchmark="math_500", model="o3-mini-high")(score=0.979, reported_by=None),
        S(benchmark="math_500", model="o3-mini-low")(score=0.958),
        S(benchmark="math_500", model="o1-preview")(score=0.855),
        S(benchmark="math", model="gpt-4o-2024-08-06")(score=0.759, reported_by=None),
        S(benchmark="math", model="Claude 3.5 Sonnet")(score=0.711, reported_by="vendor"),
        S(benchmark="simpleqa", model="Claude 3.5 Sonnet")(reported_by="vendor"),
        Absent({"benchmark": "math", "model": "o3-mini-high"}),
    )),
    # --- lmarena --------------------------------------------------------------------------
    Case("lmarena", "lmarena/leaderboard_table_20230619.csv", scores=12,
         all_missing=(("scores", "knowledge_cutoff"),), spots=(
        S(benchmark="arena_elo", model="Claude-v1")(score=1178, metric="elo"),
        S(benchmark="mt_bench", model="GPT-4")(score=8.99, metric="score_10", knowledge_cutoff=None),
        S(benchmark="mmlu", model="GPT-3.5-turbo")(score=0.7),
    )),
    Case("lmarena", "lmarena/leaderboard_table_20231206.csv", scores=11, spots=(
        S(benchmark="arena_elo", model="GPT-4-Turbo")(score=1217),
        S(benchmark="arena_elo", model="GPT-4-0314")(),
        Absent({"model": "GPT-4-Turbo", "benchmark": "mmlu"}),
    )),
    Case("lmarena", "lmarena/leaderboard_table_20250511.csv", scores=5, rejects=0,
         warnings=("duplicate",), spots=(        # yi-34b-chat's identical second line dropped
             S(benchmark="mt_bench", model="gpt-4-0314")(score=8.96, knowledge_cutoff="2021-09-01"),
             S(benchmark="mmlu", model="yi-34b-chat")(knowledge_cutoff="2023-06-01"),
             Absent({"benchmark": "arena_elo"}),
         )),
    Case("lmarena", "lmarena/arena_hard_auto_leaderboard_v0.1.csv", scores=3,
         benchmarks=frozenset({"arena_hard_auto"}), spots=(
             S(model="gpt-4-turbo-2024-04-09")(score=0.8263, ci_low=0.8075, ci_high=0.846, evaluated_at="2024-07-31"),
         )),
    Case("lmarena", "lmarena/elo_data.json", scores=4, spots=(
        S(benchmark="arena_elo_text_full", model="gpt-4o-2024-05-13", setting="2024-06-29")(metric="elo"),
        S(benchmark="arena_elo_text_full", model="gpt-4o-2024-05-13", setting="2024-07-06")(metric="elo"),
        S(benchmark="arena_elo_text_full", model="gemini-2.5-pro-preview-05-06")(score=1446.0525,
                                                                                 evaluated_at="2025-05-11"),
        S(benchmark="arena_elo_vision_full")(score=1225.8014),
    )),
    # --- bfcl -----------------------------------------------------------------------------
    Case("bfcl", "bfcl/data_overall_2024-10-21.csv", no_benchmark_like="latency|rank|license|organization|link",
         scores=4 * 24, spots=(   # 23 categories (composite all N/A) + overall + cost, no other N/A
             S(benchmark="bfcl_overall", model="GPT-4o-2024-08-06")(score=0.6219, setting="FC", raw_value="62.19%"),
             S(benchmark="bfcl_live_acc", model="GPT-4o-2024-08-06")(score=0.7543),
             S(benchmark="bfcl_cost_per_1k_function_calls", model="GPT-4-turbo-2024-04-09")(score=19.49,
                                                                                           metric="cost_usd"),
             S(benchmark="bfcl_overall", model="Command-R-Plus")(setting="FC Original"),
             Absent({"benchmark": "bfcl_multi_turn_composite"}),       # all N/A
         )),
    Case("bfcl", "bfcl/data_overall_2025-12-16.csv", no_benchmark_like="format_sensitivity", spots=(
        S(benchmark="bfcl_overall", model="BitAgent-Bounty-8B")(setting=""),
        S(benchmark="bfcl_overall", model="DeepSeek-V3.2-Exp")(setting="Prompt + Thinking"),
        S(benchmark="bfcl_total_cost", model="Claude-Opus-4-5-20251101")(score=86.55, metric="cost_usd"),
        S(benchmark="bfcl_web_search_acc", model="Claude-Opus-4-5-20251101")(score=0.845),
    )),
    Case("bfcl", "bfcl/data_v1v2_2024-08-14.csv", spots=(
        S(benchmark="bfcl_overall", model="Claude-3.5-Sonnet-20240620", setting="Prompt")(score=0.9053),
        S(benchmark="bfcl_cost_per_1k_function_calls", model="Functionary-Medium-v3.1")(score=85.52),
    )),
    # --- epoch ----------------------------------------------------------------------------
    Case("epoch", "epoch/gpqa_diamond.csv", scores=4, benchmarks=frozenset({"gpqa_diamond"}), spots=(
        S(model="gpt-5.4-mini-2026-03-17")(       # `_high` is an effort setting, not part of the model
            score=0.8358585858585859, stderr=0.022274469189069883, model_release_date="2026-03-17",
            evaluated_at="2026-04-15 14:03:19", setting="effort=high; run=AQF46S9hBhosKPEMy3fyB9"),
        S(model="glm-4.7")(score=0.8333333333333334),     # the row after a multi-line note
        S(model="grok-4-0709")(evaluated_at=None),
    )),
    Case("epoch", "epoch/swe_bench_verified.csv", filename="epoch_swe_bench_verified_2026-04-19.csv", scores=3,
         rejects=0, benchmarks=frozenset({"swebench_verified"}), spots=(
             S(model="claude-opus-4-6", setting="run=2hH2GAPUFaJR7pfVKhhicg")(score=0.7871900826446281),
             S(model="claude-opus-4-6", setting="run=aQiAg6mt8HPHXjKcJvax2d")(score=0.756198347107438),
         )),
    Case("epoch", "epoch/epoch_capabilities_index.csv", scores=2, rejects=0,
         benchmarks=frozenset({"epoch_capabilities_index"}), warnings=("3 of 5",), spots=(
             S(model="claude-3-5-sonnet-20240620")(score=130.0, metric="index", model_release_date="2024-06-20"),
         )),
    # Epoch's SWE-bench bash-only schema (issue 20: "missing column(s) mean_score or Best score"): the header
    # as Epoch publishes it, rows typed from the SWE-bench bash-only board (2025-11-24 copy: resolved share,
    # date, mini-SWE-agent release, folder, instance cost). `% Resolved` is a proportion.
    Case("epoch", "epoch/swe_bench_bash_only.csv", scores=4, rejects=0, benchmarks=frozenset({"swebench_bash_only"}),
         warnings=("using '% Resolved'",), spots=(
             S(model="gemini-3-pro-preview")(score=0.742, model_release_date="2025-11-18", evaluated_at="2025-11-18",
                                             setting="agent=1.15.0; run=20251118_mini-v1.15.0_gemini-3-pro-preview-20251118",
                                             stderr=None, table_version="", reported_by=None),
             S(model="claude-opus-4-20250514")(score=0.676, evaluated_at="2025-08-02"),   # multi-line note
             S(model="gpt-5-2025-08-07")(score=0.65, setting=Has("effort=medium; agent=1.7.0")),
         )),
    # the same rows under another file name: the schema (its SWE-Agent column) decides the benchmark
    Case("epoch", "epoch/swe_bench_bash_only.csv", filename="benchmark_data.csv", scores=4,
         benchmarks=frozenset({"swebench_bash_only"}), id="fix:epoch/bash-only-by-schema"),
    # Another schema: `Model`, `Score` in percent with '%' signs, an `_external` member (third-party numbers,
    # rows typed from simple-evals' "Other Models (Reported)" GPQA column): its own table, reported_by external.
    Case("epoch", "epoch/gpqa_diamond_external.csv", scores=4, rejects=0, benchmarks=frozenset({"gpqa_diamond"}),
         spots=(
             S(model="Claude 3.5 Sonnet")(score=0.594, raw_value="59.4%", table_version="external",
                                          reported_by="external", model_release_date="2024-06-20"),
             S(model="Gemini 1.5 Flash")(score=0.386),
         )),
    # --- alpacaeval -----------------------------------------------------------------------
    Case("alpacaeval", "alpacaeval/weighted_alpaca_eval_gpt4_turbo_leaderboard.csv", scores=10,
         benchmarks=frozenset({"alpacaeval_2_lc", "alpacaeval_2"}), spots=(
             S(benchmark="alpacaeval_2_lc", model="SelfMoA_gemma-2-9b-it-WPO-HB")(
                 score=0.7853928111481099, stderr=0.003042788133382446, n_items=805, excluded_reason=""),
             S(benchmark="alpacaeval_2_lc", model="NullModel")(score=0.8645780691307947,
                                                              excluded_reason=Has("adversarial")),
             S(benchmark="alpacaeval_2", model="gpt4_gamed")(excluded_reason=Has("adversarial")),
             S(benchmark="alpacaeval_2_lc", model="gpt4_gamed")(stderr=None),
             S(benchmark="alpacaeval_2", model="gpt4_1106_preview_verbose")(excluded_reason=Has("dev")),
             S(benchmark="alpacaeval_2", model="alpaca-7b_concise")(n_items=804),
             S(benchmark="alpacaeval_2", model="NullModel")(stderr=0.009090102449662572),
         )),
    Case("alpacaeval", "alpacaeval/weighted_alpaca_eval_gpt4_turbo_leaderboard.csv", scores=13,
         aux=(("alpaca_eval_gpt4_leaderboard.csv", "alpacaeval/alpaca_eval_gpt4_leaderboard.csv"),),
         id="fix:alpacaeval/v2-with-v1-aux", spots=(
             S(benchmark="alpacaeval_1", model="gpt4_turbo")(score=0.9769900497512438, stderr=0.005104849118311993,
                                                            n_items=804, is_reference=False),
             # AlpacaEval 1's reference model against itself: 50 %, stderr 0, 805 draws -> never in a top k
             S(benchmark="alpacaeval_1", model="text_davinci_003")(score=0.5, stderr=0.0, is_reference=True),
         )),
    Case("alpacaeval", "alpacaeval/alpacaeval_v2_2024-01-09.csv", scores=3, benchmarks=frozenset({"alpacaeval_2"}),
         warnings=("length_controlled_winrate",), spots=(
             S(model="GPT-4 Turbo")(score=0.5, is_reference=True), S(model="GPT-4")(n_items=805, is_reference=False),
         )),
    Case("alpacaeval", "alpacaeval/alpacaeval_v2_2024-12-27.csv", scores=8,
         rejects=2, spots=(   # 'GPT 3.5 Turbo (06/13)' is listed twice
             S(benchmark="alpacaeval_2_lc", model="NullModel (adversarial)")(excluded_reason=Has("adversarial")),
             S(benchmark="alpacaeval_2", model="GPT-4 (Adversarial)")(excluded_reason=Has("adversarial")),
         )),
    Case("alpacaeval", "alpacaeval/alpacaeval_v1_2024-05-17.csv", scores=3, benchmarks=frozenset({"alpacaeval_1"}),
         spots=(S(model="GPT-4 Preview (11/06)")(score=0.9769900497512438),)),
    # --- csv (the generic source for files you make yourself) --------------------------------
    Case("csv", "csv/scores_proportion.csv", scores=3, benchmarks=frozenset({"gpqa_diamond"}), spots=(
        S(model="GPT-5")(score=0.854, n_items=198, metric="proportion", stderr=None),
    )),
    Case("csv", "csv/scores_percent.csv", scores=5, spots=(   # percents: the whole column is on one scale
        S(model="o3")(score=0.992, raw_value="99.2", evaluated_at="2025-04-16", knowledge_cutoff="2024-06-01"),
        S(model="GLM-4.5")(score=0.982, model_release_date=None, knowledge_cutoff=None),
    )),
    # --- openrouter, knowledge_cutoffs (model metadata) -------------------------------------
    Case("openrouter", "openrouter/models.json", scores=0, models=4, warnings=("router", "variant"), spots=(
        S("models", model="openai/gpt-4")(release_date="2023-05-28", knowledge_cutoff="2021-09-30", org="OpenAI",
                                          open_weights=None, provenance="listing"),
        S("models", model="openai/gpt-oss-120b")(release_date="2025-08-05 17:17:11", open_weights=True,
                                                 provenance="listing"),
        S("models", model="anthropic/claude-opus-4.7-fast")(release_date="2026-05-12 19:10:11", provenance="listing"),
        S("models", model="liquid/lfm-2.5-1.2b-thinking")(org="LiquidAI", provenance="listing"),
    )),
    Case("knowledge_cutoffs", "knowledge_cutoffs/readme_2026-05-04.md", models=9, unique_models=True,
         all_missing=(("models", "release_date"),), warnings=("Qwen3",), spots=(
        Absent({"model": "Qwen3"}, "models"),
        S("models", model="GPT-4*")(knowledge_cutoff="2021-09-01", provenance="inferred"),     # Azure docs, not OpenAI's
        S("models", model="GPT-4.1")(knowledge_cutoff="2024-06-01", provenance="vendor_doc"),  # via web.archive.org
        S("models", model="Claude 2")(knowledge_cutoff="2023-01-01", provenance="inferred", org="Anthropic"),
        S("models", model="Claude 4.5 Sonnet")(knowledge_cutoff="2025-07-01", provenance="vendor_doc"),
        S("models", model="LLama-2-7B, 13B, 70B")(knowledge_cutoff="2023-07-01", provenance="inferred"),
        S("models", model="LLama-3-7B")(knowledge_cutoff="2023-03-01", provenance="vendor_doc"),
        S("models", model="Qwen2-7B-Instruct")(knowledge_cutoff="2023-01-01", provenance="inferred"),
        S("models", model="Qwen2.5")(knowledge_cutoff="2023-12-01", provenance="inferred"),   # 'end of 2023'
        S("models", model="o1")(org="OpenAI", release_date=None),
    )),
    Case("knowledge_cutoffs", "knowledge_cutoffs/readme_2024-11-14.md", models=2, spots=(
        S("models", model="Gemini 1.0 Pro")(knowledge_cutoff="2023-02-01", provenance="vendor_doc"),
        S("models", model="Gemini 1.5 Pro")(),
    )),
    # --- issue 21 (src1): tau2_bench, lmarena catalogue / history, livebench releases ---
    Case("tau2_bench", "tau2_bench/manifest_2026-07-01.json", aux=TAU2_FIX, scores=39, models=4, rejects=0,
         meta={"tables": {"text": 2, "voice": 1, "legacy": 2}}, warnings=("gemini-2-5-flash_google_2025-02-01",),
         spots=(
             S(benchmark="tau2_bench_retail", model="GLM-5.2")(score=0.8574561403508771, table_version="text",
                                                                setting="effort=max", evaluated_at="2026-06-21",
                                                                model_release_date="2026-06-16"),
             S(benchmark="tau2_bench_banking_knowledge_pass4", model="GLM-5.2")(score=0.13402061855670103),
             S(benchmark="tau2_bench_banking_knowledge", model="GPT-5.4")(score=0.3067, setting="effort=xhigh"),
             Absent({"benchmark": "tau2_bench_banking_knowledge_pass2", "model": "GPT-5.4"}),
             S(benchmark="tau2_bench", model="Gemini 3.0 Pro")(score=(0.853 + 0.73 + 0.98) / 3, table_version="legacy"),
             S(benchmark="tau2_bench", model="gpt-realtime-1.5")(table_version="voice"),
             S(benchmark="tau2_bench_airline_pass3", model="GPT-5")(score=0.51, model_release_date=None),
             S("models", model="Gemini 3.0 Pro")(release_date="2025-11-18", org="Google"),
         )),
    Case("lmarena", "lmarena/leaderboard-text.json", scores=12, rejects=0, meta={"categories": ["coding", "full", "math"]},
         benchmarks=frozenset({"arena_elo", "arena_elo_text_coding", "arena_elo_text_math"}), spots=(
             S(benchmark="arena_elo", model="gemini-2.5-pro")(score=1466.2449319357888, ci_low=1461.502832241223,
                                                             ci_high=1470.9870316303545, metric="elo"),
             S(benchmark="arena_elo_text_math", model="gemini-2.5-pro")(score=1480.9373576303433),
         )),
    Case("lmarena", "lmarena/cherry_md_2025-01-21.md", scores=5, rejects=0, spots=(   # '+5/-4' interval column
        S(model="Gemini-Exp-1206")(score=1374.0, ci_low=1370.0, ci_high=1379.0, evaluated_at="2025-01-19",
                                   table_version=""),)),
    Case("lmarena", "lmarena/cherry_md_2025-06-05.md", scores=2, spots=(   # links, knowledge cutoff column
        S(model="o1-preview")(score=1341.0, knowledge_cutoff="2023-10-01"),
        S(model="Gemini-2.5-Pro-Preview-05-06")(knowledge_cutoff=None, evaluated_at="2025-06-05"))),
    Case("lmarena", "lmarena/cherry_md_2026-02-10.md", scores=6, rejects=0, spots=(   # '1504±10', glued logo and org
        S(model="claude-opus-4-6-thinking")(score=1504.0, ci_low=1494.0, ci_high=1514.0),
        S(model="ernie-5.0-0110")(score=1451.0, raw_value="1451±7Preliminary"),
        S(model="tulu-2-dpo-70b")(score=1179.0),
        S(model="RWKV-4-Raven-14B")(score=1042.0))),
    Case("lmarena", "lmarena/cherry_text_md_2026-07-29.md", scores=3, meta={"board": "top30"}, spots=(
        S(model="claude-fable-5")(score=1508.0, ci_low=1502.0, table_version="top30"),
        S(model="claude-opus-5-max")(score=1495.0, ci_high=1507.0))),
    Case("lmarena", "lmarena/elo_wide_2025-01-28.csv", scores=4, warnings=("2 earlier date(s)",), spots=(
        S(model="o1-preview")(score=1334.9990061709354, evaluated_at="2025-01-24", benchmark="arena_elo"),
        Absent({"model": "claude-v1"}))),   # 0.0 = not on the board that date
    Case("livebench_releases", "livebench_releases/changelog_2025-11-26.md", scores=0,
         meta={"releases": ["2025_11_25", "2025_10_03", "2024_11_25"]}),
    Case("livebench_releases", "livebench_releases/changelog_2025-04-07.md", scores=0,   # truncated heading
         meta={"releases": ["2024_11_25"]}, warnings=("'2025-04-0' is not a full date",)),
)

# --- real snapshots (../shared/snapshots) -------------------------------------------------------
SNAPSHOT_CASES: tuple[Case, ...] = (
    snap("swebench", "swebench/swebench_2025-05-07.json", 168, items=0, spots=(
        S(benchmark="swebench_full", setting="20250227_sweagent-claude-3-7-20250219")(score=0.3383),
        S(benchmark="swebench_verified", setting="20250316_augment_agent_v0")(evaluated_at="2025-03-16"))),
    snap("swebench", "swebench/swebench_2025-11-18.json", 299, items=0, spots=(
        S(benchmark="swebench_bash_only", model="Claude 4.5 Sonnet (20250929)")(score=0.706),
        S(benchmark="swebench_lite", setting="20250625_ExpeRepair-v1_claude-4-sonnet-20250514")(n_items=300))),
    snap("swebench", "swebench/swebench_2025-11-24.json", 306, items=17000, spots=(
        S(benchmark="swebench_bash_only", model="Gemini 3 Pro Preview (2025-11-18)")(score=0.742),
        S(benchmark="swebench_verified", setting="20250928_trae_doubao_seed_code")(score=0.788))),
    snap("swebench", "swebench/swebench_index_2025-05-21.html", 178, items=0, spots=(
        S(benchmark="swebench_verified", model="OpenHands")(score=0.658),
        S(benchmark="swebench_multimodal", model="Globant Code Fixer Agent")(n_items=517))),
    snap("swebench", "swebench/swebench_index_2025-11-18.html", 299, items=0, spots=(
        S(benchmark="swebench_bash_only", model="Claude 4.5 Sonnet (20250929)")(score=0.706),
        S(benchmark="swebench_verified", setting="20250928_trae_doubao_seed_code")(evaluated_at="2025-09-28"))),
    snap("aider_polyglot", "aider_polyglot/aider_polyglot_2024-12-22.yml", 10, items=0, spots=(
        S(model="o1-2024-12-17", setting="diff")(score=0.617, n_items=224),)),
    snap("aider_polyglot", "aider_polyglot/aider_polyglot_2025-10-04.yml", 69, items=0, spots=(
        S(model="gpt-5 (high)", setting="diff")(score=0.88),
        S(model="Gemini 2.0 Pro exp-02-05", setting="whole")(evaluated_at="2025-02-25"))),
    snap("aider_edit", "aider_edit/aider_edit_2024-07-13.yml", 31, items=0, spots=(
        S(model="claude-3-opus-20240229", setting="diff")(score=0.684, model_release_date="2024-02-29"),)),
    snap("aider_edit", "aider_edit/aider_edit_2024-12-22.yml", 98, items=0, spots=(
        S(model="gpt-4-turbo-2024-04-09 (diff)")(n_items=33),
        S(model="gemini-1.5-pro-001")(model_release_date="2024-05-03"))),
    snap("livecodebench", "livecodebench/livecodebench_generation_2024-02-26.json", 16, items=5583, spots=(
        S(model="GPT-4-Turbo-1106")(score=0.4163323782234957, n_items=349),)),
    snap("livecodebench", "livecodebench/livecodebench_generation_2024-03-17.json", 30, items=12000, spots=(
        S(model="GPT-4-Turbo-1106")(score=0.383, stderr=0.022523226663788004),)),
    snap("livecodebench", "livecodebench/livecodebench_repair_2024-06-20.json", 30, items=12000, spots=(
        S(model="GPT-4O-2024-05-13", benchmark="livecodebench_repair")(score=0.58725, knowledge_cutoff="2023-10-30"),)),
    snap("livecodebench", "livecodebench/livecodebench_repair_2024-10-22.json", 17, items=12121, spots=(
        S(model="O1-Mini-2024-09-12 (N=1)", benchmark="livecodebench_repair")(score=0.7096774193548387, n_items=713),)),
    snap("livebench", "livebench/livebench_table_2024_06_24_2024-09-06.csv", 73 * 17 + 73 * 7, items=0,
         aux=(("categories_2024_06_24.json", "livebench/livebench_categories_2024_06_24_2024-08-02.json"),), spots=(
             S(model="claude-3-5-sonnet-20240620", benchmark="livebench")(score=0.6115625),
             S(model="claude-3-5-sonnet-20240620", benchmark="livebench_coding")(score=0.632105))),
    snap("livebench", "livebench/livebench_table_2024_11_25_2024-11-25.csv", 26 * 18 + 26 * 7, items=0,
         aux=(("categories_2024_11_25.json", "livebench/livebench_categories_2024_11_25_2024-11-25.json"),), spots=(
             S(model="o1-preview-2024-09-12", benchmark="livebench")(score=0.647441388888889),)),
    snap("livebench", "livebench/livebench_table_2024_11_25_2025-03-31.csv", 65 * 18 - 1 + 65 * 7 - 2, items=0,
         aux=(("categories_2024_11_25.json", "livebench/livebench_categories_2024_11_25_2024-11-25.json"),), spots=(
             S(model="gemini-2.5-pro-exp-03-25", benchmark="livebench")(score=0.8235413888888888),
             S(model="gemini-2.5-pro-exp-03-25", benchmark="livebench_language")(score=0.6781966666666666))),
    # this table predates consecutive_events, which the newest categories file lists:
    # Data Analysis and the global average cannot be computed for it
    snap("livebench", "livebench/livebench_table_2026_01_08_2026-01-08.csv", 65 * 22 + 65 * 6, items=0,
         aux=(("categories_2026_01_08.json", "livebench/livebench_categories_2026_01_08_2026-01-19.json"),), spots=(
             S(model="claude-4-1-opus-20250805-base", benchmark="livebench_task_amps_hard")(score=0.89),)),
    snap("livebench", "livebench/livebench_table_2026_01_08_2026-07-01.csv", 126 * 23 + 126 * 8, items=0,
         aux=(("categories_2026_01_08.json", "livebench/livebench_categories_2026_01_08_2026-01-19.json"),), spots=(
             S(model="gpt-5.5-xhigh", benchmark="livebench")(score=0.8070721428571429),
             S(model="gpt-5.5-xhigh", benchmark="livebench_agentic_coding")(score=0.5666666666666667))),
    snap("evalplus", "evalplus/evalplus_2024-04-18.json", 342, rejects=0, spots=(
        S(benchmark="humaneval_plus", model="Llama3-8B-instruct", setting="")(score=0.567),)),
    snap("evalplus", "evalplus/evalplus_2024-12-26.json", 428, rejects=0, spots=(
        S(benchmark="mbpp_plus", model="OpenCoder-8B-Instruct", setting="")(score=0.714),)),
    snap("evalplus", "evalplus/evalplus_humaneval_2024-03-10.csv", 160, rejects=0, spots=(
        S(benchmark="humaneval", model="GPT-4 (May 2023)", setting="")(score=0.884),)),
    snap("simple_evals", "simple_evals/simple_evals_readme_2024-04-13.md", 64, rejects=0, spots=(
        S(benchmark="mmlu", model="gpt-4-turbo-2024-04-09", setting="chatgpt")(score=0.865),)),
    snap("simple_evals", "simple_evals/simple_evals_readme_2024-09-11.md", 105, rejects=0, spots=(
        S(benchmark="math_500", model="o1-mini", setting="")(score=0.90),)),
    snap("simple_evals", "simple_evals/simple_evals_readme_2025-07-09.md", 214, rejects=0, spots=(
        S(benchmark="simpleqa", model="o1-mini", setting="")(score=0.076),
        S(benchmark="math_500", model="o3-mini-high", setting="")(score=0.979))),
    snap("lmarena", "lmarena/lmarena_arena_hard_auto_v0.1_2024-08-01.csv", 60, rejects=0, spots=(
        S(benchmark="arena_hard_auto", model="claude-3-opus-20240229", setting="")(
            score=0.6036, table_version="v0.1"),)),
    snap("lmarena", "lmarena/lmarena_elo_max_derived_2025-05-14.json", 2050, rejects=0, spots=(
        S(benchmark="arena_elo_text_coding", model="gemini-2.5-pro-preview-05-06", setting="2025-05-11")(
            score=1456.6593),)),
    snap("lmarena", "lmarena/lmarena_leaderboard_table_20230619_2023-07-01.csv", 81, rejects=0, spots=(
        S(benchmark="mt_bench", model="Vicuna-33B", setting="")(score=7.12),)),
    snap("lmarena", "lmarena/lmarena_leaderboard_table_20231206_2023-12-07.csv", 150, rejects=0, spots=(
        S(benchmark="arena_elo", model="Vicuna-33B", setting="")(score=1093),)),
    snap("lmarena", "lmarena/lmarena_leaderboard_table_20250511_2025-05-12.csv", 169, rejects=0, spots=(
        S(benchmark="mmlu", model="claude-3-5-sonnet-20240620", setting="")(score=0.887),)),
    snap("bfcl", "bfcl/bfcl_data_overall_2024-10-21.csv", 1405, rejects=0, spots=(
        S(benchmark="bfcl_overall", model="GPT-4o-2024-08-06", setting="FC")(score=0.6219),)),
    snap("bfcl", "bfcl/bfcl_data_overall_2024-12-31.csv", 2087, rejects=0, spots=(
        S(benchmark="bfcl_overall", model="watt-tool-70B", setting="FC")(score=0.7424),)),
    snap("bfcl", "bfcl/bfcl_data_overall_2025-12-16.csv", 2834, rejects=0, spots=(
        S(benchmark="bfcl_overall", model="Claude-Opus-4-5-20251101", setting="FC")(score=0.7747),)),
    snap("bfcl", "bfcl/bfcl_data_v1v2_2024-03-20.csv", 264, rejects=0, spots=(
        S(benchmark="bfcl_overall", model="GPT-4-1106-Preview", setting="FC")(score=0.8428),)),
    snap("bfcl", "bfcl/bfcl_data_v1v2_2024-08-14.csv", 1269, rejects=0, spots=(
        S(benchmark="bfcl_overall", model="Claude-3.5-Sonnet-20240620", setting="Prompt")(score=0.9053),)),
    snap("epoch", "epoch/epoch_epoch_capabilities_index_2026-03-12.csv", 283, rejects=0, spots=(
        S(benchmark="epoch_capabilities_index", model="claude-3-5-sonnet-20240620", setting="")(score=130.0),)),
    snap("epoch", "epoch/epoch_epoch_capabilities_index_2026-04-19.csv", 348, rejects=0),
    snap("epoch", "epoch/epoch_gpqa_diamond_2026-04-19.csv", 157, rejects=0),
    snap("epoch", "epoch/epoch_otis_mock_aime_2024_2025_2026-04-19.csv", 130, rejects=0, spots=(
        S(benchmark="otis_mock_aime_2024_2025", model="o3-2025-04-16")(score=0.8388888888888889),)),
    snap("epoch", "epoch/epoch_swe_bench_verified_2026-03-09.csv", 24, rejects=0),
    snap("epoch", "epoch/epoch_swe_bench_verified_2026-04-19.csv", 25, rejects=0, spots=(
        S(benchmark="swebench_verified", model="gpt-5.3-codex", setting="effort=high; run=6w5buMbgeEqtRoE55cLZVv")(
            score=0.7479338842975206),)),
    snap("alpacaeval", "alpacaeval/alpacaeval_v1_2024-05-17.csv", 102, rejects=0, spots=(
        S(benchmark="alpacaeval_1", model="XwinLM 70b V0.3", setting="")(score=0.97636815920398),)),
    snap("alpacaeval", "alpacaeval/alpacaeval_v2_2024-01-09.csv", 11, rejects=0, spots=(
        S(benchmark="alpacaeval_2", model="Yi 34B Chat", setting="")(score=0.293171781590625),)),
    snap("alpacaeval", "alpacaeval/alpacaeval_v2_2024-12-27.csv", 420, rejects=2),
    snap("alpacaeval", "alpacaeval/alpacaeval_v2_src_with_stderr_2024-06-26.csv", 366, rejects=0, spots=(
        S(benchmark="alpacaeval_2_lc", model="Together-MoA", setting="")(score=0.6537996976852163),)),
    snap("alpacaeval", "alpacaeval/alpacaeval_v2_src_with_stderr_2024-12-28.csv", 446, rejects=0, spots=(
        S(benchmark="alpacaeval_2_lc", model="gpt4_1106_preview", setting="")(score=0.5, is_reference=True),
        S(benchmark="alpacaeval_2", model="gpt4_1106_preview", setting="")(stderr=0.0, is_reference=True),
        S(benchmark="alpacaeval_2_lc", model="Together-MoA", setting="")(is_reference=False))),
    snap("knowledge_cutoffs", "model_metadata/model_metadata_cutoff_dates_readme_2024-11-14.md", 0, models=39,
         filename="README.md", unique_models=True, spots=(
             S("models", model="Claude 3.5 Sonnet")(knowledge_cutoff="2024-04-01"),
             S("models", model="LLama-2-7B,13B,70B")(knowledge_cutoff="2023-07-01"),
             S("models", model="Qwen2.5")(knowledge_cutoff="2023-12-01"))),
    snap("knowledge_cutoffs", "model_metadata/model_metadata_cutoff_dates_readme_2026-05-04.md", 0, models=94,
         filename="README.md", unique_models=True, spots=(
             S("models", model="Claude 4.6 Sonnet")(knowledge_cutoff="2026-01-01"),
             S("models", model="GPT-5")(knowledge_cutoff="2024-09-30"),
             S("models", model="QwQ-32B")(knowledge_cutoff="2024-11-28"))),
    snap("openrouter", "model_metadata/openrouter_models_2026-05-15.json", 0, filename="models",
         models=334, unique_models=True, spots=(   # 364 - 5 routers - 8 '~' aliases - 17 folded variants
             S("models", model="openai/gpt-oss-120b")(knowledge_cutoff="2024-06-30"),)),
    # --- issue 21 (src1): tau2_bench, lmarena catalogue / history, livebench releases ---
    # (the other tau2_bench copies — manifests without their submission files, the JSON schemas —
    # are skipped by its backfill with the reason: Tau2BenchScraper.backfill_groups)
    snap("tau2_bench", "tau2_bench/tau2_bench_manifest_2025-12-17.json", 116, rejects=0, models=0,
         aux=tau2_snap("2025-12-17", TAU2_DIRS_2025_12_17), meta={"tables": {"legacy": 16}}, spots=(
             S(benchmark="tau2_bench", model="Gemini 3.0 Pro")(score=(0.853 + 0.73 + 0.98) / 3),
             S(benchmark="tau2_bench", model="Qwen3-Max-Thinking-Preview")(
                 score=(0.7543859649122807 + 0.71 + 0.9583333333333334) / 3),
             S(benchmark="tau2_bench_telecom", model="Nemotron-Orchestrator-8B")(score=0.886, setting="custom",
                                                                                 model_tag="System: custom"),
             S(benchmark="tau2_bench", model="GPT-5")(model_tag=None))),
    snap("tau2_bench", "tau2_bench/tau2_bench_manifest_2026-07-01.json", 357, rejects=0,
         aux=tau2_snap("2026-07-01", TAU2_DIRS_2026_07_01), meta={"tables": {"text": 20, "voice": 11, "legacy": 16}},
         spots=(
             S(benchmark="tau2_bench_banking_knowledge", model="GPT-5.5")(score=0.3737, table_version="text"),
             S(benchmark="tau2_bench_retail", model="gpt-realtime-2", setting="effort=xhigh; custom")(score=0.5),
             S(benchmark="tau2_bench_retail", model="gpt-realtime-2", setting="effort=xhigh")(
                 score=0.47368421052631575, table_version="voice"),
             S(benchmark="tau2_bench_retail", model="Qwen3-Max-Thinking")(table_version="legacy",
                                                                         model_release_date="2026-01-23"),
             S("models", model="GPT-5")(release_date="2025-08-07"))),
    # lmarena_history/: routed to lmarena by name (backfill), the same tables continued
    snap("lmarena", "lmarena_history/lmarena_history_catalog_text_2025-03-07.json", 4049, rejects=0, spots=(
        S(benchmark="arena_elo", model="gpt-4.5-preview-2025-02-27")(score=1411.0096316492159,
                                                                    ci_high=1422.2250169218357),
        S(benchmark="arena_elo_text_coding", model="grok-3-preview-02-24")(ci_low=1388.80604852479))),
    snap("lmarena", "lmarena_history/lmarena_history_catalog_text_2025-05-27.json", 4662, rejects=0),
    snap("lmarena", "lmarena_history/lmarena_history_catalog_text_2025-11-05.json", 4275, rejects=0, spots=(
        S(benchmark="arena_elo_text_math", model="gemini-2.5-pro")(score=1480.9373576303433),)),
    snap("lmarena", "lmarena_history/lmarena_history_cherry_md_2025-01-21.md", 162, rejects=0),
    snap("lmarena", "lmarena_history/lmarena_history_cherry_md_2025-06-05.md", 201, rejects=0, spots=(
        S(model="o3-2025-04-16")(score=1419.0, ci_low=1415.0, ci_high=1425.0),)),
    snap("lmarena", "lmarena_history/lmarena_history_cherry_md_2025-10-09.md", 252, rejects=0),
    snap("lmarena", "lmarena_history/lmarena_history_cherry_md_2025-12-20.md", 289, rejects=0, spots=(
        S(model="gemini-3-pro")(score=1490.0, ci_low=1484.0),)),
    snap("lmarena", "lmarena_history/lmarena_history_cherry_md_2026-02-10.md", 303, rejects=0),
    snap("lmarena", "lmarena_history/lmarena_history_cherry_md_2026-03-11.md", 323, rejects=0, spots=(
        S(model="glm-5")(score=1452.0, ci_low=1445.0),)),
    snap("lmarena", "lmarena_history/lmarena_history_cherry_text_md_2026-07-29.md", 30, rejects=0, spots=(
        S(model="claude-fable-5")(score=1508.0, table_version="top30"),)),
    snap("lmarena", "lmarena_history/lmarena_history_elo_wide_2024-11-15.csv", 162, rejects=0, spots=(
        S(model="o1-preview")(score=1333.0761334393283, evaluated_at="2024-11-13"),)),
    snap("lmarena", "lmarena_history/lmarena_history_elo_wide_2024-12-20.csv", 182, rejects=0),
    snap("lmarena", "lmarena_history/lmarena_history_elo_wide_2025-01-28.csv", 195, rejects=0),
    snap("livebench_releases", "livebench_releases/livebench_changelog_2024-12-04.md", 0,   # '### 2024-06-31'
         meta={"releases": LB_OLD[:4]}, warnings=("'2024-06-31' is not a valid date",)),
    snap("livebench_releases", "livebench_releases/livebench_changelog_2025-04-07.md", 0,
         meta={"releases": LB_OLD}, warnings=("'2025-04-0' is not a full date",)),
    snap("livebench_releases", "livebench_releases/livebench_changelog_2025-05-30.md", 0,
         meta={"releases": ["2025_05_30", "2025_04_25", "2025_04_02"] + LB_OLD}),
    snap("livebench_releases", "livebench_releases/livebench_changelog_2025-11-10.md", 0,   # 2025-10-03: a re-run note
         meta={"releases": ["2025_10_03", "2025_05_30", "2025_04_25", "2025_04_02"] + LB_OLD}),
    snap("livebench_releases", "livebench_releases/livebench_changelog_2025-11-26.md", 0,
         meta={"releases": ["2025_11_25", "2025_10_03", "2025_05_30", "2025_04_25", "2025_04_02"] + LB_OLD}),
)

# --- issue 21, second set (src2): terminal_bench, arc_agi, artificial_analysis, matharena ----------
CASES += (
    # 20 systems: the live array's 16 picked entries (the commented-out OB-1 not read) + 4 launch
    # entries spread into it; Goose listed twice (2025-07-12, 2025-09-03), told apart by setting = date
    Case("terminal_bench", "terminal_bench/data.ts", scores=20, rejects=0, benchmarks=frozenset({"terminal_bench"}),
         meta={"arrays": ["rawLiveLeaderboardData"], "unverified": 16}, spots=(
             S(model="Apex2 (claude-4-5-sonnet)")(score=0.645, stderr=0.005700877125495691,
                                                  evaluated_at="2025-10-15", model_tag="Model: claude-4-5-sonnet"),
             S(model="Goose (claude-opus-4)", setting="2025-09-03")(score=0.4525, stderr=0.015),
             S(model="Abacus AI Desktop (gpt-5-mini + claude-sonnet-4-5)")(
                 score=0.6225, model_tag="Model: gpt-5-mini; Model: claude-sonnet-4-5"),
             S(model="Terminus 1 (o4-mini)")(score=0.18536585365853658, setting="2025-05-15"),
             Absent(dict(model="OB-1 (GPT-5)")))),
    # 28 evaluations of 10 models -> 28 score + 24 cost rows; o3-high and Gemini 2.5 hidden (display: false)
    Case("arc_agi", "arc_agi/evaluations.json", aux=(("models.json", "arc_agi/models.json"),
                                                    ("datasets.json", "arc_agi/datasets.json")),
         scores=52, rejects=0, models=9, excluded=8, spots=(
             S(benchmark="arc_agi", model="R1", table_version="semi_private")(
                 score=0.158, n_items=100, model_release_date="2025-01-22", is_reference=False),
             S(benchmark="arc_agi_2", model="R1", table_version="public_eval")(score=0.003, n_items=120),
             S(benchmark="arc_agi_2_cost_per_task", model="R1", table_version="semi_private")(score=0.08,
                                                                                             metric="cost_usd"),
             S(benchmark="arc_agi", model="2025_human_panel", table_version="semi_private")(score=0.98,
                                                                                           is_reference=True),
             S(benchmark="arc_agi", model="o3-high", table_version="semi_private")(
                 score=0.875, excluded_reason=Has("display: false")),
             S("models", model="ARChitects")(release_date="2024-11-03", org="ARC Prize 2024"))),
    # the later layout: one object, model fields inline, `cost` for costPerTask, an ARC-AGI-3 split
    Case("arc_agi", "arc_agi/evaluations_later_layout.json", scores=9, rejects=0, spots=(
        S(benchmark="arc_agi_2", model="gpt-5-2-high", table_version="semi_private")(
            score=0.529, model_release_date="2025-12-11"),
        S(benchmark="arc_agi_2_cost_per_task", model="gpt-5-2-high")(score=1.39),
        S(benchmark="arc_agi_3", model="gpt-5-2-high", table_version="public_preview")(score=0.125, n_items=None),
        S(benchmark="arc_agi_2", model="human_panel")(is_reference=True))),
    # the API's documented shape (hand-written: untested against the live service); 6 models x 10
    # evaluations, one null (aime), one key the parser does not know (kept under its name, warned)
    Case("artificial_analysis", "artificial_analysis/models_api.json", scores=60, rejects=0, models=6,
         meta={"layout": "api"}, warnings=("a_new_eval",), spots=(
             S(benchmark="gpqa_diamond", model="o3-mini")(score=0.748, metric="proportion", table_version="",
                                                          model_release_date="2025-01-31"),
             S(benchmark="aa_math_index", model="deepseek-r1")(score=82.7, metric="index"),
             S(benchmark="aime_2025", model="gpt-4o")(score=0.15),
             S(benchmark="a_new_eval", model="llama-3-3-instruct-70b")(score=0.512, metric="proportion"),
             Absent(dict(benchmark="aime_2025", model="llama-3-3-instruct-70b")),
             S("models", model="claude-3-7-sonnet-thinking")(org="Anthropic", release_date="2025-02-24"))),
    # the public page's payload (public-web-v1), 6 models of the 2026-04-30 copy
    Case("artificial_analysis", "artificial_analysis/llms_page_payload.json", scores=82, rejects=0, models=6,
         excluded=1, meta={"layout": "page_payload", "parser_version": "public-web-v1", "deprecated": 1}, spots=(
             S(benchmark="tau2_bench_telecom", model="gemini-3-1-pro-preview")(score=0.956, table_version="",
                                                                               n_items=None),
             S(benchmark="aa_intelligence_index", model="r1-1776")(excluded_reason=Has("estimated"), metric="index"),
             S(benchmark="aa_omniscience", model="gpt-5-nano-medium")(score=-24.883, metric="index"),
             S(benchmark="gpqa_diamond", model="mimo-v2-5-0424")(score=0.849, model_release_date=None),
             S("models", model="gpt-5-5-high")(release_date="2026-04-23", org="OpenAI", open_weights=False))),
    # 6 models x 15 AIME 2025 I questions (share of 4 samples correct), dated with the contest
    Case("matharena", "matharena/table_data.js", scores=6, items=90, rejects=0, meta={"contests": ["aime_2025_i"]},
         spots=(
             S(model="o3-mini (low)")(score=0.5333333333333333, n_items=15, table_version="aime_2025_i",
                                      benchmark="aime_2025"),
             S(model="claude-3.5-sonnet")(score=0.033333333333333335),
             S("items", model="claude-3.5-sonnet", item_id="aime_2025_i/01")(score=0.25, item_date="2025-02-06"),
             S("items", model="DeepSeek-R1", item_id="aime_2025_i/15")(score=0.0),
             Absent(dict(item_id="aime_2025_i/cost"), table="items"))),
)
SNAPSHOT_CASES += (
    snap("terminal_bench", "terminal_bench/terminal_bench_tb1_leaderboard_2025-11-11.ts", 62, rejects=0, spots=(
        # the paper's top 5 (Apex2 64.5, Abacus 62.3, Ante 60.3, Droid 58.8 / 57.5) are rows of this file
        S(model="Apex2 (claude-4-5-sonnet)")(score=0.645),
        S(model="Chaterm (claude-4-5-sonnet)")(score=0.6375, stderr=0.00559),
        S(model="Droid (claude-sonnet-4-5)")(score=0.575),
        S(model="OB-1 (GPT-5 + Claude 4.1 Opus + Claude 4 Sonnet)")(score=0.567))),
    # 89 evaluations + 85 numeric costs; 6 hidden (display: false), 2 of them with a cost
    snap("arc_agi", "arc_agi/arc_agi_evaluations_2025-04-16.json", 174, rejects=0, models=30, excluded=8,
         aux=(("models.json", "arc_agi/arc_agi_models_2025-04-16.json"),
              ("datasets.json", "arc_agi/arc_agi_datasets_2025-04-16.json"),
              ("providers.json", "arc_agi/arc_agi_providers_2025-04-16.json")), spots=(
             S(benchmark="arc_agi", model="o3-low", table_version="semi_private")(score=0.757),
             S(benchmark="arc_agi_2", model="ARChitects", table_version="semi_private")(score=0.025))),
    # the wide CSV export; gpt-4o's v1 semi-private cell is 4.500 (a percent in a 0-1 column): rejected
    snap("arc_agi", "arc_agi/arc_agi_leaderboard_2025-04-14.csv", 151, rejects=1, models=27, spots=(
        S(benchmark="arc_agi", model="ARChitects", table_version="semi_private")(score=0.56,
                                                                                  model_release_date="2024-11-03"),)),
    # every non-null evaluation value but the *_is_estimated flags; 120 estimated intelligence indexes
    snap("artificial_analysis", "artificial_analysis/artificial_analysis_llms_2026-04-10.json", 5523, rejects=0,
         models=445, excluded=120, spots=(
             S(benchmark="gpqa_diamond", model="gemini-3-1-pro-preview")(score=0.941, model_release_date="2026-02-19"),)),
    snap("artificial_analysis", "artificial_analysis/artificial_analysis_llms_2026-04-30.json", 6033, rejects=0,
         models=479, excluded=120, spots=(
             S(benchmark="gpqa_diamond", model="gemini-3-1-pro-preview")(score=0.941),)),
    snap("matharena", "matharena/matharena_aime2025i_table_data_2025-02-09.js", 16, rejects=0, items=240, spots=(
        S(model="o1 (medium)")(score=0.7833333333333334, n_items=15),
        S("items", model="DeepSeek-R1", item_id="aime_2025_i/04")(score=1.0))),
)

ALL_CASES = CASES + SNAPSHOT_CASES

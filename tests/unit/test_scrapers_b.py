"""Scrapers evalplus, simple_evals, lmarena, bfcl, epoch, alpacaeval, openrouter, knowledge_cutoffs:
behaviour beyond values (errors, aux files, zip members, column order, realigned headers).

Row counts and spot values of every fixture and snapshot file are declared in
`CASES` beside each scraper class (checked by hand against the files) and run by tests/unit/test_scraper_cases.py.
"""

from __future__ import annotations

import io
import zipfile
from datetime import datetime
from pathlib import Path

import pandas as pd
import pytest

import scrapers
from helpers import SNAPSHOTS, absent_reason, fixture_scraper as scraper, one
from scrapers.base import ParsedSnapshot, ScrapeError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
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


def test_simple_evals_2024_09_math500_only_for_the_o1_group():
    """Values: the source's `CASES`. Here: MATH-500 comes from the o1 group header and only its rows have it."""
    s = parse("simple_evals", "readme_2024-09-11.md").scores
    assert sorted(s[s.benchmark == "math_500"].model) == ["o1 (work in progress)", "o1-mini", "o1-preview"]


def test_simple_evals_2025_07_footnoted_math_column_splits_math_and_math_500():
    """Values: the source's `CASES`. Here: which models the footnoted MATH column gives to MATH-500."""
    s = parse("simple_evals", "readme_2025-07-09.md").scores
    math500 = set(s.loc[s.benchmark == "math_500", "model"])
    assert math500 == {"o3-high", "o3", "o1", "o1-preview", "o1-mini", "gpt-4.1-2025-04-14"}
    assert set(s.loc[s.benchmark == "math", "model"]) == {"gpt-4o-2024-11-20", "Claude 3.5 Sonnet", "Llama 3.1 405b"}


def test_simple_evals_a_footnote_on_a_row_or_cell_that_names_math_500_files_it_there():
    # Markup test (invented rows): the note is cited by the model cell of one row and by one MATH cell of
    # another; the header and group rows say nothing about MATH-500.
    md = (b"## Benchmark Results\n| Model | Prompt | MMLU | MATH |\n|-|-|-|-|\n"
          b"| model-a [^3] | n/a | 80.0 | 90.0 |\n| model-b | n/a | 81.0 | 91.0 [^4] |\n| model-c | n/a | 82.0 | 70.0 |\n"
          b"| model-d [^5] | n/a | 83.0 | 71.0 |\n\n"
          b"[^3]: This model's MATH number is a MATH-500 score.\n[^4]: Evaluated on MATH-500.\n"
          b"[^5]: Vendor-reported numbers, from its report.\n")
    s = parse_bytes("simple_evals", md).scores
    by = {(r.model, r.benchmark): r for r in s.itertuples()}
    assert by[("model-a", "math_500")].score == pytest.approx(0.90)
    assert by[("model-b", "math_500")].score == pytest.approx(0.91)
    assert ("model-c", "math") in by and ("model-a", "mmlu") in by          # the other cells stay where they are
    assert by[("model-d", "math")].reported_by == "vendor" and pd.isna(by[("model-c", "math")].reported_by)


def test_simple_evals_unseen_version_new_columns():
    md = (b"## Benchmark Results\n| Model | Prompt | HealthBench | MATH-500 | MMLU |\n|-|-|-|-|-|\n"
          b"| **GPT-5** | | | | |\n| gpt-5 [^1] | n/a | 67.2 | 99.1 | 93.0 |\n")
    p = parse_bytes("simple_evals", md)
    s = p.scores.set_index("benchmark").score
    assert s.to_dict() == pytest.approx({"healthbench": 0.672, "math_500": 0.991, "mmlu": 0.93})
    assert set(p.scores.model) == {"gpt-5"}
    assert any("HealthBench" in w for w in p.warnings)


def test_lmarena_2023_12_table_missing_elo_is_no_row():
    s = parse("lmarena", "leaderboard_table_20231206.csv").scores
    assert sorted(s.loc[s.benchmark == "arena_elo", "model"]) == ["GPT-4-0314", "GPT-4-Turbo"]


def test_lmarena_2025_table_online_cutoff_is_no_date():
    """Values of the table: the source's `CASES`. Here: an 'Online' cutoff is not a date."""
    online = (FIXTURES / "lmarena" / "leaderboard_table_20250511.csv").read_bytes().replace(b"2021/9", b"Online")
    s2 = parse_bytes("lmarena", online).scores
    assert pd.isna(one(s2, benchmark="mmlu", model="gpt-4-0314").knowledge_cutoff)


def test_lmarena_arena_hard_ci_from_offsets():
    """Without the quantile columns the CI comes from the "(minus, plus)" offsets."""
    df = pd.read_csv(FIXTURES / "lmarena" / "arena_hard_auto_leaderboard_v0.1.csv").drop(columns=["rating_q025", "rating_q975"])
    s2 = parse_bytes("lmarena", df.to_csv(index=False).encode()).scores
    r2 = one(s2, model="claude-3-5-sonnet-20240620")
    assert (r2.ci_low, r2.ci_high) == pytest.approx((0.7935 - 0.021, 0.7935 + 0.013))


def test_lmarena_a_display_name_two_keys_share_is_stated_for_neither():
    """A row's display name is the same entry as its key, stated with the key's facts; one that two
    keys share (Gemini-1.5-Pro-001 for two snapshots) names no one entry: only the keys are stated."""
    table = (b"key,Model,MT-bench (score),MMLU,Knowledge cutoff date,License,Organization,Link\n"
             b"acme-pro-001,Acme-Pro-001,-,0.8,2024/1,Proprietary,Acme,https://acme.example/pro\n"
             b"acme-pro-api-0514,Acme-Pro-001,-,0.81,2024/1,Proprietary,Acme,https://acme.example/pro-api\n"
             b"acme-mini,Acme-Mini,-,0.7,2024/1,Proprietary,Acme,\n")
    models = parse_bytes("lmarena", table).models.set_index("model")
    assert set(models.index) == {"acme-pro-001", "acme-pro-api-0514", "acme-mini", "Acme-Mini"}
    assert models.loc["acme-pro-api-0514", "link"] == "https://acme.example/pro-api"
    assert models.loc["Acme-Mini", "org"] == "Acme" and pd.isna(models.loc["Acme-Mini", "link"])


def test_lmarena_markdown_cell_links_state_the_models_page_and_nothing_else_does():
    """The model cell's link (`[name](url)`, or the note after the name) is the page the board gives
    for the model; a cell without one, or with text that is not a URL, states no page."""
    md = ("# board\n\n> **数据更新时间**: 2026-07-29 04:46:45 UTC\n\n"
          "| 排名 | 模型 | 分数 |\n|---:|:---|:---|\n"
          "| 1 | acme-5 [<sup>1</sup>](https://acme.example/news/acme-5) | 1500 (±5) |\n"
          "| 2 | [acme-4](https://acme.example/acme-4) | 1490 (±5) |\n"
          "| 3 | acme-3 [<sup>1</sup>](not a link) | 1480 (±5) |\n"
          "| 4 | acme-2 | 1470 (±5) |\n").encode()
    p = parse_bytes("lmarena", md)
    assert len(p.scores) == 4
    assert dict(zip(p.models["model"], p.models["link"])) == {
        "acme-5": "https://acme.example/news/acme-5", "acme-4": "https://acme.example/acme-4"}


def test_lmarena_aux_arena_hard_is_parsed_with_the_table():
    aux = {"arena_hard_auto_leaderboard_v0.1.csv": (FIXTURES / "lmarena" / "arena_hard_auto_leaderboard_v0.1.csv").read_bytes()}
    p = parse("lmarena", "leaderboard_table_20250511.csv", aux=aux)
    assert p.scores.benchmark.value_counts().to_dict() == {"mmlu": 3, "mt_bench": 2, "arena_hard_auto": 3}


# --- bfcl ------------------------------------------------------------------------------
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
    assert "FC Any" in set(s.setting)


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
    # gsm8k_external is declared with more columns (Name, Shots, id) than this copy has: that member fails
    assert any("gsm8k_external.csv" in w and "'Name'" in w for w in p.warnings)
    assert p.meta["failed"] == ["benchmark_data/gsm8k_external.csv"]


def test_an_unparseable_epoch_file_names_the_columns_it_found():
    body = b"Model version,Release date,Organization,Notes\ngpt-4,2023-03-14,OpenAI,x\n"
    with pytest.raises(ScrapeError, match=r"\[epoch\].*lacks its declared column\(s\) \['mean_score', 'stderr', "
                                          r"'Started at', 'id'\].*columns found: \['Model version', "
                                          r"'Release date', 'Organization', 'Notes'\]"):
        parse_bytes("epoch", body, filename="gpqa_diamond.csv")
    # in the zip: that member is skipped and named with its columns, an undeclared one is named and never
    # read; the others parse
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("benchmark_data/odd.csv", body)
        z.writestr("benchmark_data/frontiermath.csv", body)
        z.write(FIXTURES / "epoch" / "swe_bench_bash_only.csv", "benchmark_data/swe_bench_bash.csv")
    p = parse_bytes("epoch", buf.getvalue(), filename="benchmark_data.zip")
    assert set(p.scores.benchmark) == {"swebench_bash_only"}
    assert any("frontiermath.csv lacks" in w and "['Model version', 'Release date', 'Organization', 'Notes']" in w
               for w in p.warnings)
    assert any("undeclared" in w and "odd.csv" in w for w in p.warnings)


def test_epoch_a_report_s_name_takes_the_one_version_the_hub_gives_it_in_that_report():
    """A copied row without a Model version is named by its report's name; where another member's
    row gives that name from the same report (one arXiv paper: abs/pdf, any version) exactly one
    version, the row is that version. Counter-examples keep their own name: another report's
    version (one name meant other snapshots elsewhere), two versions in one report, a row with a
    version of its own, a size or chat variant that is a different name."""
    head = "Model version,EM,Release date,Organization,Name,Shots,Source,Source link,Notes,id\n"
    paper, other = "http://arxiv.org/abs/2309.10305", "https://arxiv.org/abs/2302.13971"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("benchmark_data/bbh_external.csv", head.replace("EM,", "Average,") + "".join([
            f"acme-turbo-0613,0.5,2023-06-13,Acme,Acme Turbo,3,P,{paper},,r1\n",
            f"acme-4-0314,0.6,2023-03-14,Acme,Acme 4,3,P,{paper},,r2\n",
            f"acme-4-0613,0.61,2023-06-13,Acme,Acme 4,3,P,{paper},,r3\n",
            f"acme-7b-chat,0.3,2023-07-01,Acme,Acme 7B,3,P,{paper},,r4\n",      # a chat model under the base's name
            f"acme-big-0301,0.7,2023-03-01,Acme,Acme Big,3,Q,{other},,r5\n"]))
        z.writestr("benchmark_data/mmlu_external.csv", head + "".join([
            f",0.7,,,Acme Turbo,5,P,https://arxiv.org/pdf/2309.10305v2,,m1\n",   # same paper: the version
            f",0.8,,,Acme 4,5,P,{paper},,m2\n",                                 # two versions: ambiguous
            f",0.4,,,Acme Big,5,P,{paper},,m3\n",                               # versioned in another paper only
            f",0.35,,,Acme 7B (base),5,P,{paper},,m4\n",                        # another name
            f"acme-small-0301,0.69,2023-03-01,Acme,Acme 4,5,P,{paper},,m5\n"]))   # its own version stands
    p = parse_bytes("epoch", buf.getvalue(), filename="benchmark_data.zip")
    mmlu = dict(zip(p.scores.loc[p.scores.benchmark == "mmlu", "setting"].str.extract(r"run=(\w+)")[0],
                    p.scores.loc[p.scores.benchmark == "mmlu", "model"]))
    assert mmlu == {"m1": "acme-turbo-0613", "m2": "Acme 4", "m3": "Acme Big", "m4": "Acme 7B (base)",
                    "m5": "acme-small-0301"}
    assert p.meta["named_by_report"] == 1
    assert not {"_report_name", "_report", "_versioned"} & set(p.scores.columns)


def test_a_board_s_rank_medal_is_no_part_of_a_model_s_name():
    """ScienceQA's board (copied by Epoch) marks its top three with medals that move as ranks change:
    the name without them is the model's in every snapshot. Other characters stay."""
    from scrapers.normalize import clean_name
    assert clean_name("MC-CoT_F-Large 🥈") == clean_name("MC-CoT_F-Large") == "MC-CoT_F-Large"
    assert clean_name("🥇 Honeybee (Vicuna-13B)") == "Honeybee (Vicuna-13B)"
    assert clean_name("🏆") is None                       # a medal alone names nothing
    assert clean_name("Rocket 🚀 7B") == "Rocket 🚀 7B"   # not a rank decoration


def test_epoch_runs_csv_without_a_name_is_an_error():
    with pytest.raises(ScrapeError, match=r"\[epoch\].*file name"):
        parse_bytes("epoch", (FIXTURES / "epoch" / "gpqa_diamond.csv").read_bytes(), filename=None)


def test_alpacaeval_without_file_name_assumes_v2_and_warns():
    p = parse("alpacaeval", "alpacaeval_v2_2024-01-09.csv", filename=None)
    assert set(p.scores.benchmark) == {"alpacaeval_2"} and any("assuming AlpacaEval 2" in w for w in p.warnings)


def test_knowledge_cutoffs_2024_readme_floor():
    with pytest.raises(ScrapeError, match=r"\[knowledge_cutoffs\].*floor of 20"):
        parse("knowledge_cutoffs", "readme_2024-11-14.md", floor=None)


# --- column order does not matter ------------------------------------------------------
@pytest.mark.parametrize("source,name,filename", [
    ("lmarena", "leaderboard_table_20250511.csv", None),
    ("lmarena", "arena_hard_auto_leaderboard_v0.1.csv", None),
    ("bfcl", "data_overall_2025-12-16.csv", None),
    ("epoch", "gpqa_diamond.csv", "gpqa_diamond.csv"),
    ("epoch", "swe_bench_bash_only.csv", "swe_bench_bash.csv"),
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


def _snapshot(rel: str) -> Path:
    path = SNAPSHOTS / rel
    if not path.parent.is_dir():
        pytest.skip(absent_reason(path.parent))
    assert path.exists(), f"{rel} listed but missing"
    return path


def test_snapshot_alpacaeval_exclusions():
    path = _snapshot("alpacaeval/alpacaeval_v2_src_with_stderr_2024-12-28.csv")
    s = parse_bytes("alpacaeval", path.read_bytes(), filename=path.name, floor=None).scores
    excluded = s[s.excluded_reason != ""]
    assert set(excluded[excluded.excluded_reason.str.contains("adversarial")].model) == {"NullModel", "gpt4_gamed"}
    assert excluded.model.nunique() == 14    # + 12 mode=dev prompt variants


def test_snapshot_openrouter_cutoff_count():
    path = _snapshot("model_metadata/openrouter_models_2026-05-15.json")
    m = parse_bytes("openrouter", path.read_bytes(), filename="models", floor=None).models
    assert m.knowledge_cutoff.notna().sum() == 190



"""Scrapers swebench, aider_polyglot, aider_edit, livecodebench, livebench.

Fixture values were checked by hand against the fixture files (cut from the real snapshots);
snapshot spot values were checked against the raw files with plain json/csv/yaml reads.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path

import pandas as pd
import pytest

import scrapers
from helpers import SNAPSHOTS, absent_reason, fixture_scraper as scraper, one, require
from scrapers.base import ParsedSnapshot, ScrapeError

FIXTURES = Path(__file__).parent / "fixtures"
AT = datetime(2026, 1, 1)
MY_SOURCES = ("swebench", "aider_polyglot", "aider_edit", "livecodebench", "livebench")


def parse(source: str, path: Path, *, aux: dict | None = None, filename: str | None = None,
          floor: int | None = 1) -> ParsedSnapshot:
    return scraper(source, floor=floor).parse_checked(path.read_bytes(), fetched_at=AT, aux=aux,
                                                      filename=filename or path.name)




# --- registry --------------------------------------------------------------------------
@pytest.mark.parametrize("source", MY_SOURCES)
def test_registered_with_production_url(source):
    s = scrapers.get(source)
    assert s.name == source and source in scrapers.SOURCES
    assert s.urls and all(u.startswith("https://") for u in s.urls)


def test_aider_sources_share_one_parser():
    from scrapers._aider import AiderScraper
    assert isinstance(scrapers.get("aider_polyglot"), AiderScraper)
    assert isinstance(scrapers.get("aider_edit"), AiderScraper)
    assert "parse" not in vars(type(scrapers.get("aider_edit")))


# --- swebench fixtures -----------------------------------------------------------------
SWE = FIXTURES / "swebench"


def test_swebench_json_old_schema():
    p = parse("swebench", SWE / "leaderboards_2025-05-07.json")
    assert p.meta["variant"] == "json"
    assert len(p.scores) == 5 and len(p.items) == 0
    r = one(p.scores, model="SWE-agent 1.0 (Claude 3.7 Sonnet)")
    assert r.benchmark == "swebench_full"          # board "Test"
    assert r.setting == "20250227_sweagent-claude-3-7-20250219"
    assert r.score == pytest.approx(0.3383) and r.raw_value == "33.83"
    assert r.n_items == 2294 and r.evaluated_at == pd.Timestamp("2025-02-27")
    assert pd.isna(r.model_release_date)             # `date` is a submission date, never a model date
    v = one(p.scores, model="Blackbox AI Agent")
    assert v.benchmark == "swebench_verified" and v.n_items == 500 and v.score == pytest.approx(0.628)


def test_swebench_json_new_schema_items_and_same_names():
    p = parse("swebench", SWE / "leaderboards_2025-11-24.json")
    assert len(p.scores) == 6
    assert set(p.scores.benchmark) == {"swebench_bash_only", "swebench_verified", "swebench_multimodal"}
    # two Verified entries named "Warp" are kept apart by their folder
    warp = p.scores[p.scores.model == "Warp"].set_index("setting")
    assert warp.loc["20250901_warp", "score"] == pytest.approx(0.756)
    assert warp.loc["20250623_warp", "score"] == pytest.approx(0.71)
    assert one(p.scores, model="GUIRepair + o3 (2025-04-16)").n_items == 517
    # per_instance_details trimmed to 4 instances on 3 entries
    assert len(p.items) == 12
    it = one(p.items, benchmark="swebench_bash_only", model="Gemini 3 Pro Preview (2025-11-18)",
             item_id="pytest-dev__pytest-10356")
    assert it.score == 0.0 and pd.isna(it.item_date)
    it = one(p.items, benchmark="swebench_verified", model="mini-SWE-agent + Gemini 3 Pro Preview (2025-11-18)",
             item_id="django__django-11532")
    assert it.score == 1.0


def test_swebench_html_table_variant():
    p = parse("swebench", SWE / "index_2025-05-21.html")
    assert p.meta["variant"] == "html_table"
    assert len(p.scores) == 6
    r = one(p.scores, model="OpenHands")
    assert r.benchmark == "swebench_verified" and r.score == pytest.approx(0.658)
    assert r.evaluated_at == pd.Timestamp("2025-04-15")
    # no folder in this layout: the two "devlo" entries are told apart by submission date
    devlo = p.scores[p.scores.model == "devlo"].set_index("setting")
    assert devlo.loc["2024-12-13", "score"] == pytest.approx(0.582)
    assert devlo.loc["2024-11-08", "score"] == pytest.approx(0.542)
    assert any("folder" in w for w in p.warnings)


def test_swebench_html_script_variant():
    p = parse("swebench", SWE / "index_2025-11-18.html")
    assert p.meta["variant"] == "html_script"
    assert len(p.scores) == 4
    r = one(p.scores, model="ExpeRepair-v1.0 + Claude 4 Sonnet")
    assert r.benchmark == "swebench_lite" and r.n_items == 300 and r.score == pytest.approx(0.6033)
    assert r.setting == "20250625_ExpeRepair-v1_claude-4-sonnet-20250514"
    assert one(p.scores, model="Claude 4 Opus (20250514)").benchmark == "swebench_bash_only"


def test_swebench_unknown_board_and_percent_strings():
    data = {"leaderboards": [{"name": "verified-mini", "results": [
        {"name": "A", "folder": "20250101_a", "resolved": "41.5%", "date": "2025-01-01"},
        {"name": "B", "folder": "20250102_b", "resolved": "N/A", "date": "2025-01-02"},
        {"name": "C", "folder": "20250103_c", "resolved": 12.0, "new_field": {"x": 1}}]}]}
    p = scraper("swebench").parse_checked(json.dumps(data).encode(), fetched_at=AT)
    r = one(p.scores, model="A")
    assert r.benchmark == "swebench_verified_mini" and r.score == pytest.approx(0.415) and pd.isna(r.n_items)
    assert pd.isna(one(p.scores, model="C").evaluated_at)
    assert len(p.rejects) == 1 and "score" in p.rejects.reason[0]     # B: N/A is not a score
    assert any("n_items" in w for w in p.warnings) and any("submission date" in w for w in p.warnings)


def test_swebench_floor():
    with pytest.raises(ScrapeError, match=r"\[swebench\].*floor"):
        parse("swebench", SWE / "leaderboards_2025-05-07.json", floor=None)


# --- aider fixtures --------------------------------------------------------------------
def test_aider_polyglot_fixture():
    p = parse("aider_polyglot", FIXTURES / "aider_polyglot" / "polyglot_leaderboard_2025-10-04.yml")
    assert len(p.scores) == 6 and set(p.scores.benchmark) == {"aider_polyglot"}
    r = one(p.scores, model="gpt-5 (high)")
    assert r.setting == "diff" and r.score == pytest.approx(0.88) and r.raw_value == "88.0"
    assert r.n_items == 225 and r.evaluated_at == pd.Timestamp("2025-08-23")
    # one model, two edit formats -> two settings
    qwen = p.scores[p.scores.model == "Qwen2.5-Coder-32B-Instruct"].set_index("setting")
    assert set(qwen.index) == {"whole", "diff"}
    assert one(p.scores, model="o3 (high) + gpt-4.1").n_items == 224
    assert p.scores.model_release_date.isna().all()


def test_aider_edit_fixture():
    p = parse("aider_edit", FIXTURES / "aider_edit" / "edit_leaderboard_2024-12-22.yml")
    assert len(p.scores) == 5
    opus = one(p.scores, model="claude-3-opus-20240229")
    assert opus.model_release_date == pd.Timestamp("2024-02-29")        # from `_released`
    assert opus.score == pytest.approx(0.684) and opus.setting == "diff" and opus.n_items == 133
    sonnet = one(p.scores, model="claude-3-sonnet-20240229")
    assert sonnet.model_release_date == pd.Timestamp("2024-02-29")      # from `released`
    assert sonnet.evaluated_at == pd.Timestamp("2024-03-06")
    assert one(p.scores, model="gpt-4-turbo-2024-04-09 (diff)").n_items == 33
    assert pd.isna(one(p.scores, model="gpt-3.5-turbo-1106").model_release_date)
    # a 225-case polyglot run listed on the 133-task board is kept but excluded
    o1 = one(p.scores, model="o1-mini-2024-09-12")
    assert "exceeds" in o1.excluded_reason
    assert (p.scores.excluded_reason != "").sum() == 1


def test_aider_same_model_and_format_disambiguated():
    runs = """
- dirname: 2025-08-23-15-47-21--gpt-5-high
  test_cases: 225
  model: gpt-5
  edit_format: diff
  pass_rate_2: 88.0
  reasoning_effort: high
  date: 2025-08-23
- dirname: 2025-08-25-13-23-27--gpt-5-medium
  test_cases: 225
  model: gpt-5
  edit_format: diff
  pass_rate_2: 86.7
  reasoning_effort: medium
  date: 2025-08-25
- dirname: 2025-08-25-00-00-00--gpt-5-medium-again
  test_cases: 225
  model: gpt-5
  edit_format: diff
  pass_rate_2: 86.2
  reasoning_effort: medium
  date: 2025-08-26
- dirname: 2025-01-01-00-00-00--other
  test_cases: 225
  model: other
  edit_format: whole
  pass_rate_2: '12.5%'
"""
    p = scraper("aider_polyglot").parse_checked(runs.encode(), fetched_at=AT)
    assert len(p.scores) == 4 and len(p.rejects) == 0
    assert set(p.scores.setting) == {
        "diff reasoning_effort=high",
        "diff reasoning_effort=medium dirname=2025-08-25-13-23-27--gpt-5-medium",
        "diff reasoning_effort=medium dirname=2025-08-25-00-00-00--gpt-5-medium-again",
        "whole"}
    assert one(p.scores, model="other").score == pytest.approx(0.125)
    assert not any("'date'" in w for w in p.warnings)   # `date` present on some rows: no warning
    assert pd.isna(one(p.scores, model="other").evaluated_at)


# --- livecodebench fixtures ------------------------------------------------------------
LCB = FIXTURES / "livecodebench"


def test_livecodebench_generation_fixture():
    p = parse("livecodebench", LCB / "performances_generation_2024-03-17.json")
    assert p.meta["benchmark"] == "livecodebench"
    assert len(p.items) == 12 and len(p.scores) == 3 and len(p.models) == 3
    it = one(p.items, model="GPT-4-Turbo-1106", item_id="1873_A")
    assert it.score == pytest.approx(0.9) and it.item_date == pd.Timestamp("2023-08-22")
    assert it.difficulty == "easy" and it.platform == "codeforces"
    # question_id 2727 is an integer in the real file
    assert one(p.items, model="Claude-3-Opus", item_id="2727").item_date == pd.Timestamp("2023-05-14")
    # GPT-4-Turbo-1106: pass@1 90, 0, 100, 0 -> mean 0.475, sd 0.55, stderr 0.55 / 2
    r = one(p.scores, model="GPT-4-Turbo-1106")
    assert r.score == pytest.approx(0.475) and r.stderr == pytest.approx(0.275) and r.n_items == 4
    assert r.metric == "proportion" and r.raw_value == "47.5"
    assert r.knowledge_cutoff == pd.Timestamp("2023-04-30 07:00:00")    # 1682838000000 ms
    # Claude-3-Opus: 100, 100, 100, 0 -> mean 0.75, sd 0.5, stderr 0.25
    r = one(p.scores, model="Claude-3-Opus")
    assert r.score == pytest.approx(0.75) and r.stderr == pytest.approx(0.25)
    m = one(p.models, model="DSCoder-33b-Ins")
    assert m.knowledge_cutoff == pd.Timestamp("2023-08-30 07:00:00")
    assert m.provenance == "leaderboard" and pd.isna(m.release_date)


def test_livecodebench_repair_by_file_name():
    path = LCB / "performances_repair_2024-10-22.json"
    p = parse("livecodebench", path)
    assert set(p.scores.benchmark) == {"livecodebench_repair"} and set(p.items.benchmark) == {"livecodebench_repair"}
    # Claude-3.5-Sonnet-20241022: 100, 100, 100, 80 -> 0.95
    r = one(p.scores, model="Claude-3.5-Sonnet-20241022")
    assert r.score == pytest.approx(0.95) and r.n_items == 4
    assert r.knowledge_cutoff == pd.Timestamp("2024-03-31")              # 1711843200000 ms
    r = one(p.scores, model="O1-Mini-2024-09-12 (N=1)")
    assert r.score == 1.0 and r.stderr == 0.0
    # the same bytes under the production name are generation data (the schemas are identical)
    p = parse("livecodebench", path, filename="performances_generation.json")
    assert set(p.scores.benchmark) == {"livecodebench"}


def test_livecodebench_model_without_metadata_and_missing_optional():
    data = {"performances": [
        {"question_id": "q1", "model": "M", "pass@1": 50},
        {"question_id": "q2", "model": "M", "pass@1": "-"},
        {"question_id": "q1", "model": "M", "pass@1": 10}]}
    p = scraper("livecodebench").parse_checked(json.dumps(data).encode(), fetched_at=AT)
    r = one(p.scores, model="M")
    assert r.score == pytest.approx(0.5) and r.n_items == 1 and pd.isna(r.knowledge_cutoff)
    assert len(p.models) == 0
    assert any("duplicate" in w for w in p.warnings)
    assert any("'date'" in w for w in p.warnings) and any("'models'" in w for w in p.warnings)


# --- livebench fixtures ----------------------------------------------------------------
LB = FIXTURES / "livebench"


def lb_aux(release: str) -> dict:
    return {f"categories_{release}.json": (LB / f"categories_{release}.json").read_bytes()}


def test_livebench_2026_release():
    p = parse("livebench", LB / "table_2026_01_08.csv", aux=lb_aux("2026_01_08"))
    assert p.meta["release"] == "2026_01_08"
    # 2 well-formed models x (23 tasks + 7 categories + global); the 21-field row is rejected
    assert len(p.scores) == 2 * (23 + 7 + 1)
    assert len(p.rejects) == 1 and "21 fields" in p.rejects.reason[0]
    s = p.scores[p.scores.model == "arcee-trinity-large-preview"].set_index("benchmark")["score"]
    assert s["livebench_task_amps_hard"] == pytest.approx(0.61)
    assert s["livebench_reasoning"] == pytest.approx((26.923 + 7.5 + 46.0 + 2.0) / 4 / 100)
    assert s["livebench_agentic_coding"] == pytest.approx(10.0 / 3 / 100)
    assert s["livebench_if"] == pytest.approx((12.55 + 11.0 + 10.6 + 14.617) / 4 / 100)
    assert s["livebench_data_analysis"] == pytest.approx((6.556 + 20.308 + 94.118) / 3 / 100)
    assert s["livebench"] == pytest.approx(0.3274095, abs=1e-6)
    assert "nemotron-3-super-120b-a12b" not in set(p.scores.model)


def test_livebench_2024_release_with_blank_cell():
    p = parse("livebench", LB / "table_2024_11_25.csv", aux=lb_aux("2024_11_25"))
    # 3 models x 18 tasks - 1 blank; 3 x 6 categories - 1 (phi-3 Language); global for 2 models
    assert len(p.scores) == 53 + 17 + 2 and len(p.rejects) == 0
    phi = p.scores[p.scores.model == "phi-3-small-8k-instruct"]
    assert "livebench_task_connections" not in set(phi.benchmark)
    assert "livebench_language" not in set(phi.benchmark) and "livebench" not in set(phi.benchmark)
    r = one(p.scores, model="amazon.nova-lite-v1:0", benchmark="livebench_reasoning")
    assert r.score == pytest.approx((54.0 + 26.0 + 30.0) / 3 / 100) and pd.isna(r.n_items)
    assert one(p.scores, model="amazon.nova-micro-v1:0", benchmark="livebench_task_lcb_generation").raw_value == "24.359"


def test_livebench_without_categories_or_wrong_release():
    p = parse("livebench", LB / "table_2024_11_25.csv")
    assert len(p.scores) == 53 and p.scores.benchmark.str.startswith("livebench_task_").all()
    assert any("no categories" in w for w in p.warnings)
    p = parse("livebench", LB / "table_2024_11_25.csv", aux=lb_aux("2026_01_08"))
    assert len(p.scores) == 53 and any("not for release" in w for w in p.warnings)


def test_livebench_snapshot_style_name_and_no_release():
    content = (LB / "table_2024_11_25.csv").read_bytes()
    s = scraper("livebench")
    p = s.parse_checked(content, fetched_at=AT, filename="livebench_table_2026_01_08_2026-07-01.csv")
    assert p.meta["release"] == "2026_01_08"
    p = s.parse_checked(content, fetched_at=AT, aux=lb_aux("2024_11_25"), filename=None)
    assert p.meta["release"] is None and any("release" in w for w in p.warnings)
    assert "livebench" in set(p.scores.benchmark)    # the only categories file is used


def test_livebench_production_urls_are_newest_release():
    from scrapers.livebench import RELEASES
    s = scrapers.get("livebench")
    assert s.urls == (f"https://livebench.ai/table_{RELEASES[0]}.csv", f"https://livebench.ai/categories_{RELEASES[0]}.json")
    assert list(RELEASES) == sorted(RELEASES, reverse=True)


# --- errors ------------------------------------------------------------------------------
HTML_ERROR = b"<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head><body><h1>Not Found</h1></body></html>"


@pytest.mark.parametrize("source", MY_SOURCES)
def test_html_error_page(source):
    with pytest.raises(ScrapeError, match=rf"^\[{source}\]") as err:
        scraper(source).parse_checked(HTML_ERROR, fetched_at=AT, filename="x")
    assert "HTML" in err.value.reason


@pytest.mark.parametrize("source, content", [
    ("swebench", (SWE / "leaderboards_2025-05-07.json").read_bytes()[:1500]),
    ("livecodebench", (LCB / "performances_generation_2024-03-17.json").read_bytes()[:700]),
    ("aider_polyglot", b"- dirname: x\n  model: [unclosed\n  pass_rate_2: 3"),
    ("livebench", b'model,a\n"unterminated,1\n'),
])
def test_truncated_or_malformed(source, content):
    with pytest.raises(ScrapeError, match=rf"^\[{source}\] .*(malformed|no rows|no \(well-formed\) rows)"):
        scraper(source).parse_checked(content, fetched_at=AT, filename="performances_generation.json")


@pytest.mark.parametrize("source, content", [
    ("swebench", b'{"leaderboards": []}'),
    ("swebench", b'{"leaderboards": [{"name": "Verified", "results": []}]}'),
    ("aider_polyglot", b"[]\n"),
    ("aider_edit", b"# nothing yet\n"),
    ("livecodebench", b'{"performances": [], "models": [], "date_marks": []}'),
    ("livebench", b"model,AMPS_Hard,typos\n"),
])
def test_empty_table(source, content):
    with pytest.raises(ScrapeError, match=rf"^\[{source}\]"):
        scraper(source).parse_checked(content, fetched_at=AT, filename="table_2026_01_08.csv")


@pytest.mark.parametrize("source, content, missing", [
    ("swebench", b'{"leaderboards": [{"name": "Lite", "results": [{"name": "A", "folder": "f", "date": "2025-01-01"}]}]}', "resolved"),
    ("swebench", b'{"boards": []}', "leaderboards"),
    ("aider_edit", b"- dirname: x\n  model: m\n  edit_format: diff\n  pass_rate_1: 10.0\n", "pass_rate_2"),
    ("aider_polyglot", b"- dirname: x\n  edit_format: diff\n  pass_rate_2: 10.0\n", "model"),
    ("livecodebench", b'{"performances": [{"question_id": "q", "model": "m", "pass@5": 10}]}', "pass@1"),
    ("livecodebench", b'{"models": []}', "performances"),
    ("livebench", b"name,AMPS_Hard\nx,1.0\n", "model"),
])
def test_missing_mandatory_field(source, content, missing):
    with pytest.raises(ScrapeError, match=rf"^\[{source}\] .*{re.escape(missing)}"):
        scraper(source).parse_checked(content, fetched_at=AT, filename="table_2026_01_08.csv")


def test_swebench_html_without_leaderboard():
    page = b"<html><body><div id='leaderboard-container'></div><p>Maintenance</p></body></html>"
    with pytest.raises(ScrapeError, match=r"^\[swebench\] .*leaderboard"):
        scraper("swebench").parse_checked(page, fetched_at=AT)


def test_livebench_categories_aux_html():
    with pytest.raises(ScrapeError, match=r"^\[livebench\] .*HTML"):
        parse("livebench", LB / "table_2024_11_25.csv", aux={"categories_2024_11_25.json": HTML_ERROR})


# --- every snapshot file ----------------------------------------------------------------
def snapshot_params() -> list:
    """(source, file) for every snapshot file of these sources; categories JSONs are aux, not primary."""
    params = []
    for source in MY_SOURCES:
        folder = SNAPSHOTS / source
        if not folder.is_dir():
            params.append(pytest.param(source, None, id=f"{source}-no-snapshots"))
            continue
        params += [pytest.param(source, p, id=p.name) for p in sorted(folder.iterdir())
                   if not (source == "livebench" and "categories" in p.name)]
    return params


def snapshot_parse(source: str, path: Path | None) -> ParsedSnapshot:
    if path is None:
        pytest.skip(absent_reason(SNAPSHOTS / source))
    aux = None
    if source == "livebench":
        release = re.search(r"table_(\d{4}_\d{2}_\d{2})", path.name).group(1)
        cats = sorted(path.parent.glob(f"livebench_categories_{release}_*.json"))
        aux = {f"categories_{release}.json": cats[-1].read_bytes()} if cats else None
    return parse(source, path, aux=aux, floor=None)   # the source's real floor


# file -> (score rows, item rows, [(where, column, expected)])
SWE_EXPECT = {
    "swebench_2025-05-07.json": (168, 0, [
        (dict(benchmark="swebench_full", setting="20250227_sweagent-claude-3-7-20250219"), "score", 0.3383),
        (dict(benchmark="swebench_verified", setting="20250316_augment_agent_v0"), "evaluated_at", pd.Timestamp("2025-03-16"))]),
    "swebench_2025-11-18.json": (299, 0, [
        (dict(benchmark="swebench_bash_only", model="Claude 4.5 Sonnet (20250929)"), "score", 0.706),
        (dict(benchmark="swebench_lite", setting="20250625_ExpeRepair-v1_claude-4-sonnet-20250514"), "n_items", 300)]),
    "swebench_2025-11-24.json": (306, 17000, [
        (dict(benchmark="swebench_bash_only", model="Gemini 3 Pro Preview (2025-11-18)"), "score", 0.742),
        (dict(benchmark="swebench_verified", setting="20250928_trae_doubao_seed_code"), "score", 0.788)]),
    "swebench_index_2025-05-21.html": (178, 0, [
        (dict(benchmark="swebench_verified", model="OpenHands"), "score", 0.658),
        (dict(benchmark="swebench_multimodal", model="Globant Code Fixer Agent"), "n_items", 517)]),
    "swebench_index_2025-11-18.html": (299, 0, [
        (dict(benchmark="swebench_bash_only", model="Claude 4.5 Sonnet (20250929)"), "score", 0.706),
        (dict(benchmark="swebench_verified", setting="20250928_trae_doubao_seed_code"), "evaluated_at", pd.Timestamp("2025-09-28"))]),
}
AIDER_EXPECT = {
    "aider_polyglot_2024-12-22.yml": (10, 0, [
        (dict(model="o1-2024-12-17", setting="diff"), "score", 0.617),
        (dict(model="o1-2024-12-17", setting="diff"), "n_items", 224)]),
    "aider_polyglot_2025-10-04.yml": (69, 0, [
        (dict(model="gpt-5 (high)", setting="diff"), "score", 0.88),
        (dict(model="Gemini 2.0 Pro exp-02-05", setting="whole"), "evaluated_at", pd.Timestamp("2025-02-25"))]),
    "aider_edit_2024-07-13.yml": (31, 0, [
        (dict(model="claude-3-opus-20240229", setting="diff"), "score", 0.684),
        (dict(model="claude-3-opus-20240229", setting="diff"), "model_release_date", pd.Timestamp("2024-02-29"))]),
    "aider_edit_2024-12-22.yml": (98, 0, [
        (dict(model="gpt-4-turbo-2024-04-09 (diff)"), "n_items", 33),
        (dict(model="gemini-1.5-pro-001"), "model_release_date", pd.Timestamp("2024-05-03"))]),
}
LCB_EXPECT = {
    "livecodebench_generation_2024-02-26.json": (16, 5583, [
        (dict(model="GPT-4-Turbo-1106"), "score", 0.4163323782234957),
        (dict(model="GPT-4-Turbo-1106"), "n_items", 349)]),
    "livecodebench_generation_2024-03-17.json": (30, 12000, [
        (dict(model="GPT-4-Turbo-1106"), "score", 0.383),
        (dict(model="GPT-4-Turbo-1106"), "stderr", 0.022523226663788004)]),
    "livecodebench_repair_2024-06-20.json": (30, 12000, [
        (dict(model="GPT-4O-2024-05-13", benchmark="livecodebench_repair"), "score", 0.58725),
        (dict(model="GPT-4O-2024-05-13"), "knowledge_cutoff", pd.Timestamp("2023-10-30"))]),
    "livecodebench_repair_2024-10-22.json": (17, 12121, [
        (dict(model="O1-Mini-2024-09-12 (N=1)", benchmark="livecodebench_repair"), "score", 0.7096774193548387),
        (dict(model="O1-Mini-2024-09-12 (N=1)"), "n_items", 713)]),
}
LB_EXPECT = {
    "livebench_table_2024_06_24_2024-09-06.csv": (73 * 17 + 73 * 7, 0, [
        (dict(model="claude-3-5-sonnet-20240620", benchmark="livebench"), "score", 0.6115625),
        (dict(model="claude-3-5-sonnet-20240620", benchmark="livebench_coding"), "score", 0.632105)]),
    "livebench_table_2024_11_25_2024-11-25.csv": (26 * 18 + 26 * 7, 0, [
        (dict(model="o1-preview-2024-09-12", benchmark="livebench"), "score", 0.647441388888889)]),
    "livebench_table_2024_11_25_2025-03-31.csv": (65 * 18 - 1 + 65 * 7 - 2, 0, [
        (dict(model="gemini-2.5-pro-exp-03-25", benchmark="livebench"), "score", 0.8235413888888888),
        (dict(model="gemini-2.5-pro-exp-03-25", benchmark="livebench_language"), "score", 0.6781966666666666)]),
    # this table predates consecutive_events, which the newest categories file lists:
    # Data Analysis and the global average cannot be computed for it
    "livebench_table_2026_01_08_2026-01-08.csv": (65 * 22 + 65 * 6, 0, [
        (dict(model="claude-4-1-opus-20250805-base", benchmark="livebench_task_amps_hard"), "score", 0.89)]),
    "livebench_table_2026_01_08_2026-07-01.csv": (126 * 23 + 126 * 8, 0, [
        (dict(model="gpt-5.5-xhigh", benchmark="livebench"), "score", 0.8070721428571429),
        (dict(model="gpt-5.5-xhigh", benchmark="livebench_agentic_coding"), "score", 0.5666666666666667)]),
}
EXPECT = {**SWE_EXPECT, **AIDER_EXPECT, **LCB_EXPECT, **LB_EXPECT}


@pytest.mark.parametrize("source, path", snapshot_params())
def test_every_snapshot_parses(source, path):
    p = snapshot_parse(source, path)
    assert len(p.scores) >= scrapers.get(source).min_rows
    assert p.scores.score.between(0, 1).all()
    if path.name not in EXPECT:   # a newly added copy: parsing cleanly is the check
        return
    n_scores, n_items, spots = EXPECT[path.name]
    assert len(p.scores) == n_scores
    assert len(p.items) == n_items
    for where, column, expected in spots:
        got = one(p.scores, **where)[column]
        if isinstance(expected, float):
            assert got == pytest.approx(expected), (where, column)
        else:
            assert got == expected, (where, column)


def test_swebench_html_script_matches_json_of_same_day():
    html = require(SNAPSHOTS / "swebench" / "swebench_index_2025-11-18.html")
    js = require(SNAPSHOTS / "swebench" / "swebench_2025-11-18.json")
    a, b = snapshot_parse("swebench", html), snapshot_parse("swebench", js)
    pd.testing.assert_frame_equal(a.scores, b.scores)


def test_livecodebench_snapshot_items_dates_and_models():
    path = require(SNAPSHOTS / "livecodebench" / "livecodebench_generation_2024-03-17.json")
    p = snapshot_parse("livecodebench", path)
    assert p.items.item_id.nunique() == 400 and len(p.models) == 30
    assert one(p.items, model="DSCoder-33b-Ins", item_id="1873_B").score == pytest.approx(0.1)
    assert p.items.item_date.notna().all()
    assert set(p.items.platform) == {"codeforces", "atcoder", "leetcode"}


def test_livebench_repeated_column():
    with pytest.raises(ScrapeError, match=r"^\[livebench\] repeated column.*typos"):
        scraper("livebench").parse_checked(b"model,typos,typos\nm,1,2\n", fetched_at=AT)

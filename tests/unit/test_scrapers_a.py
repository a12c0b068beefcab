"""Scrapers swebench, aider_polyglot, aider_edit, livecodebench, livebench: behaviour beyond
values (errors, floors, settings that keep same-named entries apart, release and categories files).

Row counts and spot values of every fixture and snapshot file are declared in
`CASES` beside each scraper class (checked by hand against the files) and run by tests/unit/test_scraper_cases.py.
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

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
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


def test_swebench_a_model_tag_written_as_its_hugging_face_page_states_the_publisher():
    """A `Model:` tag that is a Hugging Face model page names the weights and their publisher (view
    learned_models); a plain name, or a link to another page, states nothing."""
    data = {"leaderboards": [{"name": "Verified", "results": [
        {"name": "A + RL", "folder": "20250101_a", "resolved": 41.5, "date": "2025-01-01",
         "tags": ["Model: https://huggingface.co/acme-org/Acme-SWE-Preview", "Org: Acme"]},
        {"name": "B", "folder": "20250102_b", "resolved": 40.0, "date": "2025-01-02",
         "tags": ["Model: Acme 2.5", "Model: https://huggingface.co/datasets/acme-org/swe-data"]},
        {"name": "C", "folder": "20250103_c", "resolved": 12.0, "date": "2025-01-03",
         "tags": ["Model: https://acme.example/model-card"]}]}]}
    p = scraper("swebench").parse_checked(json.dumps(data).encode(), fetched_at=AT)
    assert p.models[["model", "org", "link"]].values.tolist() == [
        ["https://huggingface.co/acme-org/Acme-SWE-Preview", "acme-org",
         "https://huggingface.co/acme-org/Acme-SWE-Preview"]]


def test_swebench_floor():
    with pytest.raises(ScrapeError, match=r"\[swebench\].*floor"):
        parse("swebench", SWE / "leaderboards_2025-05-07.json", floor=None)


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
    empty = b"<html><body><div id='leaderboard-verified'><table></table></div></body></html>"
    with pytest.raises(ScrapeError, match=r"^\[swebench\] HTML board 'verified': a table without a header row"):
        scraper("swebench").parse_checked(empty, fetched_at=AT)


def test_livebench_categories_aux_html():
    with pytest.raises(ScrapeError, match=r"^\[livebench\] .*HTML"):
        parse("livebench", LB / "table_2024_11_25.csv", aux={"categories_2024_11_25.json": HTML_ERROR})


def snapshot_parse(source: str, path: Path | None) -> ParsedSnapshot:
    if path is None:
        pytest.skip(absent_reason(SNAPSHOTS / source))
    aux = None
    if source == "livebench":
        release = re.search(r"table_(\d{4}_\d{2}_\d{2})", path.name).group(1)
        cats = sorted(path.parent.glob(f"livebench_categories_{release}_*.json"))
        aux = {f"categories_{release}.json": cats[-1].read_bytes()} if cats else None
    return parse(source, path, aux=aux, floor=None)   # the source's real floor


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

"""One upstream file cannot fan out without a word (issue 55, items 7 and 8's duplicate keys).

A changelog listing 5,000 releases made one collection 10,003 fetches; a payload of thousands of
categories made that many tables; a 21 MB YAML took 1.4 GB. Beyond a source's caps
(`Scraper.max_tables`, `Scraper.max_releases`) the file is stored held, like a shrink, with one
line; a YAML beyond its size or node cap is refused before it is built; a JSON or YAML object
naming a key twice is refused (the last value used to win silently).
"""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import pytest

import scrapers
from jobs.collect import collect_source
from jobs.ingest import ingest_file
from scrapers.base import MAX_RELEASES, MAX_TABLES, YAML_MAX_BYTES, YAML_MAX_NODES, ScrapeError
from scrapers.http import Fetcher
from storage.query import run_query
from storage.store import open_store
from helpers import LIVEBENCH_CURRENT, file_site, livebench_files, point_livebench_at

AT = datetime(2026, 1, 1, tzinfo=timezone.utc)


def wide_table(n_tasks: int, n_models: int = 2) -> str:
    header = "model," + ",".join(f"task_{i}" for i in range(n_tasks))
    rows = [f"model-{m}," + ",".join("50.0" for _ in range(n_tasks)) for m in range(n_models)]
    return "\n".join([header, *rows]) + "\n"


def test_a_file_of_more_tables_than_the_cap_is_stored_held_with_one_line(synced_db, tmp_path):
    f = tmp_path / "table_2025_01_02.csv"
    f.write_text(wide_table(MAX_TABLES + 1))
    res = ingest_file(open_store(str(synced_db)), "livebench", f)
    assert res.status == "new" and res.n_scores == 2 * (MAX_TABLES + 1)        # nothing lost
    assert f"{MAX_TABLES + 1} tables" in res.held_reason and f"cap of {MAX_TABLES}" in res.held_reason
    assert sum("cap of" in w for w in res.warnings) == 1                        # one line
    got = run_query("SELECT status, held_reason FROM snapshots WHERE source = 'livebench'", open_store(str(synced_db)))
    assert got["status"].tolist() == ["held"]
    assert run_query("SELECT count(*) n FROM latest_scores WHERE source = 'livebench'", open_store(str(synced_db)))["n"][0] == 0


def test_a_file_at_the_cap_is_not_held(synced_db, tmp_path):
    f = tmp_path / "table_2025_01_02.csv"
    f.write_text(wide_table(MAX_TABLES))
    res = ingest_file(open_store(str(synced_db)), "livebench", f)
    assert res.held_reason == "" and not any("cap of" in w for w in res.warnings)


def changelog(n: int) -> bytes:
    days = [date(2024, 1, 1) + timedelta(days=i) for i in range(n)]
    return "".join(f"### {d.isoformat()}\nrelease\n\n" for d in days).encode()


@pytest.fixture()
def livebench_site(monkeypatch):
    """A loopback LiveBench serving the current release and a changelog the test sets (`files`)."""
    files = livebench_files(*LIVEBENCH_CURRENT)
    with file_site(files) as (base, seen):
        point_livebench_at(monkeypatch, base)
        yield files, seen


def collect_livebench(db, run_id: str):
    fetcher = Fetcher(max_attempts=1, backoff_base=0.0, politeness_delay=0.0, sleep=lambda s: None)
    return collect_source(open_store(str(db)), "livebench", run_id=run_id, fetcher=fetcher)


def test_a_release_list_beyond_the_cap_is_held_and_fetches_nothing(synced_db, livebench_site):
    parsed = scrapers.get("livebench_releases").parse_checked(changelog(MAX_RELEASES + 1), fetched_at=AT)
    assert f"{MAX_RELEASES + 1} releases" in parsed.held_reason

    files, seen = livebench_site
    files["/changelog.md"] = changelog(MAX_RELEASES + 1)
    out = collect_livebench(synced_db, "r1")
    assert out.status == "new"
    assert sorted(seen) == ["/categories_2026_01_08.json", "/changelog.md", "/table_2026_01_08.csv"]
    assert f"release list held: {MAX_RELEASES + 1} releases" in out.detail
    got = run_query("SELECT status FROM snapshots WHERE source = 'livebench_releases'", open_store(str(synced_db)))
    assert got["status"].tolist() == ["held"]


def test_a_released_long_list_is_fetched_a_bounded_share_per_collection(synced_db, livebench_site, monkeypatch):
    """Seen again, the held list is released (like a shrink): then each collection fetches at most
    `max_releases` of its unstored releases, newest first, and says how many are left."""
    monkeypatch.setattr(type(scrapers.get("livebench_releases")), "max_releases", 2)
    files, seen = livebench_site
    files["/changelog.md"] = changelog(3)            # 2024-01-01 .. 2024-01-03: above the cap of 2
    assert "release list held: 3 releases" in collect_livebench(synced_db, "r1").detail
    seen.clear()
    out = collect_livebench(synced_db, "r2")       # the same list again: confirmed, then capped
    assert "3 listed release(s) not stored, above the cap of 2" in out.detail
    assert sorted(p for p in seen if p.startswith("/table_2024")) == ["/table_2024_01_02.csv", "/table_2024_01_03.csv"]


def aider_yaml(n: int) -> str:
    return "".join(f"- dirname: run-{i}\n  model: m{i}\n  pass_rate_2: 50.0\n" for i in range(n))


def test_a_yaml_beyond_the_size_cap_is_refused_before_it_is_read():
    aider = scrapers.get("aider_polyglot")
    with pytest.raises(ScrapeError, match="size cap"):
        aider.yaml(b"#" * (YAML_MAX_BYTES + 1) + b"\n- a: 1\n")


def test_a_yaml_beyond_the_node_cap_is_refused():
    aider = scrapers.get("aider_polyglot")
    text = "[" + "1," * YAML_MAX_NODES + "1]\n"
    assert len(text) < YAML_MAX_BYTES
    with pytest.raises(ScrapeError, match="more than .* nodes"):
        aider.yaml(text)
    assert len(aider.yaml(aider_yaml(3))) == 3


@pytest.mark.parametrize("kind, text", [
    ("json", '{"model": "a", "score": 1, "score": 2}'),
    ("json", '[{"a": 1}, {"b": {"c": 1, "c": 1}}]'),
    ("yaml", "model: a\nscore: 1\nscore: 2\n"),
    ("yaml", "- a: 1\n  b: {c: 1, c: 1}\n"),
])
def test_a_key_named_twice_is_refused(kind, text):
    s = scrapers.get("aider_polyglot")
    with pytest.raises(ScrapeError, match="duplicate key"):
        getattr(s, kind)(text)


def test_distinct_keys_still_read():
    s = scrapers.get("aider_polyglot")
    assert s.json('{"a": 1, "b": {"a": 2}}') == {"a": 1, "b": {"a": 2}}
    assert s.yaml("a: 1\nb: {a: 2}\n") == {"a": 1, "b": {"a": 2}}

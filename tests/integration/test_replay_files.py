"""Replay files generated from the scraper cases (tests/replay_files.py): a fixture case with
`replay` is its source's recorded response; the copy is written, never kept by hand."""

from __future__ import annotations

from pathlib import Path

import scrapers
from replay_files import REPLAY, declared, write

ROOT = Path(__file__).resolve().parents[2]
MARK = "# replay files generated from the scraper cases"


def test_the_generated_files_are_the_cases_fixtures_and_rewriting_is_idempotent(tmp_path):
    files = declared()
    assert files and all(fixture.is_file() for fixture in files.values())
    assert {rel.parts[0] for rel in files} <= set(scrapers.SOURCES)
    written = write(tmp_path)
    assert sorted(p.relative_to(tmp_path) for p in written) == sorted(files)
    assert all((tmp_path / rel).read_bytes() == fixture.read_bytes() for rel, fixture in files.items())
    assert write(tmp_path) == []                       # nothing differs: nothing written
    victim = sorted(files)[0]
    (tmp_path / victim).write_bytes(b"edited by hand")
    assert write(tmp_path) == [tmp_path / victim]      # a copy edited by hand is written again


def test_each_generated_file_is_a_response_its_source_fetches():
    """The replay name a case declares is the response name of one of its source's URLs (or of
    the URLs its primary response lists); the session has written them (conftest)."""
    for rel in declared():
        source, name = rel.parts
        scraper = scrapers.get(source)
        planned = [scraper.response_name(u) for u in scraper.plan()]
        primary = REPLAY / source / planned[0]
        if primary.is_file():
            planned += [scraper.response_name(u) for u in scraper.discover(primary.read_bytes())]
        assert name in planned, f"{rel}: {source} fetches {planned}"
        assert (REPLAY / rel).is_file()


def test_git_ignores_exactly_the_generated_files():
    text = (ROOT / ".gitignore").read_text(encoding="utf-8")
    assert MARK in text, ".gitignore lacks the block of generated replay files"
    block = text.split(MARK, 1)[1].splitlines()[1:]
    listed = {line.strip() for line in block if line.strip().startswith("/tests/fixtures/replay/")}
    want = {f"/tests/fixtures/replay/{rel.as_posix()}" for rel in declared()}
    assert listed == want, f"update the .gitignore block: missing {sorted(want - listed)}, extra {sorted(listed - want)}"

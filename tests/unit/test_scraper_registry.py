"""Every scraper module is registered, importable, and follows the one-name rule."""

from __future__ import annotations

import pkgutil
from datetime import datetime

import pytest

import scrapers
from scrapers.base import ScrapeError, Scraper


def source_modules() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(scrapers.__path__)
                  if not m.name.startswith("_") and m.name not in ("base", "cases", "fetch_result", "files", "http", "normalize"))


def test_every_module_in_scrapers_is_registered():
    assert source_modules() == sorted(scrapers.SOURCES)


@pytest.mark.parametrize("name", scrapers.SOURCES)
def test_source_is_importable_and_named_like_its_module(name):
    scraper = scrapers.get(name)
    assert isinstance(scraper, Scraper) and scraper.name == name
    assert scraper.min_rows >= 1
    for url in scraper.urls:
        assert url.startswith("https://"), url
    names = [Scraper.file_name(u) for u in scraper.plan()]
    assert len(names) == len(set(names)), "replay file names must be unique per source"


@pytest.mark.parametrize("name", scrapers.SOURCES)
def test_an_html_error_page_is_a_scrape_error_never_zero_rows(name):
    page = b"<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"
    with pytest.raises(ScrapeError) as err:
        scrapers.get(name).parse_checked(page, fetched_at=datetime(2026, 1, 1), filename="x")
    assert err.value.source == name


@pytest.mark.parametrize("name", scrapers.SOURCES)
def test_an_empty_response_is_a_scrape_error(name):
    with pytest.raises(ScrapeError, match="empty"):
        scrapers.get(name).parse_checked(b"  \n", fetched_at=datetime(2026, 1, 1))


def test_unknown_source_names_the_known_ones():
    with pytest.raises(ScrapeError, match="known sources: csv"):
        scrapers.get("nope")

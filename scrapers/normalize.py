"""Cell-level normalization shared by every scraper: names and slugs here; numbers, percents,
dates and metric kinds in `common.units` (shared with the registry and the analysis), re-exported
so that a scraper imports its cell helpers from one place.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

from common.units import (
    FOOTNOTE,
    METRIC_DIRECTIONS,
    METRIC_RANGES,
    MISSING_TOKENS,
    AmbiguousScale,
    is_missing,
    lower_is_better,
    parse_date,
    parse_number,
    percent_scale,
    percent_to_proportion,
    proportions_from,
)

__all__ = ["FOOTNOTE", "METRIC_DIRECTIONS", "METRIC_RANGES", "MISSING_TOKENS", "AmbiguousScale", "clean_name",
           "is_missing", "lower_is_better", "parse_date", "parse_number", "percent_scale", "percent_to_proportion",
           "proportions_from", "slug", "arxiv_month_end"]


def slug(text: str) -> str:
    """'Agentic Coding' -> 'agentic_coding'; used to build benchmark ids from page names."""
    return re.sub(r"[^a-z0-9]+", "_", str(text).strip().lower()).strip("_")


# A board's rank decoration beside a name (ScienceQA's top three: `MC-CoT_F-Large 🥈`): never part
# of the name, and it moves when the ranks change, which would split one model's history in two.
RANK_MEDALS = re.compile("[\U0001F947\U0001F948\U0001F949\U0001F3C6]")


def clean_name(text: Any) -> str | None:
    """A model/benchmark name cell without markdown links, footnotes, rank medals and extra spaces.

    Only text and numbers are names: a list, mapping or bytes cell (a YAML/JSON structure where a
    name belongs) is None, so the row is rejected as missing its name, never stored as its repr."""
    if not isinstance(text, (str, int, float)) or is_missing(text):
        return None
    s = str(text)
    s = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", s)   # [name](link) -> name
    s = FOOTNOTE.sub("", s)
    s = RANK_MEDALS.sub(" ", s)
    s = re.sub(r"<[^>]+>", "", s)
    s = re.sub(r"\s+", " ", s).strip().strip("*").strip()
    return s or None


# A Hugging Face model page: https://huggingface.co/<owner>/<repo>[/...]; `owner` publishes the weights.
_HF_REPO = re.compile(r"^https?://(?:www\.)?huggingface\.co/([A-Za-z0-9][\w.-]*)/([\w.-]+)/?(?:[?#/].*)?$")
_HF_NOT_OWNERS = frozenset({"datasets", "spaces", "docs", "blog", "papers", "models", "collections"})


# A page a leaderboard gives for a model: one http(s) URL, nothing else in the cell.
_LINK = re.compile(r"https?://[^\s/]+\.[^\s/]+(?:/\S*)?", re.I)
LINK_MAX = 500


def model_link(cell: Any) -> str | None:
    """The URL a leaderboard row gives for its model (its card, repository, paper or announcement),
    else None: a cell that is not one http(s) URL (or is longer than `LINK_MAX`) states no page."""
    if not isinstance(cell, str):
        return None
    text = cell.strip()
    return text if len(text) <= LINK_MAX and _LINK.fullmatch(text) else None


def hugging_face_repo(link: Any) -> tuple[str, str] | None:
    """(owner, repo) of a link to a Hugging Face model page, else None: a page that links a model's
    weights states who published them (a dataset, space or paper page names no model)."""
    if not isinstance(link, str):
        return None
    m = _HF_REPO.match(link.strip())
    if not m or m.group(1).lower() in _HF_NOT_OWNERS:
        return None
    return m.group(1), m.group(2)



# an arXiv identifier of the current scheme (since April 2007): YYMM.NNNN (to 2014) or YYMM.NNNNN
_ARXIV = re.compile(r"(?:https?://)?(?:www\.|export\.)?arxiv\.org/(?:abs|pdf|html)/(\d{2})(\d{2})\.\d{4,5}"
                    r"(?:v\d+)?(?:\.pdf)?(?:[/?#]|$)", re.I)


def arxiv_month_end(link: Any) -> datetime | None:
    """The last day of the month an arXiv link's identifier states (the paper's first
    submission: 'https://arxiv.org/abs/2307.09288' -> 2023-07-31); None for any other link,
    an old-scheme identifier or an impossible month."""
    if not isinstance(link, str):
        return None
    m = _ARXIV.match(link.strip())
    if m is None:
        return None
    year, month = 2000 + int(m[1]), int(m[2])
    if not 1 <= month <= 12 or (year, month) < (2007, 4):
        return None
    first_next = datetime(year + month // 12, month % 12 + 1, 1)
    return first_next - timedelta(days=1)


_ARXIV_ID = re.compile(r"(?:https?://)?(?:www\.|export\.)?arxiv\.org/(?:abs|pdf|html)/(\d{4}\.\d{4,5})"
                       r"(?:v\d+)?(?:\.pdf)?/?(?:[?#].*)?$", re.I)


def report_key(link: Any) -> str | None:
    """What a report link names, to tell whether two links are one report: an arXiv paper by its
    identifier (abs, pdf or html page, any version: 'arxiv:2309.10305'), any other http(s) page by
    its URL without scheme, `www.`, trailing slash and case; None for a cell that is no link."""
    page = model_link(link)
    if page is None:
        return None
    m = _ARXIV_ID.match(page)
    if m:
        return "arxiv:" + m[1]
    return re.sub(r"^https?://(?:www\.)?", "", page, flags=re.I).rstrip("/").casefold()

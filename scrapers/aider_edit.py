"""Aider code-editing leaderboard: 133 Exercism Python exercises (frozen since polyglot replaced it)."""

from __future__ import annotations

from scrapers._aider import AiderScraper


class AiderEditScraper(AiderScraper):
    name = "aider_edit"
    urls = ("https://raw.githubusercontent.com/Aider-AI/aider/main/aider/website/_data/edit_leaderboard.yml",)
    min_rows = 20       # the copies hold 31 (2024-07) to 98 (2024-12) runs
    benchmark = "aider_edit"
    n_tasks = 133

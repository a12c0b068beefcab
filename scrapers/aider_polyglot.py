"""Aider polyglot leaderboard: 225 Exercism exercises in six languages (aider.chat/docs/leaderboards)."""

from __future__ import annotations

from scrapers._aider import AiderScraper


class AiderPolyglotScraper(AiderScraper):
    name = "aider_polyglot"
    urls = ("https://raw.githubusercontent.com/Aider-AI/aider/main/aider/website/_data/polyglot_leaderboard.yml",)
    min_rows = 5        # the first published version (2024-12-21) had 10 runs
    benchmark = "aider_polyglot"
    n_tasks = 225

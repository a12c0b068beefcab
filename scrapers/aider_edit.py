"""Aider code-editing leaderboard: 133 Exercism Python exercises (frozen since polyglot replaced it)."""

from __future__ import annotations

from scrapers._aider import AiderScraper
from scrapers.cases import Case, Has, S, snap


class AiderEditScraper(AiderScraper):
    name = "aider_edit"
    page = "https://aider.chat/docs/leaderboards/edit.html"
    urls = ("https://raw.githubusercontent.com/Aider-AI/aider/main/aider/website/_data/edit_leaderboard.yml",)
    min_rows = 20       # the copies hold 31 (2024-07) to 98 (2024-12) runs
    benchmark = "aider_edit"
    n_tasks = 133

    # the declared cases (scrapers/cases.py), run by tests/unit/test_scraper_cases.py
    CASES = (
        Case("aider_edit/edit_leaderboard_2024-12-22.yml", scores=5, spots=(
            S(model="claude-3-opus-20240229")(model_release_date="2024-02-29",      # from `_released`
                                              score=0.684, setting="diff", n_items=133),
            S(model="claude-3-sonnet-20240229")(model_release_date="2024-02-29",    # from `released`
                                                evaluated_at="2024-03-06"),
            S(model="gpt-4-turbo-2024-04-09 (diff)")(n_items=33),
            S(model="gpt-3.5-turbo-1106")(model_release_date=None),
            # a 225-case polyglot run listed on the 133-task board is kept but excluded (the only one)
            S(model="o1-mini-2024-09-12")(excluded_reason=Has("exceeds")),
        ), excluded=1),
        snap("aider_edit/aider_edit_2024-07-13.yml", 31, items=0, spots=(
            S(model="claude-3-opus-20240229", setting="diff")(score=0.684, model_release_date="2024-02-29"),)),
        snap("aider_edit/aider_edit_2024-12-22.yml", 98, items=0, spots=(
            S(model="gpt-4-turbo-2024-04-09 (diff)")(n_items=33),
            S(model="gemini-1.5-pro-001")(model_release_date="2024-05-03"))),
    )

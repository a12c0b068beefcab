"""Aider polyglot leaderboard: 225 Exercism exercises in six languages (aider.chat/docs/leaderboards)."""

from __future__ import annotations

from scrapers._aider import AiderScraper
from scrapers.cases import Case, S, snap


class AiderPolyglotScraper(AiderScraper):
    name = "aider_polyglot"
    page = "https://aider.chat/docs/leaderboards/"
    urls = ("https://raw.githubusercontent.com/Aider-AI/aider/main/aider/website/_data/polyglot_leaderboard.yml",)
    min_rows = 5        # the first published version (2024-12-21) had 10 runs
    benchmark = "aider_polyglot"
    n_tasks = 225

    # the declared cases (scrapers/cases.py), run by tests/unit/test_scraper_cases.py
    CASES = (
        Case("aider_polyglot/polyglot_leaderboard_2025-10-04.yml", replay="polyglot_leaderboard.yml", scores=6,
             all_missing=(("scores", "model_release_date"),),
             benchmarks=frozenset({"aider_polyglot"}), spots=(
                 S(model="gpt-5 (high)")(setting="diff", score=0.88, raw_value="88.0", n_items=225,
                                         evaluated_at="2025-08-23", model_release_date=None),
                 # one model, two edit formats -> two settings
                 S(model="Qwen2.5-Coder-32B-Instruct", setting="whole")(),
                 S(model="Qwen2.5-Coder-32B-Instruct", setting="diff")(),
                 S(model="o3 (high) + gpt-4.1")(n_items=224),
             )),
        snap("aider_polyglot/aider_polyglot_2024-12-22.yml", 10, items=0, spots=(
            S(model="o1-2024-12-17", setting="diff")(score=0.617, n_items=224),)),
        snap("aider_polyglot/aider_polyglot_2025-10-04.yml", 69, items=0, spots=(
            S(model="gpt-5 (high)", setting="diff")(score=0.88),
            S(model="Gemini 2.0 Pro exp-02-05", setting="whole")(evaluated_at="2025-02-25"))),
    )

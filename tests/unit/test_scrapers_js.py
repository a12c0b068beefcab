"""Sources whose tables are JavaScript/TypeScript (Terminal-Bench 1.0, MathArena) and the variations a
later copy may bring: read as literals, never run; a changed layout is one ScrapeError line."""

from __future__ import annotations

from datetime import datetime

import pytest

from helpers import fixture_scraper
from scrapers._jsliteral import Spread, declarations, parse_literal
from scrapers.base import ScrapeError

AT = datetime(2026, 1, 1)


def test_literals_comments_spreads_and_enum_members():
    value, end = parse_literal("""{a: "x\\u00e9", 'b c': [1, 2.5, -3e2, `t`,], // note, { not a brace
        e: null, /* block */ f: undefined, g: IntegrationMethod.API, ...rest}""")
    assert value == {"a": "xé", "b c": [1, 2.5, -300.0, "t"], "e": None, "f": None, "g": "API",
                     "...": [Spread("rest")]}
    text = 'const a = [1, 2];\n// const b = [3];\n/* var c = [4]; */\nexport const d: T[] = [...a, 5];\nconst e = a.map((x) => x);'
    assert declarations(text) == {"a": [1, 2], "d": [Spread("a"), 5]}     # commented and computed ones left out


@pytest.mark.parametrize("text", ["{a: fetch(1)}", "{a: `x ${y}`}", "{a: 'open", "[1 2]"])
def test_code_or_a_broken_literal_is_refused(text):
    with pytest.raises(ValueError):
        parse_literal(text)


def tb(text: str):
    return fixture_scraper("terminal_bench").parse_checked(text.encode(), fetched_at=AT)


def test_terminal_bench_a_later_file_with_other_arrays_and_fields():
    p = tb("""
    const rawA: LeaderboardEntry[] = [
      { agent: "Terminus 2", model: ["gpt-5", "o3"], date: "2025-12-01", accuracy: 0.5, verified: true,
        agentName: "terminus-2", newField: { nested: [1] } },
    ];
    const rawBoard2: LeaderboardEntry[] = [
      { agent: "Codex CLI", model: "gpt-5-codex", date: "2025-12-02", accuracy: 0.61, stderr: 0.01 },
      ...rawA,
    ];""")
    assert p.meta["arrays"] == ["rawBoard2"]
    assert sorted(p.scores.model) == ["Codex CLI (gpt-5-codex)", "Terminus 2 (gpt-5 + o3)"]
    row = p.scores.set_index("model").loc["Terminus 2 (gpt-5 + o3)"]
    assert row.model_tag == "Model: gpt-5; Model: o3" and row.stderr != row.stderr   # no stderr: NaN


@pytest.mark.parametrize("text, reason", [
    ("export const x = 1;", "no array"),
    ("const raw = [{ agent: 'a', model: 'b', date: '2025-01-01' }];", "accuracy"),
    ("const raw = [...missing];", "unknown array"),
    ("const raw = [{ agent: 'a', accuracy: f(1) }];", "malformed"),
])
def test_terminal_bench_changed_layouts_are_one_line(text, reason):
    with pytest.raises(ScrapeError, match=reason):
        tb(text)


def test_matharena_a_second_contest_and_a_missing_avg_row():
    text = """var result_data = [{"m1 (high)": 100, "m2": 0, "question": 1}, {"m1 (high)": 50, "m2": 50, "question": 2},
               {"m1 (high)": 75, "m2": 25, "question": "Avg"}];
               var aime_2025_ii_data = [{"m1 (high)": 25, "question": 1}, {"m1 (high)": 75, "question": 2}];"""
    p = fixture_scraper("matharena").parse_checked(text.encode(), fetched_at=AT)
    s = p.scores.set_index(["table_version", "model"])
    assert s.loc[("aime_2025_i", "m1 (high)"), "score"] == 0.75
    assert s.loc[("aime_2025_ii", "m1 (high)"), "score"] == 0.5        # mean of its questions: no Avg row
    assert any("no 'Avg' row" in w for w in p.warnings)
    items = p.items.set_index(["item_id", "model"])
    assert items.loc[("aime_2025_ii/02", "m1 (high)"), "item_date"] == datetime(2025, 2, 12)
    assert len(p.items) == 6


def test_matharena_without_question_rows_is_an_error():
    with pytest.raises(ScrapeError, match="no array of question rows"):
        fixture_scraper("matharena").parse_checked(b'var result_data = [{"a": 1}];', fetched_at=AT)

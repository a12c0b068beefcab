"""bench/goals.py: the page bench/run.py writes (docs/performance.md) judges each goal on the median
of its rounds and lists the floors beside the goals, never as goals."""

from __future__ import annotations

import pytest

from bench import goals


@pytest.fixture
def fresh(monkeypatch):
    monkeypatch.setattr(goals, "GOALS", {})
    monkeypatch.setattr(goals, "FLOORS", {})
    return goals


def test_the_median_of_the_rounds_decides_and_floors_are_listed_apart(fresh, tmp_path):
    for value in (1.4, 1.7, 1.45):                      # median 1.45: met, though one round missed
        fresh.measured("cold: query vs import duckdb", value, 1.5)
    for value in (1.2, 1.3, 1.25):
        fresh.floor("cold: open and close the file", value, "DuckDB opening the file and closing it")
    page = tmp_path / "performance.md"
    fresh.write_page(page, 3, "python bench/run.py", "Sizes: test.")
    text = page.read_text()
    assert "Goals met: 1 of 1." in text
    assert "| cold: query vs import duckdb | 1.45x | 1.40x … 1.70x, n=3 | ≤ 1.50x | met |" in text
    goals_table, floors_table = text.split("Floors:")
    assert "open and close" not in goals_table           # a floor is never counted as a goal
    assert "| cold: open and close the file | 1.25x | DuckDB opening the file and closing it |" in floors_table


def test_a_page_without_floors_has_no_floor_table(fresh, tmp_path):
    fresh.measured("cycle: unchanged run vs first", 0.12, 0.10, "%")
    page = tmp_path / "performance.md"
    fresh.write_page(page, 1, "python bench/run.py", "Sizes: test.")
    assert "Floors" not in page.read_text()
    assert "missed: cycle: unchanged run vs first." in page.read_text()

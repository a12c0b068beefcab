"""The bench's goals: each one's figure per round, the median that judges it, and the closing
table, printed and written to docs/performance.md (one current table; earlier runs are git's).

Every goal is a ratio to a reference measured in the same run, or a limit the issue names (peak
memory): these machines are shared and their speed drifts within an hour, so an absolute time
says more about the machine than about benchwatch.
"""

from __future__ import annotations

import os
import statistics
from dataclasses import dataclass, field
from pathlib import Path

PAGE = Path(__file__).resolve().parents[1] / "docs" / "performance.md"


@dataclass
class Goal:
    """One goal's figures, a value per round; the suite judges the median (runs differ)."""
    label: str
    unit: str
    limit: float
    higher_is_better: bool
    values: list[float] = field(default_factory=list)

    def meets(self, value: float) -> bool:
        return value >= self.limit if self.higher_is_better else value <= self.limit


GOALS: dict[str, Goal] = {}


@dataclass
class Floor:
    """What a goal's line cannot go below with the libraries it must use (no goal, shown): a
    process doing only that part of the line's work, as the same kind of ratio, per round."""
    label: str
    unit: str
    what: str
    values: list[float] = field(default_factory=list)


FLOORS: dict[str, Floor] = {}


def floor(label: str, value: float, what: str, unit: str = "x") -> None:
    """Record this round's figure of a floor (the page shows the median of the rounds)."""
    FLOORS.setdefault(label, Floor(label, unit, what)).values.append(value)


def measured(label: str, value: float, limit: float, unit: str = "x", *, higher_is_better: bool = False) -> bool:
    """Record this round's figure for a goal (the summary takes the median); True if this round meets it."""
    goal = GOALS.setdefault(label, Goal(label, unit, limit, higher_is_better))
    goal.values.append(value)
    return goal.meets(value)


def fmt(value: float, unit: str, exact: bool = False) -> str:
    """A figure as the table shows it (`exact`: a goal's limit, no decimals when whole)."""
    digits = 0 if exact and value == int(value) else {"x": 2, "%": 3, "MiB": 0}.get(unit, 2)
    if unit == "%":
        return f"{value:.{max(digits - 2, 0)}%}"
    return f"{value:,.{digits}f}{'' if unit == 'x' else ' '}{unit}"


def summary_rows() -> list[tuple[str, str, str, str, bool]]:
    """Per goal: label, median of the rounds, their range, the goal, met."""
    rows = []
    for g in GOALS.values():
        v = sorted(g.values)
        med = statistics.median(v)
        spread = f"{fmt(v[0], g.unit)} … {fmt(v[-1], g.unit)}, n={len(v)}" if len(v) > 1 else "n=1"
        goal = f"{'>=' if g.higher_is_better else '<='} {fmt(g.limit, g.unit, exact=True)}"
        rows.append((g.label, fmt(med, g.unit), spread, goal, g.meets(med)))
    return rows


def floor_rows() -> list[tuple[str, str, str]]:
    """Per floor: label, median of the rounds, what it measures."""
    return [(f.label, fmt(statistics.median(f.values), f.unit), f.what) for f in FLOORS.values()]


def summary(rounds: int) -> bool:
    """The closing table: per goal the median of the rounds, their range, met or missed."""
    print(f"\nsummary: median of {rounds} round{'s' if rounds > 1 else ''} per goal (range), "
          f"load now {os.getloadavg()[0]:.1f}", flush=True)
    rows = summary_rows()
    for label, med, spread, goal, ok in rows:
        print(f"  {label:<44} {med:>9} ({spread:<28}) goal {goal:<10} {'met' if ok else 'MISSES'}", flush=True)
    for label, med, _ in floor_rows():
        print(f"  floor: {label:<37} {med:>9} (no goal)", flush=True)
    return all(ok for *_, ok in rows)


def write_page(path: Path, rounds: int, command: str, scope: str) -> None:
    """docs/performance.md: the closing table of this run, replacing the page (its history is git's).
    `scope`: what the run covered (its sizes, its measures), stated above the table."""
    rows = summary_rows()
    missed = [label for label, *_, ok in rows if not ok]
    lines = ["# Performance", "",
             "Written by `python bench/run.py` (bench/run.py says what each line measures and why); "
             "do not edit by hand. Every figure is a ratio to a reference measured in the same run, "
             "side by side, or a memory limit the goal names; the median of the rounds decides. "
             "Earlier runs are in git's history of this page.", "",
             f"Run: `{command}`, {rounds} round{'s' if rounds > 1 else ''}, {os.cpu_count()} cores, "
             f"load average {os.getloadavg()[0]:.1f} at the end. {scope}", "",
             f"Goals met: {len(rows) - len(missed)} of {len(rows)}"
             + (f"; missed: {', '.join(missed)}." if missed else "."), "",
             "| line | median | range | goal | met |", "|---|---|---|---|---|"]
    for label, med, spread, goal, ok in rows:
        lines.append(f"| {label} | {med} | {spread} | {goal.replace('>=', '≥').replace('<=', '≤')} | "
                     f"{'met' if ok else '**missed**'} |")
    floors = floor_rows()
    if floors:
        lines += ["", "Floors: what a line cannot go below with the libraries it must use, measured the same way in "
                  "this run (a process doing only that part of the work; no goal).", "",
                  "| floor | median | what it is |", "|---|---|---|"]
        lines += [f"| {label} | {med} | {what} |" for label, med, what in floors]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {path}", flush=True)

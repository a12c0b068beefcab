"""Epoch's hub declarations: what each member of `benchmark_data.zip` is (helper of
`scrapers/epoch.py`, not a source).

`scrapers/epoch_members.csv` (data, one row per member file name) declares each member's
benchmark id, its model column (and a fallback name column for rows Epoch left without a
`Model version`), its score column and unit, its uncertainty columns, its test-set size where
known, its date columns, the columns that make a row's setting, its record-id column, and whether
it is Epoch's own run or a number Epoch copied from elsewhere (`external`). Nothing about a member
is guessed. The declaration's columns:

- `unit`: `proportion` (a share, 0-1), `percent` (0-100, stored as a proportion), `elo`, `minutes`,
  `score_10` (a 0-10 grade), `index`, `cost_usd`, or `not_read` (declared, deliberately not stored:
  its notes say why). Declared from what the column is, never from its values: Epoch's
  percent-formatted fields (`% Resolved`, `Overall pass (%)`) hold shares and are `proportion`. A
  value outside the unit's range is a rejected row (`validate`) and one warning per member.
- `stderr` (its `stderr_unit`: empty = the score's, `percent` = percentage points), `ci_low`/`ci_high`
  (bounds in the score's unit), `ci_pm` (a `+a/-b` interval around the score, WebDev Arena's `=+11/-11`).
- `n_items` (a constant) or `n_column` (a column of per-row sizes).
- `setting`: `;`-separated `key:Column`; each non-empty cell adds `key=value` to the row's setting,
  after the effort suffix of the model version and before `run=<record id>` (`run`).
- `external`: `yes` -> `table_version = 'external'` and `reported_by = 'external'` (never one table
  with Epoch's own runs). Every `*_external.csv` member must say `yes`.
- `evaluated_at`: the column of a row's own date (a run's start, a board's submission date);
  `report`: the column linking the report a number was copied from. A row without a date of its
  own whose report is an arXiv paper is dated at the last day of the month its identifier states
  (`_dated_by_report`): the paper's date, which the hub states for the number; any other link
  (a leaderboard's page) states none, and the row keeps its first observation.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np
import pandas as pd

from scrapers.normalize import is_missing

MEMBERS_FILE = Path(__file__).with_name("epoch_members.csv")
EXTERNAL = "external"          # table_version and reported_by of an external member
NOT_READ = "not_read"
# unit -> (metric kind, factor to the stored value)
UNITS: dict[str, tuple[str, float]] = {
    "proportion": ("proportion", 1.0), "percent": ("proportion", 0.01), "elo": ("elo", 1.0),
    "minutes": ("minutes", 1.0), "score_10": ("score_10", 1.0), "index": ("index", 1.0),
    "cost_usd": ("cost_usd", 1.0),
}
STDERR_UNITS = {"": None, "percent": 0.01}
_SNAPSHOT_NAME = re.compile(r"epoch_(.+)_\d{4}-\d{2}-\d{2}")
_ID = re.compile(r"[a-z0-9_]+")
_PLUS_MINUS = re.compile(r"^\s*=?\s*\+\s*(\d+(?:\.\d+)?)\s*/\s*-\s*(\d+(?:\.\d+)?)\s*$")

__all__ = ["MEMBERS_FILE", "EXTERNAL", "NOT_READ", "UNITS", "STDERR_UNITS", "Member", "load_members", "members",
           "member_name", "plus_minus"]


@dataclass(frozen=True)
class Member:
    """One row of scrapers/epoch_members.csv."""

    member: str
    benchmark: str
    external: bool
    model: str
    model_fallback: str
    score: str
    unit: str
    stderr: str
    stderr_unit: str
    ci_low: str
    ci_high: str
    ci_pm: str
    n_items: int | None
    n_column: str
    release_date: str
    evaluated_at: str
    report: str
    setting: tuple[tuple[str, str], ...]
    run: str
    notes: str

    def columns(self) -> list[str]:
        """Every column the declaration names: each must be in the member's header."""
        named = [self.model, self.model_fallback, self.score, self.stderr, self.ci_low, self.ci_high, self.ci_pm,
                 self.n_column, self.release_date, self.evaluated_at, self.report, self.run] + [c for _, c in self.setting]
        return [c for c in dict.fromkeys(named) if c]


def load_members(path: Path = MEMBERS_FILE) -> dict[str, Member]:
    """The declarations, checked: ValueError naming file, line and column on anything malformed."""
    out: dict[str, Member] = {}
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        for line, row in enumerate(reader, start=2):
            def bad(column: str, why: str) -> ValueError:
                return ValueError(f"{path.name} line {line}, column {column}: {why}")
            if None in row or any(v is None for v in row.values()):
                raise bad("*", "wrong number of fields")
            r = {k: v.strip() for k, v in row.items()}
            name = r["member"]
            if not _ID.fullmatch(name) or name in out:
                raise bad("member", f"{name!r} is empty, not [a-z0-9_] or declared twice")
            if not _ID.fullmatch(r["benchmark"]):
                raise bad("benchmark", f"{r['benchmark']!r} is not a benchmark id")
            if r["external"] not in ("yes", "no"):
                raise bad("external", f"{r['external']!r} is not yes/no")
            if name.endswith("_" + EXTERNAL) and r["external"] != "yes":
                raise bad("external", f"{name} is an _external member: external must be yes")
            if r["unit"] not in UNITS and r["unit"] != NOT_READ:
                raise bad("unit", f"{r['unit']!r} is not one of {sorted(UNITS) + [NOT_READ]}")
            if r["unit"] != NOT_READ and not (r["model"] and r["score"]):
                raise bad("model/score", "a read member names its model and score columns")
            if r["unit"] == NOT_READ and not r["notes"]:
                raise bad("notes", "a not_read member says why in its notes")
            if r["stderr_unit"] not in STDERR_UNITS or (r["stderr_unit"] and not r["stderr"]):
                raise bad("stderr_unit", f"{r['stderr_unit']!r}: empty or 'percent', and only with a stderr column")
            if bool(r["ci_low"]) != bool(r["ci_high"]) or (r["ci_pm"] and r["ci_low"]):
                raise bad("ci_low/ci_high/ci_pm", "both bounds, or one +a/-b column, or none")
            if r["n_items"] and (not r["n_items"].isdigit() or int(r["n_items"]) < 1 or r["n_column"]):
                raise bad("n_items", f"{r['n_items']!r}: a positive whole number, and not with n_column")
            setting = []
            for part in filter(None, (p.strip() for p in r["setting"].split(";"))):
                key, sep, column = part.partition(":")
                if not sep or not _ID.fullmatch(key.strip()) or not column.strip():
                    raise bad("setting", f"{part!r} is not key:Column")
                setting.append((key.strip(), column.strip()))
            out[name] = Member(
                member=name, benchmark=r["benchmark"], external=r["external"] == "yes", model=r["model"],
                model_fallback=r["model_fallback"], score=r["score"], unit=r["unit"], stderr=r["stderr"],
                stderr_unit=r["stderr_unit"], ci_low=r["ci_low"], ci_high=r["ci_high"], ci_pm=r["ci_pm"],
                n_items=int(r["n_items"]) if r["n_items"] else None, n_column=r["n_column"],
                release_date=r["release_date"], evaluated_at=r["evaluated_at"], report=r["report"],
                setting=tuple(setting),
                run=r["run"], notes=r["notes"])
    return out


@cache
def members() -> dict[str, Member]:
    """The declarations of the shipped file, read once."""
    return load_members()


def member_name(filename: str) -> str:
    """'gpqa_diamond.csv' / 'benchmark_data/gpqa_diamond.csv' / 'epoch_gpqa_diamond_2026-04-19.csv' -> 'gpqa_diamond'."""
    stem = PurePosixPath(filename).stem
    m = _SNAPSHOT_NAME.fullmatch(stem)
    return m.group(1) if m else stem


def plus_minus(score: pd.Series, cells: pd.Series) -> tuple[pd.Series, pd.Series, list[Any]]:
    """(ci_low, ci_high, unparseable cells) from `+a/-b` cells around `score` (missing cells: NaN)."""
    low, high, bad = [], [], []
    for s, cell in zip(score, cells):
        m = None if is_missing(cell) else _PLUS_MINUS.match(str(cell))
        if m is None:
            if not is_missing(cell):
                bad.append(cell)
            low.append(np.nan)
            high.append(np.nan)
        else:
            high.append(s + float(m[1]))
            low.append(s - float(m[2]))
    return pd.Series(low, index=score.index, dtype="float64"), pd.Series(high, index=score.index, dtype="float64"), bad

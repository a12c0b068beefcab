"""Shared parser of Aider's YAML leaderboards (helper, not a source).

aider.chat renders `aider/website/_data/<board>_leaderboard.yml` into a static table at build
time, so the raw YAML is what we scrape. Each YAML entry is one benchmark run:
`model, edit_format, pass_rate_1, pass_rate_2 (percent), test_cases, date (run date), ...`;
the edit board also has model release dates as `released` or `_released`. One model is run
with several edit formats, so `setting` is the edit format (plus whatever else tells two runs
apart when that is not enough).
"""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar, Mapping

import pandas as pd

from common.naming import NamingRules
from scrapers._cells import percent_cells, raw_text
from scrapers.base import ParsedSnapshot, Scraper
from scrapers.normalize import clean_name, is_missing, parse_date

# Tried in order when (model, edit_format) is still not unique; dirname (the run id) is last.
DISAMBIGUATORS = ("reasoning_effort", "thinking_tokens", "editor_model", "editor_edit_format", "dirname")
RELEASE_KEYS = ("released", "_released")


class AiderScraper(Scraper):
    """Subclasses set name, urls, min_rows, `benchmark` and `n_tasks` (the benchmark's size)."""

    benchmark: ClassVar[str] = ""
    n_tasks: ClassVar[int] = 0
    # a trailing parenthesis naming an effort or thinking budget, an edit format or DeepSeek's API
    # mode, is a setting;
    # an architect/editor pair (o3 (high) + gpt-4.1) is a system of two models
    NAMING = NamingRules(
        # `(high)` and `(32k thinking)`: the shared markers (common.naming.COMMON_VARIANTS)
        variants=((r"\s*\((default(?: think(?:ing)?)?|no think(?:ing)?)\)$", "thinking"),
                  (r"\s*\((diff|whole|udiff|diff-fenced|editor-diff|editor-whole)\)$", "edit_format"),
                  # DeepSeek's API serves one model as `deepseek-chat` (non-thinking) and
                  # `deepseek-reasoner` (thinking): `DeepSeek-V3.2-Exp (Chat)`/`(Reasoner)`
                  (r"\s*\((chat|reasoner)\)$", "mode")),
        system_name=r"\s\+\s")

    def parse(self, content: bytes, *, fetched_at: datetime, aux: Mapping[str, bytes] | None = None,
              filename: str | None = None) -> ParsedSnapshot:
        runs = self.yaml(content)
        if not isinstance(runs, list):
            raise self.error(f"expected a YAML list of runs, got {type(runs).__name__}")
        runs = [r for r in runs if isinstance(r, dict)]
        if not runs:
            raise self.error("no runs in the YAML (empty leaderboard)")
        df = pd.DataFrame(runs)
        missing = [k for k in ("model", "pass_rate_2") if k not in df.columns]
        if missing:
            raise self.error(f"runs have no {', '.join(missing)} field; found {', '.join(map(str, df.columns))}")

        parsed = ParsedSnapshot(source=self.name)
        model = df["model"].map(clean_name)
        score, bad = percent_cells(df["pass_rate_2"], index=df.index)
        if bad:
            self.warn(parsed, f"unparseable pass_rate_2 value(s) {bad[:5]}")
        out = pd.DataFrame({
            "benchmark": self.benchmark,
            "model": model,
            "setting": self._settings(df, model, parsed),
            "score": score,
            "raw_value": raw_text(df["pass_rate_2"]),
            "metric": "proportion",
            "n_items": pd.to_numeric(self._optional(df, "test_cases", parsed), errors="coerce"),
            "evaluated_at": self._optional(df, "date", parsed).map(parse_date),
            "model_release_date": self._release_dates(df),
        })
        too_big = out["n_items"] > self.n_tasks
        if too_big.any():
            # e.g. a 225-case polyglot run listed on the 133-task edit board: not a run of this benchmark
            out.loc[too_big, "excluded_reason"] = (
                "test_cases " + out.loc[too_big, "n_items"].astype("Int64").astype(str)
                + f" exceeds the benchmark's {self.n_tasks} tasks (run of another benchmark)")
            self.warn(parsed, f"{int(too_big.sum())} run(s) with more test cases than the benchmark's "
                              f"{self.n_tasks} tasks excluded: {list(out.loc[too_big, 'model'])}")
        parsed.scores = out
        parsed.meta["runs"] = len(df)
        return parsed

    def _optional(self, df: pd.DataFrame, column: str, parsed: ParsedSnapshot) -> pd.Series:
        if column not in df.columns:
            self.warn(parsed, f"no {column!r} field; left NULL")
            return pd.Series(None, index=df.index, dtype="object")
        return df[column]

    def _settings(self, df: pd.DataFrame, model: pd.Series, parsed: ParsedSnapshot) -> pd.Series:
        """edit_format, extended by DISAMBIGUATORS only for runs that still share (model, setting)."""
        if "edit_format" in df.columns:
            setting = df["edit_format"].map(lambda v: "" if is_missing(v) else str(v).strip())
        else:
            self.warn(parsed, "no 'edit_format' field; setting ''")
            setting = pd.Series("", index=df.index, dtype="object")
        for column in DISAMBIGUATORS:
            dup = pd.DataFrame({"m": model, "s": setting}).duplicated(keep=False)
            if not dup.any():
                break
            if column in df.columns:
                values = df[column]
                add = dup & values.map(lambda v: not is_missing(v))
                setting = setting.where(~add, setting + f" {column}=" + values.astype(str))
        return setting.str.strip()

    @staticmethod
    def _release_dates(df: pd.DataFrame) -> pd.Series:
        """`released`, else `_released` (the edit board uses both spellings)."""
        dates = pd.Series(None, index=df.index, dtype="object")
        for key in RELEASE_KEYS:
            if key in df.columns:
                dates = dates.where(dates.notna(), df[key].map(parse_date))
        return dates

"""LMArena / Chatbot Arena (HF Space lmarena-ai/chatbot-arena-leaderboard).

Three kinds of file, sniffed from the content (not the name):
- `leaderboard_table_YYYYMMDD.csv`, whose schema drifted:
  2023-06 `Model, MT-bench (win rate %), MT-bench (score), Arena Elo rating, MMLU, License, Link`;
  2023-07..12 without the win-rate column; 2024+ `key, Model, MT-bench (score), MMLU,
  [Knowledge cutoff date,] License, Organization, Link` (Elo moved to the pickles).
  `key` is unique and `Model` is not (5 duplicate display names in 20250511), so `key` is
  the model when present. Benchmarks: `arena_elo` (metric elo), `mt_bench` (score_10),
  `mmlu` (already 0-1). `Knowledge cutoff date` (`2023/6`; `-`, `Unknown`, `Online` = none)
  goes on every row of the model. The 2023-06 MT-bench win rate has no benchmark id and is
  not emitted.
- `arena_hard_auto_leaderboard_v0.1.csv`: `model, score, rating_q025, rating_q975, CI, avg_tokens,
  date`. `score` is the win rate (percent) against the baseline -> proportion `arena_hard_auto`;
  `rating_q025/q975` are its 95% interval bounds in the same percent unit -> ci_low/ci_high
  (from the `CI` offsets `(-lo, +hi)` when the bounds are absent); `date` -> evaluated_at.
- `elo_data.json` (`elo_max_derived`, a third-party derivation of the Elo pickles):
  `[{date, category, max_elo, max_model}]` = the best Elo per category per leaderboard date.
  Benchmark `arena_elo_<category slug>`, model = max_model, evaluated_at = setting = date
  (one frontier model can lead a category on many dates).
Production: the newest leaderboard table is the primary response and the arena-hard CSV an
auxiliary one; any of the three kinds can also be ingested as a file.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Mapping

import pandas as pd

from scrapers._cells import number_cells, percent_cells, raw_text
from scrapers.base import ParsedSnapshot, Scraper
from scrapers.normalize import AmbiguousScale, clean_name, is_missing, parse_date, proportions_from, slug

# cut-off cell values meaning "no fixed cutoff" beyond the generic missing tokens
NO_CUTOFF = {"online"}


def _col(df: pd.DataFrame, *patterns: str) -> str | None:
    """The first column whose lower-cased name matches one of the regexes (in pattern order)."""
    for pattern in patterns:
        for c in df.columns:
            if re.fullmatch(pattern, str(c).strip().lower()):
                return c
    return None


class LmarenaScraper(Scraper):
    name = "lmarena"
    # The Space publishes dated tables; 20250511 is the newest known (the mirror ends 2025-05-12).
    # A newer table needs a new URL here: plan() has no listing of the Space's files.
    urls = (
        "https://huggingface.co/spaces/lmarena-ai/chatbot-arena-leaderboard/resolve/main/leaderboard_table_20250511.csv",
        "https://huggingface.co/spaces/lmarena-ai/chatbot-arena-leaderboard/resolve/main/arena_hard_auto_leaderboard_v0.1.csv",
    )
    min_rows = 10   # the smallest table (2023-06) has 28 models

    def parse(self, content: bytes, *, fetched_at: datetime, aux: Mapping[str, bytes] | None = None,
              filename: str | None = None) -> ParsedSnapshot:
        parsed = ParsedSnapshot(source=self.name)
        frames = [self._file(content, filename or "response", parsed)]
        frames += [self._file(body, name, parsed) for name, body in (aux or {}).items()]
        parsed.scores = pd.concat(frames, ignore_index=True)
        return parsed

    def _file(self, content: bytes, where: str, parsed: ParsedSnapshot) -> pd.DataFrame:
        """One response, whichever of the three kinds it is."""
        text = self.data_text(content).lstrip()
        kinds = parsed.meta.setdefault("kinds", {})
        if text.startswith(("[", "{")):
            kinds[where] = "elo_max_derived"
            return self._elo_max(text, parsed)
        df = self.csv(text, where=where)
        df.columns = [str(c).strip() for c in df.columns]
        dup = df.duplicated()
        if dup.any():   # e.g. yi-34b-chat listed twice, identically, in 20250511
            self.warn(parsed, f"{where}: {int(dup.sum())} exact duplicate line(s) dropped")
            df = df[~dup].reset_index(drop=True)
        lower = {c.lower() for c in df.columns}
        if {"model", "score"} <= lower and ({"rating_q025", "rating_q975"} <= lower or "ci" in lower):
            kinds[where] = "arena_hard_auto"
            return self._arena_hard(df, parsed)
        kinds[where] = "leaderboard_table"
        return self._leaderboard_table(df, parsed)

    # --- leaderboard_table_YYYYMMDD.csv ----------------------------------------------------
    def _leaderboard_table(self, df: pd.DataFrame, parsed: ParsedSnapshot) -> pd.DataFrame:
        key_col = _col(df, r"key")
        model_col = key_col or _col(df, r"model")
        if model_col is None:
            raise self.error(f"leaderboard table has no 'key' or 'Model' column; found {list(df.columns)}")
        columns = {
            "arena_elo": (_col(df, r"arena elo rating", r"arena elo.*", r"elo.*"), "elo"),
            "mt_bench": (_col(df, r"mt-bench \(score\)", r"mt-?bench"), "score_10"),
            "mmlu": (_col(df, r"mmlu.*"), "proportion"),
        }
        present = {b: cm for b, cm in columns.items() if cm[0] is not None}
        absent = [b for b in columns if b not in present]
        if present and absent:   # 2024+ tables keep Elo only in the pickles
            self.warn(parsed, f"leaderboard table has no column for {', '.join(absent)}")
        if not present:
            raise self.error(f"leaderboard table has none of the score columns "
                             f"'Arena Elo rating', 'MT-bench (score)', 'MMLU'; found {list(df.columns)}")
        cutoff_col = _col(df, r"knowledge cut-?off.*")
        if cutoff_col is None:
            self.warn(parsed, "no 'Knowledge cutoff date' column (tables before 2024-01-25); knowledge_cutoff NULL")
            cutoff = pd.Series(pd.NaT, index=df.index)
        else:
            cutoff = df[cutoff_col].map(lambda v: None if str(v).strip().lower() in NO_CUTOFF else parse_date(v))
        models = df[model_col].map(clean_name)

        frames = []
        for bench, (col, metric) in present.items():
            keep = ~df[col].map(is_missing)
            values, bad = number_cells(df.loc[keep, col], index=df.index[keep])
            if bad:
                self.warn(parsed, f"column {col!r}: unparseable value(s) {bad[:5]} (rows rejected)")
            if metric == "proportion":
                try:
                    values = proportions_from(values, signed=df.loc[keep, col].astype(str).str.contains("%"))
                except AmbiguousScale as exc:
                    raise self.error(f"column {col!r}: {exc}") from exc
            frames.append(pd.DataFrame({
                "benchmark": bench,
                "model": models[keep],
                "setting": "",
                "score": values,
                "raw_value": raw_text(df.loc[keep, col]),
                "metric": metric,
                "knowledge_cutoff": cutoff[keep],
            }))
        return pd.concat(frames, ignore_index=True)

    # --- arena_hard_auto_leaderboard_v0.1.csv ---------------------------------------------
    def _arena_hard(self, df: pd.DataFrame, parsed: ParsedSnapshot) -> pd.DataFrame:
        model_col, score_col = _col(df, r"model"), _col(df, r"score")
        lo_col, hi_col, ci_col = _col(df, r"rating_q025"), _col(df, r"rating_q975"), _col(df, r"ci")
        score, bad = percent_cells(df[score_col], index=df.index)
        if bad:
            self.warn(parsed, f"unparseable score value(s) {bad[:5]} (rows rejected)")
        if lo_col and hi_col:
            ci_low, _ = percent_cells(df[lo_col], index=df.index)
            ci_high, _ = percent_cells(df[hi_col], index=df.index)
        else:   # "(1.9, 2.0)" = (minus, plus) offsets in percent points
            offsets = df[ci_col].str.extract(r"\(\s*([-\d.]+)\s*,\s*([-\d.]+)\s*\)").astype("float64") / 100.0
            ci_low, ci_high = score - offsets[0].abs(), score + offsets[1].abs()
            self.warn(parsed, "no rating_q025/rating_q975 columns; CI derived from the CI offsets")
        date_col = _col(df, r"date")
        if date_col is None:
            self.warn(parsed, "no date column; evaluated_at NULL")
        return pd.DataFrame({
            "benchmark": "arena_hard_auto",
            "model": df[model_col].map(clean_name),
            "setting": "",
            "score": score,
            "raw_value": raw_text(df[score_col]),
            "metric": "proportion",
            "ci_low": ci_low,
            "ci_high": ci_high,
            "evaluated_at": df[date_col].map(parse_date) if date_col else pd.NaT,
        })

    # --- elo_data.json (elo_max_derived) ---------------------------------------------------
    def _elo_max(self, text: str, parsed: ParsedSnapshot) -> pd.DataFrame:
        data = self.json(text)
        if not isinstance(data, list) or not data:
            raise self.error(f"expected a non-empty JSON list of {{date, category, max_elo, max_model}}, "
                             f"got {type(data).__name__}")
        df = pd.DataFrame([r for r in data if isinstance(r, dict)])
        missing = [c for c in ("date", "category", "max_elo", "max_model") if c not in df.columns]
        if missing:
            raise self.error(f"elo JSON records lack field(s) {', '.join(missing)}; found {list(df.columns)}")
        elo, bad = number_cells(df["max_elo"], index=df.index)
        if bad:
            self.warn(parsed, f"unparseable max_elo value(s) {bad[:5]} (rows rejected)")
        dates = df["date"].map(parse_date)
        return pd.DataFrame({
            "benchmark": "arena_elo_" + df["category"].map(slug),
            "model": df["max_model"].map(clean_name),
            "setting": dates.map(lambda d: d.strftime("%Y-%m-%d") if d else ""),
            "score": elo,
            "raw_value": raw_text(df["max_elo"]),
            "metric": "elo",
            "evaluated_at": dates,
        })

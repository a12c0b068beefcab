"""Generic long-format CSV: one row per (model, benchmark) score, for data no scraper covers.

Required columns: model, benchmark, score. Optional: n_items, stderr, metric, evaluated_at,
model_release_date, knowledge_cutoff, setting. Accuracy-like scores may be proportions
(0-1) or percents (0-100): a file whose max accuracy-like score is > 1 is read as percent.
"""

from __future__ import annotations

import io
from datetime import datetime
from typing import Mapping

import pandas as pd

from scrapers.base import ParsedSnapshot, Scraper
from scrapers.normalize import clean_name, parse_date

REQUIRED = ("model", "benchmark", "score")
ACCURACY_METRICS = {"", "proportion", "accuracy", "pass@1", "resolved", "win_rate"}


class CsvScraper(Scraper):
    name = "csv"
    urls = ()          # local files only: `benchwatch ingest csv FILE`
    enabled = False

    def parse(self, content: bytes, *, fetched_at: datetime, aux: Mapping[str, bytes] | None = None,
              filename: str | None = None) -> ParsedSnapshot:
        self.reject_html(content)
        try:
            df = pd.read_csv(io.StringIO(self.text(content)), dtype=str, keep_default_na=False)
        except pd.errors.ParserError as exc:
            raise self.error(f"malformed CSV: {exc}") from exc
        df.columns = [c.strip().lower() for c in df.columns]
        missing = [c for c in REQUIRED if c not in df.columns]
        if missing:
            raise self.error(f"missing required column(s) {', '.join(missing)}; found {', '.join(df.columns)}")
        parsed = ParsedSnapshot(source=self.name)
        metric = df["metric"].str.strip().str.lower() if "metric" in df.columns else pd.Series("", index=df.index)
        accuracy = metric.isin(ACCURACY_METRICS)
        raw = pd.to_numeric(df["score"].str.replace("%", "", regex=False).str.strip(), errors="coerce").astype("float64")
        stderr = (pd.to_numeric(df["stderr"], errors="coerce") if "stderr" in df.columns
                  else pd.Series(float("nan"), index=df.index)).astype("float64")
        score = raw.copy()
        if accuracy.any() and raw[accuracy].max(skipna=True) > 1.0:
            score[accuracy] = raw[accuracy] / 100.0
            stderr[accuracy] = stderr[accuracy] / 100.0
            parsed.meta["accuracy_unit"] = "percent"
        else:
            parsed.meta["accuracy_unit"] = "proportion"
        out = pd.DataFrame({
            "benchmark": df["benchmark"].map(clean_name),
            "model": df["model"].map(clean_name),
            "setting": df["setting"].str.strip() if "setting" in df.columns else "",
            "score": score,
            "raw_value": df["score"],
            "metric": metric.where(~accuracy, "proportion"),
            "stderr": stderr,
            "n_items": pd.to_numeric(df["n_items"], errors="coerce") if "n_items" in df.columns else None,
        })
        for col in ("evaluated_at", "model_release_date", "knowledge_cutoff"):
            if col in df.columns:
                out[col] = df[col].map(parse_date)
        parsed.scores = out
        return parsed

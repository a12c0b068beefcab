"""Generic long-format CSV: one row per (model, benchmark) score, for data no scraper covers.

Required columns: model, benchmark, score. Optional: n_items, stderr, metric, evaluated_at,
model_release_date, knowledge_cutoff, setting.

Scale: metric `proportion` means 0-1 as written, `percent` means 0-100 (stored /100); any
other accuracy-like metric (blank, accuracy, pass@1, resolved, win_rate) has its scale decided
per benchmark from that benchmark's *valid* values (`scrapers.normalize.percent_scale`), so a
bad cell (inf, 101, -3) is rejected without rescaling the good ones; an ambiguous benchmark
fails the whole file with a ScrapeError naming the column and benchmark. Other metric kinds
(elo, score_10, index, cost_usd) are stored in their own unit.
"""

from __future__ import annotations

from datetime import datetime
from typing import Mapping

import pandas as pd

from scrapers.base import ParsedSnapshot, Scraper
from scrapers.normalize import AmbiguousScale, clean_name, parse_date, percent_scale

REQUIRED = ("model", "benchmark", "score")
# accuracy-like metrics whose unit the file does not declare (scale decided per benchmark)
UNDECLARED_SCALE = {"", "accuracy", "pass@1", "resolved", "win_rate"}
ACCURACY_METRICS = UNDECLARED_SCALE | {"proportion", "percent"}


def _clean_names(names: pd.Series) -> pd.Series:
    """`clean_name` of each cell, computed once per distinct name (names repeat across rows)."""
    cleaned = {n: clean_name(n) for n in pd.unique(names)}
    return names.map(cleaned)


class CsvScraper(Scraper):
    name = "csv"
    urls = ()          # local files only: `benchwatch ingest csv FILE`
    enabled = False

    def parse(self, content: bytes, *, fetched_at: datetime, aux: Mapping[str, bytes] | None = None,
              filename: str | None = None) -> ParsedSnapshot:
        df = self.csv(content)
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
        benchmark = _clean_names(df["benchmark"])
        signs = df["score"].str.contains("%", regex=False)
        percent = (metric.eq("percent") | signs) & accuracy
        units: dict[str, str] = {}
        undeclared = metric.isin(UNDECLARED_SCALE)
        for bench, rows in raw[undeclared].groupby(benchmark[undeclared].fillna(""), sort=True):
            try:
                is_percent = percent_scale(rows, percent_signs=bool(signs[rows.index].any()))
            except AmbiguousScale as exc:
                raise self.error(f"column 'score', benchmark {bench!r}: {exc}; "
                                 "declare the metric column as 'proportion' or 'percent'") from exc
            percent[rows.index] = is_percent
            units[bench] = "percent" if is_percent else "proportion"
        score[percent] = raw[percent] / 100.0
        stderr[percent] = stderr[percent] / 100.0
        parsed.meta["accuracy_unit"] = units
        out = pd.DataFrame({
            "benchmark": benchmark,
            "model": _clean_names(df["model"]),
            "setting": df["setting"].str.strip() if "setting" in df.columns else "",
            "score": score,
            "raw_value": df["score"],
            "metric": metric.where(~accuracy, "proportion"),
            "stderr": stderr,
            "n_items": df["n_items"] if "n_items" in df.columns else None,   # checked by validate
        })
        for col in ("evaluated_at", "model_release_date", "knowledge_cutoff"):
            if col in df.columns:
                out[col] = df[col].map(parse_date)
        parsed.scores = out
        return parsed

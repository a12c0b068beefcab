"""Generic long-format CSV: one row per (model, benchmark) score, for data no scraper covers.

Required columns: model, benchmark, score. Optional: n_items, stderr, metric, evaluated_at,
model_release_date, knowledge_cutoff, setting.

Scale: metric `proportion` means 0-1 as written, `percent` means 0-100 (stored /100); any
other accuracy-like metric (blank, accuracy, pass@1, resolved, win_rate) has its scale decided
per benchmark from that benchmark's *valid* values (`scrapers.normalize.percent_scale`), so a
bad cell (inf, 101, -3) is rejected without rescaling the good ones, and so is a cell written
with '%' in a benchmark whose other cells are proportions; an ambiguous benchmark
fails the whole file with a ScrapeError naming the column and benchmark. Other metric kinds
(elo, score_10, index, cost_usd) are stored in their own unit.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar, Mapping

import numpy as np
import pandas as pd

from scrapers.base import (REASON_PERCENT_IN_PROPORTIONS, SCORE_COLUMNS, ParsedSnapshot, Scraper, bad_counts, conform,
                           conformed_scores, reason_unknown_metric, reject_rows_json)
from scrapers.normalize import METRIC_RANGES, AmbiguousScale, clean_name, parse_date, percent_scale
from scrapers.cases import Case, S

REQUIRED = ("model", "benchmark", "score")
# accuracy-like metrics whose unit the file does not declare (scale decided per benchmark)
UNDECLARED_SCALE = {"", "accuracy", "pass@1", "resolved", "win_rate"}
ACCURACY_METRICS = UNDECLARED_SCALE | {"proportion", "percent"}
OPTIONAL = ("n_items", "stderr", "metric", "evaluated_at", "model_release_date", "knowledge_cutoff", "setting")
DATE_COLUMNS = ("evaluated_at", "model_release_date", "knowledge_cutoff")


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
        contradicts = pd.Series(False, index=df.index)     # a '%' cell in a column of proportions
        for bench, rows in raw[undeclared].groupby(benchmark[undeclared].fillna(""), sort=True):
            try:
                is_percent = percent_scale(rows, signed=signs[rows.index])
            except AmbiguousScale as exc:
                raise self.error(f"column 'score', benchmark {bench!r}: {exc}; "
                                 "declare the metric column as 'proportion' or 'percent'") from exc
            percent[rows.index] = is_percent
            if not is_percent:
                contradicts[rows.index] = signs[rows.index]
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
        if contradicts.any():   # rejected with its own reason, before `validate`'s checks (as the SQL path)
            parsed.rejects = pd.DataFrame({"row": reject_rows_json(conformed_scores(out[contradicts])),
                                           "reason": REASON_PERCENT_IN_PROPORTIONS})
            out = out[~contradicts]
        parsed.scores = out
        return parsed

    # the declared cases (scrapers/cases.py), run by tests/unit/test_scraper_cases.py
    CASES = (
        Case("csv/scores_proportion.csv", scores=3, benchmarks=frozenset({"gpqa_diamond"}), spots=(
            S(model="GPT-5")(score=0.854, n_items=198, metric="proportion", stderr=None),
        )),
        Case("csv/scores_percent.csv", scores=5, spots=(   # percents: the whole column is on one scale
            S(model="o3")(score=0.992, raw_value="99.2", evaluated_at="2025-04-16", knowledge_cutoff="2024-06-01"),
            S(model="GLM-4.5")(score=0.982, model_release_date=None, knowledge_cutoff=None),
        )),
    )


# --- the same reading, cell by distinct cell, for the CSV ingest that parses in DuckDB ------------
# storage.csv_ingest reads the file with DuckDB's CSV reader (every cell as text) and validates
# in SQL; whatever depends on a cell's text in Python terms (names, metric kinds, dates, numbers
# that are not plain decimals) is computed here once per *distinct* cell and joined back.

# A text that Python's and DuckDB's readers turn into the same double: plain decimal digits of
# at most 15 significant figures (exact integer / exact power of ten: correctly rounded by
# both). Anything else (signs, exponents, inf, spaces, words) goes through `numbers`.
PLAIN_DECIMAL = r"^([0-9]{1,15}(\.[0-9]*)?|\.[0-9]{1,15})$"
PLAIN_DECIMAL_MAX_LEN = 16
PLAIN_COUNT = r"^[0-9]{1,9}$"      # an n_items cell DuckDB may cast to INTEGER itself (< N_ITEMS_MAX)
# What the fast read cannot reproduce exactly: a quote with a space beside it (DuckDB drops the
# spaces after a closing quote), NUL bytes (plain substring scans: a regex over 40 MB takes seconds).
_QUOTE_BESIDE_SPACE = (b' "', b'\t"', b'" ', b'"\t')


def native_layout(content: bytes) -> CsvLayout | None:
    """The header of a file the DuckDB read reproduces exactly, or None (read it with pandas).

    None for anything unusual — a quoted header, a missing required column, duplicate names,
    text that is not UTF-8, an HTML page, quotes beside spaces, mixed line endings: the pandas
    path then reads it, and words any error exactly as before.
    """
    head = content[:512].lstrip().lower()
    if head.startswith(b"<!doctype html") or head.startswith(b"<html"):
        return None
    if b"\x00" in content or (b'"' in content and any(pattern in content for pattern in _QUOTE_BESIDE_SPACE)):
        return None
    n_cr = content.count(b"\r")
    if n_cr and (n_cr != content.count(b"\r\n") or n_cr < content.count(b"\n")):
        return None                       # only all-CRLF or all-LF files
    if not content.isascii():
        try:
            content.decode("utf-8")
        except UnicodeDecodeError:
            return None
    end = content.find(b"\n")
    first = content[:end if end >= 0 else len(content)].rstrip(b"\r").decode("utf-8")
    first = first.removeprefix("\ufeff")
    if not first.strip() or '"' in first:
        return None
    names = [c.strip().lower() for c in first.split(",")]
    wanted = REQUIRED + OPTIONAL
    if any(names.count(n) > 1 for n in wanted) or any(c not in names for c in REQUIRED):
        return None
    return CsvLayout(len(names), {n: names.index(n) for n in wanted if n in names})


def metric_table(cells: pd.Series) -> pd.DataFrame:
    """Per distinct metric cell: the stored metric, whether it is accuracy-like, whether its unit is
    undeclared, declared percent, its range, and the reject reason of an unknown kind."""
    metric = cells.str.strip().str.lower()
    accuracy = metric.isin(ACCURACY_METRICS)
    stored = metric.where(~accuracy, "proportion")
    known = stored.isin(list(METRIC_RANGES))
    return pd.DataFrame({
        "cell": cells, "metric": stored, "accuracy": accuracy, "undeclared": metric.isin(UNDECLARED_SCALE),
        "declared_percent": metric.eq("percent") & accuracy,
        "lo": [METRIC_RANGES[m][0] if k else np.nan for m, k in zip(stored, known)],
        "hi": [METRIC_RANGES[m][1] if k else np.nan for m, k in zip(stored, known)],
        "unknown_reason": [None if k else reason_unknown_metric(m) for m, k in zip(stored, known)]})


def score_numbers(cells: pd.Series) -> pd.Series:
    """A score cell's number as `parse` reads it ('%' removed, spaces stripped; NaN if none)."""
    return pd.to_numeric(cells.str.replace("%", "", regex=False).str.strip(), errors="coerce").astype("float64")


def stderr_numbers(cells: pd.Series) -> pd.Series:
    return pd.to_numeric(cells, errors="coerce").astype("float64")


def count_table(cells: pd.Series) -> pd.DataFrame:
    """Per distinct n_items cell: whether `validate` rejects it, and the count it stores (NA if none)."""
    bad = bad_counts(cells)
    kept = pd.to_numeric(cells.astype("object").where(~bad, None), errors="coerce").astype("Int64")
    return pd.DataFrame({"cell": cells, "bad": bad.to_numpy(), "value": kept})


def date_table(cells: pd.Series) -> pd.DataFrame:
    """Per distinct date cell: the naive UTC timestamp `parse` and `validate` make of it (NaT if none)."""
    parsed = conform(pd.DataFrame({"evaluated_at": cells.map(parse_date)}), {"evaluated_at": SCORE_COLUMNS["evaluated_at"]})
    return pd.DataFrame({"cell": cells.to_numpy(), "value": parsed["evaluated_at"].to_numpy()})


def name_table(cells: pd.Series) -> pd.DataFrame:
    """Per distinct name cell: the cleaned name (None when the cell is empty or a missing token)."""
    return pd.DataFrame({"cell": cells, "name": [clean_name(c) for c in cells]})


def setting_table(cells: pd.Series) -> pd.DataFrame:
    return pd.DataFrame({"cell": cells, "setting": cells.str.strip()})


@dataclass(frozen=True)
class CsvLayout:
    """Where the columns this source reads are, by the header line (0-based cell positions), and
    how it reads a cell: the job hands both to `storage.csv_ingest` (storage never imports scrapers)."""

    n_cells: int
    columns: dict[str, int]

    DATE_COLUMNS: ClassVar[tuple[str, ...]] = DATE_COLUMNS
    PLAIN_DECIMAL: ClassVar[str] = PLAIN_DECIMAL
    PLAIN_DECIMAL_MAX_LEN: ClassVar[int] = PLAIN_DECIMAL_MAX_LEN
    PLAIN_COUNT: ClassVar[str] = PLAIN_COUNT
    name_table = staticmethod(name_table)
    setting_table = staticmethod(setting_table)
    metric_table = staticmethod(metric_table)
    date_table = staticmethod(date_table)
    count_table = staticmethod(count_table)
    score_numbers = staticmethod(score_numbers)
    stderr_numbers = staticmethod(stderr_numbers)

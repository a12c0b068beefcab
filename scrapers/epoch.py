"""Epoch AI Benchmarking Hub: `benchmark_data.zip`, or one of its CSVs.

The zip holds one CSV per benchmark; the benchmark id is the member's file name
(`gpqa_diamond.csv` -> `gpqa_diamond`, `swe_bench_verified.csv` -> `swebench_verified`).
A single CSV (ingested from disk) names its benchmark through `filename`; snapshot copies
are named `epoch_<member>_<YYYY-MM-DD>.csv`. Two schemas are read:
- runs CSV: `Model version, mean_score, Best score (across scorers), Release date, ...,
  stderr, Log viewer, Logs, Started at, id`. Score = mean_score (fallback: Best score),
  0-1 -> metric proportion; stderr in the same unit; `Release date` -> model_release_date;
  `Started at` -> evaluated_at. One model version may have several runs (two for
  `claude-opus-4-6` on SWE-bench Verified), so setting = the run `id`: stable across
  snapshots, and distinct runs stay distinct rows.
- ECI CSV (`epoch_capabilities_index.csv`): `Model version, ECI Score, Release date, ...`
  -> benchmark `epoch_capabilities_index`, metric index. 40-48% of rows have no score yet:
  skipped, counted in a warning.
`Model version` encodes effort / thinking budget (`_high`, `_32K`): the suffix is a
setting of the model, not another model (registry/README.md), so it moves to `setting`
(`effort=high; run=<id>`) and the model name is the bare version. Other members (`*_external.csv`: third-party results with their own score
column; `additional_eci_data/`) are not this schema and are skipped with a warning.
Quoted fields contain newlines, so the CSVs are read with a real CSV parser.
"""

from __future__ import annotations

import io
import re
import zipfile
from datetime import datetime
from pathlib import PurePosixPath
from typing import Mapping

import pandas as pd

from scrapers._cells import number_cells, raw_text
from scrapers.base import ParsedSnapshot, Scraper
from scrapers.normalize import clean_name, is_missing, parse_date

# Epoch's file stem -> canonical benchmark id, where they differ.
BENCHMARK_IDS: dict[str, str] = {"swe_bench_verified": "swebench_verified"}
ECI_BENCHMARK = "epoch_capabilities_index"
_CHUNK = 1024 * 1024


def _unpacked_cap() -> int:
    """The most the zip's members may unpack to together: the HTTP layer's response cap (read at
    call time, so one setting bounds both)."""
    from scrapers import http
    return http.DEFAULT_MAX_BYTES
_SNAPSHOT_NAME = re.compile(r"epoch_(.+)_\d{4}-\d{2}-\d{2}")

# `_high`, `_xhigh`, `_minimal`, `_32K`, `_16k` at the end of a model version: effort / thinking budget.
EFFORT_SUFFIX = r"_((?:x?high|medium|low|minimal|max|none)|\d+[kK])$"


def benchmark_from_filename(filename: str) -> str:
    """'gpqa_diamond.csv' / 'epoch_gpqa_diamond_2026-04-19.csv' -> 'gpqa_diamond'."""
    stem = PurePosixPath(filename).stem
    m = _SNAPSHOT_NAME.fullmatch(stem)
    if m:
        stem = m.group(1)
    return BENCHMARK_IDS.get(stem, stem)


def _column(df: pd.DataFrame, *names: str) -> str | None:
    lower = {str(c).strip().lower(): c for c in df.columns}
    return next((lower[n] for n in names if n in lower), None)


class EpochScraper(Scraper):
    name = "epoch"
    urls = ("https://epoch.ai/data/benchmark_data.zip",)
    min_rows = 20   # the smallest CSV (swe_bench_verified, 2026-03) has 24 runs

    def parse(self, content: bytes, *, fetched_at: datetime, aux: Mapping[str, bytes] | None = None,
              filename: str | None = None) -> ParsedSnapshot:
        self.reject_html(content)
        parsed = ParsedSnapshot(source=self.name)
        if content[:4] == b"PK\x03\x04":
            parsed.scores = self._zip(content, parsed)
            return parsed
        df = self._read(content, where=filename or "response")
        if _column(df, "eci score") is not None:
            bench = ECI_BENCHMARK
        elif filename:
            bench = benchmark_from_filename(filename)
        else:
            raise self.error("a single Epoch runs CSV does not name its benchmark; pass its file name "
                             "(e.g. gpqa_diamond.csv)")
        parsed.scores = self._frame(df, bench, where=filename or "response", parsed=parsed, strict=True)
        return parsed

    def _read(self, content: bytes, *, where: str) -> pd.DataFrame:
        return self.csv(content, where=where)

    def _zip(self, content: bytes, parsed: ParsedSnapshot) -> pd.DataFrame:
        try:
            archive = zipfile.ZipFile(io.BytesIO(content))
        except zipfile.BadZipFile as exc:
            raise self.error(f"benchmark_data.zip is not a valid zip: {exc}") from exc
        frames, skipped = [], []
        budget = [_unpacked_cap()]      # what the members may still unpack to, together
        with archive:
            members = [m for m in archive.namelist() if m.lower().endswith(".csv") and not m.startswith("__MACOSX")]
            for member in members:
                # one broken member must not hide the other benchmarks: a warning, not an error
                df = self.csv(self._member(archive, member, budget), where=member, fatal=False, parsed=parsed)
                if df is None:
                    skipped.append(member)
                    continue
                bench = ECI_BENCHMARK if _column(df, "eci score") is not None else benchmark_from_filename(member)
                frame = self._frame(df, bench, where=member, parsed=parsed, strict=False)
                if frame is None:
                    skipped.append(member)
                else:
                    frames.append(frame)
        parsed.meta["members"] = len(members)
        if skipped:
            self.warn(parsed, f"{len(skipped)} zip member(s) unreadable or without a 'Model version' + "
                              f"'mean_score'/'Best score' or 'ECI Score' schema skipped: {skipped}")
        if not frames:
            raise self.error(f"no member of benchmark_data.zip has the Epoch runs or ECI schema ({len(members)} CSVs)")
        return pd.concat(frames, ignore_index=True)

    def _member(self, archive: zipfile.ZipFile, member: str, budget: list[int]) -> bytes:
        """A member's bytes, unpacked in chunks and never beyond what is left of the cap (a small
        zip can hold a member of gigabytes: its declared size is not trusted). ScrapeError past it."""
        chunks, total = [], 0
        try:
            with archive.open(member) as fh:
                while chunk := fh.read(min(_CHUNK, budget[0] - total + 1)):
                    total += len(chunk)
                    if total > budget[0]:
                        raise self.error(f"benchmark_data.zip: {member} unpacks to more than the "
                                         f"{_unpacked_cap() // (1024 * 1024)} MB cap of the whole archive "
                                         "(refused, as a response over the cap is)")
                    chunks.append(chunk)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError, OSError) as exc:
            raise self.error(f"benchmark_data.zip: {member}: {exc}") from exc
        budget[0] -= total
        return b"".join(chunks)

    def _frame(self, df: pd.DataFrame, bench: str, *, where: str, parsed: ParsedSnapshot,
               strict: bool) -> pd.DataFrame | None:
        """One CSV -> score rows. Unknown schema: ScrapeError if `strict`, else None (skipped)."""
        model_col = _column(df, "model version")
        if bench == ECI_BENCHMARK:
            score_col, metric = _column(df, "eci score"), "index"
        else:
            score_col, metric = _column(df, "mean_score", "best score (across scorers)", "best score"), "proportion"
        if model_col is None or score_col is None:
            if not strict:
                return None
            missing = [n for n, c in (("Model version", model_col), ("mean_score or Best score", score_col)) if c is None]
            raise self.error(f"{where}: missing column(s) {', '.join(missing)}; found {list(df.columns)}")
        if score_col != _column(df, "mean_score", "eci score"):
            self.warn(parsed, f"{where}: no mean_score column; using {score_col!r}")

        blank = df[score_col].map(is_missing)
        if blank.any():
            self.warn(parsed, f"{where}: {int(blank.sum())} of {len(df)} row(s) have no {score_col} yet; skipped")
        df = df[~blank]
        score, bad = number_cells(df[score_col], index=df.index)
        if bad:
            self.warn(parsed, f"{where}: unparseable {score_col} value(s) {bad[:5]} (rows rejected)")

        names = df[model_col].map(clean_name)
        effort = names.str.extract(EFFORT_SUFFIX, expand=False)
        out = pd.DataFrame({
            "benchmark": bench,
            "model": names.str.replace(EFFORT_SUFFIX, "", regex=True),
            "setting": ("effort=" + effort).fillna(""),
            "score": score,
            "raw_value": raw_text(df[score_col]),
            "metric": metric,
        }, index=df.index)
        optional = {"stderr": _column(df, "stderr"), "model_release_date": _column(df, "release date"),
                    "evaluated_at": _column(df, "started at"), "setting": _column(df, "id")}
        if bench == ECI_BENCHMARK:
            optional = {k: v for k, v in optional.items() if k == "model_release_date"}
        for field, col in optional.items():
            if col is None:
                self.warn(parsed, f"{where}: no column for {field}; left NULL")
            elif field == "stderr":
                out[field] = number_cells(df[col], index=df.index)[0]
            elif field == "setting":
                run = "run=" + df[col].str.strip()
                out[field] = (out["setting"] + "; " + run).where(out["setting"] != "", run)
            else:
                out[field] = df[col].map(parse_date)
        return out.reset_index(drop=True)

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
- SWE-bench bash-only runs: `Model version, % Resolved, Release date, Organization, Country,
  Training compute (FLOP), Training compute notes, Avg. Cost ($), Date run, Notes, Source,
  Source link, SWE-Agent Release Version, id`. Recognised by its `SWE-Agent Release Version`
  column (or `bash_only` in the name): SWE-bench Verified's 500 tasks run with the minimal
  bash-only agent, i.e. benchmark `swebench_bash_only` (not `swebench_verified`, whose Epoch
  runs use Epoch's own harness); `% Resolved` is a proportion (0.744) despite its name (the
  scale is read from the values); `Date run` -> evaluated_at; setting `agent=<release>; run=<id>`.
- Any other table with a model column (`Model version`, `Model`, `Model name`, `Name`,
  `System`) and a score column (`mean_score`, `Best score`, `% Resolved`, `Score`, `Accuracy`,
  or another header naming a score, accuracy, resolved or correct share): read the same way,
  percent or proportion decided from the values (`common.units.percent_scale`; a stderr
  column follows the score's unit).
`*_external.csv` members hold third-party results (the model developer's or another board's
numbers): benchmark = the name without `_external`, `table_version = 'external'` (never one
table with Epoch's own runs), `reported_by = 'external'`.
`Model version` encodes effort / thinking budget (`_high`, `_32K`): the suffix is a
setting of the model, not another model (registry/README.md), so it moves to `setting`
(`effort=high; run=<id>`) and the model name is the bare version. A file without a model or
a score column is an error naming the columns it found (a zip member: skipped, named with
its columns in a warning). Quoted fields contain newlines, so the CSVs are read with a real
CSV parser.
"""

from __future__ import annotations

import io
import re
import zipfile
from datetime import datetime
from pathlib import PurePosixPath
from typing import Mapping

import pandas as pd

from common.naming import NamingRules
from scrapers._cells import number_cells, raw_text
from scrapers.base import ParsedSnapshot, Scraper
from scrapers.normalize import AmbiguousScale, clean_name, is_missing, parse_date, percent_scale
from scrapers.cases import Case, Has, S, snap

# Epoch's file stem -> canonical benchmark id, where they differ.
BENCHMARK_IDS: dict[str, str] = {"swe_bench_verified": "swebench_verified", "swe_bench_bash_only": "swebench_bash_only",
                                 "swe_bench_verified_bash_only": "swebench_bash_only"}
ECI_BENCHMARK = "epoch_capabilities_index"
BASH_ONLY_BENCHMARK = "swebench_bash_only"
EXTERNAL = "external"          # table_version and reported_by of an `*_external.csv` member
_CHUNK = 1024 * 1024


def _unpacked_cap() -> int:
    """The most the zip's members may unpack to together: the HTTP layer's response cap (read at
    call time, so one setting bounds both)."""
    from scrapers import http
    return http.DEFAULT_MAX_BYTES
_SNAPSHOT_NAME = re.compile(r"epoch_(.+)_\d{4}-\d{2}-\d{2}")

# Model and score columns, lower-cased, in order of preference. The first score names are Epoch's
# runs schema (proportions as they are); the others are read as percent or proportion by value.
MODEL_COLUMNS = ("model version", "model", "model name", "model_name", "name", "system")
RUNS_SCORE_COLUMNS = ("mean_score", "best score (across scorers)", "best score")
OTHER_SCORE_COLUMNS = ("% resolved", "resolved", "score", "accuracy", "% correct", "correct", "pass@1")
_SCORE_LIKE = re.compile(r"score|resolved|accuracy|correct|pass@1")
_NOT_A_SCORE = re.compile(r"stderr|std|error|note|link|cost|compute|eci|release|date|source|version|\bid\b|count|n_")
_AGENT_VERSION = ("swe-agent release version", "mini-swe-agent version", "mini-swe-agent_version")

# `_high`, `_xhigh`, `_minimal`, `_32K`, `_16k` at the end of a model version: effort / thinking budget.
EFFORT_SUFFIX = r"_((?:x?high|medium|low|minimal|max|none)|\d+[kK])$"


def _stem(filename: str) -> str:
    stem = PurePosixPath(filename).stem
    m = _SNAPSHOT_NAME.fullmatch(stem)
    return m.group(1) if m else stem


def is_external(filename: str) -> bool:
    """'gpqa_diamond_external.csv' (third-party results) -> True."""
    return _stem(filename).endswith("_" + EXTERNAL)


def benchmark_from_filename(filename: str) -> str:
    """'gpqa_diamond.csv' / 'epoch_gpqa_diamond_2026-04-19.csv' / 'gpqa_diamond_external.csv' -> 'gpqa_diamond'."""
    stem = _stem(filename)
    if stem.endswith("_" + EXTERNAL):
        stem = stem[: -len(EXTERNAL) - 1]
    if "bash_only" in stem:
        return BASH_ONLY_BENCHMARK
    return BENCHMARK_IDS.get(stem, stem)


def score_column(df: pd.DataFrame) -> tuple[str | None, bool]:
    """(the score column, whether it is Epoch's runs schema: proportions as they are)."""
    runs = _column(df, *RUNS_SCORE_COLUMNS)
    if runs is not None:
        return runs, True
    other = _column(df, *OTHER_SCORE_COLUMNS)
    if other is None:
        other = next((c for c in df.columns if _SCORE_LIKE.search(str(c).lower())
                      and not _NOT_A_SCORE.search(str(c).lower())), None)
    return other, False


def _column(df: pd.DataFrame, *names: str) -> str | None:
    lower = {str(c).strip().lower(): c for c in df.columns}
    return next((lower[n] for n in names if n in lower), None)


class EpochScraper(Scraper):
    name = "epoch"
    # `_thinking` and a trailing (<N>K thinking) are settings (Epoch's effort column is already `setting`)
    NAMING = NamingRules(variants=((r"_(thinking)$", "effort"), (r"\s*\((\d+K thinking)\)$", "effort")))
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
        elif _column(df, *_AGENT_VERSION) is not None:
            bench = BASH_ONLY_BENCHMARK
        elif filename:
            bench = benchmark_from_filename(filename)
        else:
            raise self.error("a single Epoch runs CSV does not name its benchmark; pass its file name "
                             f"(e.g. gpqa_diamond.csv); found columns {list(df.columns)}")
        parsed.scores = self._frame(df, bench, where=filename or "response", parsed=parsed, strict=True,
                                    external=bool(filename) and is_external(filename or ""))
        return parsed

    def _read(self, content: bytes, *, where: str) -> pd.DataFrame:
        return self.csv(content, where=where)

    def _zip(self, content: bytes, parsed: ParsedSnapshot) -> pd.DataFrame:
        try:
            archive = zipfile.ZipFile(io.BytesIO(content))
        except zipfile.BadZipFile as exc:
            raise self.error(f"benchmark_data.zip is not a valid zip: {exc}") from exc
        frames, skipped = [], []
        found: list[str] = []
        budget = [_unpacked_cap()]      # what the members may still unpack to, together
        with archive:
            members = [m for m in archive.namelist() if m.lower().endswith(".csv") and not m.startswith("__MACOSX")]
            for member in members:
                # one broken member must not hide the other benchmarks: a warning, not an error
                df = self.csv(self._member(archive, member, budget), where=member, fatal=False, parsed=parsed)
                if df is None:
                    skipped.append(member)
                    continue
                if _column(df, "eci score") is not None:
                    bench = ECI_BENCHMARK
                elif _column(df, *_AGENT_VERSION) is not None:
                    bench = BASH_ONLY_BENCHMARK
                else:
                    bench = benchmark_from_filename(member)
                frame = self._frame(df, bench, where=member, parsed=parsed, strict=False, external=is_external(member))
                if frame is None:
                    skipped.append(member)
                    found.append(f"{member}: {list(df.columns)}")
                else:
                    frames.append(frame)
        parsed.meta["members"] = len(members)
        if skipped:
            self.warn(parsed, f"{len(skipped)} zip member(s) unreadable or without a model column and a score "
                              f"column skipped: {skipped}" + (f"; columns found: {'; '.join(found)}" if found else ""))
        if not frames:
            raise self.error(f"no member of benchmark_data.zip has a model column and a score column "
                             f"({len(members)} CSVs)" + (f"; columns found: {'; '.join(found)}" if found else ""))
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
               strict: bool, external: bool = False) -> pd.DataFrame | None:
        """One CSV -> score rows. Unknown schema: ScrapeError if `strict`, else None (skipped)."""
        model_col = _column(df, *MODEL_COLUMNS)
        runs_schema = True
        if bench == ECI_BENCHMARK:
            score_col, metric = _column(df, "eci score"), "index"
        else:
            (score_col, runs_schema), metric = score_column(df), "proportion"
        if model_col is None or score_col is None:
            if not strict:
                return None
            missing = [n for n, c in (("a model column (Model version, Model, Name, …)", model_col),
                                      ("a score column (mean_score, Best score, % Resolved, Score, Accuracy, …)",
                                       score_col)) if c is None]
            raise self.error(f"{where}: lacks {' and '.join(missing)}; columns found: {list(df.columns)}")
        if score_col != _column(df, "mean_score", "eci score"):
            self.warn(parsed, f"{where}: no mean_score column; using {score_col!r}")

        blank = df[score_col].map(is_missing)
        if blank.any():
            self.warn(parsed, f"{where}: {int(blank.sum())} of {len(df)} row(s) have no {score_col} yet; skipped")
        df = df[~blank]
        score, bad = number_cells(df[score_col].astype(str).str.replace("%", "", regex=False)
                                  if not runs_schema else df[score_col], index=df.index)
        if bad:
            self.warn(parsed, f"{where}: unparseable {score_col} value(s) {bad[:5]} (rows rejected)")
        percent = False
        if not runs_schema and metric == "proportion":
            signs = df[score_col].astype(str).str.contains("%", regex=False)
            try:
                percent = percent_scale(score, signed=signs)
            except AmbiguousScale as exc:
                raise self.error(f"{where}: column {score_col!r}: {exc}") from exc
            if percent:
                score = score / 100.0

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
        agent_col = _column(df, *_AGENT_VERSION)
        if agent_col is not None:       # the agent's release: part of the run's setting
            agent = ("agent=" + df[agent_col].fillna("").astype(str).str.strip()).where(
                ~df[agent_col].map(is_missing), "")
            out["setting"] = (out["setting"] + "; " + agent).where((out["setting"] != "") & (agent != ""),
                                                                   out["setting"] + agent)
        optional = {"stderr": _column(df, "stderr", "standard error"),
                    "model_release_date": _column(df, "release date"),
                    "evaluated_at": _column(df, "started at", "date run", "date"), "setting": _column(df, "id")}
        if bench == ECI_BENCHMARK:
            optional = {k: v for k, v in optional.items() if k == "model_release_date"}
        for field, col in optional.items():
            if col is None:
                self.warn(parsed, f"{where}: no column for {field}; left NULL")
            elif field == "stderr":
                out[field] = number_cells(df[col], index=df.index)[0] / (100.0 if percent else 1.0)
            elif field == "setting":
                run = "run=" + df[col].fillna("").astype(str).str.strip()
                out[field] = (out["setting"] + "; " + run).where(out["setting"] != "", run)
            else:
                out[field] = df[col].map(parse_date)
        if external:
            out["table_version"] = EXTERNAL
            out["reported_by"] = EXTERNAL
        return out.reset_index(drop=True)

    # the declared cases (scrapers/cases.py), run by tests/test_scraper_cases.py
    CASES = (
        Case("epoch/gpqa_diamond.csv", scores=4, benchmarks=frozenset({"gpqa_diamond"}), spots=(
            S(model="gpt-5.4-mini-2026-03-17")(       # `_high` is an effort setting, not part of the model
                score=0.8358585858585859, stderr=0.022274469189069883, model_release_date="2026-03-17",
                evaluated_at="2026-04-15 14:03:19", setting="effort=high; run=AQF46S9hBhosKPEMy3fyB9"),
            S(model="glm-4.7")(score=0.8333333333333334),     # the row after a multi-line note
            S(model="grok-4-0709")(evaluated_at=None),
        )),
        Case("epoch/swe_bench_verified.csv", filename="epoch_swe_bench_verified_2026-04-19.csv", scores=3,
             rejects=0, benchmarks=frozenset({"swebench_verified"}), spots=(
                 S(model="claude-opus-4-6", setting="run=2hH2GAPUFaJR7pfVKhhicg")(score=0.7871900826446281),
                 S(model="claude-opus-4-6", setting="run=aQiAg6mt8HPHXjKcJvax2d")(score=0.756198347107438),
             )),
        Case("epoch/epoch_capabilities_index.csv", scores=2, rejects=0,
             benchmarks=frozenset({"epoch_capabilities_index"}), warnings=("3 of 5",), spots=(
                 S(model="claude-3-5-sonnet-20240620")(score=130.0, metric="index", model_release_date="2024-06-20"),
             )),
        # Epoch's SWE-bench bash-only schema (issue 20: "missing column(s) mean_score or Best score"): the header
        # as Epoch publishes it, rows typed from the SWE-bench bash-only board (2025-11-24 copy: resolved share,
        # date, mini-SWE-agent release, folder, instance cost). `% Resolved` is a proportion.
        Case("epoch/swe_bench_bash_only.csv", scores=4, rejects=0, benchmarks=frozenset({"swebench_bash_only"}),
             warnings=("using '% Resolved'",), spots=(
                 S(model="gemini-3-pro-preview")(score=0.742, model_release_date="2025-11-18", evaluated_at="2025-11-18",
                                                 setting="agent=1.15.0; run=20251118_mini-v1.15.0_gemini-3-pro-preview-20251118",
                                                 stderr=None, table_version="", reported_by=None),
                 S(model="claude-opus-4-20250514")(score=0.676, evaluated_at="2025-08-02"),   # multi-line note
                 S(model="gpt-5-2025-08-07")(score=0.65, setting=Has("effort=medium; agent=1.7.0")),
             )),
        # the same rows under another file name: the schema (its SWE-Agent column) decides the benchmark
        Case("epoch/swe_bench_bash_only.csv", filename="benchmark_data.csv", scores=4,
             benchmarks=frozenset({"swebench_bash_only"}), id="fix:epoch/bash-only-by-schema"),
        # Another schema: `Model`, `Score` in percent with '%' signs, an `_external` member (third-party numbers,
        # rows typed from simple-evals' "Other Models (Reported)" GPQA column): its own table, reported_by external.
        Case("epoch/gpqa_diamond_external.csv", scores=4, rejects=0, benchmarks=frozenset({"gpqa_diamond"}),
             spots=(
                 S(model="Claude 3.5 Sonnet")(score=0.594, raw_value="59.4%", table_version="external",
                                              reported_by="external", model_release_date="2024-06-20"),
                 S(model="Gemini 1.5 Flash")(score=0.386),
             )),
        snap("epoch/epoch_epoch_capabilities_index_2026-03-12.csv", 283, rejects=0, spots=(
            S(benchmark="epoch_capabilities_index", model="claude-3-5-sonnet-20240620", setting="")(score=130.0),)),
        snap("epoch/epoch_epoch_capabilities_index_2026-04-19.csv", 348, rejects=0),
        snap("epoch/epoch_gpqa_diamond_2026-04-19.csv", 157, rejects=0),
        snap("epoch/epoch_otis_mock_aime_2024_2025_2026-04-19.csv", 130, rejects=0, spots=(
            S(benchmark="otis_mock_aime_2024_2025", model="o3-2025-04-16")(score=0.8388888888888889),)),
        snap("epoch/epoch_swe_bench_verified_2026-03-09.csv", 24, rejects=0),
        snap("epoch/epoch_swe_bench_verified_2026-04-19.csv", 25, rejects=0, spots=(
            S(benchmark="swebench_verified", model="gpt-5.3-codex", setting="effort=high; run=6w5buMbgeEqtRoE55cLZVv")(
                score=0.7479338842975206),)),
    )

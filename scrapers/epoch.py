"""Epoch AI Benchmarking Hub: `benchmark_data.zip`, or one of its CSVs, read by declaration.

The zip holds one CSV per benchmark, each with its own schema. Nothing about a member is guessed:
`scrapers/epoch_members.csv` (data, one row per member file name) declares its benchmark id, its
model column (and a fallback name column for rows Epoch left without a `Model version`: a fallback
`Agent` column names an agent system, tag `System: agent`, `AGENT_COLUMNS`), its score
column and unit, its uncertainty columns, its test-set size where known, its date columns, the
columns that make a row's setting, its record-id column, and whether it is Epoch's own run or a
number Epoch copied from elsewhere (`external`). The declaration's columns:

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

A zip member without a declaration (a later hub's new benchmark) is not read: named in a warning
and in `meta["undeclared"]` (`benchwatch status` lists it); the declared members still ingest. A
declared column missing from a member fails that member: a warning naming member and columns, the
member in `meta["failed"]`; the others still ingest. A single CSV (ingested from disk) is a member
named by its file name (`gpqa_diamond.csv`, or a snapshot copy `epoch_<member>_<YYYY-MM-DD>.csv`)
and read through the same declaration; an undeclared name or a missing declared column is an error.

`Model version` encodes effort / thinking budget (`_high`, `_32K`): the suffix is a setting of the
model, not another model (registry/README.md), so it moves to `setting` (`effort=high; run=<id>`)
and the model name is the bare version. Quoted fields contain newlines: read with a real CSV parser.
Members unpack in chunks under one cap for the whole archive, whatever their compression method
(`_member`).
"""

from __future__ import annotations

import bz2
import csv
import io
import logging
import lzma
import re
import struct
import zipfile
import zlib
from copy import copy
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from pathlib import Path, PurePosixPath
from typing import Any, Mapping

import numpy as np
import pandas as pd

from common.naming import NamingRules
from scrapers._cells import number_cells, raw_text, stated_models
from scrapers.base import ParsedSnapshot, Scraper
from scrapers.normalize import METRIC_RANGES, arxiv_month_end, clean_name, is_missing, parse_date
from scrapers.cases import Case, Has, S, snap
from scrapers import http

log = logging.getLogger("benchwatch.scrapers.epoch")

MEMBERS_FILE = Path(__file__).with_name("epoch_members.csv")
EXTERNAL = "external"          # table_version and reported_by of an external member
# The hub's column of who made each model (every member has it; optional: read where present)
ORGANIZATION = "Organization"
NOT_READ = "not_read"
# A fallback name column that names an agent (OSWorld's `Agent`): a row Epoch left without a
# `Model version` is then an agent system whose model the hub does not name (`AGENT_TAG`, matched
# by NAMING's system_tag), never a model run; a row with a Model version is that model's run.
AGENT_COLUMNS = frozenset({"Agent"})
AGENT_TAG = "System: agent"
# OpenAI's API models as the copied papers name them (a method over one is a system on it: NAMING)
API_MODELS = r"ChatGPT|GPT-3|GPT-4"
# unit -> (metric kind, factor to the stored value)
UNITS: dict[str, tuple[str, float]] = {
    "proportion": ("proportion", 1.0), "percent": ("proportion", 0.01), "elo": ("elo", 1.0),
    "minutes": ("minutes", 1.0), "score_10": ("score_10", 1.0), "index": ("index", 1.0),
    "cost_usd": ("cost_usd", 1.0),
}
STDERR_UNITS = {"": None, "percent": 0.01}
_CHUNK = 1024 * 1024
_SNAPSHOT_NAME = re.compile(r"epoch_(.+)_\d{4}-\d{2}-\d{2}")
_ID = re.compile(r"[a-z0-9_]+")
_PLUS_MINUS = re.compile(r"^\s*=?\s*\+\s*(\d+(?:\.\d+)?)\s*/\s*-\s*(\d+(?:\.\d+)?)\s*$")

# `_high`, `_xhigh`, `_minimal`, `_unknown`, `_32K`, `_16k` at the end of a model version: effort / thinking budget.
EFFORT_SUFFIX = r"_((?:x?high|medium|low|minimal|max|none|unknown)|\d+[kK])$"


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


class _Bounded:
    """A bzip2 or LZMA member's raw bytes decompressed at most `_CHUNK` at a time.

    zipfile passes these methods' whole input to the decompressor without a size limit, so one
    read of a few hundred compressed bytes can allocate gigabytes before any cap is checked;
    here every call to the decompressor names `max_length`."""

    def __init__(self, raw: Any, method: int):
        self.raw = raw
        self.method = method
        self.dec: Any = bz2.BZ2Decompressor() if method == zipfile.ZIP_BZIP2 else None

    def _lzma(self) -> Any:
        head = self.raw.read(4)
        if len(head) < 4:
            raise EOFError("LZMA member shorter than its header")
        size = struct.unpack("<H", head[2:4])[0]
        props = self.raw.read(size)
        filters = [lzma._decode_filter_properties(lzma.FILTER_LZMA1, props)]   # type: ignore[attr-defined]
        return lzma.LZMADecompressor(lzma.FORMAT_RAW, filters=filters)

    def read(self, n: int) -> bytes:
        if self.dec is None:
            self.dec = self._lzma()
        while not self.dec.eof:
            data = self.raw.read(_CHUNK) if self.dec.needs_input else b""
            if self.dec.needs_input and not data:
                return b""           # the raw stream ended: zipfile's own checks saw its size
            out = self.dec.decompress(data, max_length=n)
            if out:
                return bytes(out)
        return b""


class EpochScraper(Scraper):
    name = "epoch"
    # `_thinking` is a setting (Epoch's effort column is already `setting`); a trailing (<N>K thinking)
    # budget is one of the rules every source shares (common.naming), read as `thinking=<N>k`. The
    # external members' fallback names (papers, HELM, OSWorld) write the prompt's shots and an
    # agent's step budget into the name: `QWEN-CHAT 7B (8-shot)`, `opencua-32b (100 steps)`
    # The copied ScienceQA board names prompting methods and tool frameworks over a model:
    # `CoT GPT-3 (AE)`, `DDCoT (ChatGPT)`, `Chameleon (GPT-4)`. Over OpenAI's API models (weights only
    # OpenAI holds) the method can only prompt the model: a system on it (`API_MODELS`). Over open
    # weights the same names are fine-tunes (MM-CoT's T5, UnifiedQA with rationales): models.
    NAMING = NamingRules(variants=((r"_(thinking)$", "effort"),
                                   (r"\s*\((\d+|zero|one|few)-shot\)$", "shots"),
                                   (r"\s*\((\d+)\s+steps\)$", "steps")),
                         system_tag=r"(^|;)\s*System:\s*agent\b",
                         system_over=(rf"^CoT\s+({API_MODELS})(?![\w.-])",
                                      rf"^(?:DDCoT|Chameleon)\s*\(({API_MODELS})\)$"))
    page = "https://epoch.ai/benchmarks"
    urls = ("https://epoch.ai/data/benchmark_data.zip",)
    min_rows = 20   # the smallest CSV (swe_bench_verified, 2026-03) has 24 runs
    parser_version = 4   # 2: every member read by its declaration (scrapers/epoch_members.csv); 3: agents tagged;
    #                      4: numbers from papers dated by their arXiv month

    def parse(self, content: bytes, *, fetched_at: datetime, aux: Mapping[str, bytes] | None = None,
              filename: str | None = None) -> ParsedSnapshot:
        self.reject_html(content)
        parsed = ParsedSnapshot(source=self.name)
        if content[:4] == b"PK\x03\x04":
            parsed.scores = self._zip(content, parsed)
            return parsed
        if not filename:
            raise self.error("a single Epoch CSV does not name its benchmark; pass its file name "
                             "(e.g. gpqa_diamond.csv)")
        name = member_name(filename)
        decl = members().get(name)
        if decl is None:
            raise self.error(f"{filename}: {name!r} is not a declared Epoch member (declare it in "
                             "scrapers/epoch_members.csv: its columns are never guessed)")
        if decl.unit == NOT_READ:
            raise self.error(f"{filename}: declared not read ({decl.notes})")
        df = self.csv(content, where=filename)
        missing = self._missing(decl, df)
        if missing:
            raise self.error(missing)
        parsed.scores = self._frame(df, decl, where=filename, parsed=parsed)
        return parsed

    def _zip(self, content: bytes, parsed: ParsedSnapshot) -> pd.DataFrame:
        try:
            archive = zipfile.ZipFile(io.BytesIO(content))
        except zipfile.BadZipFile as exc:
            raise self.error(f"benchmark_data.zip is not a valid zip: {exc}") from exc
        declared = members()
        frames: list[pd.DataFrame] = []
        undeclared: list[str] = []
        failed: list[str] = []
        not_read: list[str] = []
        budget = [_unpacked_cap()]      # what the members may still unpack to, together
        with archive:
            names = [m for m in archive.namelist() if m.lower().endswith(".csv") and not m.startswith("__MACOSX")]
            for member in names:
                decl = declared.get(member_name(member))
                if decl is None:
                    undeclared.append(member)
                    continue
                if decl.unit == NOT_READ:
                    not_read.append(member)
                    continue
                # one broken member must not hide the other benchmarks: a warning, not an error
                df = self.csv(self._member(archive, member, budget), where=member, fatal=False, parsed=parsed)
                missing = None if df is None else self._missing(decl, df)
                if df is None or missing:
                    if missing:
                        self.warn(parsed, missing + " (member not read)")
                    failed.append(member)
                    continue
                try:
                    frames.append(self._frame(df, decl, where=member, parsed=parsed))
                except (ValueError, TypeError, KeyError, AttributeError) as exc:   # one member, not the hub
                    self.warn(parsed, f"{member}: not readable as declared ({type(exc).__name__}: {exc}); "
                                      "member not read")
                    failed.append(member)
        parsed.meta.update(members=len(names), undeclared=undeclared, failed=failed, not_read=not_read)
        if undeclared:
            self.warn(parsed, f"{len(undeclared)} undeclared zip member(s) not read (declare them in "
                              f"scrapers/epoch_members.csv; columns are never guessed): {undeclared}")
        if not_read:
            self.warn(parsed, f"{len(not_read)} zip member(s) declared not read: {not_read}")
        if not frames:
            raise self.error(f"no declared member of benchmark_data.zip could be read ({len(names)} CSVs; "
                             f"undeclared {undeclared}, failed {failed})")
        return pd.concat(frames, ignore_index=True)

    def _member(self, archive: zipfile.ZipFile, member: str, budget: list[int]) -> bytes:
        """A member's bytes, unpacked in chunks and never beyond what is left of the cap (a small
        zip can hold a member of gigabytes: its declared size is not trusted). ScrapeError past it.

        Stored and deflated members are read through zipfile (its deflate reads are bounded);
        bzip2 and LZMA members are read raw and decompressed here with a bounded output per call
        (`_Bounded`), their CRC checked as zipfile would."""
        chunks, total = [], 0
        try:
            info = archive.getinfo(member)
            if info.compress_type in (zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA):
                raw_info = copy(info)
                raw_info.compress_type = zipfile.ZIP_STORED
                raw_info.file_size = info.compress_size
                raw_info.CRC = None          # type: ignore[assignment]  # the raw bytes have no CRC of their own
                opened: Any = archive.open(raw_info)
                fh: Any = _Bounded(opened, info.compress_type)
            else:
                opened = fh = archive.open(member)
            crc = 0
            with opened:
                while chunk := fh.read(min(_CHUNK, budget[0] - total + 1)):
                    total += len(chunk)
                    if total > budget[0]:
                        raise self.error(f"benchmark_data.zip: {member} unpacks to more than the "
                                         f"{_unpacked_cap() // (1024 * 1024)} MB cap of the whole archive "
                                         "(refused, as a response over the cap is)")
                    crc = zlib.crc32(chunk, crc)
                    chunks.append(chunk)
            if fh is not opened and (crc != info.CRC or total != info.file_size):
                raise zipfile.BadZipFile(f"bad CRC or size of the unpacked member ({total} bytes, "
                                         f"{info.file_size} declared)")
        except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError, OSError, lzma.LZMAError,
                KeyError) as exc:
            raise self.error(f"benchmark_data.zip: {member}: {exc}") from exc
        budget[0] -= total
        return b"".join(chunks)

    @staticmethod
    def _dated_by_report(out: pd.DataFrame, links: pd.Series, *, where: str, parsed: ParsedSnapshot) -> pd.Series:
        """Each row's evaluation date, where it has none of its own, from the report its number comes
        from: an arXiv identifier states the month the paper was first submitted, and the number
        was published by that month's last day (an upper bound, as a first observation is, and
        years closer). A row whose model was released after that day is a later revision's number
        (or another model under the name): left undated. Leaderboard links state no date."""
        own = out["evaluated_at"] if "evaluated_at" in out.columns else pd.Series(None, index=out.index, dtype="object")
        paper = links.map(arxiv_month_end)
        released = out["model_release_date"] if "model_release_date" in out.columns else pd.Series(None, index=out.index)
        later = pd.to_datetime(released).gt(pd.to_datetime(paper))
        use = own.isna() & paper.notna() & ~later
        parsed.meta["dated_by_report"] = parsed.meta.get("dated_by_report", 0) + int(use.sum())
        if (own.isna() & paper.notna() & later).any():
            log.info("[epoch] %s: %d row(s) of a paper whose model was released after the paper's month: "
                     "not dated by the paper", where, int((own.isna() & paper.notna() & later).sum()))
        return own.where(~use, paper).astype("object")

    @staticmethod
    def _missing(decl: Member, df: pd.DataFrame) -> str | None:
        """The error line of a member without one of its declared columns, else None."""
        header = {str(c).strip() for c in df.columns}
        gone = [c for c in decl.columns() if c not in header]
        if not gone:
            return None
        return (f"{decl.member}.csv lacks its declared column(s) {gone} (scrapers/epoch_members.csv); "
                f"columns found: {list(df.columns)}")

    def _frame(self, df: pd.DataFrame, decl: Member, *, where: str, parsed: ParsedSnapshot) -> pd.DataFrame:
        """One member's rows, read as declared."""
        df = df.rename(columns=lambda c: str(c).strip())
        metric, factor = UNITS[decl.unit]
        blank = df[decl.score].map(is_missing)
        if blank.any():
            self.warn(parsed, f"{where}: {int(blank.sum())} of {len(df)} row(s) have no {decl.score} yet; skipped")
        df = df[~blank]
        number, bad = number_cells(df[decl.score], index=df.index)
        if bad:
            self.warn(parsed, f"{where}: unparseable {decl.score} value(s) {bad[:5]} (rows rejected)")
        score = number * factor
        lo, hi = METRIC_RANGES[metric]
        outside = int(((score < lo) | (score > hi)).sum())
        if outside:
            self.warn(parsed, f"{where}: {outside} of {len(score)} {decl.score} value(s) outside the declared unit "
                              f"{decl.unit!r} ({metric} in [{lo:g}, {hi:g}]); rows rejected: is the declaration right?")

        names = df[decl.model].map(clean_name)
        by_agent = pd.Series(False, index=df.index)
        if decl.model_fallback:
            if decl.model_fallback in AGENT_COLUMNS:
                by_agent = names.isna() & df[decl.model_fallback].map(clean_name).notna()
            names = names.where(names.notna(), df[decl.model_fallback].map(clean_name))
        names = names.astype("object")
        effort = names.str.extract(EFFORT_SUFFIX, expand=False)
        out = pd.DataFrame({
            "benchmark": decl.benchmark,
            "model": names.str.replace(EFFORT_SUFFIX, "", regex=True),
            "score": score,
            "raw_value": raw_text(df[decl.score]),
            "metric": metric,
            "model_tag": by_agent.map({True: AGENT_TAG, False: None}).astype("object"),
        }, index=df.index)
        parts = [("effort=" + effort).fillna("")]
        for key, column in decl.setting:
            cells = df[column].map(lambda v: "" if is_missing(v) else " ".join(str(v).split()))
            parts.append((key + "=" + cells).where(cells != "", ""))
        if decl.run:
            cells = df[decl.run].map(lambda v: "" if is_missing(v) else str(v).strip())
            parts.append(("run=" + cells).where(cells != "", ""))
        out["setting"] = ["; ".join(p for p in row if p) for row in zip(*parts)]
        if decl.stderr:
            se_factor = STDERR_UNITS[decl.stderr_unit] or factor
            out["stderr"] = number_cells(df[decl.stderr], index=df.index)[0] * se_factor
        if decl.ci_low:
            out["ci_low"] = number_cells(df[decl.ci_low], index=df.index)[0] * factor
            out["ci_high"] = number_cells(df[decl.ci_high], index=df.index)[0] * factor
        if decl.ci_pm:
            out["ci_low"], out["ci_high"], bad_ci = plus_minus(number, df[decl.ci_pm])
            out["ci_low"], out["ci_high"] = out["ci_low"] * factor, out["ci_high"] * factor
            if bad_ci:
                self.warn(parsed, f"{where}: {decl.ci_pm} cell(s) not written +a/-b {bad_ci[:5]}; interval left NULL")
        if decl.n_items is not None:
            out["n_items"] = decl.n_items
        elif decl.n_column:
            out["n_items"] = number_cells(df[decl.n_column], index=df.index)[0]
        if decl.release_date:
            out["model_release_date"] = df[decl.release_date].map(parse_date)
        if ORGANIZATION in df.columns:   # who made each model, where the hub says (view learned_models)
            parsed.models = pd.concat([parsed.models, stated_models(out["model"], orgs=df[ORGANIZATION])],
                                      ignore_index=True).drop_duplicates("model", ignore_index=True)
        if decl.evaluated_at:
            out["evaluated_at"] = df[decl.evaluated_at].map(parse_date)
        if decl.report:
            out["evaluated_at"] = self._dated_by_report(out, df[decl.report], where=where, parsed=parsed)
        if decl.external:
            out["table_version"] = EXTERNAL
            out["reported_by"] = EXTERNAL
        return out.reset_index(drop=True)

    # the declared cases (scrapers/cases.py), run by tests/unit/test_scraper_cases.py
    CASES = (
        Case("epoch/gpqa_diamond.csv", scores=4, benchmarks=frozenset({"gpqa_diamond"}), spots=(
            S(model="gpt-5.4-mini-2026-03-17")(       # `_high` is an effort setting, not part of the model
                score=0.8358585858585859, stderr=0.022274469189069883, model_release_date="2026-03-17",
                evaluated_at="2026-04-15 14:03:19", setting="effort=high; run=AQF46S9hBhosKPEMy3fyB9"),
            S(model="glm-4.7")(score=0.8333333333333334),     # the row after a multi-line note
            S(model="grok-4-0709")(evaluated_at=None),
            S("models", model="glm-4.7")(org="Z.ai (Zhipu AI)", release_date=None),   # the hub's Organization
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
        # Epoch's SWE-bench bash-only schema (issue 20): the header as Epoch publishes it (member
        # `swe_bench_bash.csv`), rows typed from the SWE-bench bash-only board. `% Resolved` is a share; the
        # member is swebench.com's board copied by Epoch, so an external report (before: stored as Epoch's own).
        Case("epoch/swe_bench_bash_only.csv", filename="swe_bench_bash.csv", scores=4, rejects=0,
             benchmarks=frozenset({"swebench_bash_only"}), spots=(
                 S(model="gemini-3-pro-preview")(score=0.742, model_release_date="2025-11-18", evaluated_at="2025-11-18",
                                                 setting="agent=1.15.0; run=20251118_mini-v1.15.0_gemini-3-pro-preview-20251118",
                                                 stderr=None, table_version="external", reported_by="external"),
                 S(model="claude-opus-4-20250514")(score=0.676, evaluated_at="2025-08-02"),   # multi-line note
                 S(model="gpt-5-2025-08-07")(score=0.65, setting=Has("effort=medium; agent=1.7.0")),
             )),
        # one member of each declared unit, headers as the hub publishes them, rows typed for the case
        Case("epoch/hub/hle_external.csv", scores=3, rejects=0, benchmarks=frozenset({"humanitys_last_exam"}), spots=(
            # the standard error under another name (`Accuracy Standard Error`), in the score's unit
            S(model="gemini-3-pro-preview")(score=0.3752, stderr=0.019, metric="proportion", table_version="external",
                                            reported_by="external", setting="run=recA1"),
            S(model="claude-opus-4-6", setting="effort=max; run=recA2")(score=0.3444, stderr=0.0186),
        )),
        Case("epoch/hub/aider_polyglot_external.csv", scores=3, rejects=0, benchmarks=frozenset({"aider_polyglot"}),
             spots=(S(model="gpt-5-2025-08-07", setting="effort=high; edit_format=diff; run=recB1")(
                 score=0.88, raw_value="88.0", metric="proportion"),
                 S(model="deepseek-chat-v3")(score=0.036),)),        # a low percent stays a percent
        # OSWorld's board: a row Epoch left without a Model version is named by its agent, an agent
        # system whose model the hub does not name (tag `System: agent`); a model's run keeps its name
        Case("epoch/hub/os_world_external.csv", scores=3, rejects=0, benchmarks=frozenset({"osworld"}), spots=(
            S(model="acme-agent-1 (50 steps)")(score=0.612, model_tag="System: agent", table_version="external"),
            S(model="Zed-Operator-7B (100 steps)")(model_tag="System: agent"),
            S(model="claude-sonnet-4-5-20250929")(score=0.604, model_tag=None,
                                                  setting="agent=claude-sonnet-4-5-20250929 (100 steps)"),
        )),
        Case("epoch/hub/webdev_arena_external.csv", scores=2, rejects=1, benchmarks=frozenset({"webdev_arena"}), spots=(
                 S(model="claude-opus-4-5-20251101")(score=1512.0, metric="elo", ci_low=1501.0, ci_high=1523.0,
                                                     setting="effort=32K; run=recC1", evaluated_at="2026-01-05"),
                 S(model="gpt-5.2-2025-12-11")(score=1480.0, ci_low=None, ci_high=None),   # `n/a` interval
             )),
        Case("epoch/hub/metr_time_horizons_external.csv", scores=3, rejects=0,
             benchmarks=frozenset({"metr_time_horizon"}), spots=(
                 S(model="claude-opus-4-5-20251101")(score=288.904952, metric="minutes", ci_low=108.873592,
                                                     ci_high=1225.190511, stderr=None),
                 S(model="gpt2-xl")(score=0.039792, ci_low=0.001788),
             )),
        Case("epoch/hub/lech_mazur_writing_external.csv", scores=2, rejects=0,
             benchmarks=frozenset({"lech_mazur_writing"}), spots=(
                 S(model="o3-2025-04-16")(score=8.39, metric="score_10", setting="effort=medium; run=recE1"),)),
        # numbers Epoch copied from papers: a row without a date of its own is dated by its report's arXiv
        # identifier (the last day of the paper's month), unless its model was released after that month
        Case("epoch/hub/mmlu_papers_external.csv", filename="mmlu_external.csv", scores=5, rejects=0,
             benchmarks=frozenset({"mmlu"}), spots=(
                 S(model="Baichuan-2-13B-Base")(evaluated_at="2023-09-30", model_release_date="2023-09-06"),
                 S(model="AquilaChat2 34B")(evaluated_at="2024-03-31"),           # a pdf link with its version
                 S(model="Yi-9B")(evaluated_at=None),                             # released after the paper's month
                 S(model="amazon.nova-lite-v1:0")(evaluated_at=None),             # a leaderboard: no date stated
                 S(model="Llama-2-70b-hf")(evaluated_at="2023-07-31"),
             )),
        Case("epoch/hub/mmlu_external.csv", scores=3, rejects=1, benchmarks=frozenset({"mmlu"}), spots=(
            S(model="amazon.nova-lite-v1:0", setting="shots=5; run=recF1")(score=0.77),
            S(model="amazon.nova-lite-v1:0", setting="shots=0; run=recF2")(score=0.75),   # the cell was "0\n"
            S(model="Palmyra X (43B)")(score=0.609),          # no Model version: named by `Name`
        )),
        # a member whose declared column is gone is an error naming member and column (in a zip: that
        # member is skipped, tests/integration/test_epoch_hub.py); an undeclared name is never guessed
        # the whole hub as served (48 members): counts recomputed with a plain csv reading of each member
        # from its declaration (tests/integration/test_epoch_hub.py); 27 rows without any model name are rejected
        snap("epoch/epoch_2026-03-12.zip", 3610, rejects=27, meta={"members": 48, "undeclared": [], "failed": [],
                                                                 "not_read": ["geobench_external.csv"]}, spots=(
            S(benchmark="metr_time_horizon", model="claude-opus-4-5-20251101")(
                score=288.904952, metric="minutes", ci_low=108.873592, ci_high=1225.190511, table_version="external",
                setting="effort=16K; run=recPjuZumaNjbylqU"),
            S(benchmark="lech_mazur_writing", model="o3-2025-04-16")(score=8.39, metric="score_10"),
            S(benchmark="webdev_arena", model="claude-opus-4-5-20251101", setting="effort=32K; run=recQLSl4DM4fz7VAt")(
                score=1512.0, metric="elo", ci_low=1501.0, ci_high=1523.0),
            S(benchmark="humanitys_last_exam", model="gemini-3-pro-preview")(score=0.3752, stderr=0.019),
            S(benchmark="terminal_bench_2", model="gpt-5.3-codex")(score=0.751, stderr=0.024,
                                                                  setting="agent=Simple Codex; run=recQGdQu18B2G90mW"),
            S(benchmark="apex_agents", model="claude-opus-4-6")(score=0.298, stderr=0.036),
            S(benchmark="livebench", model="gemini-2.5-pro-exp-03-25")(score=0.8235, reported_by="external"),
            S(benchmark="mmlu", model="amazon.nova-lite-v1:0")(score=0.77, setting="shots=5; run=reccNX56mRCIhx9ok"),
            S(benchmark="gpqa_diamond", model="gemini-3.1-pro-preview")(score=0.941, table_version=""),
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


def _unpacked_cap() -> int:
    """The most the zip's members may unpack to together: the HTTP layer's response cap (read at
    call time, so one setting bounds both)."""
    return http.DEFAULT_MAX_BYTES

"""Epoch AI Benchmarking Hub: `benchmark_data.zip`, or one of its CSVs, read by declaration.

The zip holds one CSV per benchmark, each with its own schema. Nothing about a member is guessed:
`scrapers/epoch_members.csv` (data, one row per member file name) declares its benchmark id, its
model column (and a fallback name column for rows Epoch left without a `Model version`: a fallback
`Agent` column names an agent system, tag `System: agent`, `AGENT_COLUMNS`), its score
column and unit, its uncertainty columns, its test-set size where known, its date columns, the
columns that make a row's setting, its record-id column, and whether it is Epoch's own run or a
number Epoch copied from elsewhere (`external`). The declarations' columns and their checks are
`scrapers/_epoch_members.py`; bounded unpacking of a member `scrapers/_zip_member.py`.

A zip member without a declaration (a later hub's new benchmark) is not read: named in a warning
and in `meta["undeclared"]` (`benchwatch status` lists it); the declared members still ingest. A
declared column missing from a member fails that member: a warning naming member and columns, the
member in `meta["failed"]`; the others still ingest. A single CSV (ingested from disk) is a member
named by its file name (`gpqa_diamond.csv`, or a snapshot copy `epoch_<member>_<YYYY-MM-DD>.csv`)
and read through the same declaration; an undeclared name or a missing declared column is an error.

A copied row Epoch left without a `Model version` is named by its report's name (`Name`); where
another row of the hub gives that name from the same report exactly one version, the row is that
version (`_named_by_report`, `meta["named_by_report"]`): the hub says which model the report meant.

`Model version` encodes effort / thinking budget (`_high`, `_32K`): the suffix is a setting of the
model, not another model (registry/README.md), so it moves to `setting` (`effort=high; run=<id>`)
and the model name is the bare version. Quoted fields contain newlines: read with a real CSV parser.
Members unpack in chunks under one cap for the whole archive, whatever their compression method
(`_member`).
"""

from __future__ import annotations

import io
import logging
import lzma
import zipfile
import zlib
from copy import copy
from datetime import datetime
from typing import Any, Mapping

import pandas as pd

from common.naming import NamingRules
from scrapers._cells import number_cells, raw_text, stated_models
from scrapers.base import ParsedSnapshot, Scraper
from scrapers.normalize import METRIC_RANGES, arxiv_month_end, clean_name, is_missing, parse_date, report_key
from scrapers.cases import Case, Has, S, snap
from scrapers import http
from scrapers._epoch_members import (EXTERNAL, MEMBERS_FILE, NOT_READ, STDERR_UNITS, UNITS, Member,  # noqa: F401
                                     load_members, member_name, members, plus_minus)
from scrapers._zip_member import CHUNK as _CHUNK, Bounded

log = logging.getLogger("benchwatch.scrapers.epoch")

# The hub's column of who made each model (every member has it; optional: read where present)
ORGANIZATION = "Organization"
# A fallback name column that names an agent (OSWorld's `Agent`): a row Epoch left without a
# `Model version` is then an agent system whose model the hub does not name (`AGENT_TAG`, matched
# by NAMING's system_tag), never a model run; a row with a Model version is that model's run.
AGENT_COLUMNS = frozenset({"Agent"})
AGENT_TAG = "System: agent"
# OpenAI's API models as the copied papers name them (a method over one is a system on it: NAMING)
API_MODELS = r"ChatGPT|GPT-3|GPT-4"

# columns `_frame` adds for `_named_by_report` (dropped before a frame leaves the scraper)
_LABEL, _REPORT, _VERSIONED = "_report_name", "_report", "_versioned"
# `_high`, `_xhigh`, `_minimal`, `_unknown`, `_32K`, `_16k` at the end of a model version: effort / thinking budget.
EFFORT_SUFFIX = r"_((?:x?high|medium|low|minimal|max|none|unknown)|\d+[kK])$"





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
        parsed.scores = self._named_by_report(self._frame(df, decl, where=filename, parsed=parsed), parsed)
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
        return self._named_by_report(pd.concat(frames, ignore_index=True), parsed)

    @staticmethod
    def _named_by_report(rows: pd.DataFrame, parsed: ParsedSnapshot) -> pd.DataFrame:
        """Rows Epoch left without a `Model version` (named by the report's own name) take the
        version that another row of the hub gives the same name from the same report (`report_key`:
        one paper or page), when that is exactly one version: the hub states which model the
        report's name means. A name no row of that report versions, or versions twice (`GPT-4`
        as 0314 and 0613), keeps its own name; another report's version is never borrowed (one
        name meant other snapshots in other papers)."""
        known = rows[rows[_VERSIONED] & rows[_LABEL].notna() & rows[_REPORT].notna()]
        versions = known.groupby([_LABEL, _REPORT])["model"].agg(lambda m: sorted(set(m)))
        unique = {key: v[0] for key, v in versions.items() if len(v) == 1}
        todo = ~rows[_VERSIONED] & rows[_LABEL].notna() & rows[_REPORT].notna()
        found = pd.Series([unique.get((label, report)) for label, report in zip(rows[_LABEL], rows[_REPORT])],
                          index=rows.index, dtype="object").where(todo, None)
        if found.notna().any():
            parsed.meta["named_by_report"] = int(found.notna().sum())
            rows = rows.assign(model=found.where(found.notna(), rows["model"]))
        return rows.drop(columns=[_LABEL, _REPORT, _VERSIONED])

    def _member(self, archive: zipfile.ZipFile, member: str, budget: list[int]) -> bytes:
        """A member's bytes, unpacked in chunks and never beyond what is left of the cap (a small
        zip can hold a member of gigabytes: its declared size is not trusted). ScrapeError past it.

        Stored and deflated members are read through zipfile (its deflate reads are bounded);
        bzip2 and LZMA members are read raw and decompressed here with a bounded output per call
        (`scrapers._zip_member.Bounded`), their CRC checked as zipfile would."""
        chunks, total = [], 0
        try:
            info = archive.getinfo(member)
            if info.compress_type in (zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA):
                raw_info = copy(info)
                raw_info.compress_type = zipfile.ZIP_STORED
                raw_info.file_size = info.compress_size
                raw_info.CRC = None          # type: ignore[assignment]  # the raw bytes have no CRC of their own
                opened: Any = archive.open(raw_info)
                fh: Any = Bounded(opened, info.compress_type)
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
        if decl.model_fallback and decl.model_fallback not in AGENT_COLUMNS and decl.report:
            # what `_named_by_report` joins on: the row's name in its report, the report, its own version
            labels = df[decl.model_fallback].map(clean_name).astype("object")
            reports = df[decl.report].map(report_key).astype("object")
            versions = df[decl.model].map(clean_name).notna()
        else:
            labels = reports = pd.Series(None, index=df.index, dtype="object")
            versions = pd.Series(True, index=df.index)
        effort = names.str.extract(EFFORT_SUFFIX, expand=False)
        out = pd.DataFrame({
            "benchmark": decl.benchmark,
            "model": names.str.replace(EFFORT_SUFFIX, "", regex=True),
            "score": score,
            "raw_value": raw_text(df[decl.score]),
            "metric": metric,
            "model_tag": by_agent.map({True: AGENT_TAG, False: None}).astype("object"),
            _LABEL: labels, _REPORT: reports, _VERSIONED: versions,
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

"""Berkeley Function Calling Leaderboard: `data_overall.csv` (and its predecessor `data.csv`).

Columns drift between versions (33 -> 32 -> 27 -> 36 in data_overall.csv; Exec columns
dropped, Web Search / Memory / Format Sensitivity added), so columns are classified by name:
`Overall Acc` -> `bfcl_overall`; every other percent column -> `bfcl_<column slug>` (e.g.
`Live Acc` -> `bfcl_live_acc`); `Cost ($ Per 1k Function Calls)` / `Total Cost ($)` ->
`bfcl_<slug>` with metric cost_usd; rank, link, organization, license, latency and format
sensitivity (a spread across prompt formats, not an accuracy) are not scores. Scores are
percent strings (`"62.19%"`), `N/A` = missing (no row).

Mode: model names end with the evaluation mode, `(FC)`, `(Prompt)`, `(FC Any)`,
`(Prompt + Thinking)`, `(FC) (Original)`. One model evaluated in two modes is two
leaderboard entries with different scores, and the mode is *how* it was evaluated, so the
mode goes to `setting` and `model` is the bare name (`GPT-4o-2024-08-06`, setting `FC`);
this keeps the model name mappable through aliases. Names without a mode have setting ''.

Malformed file: `data.csv` of 2024-03-20 has a 16-name header
(`Rank, Overall Acc, Model, Organization, License, ...`) while every row has 17 fields
(`rank, model, link, org, license, overall, ...`). When the rows' field count differs from
the header's, the header is realigned by cell type, never by position: each header name
has an expected type (number, text, URL, percent), fields are typed from their values, and
names are assigned to fields of their type in order; one unnamed URL field becomes
`Model Link`. If the type counts do not match exactly, it is a ScrapeError.
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import datetime
from typing import Mapping

import pandas as pd

from scrapers._cells import number_cells, percent_cells, raw_text, stated_models
from scrapers.base import ParsedSnapshot, Scraper
from scrapers.normalize import clean_name, is_missing, slug
from scrapers.cases import Absent, Case, S, snap

IDENTITY = {"rank": "num", "model": "text", "model link": "url", "organization": "text", "license": "text"}
NOT_SCORES = re.compile(r"^(latency|format sensitivity)", re.I)
COST = re.compile(r"cost", re.I)
_MODE = re.compile(r"\s*\(((?:FC|Prompt|Original)[^()]*)\)\s*$", re.I)
_PCT = re.compile(r"^-?\d+(?:\.\d+)?\s*%$")
_URL = re.compile(r"^https?://", re.I)


def split_mode(name: str) -> tuple[str, str]:
    """'Command-R-Plus (FC) (Original)' -> ('Command-R-Plus', 'FC Original')."""
    modes: list[str] = []
    while True:
        m = _MODE.search(name)
        if not m:
            break
        modes.insert(0, m.group(1).strip())
        name = name[: m.start()]
    return name.strip(), " ".join(modes)


def _cell_type(value: str) -> str | None:
    v = value.strip()
    if is_missing(v):
        return None
    if _URL.match(v):
        return "url"
    if _PCT.match(v):
        return "pct"
    try:
        float(v)
        return "num"
    except ValueError:
        return "text"


def _expected_type(name: str) -> str:
    key = name.strip().lower()
    if key in IDENTITY:
        return IDENTITY[key]
    if COST.search(key) or NOT_SCORES.match(key):
        return "num"
    return "pct"


class BfclScraper(Scraper):
    name = "bfcl"
    page = "https://gorilla.cs.berkeley.edu/leaderboard.html"
    urls = ("https://gorilla.cs.berkeley.edu/data_overall.csv",)
    min_rows = 50   # the smallest copy (data.csv 2024-03-20, 21 models) has 252 scores
    # The cost column is filled for a varying share of the models (62, then 25, then 40 between
    # 2024-10 and 2024-12): a drop of up to half of a table is the board's own doing, not a cut file.
    shrink_max_drop = 0.5

    def parse(self, content: bytes, *, fetched_at: datetime, aux: Mapping[str, bytes] | None = None,
              filename: str | None = None) -> ParsedSnapshot:
        rows = self.csv_rows(content)
        parsed = ParsedSnapshot(source=self.name)
        if len(rows) < 2:
            raise self.error("CSV has no data rows")
        header, body = [h.strip() for h in rows[0]], rows[1:]
        body = self._consistent_rows(header, body, parsed)
        if len(body[0]) != len(header):
            header = self._realign(header, body, parsed)
        df = pd.DataFrame(body, columns=header)
        parsed.scores = self._scores(df, parsed)
        return parsed

    def _consistent_rows(self, header: list[str], body: list[list[str]], parsed: ParsedSnapshot) -> list[list[str]]:
        """Keep the rows with the dominant field count; the others go to rejects."""
        width = Counter(len(r) for r in body).most_common(1)[0][0]
        odd = [r for r in body if len(r) != width]
        if odd:
            self.warn(parsed, f"{len(odd)} row(s) with a field count other than {width} rejected")
            parsed.rejects = pd.DataFrame({"row": [",".join(r) for r in odd],
                                           "reason": f"row field count differs from the other rows ({width})"})
        return [r for r in body if len(r) == width]

    def _realign(self, header: list[str], body: list[list[str]], parsed: ParsedSnapshot) -> list[str]:
        width = len(body[0])
        field_types = []
        for j in range(width):
            kinds = Counter(t for t in (_cell_type(r[j]) for r in body) if t)
            field_types.append(kinds.most_common(1)[0][0] if kinds else None)
        names_by_type: dict[str, list[str]] = {}
        for name in header:
            names_by_type.setdefault(_expected_type(name), []).append(name)
        fields_by_type: dict[str, list[int]] = {}
        for j, t in enumerate(field_types):
            fields_by_type.setdefault(t or "missing", []).append(j)
        if "url" not in names_by_type and len(fields_by_type.get("url", [])) == 1:
            names_by_type["url"] = ["Model Link"]
        counts_n = {t: len(v) for t, v in names_by_type.items()}
        counts_f = {t: len(v) for t, v in fields_by_type.items()}
        if counts_n != counts_f:
            raise self.error(f"header has {len(header)} names but rows have {width} fields, and the columns "
                             f"cannot be realigned by type (header {counts_n}, rows {counts_f})")
        new = [""] * width
        for t, idx in fields_by_type.items():
            for j, name in zip(idx, names_by_type[t]):
                new[j] = name
        self.warn(parsed, f"malformed CSV: header has {len(header)} names but rows have {width} fields; "
                          f"columns realigned by cell type as {new}")
        parsed.meta["realigned_header"] = new
        return new

    def _scores(self, df: pd.DataFrame, parsed: ParsedSnapshot) -> pd.DataFrame:
        by_lower = {c.lower(): c for c in df.columns}
        for required in ("model", "overall acc"):
            if required not in by_lower:
                raise self.error(f"no {required!r} column; found {list(df.columns)}")
        names = df[by_lower["model"]].map(lambda v: split_mode(clean_name(v) or ""))
        model = names.map(lambda t: t[0] or None)
        setting = names.map(lambda t: t[1])
        org_col, link_col = by_lower.get("organization"), by_lower.get("model link")
        parsed.models = stated_models(model, orgs=df[org_col] if org_col else None,
                                      links=df[link_col] if link_col else None)

        frames = []
        for col in df.columns:
            key = col.lower()
            if key in IDENTITY or NOT_SCORES.match(key):
                continue
            cells = df[col]
            keep = ~cells.map(is_missing)
            if not keep.any():
                continue
            if COST.search(key):
                values, bad = number_cells(cells[keep], index=cells.index[keep])
                bench, metric = f"bfcl_{slug(col)}", "cost_usd"
            else:
                if not cells[keep].str.contains("%", regex=False).any():
                    self.warn(parsed, f"column {col!r} has no percent values; not read as a score")
                    continue
                values, bad = percent_cells(cells[keep], index=cells.index[keep])
                bench = "bfcl_overall" if key == "overall acc" else f"bfcl_{slug(col)}"
                metric = "proportion"
            if bad:
                self.warn(parsed, f"column {col!r}: unparseable value(s) {bad[:5]} (rows rejected)")
            frames.append(pd.DataFrame({
                "benchmark": bench,
                "model": model[keep],
                "setting": setting[keep],
                "score": values,
                "raw_value": raw_text(cells[keep]),
                "metric": metric,
            }))
        if not frames:
            raise self.error("no score columns with values")
        return pd.concat(frames, ignore_index=True)

    # the declared cases (scrapers/cases.py), run by tests/unit/test_scraper_cases.py
    CASES = (
        Case("bfcl/data_overall_2024-10-21.csv", no_benchmark_like="latency|rank|license|organization|link",
             scores=4 * 24, spots=(   # 23 categories (composite all N/A) + overall + cost, no other N/A
                 S(benchmark="bfcl_overall", model="GPT-4o-2024-08-06")(score=0.6219, setting="FC", raw_value="62.19%"),
                 S(benchmark="bfcl_live_acc", model="GPT-4o-2024-08-06")(score=0.7543),
                 S(benchmark="bfcl_cost_per_1k_function_calls", model="GPT-4-turbo-2024-04-09")(score=19.49,
                                                                                               metric="cost_usd"),
                 S(benchmark="bfcl_overall", model="Command-R-Plus")(setting="FC Original"),
                 Absent({"benchmark": "bfcl_multi_turn_composite"}),       # all N/A
             )),
        Case("bfcl/data_overall_2025-12-16.csv", replay="data_overall.csv", no_benchmark_like="format_sensitivity", spots=(
            S(benchmark="bfcl_overall", model="BitAgent-Bounty-8B")(setting=""),
            S(benchmark="bfcl_overall", model="DeepSeek-V3.2-Exp")(setting="Prompt + Thinking"),
            S(benchmark="bfcl_total_cost", model="Claude-Opus-4-5-20251101")(score=86.55, metric="cost_usd"),
            S(benchmark="bfcl_web_search_acc", model="Claude-Opus-4-5-20251101")(score=0.845),
        )),
        Case("bfcl/data_v1v2_2024-08-14.csv", spots=(
            S(benchmark="bfcl_overall", model="Claude-3.5-Sonnet-20240620", setting="Prompt")(score=0.9053),
            S(benchmark="bfcl_cost_per_1k_function_calls", model="Functionary-Medium-v3.1")(score=85.52),
            S("models", model="Functionary-Medium-v3.1")(org="MeetKai"),     # the Organization column
        )),
        snap("bfcl/bfcl_data_overall_2024-10-21.csv", 1405, rejects=0, spots=(
            S(benchmark="bfcl_overall", model="GPT-4o-2024-08-06", setting="FC")(score=0.6219),)),
        snap("bfcl/bfcl_data_overall_2024-12-31.csv", 2087, rejects=0, spots=(
            S(benchmark="bfcl_overall", model="watt-tool-70B", setting="FC")(score=0.7424),)),
        snap("bfcl/bfcl_data_overall_2025-12-16.csv", 2834, rejects=0, spots=(
            S(benchmark="bfcl_overall", model="Claude-Opus-4-5-20251101", setting="FC")(score=0.7747),)),
        snap("bfcl/bfcl_data_v1v2_2024-03-20.csv", 264, rejects=0, spots=(
            S(benchmark="bfcl_overall", model="GPT-4-1106-Preview", setting="FC")(score=0.8428),)),
        snap("bfcl/bfcl_data_v1v2_2024-08-14.csv", 1269, rejects=0, spots=(
            S(benchmark="bfcl_overall", model="Claude-3.5-Sonnet-20240620", setting="Prompt")(score=0.9053),)),
    )

"""LiveBench (livebench.ai): `table_<release>.csv` plus `categories_<release>.json` (aux).

The CSV has a `model` column and one percent column per task; the task set changes by
release. The categories JSON maps category name -> task columns. The site's category score
is the mean of its task columns and its global average is the mean of the category scores;
we compute both, but only for models that have every column involved (the site silently
averages over whatever is present, which mixes different task sets).

Emitted benchmark ids: `livebench_task_<task>`, `livebench_<category slug>`, `livebench`.
Every row carries `table_version` = the release (`2024-11-25`): a release has other questions,
so it is another table (registry.tables); no running best crosses releases. The releases come
from `livebench_releases` (the changelog): a release not stored yet is fetched by the cycle's
discovery step.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Mapping, Sequence

import pandas as pd

from common.naming import EFFORT, NamingRules
from scrapers._cells import percent_cells, raw_text
from scrapers.base import ParsedSnapshot, Scraper
from scrapers.normalize import clean_name, is_missing, slug
from scrapers.cases import Absent, Case, S, snap

# Releases the site has served, newest first; production fetches RELEASES[0].
RELEASES: tuple[str, ...] = (
    "2026_01_08", "2025_12_23", "2025_11_25", "2025_05_30", "2025_04_25",
    "2025_04_02", "2024_11_25", "2024_08_31", "2024_07_26", "2024_06_24",
)
_RELEASE = re.compile(r"table_(\d{4}_\d{2}_\d{2})")
GLOBAL = "livebench"


def category_id(category: str) -> str:
    """'Data Analysis' -> 'livebench_data_analysis', 'IF' -> 'livebench_if'."""
    return f"livebench_{slug(category)}"


def task_id(task: str) -> str:
    """'AMPS_Hard' -> 'livebench_task_amps_hard'."""
    return f"livebench_task_{slug(task)}"


# the categories file of a release, as a case's aux
LB_AUX = lambda release: (("categories_%s.json" % release, "livebench/categories_%s.json" % release),)  # noqa: E731


class LivebenchScraper(Scraper):
    name = "livebench"
    # efforts and thinking budgets are settings; a bare `-thinking` is not (kimi-k2-thinking is a model)
    # its own spellings; `-high-effort`, `-thinking-64k` and bare `-high`: the shared markers (COMMON_VARIANTS)
    NAMING = NamingRules(variants=(
        (rf"-thinking-auto-({EFFORT})-effort$", "effort"),
        (r"-(highthinking|nothinking)$", "effort"),
        # a dated API snapshot run without extended thinking, beside its `-thinking-32k` run
        # (`claude-4-1-opus-20250805-base`): a vendor serves no pretrained base model under a dated id
        (r"(?<=-\d{8})-(base)$", "mode")))
    page = "https://livebench.ai/"
    urls = (f"https://livebench.ai/table_{RELEASES[0]}.csv",
            f"https://livebench.ai/categories_{RELEASES[0]}.json")
    min_rows = 200  # score rows; the smallest copy (2024_11_25, first commit) has 26 models x 18 tasks = 468
    release_source = "livebench_releases"   # the changelog: releases not stored yet are fetched each cycle

    def release_urls(self, release: str) -> list[str]:
        """'2025_12_23' (or '2025-12-23') -> the release's table and categories URLs."""
        r = release.replace("-", "_")
        return [f"https://livebench.ai/table_{r}.csv", f"https://livebench.ai/categories_{r}.json"]

    def backfill_groups(self, names: Sequence[str]) -> tuple[list[tuple[str, tuple[str, ...]]], dict[str, str]]:
        """A table with the newest copy of its release's categories JSON (a release's categories
        do not change); a categories file no table of the folder uses is reported."""
        groups: list[tuple[str, tuple[str, ...]]] = []
        categories = sorted(n for n in names if "categories_" in n)
        used: set[str] = set()
        for name in names:
            if "categories_" in name:
                continue
            release = _RELEASE.search(name)
            aux = tuple([c for c in categories if release and f"categories_{release[1]}_" in c][-1:])
            used.update(aux)
            groups.append((name, aux))
        return groups, {c: "categories of a release with no table in the folder" for c in categories if c not in used}

    def parse(self, content: bytes, *, fetched_at: datetime, aux: Mapping[str, bytes] | None = None,
              filename: str | None = None) -> ParsedSnapshot:
        parsed = ParsedSnapshot(source=self.name)
        release = self._release(filename)
        parsed.meta["release"] = release
        if release is None:
            self.warn(parsed, f"no release date (table_YYYY_MM_DD) in file name {filename!r}")

        table = self._table(content, parsed)

        tasks: dict[str, pd.Series] = {}
        rows: list[pd.DataFrame] = []
        for column in table.columns:
            if column == "model":
                continue
            values, bad = percent_cells(table[column], index=table.index)
            if bad and len(bad) == (table[column].str.strip() != "").sum():
                self.warn(parsed, f"column {column!r} is not numeric (e.g. {bad[0]!r}); skipped")
                continue
            if bad:
                self.warn(parsed, f"column {column!r}: unparseable value(s) {bad[:5]}")
            # an out-of-range cell (inf, -5, 250 %) is rejected as a task row by `validate`; it must
            # not flow into the category / global means either (those would be silently wrong)
            tasks[column] = values.where(values.between(0.0, 1.0))
            evaluated = ~table[column].map(is_missing)   # a blank cell: model not run on this task
            rows.append(self._rows(task_id(column), table["model"], values, raw_text(table[column]))[evaluated])
        if not tasks:
            raise self.error("no task columns next to 'model'")
        parsed.meta["tasks"] = list(tasks)

        categories = self._categories(aux or {}, release, parsed)
        if categories is None:
            self.warn(parsed, "no categories JSON: task scores only (no category or global averages)")
        else:
            rows.extend(self._averages(table["model"], tasks, categories, parsed))
        parsed.scores = pd.concat(rows, ignore_index=True)
        # each release has its own questions: its own leaderboard table (registry.tables, issue 20)
        parsed.scores["table_version"] = "" if release is None else release.replace("_", "-")
        return parsed

    def _table(self, content: bytes, parsed: ParsedSnapshot) -> pd.DataFrame:
        """The CSV as strings. A row whose field count differs from the header's is rejected:
        which columns it lacks cannot be told (2026_01_08 has a 21-field row under 24 headers)."""
        lines = self.csv_rows(content)
        header = [c.strip() for c in lines[0]]
        if "model" not in header:
            raise self.error(f"no 'model' column; found {', '.join(header[:10])}")
        repeated = sorted({c for c in header if header.count(c) > 1})
        if repeated:
            raise self.error(f"repeated column name(s) {repeated}: cannot tell which is the task score")
        good = [line for line in lines[1:] if len(line) == len(header)]
        bad = [line for line in lines[1:] if len(line) != len(header)]
        if bad:
            parsed.rejects = pd.DataFrame({
                "row": [",".join(line) for line in bad],
                "reason": [f"row has {len(line)} fields, header has {len(header)}" for line in bad]})
            self.warn(parsed, f"{len(bad)} row(s) with a wrong field count rejected: {[line[0] for line in bad]}")
        if not good:
            raise self.error("the table has no (well-formed) rows")
        table = pd.DataFrame(good, columns=header)
        table["model"] = table["model"].map(clean_name)
        return table

    @staticmethod
    def _release(filename: str | None) -> str | None:
        match = _RELEASE.search(filename or "")
        return match.group(1) if match else None

    @staticmethod
    def _rows(benchmark: str, models: pd.Series, score: pd.Series, raw: list | None) -> pd.DataFrame:
        return pd.DataFrame({"benchmark": benchmark, "model": models, "score": score,
                             "raw_value": raw, "metric": "proportion"})

    def _categories(self, aux: Mapping[str, bytes], release: str | None, parsed: ParsedSnapshot) -> dict[str, list[str]] | None:
        """The categories JSON of this release from `aux` (the only categories file if the release is unknown)."""
        candidates = {k: v for k, v in aux.items() if "categories" in k}
        if release is not None:
            matching = {k: v for k, v in candidates.items() if release in k}
            if candidates and not matching:
                self.warn(parsed, f"categories file(s) {sorted(candidates)} are not for release {release}; ignored")
            candidates = matching
        if not candidates:
            return None
        if len(candidates) > 1:
            raise self.error(f"several categories files for one table: {sorted(candidates)}")
        key, content = next(iter(candidates.items()))
        data = self.json(content, where=f"categories file {key}")
        if not isinstance(data, dict) or not all(isinstance(v, list) for v in data.values()):
            raise self.error(f"categories JSON {key} is not an object of category -> task list")
        parsed.meta["categories"] = key
        return {str(c): [str(t) for t in ts] for c, ts in data.items()}

    def _averages(self, models: pd.Series, tasks: dict[str, pd.Series], categories: dict[str, list[str]],
                  parsed: ParsedSnapshot) -> list[pd.DataFrame]:
        """Category means (models with every task of the category) and their mean (models with every category)."""
        scores = pd.DataFrame(tasks)
        means: dict[str, pd.Series] = {}
        for category, members in categories.items():
            absent = [t for t in members if t not in scores.columns]
            if absent or not members:
                self.warn(parsed, f"category {category!r} lists task(s) not in the table {absent}; "
                                  f"{category_id(category)} and {GLOBAL} not computed")
                means[category] = pd.Series(float("nan"), index=scores.index)
                continue
            means[category] = scores[members].mean(axis=1, skipna=False)
        uncategorized = sorted(set(scores.columns) - {t for ts in categories.values() for t in ts})
        if uncategorized:
            self.warn(parsed, f"task column(s) in no category: {uncategorized}")
        frame = pd.DataFrame(means)
        out = [self._rows(category_id(c), models, frame[c], None) for c in frame.columns]
        out.append(self._rows(GLOBAL, models, frame.mean(axis=1, skipna=False), None))
        return [o.dropna(subset=["score"]) for o in out]

    # the declared cases (scrapers/cases.py), run by tests/unit/test_scraper_cases.py
    CASES = (
        Case("livebench/table_2026_01_08.csv", aux=LB_AUX("2026_01_08"),
             # 2 well-formed models x (23 tasks + 7 categories + global); the 21-field row is rejected
             scores=2 * (23 + 7 + 1), rejects=1, meta={"release": "2026_01_08"}, spots=(
                 S(model="arcee-trinity-large-preview", benchmark="livebench_task_amps_hard")(score=0.61),
                 S(model="arcee-trinity-large-preview", benchmark="livebench_reasoning")(
                     score=(26.923 + 7.5 + 46.0 + 2.0) / 4 / 100),
                 S(model="arcee-trinity-large-preview", benchmark="livebench_agentic_coding")(score=10.0 / 3 / 100),
                 S(model="arcee-trinity-large-preview", benchmark="livebench_if")(
                     score=(12.55 + 11.0 + 10.6 + 14.617) / 4 / 100),
                 S(model="arcee-trinity-large-preview", benchmark="livebench_data_analysis")(
                     score=(6.556 + 20.308 + 94.118) / 3 / 100),
                 S(model="arcee-trinity-large-preview", benchmark="livebench")(score=0.3274095, table_version="2026-01-08"),
                 Absent({"model": "nemotron-3-super-120b-a12b"}),
             )),
        Case("livebench/table_2024_11_25.csv", aux=LB_AUX("2024_11_25"),
             # 3 models x 18 tasks - 1 blank; 3 x 6 categories - 1 (phi-3 Language); global for 2 models
             scores=53 + 17 + 2, rejects=0, spots=(
                 Absent({"model": "phi-3-small-8k-instruct", "benchmark": "livebench_task_connections"}),
                 Absent({"model": "phi-3-small-8k-instruct", "benchmark": "livebench_language"}),
                 Absent({"model": "phi-3-small-8k-instruct", "benchmark": "livebench"}),
                 S(model="amazon.nova-lite-v1:0", benchmark="livebench_reasoning")(
                     score=(54.0 + 26.0 + 30.0) / 3 / 100, n_items=None),
                 S(model="amazon.nova-micro-v1:0", benchmark="livebench_task_lcb_generation")(
                     raw_value="24.359", table_version="2024-11-25"),   # each release is its own table (issue 20)
             )),
        snap("livebench/livebench_table_2024_06_24_2024-09-06.csv", 73 * 17 + 73 * 7, items=0,
             aux=(("categories_2024_06_24.json", "livebench/livebench_categories_2024_06_24_2024-08-02.json"),), spots=(
                 S(model="claude-3-5-sonnet-20240620", benchmark="livebench")(score=0.6115625),
                 S(model="claude-3-5-sonnet-20240620", benchmark="livebench_coding")(score=0.632105))),
        snap("livebench/livebench_table_2024_11_25_2024-11-25.csv", 26 * 18 + 26 * 7, items=0,
             aux=(("categories_2024_11_25.json", "livebench/livebench_categories_2024_11_25_2024-11-25.json"),), spots=(
                 S(model="o1-preview-2024-09-12", benchmark="livebench")(score=0.647441388888889),)),
        snap("livebench/livebench_table_2024_11_25_2025-03-31.csv", 65 * 18 - 1 + 65 * 7 - 2, items=0,
             aux=(("categories_2024_11_25.json", "livebench/livebench_categories_2024_11_25_2024-11-25.json"),), spots=(
                 S(model="gemini-2.5-pro-exp-03-25", benchmark="livebench")(score=0.8235413888888888),
                 S(model="gemini-2.5-pro-exp-03-25", benchmark="livebench_language")(score=0.6781966666666666))),
        # this table predates consecutive_events, which the newest categories file lists:
        # Data Analysis and the global average cannot be computed for it
        snap("livebench/livebench_table_2026_01_08_2026-01-08.csv", 65 * 22 + 65 * 6, items=0,
             aux=(("categories_2026_01_08.json", "livebench/livebench_categories_2026_01_08_2026-01-19.json"),), spots=(
                 S(model="claude-4-1-opus-20250805-base", benchmark="livebench_task_amps_hard")(score=0.89),)),
        snap("livebench/livebench_table_2026_01_08_2026-07-01.csv", 126 * 23 + 126 * 8, items=0,
             aux=(("categories_2026_01_08.json", "livebench/livebench_categories_2026_01_08_2026-01-19.json"),), spots=(
                 S(model="gpt-5.5-xhigh", benchmark="livebench")(score=0.8070721428571429),
                 S(model="gpt-5.5-xhigh", benchmark="livebench_agentic_coding")(score=0.5666666666666667))),
    )

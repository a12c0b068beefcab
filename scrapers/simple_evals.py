"""openai/simple-evals: the results table of the repository README (markdown).

The table changed across README versions: column order (`DROP(f1) | GPQA% | ... ` in
2024-04, `MMLU | GPQA | MATH | ...` later), a `SimpleQA` column added, header cells with
footnotes and `<br>`. Body rows mix group-header rows (`| **o3** | | ... |`, `GPT4s`,
`REFERENCE`: a name and no number) with model rows whose cells carry footnote markers
(`o3 [^9] [^10]`), markdown links, bold/code values (`**\\`92.4\\`**`), zero padding
(`07.6`) and `n/a`/`-`; rows may have fewer or more cells than the header.

Columns are recognised by name, not position. The `Prompt` column is the setting (the
system prompt the rerun used; `n/a`/`unknown` -> '').

MATH vs MATH-500: the README says, in prose, which rows were run on MATH-500:
- 2024-09: the o1 group-header row carries `MATH-500[^6]` in the MATH column, and footnote 6
  says "For o1 models, we evaluate on MATH-500" -> the rows of that group are `math_500`;
- 2025-07: the MATH header cites footnote 6, "For newer models (anything on or after o1) we
  evaluate on MATH-500". A row is "on or after o1" when it is an o-series model (its name
  or its group starts with `o<digit>`) or its name carries a snapshot date on or after
  o1's (`o1-2024-12-17`); e.g. `gpt-4.1-2025-04-14` is `math_500`, `gpt-4o-2024-11-20` and
  reported third-party rows are `math`. A MATH-500 note that names no model applies to the
  whole column. Without any MATH-500 note the column is `math`.
- A note scoped to o1 ("For o1 models, we evaluate on MATH-500") cited from the o1 group's row
  covers the o-series models of the same README too: o3-mini's 97.9 is a MATH-500 score even
  in a version whose o3-mini group carries no note (it was filed under MATH, and MATH's level
  jumped between README versions).
- A footnote cited by a row's model cell or by a score cell that names MATH-500 files that
  row's (or that cell's) MATH number under `math_500`, whatever the header says.

Who produced a number: rows under a `Other Models (Reported)` group, rows labelled `(report)`
and rows whose footnote says the numbers are a vendor's report (`claude-3 reports: <link>`)
get `reported_by = 'vendor'`; the others are simple-evals' own runs (NULL).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Mapping

import pandas as pd

from common.naming import NamingRules
from scrapers._cells import percent_cells
from scrapers._markdown import MarkdownTable, footnote_refs, footnotes, tables
from scrapers.base import ParsedSnapshot, Scraper
from scrapers.normalize import clean_name, is_missing, slug
from scrapers.cases import Absent, Case, S, snap

# header keyword (start of the cleaned, lower-cased header) -> canonical benchmark id
COLUMN_IDS: tuple[tuple[str, str], ...] = (
    ("mmlu", "mmlu"),
    ("gpqa", "gpqa_diamond"),
    ("math", "math"),
    ("humaneval", "humaneval"),
    ("mgsm", "mgsm"),
    ("drop", "drop"),
    ("simpleqa", "simpleqa"),
)
MATH_500 = "math_500"
# o1's API snapshot date: "on or after o1" for models named with a snapshot date.
O1_SNAPSHOT_DATE = datetime(2024, 12, 17)

_O_SERIES = re.compile(r"^o\d", re.I)
_SNAPSHOT_DATE = re.compile(r"(20\d\d)-(\d\d)-(\d\d)")
_MATH_500 = re.compile(r"math[- ]?500", re.I)
_REPORTED = re.compile(r"\breport(ed|s)?\b", re.I)
VENDOR = "vendor"


def _header_name(cell: str) -> str:
    """'DROP[^5]<br>(F1, 3-shot)' -> 'drop (f1, 3-shot)'; 'GPQA%' -> 'gpqa'."""
    text = re.sub(r"<br\s*/?>", " ", cell, flags=re.I)
    return (clean_name(text) or "").replace("%", "").strip().lower()


def _on_or_after_o1(model: str, group: str | None) -> bool:
    if _O_SERIES.match(model) or (group and _O_SERIES.match(group)):
        return True
    m = _SNAPSHOT_DATE.search(model)
    if m:
        try:
            return datetime(int(m[1]), int(m[2]), int(m[3])) >= O1_SNAPSHOT_DATE
        except ValueError:
            return False
    return False


class SimpleEvalsScraper(Scraper):
    name = "simple_evals"
    # a trailing -low/-medium/-high is the reasoning effort (o3-high); (report), (rerun …), (work in progress) a label
    # labels (`rerun[^()]*`: a label holds no parenthesis, and `[^)]*` rescanned a long name from each
    # '(rerun'); its `-high` efforts are the shared markers (common.naming.COMMON_VARIANTS)
    NAMING = NamingRules(variants=((r"\s*\((report|rerun[^()]*|work in progress)\)$", "label"),))
    page = "https://github.com/openai/simple-evals"
    urls = ("https://raw.githubusercontent.com/openai/simple-evals/main/README.md",)
    min_rows = 20   # the smallest README version (2024-04) has 60 scores

    def parse(self, content: bytes, *, fetched_at: datetime, aux: Mapping[str, bytes] | None = None,
              filename: str | None = None) -> ParsedSnapshot:
        text = self.data_text(content)
        notes = footnotes(text)
        candidates = [t for t in tables(text) if any(_header_name(h) == "model" for h in t.header)]
        if not candidates:
            raise self.error("no markdown results table with a 'Model' column in the README")
        parsed = ParsedSnapshot(source=self.name)
        frames = [self._table(t, notes, parsed) for t in candidates]
        parsed.scores = pd.concat(frames, ignore_index=True)
        if parsed.scores.empty:
            raise self.error("the README results table has no model rows with scores")
        return parsed

    def _columns(self, table: MarkdownTable, parsed: ParsedSnapshot) -> dict[int, str]:
        """Header index -> benchmark id, for the score columns."""
        columns: dict[int, str] = {}
        for i, cell in enumerate(table.header):
            name = _header_name(cell)
            if name in ("model", "prompt") or not name:
                continue
            if _MATH_500.match(name):   # a column of its own
                columns[i] = MATH_500
                continue
            bench = next((b for key, b in COLUMN_IDS if name.startswith(key)), None)
            if bench is None:
                bench = slug(name)
                self.warn(parsed, f"unknown column {cell!r} read as benchmark {bench!r}")
            columns[i] = bench
        if not columns:
            raise self.error(f"results table (line {table.line}) has no score columns: {table.header}")
        return columns

    def _table(self, table: MarkdownTable, notes: dict[str, str], parsed: ParsedSnapshot) -> pd.DataFrame:
        names = [_header_name(h) for h in table.header]
        model_col = names.index("model")
        if "prompt" in names:
            prompt_col: int | None = names.index("prompt")
        else:
            prompt_col = None
            self.warn(parsed, f"results table (line {table.line}) has no Prompt column; setting ''")
        columns = self._columns(table, parsed)
        math_cols = [i for i, b in columns.items() if b == "math"]
        # A MATH-500 note on the MATH header: scoped to "o1 and later" when it names o1.
        header_note = {i: " ".join(notes.get(r, "") for r in footnote_refs(table.header[i])) for i in math_cols}
        column_scope = {i: ("o1" if re.search(r"\bo1\b", n) else "all") for i, n in header_note.items() if _MATH_500.search(n)}
        # a MATH-500 note about "o1 models" cited by a group row covers every o-series row of the table
        width = len(table.header)
        for cells in table.rows:
            cells = (cells + [""] * width)[:width]
            if not percent_cells([cells[i] for i in columns])[0].isna().all():
                continue
            for i in math_cols:
                cited = " ".join(notes.get(r, "") for r in footnote_refs(cells[i]))
                if _MATH_500.search(cells[i]) and re.search(r"\bo1\b", cited) and i not in column_scope:
                    column_scope[i] = "o1"

        records = []
        group: str | None = None
        group_math_500: set[int] = set()
        for cells in table.rows:
            extra = [c for c in cells[width:] if c.strip()]
            if extra:
                self.warn(parsed, f"row {cells[model_col] if len(cells) > model_col else cells!r} has "
                                  f"{len(cells)} cells for {width} columns; extra cells {extra} ignored")
            cells = (cells + [""] * width)[:width]
            model = clean_name(cells[model_col])
            if model is None:
                continue
            values, bad = percent_cells([cells[i] for i in columns])
            if values.isna().all():   # a group header row: a name and no numbers (maybe a note)
                group = model
                group_math_500 = {i for i in math_cols if _MATH_500.search(cells[i])}
                continue
            row_notes = " ".join(notes.get(r, "") for r in footnote_refs(cells[model_col]))
            reported = bool((group and _REPORTED.search(group)) or re.search(r"\(\s*report", model, re.I)
                            or _REPORTED.search(row_notes))
            if bad:
                self.warn(parsed, f"{model}: unparseable score cell(s) {bad} left out")
            prompt = clean_name(cells[prompt_col]) if prompt_col is not None else None
            setting = "" if prompt is None or is_missing(prompt) else prompt
            for (i, bench), value in zip(columns.items(), values):
                if pd.isna(value):
                    continue
                cell_notes = row_notes + " " + " ".join(notes.get(r, "") for r in footnote_refs(cells[i]))
                if i in math_cols and (i in group_math_500 or column_scope.get(i) == "all"
                                       or (column_scope.get(i) == "o1" and _on_or_after_o1(model, group))
                                       or _MATH_500.search(cell_notes)):
                    bench = MATH_500
                records.append({"benchmark": bench, "model": model, "setting": setting, "score": value,
                                "raw_value": cells[i], "metric": "proportion",
                                "reported_by": VENDOR if reported else None})
        return pd.DataFrame.from_records(records)

    # the declared cases (scrapers/cases.py), run by tests/unit/test_scraper_cases.py
    CASES = (
        Case("simple_evals/readme_2024-04-13.md", scores=35, spots=(   # 6 models x 6, minus Gemini's GPQA n/a
            Absent({"model": "GPT4s"}), Absent({"model": "REFERENCE"}), Absent({"benchmark": "math_500"}),
            S(benchmark="drop", model="gpt-4-turbo-2024-04-09", setting="assistant")(score=0.86),
            S(benchmark="mmlu", model="gpt-4-turbo-2024-04-09", setting="chatgpt")(score=0.865),
            S(benchmark="gpqa_diamond", model="Claude-3-Opus (rerun w/ api)", setting="lmsys")(score=0.507),
            S(benchmark="humaneval", model="Gemini-Ultra-1.0 (report)", setting="")(score=0.744, reported_by="vendor"),
            S(benchmark="humaneval", model="Claude-3-Opus (rerun w/ api)", setting="empty")(reported_by=None),
        )),
        Case("simple_evals/readme_2024-09-11.md", scores=32, spots=(
            S(benchmark="math_500", model="o1 (work in progress)")(score=0.948),
            S(benchmark="math_500", model="o1-mini")(), S(benchmark="math_500", model="o1-preview")(),
            S(benchmark="math", model="gpt-4o-2024-08-06", setting="assistant")(score=0.759),
            S(benchmark="humaneval", model="o1-preview")(score=0.924, raw_value="**`92.4`**", setting=""),
            S(benchmark="drop", model="Claude 3.5 Sonnet")(score=0.871),    # link + bold cell
            S(benchmark="mgsm", model="Gemini 1.0 Ultra")(score=0.79),
        )),
        Case("simple_evals/readme_2025-07-09.md", scores=61, spots=(   # 9 models x 7, minus o1 '-' and Llama n/a
            S(benchmark="simpleqa", model="o1-mini")(score=0.076, raw_value="07.6"),
            S(benchmark="gpqa_diamond", model="o3")(score=0.828),                     # 'o3 [^9] [^10]'
            Absent({"model": "o1", "benchmark": "humaneval"}),
            S(benchmark="drop", model="Llama 3.1 405b")(score=0.848),                 # no trailing pipe
            S(benchmark="mmlu", model="gpt-4.1-2025-04-14")(setting="assistant"),
        )),
        # The README as it stood between 2024-09 and 2025-07 in shape (rows typed from the real 2024-09 and
        # 2025-07 versions): the o3-mini group carries no MATH-500 note, the o1 group does ("For o1 models").
        # o3-mini's 97.9 is a MATH-500 score (issue 20: filed under MATH, MATH's level jumped across versions).
        Case("simple_evals/readme_o1_note_only.md", scores=35, spots=(   # 5 models x 7
            S(benchmark="math_500", model="o3-mini-high")(score=0.979, reported_by=None),
            S(benchmark="math_500", model="o3-mini-low")(score=0.958),
            S(benchmark="math_500", model="o1-preview")(score=0.855),
            S(benchmark="math", model="gpt-4o-2024-08-06")(score=0.759, reported_by=None),
            S(benchmark="math", model="Claude 3.5 Sonnet")(score=0.711, reported_by="vendor"),
            S(benchmark="simpleqa", model="Claude 3.5 Sonnet")(reported_by="vendor"),
            Absent({"benchmark": "math", "model": "o3-mini-high"}),
        )),
        snap("simple_evals/simple_evals_readme_2024-04-13.md", 64, rejects=0, spots=(
            S(benchmark="mmlu", model="gpt-4-turbo-2024-04-09", setting="chatgpt")(score=0.865),)),
        snap("simple_evals/simple_evals_readme_2024-09-11.md", 105, rejects=0, spots=(
            S(benchmark="math_500", model="o1-mini", setting="")(score=0.90),)),
        snap("simple_evals/simple_evals_readme_2025-07-09.md", 214, rejects=0, spots=(
            S(benchmark="simpleqa", model="o1-mini", setting="")(score=0.076),
            S(benchmark="math_500", model="o3-mini-high", setting="")(score=0.979))),
    )

"""EvalPlus leaderboard (HumanEval+ / MBPP+): `results.json`, or the older `humaneval.csv`.

The leaderboard page fills its tables client-side from `results.json`, so the JSON is the
data. Three layouts, sniffed from the content:
- results.json from 2024-04-19: `{model: {link, open-data, prompted, size,
  "pass@1": {humaneval, humaneval+, mbpp, mbpp+}}}`;
- results.json up to 2024-04-18: `"pass@1_base": {humaneval, mbpp}` and
  `"pass@1_plus": {humaneval, mbpp}` instead of `pass@1`;
- humaneval.csv (until 2024-03-10): `Model, pass@1_base, pass@1_plus, prompted, OD, link`
  (HumanEval only).
Scores are pass@1 in percent. A null score (36 models have no MBPP) is no row.

Each model's `link` is the page EvalPlus gives for the model (its Hugging Face card, paper or
announcement): the `models` frame carries it (`link`), and a Hugging Face model page's owner as the
model's organisation (no date: the page states none), so the database learns the name (view
learned_models). A paper or blog link names no publisher: the row has the link alone.

Test-set sizes: HumanEval(+) 164 tasks; MBPP(+) 378 tasks since MBPP+ v0.2.0 (EvalPlus
README, 2024-04-17: "MBPP+ is upgraded to v0.2.0 by removing some broken tasks
(399 -> 378 tasks)"), the version the `pass@1` layout reports. Which MBPP+ version the
older `pass@1_base/_plus` files used is not stated, so their MBPP n_items stay NULL.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Mapping

import pandas as pd

from scrapers._cells import percent_cells, raw_text, stated_models
from scrapers.base import ParsedSnapshot, Scraper
from scrapers.normalize import clean_name, is_missing
from scrapers.cases import Absent, Case, S, snap

HUMANEVAL_TASKS = 164
MBPP_PLUS_V020_TASKS = 378

# key inside the score dict -> benchmark id, for each results.json layout
NEW_KEYS = {"humaneval": "humaneval", "humaneval+": "humaneval_plus", "mbpp": "mbpp", "mbpp+": "mbpp_plus"}
OLD_KEYS = {("pass@1_base", "humaneval"): "humaneval", ("pass@1_plus", "humaneval"): "humaneval_plus",
            ("pass@1_base", "mbpp"): "mbpp", ("pass@1_plus", "mbpp"): "mbpp_plus"}
CSV_COLUMNS = {"pass@1_base": "humaneval", "pass@1_plus": "humaneval_plus"}


class EvalplusScraper(Scraper):
    name = "evalplus"
    page = "https://evalplus.github.io/leaderboard.html"
    urls = ("https://evalplus.github.io/results.json",)
    min_rows = 50   # the smallest copy (humaneval.csv, 79 models) has 158 scores
    parser_version = 2   # 2: every model's page (`link`) in the models frame

    def parse(self, content: bytes, *, fetched_at: datetime, aux: Mapping[str, bytes] | None = None,
              filename: str | None = None) -> ParsedSnapshot:
        parsed = ParsedSnapshot(source=self.name)
        text = self.data_text(content).lstrip()
        if text.startswith("{"):
            parsed.scores = self._from_json(text, parsed)
        else:
            parsed.scores = self._from_csv(text, parsed)
        return parsed

    def _from_json(self, text: str, parsed: ParsedSnapshot) -> pd.DataFrame:
        data = self.json(text, where="results.json")
        entries = {k: v for k, v in data.items() if isinstance(v, dict)}
        if not entries:
            raise self.error("results.json has no model entries")
        parsed.models = stated_models(entries, links=[entry.get("link") for entry in entries.values()])
        keys = set().union(*entries.values())
        if "pass@1" in keys:
            parsed.meta["layout"] = "pass@1"
            cells = [(model, NEW_KEYS[k], (entry.get("pass@1") or {}).get(k))
                     for model, entry in entries.items() for k in NEW_KEYS]
            unknown = set().union(*(set(e.get("pass@1") or {}) for e in entries.values())) - set(NEW_KEYS)
            if unknown:
                self.warn(parsed, f"pass@1 has unknown key(s) {sorted(unknown)}; ignored")
            sizes = {"humaneval": HUMANEVAL_TASKS, "humaneval_plus": HUMANEVAL_TASKS,
                     "mbpp": MBPP_PLUS_V020_TASKS, "mbpp_plus": MBPP_PLUS_V020_TASKS}
        elif {"pass@1_base", "pass@1_plus"} <= keys:
            parsed.meta["layout"] = "pass@1_base/pass@1_plus"
            cells = [(model, bench, (entry.get(group) or {}).get(k))
                     for model, entry in entries.items() for (group, k), bench in OLD_KEYS.items()]
            sizes = {"humaneval": HUMANEVAL_TASKS, "humaneval_plus": HUMANEVAL_TASKS}
            self.warn(parsed, "pre-2024-04-19 layout: MBPP+ version not stated, MBPP n_items left NULL")
        else:
            raise self.error(f"results.json entries have neither 'pass@1' nor 'pass@1_base'/'pass@1_plus'; "
                             f"found keys {sorted(keys)}")
        return self._frame(cells, sizes, parsed)

    def _from_csv(self, text: str, parsed: ParsedSnapshot) -> pd.DataFrame:
        df = self.csv(text, where="humaneval.csv")
        lower = {c.strip().lower(): c for c in df.columns}
        missing = [c for c in ("model", *CSV_COLUMNS) if c not in lower]
        if missing:
            raise self.error(f"humaneval.csv lacks column(s) {', '.join(missing)}; found {list(df.columns)}")
        parsed.meta["layout"] = "humaneval.csv"
        if "link" in lower:
            parsed.models = stated_models(df[lower["model"]], links=df[lower["link"]])
        cells = [(model, bench, value)
                 for col, bench in CSV_COLUMNS.items()
                 for model, value in zip(df[lower["model"]], df[lower[col]])]
        return self._frame(cells, {"humaneval": HUMANEVAL_TASKS, "humaneval_plus": HUMANEVAL_TASKS}, parsed)

    def _frame(self, cells: list[tuple[str, str, Any]], sizes: dict[str, int], parsed: ParsedSnapshot) -> pd.DataFrame:
        df = pd.DataFrame(cells, columns=["model", "benchmark", "raw"])
        df = df[~df["raw"].map(is_missing)].reset_index(drop=True)   # null / 'N/A': no score, no row
        score, bad = percent_cells(df["raw"], index=df.index)
        if bad:
            self.warn(parsed, f"unparseable pass@1 value(s) {bad[:5]} (rows rejected)")
        return pd.DataFrame({
            "benchmark": df["benchmark"],
            "model": df["model"].map(clean_name),
            "setting": "",
            "score": score,
            "raw_value": raw_text(df["raw"]),
            "metric": "proportion",
            "n_items": df["benchmark"].map(sizes).astype("Int64"),
        })

    # the declared cases (scrapers/cases.py), run by tests/unit/test_scraper_cases.py
    CASES = (
        Case("evalplus/results_2024-12-26.json", scores=10, rejects=0, spots=(
            # Code-13B has null mbpp/mbpp+: no rows
            Absent({"model": "Code-13B", "benchmark": "mbpp"}), Absent({"model": "Code-13B", "benchmark": "mbpp_plus"}),
            S(benchmark="mbpp_plus", model="OpenCoder-8B-Instruct")(score=0.714, raw_value="71.4", n_items=378,
                                                                      metric="proportion"),
            S(benchmark="humaneval_plus", model="Code-13B")(score=0.524),
            S(benchmark="humaneval", model="CodeGen-16B")(n_items=164),
            # a Hugging Face link names the publisher; a paper link (CodeGen-16B) names none: the link alone
            S("models", model="OpenCoder-8B-Instruct")(org="infly"),
            S("models", model="CodeGen-16B")(org=None, link="https://arxiv.org/abs/2203.13474"),
        )),
        Case("evalplus/results_2024-04-18.json", scores=10,   # CodeGen2-16B: humaneval and humaneval_plus only
             warnings=("MBPP+ version",), spots=(
                 S(benchmark="mbpp_plus", model="Code-13B")(score=0.426),
                 S(benchmark="mbpp", model="Code-13B")(n_items=None),
                 S(benchmark="humaneval", model="Code-13B")(score=0.561),
                 S(benchmark="humaneval_plus", model="CodeGen2-16B")(score=0.165),
             )),
        Case("evalplus/humaneval_2024-03-10.csv", scores=6,
             benchmarks=frozenset({"humaneval", "humaneval_plus"}), spots=(
                 S(benchmark="humaneval_plus", model="GPT-4 (May 2023)")(score=0.793),
                 S(benchmark="humaneval", model="GPT-3.5-Turbo (Nov 2023)")(score=0.768),
             )),
        snap("evalplus/evalplus_2024-04-18.json", 342, rejects=0, spots=(
            S(benchmark="humaneval_plus", model="Llama3-8B-instruct", setting="")(score=0.567),)),
        snap("evalplus/evalplus_2024-12-26.json", 428, rejects=0, spots=(
            S(benchmark="mbpp_plus", model="OpenCoder-8B-Instruct", setting="")(score=0.714),)),
        snap("evalplus/evalplus_humaneval_2024-03-10.csv", 160, rejects=0, spots=(
            S(benchmark="humaneval", model="GPT-4 (May 2023)", setting="")(score=0.884),)),
    )

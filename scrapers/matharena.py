"""MathArena (matharena.ai), its first site: item-level results of one contest, AIME 2025 I.

The launch site (Feb 2025) ships its table as JavaScript, `var result_data = [ {<model>: percent,
…, "question": 1}, … ]` (read by `scrapers._jsliteral`, never run): one row per question with each
model's percent of its 4 samples that were correct (0/25/50/75/100), then a `"question": "Avg"`
row (the model's score) and a `"question": "Cost"` row (USD; `"N/A"`, `"$0.00*"`).

Rows:
- items: benchmark `aime_2025`, item_id ``aime_2025_i/<question>``, item_date = the contest's date
  (AIME 2025 I: 2025-02-06), score = the share of the model's samples that solved it. The 4
  samples of one question are kept as that share (the file has no per-sample rows); they are
  correlated, so the question, not the sample, is the unit of n.
- scores: one per model, benchmark `aime_2025` with table_version ``aime_2025_i`` (15 of the
  30 AIME 2025 problems: another question set than the registry's AIME 2025), n_items = the
  questions listed (15), score = the `Avg` row (the mean of the question rows when it is absent,
  with a warning). The cost row is not stored (it is not a result on the contest).

Dated items after most models' cutoffs feed the post-cutoff slices. Too small for the A3
pre/post-cutoff gap: one contest on one date gives no pre-cutoff side for any model, so A3 has
nothing to compare (docs/statistics.md); it is not tested here for that reason.

A later file that declares other arrays of question rows (another contest) is read the same way,
one contest per array: its name gives the contest slug (`CONTESTS` knows the dates of some;
items of an unknown contest are undated, with a warning).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Mapping

import pandas as pd

from common.naming import NamingRules
from scrapers.base import ParsedSnapshot, Scraper
from scrapers.normalize import clean_name, parse_number, slug
from scrapers.cases import Absent, Case, S, snap

BENCHMARK = "aime_2025"
# array name (as the site declares it) -> contest slug; the launch site's one array is AIME 2025 I
ARRAY_CONTESTS = {"result_data": "aime_2025_i"}
# contest slug -> (benchmark, date the problems were first public)
CONTESTS: dict[str, tuple[str, datetime]] = {
    "aime_2025_i": ("aime_2025", datetime(2025, 2, 6)),
    "aime_2025_ii": ("aime_2025", datetime(2025, 2, 12)),
}
SUMMARY_ROWS = {"avg", "average", "cost", "acc", "accuracy"}


class MatharenaScraper(Scraper):
    name = "matharena"
    NAMING = NamingRules()   # o3-mini (high): a shared marker (common.naming.COMMON_VARIANTS)
    urls = ("https://matharena.ai/js/table_data.js",)
    min_rows = 5    # the launch table has 16 models

    def parse(self, content: bytes, *, fetched_at: datetime, aux: Mapping[str, bytes] | None = None,
              filename: str | None = None) -> ParsedSnapshot:
        parsed = ParsedSnapshot(source=self.name)
        decls = self.js_declarations(content, where="table_data.js")
        tables = {k: v for k, v in decls.items()
                  if isinstance(v, list) and any(isinstance(r, dict) and "question" in r for r in v)}
        if not tables:
            raise self.error("no array of question rows ({<model>: percent, \"question\": n}) in the file")
        scores, items = [], []
        for array, rows in tables.items():
            contest = ARRAY_CONTESTS.get(array) or slug(array.removesuffix("_data").removesuffix("_results"))
            s, i = self._contest(contest, [r for r in rows if isinstance(r, dict)], parsed)
            scores += s
            items += i
        parsed.meta["contests"] = sorted({ARRAY_CONTESTS.get(a, a) for a in tables})
        parsed.scores = pd.DataFrame(scores)
        parsed.items = pd.DataFrame(items)
        return parsed

    def _contest(self, contest: str, rows: list[dict], parsed: ParsedSnapshot) -> tuple[list[dict], list[dict]]:
        bench, date = CONTESTS.get(contest, (BENCHMARK if contest.startswith("aime") else contest, None))
        if date is None:
            self.warn(parsed, f"contest {contest!r} has no known date: its items are undated")
        questions = [r for r in rows if str(r.get("question")).strip().lower() not in SUMMARY_ROWS]
        avg = next((r for r in rows if str(r.get("question")).strip().lower() in ("avg", "average", "acc", "accuracy")), None)
        models = [k for r in questions for k in r if k != "question"]
        models = list(dict.fromkeys(models))
        items: list[dict[str, Any]] = []
        for r in questions:
            q = str(r.get("question")).strip()
            qid = f"{int(q):02d}" if q.isdigit() else slug(q)
            for m in models:
                pct = _number(r.get(m))
                items.append({"benchmark": bench, "model": clean_name(m), "item_id": f"{contest}/{qid}",
                              "item_date": date, "score": None if pct is None else pct / 100.0})
        if avg is None:
            self.warn(parsed, f"{contest}: no 'Avg' row; a model's score is the mean of its question rows")
        scores = []
        for m in models:
            own = [float(it["score"]) for it in items if it["model"] == clean_name(m) and it["score"] is not None]
            value = _number(avg.get(m)) if avg is not None else None
            # the Avg row is the score; a model's blank/NaN Avg cell is no score (rejected), never
            # replaced by the mean of its question rows (that fallback is for a file without an Avg row)
            if avg is not None:
                score = value / 100.0 if value is not None else None
            else:
                score = sum(own) / len(own) if own else None
            scores.append({"benchmark": bench, "model": clean_name(m), "setting": "", "score": score,
                           "raw_value": None if avg is None else str(avg.get(m)), "metric": "proportion",
                           "n_items": len(questions) or None, "table_version": contest,
                           "evaluated_at": None})
        return scores, items

    # the declared cases (scrapers/cases.py), run by tests/unit/test_scraper_cases.py
    CASES = (
        # 6 models x 15 AIME 2025 I questions (share of 4 samples correct), dated with the contest
        Case("matharena/table_data.js", replay="table_data.js", scores=6, items=90, rejects=0, meta={"contests": ["aime_2025_i"]},
             spots=(
                 S(model="o3-mini (low)")(score=0.5333333333333333, n_items=15, table_version="aime_2025_i",
                                          benchmark="aime_2025"),
                 S(model="claude-3.5-sonnet")(score=0.033333333333333335),
                 S("items", model="claude-3.5-sonnet", item_id="aime_2025_i/01")(score=0.25, item_date="2025-02-06"),
                 S("items", model="DeepSeek-R1", item_id="aime_2025_i/15")(score=0.0),
                 Absent(dict(item_id="aime_2025_i/cost"), table="items"))),
        snap("matharena/matharena_aime2025i_table_data_2025-02-09.js", 16, rejects=0, items=240, spots=(
            S(model="o1 (medium)")(score=0.7833333333333334, n_items=15),
            S("items", model="DeepSeek-R1", item_id="aime_2025_i/04")(score=1.0))),
    )


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or isinstance(value, (dict, list)):
        return None
    try:
        return parse_number(value)
    except (TypeError, ValueError):
        return None

"""Terminal-Bench 1.0 leaderboard (tbench.ai): the board's `data.ts`, agent systems over models.

The 1.0 board (terminal-bench-core 0.1.1, 80 tasks × 5 runs) is a hand-edited TypeScript module
of object literals `{agent, model (a name or a list), agentOrganization, modelOrganization, date,
accuracy (0-1), stderr (over the 5 runs), integrationMethod, agentUrl, verified}`, read as text
by `scrapers._jsliteral` (never run). An entry of one model states who made it (`modelOrganization`,
view learned_models). The displayed board is every array no other array spreads
into (`rawLiveLeaderboardData`, which ends with `...rawLaunchLeaderboardData`): spreads are
expanded and an entry listed twice is kept once; commented-out entries are not read.

A row is an agent *system* (population ``systems``, registry.identity): model = ``"<agent>
(<model> + <model>)"``, the models as `model_tag` (``Model: x``; one model gives the
per-model view its underlying model). setting = the entry's date, because one system is
listed again when re-run (Goose on 2025-07-12 and 2025-09-03); `evaluated_at` = that date.
`stderr` is published and stored. `verified` is no filter (the board shows unverified entries
too); their count is in the snapshot's meta. Benchmark `terminal_bench` (n = 80 tasks in
registry/benchmarks.csv; accuracy = resolved / (80 × 5), so the 80 tasks are the binomial n).

Terminal-Bench 2.0 and later boards are not in git, so no copy exists and this module does
not read them yet. They would be read one of two ways: (a) the Harbor Hub endpoint the site
itself calls, a POST of ``{"package": "terminal-bench/terminal-bench-2", "name": "2-0"}`` to
``https://ofhuhcpkvzjlejydnvyd.supabase.co/functions/v1/leaderboard-read`` (rows with
`metadata` — agent, model —, `metrics` — accuracy and its stderr — and `n_trials`), one
`table_version` per (package, name); or (b) the HTML table of
``https://www.tbench.ai/leaderboard/terminal-bench/2.0`` (agent, model, date, accuracy ± CI).
Either would emit benchmark ``terminal_bench_2`` (82 tasks) with the same system identity.
The POST needs a `plan()`/fetch of its own in scrapers/http.py (today every URL is a GET).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Mapping

import pandas as pd

from common.naming import NamingRules
from scrapers._cells import stated_models
from scrapers._jsliteral import Spread
from scrapers.base import ParsedSnapshot, Scraper
from scrapers.normalize import clean_name, parse_date, parse_number
from scrapers.cases import Absent, Case, S, snap

BENCHMARK = "terminal_bench"


def _names(value: Any) -> list[str]:
    """A `model` cell: one name or a list of names (None and blanks dropped)."""
    values = value if isinstance(value, list) else [value]
    return [n for n in (clean_name(v) for v in values if not isinstance(v, (dict, list))) if n]


class TerminalBenchScraper(Scraper):
    name = "terminal_bench"
    NAMING = NamingRules(systems=True)   # every row an agent system: Terminus 2 (claude-opus-4-1)
    urls = ("https://raw.githubusercontent.com/harbor-framework/terminal-bench-website/main/app/(home)/leaderboard/data.ts",)
    min_rows = 10   # the 2025-11 board lists 62 entries

    def parse(self, content: bytes, *, fetched_at: datetime, aux: Mapping[str, bytes] | None = None,
              filename: str | None = None) -> ParsedSnapshot:
        parsed = ParsedSnapshot(source=self.name)
        decls = self.js_declarations(content, where="data.ts")
        arrays = {k: v for k, v in decls.items() if isinstance(v, list)}
        if not arrays:
            raise self.error("data.ts declares no array of leaderboard entries (changed file?)")
        spread_into = {e.name for v in arrays.values() for e in v if isinstance(e, Spread)}
        boards = [k for k in arrays if k not in spread_into] or list(arrays)
        parsed.meta["arrays"] = boards

        entries: list[dict] = []
        for board in boards:
            entries.extend(self._expand(arrays, board, set()))
        entries = [e for e in entries if isinstance(e, dict)]
        if not entries:
            raise self.error(f"data.ts: the leaderboard array(s) {', '.join(boards)} hold no entries")
        if not any("accuracy" in e for e in entries):
            raise self.error("no entry has an 'accuracy' field (changed schema?)")
        missing = sorted({"agent", "model", "accuracy"} - set().union(*entries))
        if missing:
            raise self.error(f"entries have no {', '.join(missing)} field")

        rows, seen = [], set()
        stated: list[tuple[str, Any]] = []     # (model, the one organisation its entry names)
        for e in entries:
            agent = clean_name(e.get("agent"))
            models = _names(e.get("model"))
            if len(models) == 1 and isinstance(e.get("modelOrganization"), str):
                stated.append((models[0], e.get("modelOrganization")))
            acc = parse_number(e.get("accuracy")) if not isinstance(e.get("accuracy"), (list, dict)) else None
            key = (agent, tuple(models), str(e.get("date")), acc)
            if key in seen:        # the launch entries are spread into the live board
                continue
            seen.add(key)
            rows.append({
                "benchmark": BENCHMARK,
                "model": f"{agent} ({' + '.join(models)})" if agent and models else agent,
                "model_tag": "; ".join(f"Model: {m}" for m in models) or None,
                "setting": str(e.get("date") or ""),
                "score": acc,
                "raw_value": None if e.get("accuracy") is None else str(e.get("accuracy")),
                "metric": "proportion",
                "stderr": parse_number(e.get("stderr")) if isinstance(e.get("stderr"), (int, float, str)) else None,
                "evaluated_at": parse_date(e.get("date")),
                "verified": e.get("verified"),
            })
        df = pd.DataFrame(rows)
        if df["stderr"].isna().all():
            self.warn(parsed, "no entry publishes a stderr; stderr NULL")
        unverified = int((df["verified"] == False).sum())  # noqa: E712  (None = not stated)
        if unverified:
            parsed.meta["unverified"] = unverified
        parsed.scores = df.drop(columns="verified")
        # who made the model an entry runs: stated for an entry of one model and one organisation (a
        # list of models beside one name or a list of names says which made which only by position)
        parsed.models = stated_models([m for m, _ in stated], orgs=[o for _, o in stated])
        return parsed

    def _expand(self, arrays: dict[str, list], name: str, seen: set[str]) -> list[Any]:
        """The elements of array `name` with `...other` spreads replaced by other's elements."""
        if name in seen:
            raise self.error(f"data.ts: array {name!r} spreads into itself")
        out: list[Any] = []
        for e in arrays.get(name, []):
            if isinstance(e, Spread):
                if e.name not in arrays:
                    raise self.error(f"data.ts: spread of unknown array {e.name!r}")
                out.extend(self._expand(arrays, e.name, seen | {name}))
            else:
                out.append(e)
        return out

    # the declared cases (scrapers/cases.py), run by tests/unit/test_scraper_cases.py
    CASES = (
        # 20 systems: the live array's 16 picked entries (the commented-out OB-1 not read) + 4 launch
        # entries spread into it; Goose listed twice (2025-07-12, 2025-09-03), told apart by setting = date
        Case("terminal_bench/data.ts", replay="data.ts", scores=20, rejects=0, benchmarks=frozenset({"terminal_bench"}),
             meta={"arrays": ["rawLiveLeaderboardData"], "unverified": 16}, spots=(
                 S(model="Apex2 (claude-4-5-sonnet)")(score=0.645, stderr=0.005700877125495691,
                                                      evaluated_at="2025-10-15", model_tag="Model: claude-4-5-sonnet"),
                 S(model="Goose (claude-opus-4)", setting="2025-09-03")(score=0.4525, stderr=0.015),
                 S(model="Abacus AI Desktop (gpt-5-mini + claude-sonnet-4-5)")(
                     score=0.6225, model_tag="Model: gpt-5-mini; Model: claude-sonnet-4-5"),
                 S(model="Terminus 1 (o4-mini)")(score=0.18536585365853658, setting="2025-05-15"),
                 Absent(dict(model="OB-1 (GPT-5)")),
                 S("models", model="claude-4-5-sonnet")(org="Anthropic"),        # the entry's modelOrganization
                 Absent(dict(model="gpt-5-mini"), table="models"))),       # two models, two organisations
        snap("terminal_bench/terminal_bench_tb1_leaderboard_2025-11-11.ts", 62, rejects=0, spots=(
            # the paper's top 5 (Apex2 64.5, Abacus 62.3, Ante 60.3, Droid 58.8 / 57.5) are rows of this file
            S(model="Apex2 (claude-4-5-sonnet)")(score=0.645),
            S(model="Chaterm (claude-4-5-sonnet)")(score=0.6375, stderr=0.00559),
            S(model="Droid (claude-sonnet-4-5)")(score=0.575),
            S(model="OB-1 (GPT-5 + Claude 4.1 Opus + Claude 4 Sonnet)")(score=0.567))),
    )

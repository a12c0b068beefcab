"""SWE-bench leaderboards (swebench.com): `data/leaderboards.json` or the served HTML page.

Three layouts carry the same boards and are sniffed from the content:
- `leaderboards.json`: `{"leaderboards": [{"name": "Verified", "results": [...]}, ...]}`;
- the HTML page from 2025-06-06 on: the same list as JSON in `<script id="leaderboard-data">`;
- the HTML page up to 2025-06-05: one `<table>` per board inside `<div id="leaderboard-<Board>">`.

A result's `folder` is its unique key (several entries share a display name), so it is the
`setting`. The old HTML table has no folder; there the submission date stands in for it.
`date` is the submission date (`evaluated_at`), never a model date. Newer JSON rows carry
`per_instance_details` (instance -> resolved), emitted as item rows. A result's `Model: …` tags
go to `model_tag` (a tag written as the model's Hugging Face page states who published it: view
learned_models): the boards list agent systems, and registry.identity uses the tags for the
per-model view (and, on the bash-only board, as the model itself).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Mapping

import pandas as pd

from common.naming import NamingRules
from scrapers._cells import percent_cells, raw_text, stated_models
from scrapers.base import ParsedSnapshot, Scraper
from scrapers.normalize import clean_name, hugging_face_repo, parse_date, slug
from scrapers.cases import Case, S, snap

# board name (lower case) -> canonical benchmark id; other boards become swebench_<slug>.
BOARD_IDS: dict[str, str] = {
    "test": "swebench_full",
    "full": "swebench_full",
    "verified": "swebench_verified",
    "lite": "swebench_lite",
    "multimodal": "swebench_multimodal",
    "bash-only": "swebench_bash_only",
}
# Test-set sizes stated on swebench.com.
BOARD_SIZES: dict[str, int] = {
    "swebench_full": 2294,
    "swebench_verified": 500,
    "swebench_bash_only": 500,
    "swebench_lite": 300,
    "swebench_multimodal": 517,
}

_SCRIPT = re.compile(r"<script\b[^>]*\bid=[\"']leaderboard-data[\"'][^>]*>(.*?)</script>", re.S | re.I)
_BOARD_DIV = "leaderboard-"


def benchmark_id(board: str) -> str:
    """'Verified' -> 'swebench_verified'; unknown boards -> 'swebench_<slug>'."""
    key = str(board).strip().lower()
    return BOARD_IDS.get(key) or f"swebench_{slug(key)}"


class SwebenchScraper(Scraper):
    name = "swebench"
    # every board lists agent systems (underlying model from the `Model:` tags) except bash-only, where
    # every model runs in the same minimal agent: there a row is a model run of its single `Model:` tag
    NAMING = NamingRules(systems=True, model_run_benchmarks=frozenset({"swebench_bash_only"}))
    page = "https://www.swebench.com/"
    urls = ("https://raw.githubusercontent.com/SWE-bench/swe-bench.github.io/master/data/leaderboards.json",)
    min_rows = 50   # the smallest copy (2025-05-07) has 168 rows over 4 boards

    def parse(self, content: bytes, *, fetched_at: datetime, aux: Mapping[str, bytes] | None = None,
              filename: str | None = None) -> ParsedSnapshot:
        parsed = ParsedSnapshot(source=self.name)
        text = self.text(content).lstrip()
        if text.startswith(("{", "[")):
            boards = self._boards_from_json(text, where="leaderboards.json")
            parsed.meta["variant"] = "json"
        else:
            match = _SCRIPT.search(text)
            if match:
                boards = self._boards_from_json(match.group(1), where='<script id="leaderboard-data">')
                parsed.meta["variant"] = "html_script"
            else:
                boards = self._boards_from_tables(text, parsed)
                parsed.meta["variant"] = "html_table"

        score_frames, item_frames = [], []
        for board_name, results in boards:
            scores, items = self._board_rows(board_name, results, parsed)
            score_frames.append(scores)
            item_frames.extend(items)
        parsed.meta["boards"] = [b for b, _ in boards]
        parsed.scores = pd.concat(score_frames, ignore_index=True)
        # a `Model:` tag written as the model's Hugging Face page names its weights and who published them
        named = {part.split(":", 1)[1].strip() for tag in parsed.scores["model_tag"].dropna()
                 for part in str(tag).split(";") if ":" in part}
        pages = sorted(m for m in named if hugging_face_repo(m) is not None)
        parsed.models = stated_models(pages, links=pages)
        if item_frames:
            parsed.items = pd.concat(item_frames, ignore_index=True)
        return parsed

    # --- layouts -> [(board name, list of result dicts)] ---------------------------------
    def _boards_from_json(self, text: str, *, where: str) -> list[tuple[str, list[dict]]]:
        data = self.json(text, where=where)
        if isinstance(data, dict):
            if "leaderboards" not in data:
                raise self.error(f"{where} has no 'leaderboards' key; found keys {sorted(data)[:10]}")
            data = data["leaderboards"]
        if not isinstance(data, list) or not data:
            raise self.error(f"{where}: expected a non-empty list of boards, got {type(data).__name__}")
        boards = []
        for i, board in enumerate(data):
            if not isinstance(board, dict) or "name" not in board or not isinstance(board.get("results"), list):
                raise self.error(f"{where}: board #{i} is not an object with 'name' and a 'results' list")
            boards.append((str(board["name"]), [r for r in board["results"] if isinstance(r, dict)]))
        return boards

    def _boards_from_tables(self, text: str, parsed: ParsedSnapshot) -> list[tuple[str, list[dict]]]:
        from bs4 import BeautifulSoup   # here: a JSON board or an unchanged run needs no bs4

        soup = BeautifulSoup(text, "html.parser")
        boards = []
        for table in soup.find_all("table"):
            holder = next((p for p in table.parents if str(p.get("id") or "").startswith(_BOARD_DIV)), None)
            if holder is None:
                continue
            board = str(holder["id"])[len(_BOARD_DIV):]
            header_row = table.find("thead") or table.find("tr")
            if header_row is None:
                raise self.error(f"HTML board {board!r}: a table without a header row (changed layout?)")
            headers = [th.get_text(" ", strip=True).lower() for th in header_row.find_all("th")]
            col = {key: next((i for i, h in enumerate(headers) if key in h), None) for key in ("model", "resolved", "date")}
            if col["model"] is None or col["resolved"] is None:
                raise self.error(f"HTML board {board!r}: no Model / % Resolved column in header {headers}")
            body = table.find("tbody") or table
            results = []
            for tr in body.find_all("tr"):
                cells = tr.find_all("td")
                if len(cells) != len(headers):   # the "No entries match" row spans all columns
                    continue
                name_cell = cells[col["model"]]
                name_span = name_cell.find(class_="model-name")
                results.append({
                    "name": clean_name((name_span or name_cell).get_text(" ", strip=True)),
                    "resolved": cells[col["resolved"]].get_text(strip=True),
                    "date": cells[col["date"]].get_text(strip=True) if col["date"] is not None else None,
                })
            if col["date"] is None:
                self.warn(parsed, f"HTML board {board!r} has no Date column; evaluated_at left NULL")
            boards.append((board, results))
        if not boards:
            raise self.error("HTML page has neither <script id=\"leaderboard-data\"> nor leaderboard tables "
                             "(error page or changed layout)")
        self.warn(parsed, "HTML table layout has no `folder`; setting = submission date")
        return boards

    # --- one board -> score rows (+ item rows) --------------------------------------------
    def _board_rows(self, board: str, results: list[dict], parsed: ParsedSnapshot) -> tuple[pd.DataFrame, list[pd.DataFrame]]:
        bench = benchmark_id(board)
        if not results:
            self.warn(parsed, f"board {board!r} is empty")
            return pd.DataFrame(), []
        keys = set().union(*results)
        missing = [k for k in ("name", "resolved") if k not in keys]
        if missing:
            raise self.error(f"board {board!r}: results have no {', '.join(missing)} field; found {sorted(keys)}")
        names = [clean_name(r.get("name")) for r in results]
        raw = [r.get("resolved") for r in results]
        score, bad = percent_cells(raw)
        if bad:
            self.warn(parsed, f"board {board!r}: unparseable resolved value(s) {bad[:5]}")
        dates = [parse_date(r.get("date")) for r in results]
        if "folder" in keys:
            settings = [str(r["folder"]) if r.get("folder") else "" for r in results]
            if "" in settings:
                self.warn(parsed, f"board {board!r}: {settings.count('')} row(s) without folder; setting ''")
        else:
            settings = [d.strftime("%Y-%m-%d") if d else "" for d in dates]
        if any(d is None for d in dates):
            self.warn(parsed, f"board {board!r}: {sum(d is None for d in dates)} row(s) without a submission date")
        scores = pd.DataFrame({
            "benchmark": bench,
            "model": names,
            "setting": settings,
            "score": score,
            "raw_value": raw_text(raw),
            "metric": "proportion",
            "n_items": BOARD_SIZES.get(bench),
            "evaluated_at": dates,
            "model_tag": [_tags(r.get("tags")) for r in results],
        })
        if bench not in BOARD_SIZES:
            self.warn(parsed, f"board {board!r} ({bench}) has no known test-set size; n_items NULL")
        return scores, self._items(bench, names, results, parsed)

    def _items(self, bench: str, names: list[str | None], results: list[dict], parsed: ParsedSnapshot) -> list[pd.DataFrame]:
        frames, seen = [], set()
        for name, r in zip(names, results):
            details = r.get("per_instance_details")
            if not isinstance(details, dict) or not details or name is None:
                continue
            if name in seen:   # items have no setting: a second same-named entry would collide
                self.warn(parsed, f"{bench}: per-instance results of a second entry named {name!r} skipped")
                continue
            seen.add(name)
            frames.append(pd.DataFrame({
                "benchmark": bench,
                "model": name,
                "item_id": list(details),
                "item_date": pd.NaT,
                "score": [_resolved_flag(v) for v in details.values()],
            }))
        return frames

    # the declared cases (scrapers/cases.py), run by tests/unit/test_scraper_cases.py
    CASES = (
        Case("swebench/leaderboards_2025-05-07.json", scores=5, items=0, meta={"variant": "json"}, spots=(
            S(model="SWE-agent 1.0 (Claude 3.7 Sonnet)")(
                benchmark="swebench_full", setting="20250227_sweagent-claude-3-7-20250219", score=0.3383,
                raw_value="33.83", n_items=2294, evaluated_at="2025-02-27",
                model_release_date=None),      # `date` is a submission date, never a model date
            S(model="Blackbox AI Agent")(benchmark="swebench_verified", n_items=500, score=0.628),
        )),
        Case("swebench/leaderboards_2025-11-24.json", scores=6, items=12,
             benchmarks=frozenset({"swebench_bash_only", "swebench_verified", "swebench_multimodal"}), spots=(
                 # two Verified entries named "Warp" are kept apart by their folder
                 S(model="Warp", setting="20250901_warp")(score=0.756),
                 S(model="Warp", setting="20250623_warp")(score=0.71),
                 S(model="GUIRepair + o3 (2025-04-16)")(n_items=517),
                 # per_instance_details trimmed to 4 instances on 3 entries
                 S("items", benchmark="swebench_bash_only", model="Gemini 3 Pro Preview (2025-11-18)",
                   item_id="pytest-dev__pytest-10356")(score=0.0, item_date=None),
                 S("items", benchmark="swebench_verified", model="mini-SWE-agent + Gemini 3 Pro Preview (2025-11-18)",
                   item_id="django__django-11532")(score=1.0),
             )),
        Case("swebench/index_2025-05-21.html", scores=6, meta={"variant": "html_table"}, warnings=("folder",),
             spots=(
                 S(model="OpenHands")(benchmark="swebench_verified", score=0.658, evaluated_at="2025-04-15"),
                 # no folder in this layout: the two "devlo" entries are told apart by submission date
                 S(model="devlo", setting="2024-12-13")(score=0.582),
                 S(model="devlo", setting="2024-11-08")(score=0.542),
             )),
        Case("swebench/index_2025-11-18.html", scores=4, meta={"variant": "html_script"}, spots=(
            S(model="ExpeRepair-v1.0 + Claude 4 Sonnet")(benchmark="swebench_lite", n_items=300, score=0.6033,
                                                           setting="20250625_ExpeRepair-v1_claude-4-sonnet-20250514"),
            S(model="Claude 4 Opus (20250514)")(benchmark="swebench_bash_only"),
        )),
        snap("swebench/swebench_2025-05-07.json", 168, items=0, spots=(
            S(benchmark="swebench_full", setting="20250227_sweagent-claude-3-7-20250219")(score=0.3383),
            S(benchmark="swebench_verified", setting="20250316_augment_agent_v0")(evaluated_at="2025-03-16"))),
        snap("swebench/swebench_2025-11-18.json", 299, items=0, spots=(
            S(benchmark="swebench_bash_only", model="Claude 4.5 Sonnet (20250929)")(score=0.706),
            S(benchmark="swebench_lite", setting="20250625_ExpeRepair-v1_claude-4-sonnet-20250514")(n_items=300))),
        snap("swebench/swebench_2025-11-24.json", 306, items=17000, spots=(
            S(benchmark="swebench_bash_only", model="Gemini 3 Pro Preview (2025-11-18)")(score=0.742),
            S(benchmark="swebench_verified", setting="20250928_trae_doubao_seed_code")(score=0.788))),
        snap("swebench/swebench_index_2025-05-21.html", 178, items=0, spots=(
            S(benchmark="swebench_verified", model="OpenHands")(score=0.658),
            S(benchmark="swebench_multimodal", model="Globant Code Fixer Agent")(n_items=517))),
        snap("swebench/swebench_index_2025-11-18.html", 299, items=0, spots=(
            S(benchmark="swebench_bash_only", model="Claude 4.5 Sonnet (20250929)")(score=0.706),
            S(benchmark="swebench_verified", setting="20250928_trae_doubao_seed_code")(evaluated_at="2025-09-28"))),
    )


def _tags(tags: Any) -> str | None:
    """A result's `Model: …` tags joined by '; ' (registry.identity reads them); None when it has none.

    The underlying model(s) of an agent system: registry.identity makes a bash-only row the
    model run of its one tagged model and attaches a single tagged model to a system.
    """
    if not isinstance(tags, list):
        return None
    named = [str(t).strip() for t in tags if isinstance(t, str) and t.strip().lower().startswith("model:")]
    return "; ".join(named) or None


def _resolved_flag(detail: Any) -> float:
    """An instance's `resolved` boolean as 1.0 / 0.0 (NaN when absent, rejected by validate)."""
    value = detail.get("resolved") if isinstance(detail, dict) else None
    return float(value) if isinstance(value, (bool, int)) else float("nan")

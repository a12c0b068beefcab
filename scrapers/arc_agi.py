"""ARC Prize leaderboard (arcprize.org): `evaluations.json` with `models.json` and `datasets.json`.

Formats read (sniffed from the content, so later files parse too):
- evaluations: a list of `{datasetId, modelId, score (0-1), costPerTask | cost (USD),
  display, …}`, or `{generatedAt, evaluations: [...]}` whose rows also carry `modelDisplayName`,
  `modelReleaseDate`, `datasetDisplayName` (the newer layout: no models file needed);
- models (aux, a name containing ``models``): `{id, displayName, modelReleaseDate, providerId,
  modelType, modelGroup, …}`, a list or `{models: [...]}`; datasets (aux) `{id, displayName}`;
- the wide CSV export (`leaderboard.csv`): `Config, …, Model_Release_Date, <datasetId>_Score,
  <datasetId>_Cost_Per_Task, …`.

Tables. A dataset id is `v<version>_<split>` (`v1_Semi_Private`, `v2_Public_Eval`, later
`v3_*`): each ARC-AGI version is its own benchmark (`arc_agi` for version 1 — the paper's
ARC-AGI row —, `arc_agi_2`, `arc_agi_3`, …: other tasks, other release, other registry facts)
and each split its own question set, so `table_version` = the split's slug (`semi_private`,
`public_eval`, `private_eval`). A dataset id of another form keeps benchmark `arc_agi` with the
id's slug as table_version, with a warning. n_items is set for the splits whose task counts
ARC Prize states (`SPLIT_TASKS`); other splits fall back to the registry's n of their version.
Cost per task goes to `<benchmark>_cost_per_task` (metric `cost_usd`, same table_version); from
ARC-AGI-3 on (`RUN_COST_FROM_VERSION`) a bare `cost` is the whole run's cost:
`<benchmark>_run_cost` (an explicit `costPerTask` stays a cost per task).

Rows: model = `modelId` (the stable key; `displayName` is a label such as ``o3 (low)*``);
the human baselines (`modelGroup` Human: panel, MTurkers, STEM graduates) are reference rows
(`is_reference`: shown, never in a top k); a custom solution (`modelType` Custom: the Kaggle
entries ARChitects, Icecuber) is tagged `System: custom`, an agent system (registry/identity.py),
never ranked with the model runs; efforts and budgets in a modelId (`o3-high`, `o1 - low`,
`…-thinking-xhigh`, `Claude 3.7 Thinking 16K`) are the shared variant markers (common.naming); `display: false` rows are stored with an
excluded_reason (the board hides them). Release dates (`modelReleaseDate`) go to the scores'
`model_release_date` and, with provenance ``leaderboard`` and the provider (`providerId`: who made
it, `Human` for the baselines), to the models frame (model dates from data; an entry with a
provider and no date is listed too). No CIs are published.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Mapping, Sequence

import pandas as pd

from common.naming import NamingRules
from scrapers.base import ParsedSnapshot, Scraper
from scrapers.normalize import clean_name, is_missing, parse_date, parse_number, slug
from scrapers.cases import Case, Has, S, snap

# (version, split slug) -> tasks in that split, as ARC Prize states them
SPLIT_TASKS: dict[tuple[int, str], int] = {
    (1, "semi_private"): 100, (1, "private_eval"): 100, (1, "public_eval"): 400,
    (2, "semi_private"): 120, (2, "private_eval"): 120, (2, "public_eval"): 120,
}
# From this ARC-AGI version on (interactive games: no fixed set of tasks to divide by) the board's
# `cost` is what the whole run cost: `<benchmark>_run_cost`, never a cost per task.
RUN_COST_FROM_VERSION = 3
_DATASET = re.compile(r"^v(\d+)[_-](.+)$", re.I)
_REFERENCE_GROUPS = {"human"}
_CUSTOM_TYPES = {"custom"}     # modelType of a solution built for the prize (its own system), not a model run
CUSTOM_TAG = "System: custom"
HIDDEN = "not displayed on the board (display: false)"


def benchmark_of(dataset_id: str) -> tuple[str, str, int | None]:
    """'v2_Semi_Private' -> ('arc_agi_2', 'semi_private', 120); unknown forms -> ('arc_agi', slug, None)."""
    m = _DATASET.match(str(dataset_id).strip())
    if not m:
        return "arc_agi", slug(dataset_id), None
    version, split = int(m.group(1)), slug(m.group(2))
    return ("arc_agi" if version == 1 else f"arc_agi_{version}"), split, SPLIT_TASKS.get((version, split))


def _first(d: Mapping[str, Any], *keys: str) -> Any:
    """The first of `keys` present with a value (fields renamed between versions)."""
    for k in keys:
        if k in d and not is_missing(d[k]):
            return d[k]
    return None


def _records(data: Any, key: str) -> list[dict]:
    """A list of objects, given bare or under `key` (or `data`)."""
    if isinstance(data, dict):
        data = data.get(key, data.get("data"))
    return [r for r in data if isinstance(r, dict)] if isinstance(data, list) else []


class ArcAgiScraper(Scraper):
    name = "arc_agi"
    # a custom solution (modelType Custom, tagged `System: custom`) is an agent system
    NAMING = NamingRules(system_tag=r"(^|;)\s*System:\s*custom\b")
    parser_version = 3   # 2: custom solutions tagged `System: custom` (model_tag); 3: dateless providers listed
    page = "https://arcprize.org/leaderboard"
    urls = ("https://arcprize.org/media/data/evaluations.json",
            "https://arcprize.org/media/data/models.json",
            "https://arcprize.org/media/data/datasets.json")
    min_rows = 10   # the 2025-04 file has 89 evaluations

    def parse(self, content: bytes, *, fetched_at: datetime, aux: Mapping[str, bytes] | None = None,
              filename: str | None = None) -> ParsedSnapshot:
        parsed = ParsedSnapshot(source=self.name)
        text = self.data_text(content).lstrip()
        if text.startswith(("[", "{")):
            evaluations = self._evaluations(text)
            models = self._models(aux or {}, parsed)
            parsed.meta["variant"] = "json"
        else:
            evaluations, models = self._wide_csv(text)
            parsed.meta["variant"] = "csv"
        rows = []
        unknown: set[str] = set()
        for ev in evaluations:
            dataset, model = _first(ev, "datasetId", "dataset_id", "dataset"), _first(ev, "modelId", "model_id", "model")
            if dataset is None or model is None:
                rows.append({"benchmark": None if dataset is None else str(dataset), "model": model,
                             "score": None, "metric": "proportion"})
                continue
            bench, split, n = benchmark_of(str(dataset))
            if not _DATASET.match(str(dataset).strip()):
                unknown.add(str(dataset))
            info = models.get(str(model), {})
            group = str(_first(info, "modelGroup") or _first(ev, "modelGroup") or "").strip().lower()
            kind = str(_first(info, "modelType") or _first(ev, "modelType") or "").strip().lower()
            release = parse_date(_first(ev, "modelReleaseDate") or _first(info, "modelReleaseDate"))
            hidden = ev.get("display") is False or str(ev.get("display")).lower() == "false"
            common = {"model": str(model).strip(), "setting": "", "table_version": split,
                      "model_tag": CUSTOM_TAG if kind in _CUSTOM_TYPES else None,
                      "model_release_date": release, "is_reference": group in _REFERENCE_GROUPS,
                      "excluded_reason": HIDDEN if hidden else ""}
            score = _first(ev, "score")
            rows.append({**common, "benchmark": bench, "score": self._number(score), "raw_value": _raw(score),
                         "metric": "proportion", "n_items": n})
            per_task, cost = _first(ev, "costPerTask", "cost_per_task"), _first(ev, "cost")
            named = _DATASET.match(str(dataset).strip())
            version = int(named.group(1)) if named else 1
            if self._number(per_task) is None and version >= RUN_COST_FROM_VERSION:
                target, per_task = f"{bench}_run_cost", cost       # the whole run's cost, not per task
            else:
                target, per_task = f"{bench}_cost_per_task", per_task if self._number(per_task) is not None else cost
            if self._number(per_task) is not None:
                rows.append({**common, "benchmark": target, "score": self._number(per_task),
                             "raw_value": _raw(per_task), "metric": "cost_usd"})
        if not rows:
            raise self.error("no evaluations (empty list or changed layout)")
        if unknown:
            self.warn(parsed, f"dataset id(s) not of the form v<N>_<split>: {sorted(unknown)}; kept under arc_agi")
        parsed.scores = pd.DataFrame(rows)
        # the board's model list: who made each entry (`providerId`: `Human` for the human baselines)
        # and when, where it says either (a dateless entry's provider is a statement too)
        listed = [{"model": mid, "org": clean_name(_first(m, "providerId", "providerDisplayName")),
                   "release_date": parse_date(_first(m, "modelReleaseDate")), "provenance": "leaderboard"}
                  for mid, m in models.items()]
        parsed.models = pd.DataFrame([r for r in listed if r["release_date"] is not None or r["org"] is not None],
                                     columns=["model", "org", "release_date", "provenance"])
        return parsed

    def backfill_aux(self, name: str, siblings: Sequence[str]) -> list[str] | None:
        return _backfill_aux(name, siblings)

    @staticmethod
    def _number(value: Any) -> float | None:
        try:
            return parse_number(value)
        except (TypeError, ValueError):
            return None

    def _evaluations(self, text: str) -> list[dict]:
        data = self.json(text, where="evaluations.json")
        rows = _records(data, "evaluations")
        if not rows:
            raise self.error("evaluations.json: expected a list of evaluations or {\"evaluations\": [...]}")
        found = sorted(set().union(*rows))[:12]
        # mandatory fields: without any of them no row can be read, so the file is refused (never "0 rows")
        for field, keys in (("datasetId", ("datasetId", "dataset_id", "dataset")),
                            ("modelId", ("modelId", "model_id", "model")), ("score", ("score",))):
            if not any(k in r for r in rows for k in keys):
                raise self.error(f"evaluations have no {field} field; found {found}")
        return rows

    def _models(self, aux: Mapping[str, bytes], parsed: ParsedSnapshot) -> dict[str, dict]:
        """modelId -> its models.json object ({} without the file: the newer evaluations carry the fields)."""
        name = next((k for k in aux if "models" in k.lower()), None)
        if name is None:
            return {}
        data = self.json(aux[name], where=name, fatal=False, parsed=parsed)
        out = {}
        for m in _records(data, "models"):
            mid = _first(m, "id", "modelId")
            if mid is not None:
                out[str(mid)] = m
        return out

    def _wide_csv(self, text: str) -> tuple[list[dict], dict[str, dict]]:
        """The wide export: one row per config, `<dataset>_Score` / `<dataset>_Cost_Per_Task` columns."""
        df = self.csv(text, where="leaderboard.csv")
        key = next((c for c in df.columns if c.lower() in ("config", "modelid", "model_id", "id")), None)
        datasets = [c[:-len("_Score")] for c in df.columns if c.endswith("_Score")]
        if key is None or not datasets:
            raise self.error(f"leaderboard.csv: no Config column or no <dataset>_Score columns; found {list(df.columns)[:12]}")
        evaluations, models = [], {}
        for rec in df.to_dict("records"):
            model = rec[key]
            models[model] = {"modelReleaseDate": rec.get("Model_Release_Date"), "providerId": rec.get("Provider"),
                             "modelGroup": rec.get("Model_Group"), "modelType": rec.get("Model_Type")}
            for d in datasets:
                if is_missing(rec.get(f"{d}_Score")) or str(rec.get(f"{d}_Score")).strip() == "":
                    continue
                evaluations.append({"datasetId": d, "modelId": model, "score": rec[f"{d}_Score"],
                                    "costPerTask": rec.get(f"{d}_Cost_Per_Task"), "display": rec.get("display")})
        return evaluations, models

    # the declared cases (scrapers/cases.py), run by tests/unit/test_scraper_cases.py
    CASES = (
        # 28 evaluations of 10 models -> 28 score + 24 cost rows; o3-high and Gemini 2.5 hidden (display: false)
        Case("arc_agi/evaluations.json", replay="evaluations.json", aux=(("models.json", "arc_agi/models.json"),
                                                        ("datasets.json", "arc_agi/datasets.json")),
             scores=52, rejects=0, models=10, excluded=8, spots=(
                 S(benchmark="arc_agi", model="R1", table_version="semi_private")(
                     score=0.158, n_items=100, model_release_date="2025-01-22", is_reference=False),
                 S(benchmark="arc_agi_2", model="R1", table_version="public_eval")(score=0.003, n_items=120),
                 S(benchmark="arc_agi_2_cost_per_task", model="R1", table_version="semi_private")(score=0.08,
                                                                                                 metric="cost_usd"),
                 S(benchmark="arc_agi", model="2025_human_panel", table_version="semi_private")(score=0.98,
                                                                                               is_reference=True),
                 S(benchmark="arc_agi", model="o3-high", table_version="semi_private")(
                     score=0.875, excluded_reason=Has("display: false")),
                 S(benchmark="arc_agi", model="ARChitects", table_version="semi_private")(model_tag="System: custom"),
                 S(benchmark="arc_agi_2", model="R1", table_version="public_eval")(model_tag=None),
                 S("models", model="ARChitects")(release_date="2024-11-03", org="ARC Prize 2024"),
                 S("models", model="2025_human_panel")(release_date=None, org="Human"))),
        # the later layout: one object, model fields inline, `cost` for costPerTask, an ARC-AGI-3 split
        Case("arc_agi/evaluations_later_layout.json", scores=9, rejects=0, spots=(
            S(benchmark="arc_agi_2", model="gpt-5-2-high", table_version="semi_private")(
                score=0.529, model_release_date="2025-12-11"),
            S(benchmark="arc_agi_2_cost_per_task", model="gpt-5-2-high")(score=1.39),
            S(benchmark="arc_agi_3", model="gpt-5-2-high", table_version="public_preview")(score=0.125, n_items=None),
            S(benchmark="arc_agi_2", model="human_panel")(is_reference=True))),
        # 89 evaluations + 85 numeric costs; 6 hidden (display: false), 2 of them with a cost
        snap("arc_agi/arc_agi_evaluations_2025-04-16.json", 174, rejects=0, models=33, excluded=8,
             aux=(("models.json", "arc_agi/arc_agi_models_2025-04-16.json"),
                  ("datasets.json", "arc_agi/arc_agi_datasets_2025-04-16.json"),
                  ("providers.json", "arc_agi/arc_agi_providers_2025-04-16.json")), spots=(
                 S(benchmark="arc_agi", model="o3-low", table_version="semi_private")(score=0.757),
                 S(benchmark="arc_agi_2", model="ARChitects", table_version="semi_private")(score=0.025))),
        # the wide CSV export; gpt-4o's v1 semi-private cell is 4.500 (a percent in a 0-1 column): rejected
        snap("arc_agi/arc_agi_leaderboard_2025-04-14.csv", 151, rejects=1, models=30, spots=(
            S(benchmark="arc_agi", model="ARChitects", table_version="semi_private")(score=0.56,
                                                                                      model_release_date="2024-11-03"),)),
    )


def _raw(value: Any) -> str | None:
    return None if value is None else str(value)


_AUX_KINDS = ("models", "datasets", "providers")
_FILE_DATE = re.compile(r"_(\d{4}-\d{2}-\d{2})\.[A-Za-z0-9]+$")


def _backfill_aux(name: str, siblings: Sequence[str]) -> list[str] | None:
    """An evaluations copy goes with the models and datasets copies of its date (else the newest
    before it); those copies are never ingested alone; any other file (the CSV export) alone."""
    kind = next((k for k in _AUX_KINDS if f"_{k}_" in name), None)
    if kind is not None:
        return None
    if "_evaluations_" not in name:
        return []
    date = _FILE_DATE.search(name)
    out = []
    for k in ("models", "datasets"):
        dated = sorted((m[1], s) for s in siblings if f"_{k}_" in s and (m := _FILE_DATE.search(s)))
        usable = [s for d, s in dated if date is None or d <= date[1]]
        if usable:
            out.append(usable[-1])
    return out


"""Artificial Analysis LLM leaderboard (artificialanalysis.ai): its model list with evaluations.

Two layouts of one list of models, sniffed from the content:
- the public page's payload (`{"meta": {"parser_version": "public-web-v1", …}, "models": [{id,
  name, slug, release_date, reasoning_model, deprecated, creator{name}, evaluations{…},
  open_weights{is_open_weights}, …}]}`): the copies in ../shared/snapshots, also the format
  `benchwatch ingest` / `backfill` take;
- the API (`GET https://artificialanalysis.ai/api/v2/data/llms/models` with header `x-api-key`):
  `{"status": 200, "data": [{id, name, slug, release_date, model_creator{name}, evaluations{…},
  pricing{…}, …}]}`, as AA's API documentation shows it. This parser is built from a
  hand-written fixture of that documented shape and is **untested against the live service**.

The live source needs a key: `ARTIFICIAL_ANALYSIS_API_KEY`, or the Prefect Secret block
`artificial-analysis-api-key` (resolved by flows/secrets.py, handed down by the CLI and the
Prefect task). Without one, `benchwatch run` reports the source as skipped in one line (never
failed); replays and ingests need no key.

Rows: model = AA's `slug` (unique and stable; names carry settings such as ``(Non-reasoning,
Low Effort)``, which registry.identity reads off the slug as variants). Each evaluation is a
benchmark of its own table (source `artificial_analysis`: never pooled with another source's
run of the same benchmark): `gpqa` → `gpqa_diamond`, `hle` → `humanitys_last_exam`,
`tau2_bench` → `tau2_bench_telecom` (AA runs the telecom domain only: the τ²-bench telecom question
set, n from the registry; never `tau2_bench`, the mean of three domains), `aime`/`aime25` → `aime_2025`, the others by their own name (`scicode`, `ifbench`,
`aa_lcr`, `terminal_bench_hard`, `critpt`, `mmmu_pro`, …). Scores are 0-1 proportions except
the AA indexes (`artificial_analysis_<x>_index` → `aa_<x>_index`), `aa_omniscience` (−100..100)
and `gdpval_aa_normalized`, which are `index` metrics. An index AA marks as estimated
(`…_is_estimated: true`) is stored with an excluded_reason. An evaluation key not listed here
is kept under its own name (a proportion when every value is in [0, 1], else an index) with a
warning. `null` = not evaluated: no row. Release dates go to the scores and, with provenance
``leaderboard``, to the models frame. AA publishes no n and no CIs for its scores; GDPval-AA's
Elo (`breakdowns.gdpval`: `elo`, `lower95ci`, `upper95ci`, the rating its normalized index is
made from) is `gdpval_aa_elo` (metric `elo`) with that 95 % interval as ci_low/ci_high.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Mapping

import pandas as pd

from common.naming import NamingRules
from scrapers.base import ParsedSnapshot, Scraper
from scrapers.normalize import clean_name, is_missing, parse_date, slug
from scrapers.cases import Absent, Case, Has, S, snap

PROPORTION, INDEX = "proportion", "index"
# AA evaluation key -> (benchmark id, metric, table_version, n_items stated here or None)
KNOWN: dict[str, tuple[str, str, str, int | None]] = {
    "gpqa": ("gpqa_diamond", PROPORTION, "", None),
    "hle": ("humanitys_last_exam", PROPORTION, "", None),
    "tau2_bench": ("tau2_bench_telecom", PROPORTION, "", None),
    "terminal_bench_hard": ("terminal_bench_hard", PROPORTION, "", None),
    "scicode": ("scicode", PROPORTION, "", None),
    "ifbench": ("ifbench", PROPORTION, "", None),
    "aa_lcr": ("aa_lcr", PROPORTION, "", None),
    "critpt": ("critpt", PROPORTION, "", None),
    "mmmu_pro": ("mmmu_pro", PROPORTION, "", None),
    "apex_agents": ("apex_agents", PROPORTION, "", None),
    "aa_omniscience": ("aa_omniscience", INDEX, "", None),
    "aa_omniscience_accuracy": ("aa_omniscience_accuracy", PROPORTION, "", None),
    "aa_omniscience_non_hallucination": ("aa_omniscience_non_hallucination", PROPORTION, "", None),
    "gdpval_aa_normalized": ("gdpval_aa", INDEX, "", None),
    "mmlu_pro": ("mmlu_pro", PROPORTION, "", None),
    "livecodebench": ("livecodebench", PROPORTION, "", None),
    "math_500": ("math_500", PROPORTION, "", None),
    "aime": ("aime_2025", PROPORTION, "", None),
    "aime25": ("aime_2025", PROPORTION, "", None),
    "aime_25": ("aime_2025", PROPORTION, "", None),
}
# GDPval-AA's rating (breakdowns.gdpval: Elo with a published 95 % interval), beside its normalized index
GDPVAL_ELO, ELO = "gdpval_aa_elo", "elo"
_AA_INDEX = re.compile(r"^artificial_analysis_(.+_index)$")
ESTIMATED = "index estimated by Artificial Analysis (…_is_estimated)"


def _number_or_none(value: Any) -> float | None:
    if is_missing(value) or isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def evaluation_target(key: str) -> tuple[str, str, str, int | None] | None:
    """(benchmark, metric, table_version, n) of a known evaluation key, None for an unknown one."""
    if key in KNOWN:
        return KNOWN[key]
    m = _AA_INDEX.match(key)
    return (f"aa_{m.group(1)}", INDEX, "", None) if m else None


class ArtificialAnalysisScraper(Scraper):
    name = "artificial_analysis"
    # its slugs: gpt-5-4-nano-medium, claude-sonnet-4-6-non-reasoning-low-effort
    # the reasoning mode; `-high-effort` and bare `-high`: the shared markers (COMMON_VARIANTS)
    NAMING = NamingRules(variants=((r"-(non-reasoning|reasoning)$", "mode"),))
    page = "https://artificialanalysis.ai/leaderboards/models"
    urls = ("https://artificialanalysis.ai/api/v2/data/llms/models",)
    min_rows = 50    # the April 2026 payloads list 445 and 479 models
    secret = "ARTIFICIAL_ANALYSIS_API_KEY"
    secret_block = "artificial-analysis-api-key"

    def request_headers(self, secret: str) -> dict[str, str]:
        return {"x-api-key": secret}

    def parse(self, content: bytes, *, fetched_at: datetime, aux: Mapping[str, bytes] | None = None,
              filename: str | None = None) -> ParsedSnapshot:
        parsed = ParsedSnapshot(source=self.name)
        data = self.json(content)
        if not isinstance(data, dict):
            raise self.error("expected a JSON object with a 'models' (page payload) or 'data' (API) list")
        if isinstance(data.get("models"), list):
            models, layout = data["models"], "page_payload"
            meta: dict = data["meta"] if isinstance(data.get("meta"), dict) else {}
            parsed.meta["parser_version"] = meta.get("parser_version")
        elif isinstance(data.get("data"), list):
            models, layout = data["data"], "api"
        else:
            raise self.error(f"no 'models' or 'data' list; found keys {sorted(data)[:10]}")
        parsed.meta["layout"] = layout
        models = [m for m in models if isinstance(m, dict)]
        if not any(isinstance(m.get("evaluations"), dict) for m in models):
            raise self.error("no model has an 'evaluations' object (changed layout?)")

        rows: list[dict] = []
        model_rows: list[dict] = []
        unknown: dict[str, list[int]] = {}
        unnamed = 0
        for m in models:
            model = clean_name(m.get("slug")) or clean_name(m.get("id")) or clean_name(m.get("name"))
            if model is None:
                unnamed += 1
                continue
            creator = m.get("creator") if isinstance(m.get("creator"), dict) else m.get("model_creator")
            org = clean_name(creator.get("name")) if isinstance(creator, dict) else None
            release = parse_date(m.get("release_date"))
            ow = m.get("open_weights")
            open_weights = ow.get("is_open_weights") if isinstance(ow, dict) else (ow if isinstance(ow, bool) else None)
            model_rows.append({"model": model, "org": org, "release_date": release, "provenance": "leaderboard",
                               "open_weights": open_weights})
            evals = m.get("evaluations") if isinstance(m.get("evaluations"), dict) else {}
            for key, value in evals.items():
                if key.endswith("_is_estimated") or is_missing(value) or isinstance(value, (bool, dict, list)):
                    continue
                try:
                    score = float(value)
                except (TypeError, ValueError):
                    rows.append({"benchmark": key, "model": model, "score": None, "raw_value": str(value),
                                 "metric": PROPORTION})
                    continue
                target = evaluation_target(key)
                if target is None:
                    unknown.setdefault(key, []).append(len(rows))
                    target = (slug(key), PROPORTION, "", None)
                bench, metric, version, n = target
                estimated = evals.get(f"{key}_is_estimated") is True
                rows.append({"benchmark": bench, "model": model, "setting": "", "score": score,
                             "raw_value": str(value), "metric": metric, "table_version": version, "n_items": n,
                             "model_release_date": release, "excluded_reason": ESTIMATED if estimated else ""})
            rows.extend(self._gdpval_elo(m, model, release, parsed))
        if models and unnamed == len(models):
            raise self.error("no model has a 'slug', 'id' or 'name' (changed layout?)")
        if unnamed:
            self.warn(parsed, f"{unnamed} model(s) without a 'slug', 'id' or 'name' skipped")
        if not rows:
            raise self.error("no evaluation values (every model's evaluations are null)")
        for key, positions in unknown.items():   # a new evaluation: a proportion if it looks like one
            values = [rows[i]["score"] for i in positions]
            if not all(0.0 <= v <= 1.0 for v in values):
                for i in positions:
                    rows[i]["metric"] = INDEX
        if unknown:
            self.warn(parsed, f"evaluation(s) not known to this parser, kept under their own name: {sorted(unknown)}")
        parsed.scores = pd.DataFrame(rows)
        parsed.models = pd.DataFrame(model_rows).drop_duplicates("model")
        parsed.meta["deprecated"] = sum(1 for m in models if m.get("deprecated") is True)
        return parsed

    def _gdpval_elo(self, m: dict, model: str, release: Any, parsed: ParsedSnapshot) -> list[dict]:
        """GDPval-AA's Elo with its published 95 % interval (`breakdowns.gdpval`: elo, lower95ci,
        upper95ci), the rating the normalized index is made from: one row, or none without an Elo."""
        breakdowns = m.get("breakdowns")
        gdp = breakdowns.get("gdpval") if isinstance(breakdowns, dict) else None
        if not isinstance(gdp, dict) or is_missing(gdp.get("elo")) or isinstance(gdp.get("elo"), bool):
            return []
        try:
            elo = float(gdp["elo"])
        except (TypeError, ValueError):
            return [{"benchmark": GDPVAL_ELO, "model": model, "score": None, "raw_value": str(gdp["elo"]),
                     "metric": ELO}]
        low, high = (_number_or_none(gdp.get(k)) for k in ("lower95ci", "upper95ci"))
        if (low is None) != (high is None):
            self.warn(parsed, f"{model}: GDPval Elo interval has one end only; stored without an interval")
            low = high = None
        return [{"benchmark": GDPVAL_ELO, "model": model, "setting": "", "score": elo, "raw_value": str(gdp["elo"]),
                 "metric": ELO, "ci_low": low, "ci_high": high, "table_version": "", "n_items": None,
                 "model_release_date": release, "excluded_reason": ""}]

    # the declared cases (scrapers/cases.py), run by tests/unit/test_scraper_cases.py
    CASES = (
        # the API's documented shape (hand-written: untested against the live service); 6 models x 10
        # evaluations, one null (aime), one key the parser does not know (kept under its name, warned)
        Case("artificial_analysis/models_api.json", scores=60, rejects=0, models=6,
             meta={"layout": "api"}, warnings=("a_new_eval",), spots=(
                 S(benchmark="gpqa_diamond", model="o3-mini")(score=0.748, metric="proportion", table_version="",
                                                              model_release_date="2025-01-31"),
                 S(benchmark="aa_math_index", model="deepseek-r1")(score=82.7, metric="index"),
                 S(benchmark="aime_2025", model="gpt-4o")(score=0.15),
                 S(benchmark="a_new_eval", model="llama-3-3-instruct-70b")(score=0.512, metric="proportion"),
                 Absent(dict(benchmark="aime_2025", model="llama-3-3-instruct-70b")),
                 S("models", model="claude-3-7-sonnet-thinking")(org="Anthropic", release_date="2025-02-24"))),
        # the public page's payload (public-web-v1), 6 models of the 2026-04-30 copy
        Case("artificial_analysis/llms_page_payload.json", scores=82, rejects=0, models=6,
             excluded=1, meta={"layout": "page_payload", "parser_version": "public-web-v1", "deprecated": 1}, spots=(
                 S(benchmark="tau2_bench_telecom", model="gemini-3-1-pro-preview")(score=0.956, table_version="",
                                                                                   n_items=None),
                 S(benchmark="aa_intelligence_index", model="r1-1776")(excluded_reason=Has("estimated"), metric="index"),
                 S(benchmark="aa_omniscience", model="gpt-5-nano-medium")(score=-24.883, metric="index"),
                 S(benchmark="gpqa_diamond", model="mimo-v2-5-0424")(score=0.849, model_release_date=None),
                 S("models", model="gpt-5-5-high")(release_date="2026-04-23", org="OpenAI", open_weights=False))),
        # every non-null evaluation value but the *_is_estimated flags; 120 estimated intelligence indexes
        # GDPval's Elo and its 95 % interval (breakdowns.gdpval): 5 models x 11 evaluations + 4 Elo rows
        Case("artificial_analysis/gdpval_breakdowns.json", scores=59, rejects=0, models=5,
             warnings=("interval has one end only",), spots=(
                 S(benchmark="gdpval_aa_elo", model="model-a-high")(score=900.5, ci_low=875.0, ci_high=926.0,
                                                                     metric="elo"),
                 S(benchmark="gdpval_aa_elo", model="model-d")(score=1260.5, ci_low=None, ci_high=None),
                 S(benchmark="gdpval_aa", model="model-e")(score=0.6, metric="index"),
                 Absent(dict(benchmark="gdpval_aa_elo", model="model-e")))),
        snap("artificial_analysis/artificial_analysis_llms_2026-04-10.json", 5827, rejects=0,
             models=445, excluded=120, spots=(
                 S(benchmark="gpqa_diamond", model="gemini-3-1-pro-preview")(score=0.941, model_release_date="2026-02-19"),)),
        snap("artificial_analysis/artificial_analysis_llms_2026-04-30.json", 6370, rejects=0,
             models=479, excluded=120, spots=(
                 S(benchmark="gpqa_diamond", model="gemini-3-1-pro-preview")(score=0.941),)),
    )

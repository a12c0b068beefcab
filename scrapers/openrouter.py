"""OpenRouter model list (`/api/v1/models`): model metadata, no scores.

`{"data": [{id ("org/model"), name ("Org: Model"), created (unix seconds), knowledge_cutoff
("YYYY-MM-DD" or null), hugging_face_id, ...}]}`. One models row per listed model:
- model = `id` (unique and stable; `name` is a display string), org = the `Org:` prefix of
  `name`, else the id's namespace;
- release_date = `created`, which is when OpenRouter *listed* the model: a proxy for the
  release date (e.g. gpt-4 is listed 2023-05-28, two months after its release), hence
  provenance 'listing' for both dates;
- knowledge_cutoff as stated (null for ~45% of models);
- open_weights = True when a Hugging Face id is given, else unknown (NULL, not False).
Not models, skipped with a count: `openrouter/*` routers (`openrouter/auto`), and `~org/...-latest`
aliases that float to the newest model. A `:free` / `:thinking` variant is the same model at
another price or mode, listed later: it is folded into its base id (the base entry wins; a
model listed only as a variant keeps the variant's dates under the base id).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Mapping

import pandas as pd

from scrapers.base import ParsedSnapshot, Scraper
from scrapers.normalize import parse_date
from scrapers.cases import Case, S, snap

ROUTER_NAMESPACE = "openrouter"


def _org(entry: dict[str, Any], model_id: str) -> str | None:
    name = str(entry.get("name") or "")
    if ":" in name:
        return name.split(":", 1)[0].strip() or None
    return model_id.split("/", 1)[0] if "/" in model_id else None


class OpenrouterScraper(Scraper):
    name = "openrouter"
    urls = ("https://openrouter.ai/api/v1/models",)
    min_rows = 50   # the 2026-05 list has 364 entries
    produces = "models"

    def parse(self, content: bytes, *, fetched_at: datetime, aux: Mapping[str, bytes] | None = None,
              filename: str | None = None) -> ParsedSnapshot:
        data = self.json(content)
        if not isinstance(data, dict) or not isinstance(data.get("data"), list):
            raise self.error("expected {\"data\": [...]} (the /api/v1/models response)")
        entries = [e for e in data["data"] if isinstance(e, dict)]
        if not entries:
            raise self.error("the model list is empty")
        if not any("id" in e for e in entries):
            raise self.error(f"model entries have no 'id' field; found {sorted(entries[0])[:12]}")
        parsed = ParsedSnapshot(source=self.name)
        if not any("created" in e for e in entries):
            self.warn(parsed, "no 'created' field; release_date NULL")
        if not any("knowledge_cutoff" in e for e in entries):
            self.warn(parsed, "no 'knowledge_cutoff' field; knowledge_cutoff NULL")

        rows, routers, aliases = [], 0, 0
        for e in entries:
            model_id = str(e.get("id") or "").strip()
            if not model_id:
                continue
            if model_id.startswith(ROUTER_NAMESPACE + "/"):
                routers += 1
                continue
            if model_id.startswith("~"):
                aliases += 1
                continue
            rows.append({
                "model": model_id.split(":", 1)[0],
                "org": _org(e, model_id),
                "release_date": parse_date(e.get("created")),
                "knowledge_cutoff": parse_date(e.get("knowledge_cutoff")),
                "provenance": "listing",
                "open_weights": True if e.get("hugging_face_id") else None,
                "variant": ":" in model_id,
            })
        if routers or aliases:
            self.warn(parsed, f"skipped {routers} router(s) and {aliases} '~...-latest' alias(es): not models")
        df = pd.DataFrame(rows)
        # base ids first, then earliest listing: a variant only fills in a base id that is not listed
        df = df.sort_values(["model", "variant", "release_date"], na_position="last", kind="stable")
        folded = int(df["model"].duplicated().sum())
        if folded:
            self.warn(parsed, f"{folded} ':free'/':thinking' variant(s) folded into their base model id")
        parsed.models = df.drop_duplicates("model", keep="first").drop(columns="variant").reset_index(drop=True)
        return parsed

    # the declared cases (scrapers/cases.py), run by tests/unit/test_scraper_cases.py
    CASES = (
        Case("openrouter/models.json", scores=0, models=4, warnings=("router", "variant"), spots=(
            S("models", model="openai/gpt-4")(release_date="2023-05-28", knowledge_cutoff="2021-09-30", org="OpenAI",
                                              open_weights=None, provenance="listing"),
            S("models", model="openai/gpt-oss-120b")(release_date="2025-08-05 17:17:11", open_weights=True,
                                                     provenance="listing"),
            S("models", model="anthropic/claude-opus-4.7-fast")(release_date="2026-05-12 19:10:11", provenance="listing"),
            S("models", model="liquid/lfm-2.5-1.2b-thinking")(org="LiquidAI", provenance="listing"),
        )),
        snap("model_metadata/openrouter_models_2026-05-15.json", 0, filename="models",
             models=334, unique_models=True, spots=(   # 364 - 5 routers - 8 '~' aliases - 17 folded variants
                 S("models", model="openai/gpt-oss-120b")(knowledge_cutoff="2024-06-30"),)),
    )

"""Knowledge cut-off dates from the HaoooWang/llm-knowledge-cutoff-dates README: model metadata.

One markdown table per vendor (`## OpenAI`, `### Anthropic Models`, ...), columns
`Model Name | Company | Cut-off [Date] | Source`; the Anthropic table has two cut-off columns
(`Training Data Cut-off | Reliable Knowledge Cut-off`). Model names are kept as written
(`LLama-2-7B, 13B, 70B`, `Phi-3-*`): splitting or expanding them would be guesswork, and the
alias registry maps them.

Which date is the cutoff: the LATEST date a cell (or the row's cut-off columns) states.
- `Pretraining 2022.09, Finetuning 2023.07` -> 2023-07: fine-tuning data may carry later
  knowledge; - Anthropic's training-data cut-off (later) over its reliable-knowledge cut-off.
Why the latest: post-cutoff slices count an item as "clean" when it is dated after the
cutoff. A later cutoff counts fewer items as clean, so an uncertain cutoff errs toward
fewer false "clean" items, the safe side for contamination analysis.
Precision follows `normalize.parse_date` (project convention): `2023.10` -> 2023-10-01,
`2024` -> 2024-01-01, `early 2023` -> 2023-01-01, `end of 2023` -> 2023-12-01.
Rows with no date (`unknown`, `TBD`) are skipped with a count.

provenance: 'vendor_doc' when the Source link (unwrapped from web.archive.org) points to the
vendor's own site or its GitHub / Hugging Face organisation (`VENDOR_HOSTS`), else
'inferred' (third-party pages such as docsbot.ai or Azure docs for OpenAI models, arXiv
papers, and issue/discussion threads, even in the vendor's own repository).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Mapping
from urllib.parse import urlparse

import pandas as pd

from scrapers._markdown import MarkdownTable, link_urls, tables
from scrapers.base import ParsedSnapshot, Scraper
from scrapers.normalize import parse_date, slug
from scrapers.cases import Absent, Case, S, snap

# vendor (slug of the Company column) -> hosts or host/path prefixes owned by the vendor
VENDOR_HOSTS: dict[str, tuple[str, ...]] = {
    "openai": ("openai.com", "github.com/openai", "huggingface.co/openai"),
    "anthropic": ("anthropic.com", "claude.com"),
    "google": ("google.com", "google.dev", "deepmind.google", "blog.google", "github.com/google",
               "huggingface.co/google"),
    "meta": ("meta.com", "llama.com", "github.com/meta-llama", "huggingface.co/meta-llama",
             "github.com/facebookresearch"),
    "microsoft": ("microsoft.com", "github.com/microsoft", "huggingface.co/microsoft"),
    "qwen": ("qwenlm.github.io", "qwen.ai", "github.com/qwenlm", "huggingface.co/qwen", "alibabacloud.com"),
    "alibaba": ("qwenlm.github.io", "qwen.ai", "github.com/qwenlm", "huggingface.co/qwen", "alibabacloud.com"),
    "deepseek": ("deepseek.com", "github.com/deepseek-ai", "huggingface.co/deepseek-ai"),
    "xai": ("x.ai", "github.com/xai-org", "huggingface.co/xai-org"),
    "xiaomi": ("mi.com", "github.com/xiaomimimo", "huggingface.co/xiaomimimo"),
    "mistral_ai": ("mistral.ai", "github.com/mistralai", "huggingface.co/mistralai"),
}
_DATE_TOKEN = re.compile(
    r"(?:early|mid|late|end of)[- ]\d{4}"
    r"|\d{4}[./-]\d{1,2}(?:[./-]\d{1,2})?"
    r"|(?<![\d.])\d{4}(?![\d.])", re.I)
_ARCHIVE = re.compile(r"^https?://web\.archive\.org/web/[^/]+/(.*)$", re.I)


def latest_date(cell: str) -> datetime | None:
    """The latest date stated in a cut-off cell ('Pretraining 2022.09, Finetuning 2023.07' -> 2023-07-01)."""
    dates = [d for d in (parse_date(t) for t in _DATE_TOKEN.findall(cell or "")) if d is not None]
    return max(dates) if dates else None


def is_vendor_source(url: str, company: str | None) -> bool:
    """Does the (archive-unwrapped) URL belong to the company's own site or org?"""
    m = _ARCHIVE.match(url)
    if m:
        url = m.group(1) if "://" in m.group(1) else "https://" + m.group(1)
    parts = urlparse(url)
    if re.search(r"/(issues|discussions|pull)/", parts.path):
        return False   # a thread in the vendor's repo is a conversation, not its documentation
    host = (parts.hostname or "").lower()
    first = parts.path.strip("/").split("/", 1)[0].lower()
    for owned in VENDOR_HOSTS.get(slug(company or ""), ()):
        if "/" in owned:
            h, org = owned.split("/", 1)
            if host == h and first == org:
                return True
        elif host == owned or host.endswith("." + owned):
            return True
    return False


class KnowledgeCutoffsScraper(Scraper):
    name = "knowledge_cutoffs"
    urls = ("https://raw.githubusercontent.com/HaoooWang/llm-knowledge-cutoff-dates/main/README.md",)
    min_rows = 20   # the first README version (2024-11-14) has 37 dated models
    produces = "models"

    def parse(self, content: bytes, *, fetched_at: datetime, aux: Mapping[str, bytes] | None = None,
              filename: str | None = None) -> ParsedSnapshot:
        parsed = ParsedSnapshot(source=self.name)
        found = [(t, cols) for t in tables(self.data_text(content)) if (cols := self._columns(t)) is not None]
        if not found:
            raise self.error("no markdown table with a 'Model Name' and a 'Cut-off' column in the README")
        rows, undated = [], []
        for table, (model_col, company_col, cutoff_cols, source_col) in found:
            vendor = re.sub(r"\s+models?$", "", table.heading or "", flags=re.I).strip() or None
            for cells in table.rows:
                cells = (cells + [""] * len(table.header))[: len(table.header)]
                model = re.sub(r"\s+", " ", cells[model_col]).strip()
                if not model:
                    continue
                cutoff = max((d for d in (latest_date(cells[i]) for i in cutoff_cols) if d), default=None)
                if cutoff is None:
                    undated.append(model)
                    continue
                company = (cells[company_col].strip() if company_col is not None else "") or vendor
                urls = link_urls(cells[source_col]) if source_col is not None else []
                vendor_doc = any(is_vendor_source(u, company) for u in urls)
                rows.append({"model": model, "org": company, "release_date": None, "knowledge_cutoff": cutoff,
                             "provenance": "vendor_doc" if vendor_doc else "inferred", "open_weights": None})
        if undated:
            self.warn(parsed, f"{len(undated)} model(s) without a cut-off date skipped: {undated[:10]}")
        df = pd.DataFrame(rows, columns=["model", "org", "release_date", "knowledge_cutoff", "provenance", "open_weights"])
        dup = df["model"].duplicated()
        if dup.any():
            self.warn(parsed, f"model(s) listed twice, first kept: {df.loc[dup, 'model'].tolist()}")
            df = df[~dup]
        parsed.models = df.reset_index(drop=True)
        return parsed

    @staticmethod
    def _columns(table: MarkdownTable) -> tuple[int, int | None, list[int], int | None] | None:
        """(model, company, cut-off columns, source) indices, or None if this is not a cut-off table."""
        names = [h.strip().lower() for h in table.header]
        model = next((i for i, n in enumerate(names) if n.startswith("model")), None)
        cutoffs = [i for i, n in enumerate(names) if re.search(r"cut-?\s?off", n)]
        if model is None or not cutoffs:
            return None
        company = next((i for i, n in enumerate(names) if n in ("company", "organization", "vendor")), None)
        source = next((i for i, n in enumerate(names) if n.startswith("source")), None)
        return model, company, cutoffs, source

    # the declared cases (scrapers/cases.py), run by tests/unit/test_scraper_cases.py
    CASES = (
        Case("knowledge_cutoffs/readme_2026-05-04.md", models=9, unique_models=True,
             all_missing=(("models", "release_date"),), warnings=("Qwen3",), spots=(
            Absent({"model": "Qwen3"}, "models"),
            S("models", model="GPT-4*")(knowledge_cutoff="2021-09-01", provenance="inferred"),     # Azure docs, not OpenAI's
            S("models", model="GPT-4.1")(knowledge_cutoff="2024-06-01", provenance="vendor_doc"),  # via web.archive.org
            S("models", model="Claude 2")(knowledge_cutoff="2023-01-01", provenance="inferred", org="Anthropic"),
            S("models", model="Claude 4.5 Sonnet")(knowledge_cutoff="2025-07-01", provenance="vendor_doc"),
            S("models", model="LLama-2-7B, 13B, 70B")(knowledge_cutoff="2023-07-01", provenance="inferred"),
            S("models", model="LLama-3-7B")(knowledge_cutoff="2023-03-01", provenance="vendor_doc"),
            S("models", model="Qwen2-7B-Instruct")(knowledge_cutoff="2023-01-01", provenance="inferred"),
            S("models", model="Qwen2.5")(knowledge_cutoff="2023-12-01", provenance="inferred"),   # 'end of 2023'
            S("models", model="o1")(org="OpenAI", release_date=None),
        )),
        Case("knowledge_cutoffs/readme_2024-11-14.md", models=2, spots=(
            S("models", model="Gemini 1.0 Pro")(knowledge_cutoff="2023-02-01", provenance="vendor_doc"),
            S("models", model="Gemini 1.5 Pro")(),
        )),
        snap("model_metadata/model_metadata_cutoff_dates_readme_2024-11-14.md", 0, models=39,
             filename="README.md", unique_models=True, spots=(
                 S("models", model="Claude 3.5 Sonnet")(knowledge_cutoff="2024-04-01"),
                 S("models", model="LLama-2-7B,13B,70B")(knowledge_cutoff="2023-07-01"),
                 S("models", model="Qwen2.5")(knowledge_cutoff="2023-12-01"))),
        snap("model_metadata/model_metadata_cutoff_dates_readme_2026-05-04.md", 0, models=94,
             filename="README.md", unique_models=True, spots=(
                 S("models", model="Claude 4.6 Sonnet")(knowledge_cutoff="2026-01-01"),
                 S("models", model="GPT-5")(knowledge_cutoff="2024-09-30"),
                 S("models", model="QwQ-32B")(knowledge_cutoff="2024-11-28"))),
    )

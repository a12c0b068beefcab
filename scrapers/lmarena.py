"""LMArena / Chatbot Arena (HF Space lmarena-ai/chatbot-arena-leaderboard).

Three kinds of file, sniffed from the content (not the name):
- `leaderboard_table_YYYYMMDD.csv`, whose schema drifted:
  2023-06 `Model, MT-bench (win rate %), MT-bench (score), Arena Elo rating, MMLU, License, Link`;
  2023-07..12 without the win-rate column; 2024+ `key, Model, MT-bench (score), MMLU,
  [Knowledge cutoff date,] License, Organization, Link` (Elo moved to the pickles).
  `key` is unique and `Model` is not (5 duplicate display names in 20250511), so `key` is
  the model when present. Benchmarks: `arena_elo` (metric elo), `mt_bench` (score_10),
  `mmlu` (already 0-1). `Knowledge cutoff date` (`2023/6`; `-`, `Unknown`, `Online` = none)
  goes on every row of the model. The 2023-06 MT-bench win rate has no benchmark id and is
  not emitted.
- `arena_hard_auto_leaderboard_v0.1.csv`: `model, score, rating_q025, rating_q975, CI, avg_tokens,
  date`. `score` is the win rate (percent) against the baseline -> proportion `arena_hard_auto`;
  `rating_q025/q975` are its 95% interval bounds in the same percent unit -> ci_low/ci_high
  (from the `CI` offsets `(-lo, +hi)` when the bounds are absent); `date` -> evaluated_at.
- `elo_data.json` (`elo_max_derived`, a third-party derivation of the Elo pickles):
  `[{date, category, max_elo, max_model}]` = the best Elo per category per leaderboard date.
  Benchmark `arena_elo_<category slug>`, model = max_model, evaluated_at = setting = date
  (one frontier model can lead a category on many dates), table_version `top1`: the leader of
  each date is a partial table of its own, never compared with (or held as a shrink of) the
  catalogue's full board of that category.
- `leaderboard-<arena>.json` of the maintained catalogue (lmarena/arena-catalog, the production
  source since the Space stopped publishing tables in 2025-05): `{category: {model_key: {rating,
  rating_q025, rating_q975}}}`; rating = Elo, the quantiles its 95% interval -> ci_low/ci_high.
  Each category is its own benchmark: the text arena's `full` is `arena_elo` (the overall board
  of the tables above), every other `arena_elo_<arena>_<category slug>` (the ids the registry
  already has from elo_data.json); a category that appears later becomes a new benchmark, listed
  by `benchwatch status` as unknown until the registry has it (`parse` puts the categories in
  `meta["categories"]`).
History mirrors (`benchwatch backfill` routes `lmarena_history_*` files here by name, so the
history continues the same tables rather than a source of its own):
- `elo_wide` CSV (nakasyou/lmarena-history): an unnamed date column `YYYYMMDD`, one column per
  model, overall Elo, `0.0` = absent. The newest date is the board the file shows (`arena_elo`,
  evaluated_at = that date); earlier rows are not stored (a warning says how many).
- a markdown table of the live leaderboard (CherryHQ's daily scrape), whose layout changed six
  times: rank columns (`排名(UB)`, `Rank`, rank spreads `1◄─►2` or `12`: not read), the model cell
  (a markdown link; a vendor logo's alt text glued before the name, `Anthropicclaude-…`; from
  2026-02 `<name><Org> · <licence>`), the score (`1446`, `1504±10`, `1508 (±6)`) and its interval
  (`+5/-4`, `±4`, or inside the score cell), votes, knowledge cutoff (`2023/2`, `暂无数据` = none).
  A page that says it lists only the top N (`前 30 名`) is a board of its own, table_version
  `top<N>`: never compared with (or held as a shrink of) the full board.
Production: the catalogue's text leaderboard; any of these kinds can also be ingested as a file.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Mapping

import pandas as pd

from scrapers import _markdown
from scrapers._lmarena_cells import find_column, link_of, model_name, score_cells
from common.naming import NamingRules
from scrapers._cells import number_cells, percent_cells, raw_text, stated_models
from scrapers.base import ParsedSnapshot, Scraper
from scrapers.normalize import (AmbiguousScale, clean_name, is_missing, model_link, parse_date, parse_number,
                                proportions_from, slug)
from scrapers.cases import Absent, Case, S, snap

# cut-off cell values meaning "no fixed cutoff" beyond the generic missing tokens
NO_CUTOFF = {"online", "暂无数据"}
CATALOGUE = "https://raw.githubusercontent.com/lmarena/arena-catalog/main/data/leaderboard-text.json"
OVERALL = "arena_elo"
# elo_data.json lists each category's leader on each date: a top-1 list per date, its own (partial)
# table — never compared with, or taking the place of, a category's full board
ELO_MAX_BOARD = "top1"
_TOP_N = re.compile(r"(?:前\s*(\d+)\s*名|\btop[ -]?(\d+)\b)", re.IGNORECASE)
_UPDATED = re.compile(r"更新时间\**\s*[:：]\s*\**\s*(\d{4}-\d{2}-\d{2})")


def _unique(names: pd.Series) -> pd.Series:
    """The names that occur once (others None): a display name two keys share names neither."""
    cleaned = names.map(clean_name)
    return cleaned.where(~cleaned.duplicated(keep=False), None)


def _col(df: pd.DataFrame, *patterns: str) -> str | None:
    """The first column whose lower-cased name matches one of the regexes (in pattern order)."""
    for pattern in patterns:
        for c in df.columns:
            if re.fullmatch(pattern, str(c).strip().lower()):
                return c
    return None


class LmarenaScraper(Scraper):
    name = "lmarena"
    NAMING = NamingRules()   # its o3-mini-high, -bf16/-fp8 and -thinking-16k: the shared markers (COMMON_VARIANTS)
    # The Space's dated tables (leaderboard_table_YYYYMMDD.csv) ended 2025-05; the maintained
    # catalogue is the production source. The old tables still parse as ingested files.
    page = "https://lmarena.ai/leaderboard"
    urls = (CATALOGUE,)
    min_rows = 10   # the smallest table (2023-06) has 28 models

    def parse(self, content: bytes, *, fetched_at: datetime, aux: Mapping[str, bytes] | None = None,
              filename: str | None = None) -> ParsedSnapshot:
        parsed = ParsedSnapshot(source=self.name)
        frames = [self._file(content, filename or "response", parsed)]
        frames += [self._file(body, name, parsed) for name, body in (aux or {}).items()]
        parsed.scores = pd.concat(frames, ignore_index=True)
        return parsed

    def _file(self, content: bytes, where: str, parsed: ParsedSnapshot) -> pd.DataFrame:
        """One response, whichever of the three kinds it is."""
        text = self.data_text(content).lstrip()
        kinds = parsed.meta.setdefault("kinds", {})
        if text.startswith("{"):
            kinds[where] = "catalogue"
            return self._catalogue(text, where, parsed)
        if text.startswith("["):
            kinds[where] = "elo_max_derived"
            return self._elo_max(text, parsed)
        if text.startswith("#") or "\n|" in text[:20000]:
            kinds[where] = "markdown"
            return self._markdown(text, where, parsed)
        head = text.split("\n", 2)
        if (len(head) > 1 and head[0].lower().startswith((",", "unnamed: 0,", "date,"))
                and re.match(r"^\d{8},", head[1])):   # a date column YYYYMMDD, then one column per model
            kinds[where] = "elo_wide"
            return self._elo_wide(text, where, parsed)
        df = self.csv(text, where=where)
        df.columns = [str(c).strip() for c in df.columns]
        dup = df.duplicated()
        if dup.any():   # e.g. yi-34b-chat listed twice, identically, in 20250511
            self.warn(parsed, f"{where}: {int(dup.sum())} exact duplicate line(s) dropped")
            df = df[~dup].reset_index(drop=True)
        lower = {c.lower() for c in df.columns}
        if {"model", "score"} <= lower and ({"rating_q025", "rating_q975"} <= lower or "ci" in lower):
            kinds[where] = "arena_hard_auto"
            # the file names its version (`..._v0.1.csv`): another version has other prompts, so
            # another table (registry.tables, issue 20)
            version = re.search(r"_v(\d+(?:\.\d+)*)(?!\d)", str(where))
            return self._arena_hard(df, parsed).assign(table_version=f"v{version.group(1)}" if version else "")
        kinds[where] = "leaderboard_table"
        return self._leaderboard_table(df, parsed)

    # --- leaderboard_table_YYYYMMDD.csv ----------------------------------------------------
    def _leaderboard_table(self, df: pd.DataFrame, parsed: ParsedSnapshot) -> pd.DataFrame:
        key_col = _col(df, r"key")
        model_col = key_col or _col(df, r"model")
        if model_col is None:
            raise self.error(f"leaderboard table has no 'key' or 'Model' column; found {list(df.columns)}")
        columns = {
            "arena_elo": (_col(df, r"arena elo rating", r"arena elo.*", r"elo.*"), "elo"),
            "mt_bench": (_col(df, r"mt-bench \(score\)", r"mt-?bench"), "score_10"),
            "mmlu": (_col(df, r"mmlu.*"), "proportion"),
        }
        present = {b: cm for b, cm in columns.items() if cm[0] is not None}
        absent = [b for b in columns if b not in present]
        if present and absent:   # 2024+ tables keep Elo only in the pickles
            self.warn(parsed, f"leaderboard table has no column for {', '.join(absent)}")
        if not present:
            raise self.error(f"leaderboard table has none of the score columns "
                             f"'Arena Elo rating', 'MT-bench (score)', 'MMLU'; found {list(df.columns)}")
        cutoff_col = _col(df, r"knowledge cut-?off.*")
        if cutoff_col is None:
            self.warn(parsed, "no 'Knowledge cutoff date' column (tables before 2024-01-25); knowledge_cutoff NULL")
            cutoff = pd.Series(pd.NaT, index=df.index)
        else:
            cutoff = df[cutoff_col].map(lambda v: None if str(v).strip().lower() in NO_CUTOFF else parse_date(v))
        models = df[model_col].map(clean_name)
        org_col, link_col = _col(df, r"organization"), _col(df, r"link")
        display = _col(df, r"model") if key_col is not None else None
        if org_col is not None or link_col is not None:   # who made each model, its page (view learned_models)
            parsed.models = stated_models(models, orgs=df[org_col] if org_col is not None else None,
                                          links=df[link_col] if link_col is not None else None,
                                          also=_unique(df[display]) if display is not None else None)

        frames = []
        for bench, (col, metric) in present.items():
            keep = ~df[col].map(is_missing)
            values, bad = number_cells(df.loc[keep, col], index=df.index[keep])
            if bad:
                self.warn(parsed, f"column {col!r}: unparseable value(s) {bad[:5]} (rows rejected)")
            if metric == "proportion":
                try:
                    values = proportions_from(values, signed=df.loc[keep, col].astype(str).str.contains("%"))
                except AmbiguousScale as exc:
                    raise self.error(f"column {col!r}: {exc}") from exc
            frames.append(pd.DataFrame({
                "benchmark": bench,
                "model": models[keep],
                "setting": "",
                "score": values,
                "raw_value": raw_text(df.loc[keep, col]),
                "metric": metric,
                "knowledge_cutoff": cutoff[keep],
            }))
        return pd.concat(frames, ignore_index=True)

    # --- arena_hard_auto_leaderboard_v0.1.csv ---------------------------------------------
    def _arena_hard(self, df: pd.DataFrame, parsed: ParsedSnapshot) -> pd.DataFrame:
        model_col, score_col = _col(df, r"model"), _col(df, r"score")
        lo_col, hi_col, ci_col = _col(df, r"rating_q025"), _col(df, r"rating_q975"), _col(df, r"ci")
        score, bad = percent_cells(df[score_col], index=df.index)
        if bad:
            self.warn(parsed, f"unparseable score value(s) {bad[:5]} (rows rejected)")
        if lo_col and hi_col:
            ci_low, _ = percent_cells(df[lo_col], index=df.index)
            ci_high, _ = percent_cells(df[hi_col], index=df.index)
        else:   # "(1.9, 2.0)" = (minus, plus) offsets in percent points
            offsets = df[ci_col].str.extract(r"\(\s*([-\d.]+)\s*,\s*([-\d.]+)\s*\)").astype("float64") / 100.0
            ci_low, ci_high = score - offsets[0].abs(), score + offsets[1].abs()
            self.warn(parsed, "no rating_q025/rating_q975 columns; CI derived from the CI offsets")
        date_col = _col(df, r"date")
        if date_col is None:
            self.warn(parsed, "no date column; evaluated_at NULL")
        return pd.DataFrame({
            "benchmark": "arena_hard_auto",
            "model": df[model_col].map(clean_name),
            "setting": "",
            "score": score,
            "raw_value": raw_text(df[score_col]),
            "metric": "proportion",
            "ci_low": ci_low,
            "ci_high": ci_high,
            "evaluated_at": df[date_col].map(parse_date) if date_col else pd.NaT,
        })

    # --- elo_data.json (elo_max_derived) ---------------------------------------------------
    def _elo_max(self, text: str, parsed: ParsedSnapshot) -> pd.DataFrame:
        data = self.json(text)
        if not isinstance(data, list) or not data:
            raise self.error(f"expected a non-empty JSON list of {{date, category, max_elo, max_model}}, "
                             f"got {type(data).__name__}")
        df = pd.DataFrame([r for r in data if isinstance(r, dict)])
        missing = [c for c in ("date", "category", "max_elo", "max_model") if c not in df.columns]
        if missing:
            raise self.error(f"elo JSON records lack field(s) {', '.join(missing)}; found {list(df.columns)}")
        elo, bad = number_cells(df["max_elo"], index=df.index)
        if bad:
            self.warn(parsed, f"unparseable max_elo value(s) {bad[:5]} (rows rejected)")
        dates = df["date"].map(parse_date)
        return pd.DataFrame({
            "benchmark": "arena_elo_" + df["category"].map(slug),
            "model": df["max_model"].map(clean_name),
            "setting": dates.map(lambda d: d.strftime("%Y-%m-%d") if d else ""),
            "score": elo,
            "raw_value": raw_text(df["max_elo"]),
            "metric": "elo",
            "evaluated_at": dates,
            "table_version": ELO_MAX_BOARD,
        })

    # --- leaderboard-<arena>.json (arena-catalog) ----------------------------------------------
    @staticmethod
    def _arena_of(where: str) -> tuple[str, str]:
        """('text', '') from 'leaderboard-text.json' / 'lmarena_history_catalog_text_2025-03-07.json';
        ('text', '_style_control') from a '…-style-control' file."""
        name = where.lower()
        m = re.search(r"(?:leaderboard|catalog)[-_]([a-z]+)", name)
        arena = m[1] if m else "text"
        return arena, "_style_control" if re.search(r"style[-_]?control", name) else ""

    def _catalogue(self, text: str, where: str, parsed: ParsedSnapshot) -> pd.DataFrame:
        data = self.json(text, where=where)
        if not isinstance(data, dict) or not data:
            raise self.error(f"{where}: expected a JSON object {{category: {{model: {{rating, …}}}}}}")
        arena, suffix = self._arena_of(where)
        rows = []
        bad = 0
        for category, board in data.items():
            if not isinstance(board, dict):
                self.warn(parsed, f"{where}: category {category!r} is not an object; skipped")
                continue
            bench = (OVERALL if arena == "text" and category == "full" and not suffix
                     else f"arena_elo_{arena}_{slug(category)}{suffix}")
            for model, entry in board.items():
                rating = parse_number(entry.get("rating")) if isinstance(entry, dict) else None
                if rating is None:
                    bad += 1
                    continue
                rows.append({"benchmark": bench, "model": clean_name(model), "setting": "", "score": rating,
                             "raw_value": str(entry.get("rating")), "metric": "elo",
                             "ci_low": parse_number(entry.get("rating_q025")),
                             "ci_high": parse_number(entry.get("rating_q975"))})
        if bad:
            self.warn(parsed, f"{where}: {bad} entr(y/ies) without a numeric rating skipped")
        parsed.meta["categories"] = sorted(str(c) for c in data)
        df = pd.DataFrame(rows)
        if len(df) and (df["ci_low"].isna() | df["ci_high"].isna()).any():
            self.warn(parsed, f"{where}: {int((df['ci_low'].isna() | df['ci_high'].isna()).sum())} rating(s) "
                              "without rating_q025/rating_q975 (no interval)")
        return df

    # --- elo_wide CSV (history mirror) --------------------------------------------------------
    def _elo_wide(self, text: str, where: str, parsed: ParsedSnapshot) -> pd.DataFrame:
        df = self.csv(text, where=where)
        date_col = df.columns[0]
        dates = df[date_col].map(lambda v: parse_date(str(v).strip()) if str(v).strip() else None)
        if dates.isna().all():
            raise self.error(f"{where}: first column holds no dates (expected YYYYMMDD)")
        newest = dates.max()
        row = df[dates == newest].iloc[-1]
        earlier = int(dates.notna().sum()) - 1
        if earlier:
            self.warn(parsed, f"{where}: the board of {newest:%Y-%m-%d} stored; {earlier} earlier date(s) "
                              "of the file are not")
        values = pd.to_numeric(row.drop(labels=[date_col]), errors="coerce")
        present = values[values > 0]
        return pd.DataFrame({"benchmark": OVERALL, "model": [clean_name(m) for m in present.index], "setting": "",
                             "score": present.to_numpy(), "raw_value": [str(row[m]) for m in present.index],
                             "metric": "elo", "evaluated_at": newest})

    # --- markdown leaderboard (history mirror) ------------------------------------------------
    def _markdown(self, text: str, where: str, parsed: ParsedSnapshot) -> pd.DataFrame:
        found = [t for t in _markdown.tables(text) if find_column(t.header, "模型", "model") is not None
                 and find_column(t.header, "分数", "score") is not None]
        if not found:
            raise self.error(f"{where}: no markdown table with a model and a score column")
        table = found[0]
        h = table.header
        col = {"model": find_column(h, "模型", "model"), "score": find_column(h, "分数", "score"),
               "ci": find_column(h, "置信区间", "ci", "interval"), "org": find_column(h, "服务商", "组织", "organization"),
               "cutoff": find_column(h, "截止", "cutoff")}
        intro = text[: text.find(table.header[0])] if table.header else text
        top = _TOP_N.search(intro)
        version = f"top{top[1] or top[2]}" if top else ""
        updated = _UPDATED.search(text)
        when = parse_date(updated[1]) if updated else None
        if when is None:
            self.warn(parsed, f"{where}: no update time (数据更新时间); evaluated_at NULL")
        rows = []
        orgs: list[tuple[str, str | None, str | None]] = []     # (model, the organisation and page its row names)
        skipped = 0
        for cells in table.rows:
            def cell(key: str, cells: list[str] = cells) -> str:
                i = col[key]
                return cells[i] if i is not None and i < len(cells) else ""
            model, org = model_name(cell("model"), clean_name(cell("org")) or "")
            link = link_of(cell("model"))
            score, lo, hi = score_cells(cell("score"), cell("ci"))
            if not model or score is None:
                skipped += 1
                continue
            cutoff = cell("cutoff").strip()
            orgs.append((model, org or None, link))
            rows.append({"benchmark": OVERALL, "model": model, "setting": "", "score": score,
                         "raw_value": cell("score").strip(), "metric": "elo", "ci_low": lo, "ci_high": hi,
                         "evaluated_at": when, "table_version": version,
                         "knowledge_cutoff": None if cutoff.lower() in NO_CUTOFF else parse_date(cutoff)})
        if skipped:
            self.warn(parsed, f"{where}: {skipped} row(s) without a model or a readable score skipped")
        parsed.meta["board"] = version or "full"
        parsed.models = stated_models([m for m, _, _ in orgs], orgs=[o for _, o, _ in orgs],
                                      links=[u for _, _, u in orgs])
        return pd.DataFrame(rows)

    # the declared cases (scrapers/cases.py), run by tests/unit/test_scraper_cases.py
    CASES = (
        Case("lmarena/leaderboard_table_20230619.csv", scores=12,
             all_missing=(("scores", "knowledge_cutoff"),), spots=(
            S(benchmark="arena_elo", model="Claude-v1")(score=1178, metric="elo"),
            S(benchmark="mt_bench", model="GPT-4")(score=8.99, metric="score_10", knowledge_cutoff=None),
            S(benchmark="mmlu", model="GPT-3.5-turbo")(score=0.7),
            # the Link column: the page the board gives for the model (view learned_models)
            S("models", model="Claude-v1")(link="https://www.anthropic.com/index/introducing-claude", org=None),
        )),
        Case("lmarena/leaderboard_table_20231206.csv", scores=11, spots=(
            S(benchmark="arena_elo", model="GPT-4-Turbo")(score=1217),
            S(benchmark="arena_elo", model="GPT-4-0314")(),
            Absent({"model": "GPT-4-Turbo", "benchmark": "mmlu"}),
        )),
        Case("lmarena/leaderboard_table_20250511.csv", scores=5, rejects=0,
             warnings=("duplicate",), spots=(        # yi-34b-chat's identical second line dropped
                 S(benchmark="mt_bench", model="gpt-4-0314")(score=8.96, knowledge_cutoff="2021-09-01"),
                 S(benchmark="mmlu", model="yi-34b-chat")(knowledge_cutoff="2023-06-01"),
                 Absent({"benchmark": "arena_elo"}),
                 S("models", model="gpt-4-0314")(org="OpenAI"),      # the Organization column
                 # the row's display name is the same entry (stated with the key's facts)
                 S("models", model="Yi-34B-Chat")(org="01 AI", link="https://huggingface.co/01-ai/Yi-34B-Chat"),
             )),
        Case("lmarena/arena_hard_auto_leaderboard_v0.1.csv", scores=3,
             benchmarks=frozenset({"arena_hard_auto"}), spots=(
                 S(model="gpt-4-turbo-2024-04-09")(score=0.8263, ci_low=0.8075, ci_high=0.846, evaluated_at="2024-07-31"),
             )),
        Case("lmarena/elo_data.json", scores=4, spots=(
            S(benchmark="arena_elo_text_full", model="gpt-4o-2024-05-13", setting="2024-06-29")(metric="elo"),
            S(benchmark="arena_elo_text_full", model="gpt-4o-2024-05-13", setting="2024-07-06")(metric="elo"),
            S(benchmark="arena_elo_text_full", model="gemini-2.5-pro-preview-05-06")(score=1446.0525,
                                                                                     evaluated_at="2025-05-11",
                                                                                     table_version="top1"),
            S(benchmark="arena_elo_vision_full")(score=1225.8014),
        )),
        Case("lmarena/leaderboard-text.json", replay="leaderboard-text.json", scores=12, rejects=0, meta={"categories": ["coding", "full", "math"]},
             benchmarks=frozenset({"arena_elo", "arena_elo_text_coding", "arena_elo_text_math"}), spots=(
                 S(benchmark="arena_elo", model="gemini-2.5-pro")(score=1466.2449319357888, ci_low=1461.502832241223,
                                                                 ci_high=1470.9870316303545, metric="elo"),
                 S(benchmark="arena_elo_text_math", model="gemini-2.5-pro")(score=1480.9373576303433),
             )),
        Case("lmarena/cherry_md_2025-01-21.md", scores=5, rejects=0, spots=(   # '+5/-4' interval column
            S(model="Gemini-Exp-1206")(score=1374.0, ci_low=1370.0, ci_high=1379.0, evaluated_at="2025-01-19",
                                       table_version=""),)),
        Case("lmarena/cherry_md_2025-06-05.md", scores=2, spots=(   # links, knowledge cutoff column
            S(model="o1-preview")(score=1341.0, knowledge_cutoff="2023-10-01"),
            S(model="Gemini-2.5-Pro-Preview-05-06")(knowledge_cutoff=None, evaluated_at="2025-06-05"),
            S("models", model="o1-preview")(org="OpenAI", link="https://platform.openai.com/docs/models/o1"))),
        Case("lmarena/cherry_md_2026-02-10.md", scores=7, rejects=0, spots=(   # '1504±10', glued logo and org
            S(model="claude-opus-4-6-thinking")(score=1504.0, ci_low=1494.0, ci_high=1514.0),
            S(model="ernie-5.0-0110")(score=1451.0, raw_value="1451±7Preliminary"),
            S(model="tulu-2-dpo-70b")(score=1179.0),
            S(model="RWKV-4-Raven-14B")(score=1042.0),
            S("models", model="claude-opus-4-6")(org="Anthropic"),     # the cell's `<Org> · <licence>` tail
            S(model="yi-34b-chat")(score=1184.0), S("models", model="yi-34b-chat")(org="01 AI"))),   # '01 AI' glued
        Case("lmarena/cherry_text_md_2026-07-29.md", scores=3, meta={"board": "top30"}, spots=(
            S(model="claude-fable-5")(score=1508.0, ci_low=1502.0, table_version="top30"),
            S(model="claude-opus-5-max")(score=1495.0, ci_high=1507.0),
            S("models", model="claude-fable-5")(link="https://www.anthropic.com/news/claude-fable-5-mythos-5"))),
        Case("lmarena/elo_wide_2025-01-28.csv", scores=4, warnings=("2 earlier date(s)",), spots=(
            S(model="o1-preview")(score=1334.9990061709354, evaluated_at="2025-01-24", benchmark="arena_elo"),
            Absent({"model": "claude-v1"}))),   # 0.0 = not on the board that date
        snap("lmarena/lmarena_arena_hard_auto_v0.1_2024-08-01.csv", 60, rejects=0, spots=(
            S(benchmark="arena_hard_auto", model="claude-3-opus-20240229", setting="")(
                score=0.6036, table_version="v0.1"),)),
        snap("lmarena/lmarena_elo_max_derived_2025-05-14.json", 2050, rejects=0, spots=(
            S(benchmark="arena_elo_text_coding", model="gemini-2.5-pro-preview-05-06", setting="2025-05-11")(
                score=1456.6593),)),
        snap("lmarena/lmarena_leaderboard_table_20230619_2023-07-01.csv", 81, rejects=0, spots=(
            S(benchmark="mt_bench", model="Vicuna-33B", setting="")(score=7.12),)),
        snap("lmarena/lmarena_leaderboard_table_20231206_2023-12-07.csv", 150, rejects=0, spots=(
            S(benchmark="arena_elo", model="Vicuna-33B", setting="")(score=1093),)),
        snap("lmarena/lmarena_leaderboard_table_20250511_2025-05-12.csv", 169, rejects=0, spots=(
            S(benchmark="mmlu", model="claude-3-5-sonnet-20240620", setting="")(score=0.887),)),
        # lmarena_history/: routed to lmarena by name (backfill), the same tables continued
        snap("lmarena_history/lmarena_history_catalog_text_2025-03-07.json", 4049, rejects=0, spots=(
            S(benchmark="arena_elo", model="gpt-4.5-preview-2025-02-27")(score=1411.0096316492159,
                                                                        ci_high=1422.2250169218357),
            S(benchmark="arena_elo_text_coding", model="grok-3-preview-02-24")(ci_low=1388.80604852479))),
        snap("lmarena_history/lmarena_history_catalog_text_2025-05-27.json", 4662, rejects=0),
        snap("lmarena_history/lmarena_history_catalog_text_2025-11-05.json", 4275, rejects=0, spots=(
            S(benchmark="arena_elo_text_math", model="gemini-2.5-pro")(score=1480.9373576303433),)),
        snap("lmarena_history/lmarena_history_cherry_md_2025-01-21.md", 162, rejects=0),
        snap("lmarena_history/lmarena_history_cherry_md_2025-06-05.md", 201, rejects=0, spots=(
            S(model="o3-2025-04-16")(score=1419.0, ci_low=1415.0, ci_high=1425.0),)),
        snap("lmarena_history/lmarena_history_cherry_md_2025-10-09.md", 252, rejects=0),
        snap("lmarena_history/lmarena_history_cherry_md_2025-12-20.md", 289, rejects=0, spots=(
            S(model="gemini-3-pro")(score=1490.0, ci_low=1484.0),)),
        snap("lmarena_history/lmarena_history_cherry_md_2026-02-10.md", 303, rejects=0),
        snap("lmarena_history/lmarena_history_cherry_md_2026-03-11.md", 323, rejects=0, spots=(
            S(model="glm-5")(score=1452.0, ci_low=1445.0),)),
        snap("lmarena_history/lmarena_history_cherry_text_md_2026-07-29.md", 30, rejects=0, spots=(
            S(model="claude-fable-5")(score=1508.0, table_version="top30"),)),
        snap("lmarena_history/lmarena_history_elo_wide_2024-11-15.csv", 162, rejects=0, spots=(
            S(model="o1-preview")(score=1333.0761334393283, evaluated_at="2024-11-13"),)),
        snap("lmarena_history/lmarena_history_elo_wide_2024-12-20.csv", 182, rejects=0),
        snap("lmarena_history/lmarena_history_elo_wide_2025-01-28.csv", 195, rejects=0),
    )

"""LiveCodeBench (livecodebench.github.io): item-level pass@1 per model and problem.

`performances_generation.json` = `{performances: [{question_id, model, date (contest date,
epoch ms), difficulty, platform, pass@1 (percent)}], models: [{model_repr, release_date, ...}],
date_marks: [...]}`. The self-repair file (`performances_repair.json`, bundled into the site's
JS app) has exactly the same schema, so it is told apart by its file name only
(`*repair*` -> benchmark `livecodebench_repair`).

Scores are our aggregate over every problem in the file (the site shows the mean over a
date window the user picks). `models[].release_date` is the date the site uses as each
model's contamination cutoff, so it is stored as a leaderboard-provenance knowledge cutoff.
"""

from __future__ import annotations

from datetime import datetime
from typing import Mapping

import numpy as np
import pandas as pd

from scrapers.base import ParsedSnapshot, Scraper
from scrapers.normalize import is_missing
from scrapers.cases import Case, S, snap

GENERATION = "livecodebench"
REPAIR = "livecodebench_repair"
REQUIRED = ("question_id", "model", "pass@1")
OPTIONAL = ("date", "difficulty", "platform")


def _epoch_ms(values: pd.Series) -> pd.Series:
    """Epoch-millisecond timestamps (the site's unit) -> naive UTC datetimes; garbage -> NaT."""
    return pd.to_datetime(pd.to_numeric(values, errors="coerce"), unit="ms", errors="coerce")


class LivecodebenchScraper(Scraper):
    name = "livecodebench"
    page = "https://livecodebench.github.io/leaderboard.html"
    urls = ("https://livecodebench.github.io/performances_generation.json",)
    min_rows = 5    # the oldest copy has 28 models
    # A release can list fewer models per scenario than the one before (repair: 30, then 17 on
    # 2024-10-22): a drop of up to half of a table is the board's own pruning, not a cut file.
    shrink_max_drop = 0.5

    def parse(self, content: bytes, *, fetched_at: datetime, aux: Mapping[str, bytes] | None = None,
              filename: str | None = None) -> ParsedSnapshot:
        data = self.json(content)
        if not isinstance(data, dict) or not isinstance(data.get("performances"), list):
            found = sorted(data)[:10] if isinstance(data, dict) else type(data).__name__
            raise self.error(f"expected an object with a 'performances' list; found {found}")
        if not data["performances"]:
            raise self.error("'performances' is empty (no problems x models)")
        benchmark = REPAIR if filename and "repair" in filename.lower() else GENERATION
        parsed = ParsedSnapshot(source=self.name, meta={"benchmark": benchmark})

        perf = pd.DataFrame.from_records(data["performances"])
        missing = [c for c in REQUIRED if c not in perf.columns]
        if missing:
            raise self.error(f"performances have no {', '.join(missing)} field; found {', '.join(map(str, perf.columns))}")
        for col in OPTIONAL:
            if col not in perf.columns:
                self.warn(parsed, f"performances have no {col!r} field; left NULL")
                perf[col] = None

        items = pd.DataFrame({
            "benchmark": benchmark,
            "model": perf["model"].astype("str").where(perf["model"].notna(), None),
            "item_id": perf["question_id"].astype("str").where(perf["question_id"].notna(), None),
            "item_date": _epoch_ms(perf["date"]),
            "difficulty": perf["difficulty"],
            "platform": perf["platform"],
            "score": pd.to_numeric(perf["pass@1"], errors="coerce") / 100.0,   # percent over 10 samples
        })
        garbage = items["score"].isna() & ~perf["pass@1"].map(is_missing)
        if garbage.any():
            self.warn(parsed, f"{int(garbage.sum())} non-numeric pass@1 value(s), e.g. {perf.loc[garbage, 'pass@1'].iloc[0]!r}")
        dup = items.duplicated(["model", "item_id"], keep="first")
        if dup.any():
            self.warn(parsed, f"{int(dup.sum())} duplicate (model, question_id) row(s) dropped; first kept")
            items = items[~dup].reset_index(drop=True)
        parsed.items = items

        cutoffs = self._models(data, parsed)
        parsed.scores = self._model_scores(items, benchmark, cutoffs)
        unknown = sorted(set(parsed.scores["model"]) - set(cutoffs.index))
        if unknown:
            self.warn(parsed, f"model(s) not in 'models' (no cutoff): {unknown[:10]}")
        parsed.meta["problems"] = int(items["item_id"].nunique())
        return parsed

    def _models(self, data: dict, parsed: ParsedSnapshot) -> pd.Series:
        """models[] -> the `models` frame; returns model_repr -> knowledge cutoff."""
        models = pd.DataFrame.from_records([m for m in data.get("models") or [] if isinstance(m, dict)])
        if models.empty or "model_repr" not in models.columns:
            self.warn(parsed, "no 'models' list with model_repr; knowledge cutoffs left NULL")
            return pd.Series(dtype="datetime64[us]")
        if "release_date" not in models.columns:
            self.warn(parsed, "'models' have no release_date; knowledge cutoffs left NULL")
            models["release_date"] = None
        models = models.dropna(subset=["model_repr"]).drop_duplicates("model_repr")
        cutoff = _epoch_ms(models["release_date"])
        parsed.models = pd.DataFrame({
            "model": models["model_repr"].astype("str"),
            "knowledge_cutoff": cutoff,
            "release_date": pd.NaT,          # the site's date is a cutoff estimate, not a release date
            "provenance": "leaderboard",
        })
        return pd.Series(cutoff.to_numpy(), index=models["model_repr"].astype("str").to_numpy())

    @staticmethod
    def _model_scores(items: pd.DataFrame, benchmark: str, cutoffs: pd.Series) -> pd.DataFrame:
        """Per model: mean per-problem pass@1 over its n problems.

        stderr = sd(per-problem pass) / sqrt(n): an item-clustered standard error that treats the
        problems as the sampled units (the 10 samples within a problem are not independent draws
        of the benchmark), so it is larger than a naive binomial SE over n x 10 samples.
        """
        agg = (items.dropna(subset=["model"]).groupby("model", sort=False)["score"]
               .agg(["mean", "count", "std"]).reset_index())
        agg = agg[agg["count"] > 0]
        return pd.DataFrame({
            "benchmark": benchmark,
            "model": agg["model"],
            "score": agg["mean"],
            "raw_value": (agg["mean"] * 100).round(1).astype("str"),   # as the site shows it (percent, 1 dp)
            "metric": "proportion",
            "stderr": agg["std"] / np.sqrt(agg["count"]),
            "n_items": agg["count"],
            "knowledge_cutoff": cutoffs.reindex(agg["model"]).to_numpy(),
        })

    # the declared cases (scrapers/cases.py), run by tests/unit/test_scraper_cases.py
    CASES = (
        Case("livecodebench/performances_generation_2024-03-17.json", scores=3, items=12, models=3,
             meta={"benchmark": "livecodebench"}, spots=(
                 S("items", model="GPT-4-Turbo-1106", item_id="1873_A")(score=0.9, item_date="2023-08-22",
                                                                         difficulty="easy", platform="codeforces"),
                 # question_id 2727 is an integer in the real file
                 S("items", model="Claude-3-Opus", item_id="2727")(item_date="2023-05-14"),
                 # pass@1 90, 0, 100, 0 -> mean 0.475, sd 0.55, stderr 0.55 / 2
                 S(model="GPT-4-Turbo-1106")(score=0.475, stderr=0.275, n_items=4, metric="proportion",
                                             raw_value="47.5", knowledge_cutoff="2023-04-30 07:00:00"),  # 1682838000000 ms
                 # 100, 100, 100, 0 -> mean 0.75, sd 0.5, stderr 0.25
                 S(model="Claude-3-Opus")(score=0.75, stderr=0.25),
                 S("models", model="DSCoder-33b-Ins")(knowledge_cutoff="2023-08-30 07:00:00", provenance="leaderboard",
                                                      release_date=None),
             )),
        Case("livecodebench/performances_repair_2024-10-22.json",
             benchmarks=frozenset({"livecodebench_repair"}), spots=(
                 # 100, 100, 100, 80 -> 0.95
                 S(model="Claude-3.5-Sonnet-20241022")(score=0.95, n_items=4,
                                                       knowledge_cutoff="2024-03-31"),   # 1711843200000 ms
                 S(model="O1-Mini-2024-09-12 (N=1)")(score=1.0, stderr=0.0),
             )),
        # the same bytes under the production name are generation data (the schemas are identical)
        Case("livecodebench/performances_repair_2024-10-22.json", filename="performances_generation.json",
             benchmarks=frozenset({"livecodebench"}), id="fix:livecodebench/repair-bytes-as-generation"),
        snap("livecodebench/livecodebench_generation_2024-02-26.json", 16, items=5583, spots=(
            S(model="GPT-4-Turbo-1106")(score=0.4163323782234957, n_items=349),)),
        snap("livecodebench/livecodebench_generation_2024-03-17.json", 30, items=12000, spots=(
            S(model="GPT-4-Turbo-1106")(score=0.383, stderr=0.022523226663788004),)),
        snap("livecodebench/livecodebench_repair_2024-06-20.json", 30, items=12000, spots=(
            S(model="GPT-4O-2024-05-13", benchmark="livecodebench_repair")(score=0.58725, knowledge_cutoff="2023-10-30"),)),
        snap("livecodebench/livecodebench_repair_2024-10-22.json", 17, items=12121, spots=(
            S(model="O1-Mini-2024-09-12 (N=1)", benchmark="livecodebench_repair")(score=0.7096774193548387, n_items=713),)),
    )

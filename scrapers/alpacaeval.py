"""AlpacaEval leaderboards (tatsu-lab/alpaca_eval): AlpacaEval 2 and AlpacaEval 1 CSVs.

Two CSV shapes, sniffed from the header:
- package CSV (`src/alpaca_eval/leaderboards/...`, the production source because it has the
  standard errors): unnamed first column = model key, `win_rate, standard_error, n_wins,
  n_wins_base, n_draws, n_total, discrete_win_rate, mode, avg_length,
  [length_controlled_winrate, lc_standard_error]`;
- docs CSV (what the website loads): `name, [length_controlled_winrate,] win_rate,
  avg_length, link, samples, filter` (the 2024-01-09 version has no LC column), no errors.
Win rates and standard errors are percent -> proportions. `n_total` (805 for most rows) is
the number of instructions judged; without it, n_items = 805 (the AlpacaEval set).

AlpacaEval 1 vs 2 is not in the file: it is the file name (`alpaca_eval_gpt4_leaderboard.csv`
or a snapshot name containing `_v1_` -> v1; `weighted_alpaca_eval_gpt4_turbo_leaderboard.csv`
or `_v2_` -> v2; no name -> v2 with a warning). Benchmarks: v2 `alpacaeval_2_lc` (LC win
rate) and `alpacaeval_2` (win rate); v1 `alpacaeval_1` (win rate; the LC column some v1
docs files carry has no benchmark id and is not emitted).

Stored but excluded from statistics (`excluded_reason`): adversarial entries, i.e.
`NullModel` (a constant "cheating" output that reaches 86.5% LC) and `gpt4_gamed`
(shown as "GPT-4 (Adversarial)"), and any name marked "adversarial"; and `mode == dev`
rows of the package CSV (verbose/concise prompt variants used to test length control,
not on the public leaderboard).

Models: a docs CSV row's `link` is the page it gives for the model (a Hugging Face card names its
publisher): the models frame states it for the display name and for the entry's key in the
package CSV, which the row's `samples` link names (`results/<key>/model_outputs.json`): one entry,
two names (view learned_models). The package CSV states nothing about its models.

Reference rows (`is_reference`): the annotator compares every model with one reference model
(AlpacaEval 1: text-davinci-003; AlpacaEval 2: GPT-4 Preview 11/06), which is listed against
itself at a win rate of exactly 50 %, standard error 0 (all 805 comparisons draws). Such a row
(win rate 50 exactly, and a stderr of 0 or draws = total, or no stderr column as in the docs
CSVs) is stored and shown but never enters a top k: it is the scale's midpoint, not a result.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import PurePosixPath
from typing import Mapping

import pandas as pd

from scrapers._cells import number_cells, percent_cells, raw_text, stated_models
from scrapers.base import ParsedSnapshot, Scraper
from scrapers.normalize import clean_name, is_missing
from scrapers.cases import Absent, Case, Has, S, snap

ALPACAEVAL_SIZE = 805
V1_FILE = "alpaca_eval_gpt4_leaderboard.csv"
V2_FILE = "weighted_alpaca_eval_gpt4_turbo_leaderboard.csv"
ADVERSARIAL_KEYS = {"nullmodel", "gpt4_gamed"}
ADVERSARIAL_REASON = "adversarial test entry (not a real model)"
DEV_REASON = "development entry (mode=dev: prompt-variant experiment, not on the public leaderboard)"

# (score column, stderr column, benchmark id) per version
BENCHMARKS = {
    "v2": (("length_controlled_winrate", "lc_standard_error", "alpacaeval_2_lc"),
           ("win_rate", "standard_error", "alpacaeval_2")),
    "v1": (("win_rate", "standard_error", "alpacaeval_1"),),
}


_RESULTS_KEY = re.compile(r"/results/([^/\s]+)/model_outputs\.json$")


def results_key(samples: object) -> str | None:
    """The entry's key in the package CSV, as the docs CSV's `samples` link names it
    (`…/results/Shopee-SlimMoA-v1/model_outputs.json` for "Shopee SlimMoA v1"): the same entry."""
    m = _RESULTS_KEY.search(samples.strip()) if isinstance(samples, str) else None
    return m.group(1) if m else None


def is_adversarial(name: str | None) -> bool:
    """NullModel / gpt4_gamed, or any entry whose name says it is adversarial."""
    if not name:
        return False
    key = name.strip().lower()
    return key in ADVERSARIAL_KEYS or "adversarial" in key


class AlpacaevalScraper(Scraper):
    name = "alpacaeval"
    page = "https://tatsu-lab.github.io/alpaca_eval/"
    urls = (
        "https://raw.githubusercontent.com/tatsu-lab/alpaca_eval/main/src/alpaca_eval/leaderboards/"
        f"data_AlpacaEval_2/{V2_FILE}",
        f"https://raw.githubusercontent.com/tatsu-lab/alpaca_eval/main/src/alpaca_eval/leaderboards/data_AlpacaEval/{V1_FILE}",
    )
    min_rows = 10   # the smallest copy (docs v2 of 2024-01-09) has 11 models
    parser_version = 2   # 2: the docs CSV's model pages (`link`), for the display name and the results key

    def parse(self, content: bytes, *, fetched_at: datetime, aux: Mapping[str, bytes] | None = None,
              filename: str | None = None) -> ParsedSnapshot:
        parsed = ParsedSnapshot(source=self.name)
        frames = [self._file(content, self._version(filename, parsed), filename or "response", parsed)]
        for name, body in (aux or {}).items():
            frames.append(self._file(body, self._version(name, parsed), name, parsed))
        parsed.scores = pd.concat(frames, ignore_index=True)
        return parsed

    def _version(self, filename: str | None, parsed: ParsedSnapshot) -> str:
        if filename:
            name = PurePosixPath(filename).name.lower()
            if name == V1_FILE or "_v1_" in name:
                return "v1"
            if name == V2_FILE or "_v2_" in name:
                return "v2"
        self.warn(parsed, f"cannot tell AlpacaEval 1 from 2 by the file name {filename!r}; assuming AlpacaEval 2")
        return "v2"

    @staticmethod
    def _reference(df: pd.DataFrame, columns: dict[str, str]) -> pd.Series:
        """The reference model's row: win rate exactly 50 against itself (stderr 0 / all draws / no stderr)."""
        if "win_rate" not in columns:
            return pd.Series(False, index=df.index, dtype="boolean")
        win = number_cells(df[columns["win_rate"]], index=df.index)[0]
        itself = pd.Series("standard_error" not in columns, index=df.index)
        if "standard_error" in columns:
            itself |= number_cells(df[columns["standard_error"]], index=df.index)[0].eq(0)
        if "n_draws" in columns and "n_total" in columns:
            draws = number_cells(df[columns["n_draws"]], index=df.index)[0]
            itself |= draws.eq(number_cells(df[columns["n_total"]], index=df.index)[0]) & draws.gt(0)
        return (win.eq(50.0) & itself).astype("boolean")

    def _file(self, content: bytes, version: str, where: str, parsed: ParsedSnapshot) -> pd.DataFrame:
        df = self.csv(content, where=where)
        columns = {str(c).strip().lower(): c for c in df.columns}
        model_col = next((columns[n] for n in ("name", "model") if n in columns), None)
        if model_col is None:   # the package CSV's model key is the unnamed index column
            model_col = next((c for c in df.columns if str(c).startswith("Unnamed") or not str(c).strip()), None)
        if model_col is None:
            raise self.error(f"{where}: no model column ('name' or the unnamed key column); found {list(df.columns)}")
        model = df[model_col].map(clean_name)
        if "link" in columns:   # the model's page (a Hugging Face one names its publisher): view learned_models
            keys = df[columns["samples"]].map(results_key) if "samples" in columns else None
            parsed.models = pd.concat([parsed.models, stated_models(model, links=df[columns["link"]], also=keys)],
                                      ignore_index=True).drop_duplicates("model", ignore_index=True)

        if "n_total" in columns:
            n_items = pd.to_numeric(df[columns["n_total"]], errors="coerce").astype("Int64")
        else:
            n_items = pd.Series(ALPACAEVAL_SIZE, index=df.index, dtype="Int64")
        excluded = pd.Series("", index=df.index, dtype="object")
        if "mode" in columns:
            excluded = excluded.mask(df[columns["mode"]].str.strip().str.lower().eq("dev"), DEV_REASON)
        excluded = excluded.mask(model.map(is_adversarial), ADVERSARIAL_REASON)
        reference = self._reference(df, columns)
        if reference.any():
            self.warn(parsed, f"{where}: reference model row(s) {list(model[reference])} (win rate 50 against "
                              "itself) stored with is_reference, never in a top k")

        frames = []
        for score_col, err_col, bench in BENCHMARKS[version]:
            if score_col not in columns:
                if bench == "alpacaeval_2_lc":
                    self.warn(parsed, f"{where}: no {score_col} column (docs CSVs before LC); no {bench} rows")
                    continue
                raise self.error(f"{where}: missing column {score_col!r}; found {list(df.columns)}")
            cells = df[columns[score_col]]
            keep = ~cells.map(is_missing)
            score, bad = percent_cells(cells[keep], index=cells.index[keep])
            if bad:
                self.warn(parsed, f"{where}: unparseable {score_col} value(s) {bad[:5]} (rows rejected)")
            if err_col in columns:
                stderr = number_cells(df.loc[keep, columns[err_col]], index=cells.index[keep])[0] / 100.0
            else:
                stderr = float("nan")
                self.warn(parsed, f"{where}: no {err_col} column; {bench} stderr NULL")
            frames.append(pd.DataFrame({
                "benchmark": bench,
                "model": model[keep],
                "setting": "",
                "score": score,
                "raw_value": raw_text(cells[keep]),
                "metric": "proportion",
                "stderr": stderr,
                "n_items": n_items[keep],
                "excluded_reason": excluded[keep],
                "is_reference": reference[keep],
            }))
        if not frames:
            raise self.error(f"{where}: no score columns")
        n_excluded = int((excluded != "").sum())
        if n_excluded:
            self.warn(parsed, f"{where}: {n_excluded} adversarial/dev entr(y/ies) stored but excluded from statistics")
        return pd.concat(frames, ignore_index=True)

    # the declared cases (scrapers/cases.py), run by tests/unit/test_scraper_cases.py
    CASES = (
        Case("alpacaeval/weighted_alpaca_eval_gpt4_turbo_leaderboard.csv", scores=10,
             benchmarks=frozenset({"alpacaeval_2_lc", "alpacaeval_2"}), spots=(
                 S(benchmark="alpacaeval_2_lc", model="SelfMoA_gemma-2-9b-it-WPO-HB")(
                     score=0.7853928111481099, stderr=0.003042788133382446, n_items=805, excluded_reason=""),
                 S(benchmark="alpacaeval_2_lc", model="NullModel")(score=0.8645780691307947,
                                                                  excluded_reason=Has("adversarial")),
                 S(benchmark="alpacaeval_2", model="gpt4_gamed")(excluded_reason=Has("adversarial")),
                 S(benchmark="alpacaeval_2_lc", model="gpt4_gamed")(stderr=None),
                 S(benchmark="alpacaeval_2", model="gpt4_1106_preview_verbose")(excluded_reason=Has("dev")),
                 S(benchmark="alpacaeval_2", model="alpaca-7b_concise")(n_items=804),
                 S(benchmark="alpacaeval_2", model="NullModel")(stderr=0.009090102449662572),
             )),
        Case("alpacaeval/weighted_alpaca_eval_gpt4_turbo_leaderboard.csv", replay="weighted_alpaca_eval_gpt4_turbo_leaderboard.csv", scores=13,
             aux=(("alpaca_eval_gpt4_leaderboard.csv", "alpacaeval/alpaca_eval_gpt4_leaderboard.csv"),),
             id="fix:alpacaeval/v2-with-v1-aux", spots=(
                 S(benchmark="alpacaeval_1", model="gpt4_turbo")(score=0.9769900497512438, stderr=0.005104849118311993,
                                                                n_items=804, is_reference=False),
                 # AlpacaEval 1's reference model against itself: 50 %, stderr 0, 805 draws -> never in a top k
                 S(benchmark="alpacaeval_1", model="text_davinci_003")(score=0.5, stderr=0.0, is_reference=True),
             )),
        Case("alpacaeval/alpacaeval_v2_2024-01-09.csv", scores=3, benchmarks=frozenset({"alpacaeval_2"}),
             warnings=("length_controlled_winrate",), spots=(
                 S(model="GPT-4 Turbo")(score=0.5, is_reference=True), S(model="GPT-4")(n_items=805, is_reference=False),
                 S("models", model="Yi 34B Chat")(org="01-ai"),     # its link: huggingface.co/01-ai/…
                 # the same row's `samples` link names the entry's key in the package CSV: the same facts
                 S("models", model="Yi-34B-Chat")(org="01-ai", link="https://huggingface.co/01-ai/Yi-34B-Chat"),
                 # no link: the row states nothing about its model (nor about its key)
                 Absent({"model": "GPT-4 Turbo"}, "models"), Absent({"model": "gpt4_turbo"}, "models"),
             )),
        Case("alpacaeval/alpacaeval_v2_2024-12-27.csv", scores=8,
             rejects=2, spots=(   # 'GPT 3.5 Turbo (06/13)' is listed twice
                 S(benchmark="alpacaeval_2_lc", model="NullModel (adversarial)")(excluded_reason=Has("adversarial")),
                 S(benchmark="alpacaeval_2", model="GPT-4 (Adversarial)")(excluded_reason=Has("adversarial")),
             )),
        Case("alpacaeval/alpacaeval_v1_2024-05-17.csv", scores=3, benchmarks=frozenset({"alpacaeval_1"}),
             spots=(S(model="GPT-4 Preview (11/06)")(score=0.9769900497512438),)),
        snap("alpacaeval/alpacaeval_v1_2024-05-17.csv", 102, rejects=0, spots=(
            S(benchmark="alpacaeval_1", model="XwinLM 70b V0.3", setting="")(score=0.97636815920398),)),
        snap("alpacaeval/alpacaeval_v2_2024-01-09.csv", 11, rejects=0, spots=(
            S(benchmark="alpacaeval_2", model="Yi 34B Chat", setting="")(score=0.293171781590625),)),
        snap("alpacaeval/alpacaeval_v2_2024-12-27.csv", 420, rejects=2),
        snap("alpacaeval/alpacaeval_v2_src_with_stderr_2024-06-26.csv", 366, rejects=0, spots=(
            S(benchmark="alpacaeval_2_lc", model="Together-MoA", setting="")(score=0.6537996976852163),)),
        snap("alpacaeval/alpacaeval_v2_src_with_stderr_2024-12-28.csv", 446, rejects=0, spots=(
            S(benchmark="alpacaeval_2_lc", model="gpt4_1106_preview", setting="")(score=0.5, is_reference=True),
            S(benchmark="alpacaeval_2", model="gpt4_1106_preview", setting="")(stderr=0.0, is_reference=True),
            S(benchmark="alpacaeval_2_lc", model="Together-MoA", setting="")(is_reference=False))),
    )

"""τ²-bench / τ³ (taubench.com): the submissions manifest and each listed `submission.json`.

Production: the site's public bucket (S3 mirror of `web/leaderboard/public/submissions/` in
sierra-research/tau2-bench): `<base>/manifest.json` is the primary response; every directory it
lists is fetched as `<base>/<dir>/submission.json` (`discover`), known in `aux` and in a replay
directory as `sub_<dir>.json` (a backfill copy `tau2_bench_sub_<dir>_<YYYY-MM-DD>.json` is
recognised too).

Manifest: up to 2025-12 `{"submissions": [dir, …], "last_updated"}`; from the τ³ release
(2026-03-18) `{"submissions", "voice_submissions", "legacy_submissions"}`. Each list is its own
board (`table_version`): `text`, `voice`, and `legacy` — the τ²-bench board of before τ³, which a
manifest with a single `submissions` list still is. A submission moving from `submissions` to
`legacy_submissions` therefore stays in the same table (not a shrink). Any further
`<name>_submissions` list becomes table `<name>`.

submission.json: `model_name, model_organization, submission_date, results{<domain>: {pass_1..
pass_4 (percent), cost} | null}, methodology{evaluation_date, …}`, later `submission_type`
(standard/custom), `modality`, `reasoning_effort`, `model_release{release_date}`. Emitted per
domain: `tau2_bench_<domain>` (pass^1) and `tau2_bench_<domain>_pass<k>` for each further pass^k
the file states (k up to the trial count when the file states one), as proportions; n is the
domain's number of distinct tasks (registry), never tasks × trials. `tau2_bench` is the unweighted
mean of retail, airline and telecom pass^1 (the saturation paper's τ²-bench figure), emitted only
when all three are present. `setting` carries the reasoning effort and `custom` for custom
agent submissions, which are also tagged `System: custom`: agent systems (registry/identity.py),
never ranked with the standard harness's model runs. A listed submission without a file is skipped with one warning line.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Mapping, Sequence

import pandas as pd

from common.naming import NamingRules
from scrapers.base import ParsedSnapshot, Scraper
from scrapers.normalize import clean_name, parse_date, slug
from scrapers.cases import Absent, Case, S, snap

BASE = "https://sierra-tau-bench-public.s3.us-west-2.amazonaws.com/submissions"
PAPER_DOMAINS = ("retail", "airline", "telecom")    # the paper's τ²-bench = their unweighted pass^1 mean
PAPER_BENCHMARK = "tau2_bench"
_DIR = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")   # a safe path segment (scraped text)
_PASS = re.compile(r"^pass_(\d+)$")
_DATE_SUFFIX = r"(?:_\d{4}-\d{2}-\d{2})?"
_TRIAL_KEYS = ("num_trials", "n_trials", "trials")


def benchmark_id(domain: str, k: int) -> str:
    """'retail', 1 -> 'tau2_bench_retail'; 'retail', 3 -> 'tau2_bench_retail_pass3'."""
    return f"tau2_bench_{slug(domain)}" + ("" if k == 1 else f"_pass{k}")


def table_of(key: str, manifest: Mapping[str, Any]) -> str:
    """The board a manifest list is: `submissions` is `text` beside a legacy list, else the
    τ²-bench board that later became `legacy`; `<name>_submissions` is `<name>`."""
    if key == "submissions":
        return "text" if "legacy_submissions" in manifest else "legacy"
    return key[: -len("_submissions")]


# a manifest with its submission files (aux named as backfill names them)
TAU2_FIX = tuple((f"sub_{d}.json", f"tau2_bench/sub_{d}.json") for d in (
    "glm5-2_zai_2026-06-21", "gpt-5-4_sierra_2026-03-25", "gpt-realtime-1.5_sierra_2026-03-03",
    "gemini-3-pro_google_2025-11-18", "gpt-5_sierra_2025-08-09"))
TAU2_DIRS_2025_12_17 = """claude-3-7-sonnet_anthropic_2024-06-20 claude-opus-4_anthropic_2025-05-22
claude-opus-4-1_anthropic_2025-01-15 claude-sonnet-4_anthropic_2025-05-22 claude-sonnet-4-5_anthropic_2025-10-02
gpt-4-1_openai_2024-06-20 gpt-4-1-mini_openai_2024-06-20 kimi-k2_moonshot-ai_2025-07-11 o3_openai_2025-01-15
o4-mini_openai_2024-06-20 gpt-5_sierra_2025-08-09 qwen3-max_qwen_2024_09_23 gemini-3-pro_google_2025-11-18
deepseek-v3.2_deepseek_2025-12-01 qwen3-max_qwen_2025-10-30 toolorchestra_nvidia_2025-12-02""".split()
TAU2_DIRS_2026_07_01 = """claude-opus-4-5_sierra_2026-02-26 claude-sonnet-4-5_sierra_2026-02-26 gpt-5-2_sierra_2026-02-26
gpt-5-2-none_sierra_2026-02-26 glm-5-think_sierra_2026-03-02 qwen3.5-397b-a17b-think_sierra_2026-03-02
gemini-3-flash_sierra_2026-03-02 gemini-3-pro_sierra_2026-03-02 distyl-buttonagent_distyl_2026-03-25
gpt-5-4_sierra_2026-03-25 raft-30b-a3b_neu_2026-04-29 gpt-5-5_sierra_2026-05-05 claude-opus-4-6_sierra_2026-05-05
claude-opus-4-7_sierra_2026-05-05 gemini-2-5-pro_sierra_2026-05-05 gemini-3-1-pro-preview_sierra_2026-05-05
grok-4-fast_sierra_2026-05-05 grok-4-1-fast_sierra_2026-05-05 grok-4-2_sierra_2026-05-05 glm5-2_zai_2026-06-21
gpt-realtime-1.5_sierra_2026-03-03 gemini-live-2.5-flash_sierra_2026-03-03 xai-realtime_sierra_2026-03-03
grok-voice-think-fast-1-0_xai_2026-04-21 gemini-3-1-flash-live-preview-thinking-high_google_2026-04-02
gemini-3-1-flash-live-preview-thinking-minimal_google_2026-04-13 gpt-realtime-1-0_openai_2026-04-13
livekit-cascaded_livekit_2026-05-19 gpt-realtime-2_openai_2026-06-24 gpt-realtime-2_openai_2026-06-29
gpt-realtime-2-minimal_openai_2026-07-01 claude-3-7-sonnet_anthropic_2024-06-20 claude-opus-4_anthropic_2025-05-22
claude-opus-4-1_anthropic_2025-01-15 claude-sonnet-4_anthropic_2025-05-22 claude-sonnet-4-5_anthropic_2025-10-02
gpt-4-1_openai_2024-06-20 gpt-4-1-mini_openai_2024-06-20 kimi-k2_moonshot-ai_2025-07-11 o3_openai_2025-01-15
o4-mini_openai_2024-06-20 gpt-5_sierra_2025-08-09 qwen3-max_qwen_2024_09_23 gemini-3-pro_google_2025-11-18
deepseek-v3.2_deepseek_2025-12-01 toolorchestra_nvidia_2025-12-02 qwen3-max_qwen_2026-01-23""".split()


def tau2_snap(date: str, dirs: list[str]) -> tuple[tuple[str, str], ...]:
    """The submission files of one snapshot date, under the names backfill gives them."""
    return tuple((f"tau2_bench_sub_{d}_{date}.json", f"tau2_bench/tau2_bench_sub_{d}_{date}.json") for d in dirs)


class Tau2BenchScraper(Scraper):
    name = "tau2_bench"
    # a `custom` submission (its own agent scaffold, tagged `System: custom`) is an agent system
    NAMING = NamingRules(system_tag=r"(^|;)\s*System:\s*custom\b")
    urls = (f"{BASE}/manifest.json",)
    min_rows = 1

    # --- fetching: the manifest names the submissions --------------------------------------
    def _lists(self, manifest: Any) -> list[tuple[str, list[str]]]:
        if not isinstance(manifest, dict):
            raise self.error(f"manifest is not a JSON object (got {type(manifest).__name__})")
        lists = [(k, v) for k, v in manifest.items()
                 if (k == "submissions" or str(k).endswith("_submissions")) and isinstance(v, list)]
        if not lists:
            raise self.error(f"manifest has no 'submissions' list; keys {sorted(manifest)}")
        return [(k, [str(d) for d in v if isinstance(d, str)]) for k, v in lists]

    def discover(self, primary: bytes) -> list[str]:
        lists = self._lists(self.json(primary, where="manifest"))
        dirs = dict.fromkeys(d for _, ds in lists for d in ds if _DIR.match(d) and ".." not in d)
        return [f"{BASE}/{d}/submission.json" for d in dirs]

    def response_name(self, url: str) -> str:
        parts = url.rstrip("/").rsplit("/", 2)
        if len(parts) == 3 and parts[2] == "submission.json":
            return f"sub_{parts[1]}.json"
        return self.file_name(url)

    # --- backfill: a manifest with the submission files of its date --------------------------
    def backfill_groups(self, names: Sequence[str]) -> tuple[list[tuple[str, tuple[str, ...]]], dict[str, str]]:
        groups: list[tuple[str, tuple[str, ...]]] = []
        skipped: dict[str, str] = {}
        dated = re.compile(r"_(\d{4}-\d{2}-\d{2})\.json$")
        subs = [n for n in names if "_sub_" in n]
        used: set[str] = set()
        for name in names:
            if "_sub_" in name:
                continue
            if "manifest" not in name:
                skipped[name] = "not a leaderboard copy (e.g. the submission JSON schema)"
                continue
            m = dated.search(name)
            aux = tuple(s for s in subs if m and s.endswith(f"_{m[1]}.json"))
            if not aux:
                skipped[name] = "a manifest without any of its submission files in the folder"
                continue
            used.update(aux)
            groups.append((name, aux))
        for s in subs:
            if s not in used:
                skipped[s] = "submission file without a manifest of the same date"
        return groups, skipped

    # --- parsing ------------------------------------------------------------------------------
    def parse(self, content: bytes, *, fetched_at: datetime, aux: Mapping[str, bytes] | None = None,
              filename: str | None = None) -> ParsedSnapshot:
        parsed = ParsedSnapshot(source=self.name)
        manifest = self.json(content, where="manifest")
        lists = self._lists(manifest)
        aux = aux or {}
        rows: list[dict] = []
        models: list[dict] = []
        tables: dict[str, int] = {}
        for key, dirs in lists:
            table = table_of(key, manifest)
            missing = []
            for d in dirs:
                body = self._aux_for(d, aux)
                if body is None:
                    missing.append(d)
                    continue
                sub = self.json(body, where=f"submission {d}", fatal=False, parsed=parsed)
                if not isinstance(sub, dict):
                    if sub is not None:
                        self.warn(parsed, f"submission {d}: not a JSON object; skipped")
                    continue
                got = self._submission(sub, d, table, parsed)
                rows += got
                tables[table] = tables.get(table, 0) + bool(got)
                if got:
                    models.append({"model": got[0]["model"], "org": sub.get("model_organization"),
                                   "release_date": got[0]["model_release_date"], "provenance": "leaderboard"})
            if missing:
                self.warn(parsed, f"{key}: {len(missing)} listed submission(s) without a file, skipped: "
                                  f"{', '.join(missing[:5])}{' …' if len(missing) > 5 else ''}")
        if not rows:
            raise self.error("no submission of the manifest could be read (submission files missing?)")
        scores = pd.DataFrame(rows)
        scores = self._distinct_settings(scores)
        parsed.scores = pd.concat([scores, self._paper_means(scores)], ignore_index=True)
        found = pd.DataFrame(models)
        parsed.models = found[found["release_date"].notna()].drop_duplicates("model") if len(found) else found
        parsed.meta.update({"tables": tables, "last_updated": manifest.get("last_updated")})
        return parsed

    @staticmethod
    def _aux_for(directory: str, aux: Mapping[str, bytes]) -> bytes | None:
        names = (f"sub_{directory}.json", f"{directory}.json", f"{directory}/submission.json")
        for n in names:
            if n in aux:
                return aux[n]
        pattern = re.compile(rf"^(?:tau2_bench_)?sub_{re.escape(directory)}{_DATE_SUFFIX}\.json$")
        return next((body for n, body in aux.items() if pattern.match(n)), None)

    def _submission(self, sub: dict, directory: str, table: str, parsed: ParsedSnapshot) -> list[dict]:
        results = sub.get("results")
        if not isinstance(results, dict):
            self.warn(parsed, f"submission {directory}: no 'results' object; skipped")
            return []
        model = clean_name(sub.get("model_name")) or directory
        method: dict = sub["methodology"] if isinstance(sub.get("methodology"), dict) else {}
        release: dict = sub["model_release"] if isinstance(sub.get("model_release"), dict) else {}
        evaluated = parse_date(method.get("evaluation_date")) or parse_date(sub.get("submission_date"))
        released = parse_date(release.get("release_date"))
        setting = "; ".join(str(x) for x in (
            f"effort={sub['reasoning_effort']}" if sub.get("reasoning_effort") else None,
            "custom" if str(sub.get("submission_type") or "").lower() == "custom" else None) if x)
        trials = self._trials(sub, method)
        out = []
        for domain, res in results.items():
            if not isinstance(res, dict):
                continue      # a domain not evaluated is null
            for key, value in res.items():
                m = _PASS.match(str(key))
                if not m or value is None:
                    continue
                k = int(m[1])
                if trials is not None and k > trials:
                    self.warn(parsed, f"submission {directory}: {key} beyond the {trials} trial(s) it states; ignored")
                    continue
                try:
                    if isinstance(value, bool):     # JSON true/false is no score (float(True) / 100 = 0.01)
                        raise TypeError(value)
                    score = float(value) / 100.0
                except (TypeError, ValueError):
                    self.warn(parsed, f"submission {directory}: {domain}.{key} = {value!r} is not a number; skipped")
                    continue
                out.append({"benchmark": benchmark_id(domain, k), "model": model, "setting": setting,
                            "model_tag": "System: custom" if "custom" in setting.split("; ") else None,
                            "score": score, "raw_value": str(value), "metric": "proportion",
                            "evaluated_at": evaluated, "model_release_date": released,
                            "table_version": table, "_dir": directory})
        return out

    @staticmethod
    def _trials(sub: dict, method: dict) -> int | None:
        for holder in (sub, method):
            for key in _TRIAL_KEYS:
                value = holder.get(key)
                if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 1:
                    return int(value)
        return None

    def _distinct_settings(self, scores: pd.DataFrame) -> pd.DataFrame:
        """Two submissions of one model with one setting on one board (resubmissions) stay apart:
        their directory joins the setting."""
        per = scores.drop_duplicates(["model", "setting", "table_version", "_dir"])
        clash = per.duplicated(["model", "setting", "table_version"], keep=False)
        if clash.any():
            dirs = set(per.loc[clash, "_dir"])
            hit = scores["_dir"].isin(dirs)
            scores.loc[hit, "setting"] = [f"{s}; {d}" if s else d for s, d in
                                          zip(scores.loc[hit, "setting"], scores.loc[hit, "_dir"])]
        return scores.drop(columns="_dir")

    @staticmethod
    def _paper_means(scores: pd.DataFrame) -> pd.DataFrame:
        """`tau2_bench`: the unweighted mean of retail, airline and telecom pass^1 (all three present)."""
        wanted = {benchmark_id(d, 1): d for d in PAPER_DOMAINS}
        first = scores[scores["benchmark"].isin(list(wanted))]
        out = []
        for (model, setting, table), g in first.groupby(["model", "setting", "table_version"], sort=False):
            if set(g["benchmark"]) != set(wanted):
                continue
            row = g.iloc[0]
            by = dict(zip(g["benchmark"], g["raw_value"]))
            out.append({"benchmark": PAPER_BENCHMARK, "model": model, "setting": setting, "model_tag": row["model_tag"],
                        "score": float(g["score"].mean()),
                        "raw_value": "mean(" + ", ".join(f"{wanted[b]} {by[b]}" for b in wanted) + ")",
                        "metric": "proportion", "evaluated_at": row["evaluated_at"],
                        "model_release_date": row["model_release_date"], "table_version": table})
        return pd.DataFrame(out)

    # the declared cases (scrapers/cases.py), run by tests/unit/test_scraper_cases.py
    CASES = (
        Case("tau2_bench/manifest_2026-07-01.json", replay="manifest.json", aux=TAU2_FIX, scores=39, models=4, rejects=0,
             meta={"tables": {"text": 2, "voice": 1, "legacy": 2}}, warnings=("gemini-2-5-flash_google_2025-02-01",),
             spots=(
                 S(benchmark="tau2_bench_retail", model="GLM-5.2")(score=0.8574561403508771, table_version="text",
                                                                    setting="effort=max", evaluated_at="2026-06-21",
                                                                    model_release_date="2026-06-16"),
                 S(benchmark="tau2_bench_banking_knowledge_pass4", model="GLM-5.2")(score=0.13402061855670103),
                 S(benchmark="tau2_bench_banking_knowledge", model="GPT-5.4")(score=0.3067, setting="effort=xhigh"),
                 Absent({"benchmark": "tau2_bench_banking_knowledge_pass2", "model": "GPT-5.4"}),
                 S(benchmark="tau2_bench", model="Gemini 3.0 Pro")(score=(0.853 + 0.73 + 0.98) / 3, table_version="legacy"),
                 S(benchmark="tau2_bench", model="gpt-realtime-1.5")(table_version="voice"),
                 S(benchmark="tau2_bench_airline_pass3", model="GPT-5")(score=0.51, model_release_date=None),
                 S("models", model="Gemini 3.0 Pro")(release_date="2025-11-18", org="Google"),
             )),
        # (the other tau2_bench copies — manifests without their submission files, the JSON schemas —
        # are skipped by its backfill with the reason: Tau2BenchScraper.backfill_groups)
        snap("tau2_bench/tau2_bench_manifest_2025-12-17.json", 116, rejects=0, models=0,
             aux=tau2_snap("2025-12-17", TAU2_DIRS_2025_12_17), meta={"tables": {"legacy": 16}}, spots=(
                 S(benchmark="tau2_bench", model="Gemini 3.0 Pro")(score=(0.853 + 0.73 + 0.98) / 3),
                 S(benchmark="tau2_bench", model="Qwen3-Max-Thinking-Preview")(
                     score=(0.7543859649122807 + 0.71 + 0.9583333333333334) / 3),
                 S(benchmark="tau2_bench_telecom", model="Nemotron-Orchestrator-8B")(score=0.886, setting="custom",
                                                                                     model_tag="System: custom"),
                 S(benchmark="tau2_bench", model="GPT-5")(model_tag=None))),
        snap("tau2_bench/tau2_bench_manifest_2026-07-01.json", 357, rejects=0,
             aux=tau2_snap("2026-07-01", TAU2_DIRS_2026_07_01), meta={"tables": {"text": 20, "voice": 11, "legacy": 16}},
             spots=(
                 S(benchmark="tau2_bench_banking_knowledge", model="GPT-5.5")(score=0.3737, table_version="text"),
                 S(benchmark="tau2_bench_retail", model="gpt-realtime-2", setting="effort=xhigh; custom")(score=0.5),
                 S(benchmark="tau2_bench_retail", model="gpt-realtime-2", setting="effort=xhigh")(
                     score=0.47368421052631575, table_version="voice"),
                 S(benchmark="tau2_bench_retail", model="Qwen3-Max-Thinking")(table_version="legacy",
                                                                             model_release_date="2026-01-23"),
                 S("models", model="GPT-5")(release_date="2025-08-07"))),
    )

"""Model identity (registry/identity.py), per-population top-k, and results dated by their own evaluation."""

from __future__ import annotations

import math
from datetime import datetime, timezone

import numpy as np
import pandas as pd
import pytest

import registry
import scrapers
from analysis.saturation_tables import saturation_table
from analysis.trajectory import saturation_trajectory
from dating_oracle import dated_history
from registry.identity import identify_frame, split_variant
from scrapers.base import ParsedSnapshot, SCORE_COLUMNS, conform
from jobs.sync import connect_synced as connect   # what the jobs open (migrated + registry)
from storage.ingest import store_snapshot
from storage.responses import Response
from storage.store import open_store

ALIASES = registry.alias_map("model")


def ident(source: str, names: list[str], benchmark: str = "x", tags=None) -> pd.DataFrame:
    rows = pd.DataFrame({"source": source, "benchmark": benchmark, "snapshot_id": 1, "model_raw": names,
                         "model_tag": tags if tags is not None else [None] * len(names)})
    return pd.concat([rows, identify_frame(rows, ALIASES, scrapers.naming_rules())], axis=1)


def test_reasoning_effort_and_labels_collapse_onto_one_model():
    out = ident("simple_evals", ["o3-high", "o3", "o3-low", "Claude-3-Opus (report)", "Claude-3-Opus (rerun w/ api)"])
    assert out["model"].tolist()[:3] == ["o3-2025-04-16"] * 3
    assert out["variant"].tolist()[:3] == ["effort=high", "", "effort=low"]
    assert out["model"].iloc[3] == out["model"].iloc[4] == registry.resolve("model", "Claude-3-Opus")
    assert out["variant"].iloc[3] == "label=report"


def test_bare_suffix_needs_evidence_and_explicit_markers_do_not():
    # 'mistral-medium' is a size, not an effort: nothing on the page says otherwise
    assert ident("lmarena", ["mistral-medium", "mistral-large"])["model"].tolist() == ["mistral-medium", "mistral-large"]
    # two efforts of one unresolved base collapse (the page says they are one model), unresolved
    out = ident("livebench", ["zz-model-high", "zz-model-low", "kimi-k2-thinking", "zz-other-thinking-64k"])
    assert out["model"].tolist() == ["zz-model", "zz-model", "kimi-k2-thinking", "zz-other"]
    assert split_variant(scrapers.get("livebench").NAMING, "claude-opus-4-5-20251101-thinking-64k-high-effort") == \
        ("claude-opus-4-5-20251101", "thinking=64k; effort=high")   # one attribute each (issue 51)
    assert split_variant(scrapers.get("aider_polyglot").NAMING, "gpt-5 (high)") == ("gpt-5", "effort=high")


def test_swebench_systems_and_bash_only_model_runs():
    out = ident("swebench", ["SWE-agent + Claude 4 Sonnet", "Rovo Dev"], benchmark="swebench_verified",
                tags=["Model: claude-sonnet-4-20250514", "Model: claude-sonnet-4-20250514; Model: gpt-5"])
    assert out["population"].tolist() == ["systems", "systems"]
    assert out["underlying"].iloc[0] == "claude-sonnet-4-20250514" and pd.isna(out["underlying"].iloc[1])
    bash = ident("swebench", ["Claude 4 Sonnet (20250514)"], benchmark="swebench_bash_only",
                 tags=["Model: claude-sonnet-4-20250514"])
    assert bash["population"].tolist() == ["models"] and bash["model"].iloc[0] == "claude-sonnet-4-20250514"
    assert ident("aider_polyglot", ["o3 (high) + gpt-4.1"])["population"].iloc[0] == "systems"
    # tau2_bench: a custom agent submission is a system; the standard harness's rows are model runs
    tau = ident("tau2_bench", ["Nemotron-Orchestrator-8B", "GPT-5"], benchmark="tau2_bench_retail",
                tags=["System: custom", None])
    assert tau["population"].tolist() == ["systems", "models"]


def test_terminal_bench_rows_are_systems_with_their_model():
    out = ident("terminal_bench", ["Droid (claude-sonnet-4-20250514)", "Abacus AI Desktop (gpt-5-mini + o3)"],
                benchmark="terminal_bench", tags=["Model: claude-sonnet-4-20250514", "Model: gpt-5-mini; Model: o3"])
    assert out["population"].tolist() == ["systems", "systems"]
    assert out["model"].tolist() == ["Droid (claude-sonnet-4-20250514)", "Abacus AI Desktop (gpt-5-mini + o3)"]
    assert out["underlying"].iloc[0] == "claude-sonnet-4-20250514" and pd.isna(out["underlying"].iloc[1])


def s_index(s1: float, sk: float, n: float, alpha: float = 0.5) -> float:
    """The paper's formula written out (independent of analysis.saturation)."""
    ne = n ** alpha
    se = math.sqrt(s1 * (1 - s1) / ne + sk * (1 - sk) / ne)
    return math.exp(-((s1 - sk) / se) ** 2)


def test_topk_counts_each_model_once_and_records_the_variant():
    latest = pd.DataFrame({
        "benchmark": "b", "metric": "proportion", "n_items": 500,
        "model": ["m1", "m1", "m1", "m2", "m3", "m4", "m5", "m6"],
        "model_raw": ["m1-high", "m1", "m1-low", "m2", "m3", "m4", "m5", "m6"],
        "score": [0.97, 0.96, 0.95, 0.80, 0.78, 0.70, 0.65, 0.60]})
    row = saturation_table(latest, k=5, bootstrap_seed=None).iloc[0]
    assert list(row["top_models"]) == ["m1", "m2", "m3", "m4", "m5"]
    assert list(row["top_variants"])[0] == "m1-high"
    assert row["s_index"] == pytest.approx(s_index(0.97, 0.65, 500))
    assert row["n_models"] == 6
    # the bug this replaces: one row per name would have put m1 three times in the top 5
    assert row["s_index"] < s_index(0.97, 0.78, 500)


def test_systems_and_models_are_never_ranked_together():
    latest = pd.DataFrame({
        "benchmark": "b", "metric": "proportion", "n_items": 500,
        "model": [f"m{i}" for i in range(5)] + [f"sys{i}" for i in range(6)],
        "population": ["models"] * 5 + ["systems"] * 6,
        "underlying": [None] * 5 + ["m0", "m0", "m1", "m2", "m3", "m4"],
        "score": [0.5, 0.45, 0.44, 0.43, 0.40, 0.9, 0.88, 0.7, 0.69, 0.68, 0.67]})
    out = saturation_table(latest, k=5, bootstrap_seed=None).set_index("population")
    assert out.loc["models", "s_index"] == pytest.approx(s_index(0.5, 0.40, 500))
    assert out.loc["systems", "s_index"] == pytest.approx(s_index(0.9, 0.68, 500))
    per_model = out.loc["systems_per_model"]
    assert list(per_model["top_models"]) == ["m0", "m1", "m2", "m3", "m4"]
    assert list(per_model["top_variants"])[0] == "sys0"
    assert per_model["s_index"] == pytest.approx(s_index(0.9, 0.67, 500))


def brute_force_trajectory(h: pd.DataFrame, release: dict, n: int, k: int) -> dict:
    """S at each date, re-derived from scratch: each result at its evaluation date, else at
    max(first observation, release) (a release never moves an evaluated result; issue 20)."""
    own = h["evaluated_at"].fillna(h["first_observed_at"])
    rel = h["model"].map(release)
    date = np.where(rel.notna() & (rel > own) & h["evaluated_at"].isna(), rel, own)
    out = {}
    for t in sorted(set(pd.to_datetime(date))):
        best = {}
        for m, s, d in zip(h["model"], h["score"], pd.to_datetime(date)):
            if d <= t:
                best[m] = max(best.get(m, -1), s)
        top = sorted(best.values(), reverse=True)
        if len(top) >= k:
            out[t] = s_index(top[0], top[k - 1], n)
    return out


def test_each_result_enters_at_its_own_date_brute_force():
    rng = np.random.default_rng(7)
    models = [f"m{i}" for i in range(12)]
    rows = []
    for m in models:
        for _ in range(rng.integers(1, 4)):   # re-submissions under the same name
            ev = pd.Timestamp("2024-01-01") + pd.Timedelta(days=int(rng.integers(0, 400)))
            rows.append({"benchmark": "b", "model": m, "score": float(rng.uniform(0.3, 0.9)), "metric": "proportion",
                         "evaluated_at": ev if rng.random() < 0.7 else pd.NaT,
                         "first_observed_at": ev + pd.Timedelta(days=int(rng.integers(0, 60)))})
    h = pd.DataFrame(rows)
    release = {m: pd.Timestamp("2024-01-01") + pd.Timedelta(days=int(rng.integers(0, 300))) for m in models[:8]}
    claims = pd.DataFrame({"model": list(release), "model_raw": list(release), "source": "registry",
                           "snapshot_id": None, "release_date": list(release.values()), "knowledge_cutoff": pd.NaT,
                           "provenance": "registry", "org": None,
                           "observed_at": pd.Timestamp("2024-01-01", tz="UTC")})
    dated = dated_history(h, claims)
    own = dated["evaluated_at"].fillna(dated["first_observed_at"])
    assert (dated["date"] >= own).all()                        # never before its own evaluation
    evaluated = dated["evaluated_at"].notna()
    assert (dated.loc[evaluated, "date"] == dated.loc[evaluated, "evaluated_at"]).all()   # never moved by a release
    rel = dated["model"].map(release)
    bounded = rel.notna() & ~evaluated
    assert (dated["date"][bounded] >= rel[bounded]).all()      # a first observation: never before the release
    assert (dated["date_conflict"] == (evaluated & rel.notna() & (rel > dated["evaluated_at"]))).all()
    traj = saturation_trajectory(dated, 500, 5).set_index("as_of")["s_index"]
    expected = brute_force_trajectory(h, release, 500, 5)
    assert len(traj) == len(expected)
    for t, v in expected.items():
        assert traj.loc[t] == pytest.approx(v)


def test_first_name_date_would_move_a_resubmission_early():
    """The old dating (first date of the name for every row) gives a different trajectory: the test can fail."""
    h = pd.DataFrame({"benchmark": "b", "metric": "proportion",
                      "model": ["a", "a", "b", "c", "d", "e"], "score": [0.3, 0.9, 0.5, 0.5, 0.5, 0.5],
                      "evaluated_at": pd.to_datetime(["2024-01-01", "2024-07-01", "2024-01-02", "2024-01-03",
                                                      "2024-01-04", "2024-01-05"]),
                      "first_observed_at": pd.to_datetime(["2024-01-10"] * 6)})
    traj = saturation_trajectory(dated_history(h, pd.DataFrame()), 500, 5).set_index("as_of")["s_index"]
    assert traj.loc[pd.Timestamp("2024-01-05")] == pytest.approx(s_index(0.5, 0.3, 500))
    assert traj.loc[pd.Timestamp("2024-07-01")] == pytest.approx(s_index(0.9, 0.5, 500))


def test_variants_collapsing_in_one_snapshot_are_stored_without_key_clash(synced_db, tmp_path):
    with connect(open_store(str(synced_db))) as con:
        scores = conform(pd.DataFrame({"benchmark": "math_500", "model": ["o3", "O3", "o3-high", "o3-low"],
                                       "setting": "", "score": [0.9, 0.91, 0.95, 0.85], "metric": "proportion",
                                       "raw_value": "x", "excluded_reason": ""}), SCORE_COLUMNS)
        parsed = ParsedSnapshot(source="simple_evals", scores=scores, naming=scrapers.get("simple_evals").NAMING)
        store_snapshot(con, parsed, [Response("f.md", b"one")], observed_at=datetime(2025, 1, 1, tzinfo=timezone.utc),
                       origin="ingest", parser_version=1)
        rows = con.execute("SELECT model_raw, model, variant FROM scores ORDER BY model_raw").fetchall()
        assert [r[1] for r in rows] == ["o3-2025-04-16"] * 4
        assert {r[0] for r in rows} == {"o3", "O3", "o3-high", "o3-low"}
        latest = con.execute("SELECT * FROM latest_scores").df()
        sat = saturation_table(latest, k=2, bootstrap_seed=None)
        assert sat["n_models"].iloc[0] == 1   # one model, fewer than k: no index


# --- naming rules: declared by each source, handed to identity as data ---------------------------

def test_identity_names_no_source_and_every_rule_is_a_sources_declaration():
    """registry/identity.py applies rules it is handed; which source has which rule lives on the
    scraper class (`NAMING`), so the module names no source and has no per-source branch."""
    from pathlib import Path

    from common.naming import NamingRules
    text = (Path(registry.__file__).parent / "identity.py").read_text(encoding="utf-8")
    code = text.split('"""', 2)[2]          # past the module docstring
    named = [s for s in scrapers.SOURCES if f'"{s}"' in code or f"'{s}'" in code]
    assert not named, f"registry/identity.py names sources {named}: declare their rules as NAMING on the scraper"
    rules = scrapers.naming_rules()
    assert set(rules) == set(scrapers.SOURCES) and all(isinstance(r, NamingRules) for r in rules.values())
    assert rules["simple_evals"].variants and rules["swebench"].benchmark_dependent and rules["csv"] == NamingRules()


def test_a_toy_sources_rules_are_applied_and_change_the_synced_digest():
    """A new source's NAMING needs no edit of identity: its rules apply from the data, and a changed
    rule changes the digest the registry sync compares (stored rows are re-identified)."""
    from common.naming import EFFORT, NamingRules
    from storage.registry_sync import synced_digest
    toy = {"toy": NamingRules(variants=((rf"\s*\[({EFFORT})\]$", "effort"),), system_tag=r"^agent$")}
    rows = pd.DataFrame({"source": "toy", "benchmark": "x", "snapshot_id": 1,
                         "model_raw": ["o3 [high]", "o3", "scaffold"], "model_tag": [None, None, "agent"]})
    got = identify_frame(rows, ALIASES, toy)
    assert got["model"].tolist()[:2] == ["o3-2025-04-16"] * 2 and got["variant"].tolist()[:2] == ["effort=high", ""]
    assert got["population"].tolist() == ["models", "models", "systems"]
    # no rules of its own: only the shared markers apply (none of them is `[high]`)
    assert identify_frame(rows, ALIASES, {})["variant"].tolist() == ["", "", ""]
    base = scrapers.naming_rules()
    assert synced_digest(base) == synced_digest(dict(reversed(list(base.items()))))
    changed = dict(base, simple_evals=NamingRules())
    assert synced_digest(changed) != synced_digest(base)
    swapped = NamingRules(systems=True, model_run_benchmarks=frozenset({"b", "a"}))
    assert swapped.fingerprint() == NamingRules(systems=True, model_run_benchmarks=frozenset({"a", "b"})).fingerprint()

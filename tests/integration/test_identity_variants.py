"""Settings of one model are not models (issue 49): precision/serving builds and effort levels
written into a name collapse onto one model in every source; models and agent systems are split
before a model's best variant is chosen; stored rows are re-identified when the rules change."""

from __future__ import annotations

from datetime import datetime, timezone

import pandas as pd
import pytest

import registry
import scrapers
from analysis.saturation_tables import saturation_table
from common.naming import NO_RULES
from jobs.sync import connect_synced as connect
from registry.identity import identify_frame, split_variant
from scrapers.base import SCORE_COLUMNS, ParsedSnapshot, conform
from storage.ingest import store_snapshot
from storage.responses import Response
from storage.store import open_store

ALIASES = registry.alias_map("model")
# sources whose rows are model runs named by the page (systems sources name agent systems)
MODEL_SOURCES = [s for s in scrapers.SOURCES if not scrapers.get(s).NAMING.systems]


def ident(source: str, names: list[str], snapshot: int = 1) -> pd.DataFrame:
    rows = pd.DataFrame({"source": source, "benchmark": "x", "snapshot_id": snapshot, "model_raw": names,
                         "model_tag": [None] * len(names)})
    return pd.concat([rows, identify_frame(rows, ALIASES, scrapers.naming_rules())], axis=1)


# --- precision and serving builds ----------------------------------------------------------------

@pytest.mark.parametrize("source", MODEL_SOURCES)
def test_bf16_and_fp8_twins_are_one_model_in_every_source(source):
    out = ident(source, ["llama-3.1-405b-instruct-bf16", "llama-3.1-405b-instruct-fp8", "gpt-4o-mini"])
    assert out["model"].tolist() == ["llama-3.1-405b-instruct"] * 2 + ["gpt-4o-mini-2024-07-18"]
    assert out["variant"].tolist() == ["precision=bf16", "precision=fp8", ""]


def test_precision_spellings_and_a_serving_host():
    rules = NO_RULES
    assert split_variant(rules, "Meta-Llama-3.1-405B-Instruct-FP8") == ("Meta-Llama-3.1-405B-Instruct", "precision=fp8")
    assert split_variant(rules, "Llama 4 Maverick (FP8)") == ("Llama 4 Maverick", "precision=fp8")
    assert split_variant(rules, "qwen2:72b-instruct-q8_0") == ("qwen2:72b-instruct", "precision=q8_0")
    assert split_variant(rules, "Qwen2.5-72B-Instruct-AWQ") == ("Qwen2.5-72B-Instruct", "precision=awq")
    assert split_variant(rules, "Llama-4-Maverick-17B-128E-Instruct-FP8-together") == \
        ("Llama-4-Maverick-17B-128E-Instruct", "precision=fp8; host=together")
    assert split_variant(rules, "openrouter/anthropic/claude-3.5-sonnet") == ("anthropic/claude-3.5-sonnet",
                                                                             "host=openrouter")
    # not precision markers: real names
    for name in ("gpt-4-turbo", "gpt-3.5-turbo", "gpt-4o-mini", "llama-3.1-405b-instruct", "kimi-k2-thinking",
                 "mistral-medium", "qwen-max", "phi-3-mini-4k-instruct", "gpt-4-32k"):
        assert split_variant(rules, name, lambda base, suffix: False) == (name, ""), name   # no bare evidence


def test_a_precision_twin_counts_once_in_the_top_k():
    """MMLU (LMArena): the 405B's bf16 and fp8 rows were two of the top 5 (S 0.9994 "very high")."""
    names = ["llama-3.1-405b-instruct-bf16", "llama-3.1-405b-instruct-fp8", "gpt-4o-mini", "o3", "o1", "gpt-5",
             "o3-mini"]
    ids = ident("lmarena", names)
    latest = ids.assign(benchmark="mmlu", metric="proportion", n_items=14042,
                        score=[0.886, 0.885, 0.82, 0.80, 0.78, 0.77, 0.70])
    row = saturation_table(latest, k=5, bootstrap_seed=None).iloc[0]
    assert row["top_models"].count("llama-3.1-405b-instruct") == 1
    assert row["n_models"] == 6 and row["sk"] == pytest.approx(0.77)


# --- effort levels and thinking budgets ----------------------------------------------------------

@pytest.mark.parametrize("source", MODEL_SOURCES)
def test_arc_agi_effort_pairs_are_one_model_in_every_source(source):
    out = ident(source, ["gpt-5.2-2025-12-11-thinking-high", "gpt-5.2-2025-12-11-thinking-xhigh", "o3-high",
                         "o3-low", "o1 - high", "o1 - low", "claude-opus-4-1-20250805-thinking-16k"])
    assert out["model"].tolist() == ["gpt-5.2-2025-12-11"] * 2 + ["o3-2025-04-16"] * 2 + ["o1-2024-12-17"] * 2 + \
        ["claude-opus-4-1-20250805"]
    assert out["variant"].tolist() == ["effort=high", "effort=xhigh", "effort=high", "effort=low", "effort=high",
                                       "effort=low", "thinking=16k"]


def test_an_unresolved_pair_of_efforts_collapses_onto_its_base():
    out = ident("arc_agi", ["gpt-5-2-high", "gpt-5-2-xhigh", "Zz Model 3 Thinking 16K", "Zz Model 3 Thinking 8K"])
    assert out["model"].tolist() == ["gpt-5-2", "gpt-5-2", "Zz Model 3", "Zz Model 3"]
    assert out["variant"].tolist() == ["effort=high", "effort=xhigh", "thinking=16k", "thinking=8k"]


def test_a_variant_names_each_attribute_once():
    """`-thinking-64k-high-effort` is a budget and an effort, not two efforts."""
    assert split_variant(scrapers.get("livebench").NAMING, "claude-opus-4-5-20251101-thinking-64k-high-effort") == \
        ("claude-opus-4-5-20251101", "thinking=64k; effort=high")
    # a second marker of an attribute already taken stays in the name (never merged by guesswork)
    assert split_variant(NO_RULES, "zz-high-effort-low-effort") == ("zz-high-effort", "effort=low")


def test_every_variant_is_well_formed_in_every_source():
    names = ["claude-opus-4-5-20251101-thinking-64k-high-effort", "o3-mini (high)", "gpt-5 (32k thinking)",
             "x-model-fp8-high-effort", "gpt-5-2-2025-12-11-thinking-xhigh", "o3-high", "o3"]
    for source in MODEL_SOURCES:
        for v in ident(source, names)["variant"]:
            keys = [p.split("=", 1)[0] for p in v.split("; ")] if v else []
            assert len(keys) == len(set(keys)), (source, v)
            assert all("=" in p for p in (v.split("; ") if v else [])), (source, v)


# --- never merge two different models ------------------------------------------------------------

# (name, the model it is): distinct truths must stay distinct models
REAL_LOOKING = [
    ("gpt-4o", "gpt-4o"), ("gpt-4o-mini", "gpt-4o-mini"), ("gpt-4o-mini-high", "gpt-4o-mini"),
    ("gpt-4-turbo", "gpt-4-turbo"), ("gpt-4", "gpt-4"), ("gpt-3.5-turbo", "gpt-3.5-turbo"),
    ("llama-3.1-405b-instruct", "llama-3.1-405b-instruct"), ("llama-3.1-405b-instruct-fp8", "llama-3.1-405b-instruct"),
    ("llama-3.1-405b-instruct-bf16", "llama-3.1-405b-instruct"), ("llama-3.1-405b", "llama-3.1-405b"),
    ("Llama-3.1-405B-FP8", "llama-3.1-405b"), ("llama-3.1-70b-instruct", "llama-3.1-70b-instruct"),
    ("mistral-medium", "mistral-medium"), ("mistral-large", "mistral-large"), ("mistral-small", "mistral-small"),
    ("kimi-k2", "kimi-k2"), ("kimi-k2-thinking", "kimi-k2-thinking"), ("qwen-max", "qwen-max"),
    ("o3", "o3"), ("o3-high", "o3"), ("o3-low", "o3"), ("o3-mini", "o3-mini"), ("o3-mini-high", "o3-mini"),
    ("o3-pro", "o3-pro"), ("o1 - high", "o1"), ("o1", "o1"), ("o1-mini", "o1-mini"),
    ("gpt-5", "gpt-5"), ("gpt-5-mini", "gpt-5-mini"), ("gpt-5-mini-minimal", "gpt-5-mini"),
    ("gpt-5 (high)", "gpt-5"), ("gpt-5-nano", "gpt-5-nano"), ("gpt-5.2-2025-12-11-thinking-xhigh", "gpt-5.2"),
    ("gpt-5.2", "gpt-5.2"), ("claude-opus-4-1-20250805-thinking-16k", "claude-opus-4-1"),
    ("claude-opus-4-1-20250805", "claude-opus-4-1"), ("claude-opus-4-20250514", "claude-opus-4"),
    ("Qwen2.5-Coder-32B-Instruct", "qwen2.5-coder-32b-instruct"),
    ("Qwen2.5-Coder-32B-Instruct-AWQ", "qwen2.5-coder-32b-instruct"), ("Qwen2.5-Coder-32B", "qwen2.5-coder-32b"),
    ("deepseek-v3", "deepseek-v3"), ("deepseek-v3-0324", "deepseek-v3-0324"), ("deepseek-r1", "deepseek-r1"),
    ("gemini-2.5-pro", "gemini-2.5-pro"), ("gemini-2.5-flash", "gemini-2.5-flash"),
    ("gemini-2.5-flash-lite", "gemini-2.5-flash-lite"), ("grok-4", "grok-4"), ("grok-4-fast", "grok-4-fast"),
    ("gpt-realtime-2", "gpt-realtime-2"), ("gpt-realtime-2-minimal", "gpt-realtime-2"),
    ("phi-3-mini-4k-instruct", "phi-3-mini-4k-instruct"), ("phi-3-mini-128k-instruct", "phi-3-mini-128k-instruct"),
]


def _check_no_merge(source: str, pairs: list[tuple[str, str]]) -> None:
    out = ident(source, [n for n, _ in pairs])
    by_model: dict[str, set[str]] = {}
    for (name, truth), model in zip(pairs, out["model"]):
        by_model.setdefault(model, set()).add(truth)
    merged = {m: t for m, t in by_model.items() if len(t) > 1}
    assert not merged, f"{source}: different models merged: {merged}"


@pytest.mark.parametrize("source", MODEL_SOURCES)
def test_stripping_variants_never_merges_two_real_models(source):
    _check_no_merge(source, REAL_LOOKING)


def test_property_any_subset_of_real_names_keeps_distinct_models_apart():
    pytest.importorskip("hypothesis")
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=20, deadline=None, derandomize=True)
    @given(st.lists(st.sampled_from(REAL_LOOKING), min_size=2, max_size=25, unique=True),
           st.sampled_from(MODEL_SOURCES))
    def check(pairs, source):
        _check_no_merge(source, pairs)

    check()


# --- models and systems are split before the best variant is chosen -------------------------------

def _store(con, source: str, body: bytes, observed_at: datetime, **columns) -> None:
    """Store one snapshot of `source` whose score rows are `columns` (model, score, and any other
    score column: lists or one value each) through the ingest path, as a parser would hand it over."""
    scores = conform(pd.DataFrame({"setting": "", "metric": "proportion", "raw_value": "x", "excluded_reason": "",
                                   **columns}), SCORE_COLUMNS)
    parsed = ParsedSnapshot(source=source, scores=scores, naming=scrapers.get(source).NAMING)
    store_snapshot(con, parsed, [Response("response", body)], observed_at=observed_at, origin="ingest",
                   parser_version=1)


def _tau2_store(con, rows: list[tuple[str, str, float]]) -> None:
    """A τ²-style voice table: (name, setting, score); `custom` submissions are tagged systems."""
    _store(con, "tau2_bench", b"voice", datetime(2026, 7, 1, tzinfo=timezone.utc),
           benchmark="tau2_bench_retail", model=[r[0] for r in rows], setting=[r[1] for r in rows],
           model_tag=["System: custom" if "custom" in r[1] else None for r in rows],
           score=[r[2] for r in rows], table_version="voice")


VOICE = [("gpt-realtime-2", "effort=xhigh; custom", 0.50), ("gpt-realtime-2", "effort=xhigh", 0.4737),
         ("gpt-realtime-2-minimal", "effort=minimal", 0.40), ("gemini-live-2.5-flash", "", 0.49),
         ("gpt-realtime-1.5", "", 0.48), ("xai-realtime", "", 0.30), ("livekit-cascaded", "custom", 0.55)]


def test_a_models_best_row_that_is_a_system_run_does_not_hide_its_model_run(synced_db):
    with connect(open_store(str(synced_db))) as con:
        _tau2_store(con, VOICE)
        board = con.execute("""SELECT population, model, score, rank, setting, n_variants FROM leaderboard
                               ORDER BY population, rank, model""").fetchall()
    models = [r for r in board if r[0] == "models"]
    systems = [r for r in board if r[0] == "systems"]
    assert [(m, s, rank) for _, m, s, rank, _, _ in models] == [
        ("gemini-live-2.5-flash", 0.49, 1), ("gpt-realtime-1.5", 0.48, 2), ("gpt-realtime-2", 0.4737, 3),
        ("xai-realtime", 0.30, 4)]
    assert models[2][4] == "effort=xhigh" and models[2][5] == 2    # its standard runs: xhigh and minimal
    assert [(m, s, rank) for _, m, s, rank, _, _ in systems] == [("livekit-cascaded", 0.55, 1),
                                                                 ("gpt-realtime-2", 0.50, 2)]


def test_saturation_and_the_leaderboard_choose_the_same_best_rows(synced_db):
    """One definition of "a model's best row": the view and the analysis agree, per population."""
    with connect(open_store(str(synced_db))) as con:
        _tau2_store(con, VOICE)
        board = con.execute("SELECT population, model, model_raw, setting, rank FROM leaderboard "
                            "ORDER BY population, rank, model").df()
        latest = con.execute("SELECT * FROM latest_scores").df()
    for population, k in (("models", 3), ("systems", 2)):
        sat = saturation_table(latest, k=k, bootstrap_seed=None).set_index("population").loc[population]
        top = board[board["population"] == population].head(k)
        assert list(sat["top_models"]) == top["model"].tolist()
        assert list(sat["top_variants"]) == [r if not s else f"{r} [{s}]" for r, s in zip(top["model_raw"], top["setting"])]


# --- stored rows are re-identified ---------------------------------------------------------------

def test_a_registry_sync_recanonicalises_rows_stored_under_older_rules(synced_db):
    """A database written before the shared rules: its rows carry the page names as models. The
    rules are part of the synced digest, so the next synced connection re-identifies them."""
    with connect(open_store(str(synced_db))) as con:
        _store(con, "lmarena", b"a", datetime(2025, 1, 1, tzinfo=timezone.utc), benchmark="mmlu",
               model=["llama-3.1-405b-instruct-bf16", "llama-3.1-405b-instruct-fp8", "o3-high"],
               score=[0.88, 0.87, 0.9])
        # as the code before the shared rules left them, with that code's digest
        con.execute("UPDATE scores SET model = model_raw, variant = ''")
        con.execute("UPDATE meta SET value = 'older rules' WHERE key = 'registry_sha256'")
    with connect(open_store(str(synced_db))) as con:
        got = con.execute("SELECT model_raw, model, variant FROM scores ORDER BY model_raw").fetchall()
    assert got == [("llama-3.1-405b-instruct-bf16", "llama-3.1-405b-instruct", "precision=bf16"),
                   ("llama-3.1-405b-instruct-fp8", "llama-3.1-405b-instruct", "precision=fp8"),
                   ("o3-high", "o3-2025-04-16", "effort=high")]


# --- status: names a person could alias ----------------------------------------------------------

def test_status_lists_a_systems_unknown_model_not_the_system_name(synced_db):
    """An agent system is never a registry model (no alias can name it): `status` lists the model
    it runs on when the registry lacks it, and a model run's own unknown name, as before."""
    from storage import status
    with connect(open_store(str(synced_db))) as con:
        june = datetime(2025, 6, 1, tzinfo=timezone.utc)
        _store(con, "swebench", b"s", june, benchmark="swebench_verified",
               model=["Acme Agent + Zeta-9", "Other Agent", "Third Agent"],
               model_tag=["Model: zeta-9-preview", "Model: claude-sonnet-4-20250514", "Model: a; Model: b"],
               score=[0.5, 0.6, 0.4])
        _store(con, "lmarena", b"t", june, benchmark="mmlu", model=["acme-internal-7b-fp8", "o3-high"], score=[0.5, 0.9])
    with connect(open_store(str(synced_db))) as con:
        for large in (False, True):
            table, counts = status.unknown(con, large=large)
            names = {r[1] for r in table.rows if r[0] == "model"}
            assert names == {"zeta-9-preview", "acme-internal-7b"}, (large, names)
            assert counts["models"] == 2


def test_contamination_reads_a_models_own_runs_never_a_system_named_like_it():
    """τ²-bench names a custom submission after its model: the model's score for A1/A2 is its
    standard run (population `models`), not the custom system's better one."""
    from analysis.contamination.base import prepare_scores
    bench = pd.DataFrame({"reference_benchmarks": [()], "n_items": [114], "chance": [0.0]},
                         index=pd.Index(["tau2_bench_retail"], name="benchmark"))
    scores = pd.DataFrame({"source": "tau2_bench", "benchmark": "tau2_bench_retail", "metric": "proportion",
                           "model": ["gpt-realtime-2", "gpt-realtime-2", "gpt-realtime-1.5"],
                           "population": ["systems", "models", "models"], "score": [0.5, 0.4737, 0.447],
                           "n_items": 114})
    got = prepare_scores(scores, bench).set_index("model")["score"]
    assert got.to_dict() == {"gpt-realtime-2": 0.4737, "gpt-realtime-1.5": 0.447}


def test_the_leaderboard_says_which_model_names_are_registry_ids(synced_db):
    """A view's `model` is a canonical id when the registry knows the name, else the page's base
    name ('Claude 3.5 Sonnet' is deliberately not aliased): `model_known` tells them apart."""
    with connect(open_store(str(synced_db))) as con:
        _store(con, "lmarena", b"k", datetime(2025, 1, 1, tzinfo=timezone.utc), benchmark="mmlu",
               model=["llama-3.1-405b-instruct-bf16", "Claude 3.5 Sonnet", "GLM-5.2"], score=[0.88, 0.87, 0.8])
        got = con.execute("SELECT model, model_known FROM leaderboard ORDER BY model").fetchall()
    assert got == [("Claude 3.5 Sonnet", False), ("GLM-5.2", False), ("llama-3.1-405b-instruct", True)]


def test_a_systems_tagged_model_is_read_by_the_same_rules():
    """`Model:` tags name models too: a precision or effort marker in a tag is a setting of the
    model a bash-only run (or a system) runs on."""
    rows = pd.DataFrame({"source": ["swebench", "swebench", "terminal_bench"],
                         "benchmark": ["swebench_bash_only", "swebench_verified", "terminal_bench"],
                         "snapshot_id": 1, "model_raw": ["Llama 405B FP8 (mini-swe-agent)", "Agent + Llama", "Droid"],
                         "model_tag": ["Model: llama-3.1-405b-instruct-fp8", "Model: llama-3.1-405b-instruct-bf16",
                                       "Model: o3-high"]})
    got = identify_frame(rows, ALIASES, scrapers.naming_rules())
    assert got["model"].tolist() == ["llama-3.1-405b-instruct", "Agent + Llama", "Droid"]
    assert got["variant"].tolist() == ["precision=fp8", "", ""]
    assert got["underlying"].tolist()[1:] == ["llama-3.1-405b-instruct", "o3-2025-04-16"]


def test_arc_agi_custom_solutions_are_systems_and_its_effort_rows_one_model():
    """ARC Prize lists Kaggle solutions (`modelType: Custom`: ARChitects) beside model runs: they
    are agent systems, never ranked with the models; `o3-low`/`o3-high` are o3 at two efforts."""
    from pathlib import Path
    fix = Path(__file__).resolve().parents[1] / "fixtures" / "arc_agi"
    scraper = scrapers.get("arc_agi")
    parsed = scraper.parse((fix / "evaluations.json").read_bytes(), fetched_at=datetime(2025, 4, 16, tzinfo=timezone.utc),
                           aux={"models.json": (fix / "models.json").read_bytes(),
                                "datasets.json": (fix / "datasets.json").read_bytes()})
    s = parsed.scores.drop_duplicates("model")
    rows = pd.DataFrame({"source": "arc_agi", "benchmark": "arc_agi", "snapshot_id": 1, "model_raw": s["model"],
                         "model_tag": s["model_tag"] if "model_tag" in s.columns else None})
    got = pd.concat([rows.reset_index(drop=True), identify_frame(rows, ALIASES, scrapers.naming_rules())
                     .reset_index(drop=True)], axis=1).set_index("model_raw")
    assert got.loc["ARChitects", "population"] == "systems"
    assert got.loc["o3-high", "model"] == got.loc["o3-low", "model"] == "o3-2025-04-16"
    assert got.loc["o3-high", "population"] == "models"

"""The curated registry: it loads, validates, covers the paper's 60 benchmarks and every scraper id,
resolves aliases conservatively, and rejects malformed registries with a clear error."""

from __future__ import annotations

import csv
import json
import re
import shutil
from importlib import resources
from pathlib import Path

import pandas as pd
import pytest

import registry
from registry import alias_key, load_aliases, load_benchmarks, load_models, resolve
from scrapers.normalize import slug
from helpers import PAPER_DATA, ROOT, SNAPSHOTS, needs

pytestmark = pytest.mark.xdist_group("test_registry")   # its module fixtures are built once

REPO = ROOT
PAPER_CSV = PAPER_DATA / "paper2026_benchmarks.csv"
needs_paper = needs(PAPER_CSV)
needs_snapshots = needs(SNAPSHOTS)

# Paper rows whose n_items differs from the size of the set the tracked scores are computed on;
# benchmarks.csv explains each in notes ("paper2026 n_items=<paper value> ...").
PAPER_N_EXCEPTIONS = {"gpqa_diamond": 564, "mmlu": 15908, "mbpp": 974, "drop": 588,
                      "arc_agi": 1000, "terminal_bench": 112}   # the board scores another set (notes say which)


@pytest.fixture(scope="module")
def benchmarks() -> pd.DataFrame:
    return load_benchmarks()


@pytest.fixture(scope="module")
def models() -> pd.DataFrame:
    return load_models()


def _row(frame: pd.DataFrame, ident: str) -> pd.Series:
    hit = frame[frame["id"] == ident]
    assert len(hit) == 1, ident
    return hit.iloc[0]


# --- loading and dtypes ---------------------------------------------------------------------------

def test_registry_files_ship_as_package_data():
    files = resources.files("registry")
    for name in ("benchmarks.csv", "models.csv", "aliases.csv", "README.md"):
        assert files.joinpath(name).is_file(), name


def test_loaders_return_typed_frames(benchmarks, models):
    aliases = load_aliases()
    assert str(benchmarks["release_date"].dtype) == "datetime64[us]"
    assert str(benchmarks["material_date"].dtype) == "datetime64[us]"
    assert str(benchmarks["n_items"].dtype) == "Int64"
    assert str(benchmarks["paper_id"].dtype) == "Int64"
    assert benchmarks["dynamic"].dtype == bool
    assert all(isinstance(refs, list) for refs in benchmarks["reference_benchmarks"])
    assert str(models["release_date"].dtype) == "datetime64[us]"
    assert str(models["knowledge_cutoff"].dtype) == "datetime64[us]"
    assert str(models["open_weights"].dtype) == "boolean"
    assert set(aliases["kind"]) == {"model", "benchmark"}
    assert len(models) >= 60 and len(benchmarks) >= 60


def test_loaders_return_copies():
    first = load_benchmarks()
    first.loc[first["id"] == "mmlu", "n_items"] = 1
    first.loc[first["id"] == "mmlu", "reference_benchmarks"].iloc[0].append("x")
    again = _row(load_benchmarks(), "mmlu")
    assert again["n_items"] == 14042
    assert again["reference_benchmarks"] == ["mmlu_pro", "gpqa_diamond", "humanitys_last_exam"]


def test_benchmark_invariants(benchmarks):
    non_item = benchmarks[benchmarks["metric_kind"].isin(["elo", "score_10", "index", "cost_usd"])]
    assert non_item["n_items"].isna().all()
    assert {"arena_elo", "mt_bench", "epoch_capabilities_index"} <= set(non_item["id"])
    dynamic = benchmarks[benchmarks["dynamic"]]
    assert dynamic["material_date"].isna().all()
    assert {"livebench", "livecodebench", "arena_elo", "livebench_coding"} <= set(dynamic["id"])
    dated = benchmarks.dropna(subset=["material_date", "release_date"])
    assert (dated["material_date"] <= dated["release_date"]).all()


# --- the paper's 60 benchmarks --------------------------------------------------------------------

@needs_paper
def test_every_paper_benchmark_is_registered_with_its_size_and_date(benchmarks):
    paper = pd.read_csv(PAPER_CSV, dtype=str, keep_default_na=False)
    assert len(paper) == 60
    by_paper = benchmarks.dropna(subset=["paper_id"]).set_index("paper_id")
    assert sorted(by_paper.index) == list(range(1, 61))
    for row in paper.itertuples():
        ours = by_paper.loc[int(row.paper_id)]
        assert ours["release_date"] == pd.Timestamp(row.release_date), row.name
        if ours["id"] in PAPER_N_EXCEPTIONS:
            assert int(row.n_items) == PAPER_N_EXCEPTIONS[ours["id"]]
            assert f"paper2026 n_items={row.n_items}" in ours["notes"], ours["id"]
        else:
            assert ours["n_items"] == int(row.n_items), row.name
        # the paper's own name resolves to the registered id
        assert resolve("benchmark", row.name) == ours["id"], row.name


def test_paper_rows_shared_with_sources_use_one_id(benchmarks):
    assert _row(benchmarks, "gpqa_diamond")["paper_id"] == 2
    assert _row(benchmarks, "gpqa_diamond")["n_items"] == 198
    assert _row(benchmarks, "swebench_full")["n_items"] == 2294
    assert _row(benchmarks, "math_500")["paper_id"] == 1
    assert _row(benchmarks, "arena_hard_auto")["paper_id"] == 52
    assert _row(benchmarks, "mmlu")["ceiling"] == pytest.approx(1 - 0.0649)


# --- every id the scrapers emit -------------------------------------------------------------------

def _architecture_ids() -> set[str]:
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## Benchmark ids emitted by scrapers", 1)[1].split("\n## ", 1)[0]
    table = [line for line in section.splitlines() if line.startswith("|")]
    return {tok for line in table for tok in re.findall(r"`([^`]+)`", line) if re.fullmatch(r"[a-z0-9_]+", tok)}


def test_every_architecture_id_is_registered(benchmarks):
    wanted = _architecture_ids()
    assert {"swebench_bash_only", "aider_edit", "livecodebench_repair", "livebench_if", "mbpp_plus", "simpleqa",
            "otis_mock_aime_2024_2025", "alpacaeval_1", "bfcl_overall"} <= wanted
    assert wanted - set(benchmarks["id"]) == set()


def test_known_test_set_sizes(benchmarks):
    sizes = {"swebench_full": 2294, "swebench_verified": 500, "swebench_bash_only": 500, "swebench_lite": 300,
             "swebench_multimodal": 517, "aider_polyglot": 225, "aider_edit": 133, "humaneval": 164,
             "humaneval_plus": 164, "alpacaeval_2_lc": 805, "gpqa_diamond": 198, "math_500": 500, "mmlu": 14042,
             "mgsm": 2750, "simpleqa": 4326, "drop": 9536, "math": 5000}
    for ident, n in sizes.items():
        assert _row(benchmarks, ident)["n_items"] == n, ident


@needs_snapshots
def test_template_ids_from_snapshots_are_registered(benchmarks):
    ids = set(benchmarks["id"])
    tasks = set()
    for path in (SNAPSHOTS / "livebench").glob("livebench_table_*.csv"):
        with path.open(encoding="utf-8") as fh:
            tasks |= set(next(csv.reader(fh))) - {"model"}
    assert {f"livebench_task_{slug(t)}" for t in tasks} <= ids
    categories = {r["category"] for r in json.loads(
        (SNAPSHOTS / "lmarena" / "lmarena_elo_max_derived_2025-05-14.json").read_text(encoding="utf-8"))}
    assert {f"arena_elo_{c}" for c in categories} <= ids
    not_categories = ("Rank", "Overall Acc", "Model", "Model Link", "Organization", "License", "Latency",
                      "Format Sensitivity")
    for path in (SNAPSHOTS / "bfcl").glob("bfcl_data_overall_*.csv"):
        with path.open(encoding="utf-8") as fh:
            header = next(csv.reader(fh))
        columns = {c for c in header if not c.startswith(not_categories)}
        assert {f"bfcl_{slug(c)}" for c in columns} <= ids, path.name


@pytest.mark.slow   # parses every real snapshot file
@needs_snapshots
def test_every_id_the_scrapers_emit_on_the_snapshots_is_registered():
    """The registry <-> scraper contract, on real data: parse every snapshot file, resolve every benchmark id."""
    import scrapers

    from jobs.backfill import plan_with_skips
    known = registry.alias_map("benchmark")
    parsed_files, unknown = 0, set()
    for item in plan_with_skips(SNAPSHOTS)[0]:      # every file a backfill ingests, with its aux files
        scraper = scrapers.get(item.source)
        if scraper.produces != "scores":
            continue
        try:
            snap = scraper.parse_checked(item.path.read_bytes(), fetched_at=pd.Timestamp("2026-01-01").to_pydatetime(),
                                         aux={p.name: p.read_bytes() for p in item.aux}, filename=item.path.name)
        except scrapers.ScrapeError:
            continue  # a parser failure is the scraper tests' business; ids are checked on what parses
        parsed_files += 1
        unknown |= {b for b in snap.scores["benchmark"] if alias_key(b) not in known}
    assert parsed_files >= 30
    assert unknown == set()


# --- aliases --------------------------------------------------------------------------------------

def test_alias_key_is_conservative():
    assert alias_key("  GPT-4o\t mini ") == "gpt-4o mini"
    assert alias_key("Claude 3 Opus") == alias_key("claude 3  opus")
    assert alias_key("gpt-4o") != alias_key("gpt-4-o")
    assert alias_key("gpt_4o") != alias_key("gpt-4o")


def test_aliases_resolve_across_sources():
    cases = {
        "GPT-4O-2024-05-13": "gpt-4o-2024-05-13",              # LiveCodeBench model_repr
        "GPT-4 Omni (05/13)": "gpt-4o-2024-05-13",             # AlpacaEval
        "anthropic/claude-3.5-haiku": "claude-3-5-haiku-20241022",  # openrouter id
        "Claude 3.5 Sonnet (20240620)": "claude-3-5-sonnet-20240620",  # LMArena display name
        "Claude Sonnet 3.5 (June 2024)": "claude-3-5-sonnet-20240620",  # EvalPlus
        "meta-llama/Meta-Llama-3-70B-Instruct": "llama-3-70b-instruct",  # LiveCodeBench model_name
        "Llama-3.1-405B-Instruct": "llama-3.1-405b-instruct",   # Epoch (case variant of the id)
        "o3-20250416": "o3-2025-04-16",                        # SWE-bench tag
        "gemini-pro-dev-api": "gemini-1.0-pro-001",            # LMArena key, display Gemini-1.0-Pro-001
    }
    for name, canonical in cases.items():
        assert resolve("model", name) == canonical, name
    assert resolve("benchmark", "swe_bench_verified") == "swebench_verified"
    assert resolve("benchmark", "MATH-500") == "math_500"
    assert resolve("benchmark", "bfcl_overall_acc") == "bfcl_overall"
    assert resolve("benchmark", "Humanity’s Last Exam") == "humanitys_last_exam"


def test_ambiguous_and_setting_names_stay_unmapped():
    # undated names that pointed at several snapshots over time, and names that embed a setting
    for name in ("gpt-4o", "Claude 3.5 Sonnet", "deepseek-chat", "gpt-4", "o3-mini-high",
                 "gpt-5-2025-08-07_high", "claude-3-7-sonnet-thinking", "chutes/QwQ-32B"):
        assert resolve("model", name) is None, name
    assert resolve("model", "gpt-4-0613") != resolve("model", "gpt-4-1106-preview")


def test_alias_map_covers_ids_and_aliases():
    mapping = registry.alias_map("model")
    assert mapping["claude-3-opus-20240229"] == "claude-3-opus-20240229"
    assert mapping["claude-3-opus"] == "claude-3-opus-20240229"
    with pytest.raises(ValueError, match="alias kind"):
        registry.alias_map("dataset")


# --- model dates, spot-checked by hand against ../shared/snapshots/model_metadata ------------------

def test_model_dates_spot_checks(models):
    def check(ident, release, cutoff, provenance):
        row = _row(models, ident)
        assert row["release_date"] == pd.Timestamp(release), ident
        if cutoff is None:
            assert pd.isna(row["knowledge_cutoff"]) and row["cutoff_provenance"] == "", ident
        else:
            assert row["knowledge_cutoff"] == pd.Timestamp(cutoff), ident
            assert row["cutoff_provenance"] == provenance, ident

    # cutoff README (Anthropic docs: training-data cutoff 2024.04); models.dev release 2024-06-20
    check("claude-3-5-sonnet-20240620", "2024-06-20", "2024-04-01", "vendor_doc")
    # Anthropic training-data cutoff 2025.07 (reliable 2025.01); models.dev release 2025-09-29
    check("claude-sonnet-4-5-20250929", "2025-09-29", "2025-07-01", "vendor_doc")
    # Azure docs via cutoff README: GPT-4o (2024-05-13) 2023.10
    check("gpt-4o-2024-05-13", "2024-05-13", "2023-10-01", "vendor_doc")
    # OpenAI docs via cutoff README: GPT-5 2024.09.30; models.dev 2025-08 release 2025-08-07
    check("gpt-5-2025-08-07", "2025-08-07", "2024-09-30", "vendor_doc")
    # Llama 3.1 model card cutoff 2023.12; Epoch release 2024-07-23
    check("llama-3.1-405b-instruct", "2024-07-23", "2023-12-01", "model_card")
    # models.dev 2025-08 deepseek-chat (= V3) knowledge 2024-07; Epoch release 2024-12-26
    check("deepseek-v3", "2024-12-26", "2024-07-01", "listing")
    # cutoff README: "Qwen3 | Unknown" -> left empty
    check("qwen3-235b-a22b", "2025-04-29", None, "")


@needs_snapshots
def test_cited_release_dates_match_their_sources(models):
    """Every 'release: models.dev <file> <id>' / "release: Epoch '<name>'" citation holds in the snapshot files."""
    meta = SNAPSHOTS / "model_metadata"
    modelsdev = {
        "2026-07": pd.read_csv(meta / "model_metadata_modelsdev_firstparty_2026-07-02.csv", dtype=str, keep_default_na=False),
        "2025-08": pd.read_csv(meta / "model_metadata_modelsdev_firstparty_2025-08-31.csv", dtype=str, keep_default_na=False),
    }
    epoch: dict[str, set[str]] = {}
    for path in (SNAPSHOTS / "epoch").glob("*.csv"):
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
        for version, date in zip(frame["Model version"], frame["Release date"]):
            epoch.setdefault(version.strip(), set()).add(date)
    checked = 0
    for row in models.itertuples():
        m = re.match(r"release: models\.dev (\d{4}-\d{2}) (\S+);", row.source)
        if m:
            table = modelsdev[m[1]]
            assert table.loc[table["model_id"] == m[2], "release_date"].tolist() == [row.release_date.strftime("%Y-%m-%d")]
            checked += 1
        m = re.match(r"release: Epoch '([^']+)'", row.source)
        if m:
            assert row.release_date.strftime("%Y-%m-%d") in epoch[m[1]], row.id
            checked += 1
    assert checked >= 80


# --- malformed registries -------------------------------------------------------------------------

@pytest.fixture()
def registry_copy(tmp_path: Path) -> Path:
    for name in ("benchmarks.csv", "models.csv", "aliases.csv"):
        shutil.copy(resources.files("registry").joinpath(name), tmp_path / name)
    return tmp_path


LOADERS = {"benchmarks.csv": load_benchmarks, "models.csv": load_models, "aliases.csv": load_aliases}


def test_copied_registry_is_valid(registry_copy):
    assert len(load_aliases(registry_copy)) == len(load_aliases())


# (file, text replaced or None to append a line, its replacement or the line, the error expected)
MALFORMED = {
    "unknown metric kind": ("benchmarks.csv", ",500,proportion,0,1,public,no,math,", ",500,percent,0,1,public,no,math,",
                            r"benchmarks.csv line 2 \(metric_kind\): 'percent'"),
    "duplicate benchmark id": ("benchmarks.csv", None, "mmlu,Another MMLU,,,,,proportion,,1,public,no,knowledge,,",
                               "duplicate id 'mmlu'"),
    "unknown reference benchmark": ("benchmarks.csv", "livebench_mathematics;aime_2025", "livebench_maths;aime_2025",
                                    "unknown benchmark id 'livebench_maths'"),
    "material after release": ("benchmarks.csv", "math_500,MATH-500,1,2021-03-05,2021-03-05",
                               "math_500,MATH-500,1,2021-03-05,2022-01-01", "material_date is after release_date"),
    "cutoff without provenance": ("models.csv", "2023-03-01,2021-09-01,vendor_doc,", "2023-03-01,2021-09-01,,",
                                  "models.csv line 2 .*needs a provenance"),
    "alias to a missing canonical": ("aliases.csv", None, "model,GPT-7,gpt-7-2030-01-01",
                                     "'gpt-7-2030-01-01' is not a model id"),
    "alias to two canonicals": ("aliases.csv", None, "model,GPT-4 Omni (05/13),gpt-4o-2024-08-06",
                                "maps to two canonicals, 'gpt-4o-2024-05-13'.*'gpt-4o-2024-08-06'"),
    "alias equal to another id": ("aliases.csv", None, "model,GPT-4-0613,gpt-4-0314",
                                  "is the id of another model, 'gpt-4-0613'"),
    "wrong columns": ("models.csv", "knowledge_cutoff", "cutoff", "models.csv: columns are"),
}


@pytest.mark.parametrize("name", list(MALFORMED))
def test_a_malformed_registry_is_rejected_naming_file_and_cause(registry_copy, name):
    """One edit to a valid copy: its loader refuses the file with the cause (and the line)."""
    file, old, new, match = MALFORMED[name]
    path = registry_copy / file
    text = path.read_text(encoding="utf-8")
    if old is None:
        text += new + "\n"
    else:
        assert old in text
        text = text.replace(old, new, 1)
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=match):
        LOADERS[file](registry_copy)


def test_predecessors_are_other_registered_models(tmp_path):
    models = registry.load_models()
    with_pred = models[models["predecessor"] != ""]
    assert len(with_pred) >= 30
    assert set(with_pred["predecessor"]) <= set(models["id"])
    assert (with_pred["predecessor"] != with_pred["id"]).all()
    assert models.set_index("id").loc["claude-3-5-sonnet-20241022", "predecessor"] == "claude-3-5-sonnet-20240620"


def test_table_key_is_the_inverse_of_table_id():
    """A table id is split in one place (registry.tables.table_key), the inverse of table_id;
    a version keeps its own colons."""
    from registry.tables import table_id, table_key
    for parts in [("mgsm", "simple_evals", ""), ("livebench", "livebench", "2024-11-25"), ("arc", "arc_agi", "v2:semi")]:
        assert table_key(table_id(*parts)) == parts
    assert table_key(None) == ("", "", "") and table_key("mmlu") == ("mmlu", "", "")


def test_the_sql_spelling_of_a_table_id_is_the_python_one():
    """common.table_ids spells a table id once per language: a view's {{table_id(...)}} renders
    `table_id_sql`, which must give `table_id`'s text for every key, a missing version included."""
    import duckdb
    from common.table_ids import table_id, table_id_sql
    from storage.views import _render
    keys = [("mgsm", "simple_evals", ""), ("mgsm", "simple_evals", None), ("livebench", "livebench", "2024-11-25"),
            ("arc", "arc_agi", "v2:semi"), ("mmlu", "pooled", "")]
    con = duckdb.connect()
    sql = _render("SELECT {{table_id(b, s, v)}} FROM (SELECT unnest(?) AS b, unnest(?) AS s, unnest(?) AS v)")
    assert table_id_sql("b", "s", "v") in sql
    got = [r[0] for r in con.execute(sql, [[k[0] for k in keys], [k[1] for k in keys], [k[2] for k in keys]]).fetchall()]
    assert got == [table_id(*k) for k in keys]

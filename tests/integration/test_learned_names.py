"""Model names the database learns from the sources' own data (issue 51).

A name no registry entry maps is *learned* when a source states facts about it in its own model
list (who made it, when it was released, its cutoff): `benchwatch status` counts it apart from the
names nothing knows, the view `learned_models` lists it with what each source said. Fixtures are
small files written here; the real scrapers parse them.
"""

from __future__ import annotations

import datetime
import json

import registry
from cli.main import main
from jobs.ingest import ingest_file
from storage import db
from storage.status import unknown
from storage.store import open_store


# models without a link, enough for the source's row floor (`min_rows`): unknown names
FILLERS = {f"Filler-{i}B": {"link": None, "open-data": "None", "prompted": True, "size": i,
                            "pass@1": {"humaneval": 10.0 + i, "humaneval+": 9.0 + i, "mbpp": 8.0, "mbpp+": 7.0}}
           for i in range(1, 11)}


def _evalplus(tmp_path):
    f = tmp_path / "results.json"
    f.write_text(json.dumps({**FILLERS,
        # a Hugging Face link states the repository: its owner published the model
        "Acme-Coder-7B": {"link": "https://huggingface.co/acme-lab/Acme-Coder-7B-hf", "open-data": "None",
                          "prompted": True, "size": 7,
                          "pass@1": {"humaneval": 60.0, "humaneval+": 55.0, "mbpp": 50.0, "mbpp+": 45.0}},
        # a paper link states nothing about who published it, but which model the name means: learned
        "Paper-Model-2B": {"link": "https://arxiv.org/abs/2203.13474", "open-data": "None", "prompted": False,
                           "size": 2, "pass@1": {"humaneval": 20.0, "humaneval+": 18.0, "mbpp": 30.0,
                                                 "mbpp+": 25.0}},
        "Zed-Coder-1B": {"link": "https://huggingface.co/zed/Zed-Coder-1B", "open-data": "None",
                         "prompted": True, "size": 1,
                         "pass@1": {"humaneval": 10.0, "humaneval+": 9.0, "mbpp": 12.0, "mbpp+": 11.0}},
        "Tiny-Model": {"link": "https://example.org/", "open-data": "None", "prompted": True, "size": 1,
                       "pass@1": {"humaneval": 11.0, "humaneval+": 9.5, "mbpp": 12.5, "mbpp+": 11.5}},
        "Small-Model": {"link": None, "open-data": "None", "prompted": True, "size": 1,
                        "pass@1": {"humaneval": 12.0, "humaneval+": 10.0, "mbpp": 13.0, "mbpp+": 12.0}},
    }))
    return f


def test_a_model_a_source_states_facts_about_is_learned_not_unknown(synced_db, tmp_path, capsys):
    f = tmp_path / "scores.csv"      # a release date beside the score is a statement about the model
    f.write_text("model,benchmark,score,model_release_date\n"
                 "acme-stated-7b,gpqa_diamond,0.5,2025-03-01\nacme-silent-7b,gpqa_diamond,0.4,\n")
    ingest_file(open_store(synced_db), "csv", f)
    with db.connect(synced_db, read_only=True) as con:
        table, counts = unknown(con)
        learned = con.execute("SELECT model, sources, release_dates FROM learned_models").fetchall()
    assert counts["models"] == 1 and counts["learned"] == 1
    assert [r[1] for r in table.rows if r[0] == "model"] == ["acme-silent-7b"]
    assert learned == [("acme-stated-7b", ["csv"], [datetime.date(2025, 3, 1)])]
    assert main(["status", "--db", str(synced_db)]) == 0
    out = capsys.readouterr().out
    assert "1 model(s) not in the registry" in out and "acme-silent-7b" in out
    assert "1 model name(s) learned from the sources" in out


def test_evalplus_states_the_publisher_of_a_hugging_face_link_and_every_model_s_page(synced_db, tmp_path):
    ingest_file(open_store(synced_db), "evalplus", _evalplus(tmp_path))
    with db.connect(synced_db, read_only=True) as con:
        stated = {r[0]: r[1:] for r in con.execute("SELECT model, org, link FROM model_dates WHERE source = 'evalplus'")
                  .fetchall()}
        dated = con.execute("SELECT count(*) FROM model_cutoffs WHERE source = 'evalplus'").fetchone()[0]
        links = dict(con.execute("SELECT model, links FROM learned_models").fetchall())
        table, counts = unknown(con)
    assert stated == {"Acme-Coder-7B": ("acme-lab", "https://huggingface.co/acme-lab/Acme-Coder-7B-hf"),
                      "Zed-Coder-1B": ("zed", "https://huggingface.co/zed/Zed-Coder-1B"),
                      "Paper-Model-2B": (None, "https://arxiv.org/abs/2203.13474"),
                      "Tiny-Model": (None, "https://example.org/")}
    assert dated == 0          # a statement of who made it is no date claim: the analysis never sees it
    assert links["Paper-Model-2B"] == ["https://arxiv.org/abs/2203.13474"]
    # no link: nothing stated, the names stay unknown
    assert sorted(r[1] for r in table.rows if r[0] == "model") == sorted(["Small-Model", *FILLERS])
    assert counts["learned"] == 4


def test_a_cell_that_is_not_one_url_states_no_page():
    from scrapers.normalize import model_link
    assert model_link(" https://arxiv.org/abs/2203.13474 ") == "https://arxiv.org/abs/2203.13474"
    for cell in (None, "", "N/A", "see https://x.org/a", "https://x.org/a https://y.org/b", "javascript:alert(1)",
                 "ftp://x.org/a", "https://" + "a" * 600 + ".org/"):
        assert model_link(cell) is None, cell


def test_only_a_hugging_face_model_page_names_a_publisher():
    from scrapers.normalize import hugging_face_repo
    assert hugging_face_repo("https://huggingface.co/Qwen/Qwen2.5-Coder-32B-Instruct") == (
        "Qwen", "Qwen2.5-Coder-32B-Instruct")
    assert hugging_face_repo("https://huggingface.co/codellama/CodeLlama-70b-Python-hf/tree/main") == (
        "codellama", "CodeLlama-70b-Python-hf")
    for link in ("https://huggingface.co/datasets/openai/gsm8k", "https://huggingface.co/spaces/a/b",
                 "https://huggingface.co/codellama", "https://arxiv.org/abs/2203.13474", None, 7,
                 "https://huggingface.co.evil.example/a/b"):
        assert hugging_face_repo(link) is None, link


def test_an_excluded_entry_is_no_unknown_model(synced_db, tmp_path):
    """An entry the source marks adversarial or dev (`excluded_reason`: AlpacaEval's NullModel) is
    kept for the record, but it is no model a person could alias: not an unknown name."""
    f = tmp_path / "scores.csv"
    f.write_text("model,benchmark,score\nNullModel,gpqa_diamond,0.9\nacme-real-7b,gpqa_diamond,0.4\n")
    ingest_file(open_store(synced_db), "csv", f)
    with db.connect(synced_db) as con:
        con.execute("UPDATE scores SET excluded_reason = 'adversarial entry' WHERE model_raw = 'NullModel'")
    with db.connect(synced_db, read_only=True) as con:
        for large in (False, True):
            table, counts = unknown(con, large=large)
            assert [r[1] for r in table.rows] == ["acme-real-7b"] and counts["models"] == 1, large


def test_a_statement_about_the_page_s_name_covers_the_row_identified_from_it(synced_db, tmp_path):
    """The naming rules strip a host route (`fireworks/`): the row's model is `zz-k9p5`, while the
    source's statement is about its own name `fireworks/zz-k9p5`; both are the same row's names."""
    f = tmp_path / "scores.csv"
    f.write_text("model,benchmark,score,model_release_date\nfireworks/zz-k9p5,gpqa_diamond,0.5,2026-01-27\n")
    ingest_file(open_store(synced_db), "csv", f)
    with db.connect(synced_db, read_only=True) as con:
        assert con.execute("SELECT DISTINCT model FROM scores").fetchall() == [("zz-k9p5",)]
        for large in (False, True):
            table, counts = unknown(con, large=large)
            assert (counts["models"], counts["learned"], table.rows) == (0, 1, []), large


def test_views_show_the_registry_s_name_with_the_page_s_name_beside(synced_db, tmp_path):
    """issue 51: a known model by its registry name, an unknown one by its page's name, the raw
    name beside both; saturation's top models likewise (top_names, top_known beside top_models)."""
    f = tmp_path / "scores.csv"
    f.write_text("model,benchmark,score\nclaude-3.5-sonnet-20240620,gpqa_diamond,0.6\nZz Model,gpqa_diamond,0.5\n")
    ingest_file(open_store(synced_db), "csv", f)
    with db.connect(synced_db) as con:
        rows = con.execute("SELECT model, model_name, model_raw, model_known FROM leaderboard ORDER BY model").fetchall()
        con.execute("""INSERT INTO saturation (table_id, benchmark, source, as_of, scope, population, k, alpha, z,
                                               run_at, top_models, top_variants)
                       VALUES ('gpqa_diamond:csv', 'gpqa_diamond', 'csv', now(), 'all', 'models', 5, 0.5, 1.96, now(),
                               ['claude-3-5-sonnet-20240620', 'Zz Model'],
                               ['claude-3.5-sonnet-20240620', 'Zz Model'])""")
        top = con.execute("SELECT top_models, top_names, top_known FROM saturation_latest").fetchall()
    name = registry.load_models().set_index("id").loc["claude-3-5-sonnet-20240620", "name"]
    assert rows == [("Zz Model", "Zz Model", "Zz Model", False),
                    ("claude-3-5-sonnet-20240620", name, "claude-3.5-sonnet-20240620", True)]
    assert top == [(["claude-3-5-sonnet-20240620", "Zz Model"], [name, "Zz Model"], [True, False])]


def test_the_report_names_top_models_by_the_registry_and_marks_page_names():
    from report.base import UNLISTED, top_names
    row = {"top_models": ["claude-3-5-sonnet-20240620", "Claude 3.5 Sonnet"],
           "top_names": ["Claude 3.5 Sonnet (2024-06-20)", "Claude 3.5 Sonnet"], "top_known": [True, False]}
    assert top_names(row) == ["Claude 3.5 Sonnet (2024-06-20)", "Claude 3.5 Sonnet" + UNLISTED]
    assert top_names({"top_models": ["a", "b"]}) == ["a", "b"]      # a frame without display names
    # an agent system's own name is never a registry model: no mark
    assert top_names({**row, "population": "systems"}) == ["Claude 3.5 Sonnet (2024-06-20)", "Claude 3.5 Sonnet"]


def test_a_name_is_learned_as_the_registry_matches_names_case_and_spacing_blind(synced_db, tmp_path):
    """A source states `ACME  X-7b` (its date); another page writes `acme x-7b`: one name, as
    `registry.alias_key` compares names (case, outer and repeated spaces), nothing looser."""
    f = tmp_path / "scores.csv"
    f.write_text("model,benchmark,score,model_release_date\nACME  X-7b,gpqa_diamond,0.5,2025-03-01\n"
                 "acme x-7b,mmlu,0.4,\nacme-x-7b,mmlu,0.3,\n")
    ingest_file(open_store(synced_db), "csv", f)
    with db.connect(synced_db, read_only=True) as con:
        for large in (False, True):
            table, counts = unknown(con, large=large)
            assert ([r[1] for r in table.rows], counts["learned"]) == (["acme-x-7b"], 2), large


def test_a_name_a_source_states_under_its_maker_s_route_is_learned(synced_db, tmp_path):
    """openrouter's `openai/gpt-5.4-mini` and a Hugging Face repo id `Qwen/Qwen3-32B` are the maker's
    route to the model another page names bare (`gpt-5.4-mini`): a statement about one is about the
    other. Nothing looser: another name that merely starts the same stays unknown."""
    f = tmp_path / "scores.csv"
    f.write_text("model,benchmark,score,model_release_date\n"
                 "acme-lab/acme-7b,gpqa_diamond,0.5,2025-03-01\nacme-7b,gpqa_diamond,0.45,\n"
                 "acme-7b-instruct,gpqa_diamond,0.4,\nacme-lab,gpqa_diamond,0.3,\n")
    ingest_file(open_store(synced_db), "csv", f)
    with db.connect(synced_db, read_only=True) as con:
        table, counts = unknown(con)
    assert sorted(r[1] for r in table.rows if r[0] == "model") == ["acme-7b-instruct", "acme-lab"]
    assert counts["learned"] == 2


def test_arc_prize_s_o3_preview_rows_are_stored_as_the_preview_and_stay_so_on_a_resync(synced_db):
    """The real ingest path and the registry re-sync apply the release-date rule alike: ARC Prize's
    `o3-low`/`o3-high` (modelReleaseDate 2024-12-20) are the December 2024 preview; nothing else moves."""
    from pathlib import Path
    from jobs.sync import connect_synced
    fixtures = Path(__file__).parents[1] / "fixtures" / "arc_agi"
    ingest_file(open_store(synced_db), "arc_agi", fixtures / "evaluations.json",
                aux_paths=[fixtures / "models.json", fixtures / "datasets.json"])
    query = ("SELECT DISTINCT model_raw, model FROM scores WHERE model_raw IN ('o3-low', 'o3-high', 'R1') "
             "ORDER BY model_raw")
    with db.connect(synced_db, read_only=True) as con:
        stored = con.execute(query).fetchall()
    with connect_synced(open_store(synced_db)) as con:
        con.execute("DELETE FROM meta WHERE key = 'registry_sha256'")    # a registry change: re-identify
        con.execute("UPDATE scores SET model = 'o3-2025-04-16' WHERE model_raw IN ('o3-low', 'o3-high')")
    with connect_synced(open_store(synced_db)) as con:
        resynced = con.execute(query).fetchall()
    assert stored == resynced == [("R1", "R1"), ("o3-high", "o3-preview-2024-12-20"),
                                  ("o3-low", "o3-preview-2024-12-20")]

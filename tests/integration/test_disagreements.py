"""When sources disagree (issue 54): the view `source_disagreements`, analysis/disagreement.py, the
registry's declared comparisons, status/report and the `source_disagreement` alert.

The view tests ingest two sources' files of our own (tests/fixtures/disagreements) through the real
command line into a real DuckDB file; the statistics are checked on simulated pairs whose truth is
known: a planted error must be found, equal sources must not produce findings above the nominal rate.
"""

from __future__ import annotations

import shutil
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.constants import DISAGREEMENT_FDR, DISAGREEMENT_Z, TRANSCRIPTION_TOLERANCE
from analysis.disagreement import analyse, largest
from registry.comparisons import load_comparisons, parse_comparisons
from storage.store import open_store

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "disagreements"
PLANTED = "o3-2025-04-16"


def _ingest(db: Path, source: str, path: Path, day: str) -> None:
    from cli.main import main
    assert main(["ingest", source, str(path), "--db", str(db), "--observed-at", day]) == 0


def _build(tmp_path: Path, *, plant: float = 0.0, model: str = PLANTED) -> Path:
    """Epoch's runs and a second source (csv) of the same 12 models; `plant` added to one row of the second."""
    db = tmp_path / "d.duckdb"
    epoch = tmp_path / "gpqa_diamond.csv"
    shutil.copy(FIXTURES / "gpqa_diamond.csv", epoch)
    other = pd.read_csv(FIXTURES / "other_gpqa_diamond.csv")
    other.loc[other["model"] == model, "score"] += plant
    other_path = tmp_path / "other.csv"
    other.to_csv(other_path, index=False)
    _ingest(db, "epoch", epoch, "2026-02-01")
    _ingest(db, "csv", other_path, "2026-02-01")
    return db


def _view(db: Path) -> pd.DataFrame:
    from storage.query import run_query
    return run_query("SELECT * FROM source_disagreements ORDER BY model", open_store(db))


# --- the view on real files --------------------------------------------------------------------------

def test_the_view_pairs_every_shared_model_with_both_standard_errors(tmp_path):
    rows = _view(_build(tmp_path))
    assert len(rows) == 12 and set(rows["benchmark"]) == {"gpqa_diamond"}
    assert set(zip(rows["source_a"], rows["source_b"])) == {("csv", "epoch")}
    assert rows["kind"].eq("measurement").all() and rows["comparable"].all()
    assert rows["se_from_a"].eq("n=198 (page)").all() and rows["se_from_b"].eq("published").all()
    r = rows.set_index("model").loc["gpt-4o-2024-08-06"]
    assert r["score_a"] == pytest.approx(0.512) and r["score_b"] == pytest.approx(0.50)
    assert r["diff"] == pytest.approx(0.012)
    se_a = np.sqrt((0.512 * 198 + 0.5) / 199 * (1 - (0.512 * 198 + 0.5) / 199) / 198)
    assert r["se_a"] == pytest.approx(se_a) and r["se_diff"] == pytest.approx(np.hypot(se_a, r["se_b"]))
    assert r["z"] == pytest.approx(0.012 / np.hypot(se_a, r["se_b"]))
    assert str(r["date_b"])[:10] == "2026-01-10" and str(r["date_a"])[:10] == "2026-01-20"
    assert "each source's own harness" in r["why"]


def _analyze(db: Path) -> None:
    from cli.main import main
    assert main(["analyze", "--db", str(db)]) == 0


def test_analyze_stores_the_analysis_that_status_counts_and_reads(tmp_path):
    """`analyze` stores the analysis of the view's rows (jobs/relations/disagreements.py): what
    `count_disagreements` (status's check before it reads) counts, and `read_disagreements` gives
    back equal to analysing the view now; nothing before the first analysis, nothing with one source."""
    from storage.disagreements import count_disagreements, read_disagreements
    db = _build(tmp_path, plant=0.15)
    with open_store(db).open(read_only=True) as con:
        assert count_disagreements(con) == 0
    _analyze(db)
    with open_store(db).open(read_only=True) as con:
        counted, stored = count_disagreements(con), read_disagreements(con)
    assert counted == len(_view(db)) == 12
    _assert_same_result(stored, analyse(_view(db)))
    assert stored.findings["model"].tolist() == [PLANTED]
    one = tmp_path / "one"
    one.mkdir()
    single = one / "d.duckdb"
    _ingest(single, "csv", FIXTURES / "other_gpqa_diamond.csv", "2026-02-01")
    _analyze(single)
    with open_store(single).open(read_only=True) as con:
        assert count_disagreements(con) == 0 and read_disagreements(con).n_rows == 0
        assert con.execute("SELECT count(*) FROM source_disagreements").fetchone()[0] == 0


def _assert_same_result(got, want) -> None:
    for part in ("pairs", "offsets", "transcriptions", "listed"):
        pd.testing.assert_frame_equal(getattr(got, part), getattr(want, part), check_exact=True, obj=part)
    assert got.n_units == want.n_units
    pd.testing.assert_frame_equal(got.findings, want.findings, check_exact=True)
    pd.testing.assert_frame_equal(got.mismatches, want.mismatches, check_exact=True)


def test_two_sources_equal_up_to_noise_produce_no_finding(tmp_path):
    result = analyse(_view(_build(tmp_path)))
    assert len(result.pairs) == 12 and result.findings.empty
    assert (result.pairs["z"].abs() < 2).all()      # the fixture's noise is within about one SE


def test_a_planted_15_pp_error_is_found_and_named(tmp_path):
    result = analyse(_view(_build(tmp_path, plant=0.15)))
    (finding,) = result.findings.to_dict("records")
    assert (finding["model"], finding["source_a"], finding["source_b"]) == (PLANTED, "csv", "epoch")
    assert finding["diff"] == pytest.approx(0.15 + 0.015) and abs(finding["z_resid"]) >= DISAGREEMENT_Z
    assert finding["q"] <= DISAGREEMENT_FDR
    # and the text status and the report print name it, with both sources' links
    from report.disagreements import disagreements_html, disagreements_text
    result = analyse(_view(tmp_path / "d.duckdb"))
    text = disagreements_text(result)
    assert any(line.startswith("* gpqa_diamond") and PLANTED in line for line in text.splitlines())
    assert "epoch https://epoch.ai/benchmarks" in text
    html = disagreements_html(result)
    assert PLANTED in html and 'href="https://epoch.ai/benchmarks"' in html and '<span class="bad">finding</span>' in html


def test_settings_are_compared_where_both_state_them_and_a_mismatch_is_named(tmp_path):
    db = tmp_path / "s.duckdb"
    epoch = tmp_path / "gpqa_diamond.csv"
    text = (FIXTURES / "gpqa_diamond.csv").read_text()
    # Epoch runs o3 at two efforts, grok-4 only at high; the other source states o3 high and grok-4 plain
    text = text.replace("\no3-2025-04-16,", "\no3-2025-04-16_high,").replace("\ngrok-4-0709,", "\ngrok-4-0709_high,")
    text += "o3-2025-04-16_low,0.70,0.70,2025-04-16,,,,,0.03,,,2026-01-30T12:00:00.000Z,runlow\n"
    epoch.write_text(text)
    other = pd.read_csv(FIXTURES / "other_gpqa_diamond.csv")
    other["setting"] = ""
    other.loc[other["model"] == "o3-2025-04-16", "model"] = "o3-2025-04-16-high-effort"
    other.to_csv(tmp_path / "other.csv", index=False)
    _ingest(db, "epoch", epoch, "2026-02-01")
    _ingest(db, "csv", tmp_path / "other.csv", "2026-02-01")
    rows = _view(db).set_index("model")
    o3 = rows.loc["o3-2025-04-16"]
    assert bool(o3["comparable"]) and (o3["setting_a"], o3["setting_b"]) == ("high", "high")
    assert o3["score_b"] == pytest.approx(0.83) and "both at high" in o3["why"]
    grok = rows.loc["grok-4-0709"]
    assert not bool(grok["comparable"])
    assert "settings differ, not compared: csv states none, epoch states high" in grok["why"]
    result = analyse(_view(db))
    assert "grok-4-0709" in set(result.listed["model"]) and "grok-4-0709" not in set(result.pairs["model"])


def test_a_copy_beside_its_origin_is_a_transcription_check_outside_the_statistics():
    frame = _frame([0.01, -0.02, 0.0, 0.015, -0.01], se=0.02)
    copies = _frame([0.0, 0.0, 0.004, -0.2], se=0.02).assign(kind="transcription", table_a="epoch:external",
                                                             table_b="aider_polyglot", source_b="aider_polyglot")
    result = analyse(pd.concat([frame, copies], ignore_index=True))
    assert len(result.transcriptions) == 4 and len(result.pairs) == 5
    assert list(result.mismatches["model"]) == ["m3"]          # 0.4 pp is rounding, 20 pp is an error
    assert TRANSCRIPTION_TOLERANCE < 0.2


def test_a_copy_exactly_half_a_point_off_is_rounding_not_an_error():
    """35.0 % beside 34.5 % is half a point, the rounding a copy may show; in binary floats the gap
    0.35 − 0.345 comes out a hair above 0.005, which called it a transcription error. 35.1 % is one."""
    copies = pd.DataFrame({
        "model": ["half", "over", "index_half"], "benchmark": "arc_agi", "source_a": "epoch", "source_b": "arc_agi",
        "score_a": [0.345, 0.345, 100.5], "score_b": [0.35, 0.351, 100.0], "kind": "transcription", "comparable": True,
        "table_a": "epoch:external", "table_b": "arc_agi", "metric": ["proportion", "proportion", "index"],
        "se_diff": np.nan, "z": np.nan, "why": "copy"})
    copies["diff"] = copies["score_a"] - copies["score_b"]
    assert abs(copies["diff"][0]) > TRANSCRIPTION_TOLERANCE          # the float the check used to compare
    result = analyse(copies)
    assert list(result.mismatches["model"]) == ["over"]


# --- the statistics on simulated pairs -----------------------------------------------------------------

def _frame(diffs, se=0.03, benchmark="gpqa_diamond", offset=0.0) -> pd.DataFrame:
    d = np.asarray(diffs, dtype=float) + offset
    se_diff = np.full(len(d), np.hypot(se, se))
    return pd.DataFrame({
        "model": [f"m{i}" for i in range(len(d))], "benchmark": benchmark, "source_a": "a", "source_b": "b",
        "score_a": 0.5 + d, "score_b": 0.5, "diff": d, "se_diff": se_diff, "z": d / se_diff,
        "kind": "measurement", "comparable": True, "table_a": "a", "table_b": "b", "metric": "proportion",
        "why": "simulated"})


@pytest.mark.slow   # 400 simulated families
def test_false_findings_among_many_null_pairs_stay_at_or_below_the_nominal_rate():
    """Sources equal up to noise (with a harness offset of 4 pp and per-model noise from n): over many
    simulated families the share of families with any finding stays at or below the FDR level, and the
    planted shift of the companion test is found in the same setting (the null can fail)."""
    rng = np.random.default_rng(54)
    families, any_finding = 400, 0
    for _ in range(families):
        frames = [_frame(rng.normal(0, np.hypot(0.03, 0.03), 15), benchmark=f"b{j}", offset=0.04) for j in range(4)]
        result = analyse(pd.concat(frames, ignore_index=True))
        any_finding += int(len(result.findings) > 0)
    rate = any_finding / families
    # under the global null, BH controls the family-wise rate at q; allow Monte Carlo error (2 SE)
    assert rate <= DISAGREEMENT_FDR + 2 * np.sqrt(DISAGREEMENT_FDR * (1 - DISAGREEMENT_FDR) / families)


def test_a_planted_shift_is_found_against_the_offset_and_the_offset_is_reported_once():
    rng = np.random.default_rng(7)
    found = 0
    for _ in range(50):
        diffs = rng.normal(0, np.hypot(0.025, 0.025), 15)
        diffs[3] += 0.15
        result = analyse(_frame(diffs, se=0.025, offset=0.04))
        found += int(list(result.findings["model"]) == ["m3"])
    # 15 pp against an SE of 3.5 pp per pair (n = 198 at 85 %), the offset's and tau's: E[z] ~ 3.7;
    # found in 35 of these 50 (70 %); below 60 % the method lost power
    assert found >= 30
    result = analyse(_frame(np.zeros(15) + np.linspace(-0.01, 0.01, 15), offset=0.04))
    (off,) = result.offsets.to_dict("records")
    assert off["table_offset"] == pytest.approx(0.04) and bool(off["systematic"]) and off["n_pairs"] == 15
    assert result.findings.empty          # a shared 4 pp offset is the harness, not 15 findings


def test_pairs_of_one_model_on_one_benchmark_are_one_unit():
    three = pd.concat([_frame([0.0] * 6).assign(table_a=t, source_a=t) for t in ("x", "y", "z")], ignore_index=True)
    result = analyse(three)
    assert result.n_units == 6 and set(result.pairs["unit_pairs"]) == {3}


def test_largest_lists_findings_first_per_benchmark():
    diffs = np.linspace(-0.02, 0.02, 10)
    diffs[2] = 0.25
    out = largest(analyse(_frame(diffs)), per_benchmark=2)
    assert list(out["model"])[0] == "m2" and len(out) == 2 and bool(out["finding"].iloc[0])


def test_a_frame_without_the_view_columns_is_refused():
    with pytest.raises(ValueError, match="lacks column"):
        analyse(pd.DataFrame({"model": ["x"]}))


# --- the registry's declarations ------------------------------------------------------------------------

def test_the_shipped_comparisons_name_known_benchmarks_and_sources():
    import scrapers
    from registry import load_benchmarks
    known = set(load_benchmarks()["id"])
    for c in load_comparisons():
        assert c.benchmark in known, c
        assert c.source in scrapers.SOURCES and c.other_source in scrapers.SOURCES, c
    assert any(c.kind == "copy" and c.other_version == "*" for c in load_comparisons())


@pytest.mark.parametrize("line, message", [
    ("mirror,gpqa_diamond,epoch,simple_evals,x", "kind"),
    ("copy,gpqa_diamond,epoch,simple_evals,", "reason"),
    ("copy,gpqa_diamond,epoch:*,simple_evals,x", "'\\*' is allowed"),
    ("copy,gpqa_diamond,epoch,epoch,x", "itself"),
    ("copy,GPQA,epoch,simple_evals,x", "benchmark"),
    ("copy,gpqa_diamond,Epoch hub,simple_evals,x", "source or source:version"),
])
def test_a_malformed_declaration_names_its_line(line, message):
    with pytest.raises(ValueError, match=f"line 2.*{message}|{message}"):
        parse_comparisons("kind,benchmark,table,other,reason\n" + line + "\n")


def test_a_pair_declared_twice_is_refused():
    text = "kind,benchmark,table,other,reason\nharness,mmlu,a,b,x\nharness,mmlu,b,a,y\n"
    with pytest.raises(ValueError, match="line 3.*declared twice"):
        parse_comparisons(text)


# --- the alert (info, off by default) --------------------------------------------------------------------

def test_the_alert_is_off_by_default_and_fires_for_a_new_disagreement(tmp_path):
    from alerts.config import RuleSettings
    from alerts.engine import evaluate
    from alerts.render import numbers, render_plain, title
    from alerts.records import RESOLVED
    planted = _view(_build(tmp_path, plant=0.15))
    now = datetime(2026, 2, 2, tzinfo=timezone.utc)
    assert evaluate(now=now, previous=[], disagreements=analyse(planted)).states == []
    on = RuleSettings(enabled_info_kinds=frozenset({"source_disagreement"}))
    ev = evaluate(now=now, previous=[], disagreements=analyse(planted), settings=on)
    (n,) = ev.notifications
    assert title(n) == f"gpqa_diamond · {PLANTED}: csv and epoch disagree"
    assert n.labels["table"] == "csv vs epoch" and n.annotations["sources"] == ["csv", "epoch"]
    assert "csv 99.5% vs epoch 83.0%" in numbers(n)[0]
    text = render_plain([n], now=now)      # the pair's why once, as the message's "why:" line
    assert n.annotations["numbers"]["offset_pairs"] > 0 and "against the two sources' offset" in numbers(n)[0]
    assert text.count(n.annotations["why"]) == 1 and f"why: {n.annotations['why']}" in text
    same = planted.copy()
    same.loc[same["model"] == PLANTED, ["score_a", "diff", "z"]] = [0.845, 0.015, 0.3]
    ev2 = evaluate(now=now.replace(day=3), previous=ev.states, disagreements=analyse(same), settings=on)
    assert [(x.transition, title(x)) for x in ev2.notifications] == [
        (RESOLVED, f"gpqa_diamond · {PLANTED}: csv vs epoch no longer disagree")]


def test_scraped_names_are_inert_in_the_text_and_escaped_in_html():
    from report.disagreements import disagreements_html, disagreements_text
    diffs = np.linspace(-0.01, 0.01, 8)
    diffs[2] = 0.3
    frame = _frame(diffs)
    frame.loc[2, ["model", "why"]] = ["evil\x1b[31m<script>", "copied\x07"]
    text, html = disagreements_text(analyse(frame)), disagreements_html(analyse(frame))
    assert "\x1b" not in text and "\x07" not in text and "evil\\x1b[31m" in text
    assert "<script>" not in html and "evil\x1b[31m&lt;script&gt;" in html


def test_notify_announces_the_finding_analyze_stored_and_the_report_shows_the_same(tmp_path, monkeypatch, capsys):
    """The one stored decision end to end: `analyze` stores it, `notify` announces its finding (the
    rule reads the stored rows, not the view) and the text report lists the same finding; an ingest
    without an analysis changes neither until the next `analyze`."""
    from cli.main import main
    db = _build(tmp_path, plant=0.15)
    _analyze(db)
    monkeypatch.setenv("BENCHWATCH_INFO_ALERTS", "source_disagreement")
    capsys.readouterr()
    assert main(["notify", "--db", str(db)]) == 0
    assert f"gpqa_diamond · {PLANTED}: csv and epoch disagree" in capsys.readouterr().out
    assert main(["report", "--db", str(db)]) == 0
    report = capsys.readouterr().out
    assert any(line.startswith("* gpqa_diamond") and PLANTED in line for line in report.splitlines())
    # the planted row corrected by a later copy of the second source: nothing changes before `analyze`
    fixed = tmp_path / "fixed.csv"
    pd.read_csv(FIXTURES / "other_gpqa_diamond.csv").to_csv(fixed, index=False)
    _ingest(db, "csv", fixed, "2026-02-03")
    assert main(["report", "--db", str(db)]) == 0
    assert any(line.startswith("* gpqa_diamond") for line in capsys.readouterr().out.splitlines())
    _analyze(db)
    assert main(["report", "--db", str(db)]) == 0
    assert not any(line.startswith("* gpqa_diamond") for line in capsys.readouterr().out.splitlines())
    assert main(["notify", "--db", str(db)]) == 0
    assert f"gpqa_diamond · {PLANTED}: csv vs epoch no longer disagree" in capsys.readouterr().out


def test_before_an_analysis_stored_the_decision_the_alerts_keep_their_state(tmp_path, monkeypatch, capsys):
    """A database upgraded to this code holds no stored decision until its next `analyze`: a
    `notify` meanwhile must not call a firing disagreement cleared (its rule reads None, not an
    empty result), and the analysis then finds the same disagreement: nothing new to say."""
    from cli.main import main
    from storage import db as storage_db
    db = _build(tmp_path, plant=0.15)
    _analyze(db)
    monkeypatch.setenv("BENCHWATCH_INFO_ALERTS", "source_disagreement")
    assert main(["notify", "--db", str(db)]) == 0
    assert f"{PLANTED}: csv and epoch disagree" in capsys.readouterr().out
    with storage_db.connect(str(db)) as con:        # as an older code's analysis left it after migration 085
        con.execute("DELETE FROM disagreements")
        con.execute("DELETE FROM disagreement_offsets")
        con.execute("DELETE FROM meta WHERE key = 'disagreements_stored_at'")
    assert main(["notify", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "no longer disagree" not in out and "0 new notification(s)" in out
    _analyze(db)
    assert main(["notify", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "disagree" not in out.replace("source disagreement", "") and "0 new notification(s)" in out


def test_a_finding_without_an_offset_says_a_harness_difference_could_explain_it():
    """Two tables sharing fewer than 5 models get no offset estimate: the gap's z counts sampling
    noise alone, so the message says what it cannot rule out instead of a bare "disagree"."""
    from alerts.config import RuleSettings
    from alerts.engine import evaluate
    from alerts.render import numbers
    result = analyse(_frame([0.0, 0.3], se=0.01))
    assert (result.pairs["offset_pairs"] == 0).all() and list(result.findings["model"]) == ["m1"]
    on = RuleSettings(enabled_info_kinds=frozenset({"source_disagreement"}))
    (n,) = evaluate(now=datetime(2026, 2, 2, tzinfo=timezone.utc), previous=[], disagreements=result,
                    settings=on).notifications
    line = numbers(n)[0]
    assert "z 21.2 against sampling noise alone" in line and "could explain the gap" in line

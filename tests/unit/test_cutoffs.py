"""Model-date resolution and post-cutoff slices (analysis/cutoffs.py)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from analysis.cutoffs import (
    benchmark_slices,
    fair_window,
    material_dates_from_items,
    post_cutoff_scope,
    post_cutoff_scores,
    resolve_model_dates,
)
from helpers import SNAPSHOTS, needs

LCB = SNAPSHOTS / "livecodebench"
T = pd.Timestamp


def claims(rows):
    return pd.DataFrame(rows, columns=["model", "release_date", "knowledge_cutoff", "provenance", "source"])


def test_priority_conflict_and_unknown_cutoff():
    c = claims([
        ("m1", "2024-05-13", "2023-10-01", "vendor_doc", "registry"),
        ("m1", None, "2023-12-01", "listing", "openrouter"),        # 61 days later: conflict
        ("m1", "2024-05-20", None, "leaderboard", "lmarena"),       # 7 days: no release conflict
        ("m2", "2024-03-04", None, "listing", "openrouter"),        # no cutoff anywhere
        ("m3", None, "2023-08-30", "leaderboard", "livecodebench"),
        ("m3", None, "Aug 2023", "listing", "knowledge_cutoffs"),   # 29 days apart: agreement
    ])
    r = resolve_model_dates(c).set_index("model")
    m1 = r.loc["m1"]
    assert m1["knowledge_cutoff"] == T("2023-10-01") and m1["cutoff_source"] == "registry"
    assert m1["cutoff_provenance"] == "vendor_doc"
    assert m1["release_date"] == T("2024-05-13") and m1["release_source"] == "registry"
    assert m1["c_lo"] == m1["c_hi"] == T("2023-10-01")
    assert bool(m1["conflict"])
    listed = json.loads(m1["conflicts"])
    assert {(x["field"], x["source"], x["value"]) for x in listed} == {
        ("knowledge_cutoff", "registry", "2023-10-01"), ("knowledge_cutoff", "openrouter", "2023-12-01")}
    m2 = r.loc["m2"]   # unknown cutoff: release is the upper bound, release - 12 months the lower
    assert not m2["cutoff_known"] and m2["cutoff_provenance"] == "inferred"
    assert m2["c_hi"] == T("2024-03-04") and m2["c_lo"] == T("2023-03-04")
    m3 = r.loc["m3"]   # leaderboard outranks listing; 29 days apart is not a conflict
    assert m3["c_hi"] == T("2023-08-30") and m3["cutoff_source"] == "livecodebench"
    assert not m3["conflict"] and pd.isna(m3["conflicts"])
    assert pd.isna(m3["release_date"]) and m3["n_claims"] == 2


def test_source_tie_break_and_unknown_provenance_last():
    c = claims([
        ("m", None, "2024-01-01", "listing", "openrouter"),
        ("m", None, "2024-01-15", "listing", "knowledge_cutoffs"),   # same provenance, higher source
        ("m", None, "2023-06-01", "rumour", "blog"),                  # unknown provenance ranks last
    ])
    r = resolve_model_dates(c).set_index("model").loc["m"]
    assert r["c_hi"] == T("2024-01-15") and r["cutoff_source"] == "knowledge_cutoffs"
    assert r["conflict"]   # the blog's date is 7 months away and stays visible
    assert "blog" in r["conflicts"]


def test_newest_claim_of_a_source_supersedes_its_older_one():
    c = claims([
        ("ds", None, "2023-07-30", "leaderboard", "livecodebench"),
        ("ds", None, "2023-08-30", "leaderboard", "livecodebench"),
        ("ds", None, "2023-03-01", "inferred", "registry"),
    ]).assign(observed_at=[T("2024-02-26"), T("2024-03-17"), T("2024-01-01")])
    r = resolve_model_dates(c).set_index("model").loc["ds"]
    assert r["c_hi"] == T("2023-08-30")             # the site's revised estimate, not its first one
    listed = json.loads(r["conflicts"])             # the registry's inferred date still disagrees
    assert {x["value"] for x in listed} == {"2023-08-30", "2023-03-01"}
    without = resolve_model_dates(c.drop(columns="observed_at")).set_index("model").loc["ds"]
    assert len(json.loads(without["conflicts"])) == 3   # no observation times: every claim counts


def test_a_date_that_jitters_by_less_than_a_day_keeps_its_first_value():
    """Issue 50: LiveCodeBench's release timestamp of one model flipped between 2023-08-30 07:00 and
    2023-08-29 22:00 UTC from snapshot to snapshot (the same instant read in two time zones); the
    newest claim won, so the cutoff moved a day and back, items crossed the window edge and the test
    resolved and fired again on identical item results. A sub-day move keeps the first value; a
    revision by a day or more (2023-07-30 -> 2023-08-30) still supersedes."""
    a, b = T("2023-08-30 07:00"), T("2023-08-29 22:00")
    rows, first, last = [], [], []
    for i, (value, day) in enumerate([(a, 1), (b, 2), (a, 3), (b, 4), (a, 5), (b, 6)]):
        rows.append(("ds", None, value, "leaderboard", "livecodebench"))
        first.append(T(f"2024-03-0{day}"))
        last.append(T(f"2024-03-0{day}"))
    c = claims(rows).assign(observed_at=last, first_observed_at=first)
    # the view's shape: one row per distinct claim, first and last observation
    view = (c.groupby(["model", "knowledge_cutoff", "provenance", "source"], dropna=False)
            .agg(release_date=("release_date", "first"), observed_at=("observed_at", "max"),
                 first_observed_at=("first_observed_at", "min")).reset_index())
    cut = []
    for k in range(1, 7):                       # the history as it grew, snapshot by snapshot
        seen = c.iloc[:k]
        v = (seen.groupby(["model", "knowledge_cutoff", "provenance", "source"], dropna=False)
             .agg(release_date=("release_date", "first"), observed_at=("observed_at", "max"),
                  first_observed_at=("first_observed_at", "min")).reset_index())
        cut.append(resolve_model_dates(v).set_index("model").at["ds", "c_hi"])
    assert cut == [a] * 6                       # the first value, whatever the newest snapshot says
    assert resolve_model_dates(view).set_index("model").at["ds", "c_hi"] == a
    # without first observations (frames built by hand), the newest claim still wins
    assert resolve_model_dates(view.drop(columns="first_observed_at")).set_index("model").at["ds", "c_hi"] == b
    # a real revision (a month) supersedes, and its own later jitter keeps the revised first value
    rev = pd.concat([view, claims([("ds", None, T("2023-09-30 07:00"), "leaderboard", "livecodebench"),
                                   ("ds", None, T("2023-09-30 01:00"), "leaderboard", "livecodebench")])
                     .assign(observed_at=[T("2024-04-01"), T("2024-04-02")],
                             first_observed_at=[T("2024-04-01"), T("2024-04-02")])], ignore_index=True)
    assert resolve_model_dates(rev).set_index("model").at["ds", "c_hi"] == T("2023-09-30 07:00")


def test_bad_claims_raise_clear_errors():
    with pytest.raises(ValueError, match="knowledge_cutoff"):
        resolve_model_dates(claims([("m", None, "last autumn-ish", "listing", "x")]))
    with pytest.raises(ValueError, match="missing column"):
        resolve_model_dates(pd.DataFrame({"model": ["m"]}))


def _cut(rows):
    return resolve_model_dates(claims(rows))


def test_benchmark_slices_statuses_and_guard():
    cut = _cut([
        ("early", None, "2023-01-01", "vendor_doc", "registry"),
        ("edge", None, "2023-11-01", "vendor_doc", "registry"),       # R - c = 30 days: not post
        ("late", None, "2024-06-01", "vendor_doc", "registry"),
        ("dateless", None, None, "listing", "x"),
        ("released", "2024-01-15", None, "listing", "x"),             # c in [2023-01-15, 2024-01-15]
    ])
    benches = pd.DataFrame({"benchmark": ["b"], "material_date": [T("2023-12-01")]})
    s = benchmark_slices(benches, cut).set_index("model")["status"]
    assert s["early"] == "post"           # 2023-12-01 > 2023-01-01 + 30 d
    assert s["edge"] == "ambiguous"       # 2023-12-01 = c + 30 d exactly: inside the guard band
    assert s["late"] == "pre"             # 2023-12-01 <= 2024-06-01
    assert s["dateless"] == "unknown"
    assert s["released"] == "ambiguous"   # R between c_lo and c_hi + g
    # a dated benchmark is post only if its earliest material postdates the cutoff
    span = pd.DataFrame({"benchmark": ["b"], "material_start": [T("2022-12-01")], "material_date": [T("2023-12-01")]})
    assert benchmark_slices(span, cut).set_index("model").at["early", "status"] == "ambiguous"
    scores = pd.DataFrame({"benchmark": ["b", "b", "b"], "model": ["early", "late", "edge"], "score": [0.5, 0.6, 0.7]})
    scoped = post_cutoff_scope(scores, benchmark_slices(benches, cut))
    assert scoped["model"].tolist() == ["early"]


def _items(rows):
    return pd.DataFrame(rows, columns=["benchmark", "model", "item_id", "item_date", "difficulty", "score"])


def test_post_cutoff_scores_hand_computed():
    cut = _cut([("m", None, "2024-01-01", "vendor_doc", "registry")])
    it = _items([
        ("b", "m", "i1", "2023-11-01", "easy", 1.0),    # pre (<= c_lo)
        ("b", "m", "i2", "2023-12-31", "hard", 0.3),    # pre
        ("b", "m", "i3", "2024-01-20", "easy", 0.9),    # guard band: neither
        ("b", "m", "i4", "2024-01-31", "hard", 0.2),    # = c + 30 d: still in the guard band
        ("b", "m", "i5", "2024-02-01", "easy", 0.8),    # post
        ("b", "m", "i6", "2024-03-01", "hard", 0.1),    # post
        ("b", "m", "i7", "2024-04-01", "hard", 0.6),    # post
        ("b", "m", "i8", "2024-09-01", "easy", 0.0),    # after `now`: excluded
        ("b", "m", "i9", None, "easy", 0.5),            # undated
    ])
    r = post_cutoff_scores(it, cut, now=T("2024-06-30")).iloc[0]
    # post items 0.8, 0.1, 0.6: mean 0.5, sd = sqrt(((0.3)^2 + (0.4)^2 + (0.1)^2) / 2) = sqrt(0.13)
    assert r["n_items"] == 3 and r["score"] == pytest.approx(0.5)
    assert r["stderr"] == pytest.approx(math.sqrt(0.13) / math.sqrt(3))
    assert r["window_start"] == T("2024-01-31") and r["window_end"] == T("2024-06-30")
    assert r["low_n"]
    assert r["n_pre"] == 2 and r["score_pre"] == pytest.approx(0.65)
    assert r["stderr_pre"] == pytest.approx(math.sqrt(2 * 0.35 ** 2) / math.sqrt(2))
    # difficulty mix over the 9 items: 5 easy, 4 hard; post easy mean 0.8, post hard mean 0.35
    assert r["score_std"] == pytest.approx(5 / 9 * 0.8 + 4 / 9 * 0.35)
    assert r["n_undated"] == 1


def test_post_cutoff_scores_reject_bad_items():
    cut = _cut([("m", None, "2024-01-01", "vendor_doc", "registry")])
    with pytest.raises(ValueError, match="proportions"):
        post_cutoff_scores(_items([("b", "m", "i", "2024-03-01", "easy", 55.0)]), cut, now=T("2025-01-01"))
    dup = _items([("b", "m", "i", "2024-03-01", "easy", 0.5), ("b", "m", "i", "2024-03-01", "easy", 0.6)])
    with pytest.raises(ValueError, match="duplicate"):
        post_cutoff_scores(dup, cut, now=T("2025-01-01"))


def test_fair_window_and_material_dates():
    cut = _cut([("a", None, "2023-04-30", "vendor_doc", "r"), ("b", None, "2023-08-30", "vendor_doc", "r")])
    assert fair_window(cut, ["a", "b"], now=T("2024-03-17")) == (T("2023-09-29"), T("2024-03-17"))
    with pytest.raises(ValueError, match="no cutoff"):
        fair_window(cut, ["a", "zzz"], now=T("2024-03-17"))
    it = _items([("b", "m", "i1", "2023-05-08", None, 0.1), ("b", "m", "i2", "2024-03-03", None, 0.2)])
    md = material_dates_from_items(it).iloc[0]
    assert md["material_start"] == T("2023-05-08") and md["material_date"] == T("2024-03-03")


@needs(LCB / "livecodebench_generation_2024-03-17.json")
def test_post_cutoff_scores_on_real_livecodebench_equal_hand_loop():
    """S_post of every model equals a plain-Python loop over the site's JSON."""
    data = json.loads((LCB / "livecodebench_generation_2024-03-17.json").read_text())
    perf = pd.DataFrame(data["performances"])
    items = pd.DataFrame({"benchmark": "livecodebench", "model": perf["model"], "item_id": perf["question_id"],
                          "item_date": pd.to_datetime(perf["date"], unit="ms"), "difficulty": perf["difficulty"],
                          "score": perf["pass@1"] / 100.0})
    cut = resolve_model_dates(claims([(m["model_repr"], None, pd.to_datetime(m["release_date"], unit="ms"),
                                       "leaderboard", "livecodebench") for m in data["models"]]))
    now = T("2024-03-17")
    got = post_cutoff_scores(items, cut, now=now).set_index("model")
    cutoff_ms = {m["model_repr"]: m["release_date"] for m in data["models"]}
    guard_ms = 30 * 86_400_000
    for model in ("DSCoder-33b-Ins", "GPT-4-0613", "Claude-3-Opus"):
        vals = [p["pass@1"] / 100 for p in data["performances"]
                if p["model"] == model and cutoff_ms[model] + guard_ms < p["date"] <= now.value // 10**6]
        mean = sum(vals) / len(vals)
        sd = math.sqrt(sum((v - mean) ** 2 for v in vals) / (len(vals) - 1))
        assert got.at[model, "n_items"] == len(vals)
        assert got.at[model, "score"] == pytest.approx(mean, abs=1e-12)
        assert got.at[model, "stderr"] == pytest.approx(sd / math.sqrt(len(vals)), abs=1e-12)
    # DeepSeek-33B-Ins, cutoff 2023-08-30: 202 post-cutoff problems, sum of pass fractions 47.9, mean 23.7 %
    assert got.at["DSCoder-33b-Ins", "n_items"] == 202
    assert got.at["DSCoder-33b-Ins", "score"] == pytest.approx(47.9 / 202, abs=1e-12)
    assert not got.at["DSCoder-33b-Ins", "low_n"]


def test_placeholder_dates_by_rule_never_by_name():
    """A date >= 3 models of one source share is a placeholder when it is a year boundary or
    precedes their releases by more than a year (median), unless another source corroborates it."""
    rows = [(f"a{i}", None, "2023-01-01", "leaderboard", "lb") for i in range(4)]          # Jan-1 default
    rows += [(f"b{i}", None, "2023-08-30", "leaderboard", "lb") for i in range(4)]         # shared, plausible
    rows += [(f"c{i}", f"2024-0{i + 2}-15", "2022-06-30", "leaderboard", "lb") for i in range(3)]  # 19+ months early
    rows += [("a0", None, "2023-01-10", "vendor_doc", "registry"),                         # corroborated: kept
             ("a1", "2024-02-28", None, "listing", "openrouter"),                          # release only
             ("d", None, "2023-01-01", "leaderboard", "other"),                            # one model of its source
             ("e0", None, "2021-12-31", "leaderboard", "lb2"), ("e1", None, "2021-12-31", "leaderboard", "lb2")]
    r = resolve_model_dates(claims(rows)).set_index("model")
    assert (r.loc[["a2", "a3"], "cutoff_trust"] == "placeholder").all()
    assert r.at["a0", "cutoff_trust"] == "stated" and r.at["a0", "c_hi"] == T("2023-01-10")
    # a placeholder never wins: a1 keeps the date for its own slice, marked, as nothing better exists
    assert r.at["a1", "cutoff_trust"] == "placeholder" and r.at["a1", "c_hi"] == T("2023-01-01")
    assert (r.loc[[f"b{i}" for i in range(4)], "cutoff_trust"] == "stated").all()
    assert (r.loc[[f"c{i}" for i in range(3)], "cutoff_trust"] == "placeholder").all()
    assert r.at["d", "cutoff_trust"] == "stated"                  # not shared within its source
    assert (r.loc[["e0", "e1"], "cutoff_trust"] == "stated").all()  # 2 models < 3
    inferred = resolve_model_dates(claims([("x", "2024-03-01", None, "listing", "openrouter")]))
    assert inferred["cutoff_trust"].tolist() == ["inferred"]


def test_placeholder_claim_loses_to_a_real_claim_of_another_source():
    rows = [(f"m{i}", None, "2023-01-01", "leaderboard", "lb") for i in range(5)]
    rows += [("m0", None, "2023-09-30", "listing", "knowledge_cutoffs")]     # lower provenance, real date
    r = resolve_model_dates(claims(rows)).set_index("model")
    assert r.at["m0", "c_hi"] == T("2023-09-30") and r.at["m0", "cutoff_trust"] == "stated"
    assert r.at["m0", "cutoff_source"] == "knowledge_cutoffs"

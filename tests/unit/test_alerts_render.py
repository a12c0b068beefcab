"""Block Kit digest rendering (alerts/render.py): content, escaping, Block Kit limits."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pandas as pd
from slack_sdk.models.blocks import Block

from alerts.render import _fit, escape, query_command, render_digest, render_plain
from alerts.engine import evaluate
from alerts.rules import Notification, fingerprint, make_labels
from helpers import with_levels

NOW = datetime(2026, 3, 2, 9, 30, tzinfo=timezone.utc)
NASTY = "<!channel> <@U123> <http://evil.example|click> & co"


def saturation_move() -> Notification:
    """moderate → high on SWE-bench Verified, produced by the rules from an S_index history."""
    hist = pd.DataFrame({"benchmark": "swebench_verified", "scope": "all",
                         "as_of": pd.date_range("2026-01-01", periods=3, freq="7D"),
                         "s_index": [0.5, 0.8, 0.81], "bin_hold_prob": [0.9, 0.86, 0.87],
                         "bin_probs": [None, [0, 0, 0.1, 0.86, 0.04], [0, 0, 0.09, 0.87, 0.04]],
                         "resample_noise": "binomial(n=500)", "resample_draws": 2000,
                         "scale": "paper_binomial", "comparable": True,
                         "benchmark_name": "SWE-bench Verified", "r_norm": 0.46, "se_delta": 0.0213,
                         "k": 5, "alpha": 0.5, "n_items": 500, "n_models": 41,
                         "top_models": [["a", "b"], ["a", "b"], ["b", "a"]],
                         "top_scores": [[0.71, 0.62], [0.70, 0.69], [0.705, 0.70]]})
    hist = with_levels(hist)
    states = evaluate(now=NOW - timedelta(days=20), previous=[], saturation=hist.iloc[:1]).states
    ev = evaluate(now=NOW, previous=states, saturation=hist)
    (n,) = ev.notifications
    return n


def contamination(model: str = NASTY, transition: str = "firing") -> Notification:
    labels = make_labels("contamination_suspect", model=model, benchmark="gpqa_diamond", source="epoch")
    return Notification(
        fingerprint=fingerprint(labels), kind="contamination_suspect", transition=transition,
        episode=NOW, labels=labels, created_at=NOW,
        annotations={"model_name": model, "benchmark_name": "GPQA <Diamond> & friends", "status": "corroborated",
                     "as_of": "2026-03-01T00:00:00+00:00",
                     "signals": [{"signal": "A1", "status": "corroborated", "effect": 0.072, "se": 0.021,
                                  "ci_low": 0.031, "ci_high": 0.113, "p_value": 0.0012, "q_value": 0.02},
                                 {"signal": "A2", "detail": "predecessor gpt-w", "status": "corroborated",
                                  "effect": 0.081, "se": None,
                                  "ci_low": None, "ci_high": None, "p_value": None, "q_value": 0.041}],
                     "why": "read with caution",
                     "sql": f"SELECT * FROM suspects WHERE model = '{model}'"})


def section_texts(messages) -> list[str]:
    return [b["text"]["text"] for m in messages for b in m.blocks if b["type"] == "section"]


def test_saturation_section_says_what_changed_numbers_why_and_where():
    (msg,) = render_digest([saturation_move()], now=NOW)
    assert [b["type"] for b in msg.blocks] == ["header", "context", "section", "context"]
    assert msg.blocks[0]["text"]["text"] == "benchwatch: 1 level change"
    text = msg.blocks[2]["text"]["text"]
    lines = text.split("\n")
    assert lines[0] == ":rotating_light: *SWE-bench Verified: level moderate → high*"
    # one probability, P(level holds) (the stored level's), defined once in the footer
    assert lines[1] == ("S_index 0.81 · P(level holds) 0.87 · R_norm 0.46 · SE_Δ 0.021 · k=5, α=0.5, "
                        "n=500, 41 models · as of 2026-01-15")
    # the change names the table rows behind it: the top k of the last snapshot at the old level and of the
    # snapshot whose S changed (2026-01-08); the level moved when that had stood LEVEL_DWELL_DAYS
    assert lines[2] == ("top 5 before (2026-01-01, S 0.50, level moderate): a 0.710, b 0.620; "
                        "after (2026-01-08, S 0.80): a 0.700, b 0.690")
    assert lines[3] == ("the level moved on 2026-01-15: S stayed past the edge for 7 days after 2026-01-08 "
                        "(no newer snapshot undid it)")
    # P(level holds) 0.87 < 0.9: "likely", never "statistically indistinguishable" (alerts.text.WORDING)
    assert lines[4].startswith("_Why it matters:_ the top models are likely indistinguishable within evaluation "
                               "noise: ")
    assert "P(bin holds)" not in json.dumps(msg.blocks) and text.count("P(level holds)") == 1
    assert msg.blocks[3]["elements"][0]["text"].startswith("P(level holds): the share of re-evaluations")
    assert lines[5] == ("_Where to look:_ `benchwatch query \"SELECT as_of, s_index, bin, level, r_norm, se_delta, n_models "
                        "FROM saturation WHERE benchmark = 'swebench_verified' AND scope = 'all' AND k = 5 "
                        "AND alpha = 0.5 ORDER BY as_of DESC LIMIT 10\"`")
    assert msg.text == "benchwatch: 1 level change"
    assert msg.notifications[0].fingerprint


def test_a_bin_change_on_another_scale_says_it_is_not_comparable():
    hist = pd.DataFrame({"benchmark": "otis", "scope": "all", "as_of": pd.date_range("2026-01-01", periods=3, freq="7D"),
                         "s_index": [0.5, 0.8, 0.81], "benchmark_name": "OTIS Mock AIME", "k": 5, "alpha": 0.5,
                         "scale": "published_stderr", "comparable": False})
    hist = with_levels(hist)
    states = evaluate(now=NOW - timedelta(days=20), previous=[], saturation=hist.iloc[:1]).states
    (n,) = evaluate(now=NOW, previous=states, saturation=hist).notifications
    text = render_plain([n], now=NOW)
    assert "OTIS Mock AIME: level moderate → high (own scale, not comparable)" in text
    assert "Not comparable: S here uses published_stderr" in text
    assert "P(bin holds)" not in text                    # no draws stored: nothing claimed


def test_contamination_numbers_have_uncertainty_and_say_suspect_never_contaminated():
    (text,) = section_texts(render_digest([contamination("gpt-x")], now=NOW))
    lines = text.split("\n")
    assert lines[0] == (":rotating_light: *gpt-x on GPQA &lt;Diamond&gt; &amp; friends: "
                        "contamination suspect (corroborated)*")
    assert lines[1] == ("A1: effect +7.2 pp ± 2.1 pp · 95% CI +3.1 pp to +11.3 pp · p=0.0012 · q=0.020 "
                        "· corroborated")
    assert lines[2] == "A2 (predecessor gpt-w): effect +8.1 pp · q=0.041 · corroborated"
    assert lines[3] == "status corroborated (a suspicion, not a finding) · as of 2026-03-01"
    assert "contaminated" not in text


def test_every_scraped_string_arrives_inert():
    messages = render_digest([contamination(NASTY), contamination(NASTY, "resolved")], now=NOW)
    payload = json.dumps([{"text": m.text, "blocks": m.blocks} for m in messages], ensure_ascii=False)
    # no raw angle bracket anywhere: our templates use none, and scraped ones are entities
    assert "<" not in payload and ">" not in payload
    # the bare URL left is unlinked too (in inline code, nothing invisible: alerts/render.escape)
    assert "&lt;!channel&gt; &lt;@U123&gt; &lt;`http://evil.example|click&gt;` &amp; co" in payload
    assert "\u2060" not in payload
    assert "&amp;amp;" not in payload  # escaped exactly once
    resolved = section_texts(messages)[1]
    assert resolved.startswith(":white_check_mark: *Resolved: &lt;!channel&gt;")
    assert "_Why it matters:_" not in resolved


def test_escape_helper():
    assert escape("<!here> & <x>") == "&lt;!here&gt; &amp; &lt;x&gt;"
    assert escape("&lt;") == "&amp;lt;"


def test_fit_never_leaves_half_an_entity():
    text = "a" * 2996 + "&amp;&amp;"
    out = _fit(text, 3000)
    assert len(out) <= 3000 and out == "a" * 2996 + "…"
    assert _fit("short", 3000) == "short"


def test_split_only_when_block_kit_limits_demand_it(monkeypatch):
    assert len(render_digest([contamination(f"model {i}") for i in range(20)], now=NOW)) == 1
    many = [contamination(f"model {i}") for i in range(120)]
    # the cumulative-text cap splits first: every message stays under it
    by_chars = render_digest(many, now=NOW)
    assert len(by_chars) > 3 and all(len(m.blocks) < 50 for m in by_chars)
    assert all(sum(len(t) for t in section_texts([m])) <= 10_000 for m in by_chars)
    assert sum(len(m.notifications) for m in by_chars) == 120
    # without it, the 50-block limit splits
    monkeypatch.setattr("alerts.config.SLACK_MAX_MESSAGE_CHARS", 10**9)
    one = render_digest(many[:48], now=NOW)
    assert len(one) == 1 and len(one[0].blocks) == 50
    messages = render_digest(many, now=NOW)
    assert [len(m.blocks) for m in messages] == [50, 50, 26]
    assert [m.blocks[0]["text"]["text"] for m in messages] == [
        f"benchwatch: 120 contamination suspects ({i}/3)" for i in (1, 2, 3)]
    carried = [n.labels["model"] for m in messages for n in m.notifications]
    assert sorted(carried) == sorted(n.labels["model"] for n in many)  # each exactly once
    for m in messages:  # slack_sdk's own Block Kit validation (section 3000, header 150)
        for block in m.blocks:
            Block.parse(block).to_dict()


def test_huge_scraped_names_are_cut_to_fit():
    monster = contamination("X" * 10_000)
    (text,) = section_texts(render_digest([monster], now=NOW))
    assert len(text) <= 3000
    assert text.split("\n")[0] == f":rotating_light: *{'X' * 199}… on GPQA &lt;Diamond&gt; &amp; friends: " \
                                   "contamination suspect (corroborated)*"


def test_oversized_section_is_cut_at_the_block_kit_limit():
    n = contamination("gpt-x")
    signal = n.annotations["signals"][0]
    n.annotations["signals"] = [dict(signal, signal=f"A{i}") for i in range(60)]
    (msg,) = render_digest([n], now=NOW)
    text = msg.blocks[2]["text"]["text"]
    assert len(text) == 3000 and text.endswith("…")
    Block.parse(msg.blocks[2]).to_dict()


def test_query_command_is_shell_quoted():
    assert query_command("SELECT 1 WHERE x = 'a\"b$c`d'") == \
        'benchwatch query "SELECT 1 WHERE x = \'a\\"b\\$c\\`d\'"'


def test_plain_text_digest_for_the_console():
    text = render_plain([saturation_move(), contamination("gpt-x", "resolved")], now=NOW)
    lines = text.split("\n")
    assert lines[0] == "benchwatch: 1 level change, 1 resolved (2026-03-02 09:30 UTC)"
    assert lines[1] == "FIRING   SWE-bench Verified: level moderate → high"
    assert "RESOLVED gpt-x on GPQA <Diamond> & friends: contamination suspicion cleared" in lines
    assert render_plain([], now=NOW) == "benchwatch: nothing new"


def test_failures_of_one_cause_are_one_section_and_recoveries_omit_the_old_error():
    from alerts.rules import RESOLVED
    health = pd.DataFrame({"source": ["aider", "bfcl", "epoch", "swebench"], "consecutive_failures": 3,
                           "last_new_snapshot_at": NOW - timedelta(days=1),
                           "last_error": ["HTTP 503 Service Unavailable"] * 3 + ["[swebench] malformed JSON"]})
    base = evaluate(now=NOW - timedelta(days=1), previous=[], saturation=with_levels(pd.DataFrame(
        {"benchmark": "mmlu", "scope": "all", "as_of": [NOW - timedelta(days=2)], "s_index": [0.5]}))).states
    ev = evaluate(now=NOW, previous=base, source_health=health)
    texts = section_texts(render_digest(ev.notifications, now=NOW))
    assert [t.split("\n")[0] for t in texts] == [":rotating_light: *3 sources failing: HTTP 503*",
                                                 ":rotating_light: *swebench: source failing (3 runs in a row)*"]
    assert texts[0].split("\n")[1] == "aider, bfcl, epoch · 3 failed runs in a row"
    back = evaluate(now=NOW + timedelta(days=1), previous=ev.states,
                    source_health=health.assign(consecutive_failures=0, last_error=None))
    assert {n.transition for n in back.notifications} == {RESOLVED}
    (text,) = section_texts(render_digest(back.notifications, now=NOW))
    assert text.split("\n")[0] == ":white_check_mark: *4 sources recovered: aider, bfcl, epoch, swebench*"
    assert "503" not in text and "malformed" not in text
    plain = render_plain(back.notifications, now=NOW)
    assert plain.splitlines()[1] == "RESOLVED 4 sources recovered: aider, bfcl, epoch, swebench"


def test_the_baseline_digest_reads_as_a_baseline():
    sat = with_levels(pd.DataFrame({"benchmark": ["mmlu", "hle"], "scope": "all", "as_of": [NOW, NOW],
                                    "s_index": [0.97, 0.1], "sources": [["simple_evals"], ["epoch"]]}))
    ev = evaluate(now=NOW, previous=[], saturation=sat)
    (msg,) = render_digest(ev.notifications, now=NOW)
    assert msg.blocks[0]["text"]["text"] == ("benchwatch: baseline: now watches 2 benchmarks (2 tables) from 2 sources: "
                                             "1 saturated, 0 contamination suspects, 0 sources failing")
    (text,) = section_texts([msg])
    assert text.split("\n") == [
        ":eyes: *benchwatch now watches 2 benchmarks (2 tables) from 2 sources: 1 saturated, 0 contamination "
        "suspects, 0 sources failing*",
        "saturated, strongest first: mmlu (very high, S 0.97)",      # no draws: no P shown
        "levels: 1 very high, 1 low",
        "sources: epoch, simple_evals",
        "suspects (contamination, a suspicion, never a verdict): none",
        "sources failing: none",
        "This is the baseline: from now on you hear of changes (a level change, a new suspect, a source failing "
        "or recovering), not of levels that stay."]


# --- one line per change, the headline first (issue 50) -------------------------------------------

def tables_frame(rows, as_of) -> pd.DataFrame:
    """Saturation rows of leaderboard tables: (table_id, source, name, S, P(S* in each bin) or None);
    the id's parts are also its key's columns (benchmark, source, table_version), as stored."""
    return with_levels(pd.DataFrame({
        "table_id": [r[0] for r in rows], "benchmark": [r[0].split(":")[0] for r in rows],
        "table_version": [(r[0].split(":") + ["", ""])[2] or None for r in rows],
        "source": [r[1] for r in rows], "sources": [[r[1]] for r in rows], "table_name": [r[2] for r in rows],
        "scope": "all", "as_of": [as_of] * len(rows), "s_index": [r[3] for r in rows],
        "bin_probs": [r[4] for r in rows], "k": 5, "alpha": 0.5}))


def test_new_tables_of_one_release_are_one_now_watching_notification_and_one_line():
    first = tables_frame([("mmlu:simple_evals", "simple_evals", "MMLU (simple-evals)", 0.5, None)], NOW)
    states = evaluate(now=NOW, previous=[], saturation=first).states
    later = NOW + timedelta(days=1)
    release = [(f"lb{i}:livebench:2026-01-08", "livebench", f"LB task {i}", s, None)
               for i, s in enumerate([0.2, 0.95, 0.5, 0.75, 0.4, 0.05, 0.6])]
    other = [("hle:epoch", "epoch", "HLE (Epoch AI)", 0.1, None)]
    sat = pd.concat([first, tables_frame(release + other, later)])
    ev = evaluate(now=later, previous=states, saturation=sat)
    watching = [n for n in ev.notifications if n.kind == "now_watching"]
    assert len(watching) == len(ev.notifications) == 2          # one per source and release, not one per table
    from alerts.render import numbers, title
    assert sorted(title(n) for n in watching) == ["Epoch AI 2026-03-03: now watching HLE (Epoch AI)",
                                                   "LiveBench 2026-01-08: now watching 7 tables"]
    (lb,) = [n for n in watching if n.labels["source"] == "livebench"]
    (line,) = numbers(lb)
    assert line.startswith("levels (not changes): 1 very high, 1 high, 3 moderate, 2 low; strongest: "
                           "LB task 1 (very high, S 0.95), LB task 3 (high, S 0.75), LB task 6 (moderate, S 0.60)")
    plain = render_plain(ev.notifications, now=later)
    assert plain.splitlines()[0] == ("benchwatch: Epoch AI 2026-03-03: now watching HLE (Epoch AI), "
                                     "LiveBench 2026-01-08: now watching 7 tables (2026-03-03 09:30 UTC)")
    assert len(plain.splitlines()) == 5          # header, two notices of one line each (and nothing per table)
    assert evaluate(now=later, previous=ev.states, saturation=sat).notifications == []


def test_the_baseline_lists_the_strongest_saturations_first_by_s():
    # 14 saturated tables whose names sort against their S: the strongest must lead, not hide in "and N more"
    rows = [(f"b{i}:src", "src", f"{chr(97 + i)} board", round(0.71 + 0.02 * i, 3), None) for i in range(14)]
    ev = evaluate(now=NOW, previous=[], saturation=tables_frame(rows, NOW))
    (notice,) = ev.notifications
    assert notice.annotations["saturated"][:2] == ["n board (very high, S 0.97)", "m board (very high, S 0.95)"]
    (text,) = section_texts(render_digest(ev.notifications, now=NOW))
    assert text.split("\n")[1].startswith("saturated, strongest first: n board (very high, S 0.97), m board")
    assert text.split("\n")[1].endswith("and 2 more")


def test_a_level_below_the_floor_is_not_announced_as_that_level():
    first = tables_frame([("mmlu:simple_evals", "simple_evals", "MMLU (simple-evals)", 0.5, None)], NOW)
    states = evaluate(now=NOW, previous=[], saturation=first).states
    later = NOW + timedelta(days=1)
    # S 0.71 is in the high bin, but every re-evaluation lands in moderate: P(level holds) 0.00
    shaky = tables_frame([("swe:swebench", "swebench", "SWE-bench (SWE-bench)", 0.71, [0, 0, 1.0, 0, 0])], later)
    ev = evaluate(now=later, previous=states, saturation=pd.concat([first, shaky]))
    text = render_plain(ev.notifications, now=later)
    assert "level high" not in text and "(high" not in text
    assert "level not settled (stored high, P(level holds) 0.00), S 0.71 (its level, not a change)" in text
    assert "level level" not in text
    # and on day one the baseline lists it apart from the saturated
    base = evaluate(now=later, previous=[], saturation=shaky)
    (notice,) = base.notifications
    assert notice.annotations["saturated"] == []
    assert notice.annotations["unsettled"] == ["SWE-bench (SWE-bench) (level not settled (stored high, "
                                               "P(level holds) 0.00), S 0.71)"]


def test_no_message_shows_another_probability_than_p_level_holds():
    msgs = render_digest([saturation_move(), contamination("gpt-x")], now=NOW)
    payload = json.dumps([{"text": m.text, "blocks": m.blocks} for m in msgs], ensure_ascii=False)
    assert "P(bin holds)" not in payload
    footers = [b for m in msgs for b in m.blocks if b["type"] == "context" and "P(level holds):" in
               b["elements"][0]["text"]]
    assert len(footers) == 1                                    # defined once, in the footer


def test_the_fallback_text_of_18_failing_sources_names_the_cause_once():
    sources = [f"src{i:02d}" for i in range(18)]
    health = pd.DataFrame({"source": sources, "consecutive_failures": 3, "last_new_snapshot_at": NOW - timedelta(days=1),
                           "last_error": ["HTTP 503 Service Unavailable"] * 18})
    base = evaluate(now=NOW - timedelta(days=1), previous=[], saturation=with_levels(pd.DataFrame(
        {"benchmark": "mmlu", "scope": "all", "as_of": [NOW - timedelta(days=2)], "s_index": [0.5]}))).states
    ev = evaluate(now=NOW, previous=base, source_health=health)
    (msg,) = render_digest(ev.notifications, now=NOW)
    assert msg.text == "benchwatch: 18 sources failing (HTTP 503)"
    assert msg.text.count("503") == 1 and msg.text.count("failing") == 1
    assert msg.blocks[0]["text"]["text"] == msg.text

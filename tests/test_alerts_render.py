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
    assert [b["type"] for b in msg.blocks] == ["header", "context", "section"]
    assert msg.blocks[0]["text"]["text"] == "benchwatch: 1 new alert"
    text = msg.blocks[2]["text"]["text"]
    lines = text.split("\n")
    assert lines[0] == ":rotating_light: *SWE-bench Verified: level moderate → high*"
    assert lines[1] == ("S_index 0.81 (P(bin holds) 0.87 under binomial(n=500), 2000 draws) · R_norm 0.46 "
                        "· SE_Δ 0.021 · k=5, α=0.5, "
                        "n=500, 41 models · as of 2026-01-15")
    # the change names the table rows behind it: the top k of the last snapshot at the old level and of the new
    # (the move was proposed by the 2026-01-08 snapshot and confirmed by the next: "before" is the last one before it)
    assert lines[2] == ("top 5 before (2026-01-01, S 0.50, level moderate): a 0.710, b 0.620; "
                        "after (2026-01-15, S 0.81): b 0.705, a 0.700")
    assert lines[3] == ("the move was first proposed on 2026-01-08 and confirmed on 2026-01-15 (hysteresis: a move "
                        "needs 2 snapshots in a row)")
    # P(level holds) 0.87 < 0.9: "likely", never "statistically indistinguishable" (alerts.text.WORDING)
    assert lines[4].startswith("_Why it matters:_ the top models are likely indistinguishable within evaluation "
                               "noise (P(level holds) 0.87)")
    assert lines[5] == ("_Where to look:_ `benchwatch query \"SELECT as_of, s_index, bin, level, r_norm, se_delta, n_models "
                        "FROM saturation WHERE benchmark = 'swebench_verified' AND scope = 'all' AND k = 5 "
                        "AND alpha = 0.5 ORDER BY as_of DESC LIMIT 10\"`")
    assert msg.text == "benchwatch: 1 new alert — SWE-bench Verified: level moderate → high"
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
        f"benchwatch: 120 new alerts ({i}/3)" for i in (1, 2, 3)]
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
    assert lines[0] == "benchwatch: 1 new alert, 1 resolved (2026-03-02 09:30 UTC)"
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
    assert msg.blocks[0]["text"]["text"] == "benchwatch: baseline"
    (text,) = section_texts([msg])
    assert text.split("\n") == [
        ":eyes: *benchwatch now watches 2 benchmarks from 2 sources*",
        "2 level series (1 very high, 1 low); sources: epoch, simple_evals",
        "1 saturated (level high or very high): mmlu (very high, likely)",   # no draws: at most "likely"
        "suspects (contamination, a suspicion, never a verdict): none",
        "sources failing: none",
        "This is the baseline: from now on you hear of changes (a level change, a new suspect, a source failing "
        "or recovering), not of levels that stay."]

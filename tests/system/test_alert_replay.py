"""The real snapshot history replayed day by day as a daily schedule sees it, notified to the fake
Slack (issue 19): for each distinct file date of ../shared/snapshots, backfill that day's files
(`benchwatch backfill`), analyze with now = that day, notify. The same replay writes
docs/alert-timeline.md (docs/alert_timeline.py). Source folders benchwatch does not know are
skipped by backfill. Each assertion is a rule for any history, never a figure of these files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import ROOT, SNAPSHOTS, alert_timeline as _timeline, needs

pytestmark = [needs(SNAPSHOTS), pytest.mark.slow,   # ~130 days of backfill + analyze + notify
              pytest.mark.xdist_group("replay")]   # the session's replay (tests/conftest.py), built once


@pytest.fixture
def replayed(real_history_replay):
    """The session's day-by-day replay of the real history (tests/conftest.py's
    `real_history_replay`, which tests/system/test_tables_real.py reads too): its days, the
    requests the fake Slack accepted and the database."""
    return real_history_replay.days, real_history_replay.accepted, real_history_replay.db


def test_no_command_crashes(replayed):
    days, _, _ = replayed
    crashes = [(d.date, d.errors) for d in days if max(d.backfill_rc, d.analyze_rc, d.notify_rc) >= 70]
    assert not crashes
    assert all(d.notify_rc == 0 for d in days)          # the fake Slack accepted every digest


def test_exactly_one_baseline_on_the_first_cycle_with_levels(replayed):
    days, accepted, _ = replayed
    first = next(i for i, d in enumerate(days) if d.stored_levels)
    baselines = [(d.date, n) for d in days for n in d.notifications if n.kind == "baseline"]
    assert [date for date, _ in baselines] == [days[first].date]
    (_, notice), = baselines
    assert notice.annotations["benchmarks"] == len({b for b, _ in days[first].stored_levels})
    # nothing but the baseline (and any "now watching" lines) is sent that day
    assert {n.kind for n in days[first].notifications} <= {"baseline", "now_watching"}
    assert len(accepted) == sum(len(d.messages) for d in days)   # what was recorded reached the fake Slack


def test_every_saturation_alert_level_is_the_stored_level(replayed):
    days, _, _ = replayed
    wrong = [(d.date, b, s, lv, d.stored_levels.get((b, s))) for d in days for b, s, lv in d.firing_levels
             if d.stored_levels.get((b, s)) != lv]
    assert not wrong


def test_every_level_change_names_the_table_rows_that_caused_it(replayed):
    from alerts.render import render_plain
    days, _, _ = replayed
    changes = [(d, n) for d in days for n in d.notifications
               if n.kind == "saturation_bin_changed" and n.transition == "firing" and n.annotations.get("from_level")]
    for d, n in changes:
        text = render_plain([n], now=n.created_at)
        assert "top 5 before (" in text and "; after (" in text, (d.date, text)
        a = n.annotations
        assert a["top_before"] and a["top_after"], (d.date, text)
        assert a["top_after_as_of"] > a["top_before_as_of"]


def test_no_message_says_statistically_indistinguishable_without_the_evidence(replayed):
    days, _, _ = replayed
    for d in days:
        for n in d.notifications:
            p = (n.annotations.get("numbers") or {}).get("p_level_holds")
            if "statistically indistinguishable" in json.dumps(n.annotations):
                assert p is not None and p >= 0.9, (d.date, n.labels, p)


def test_no_contamination_alert_resolves_while_its_test_data_is_unchanged(replayed):
    days, _, _ = replayed
    fired: dict[str, set] = {}      # fingerprint -> snapshot ids of the evidence when it fired
    bad = []
    for d in days:
        for n in d.notifications:
            if n.kind != "contamination_suspect":
                continue
            if n.transition == "firing":
                fired[n.fingerprint] = _evidence_ids(n.annotations.get("signals") or [])
            elif n.transition == "resolved":
                now = d.suspects
                rows = now[(now["model"] == n.labels["model"]) & (now["benchmark"] == n.labels["benchmark"])] \
                    if len(now) else now
                current = {i for ev in (rows["evidence"] if len(rows) else []) for i in _ids(ev)}
                if current and current == fired.get(n.fingerprint):
                    bad.append((d.date, n.labels["model"], n.labels["benchmark"]))
    assert not bad, f"resolved without new data: {bad}"


def _ids(evidence) -> set:
    try:
        ev = json.loads(evidence) if isinstance(evidence, str) else (evidence or {})
    except ValueError:
        return set()
    return {int(i) for i in (ev.get("snapshot_ids") or []) if i is not None} if isinstance(ev, dict) else set()


def _evidence_ids(signals) -> set:
    return {i for s in signals for i in _ids(s.get("evidence"))}


def test_no_stored_level_sits_two_bins_from_its_s(replayed):
    from analysis.constants import LEVEL_MAX_LAG_BINS, SATURATION_BINS
    days, _, _ = replayed
    far = [(d.date, key, lv, d.stored_bins[key]) for d in days for key, lv in d.stored_levels.items()
           if key in d.stored_bins
           and abs(SATURATION_BINS.index(lv) - SATURATION_BINS.index(d.stored_bins[key])) >= LEVEL_MAX_LAG_BINS]
    assert not far


def test_every_level_change_is_caused_by_a_change_in_its_table(replayed):
    days, _, _ = replayed
    for d in days:
        for n in d.notifications:
            a = n.annotations
            if n.kind == "saturation_bin_changed" and n.transition == "firing" and a.get("from_level"):
                # the snapshot that moved S differs from the last one before (never a re-publication)
                assert (a["top_before"], a["s_before"]) != (a["top_after"], a["s_after"]), (d.date, n.labels)


def test_one_now_watching_notification_per_source_and_release(replayed):
    days, _, _ = replayed
    for d in days:
        keys = [(n.labels["source"], n.labels["signal"]) for n in d.notifications if n.kind == "now_watching"]
        assert len(keys) == len(set(keys)), d.date


def test_messages_show_one_probability_and_never_announce_a_level_below_the_floor(replayed):
    from alerts.config import LEVEL_ANNOUNCE_MIN_P
    from alerts.render import render_plain
    days, accepted, _ = replayed
    for d in days:
        for m in d.messages:
            text = render_plain(list(m.notifications), now=m.notifications[0].created_at)
            assert "P(bin holds)" not in text and "P(bin holds)" not in m.text, d.date
            assert len(m.text) <= 300, d.date                      # the phone notification: the summary line
            for n in m.notifications:
                p = (n.annotations.get("numbers") or {}).get("p_level_holds")
                if n.kind == "saturation_bin_changed" and n.transition == "firing" and p is not None \
                        and p < LEVEL_ANNOUNCE_MIN_P:       # (a resolution announces no level)
                    assert "not settled" in render_plain([n], now=n.created_at), (d.date, n.labels)
    assert accepted and all("P(bin holds)" not in json.dumps(r.body, ensure_ascii=False) for r in accepted)


def test_the_timeline_document_is_what_the_replay_delivered(replayed):
    """docs/alert-timeline.md, message for message, is what this replay sent (`--check`'s comparison)."""
    days, _, _ = replayed
    diff = _timeline().timeline_diff(days, ROOT / "docs" / "alert-timeline.md")
    assert not diff, "".join(diff[:300]) + "\nthe timeline changed: run python docs/alert_timeline.py"


def test_a_message_changed_lost_or_added_is_a_mismatch(replayed, tmp_path):
    """The comparison above can fail: a document with one message edited, one day left out or one
    day added differs, and so does a replay that delivered one message fewer."""
    import dataclasses
    tl = _timeline()
    days, _, _ = replayed
    text = tl.timeline_markdown(days)
    doc = tmp_path / "alert-timeline.md"
    doc.write_text(text, encoding="utf-8")
    assert tl.timeline_diff(days, doc) == []
    fence = text.index("```text\n") + len("```text\n")
    section = text.index("\n## ")
    after = text.find("\n## ", section + 1)
    for edited in (text[:fence] + "x" + text[fence:],                        # a message edited
                   text[:section] + (text[after:] if after > 0 else "\n"),  # a day's messages lost
                   text + "\n## 2099-01-01\n"):                                # a day added
        doc.write_text(edited, encoding="utf-8")
        assert tl.timeline_diff(days, doc), edited[:200]
    doc.write_text(text, encoding="utf-8")
    i = next(i for i, d in enumerate(days) if d.messages)
    fewer = [*days[:i], dataclasses.replace(days[i], messages=days[i].messages[1:]), *days[i + 1:]]
    assert tl.timeline_diff(fewer, doc)

"""Alert rules (alerts/rules/) and the state machine (alerts/engine.py): pure, no DB, no Slack."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pandas as pd
import pytest

from alerts.config import RuleSettings
from alerts.render import numbers as render_lines, title
from alerts.engine import evaluate
from alerts.rules import (
    FIRING,
    INACTIVE,
    PENDING,
    RESOLVED,
    Silence,
    fingerprint,
    make_labels,
    parse_duration,
    parse_matchers,
    level_series,
)
from helpers import with_levels

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
# METHODS D prototype: committed bins 0,0,0,1,1,1,1,0,0,2,2,2,2,3 over [low, moderate, high, very high]
PROTOTYPE = [.2, .32, .36, .38, .33, .29, .24, .22, .75, .8, .81, .93, .96, .97]


def day(i: int) -> datetime:
    return T0 + timedelta(days=i)


def history(values, bench="swebench_verified", scope="all", start=0, every=1, **extra) -> pd.DataFrame:
    """S_index rows of one series, one every `every` days, with the levels `analyze` stores
    (tests/helpers.with_levels: the newest row judged at its own as_of)."""
    return with_levels(pd.DataFrame({"benchmark": bench, "scope": scope,
                         "as_of": [day(start + every * i) for i in range(len(values))],
                         "s_index": values, "benchmark_name": "SWE-bench Verified",
                         "r_norm": 0.5, "se_delta": 0.021, "k": 5, "alpha": 0.5, "n_items": 500, **extra}))


def by_kind(ev, kind):
    return [s for s in ev.states if s.labels["kind"] == kind]


def firing_levels(ev):
    return sorted(s.labels["level"] for s in ev.states if s.state == FIRING)


# --- identity and parsing ---------------------------------------------------------------------

def test_fingerprint_is_stable_and_ignores_label_order_and_empty_labels():
    a = make_labels("contamination_suspect", model="m1", benchmark="b1", source="epoch")
    b = {k: a[k] for k in reversed(list(a))}
    assert fingerprint(a) == fingerprint(b)
    assert fingerprint(a) == fingerprint({k: v for k, v in a.items() if v})
    assert fingerprint(a) != fingerprint({**a, "model": "m2"})
    # stored fingerprints must survive upgrades: pinned, = sha256('[["kind","source_failing"],["source","epoch"]]')[:16]
    assert fingerprint({"kind": "source_failing", "source": "epoch"}) == "b472253c4e3718a6"


def test_make_labels_rejects_unknown_kind_and_label():
    with pytest.raises(ValueError, match="unknown alert kind"):
        make_labels("contaminated")
    with pytest.raises(ValueError, match="unknown alert label"):
        make_labels("source_failing", sauce="x")


def test_parse_matchers_and_duration():
    assert parse_matchers(["benchmark=swebench_verified", "kind=saturation_bin_changed"]) == {
        "benchmark": "swebench_verified", "kind": "saturation_bin_changed"}
    assert parse_matchers(["model=a=b"]) == {"model": "a=b"}
    for bad, msg in ((["benchmark"], "not key=value"), (["colour=red"], "unknown label 'colour'"),
                     ([], "at least one matcher"), (["model=a", "model=b"], "already matched")):
        with pytest.raises(ValueError, match=msg):
            parse_matchers(bad)
    assert parse_duration("14d") == timedelta(days=14)
    assert parse_duration("2w") == timedelta(days=14)
    assert parse_duration("90m") == timedelta(minutes=90)
    for bad in ("14", "0d", "-1d", "d", "3y"):
        with pytest.raises(ValueError, match="duration"):
            parse_duration(bad)


# --- saturation ---------------------------------------------------------------------------------

def test_stored_levels_reproduce_the_methods_d_prototype():
    # one snapshot a week: a one-bin move has stood LEVEL_DWELL_DAYS by the next snapshot, so each
    # lands one snapshot before METHODS D's count of two did; the two-bin jump (.22 -> .75) at once
    frame = level_series(history(PROTOTYPE, every=7))
    bins = ["low", "moderate", "high", "very high"]
    assert frame["level"].tolist() == [bins[i] for i in (0, 0, 1, 1, 1, 1, 0, 0, 2, 2, 2, 2, 3, 3)]
    assert frame["pending_bin"].isna().all()            # each pending move was settled by the next week
    last = level_series(history(PROTOTYPE[:13], every=7)).iloc[-1]
    assert (last["level"], last["pending_bin"]) == ("high", "very high")   # the newest row: still waiting


def test_prototype_sequence_notifies_each_committed_move_once():
    """One evaluation per snapshot, each run twice: four messages, at the commits only."""
    states, sent = [], []
    for i in range(1, len(PROTOTYPE) + 1):
        for repeat in range(2):
            ev = evaluate(now=day(7 * i) + timedelta(hours=repeat), previous=states,
                          saturation=history(PROTOTYPE[:i], every=7))
            states = ev.states
            sent += [(i, title(n)) for n in ev.notifications]
            if repeat:
                assert ev.notifications == [], f"re-run of snapshot {i} notified"
        pending = sorted(s.labels["level"] for s in states if s.state == PENDING)
        assert pending == {3: ["moderate"], 7: ["low"], 13: ["very high"]}.get(i, []), i
        assert len(firing_levels(ev)) == 1
    assert sent == [(1, "benchwatch now watches 1 benchmark (1 table): 0 saturated, 0 contamination suspects, "
                        "0 sources failing"),                                # day one: the baseline, once
                    (4, "SWE-bench Verified: level low → moderate"),
                    (8, "SWE-bench Verified: level moderate → low"),
                    (9, "SWE-bench Verified: level low → high"),            # two bins: at once
                    (14, "SWE-bench Verified: level high → very high")]
    assert firing_levels(ev) == ["very high"]
    # the left levels are resolved without their own message (folded into the move), the
    # abandoned proposals never fired
    by_level = {s.labels["level"]: s.state for s in states}
    assert by_level == {"low": RESOLVED, "moderate": RESOLVED, "high": RESOLVED, "very high": FIRING}


def test_first_observation_sets_the_level_without_alerting_but_records_history_events():
    ev = evaluate(now=day(100), previous=[], saturation=history(PROTOTYPE, every=7))
    (notice,) = ev.notifications                  # the level is a state: only the day-one baseline is sent
    assert (notice.kind, title(notice)) == ("baseline", "benchwatch now watches 1 benchmark (1 table): 1 saturated, "
                                                        "0 contamination suspects, 0 sources failing")
    assert notice.annotations["saturated"] == ["SWE-bench Verified (very high, S 0.97)"]
    assert firing_levels(ev) == ["very high"]
    assert by_kind(ev, "saturation_bin_changed")[0].notified == "baseline"
    moves = [(e.detail["from"], e.detail["to"], e.detail["direction"]) for e in ev.events
             if e.event == "SaturationBinChanged"]
    assert moves == [("low", "moderate", "up"), ("moderate", "low", "down"), ("low", "high", "up"),
                     ("high", "very high", "up")]


def test_a_multi_bin_jump_lands_at_once():
    # no level sits two bins from its S (analysis.constants.LEVEL_MAX_LAG_BINS): no pending period
    states = evaluate(now=day(1), previous=[], saturation=history([.2])).states
    ev = evaluate(now=day(2), previous=states, saturation=history([.2, .95]))
    assert [title(n) for n in ev.notifications] == ["SWE-bench Verified: level low → very high"]
    n = ev.notifications[0]
    assert (n.transition, n.episode, n.annotations["numbers"]["s_index"]) == (FIRING, day(2), 0.95)
    assert n.annotations["proposed_since"] is None             # not a dwell: at once
    assert evaluate(now=day(3), previous=ev.states, saturation=history([.2, .95, .96])).notifications == []


def test_abandoned_proposal_goes_inactive_without_a_message():
    states = evaluate(now=day(1), previous=[], saturation=history([.2])).states
    states = evaluate(now=day(2), previous=states, saturation=history([.2, .36])).states
    ev = evaluate(now=day(3), previous=states, saturation=history([.2, .36, .31]))
    assert ev.notifications == []
    assert {s.labels["level"]: s.state for s in ev.states} == {"low": FIRING, "moderate": INACTIVE}


def test_missing_data_keeps_states():
    states = evaluate(now=day(1), previous=[], saturation=history([.2])).states
    ev = evaluate(now=day(2), previous=states, saturation=None)
    assert ev.states == states and ev.notifications == []
    other = history([.9], bench="gpqa_diamond")
    ev = evaluate(now=day(3), previous=states, saturation=other)
    kept = [s for s in ev.states if s.labels["benchmark"] == "swebench_verified"]
    assert [(s.labels["level"], s.state) for s in kept] == [("low", FIRING)]


# --- contamination -----------------------------------------------------------------------------------

# a passing placebo calibration of the signal (storage.rule_inputs.with_calibration)
PASSING = {"calibrated_at": day(0), "trials": 200, "tests": 1200, "p01": 0.01, "p01_lo": 0.005, "p01_hi": 0.015,
           "p05": 0.05, "p05_lo": 0.04, "p05_hi": 0.06, "fw_bh": 0.05, "fw_bh_lo": 0.03, "fw_bh_hi": 0.08}
_STATE_OF = {"suspect": "pending", "persisted": "confirmed", "corroborated": "confirmed", "not_flagged": "resolved"}


def suspects(status="suspect", model="m<!channel>", source="epoch", snaps=(3,), **extra):
    """One stored suspicion state (storage.rule_inputs.read_suspicion_alerts), named by the
    analysis status it stands for (`suspect` = pending, `persisted`/`corroborated` = confirmed,
    `not_flagged` = resolved on snapshot 4) or by its state; its signal passed its newest
    calibration (`PASSING`) unless `extra` says otherwise."""
    state = _STATE_OF.get(status, status)
    resolved = state == "resolved"
    extra = {"calibration_ok": True, "calibration": PASSING, **extra}
    return pd.DataFrame([{"model": model, "benchmark": "gpqa_diamond", "source": source, "signal": "A3", "detail": "",
                          "state": state, "confirmed_by": {"persisted": "distinct_data",
                                                           "corroborated": "corroborated"}.get(status),
                          "effect": 0.072, "se": 0.021, "ci_low": 0.031, "ci_high": 0.113, "p_value": 0.001,
                          "q_value": 0.02, "distinct_data": 2 if status == "persisted" else 1,
                          "snapshot_ids": list(snaps), "data_as_of": day(0),
                          "evidence": '{"n_ref": 12, "snapshot_ids": [3]}',
                          "resolved_snapshot_ids": [4] if resolved else None,
                          "resolved_data_as_of": day(2) if resolved else None,
                          "resolution": {"why": "not flagged on the new data", "p_value": 0.31, "q_value": 0.4,
                                         "effect": 0.01} if resolved else None, **extra}])


def test_contamination_waits_for_confirmation_then_resolves_naming_the_new_data():
    ev = evaluate(now=day(1), previous=[], suspects=suspects("suspect"))
    assert ev.notifications == [] and [s.state for s in ev.states] == [PENDING]
    ev = evaluate(now=day(2), previous=ev.states, suspects=suspects("persisted", snaps=(5,)))
    assert [(n.transition, title(n)) for n in ev.notifications] == [
        (FIRING, "m<!channel> on gpqa_diamond: contamination suspect (persisted)")]
    signal = ev.notifications[0].annotations["signals"][0]
    assert signal["evidence"] == {"n_ref": 12, "snapshot_ids": [3]} and signal["q_value"] == 0.02
    assert signal["snapshot_ids"] == [5] and signal["distinct_data"] == 2
    assert evaluate(now=day(2), previous=ev.states, suspects=suspects("persisted")).notifications == []
    # another rule's data changing (no suspicion frame at all) keeps the alert as it is
    assert evaluate(now=day(3), previous=ev.states).notifications == []
    ev = evaluate(now=day(3), previous=ev.states, suspects=suspects("not_flagged"))
    assert [(n.transition, n.episode) for n in ev.notifications] == [(RESOLVED, day(2))]
    assert [s.state for s in ev.states] == [RESOLVED]
    assert title(ev.notifications[0]) == ("m<!channel> on gpqa_diamond: contamination suspicion resolved: "
                                         "new data (snapshot 4 of " + day(2).isoformat()[:10] + ") no longer flag it")
    # a stored resolution read again changes nothing
    assert evaluate(now=day(4), previous=ev.states, suspects=suspects("not_flagged")).notifications == []


def test_a_suspicion_the_new_data_cannot_test_is_closed_not_cleared():
    """New data on which the test could not run (too few rows or windows) ends the suspicion, and
    the message says so: it is no verdict that the new data are clean."""
    ev = evaluate(now=day(2), previous=[], suspects=suspects("persisted", snaps=(5,)))
    untested = suspects("not_flagged", resolution={"why": "not tested on the new data (floors)", "tested": False})
    ev = evaluate(now=day(3), previous=ev.states, suspects=untested)
    assert [title(n) for n in ev.notifications] == [
        "m<!channel> on gpqa_diamond: contamination suspicion closed: new data (snapshot 4 of "
        + day(2).isoformat()[:10] + ") no longer allow the test"]


def test_corroborated_or_strong_q_fires_at_once_and_bad_state_is_an_error():
    ev = evaluate(now=day(1), previous=[], suspects=suspects("corroborated"))
    assert [n.transition for n in ev.notifications] == [FIRING]
    strong = suspects("confirmed", confirmed_by="strong_q", q_value=0.004)
    assert [title(n) for n in evaluate(now=day(1), previous=[], suspects=strong).notifications] == [
        "m<!channel> on gpqa_diamond: contamination suspect (q ≤ 0.01)"]
    with pytest.raises(ValueError, match=r"state \['contaminated'\]"):
        evaluate(now=day(1), previous=[], suspects=suspects("contaminated"))
    with pytest.raises(ValueError, match="suspicions frame lacks column"):
        evaluate(now=day(1), previous=[], suspects=suspects().drop(columns="q_value"))


def test_a_miscalibrated_signal_is_never_delivered_as_confirmed():
    """Issue 50: `benchwatch calibrate` found A3 miscalibrated on the data it ran on (placebo P(p < 0.05)
    9.4 % [7.8, 10.9]) while `notify` sent its flags as "confirmed (q at most 0.01 at once)". While the
    newest stored calibration of a signal fails, its flags are shown unconfirmed with that reason and
    not fired; a firing one is withdrawn; a passing calibration lets the confirmation stand."""
    bad = {"calibration_ok": False,
           "calibration": {"calibrated_at": day(0), "trials": 200, "tests": 1200, "p01": 0.033, "p01_lo": 0.024,
                           "p01_hi": 0.042, "p05": 0.094, "p05_lo": 0.078, "p05_hi": 0.109, "fw_bh": 0.23,
                           "fw_bh_lo": 0.18, "fw_bh_hi": 0.29}}
    strong = dict(confirmed_by="strong_q", q_value=0.004)
    ev = evaluate(now=day(1), previous=[], suspects=suspects("confirmed", **strong, **bad))
    assert ev.notifications == [] and [s.state for s in ev.states] == [PENDING]
    a = ev.states[0].annotations
    assert a["status"] == "unconfirmed" and a["signals"][0]["calibrated"] is False
    assert a["unconfirmed_because"] == [
        "A3 is miscalibrated on this data (benchwatch calibrate of " + day(0).isoformat()[:10] + ": placebo "
        "P(p < 0.01) 3.3% [2.4%, 4.2%], P(p < 0.05) 9.4% [7.8%, 10.9%], trials with a BH flag 23.0% [18.0%, 29.0%]): "
        "its q-values are not to be trusted"]
    # a passing calibration: the confirmation stands and fires
    good = {"calibration_ok": True, "calibration": {**bad["calibration"], "p05": 0.05}}
    ev = evaluate(now=day(2), previous=ev.states, suspects=suspects("confirmed", **strong, **good))
    assert [(n.transition, title(n)) for n in ev.notifications] == [
        (FIRING, "m<!channel> on gpqa_diamond: contamination suspect (q ≤ 0.01)")]
    # a later calibration fails: withdrawn, and the message says why (not "cleared")
    ev = evaluate(now=day(3), previous=ev.states, suspects=suspects("confirmed", **strong, **bad))
    assert [(n.transition, title(n)) for n in ev.notifications] == [
        (RESOLVED, "m<!channel> on gpqa_diamond: contamination suspect withdrawn to unconfirmed "
                   "(its signal is miscalibrated on this data)")]
    assert any(line.startswith("unconfirmed: A3 is miscalibrated") for line in render_lines(ev.notifications[0]))


def test_a_signal_never_calibrated_on_this_data_is_never_delivered_as_confirmed():
    """Issue 50: a database where `benchwatch calibrate` never ran (or found no placebo test possible)
    has no evidence that the signal's q-values hold on its data: its flags are shown unconfirmed with
    the reason "not calibrated on this data" and never fire; a passing calibration lets them fire."""
    strong = dict(confirmed_by="strong_q", q_value=0.004)
    none = {"calibration_ok": None, "calibration": None}
    ev = evaluate(now=day(1), previous=[], suspects=suspects("confirmed", **strong, **none))
    assert ev.notifications == [] and [s.state for s in ev.states] == [PENDING]
    a = ev.states[0].annotations
    assert a["status"] == "unconfirmed" and a["signals"][0]["calibrated"] is False
    assert a["unconfirmed_because"] == ["A3 is not calibrated on this data: no calibration of its item set "
                                        "epoch/gpqa_diamond on record (the next analysis that reads the set's data "
                                        "computes one), so its q-values are unchecked"]
    # a signal calibrated as a whole (A2): the reason names `benchwatch calibrate`
    a2 = evaluate(now=day(1), previous=[], suspects=suspects("confirmed", **strong, **none, signal="A2"))
    assert a2.states[0].annotations["unconfirmed_because"] == [
        "A2 is not calibrated on this data: no placebo calibration on record (run benchwatch calibrate), so its "
        "q-values are unchecked"]
    # a frame read without the calibration columns counts as none
    bare = suspects("confirmed", **strong).drop(columns=["calibration_ok", "calibration"])
    assert evaluate(now=day(1), previous=[], suspects=bare).notifications == []
    # a calibration on record that had no placebo test: not calibrated either, and it says so
    empty = {"calibration_ok": None, "calibration": {"calibrated_at": day(0), "trials": 200, "tests": 0}}
    ev = evaluate(now=day(1), previous=[], suspects=suspects("confirmed", **strong, **empty))
    assert ev.notifications == []
    assert "its item set epoch/gpqa_diamond allows no placebo test" in ev.states[0].annotations["unconfirmed_because"][0]
    # a passing calibration: it fires; a later database state without one withdraws it, saying why
    ev = evaluate(now=day(2), previous=ev.states, suspects=suspects("confirmed", **strong))
    assert [n.transition for n in ev.notifications] == [FIRING]
    ev = evaluate(now=day(3), previous=ev.states, suspects=suspects("confirmed", **strong, **none))
    assert [(n.transition, title(n)) for n in ev.notifications] == [
        (RESOLVED, "m<!channel> on gpqa_diamond: contamination suspect withdrawn to unconfirmed "
                   "(its signal is not calibrated on this data)")]
    assert any(line.startswith("unconfirmed: A3 is not calibrated on this data") for line in
               render_lines(ev.notifications[0]))


def test_a_retired_signal_never_fires_and_says_why():
    """Issue 50: A1 has no power on real data (it never reached p < 0.05 in 1,139 placebo tests of the
    replay); it is retired from alerting: its suspicions are shown unconfirmed with the reason."""
    from analysis.constants import RETIRED_SIGNALS
    a1 = suspects("confirmed", confirmed_by="strong_q", q_value=0.004, signal="A1")
    ev = evaluate(now=day(1), previous=[], suspects=a1)
    assert ev.notifications == [] and ev.states[0].annotations["unconfirmed_because"] == [RETIRED_SIGNALS["A1"]]
    assert ev.states[0].annotations["status"] == "unconfirmed"


def test_pending_suspect_that_resolves_sends_nothing_and_a_resolution_alone_creates_no_alert():
    ev = evaluate(now=day(1), previous=[], suspects=suspects("suspect"))
    ev = evaluate(now=day(2), previous=ev.states, suspects=suspects("not_flagged"))
    assert ev.notifications == [] and [s.state for s in ev.states] == [INACTIVE]
    assert evaluate(now=day(1), previous=[], suspects=suspects("not_flagged")).states == []


def test_an_alert_without_a_stored_suspicion_keeps_its_state():
    ev = evaluate(now=day(1), previous=[], suspects=suspects("corroborated"))
    other = suspects("suspect", model="another")
    ev = evaluate(now=day(2), previous=ev.states, suspects=other)
    assert ev.notifications == []
    assert sorted((s.labels["model"], s.state) for s in ev.states) == [("another", PENDING), ("m<!channel>", FIRING)]


# --- sources and inhibition ---------------------------------------------------------------------------

def health(failures=0, last_new=None, source="epoch"):
    return pd.DataFrame({"source": [source], "consecutive_failures": [failures],
                         "last_new_snapshot_at": [last_new or day(0)], "last_error": ["HTTP 503"]})


def test_source_failing_after_n_runs_and_stale_after_d_days():
    assert evaluate(now=day(1), previous=[], source_health=health(failures=2)).notifications == []
    ev = evaluate(now=day(1), previous=[], source_health=health(failures=3))
    assert [title(n) for n in ev.notifications] == ["epoch: source failing (3 runs in a row)"]
    assert evaluate(now=day(13), previous=[], source_health=health(last_new=day(0))).notifications == []
    ev = evaluate(now=day(15), previous=[], source_health=health(last_new=day(0)))
    assert [title(n) for n in ev.notifications] == ["epoch: no new snapshot for 15.0 days"]
    # only a source that is still being collected goes stale
    not_collected = health(last_new=day(0)).assign(last_attempt_at=[day(0)])
    assert evaluate(now=day(15), previous=[], source_health=not_collected).notifications == []
    collected = health(last_new=day(0)).assign(last_attempt_at=[day(14)])
    assert len(evaluate(now=day(15), previous=[], source_health=collected).notifications) == 1
    custom = RuleSettings(source_failing_runs=5, source_stale_days=30)
    assert evaluate(now=day(15), previous=[], source_health=health(4, day(0)), settings=custom).notifications == []
    with pytest.raises(ValueError, match="source_failing_runs"):
        RuleSettings(source_failing_runs=0)


def test_failing_source_inhibits_its_derived_alerts_until_it_recovers():
    ev = evaluate(now=day(1), previous=[], source_health=health(failures=3),
                  suspects=suspects("corroborated", source="epoch"))
    assert [n.kind for n in ev.notifications] == ["source_failing"]
    contamination = by_kind(ev, "contamination_suspect")[0]
    assert (contamination.state, contamination.notified) == (FIRING, "muted")
    assert contamination.muted_by == "inhibited by source_failing{source=epoch}"
    # another source's alert is not inhibited
    other = evaluate(now=day(1), previous=[], source_health=health(failures=3),
                     suspects=suspects("corroborated", source="lmarena"))
    assert sorted(n.kind for n in other.notifications) == ["contamination_suspect", "source_failing"]
    # recovery: the source resolves and the still-firing alert is delivered now
    ev = evaluate(now=day(2), previous=ev.states, source_health=health(failures=0, last_new=day(2)),
                  suspects=suspects("corroborated", source="epoch"))
    assert sorted((n.kind, n.transition) for n in ev.notifications) == [
        ("contamination_suspect", FIRING), ("source_failing", RESOLVED)]
    assert evaluate(now=day(2), previous=ev.states, source_health=health(0, day(2)),
                    suspects=suspects("corroborated", source="epoch")).notifications == []


def test_failing_source_inhibits_saturation_computed_from_its_scores():
    def hist_of(n: int) -> pd.DataFrame:      # the levels `analyze` stores after the first n weekly snapshots
        return history([.5, .8, .81][:n], every=7, sources=[["swebench", "epoch"]] * n)
    hist = hist_of(3)
    states = evaluate(now=day(1), previous=[], saturation=hist_of(1)).states
    states = evaluate(now=day(2), previous=states, saturation=hist_of(2)).states
    ev = evaluate(now=day(3), previous=states, saturation=hist, source_health=health(failures=3))
    assert [n.kind for n in ev.notifications] == ["source_failing"]
    (high,) = [s for s in ev.states if s.labels.get("level") == "high"]
    assert (high.state, high.muted_by) == (FIRING, "inhibited by source_failing{source=epoch}")
    other = evaluate(now=day(3), previous=states, saturation=hist, source_health=health(failures=3, source="bfcl"))
    assert sorted(n.kind for n in other.notifications) == ["saturation_bin_changed", "source_failing"]


# --- silences ----------------------------------------------------------------------------------------

def test_silence_mutes_delivery_but_the_alert_is_recorded_and_notified_after_expiry():
    silence = Silence(id=7, matchers={"kind": "contamination_suspect", "benchmark": "gpqa_diamond"},
                      starts_at=day(0), ends_at=day(5), author="ana", comment="GPQA v2 migration")
    ev = evaluate(now=day(1), previous=[], suspects=suspects("corroborated"), silences=[silence])
    assert ev.notifications == []
    state = ev.states[0]
    assert (state.state, state.notified, state.muted_by) == (FIRING, "muted", "silence 7")
    assert any(e.event == "AlertFiring" and e.detail["muted_by"] == "silence 7" for e in ev.events)
    ev = evaluate(now=day(4), previous=ev.states, suspects=suspects("corroborated"), silences=[silence])
    assert ev.notifications == []
    ev = evaluate(now=day(6), previous=ev.states, suspects=suspects("corroborated"), silences=[silence])
    assert [(n.transition, n.episode) for n in ev.notifications] == [(FIRING, day(1))]
    # expired early by hand: inactive from then on
    expired = Silence(id=8, matchers={"model": "m<!channel>"}, starts_at=day(0), ends_at=day(30),
                      expired_at=day(2))
    assert expired.is_active(day(1)) and not expired.is_active(day(2))


def test_resolution_while_silenced_is_not_sent_and_muted_firing_never_resolves_loudly():
    ev = evaluate(now=day(1), previous=[], suspects=suspects("corroborated"))
    assert len(ev.notifications) == 1
    silence = Silence(id=1, matchers={"model": "m<!channel>"}, starts_at=day(1), ends_at=day(9))
    ev = evaluate(now=day(2), previous=ev.states, suspects=suspects("not_flagged"), silences=[silence])
    assert ev.notifications == [] and ev.states[0].state == RESOLVED


# --- new_frontier (info, off by default) ---------------------------------------------------------------

def frontier(model, as_of):
    return pd.DataFrame([{"benchmark": "gpqa_diamond", "model": model, "score": 0.87, "stderr": 0.02,
                          "as_of": as_of}])


def test_new_frontier_is_off_by_default_and_notifies_takeovers_when_enabled():
    assert evaluate(now=day(1), previous=[], frontier=frontier("a", day(1))).states == []
    on = RuleSettings(enabled_info_kinds=frozenset({"new_frontier"}))
    ev = evaluate(now=day(1), previous=[], frontier=frontier("a", day(1)), settings=on)
    assert ev.notifications == []  # first observation
    ev = evaluate(now=day(2), previous=ev.states, frontier=frontier("b", day(2)), settings=on)
    assert [title(n) for n in ev.notifications] == ["gpqa_diamond: new frontier b (was a)"]
    with pytest.raises(ValueError, match="not info kinds"):   # checked against the rule registry
        evaluate(now=day(3), previous=[], settings=RuleSettings(enabled_info_kinds=frozenset({"source_failing"})))


# --- day one, new series, causes, wording (issue 19) ----------------------------------------------------

def test_the_baseline_counts_tables_not_a_tables_populations():
    # one table ranking models and systems holds two levels (two series): it is one table
    table = {"table_id": "swebench_verified:swebench"}
    sat = pd.concat([history([.95], population="models", **table), history([.9], population="systems", **table)])
    (notice,) = evaluate(now=day(1), previous=[], saturation=sat).notifications
    assert title(notice).startswith("benchwatch now watches 1 benchmark (1 table): "), title(notice)
    assert notice.annotations["series"] == 2


def test_day_one_sends_one_baseline_listing_levels_suspects_and_failing_sources():
    sat = pd.concat([history([.95], sources=[["swebench"]]),
                     history([.2], bench="gpqa_diamond", sources=[["epoch", "simple_evals"]]).assign(
                         benchmark_name="GPQA Diamond")])
    ev = evaluate(now=day(1), previous=[], saturation=sat, suspects=suspects("corroborated", source="lmarena"),
                  source_health=health(failures=3, source="bfcl"))
    (notice,) = ev.notifications                       # one message: suspects and failures are listed in it
    a = notice.annotations
    assert title(notice) == ("benchwatch now watches 2 benchmarks (2 tables) from 3 sources: 1 saturated, "
                             "1 contamination suspect, 1 source failing")
    assert (a["saturated"], a["failing_sources"]) == (["SWE-bench Verified (very high, S 0.95)"], ["bfcl"])
    assert a["suspects"] == ["m<!channel> on gpqa_diamond: contamination suspect (corroborated)"]
    assert a["also_firing"] == []
    # what was listed is recorded as announced: its resolution is sent later, its firing never again
    states = {s.kind: s for s in ev.states}
    assert states["contamination_suspect"].notified == "digest"
    ev2 = evaluate(now=day(2), previous=ev.states, saturation=sat, suspects=suspects("not_flagged", source="lmarena"),
                   source_health=health(failures=3, source="bfcl"))
    assert [(n.kind, n.transition) for n in ev2.notifications] == [("contamination_suspect", RESOLVED)]


def test_a_series_first_seen_after_day_one_is_one_now_watching_line_not_a_change():
    states = evaluate(now=day(1), previous=[], saturation=history([.5])).states
    both = pd.concat([history([.5, .52]), history([.97], bench="hle", start=1).assign(benchmark_name="HLE")])
    ev = evaluate(now=day(2), previous=states, saturation=both)
    assert [(n.kind, title(n)) for n in ev.notifications] == [("now_watching", "2026-01-02: now watching HLE")]
    from alerts.render import numbers
    assert numbers(ev.notifications[0]) == ["level very high, S 0.97 (its level, not a change)"]
    assert evaluate(now=day(3), previous=ev.states, saturation=both).notifications == []


def test_new_tables_of_one_release_are_one_now_watching_notice_named_by_the_release():
    """Tables first seen together are grouped by their source and release: the version their
    rows carry (livebench's 2026_01_08), not the day, names the notice."""
    states = evaluate(now=day(1), previous=[], saturation=history([.5])).states
    new = [history([.9], bench=b, start=1, source="livebench", table_version="2026_01_08",
                   table_id=f"{b}:livebench:2026_01_08").assign(benchmark_name=b.upper()) for b in ("math", "coding")]
    ev = evaluate(now=day(2), previous=states, saturation=pd.concat([history([.5, .52]), *new]))
    assert [(n.kind, title(n)) for n in ev.notifications] == [
        ("now_watching", "LiveBench 2026_01_08: now watching 2 tables")]


def test_upgrade_with_recorded_levels_sends_no_baseline():
    states = evaluate(now=day(1), previous=[], saturation=history([.5])).states
    ev = evaluate(now=day(2), previous=states, saturation=history([.5, .51]))
    assert ev.notifications == [] and [s.state for s in ev.states] == [FIRING]


def test_failure_causes_in_words():
    from alerts.rules import failure_cause
    assert failure_cause("connection failed: Failed to resolve 'x.org' ([Errno -3] Temporary failure in name "
                         "resolution)") == ("host names do not resolve (offline or DNS down)", True)
    assert failure_cause("connection failed: [Errno 111] Connection refused") == ("connection refused", True)
    assert failure_cause("connect timed out after 10 s") == ("timed out", True)
    assert failure_cause("HTTP 503 Service Unavailable") == ("HTTP 503", False)
    assert failure_cause("[swebench] results.json: malformed JSON") == ("[swebench] results.json: malformed JSON", False)
    assert failure_cause(None) == ("unknown error", False)


def outage_health(sources, failures=3, error="connection failed: Failed to resolve 'x' (name resolution)"):
    return pd.DataFrame({"source": sources, "consecutive_failures": failures, "last_new_snapshot_at": day(0),
                         "last_attempt_at": day(5), "last_error": error})


def test_a_network_outage_is_one_alert_that_inhibits_the_per_source_failures():
    sources = ["aider", "bfcl", "epoch", "lmarena"]
    states = evaluate(now=day(0), previous=[], saturation=history([.5])).states
    ev = evaluate(now=day(5), previous=states, source_health=outage_health(sources))
    assert [title(n) for n in ev.notifications] == [
        "network outage: all 4 sources failing (host names do not resolve (offline or DNS down))"]
    failing = by_kind(ev, "source_failing")
    assert len(failing) == 4 and {s.muted_by for s in failing} == {"inhibited by network_outage"}
    # back online: one "network back" notice, the muted per-source alerts resolve silently
    ev = evaluate(now=day(6), previous=ev.states, source_health=outage_health(sources, failures=0, error=None))
    assert [title(n) for n in ev.notifications] == ["network back: the 4 sources of the outage are reachable again"]
    # the same failures with an HTTP cause are no outage: per-source alerts (grouped by cause in the digest)
    ev = evaluate(now=day(5), previous=states, source_health=outage_health(sources, error="HTTP 503"))
    assert sorted(n.kind for n in ev.notifications) == ["source_failing"] * 4
    # too few sources is no outage either
    ev = evaluate(now=day(5), previous=states, source_health=outage_health(sources[:2]))
    assert sorted(n.kind for n in ev.notifications) == ["source_failing"] * 2


def test_wording_comes_from_one_table():
    from alerts.text import WORDING, level_meaning, level_note, word_for
    assert [word_for("p_hold", p) for p in (0.95, 0.9, 0.89, 0.7, 0.69, 0.54, None)] == [
        "very likely", "very likely", "likely", "likely", "uncertain", "uncertain", "likely"]
    assert [word_for("q", q) for q in (0.0005, 0.009, 0.03, 0.2)] == [
        "strong evidence", "evidence", "weak evidence", "no evidence after false-discovery control"]
    assert {m for m, _, _ in WORDING} == {"p_hold", "q"}
    # "statistically indistinguishable" only at "very likely"
    for p in (0.54, 0.69, 0.75, 0.89, None):
        assert "statistically indistinguishable" not in level_meaning("high", p)
    assert "statistically indistinguishable" in level_meaning("very high", 0.93)
    assert level_meaning("high", 0.54).startswith("uncertain: another re-evaluation")
    assert "P(" not in level_meaning("high", 0.54)        # the message shows P(level holds) once, in its numbers
    assert level_note(0.34, "moderate", "low", "moderate", day(2)) == (
        "S 0.34 is in the moderate range since 2026-01-03; the level stays low until 2026-01-10 (7 days), "
        "unless a newer snapshot undoes the move")
    assert level_note(0.34, "moderate", "low").startswith("S 0.34 is in the moderate range, but not far enough past")
    assert level_note(0.5, "moderate", "moderate") == ""


def test_a_level_that_differs_from_the_bin_says_why_in_words():
    states = evaluate(now=day(1), previous=[], saturation=history([.2, .2])).states
    ev = evaluate(now=day(2), previous=states, saturation=history([.2, .2, .36]))
    (low,) = [s for s in ev.states if s.labels["level"] == "low"]
    assert low.annotations["level_note"] == (
        "S 0.36 is in the moderate range since 2026-01-03; the level stays low until 2026-01-10 (7 days), "
        "unless a newer snapshot undoes the move")
    from alerts.render import state_text
    assert state_text(low.kind, low.state, low.labels, low.annotations) == (
        "level", "SWE-bench Verified: level low since 2026-01-01 (S 0.36 is in the moderate range since 2026-01-03; "
                 "the level stays low until 2026-01-10 (7 days), unless a newer snapshot undoes the move)")
    # 0.34 does not clear the edge 0.3 by the margin: no move starts, and the note does not promise one
    ev = evaluate(now=day(2), previous=states, saturation=history([.2, .2, .34]))
    (low,) = [s for s in ev.states if s.labels["level"] == "low"]
    assert "until a second snapshot" not in low.annotations["level_note"]
    assert [s.state for s in ev.states] == [FIRING]


def test_a_post_cutoff_slice_level_is_stored_not_alerted():
    """Only ANNOUNCED_SCOPES ('all') notify: a post-cutoff slice's S also moves when model dates move,
    recomputed back in time, so its change could name no change of the table (the replay of the real
    history: a cutoff table's new dates moved ARC-AGI-2's post-cutoff level a year after its data)."""
    from alerts.config import ANNOUNCED_SCOPES
    assert ANNOUNCED_SCOPES == ("all",)
    both = pd.concat([history([.2, .95]), history([.2, .95], scope="post_cutoff")], ignore_index=True)
    states = evaluate(now=day(1), previous=[], saturation=history([.2])).states
    ev = evaluate(now=day(2), previous=states, saturation=both)
    moved = [n for n in ev.notifications if n.kind == "saturation_bin_changed"]
    assert [n.labels["scope"] for n in moved] == ["all"]
    assert not [s for s in ev.states if s.labels.get("scope") == "post_cutoff"]

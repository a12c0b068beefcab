"""A3 calibrated per item set (issue 50; analysis/contamination/set_calibration.py): the key of a
set's placebo inputs, the same verdict from the same inputs, a suspicion judged by the calibration
its own evidence was judged with, and one set's failing calibration never blocking another's flag."""

from __future__ import annotations

from datetime import datetime, timezone

import pandas as pd
import pytest

from analysis.contamination import Thresholds, finalize
from analysis.contamination.set_calibration import SET_CALIBRATION_COLUMNS, item_set_calibrations
from analysis.contamination.suspicions import advance_suspicions, by_key
from test_contamination import _prev_rows, _t, synth_items

NOW = pd.Timestamp("2024-06-02")


def _items(seed: int, source: str = "src", bench: str = "b", **kw) -> tuple[pd.DataFrame, pd.DataFrame]:
    items, cut = synth_items(seed, **kw)
    return items.assign(source=source, benchmark=bench), cut


def test_a_set_calibration_is_keyed_by_its_placebo_inputs_and_the_same_inputs_give_the_same_verdict():
    items, cut = _items(5, n_items=200, boost={0: 1.0})
    keys, table = item_set_calibrations(items, cut, now=NOW, trials=40, seed=0)
    assert list(table.columns) == SET_CALIBRATION_COLUMNS and len(table) == 1
    row = table.iloc[0]
    assert (row["source"], row["benchmark"], row["input_key"]) == ("src", "b", keys[("src", "b")])
    assert row["units"] == 8 and row["tests"] > 0 and row["trials"] == 40
    # computed again from the same inputs (rows in another order): the same key, draws and figures
    again_keys, again = item_set_calibrations(items.sample(frac=1.0, random_state=1), cut, now=NOW, trials=40, seed=0)
    assert again_keys == keys
    pd.testing.assert_frame_equal(again, table)
    # a stored key computes nothing
    _, none = item_set_calibrations(items, cut, now=NOW, trials=40, seed=0, known={("A3", "src", "b", keys[("src", "b")])})
    assert none.empty
    # a tested model's new results are not the placebo's inputs (it reads the clean models only): same key
    moved = items.copy()
    moved.loc[moved["model"] == "test0", "score"] = 1.0 - moved.loc[moved["model"] == "test0", "score"]
    assert item_set_calibrations(moved, cut, now=NOW, trials=40, seed=0)[0] == keys
    # one clean model's changed result, another seed or another trial count: another key
    changed = items.copy()
    changed.loc[(changed["model"] == "clean3") & (changed["item_id"] == "i7"), "score"] += 0.1
    assert item_set_calibrations(changed, cut, now=NOW, trials=40, seed=0)[0] != keys
    assert item_set_calibrations(items, cut, now=NOW, trials=40, seed=1)[0] != keys
    assert item_set_calibrations(items, cut, now=NOW, trials=41, seed=0)[0] != keys


def test_each_item_set_is_calibrated_on_its_own_data_and_a_set_without_placebo_says_so():
    a, cut_a = _items(5, source="s1", bench="one", n_items=200)
    b, cut_b = _items(6, source="s2", bench="two", n_items=200, n_clean=3)      # 3 clean models: no placebo
    items = pd.concat([a, b], ignore_index=True)
    cut = pd.concat([cut_a, cut_b]).drop_duplicates("model")
    keys, table = item_set_calibrations(items, cut, now=NOW, trials=30, seed=0)
    t = table.set_index("benchmark")
    assert set(keys) == {("s1", "one"), ("s2", "two")}
    assert t.at["one", "tests"] > 0 and t.at["one", "ok"] in (True, False)
    assert t.at["two", "tests"] == 0 and t.at["two", "ok"] is None and t.at["two", "units"] == 3
    # set one alone gives set one's figures: the other set's models and items do not enter them
    _, alone = item_set_calibrations(a, cut_a, now=NOW, trials=30, seed=0)
    pd.testing.assert_frame_equal(alone.reset_index(drop=True), table[table["benchmark"] == "one"].reset_index(drop=True))


def test_a_suspicion_keeps_the_calibration_its_evidence_was_judged_with_until_new_evidence():
    """The key moves with the suspicion's own evidence only: an analysis that recalibrated its set on
    other inputs (new items of other models) leaves it judged as before; new evidence takes the new key."""
    th = Thresholds()
    dates = {i: pd.Timestamp(f"2024-03-{10 + i}") for i in range(1, 6)}

    def t(snap, h):
        x = _t("x", "A3", "lcb", snaps=(snap,), p=1e-4)
        x.evidence["data_hash"] = h
        return x

    def run(tests, previous, states, snap, key):
        res = finalize(tests, previous, th, suspicions=None if states is None else by_key(states))
        return res, advance_suspicions(res, states, run_id=f"r{snap}", run_at=dates[snap],
                                       current_data={("lcb", "b"): {snap}}, snapshot_dates=dates,
                                       calibration_keys={("A3", "lcb", "b"): key})

    r1, s1 = run([t(1, "A")], None, None, 1, "K1")
    assert s1.set_index("model").at["x", "calibration_key"] == "K1"
    r2, s2 = run([t(2, "A")], _prev_rows(r1), s1, 2, "K2")            # same evidence, set recalibrated
    assert s2.set_index("model").at["x", "calibration_key"] == "K1"
    r3, s3 = run([t(3, "B")], _prev_rows(r2, "r2"), s2, 3, "K3")      # new evidence: judged anew
    assert s3.set_index("model").at["x", "calibration_key"] == "K3"
    # a suspicion stored before any key takes the current one (it was never judged)
    _, s4 = run([t(4, "B")], _prev_rows(r3, "r3"), s3.assign(calibration_key=None), 4, "K4")
    assert s4.set_index("model").at["x", "calibration_key"] == "K4"


def _suspicion(model: str, bench: str, source: str, key: str | None, q: float = 0.001) -> dict:
    return {"model": model, "benchmark": bench, "source": source, "signal": "A3", "detail": "", "state": "confirmed",
            "confirmed_by": "strong_q", "effect": 0.2, "se": 0.03, "ci_low": 0.14, "ci_high": 0.26, "p_value": q / 5,
            "q_value": q, "evidence": {"n_pre": 80, "n_post": 90}, "distinct_data": 1, "snapshot_ids": [1],
            "data_as_of": pd.Timestamp("2024-06-01"), "calibration_key": key}


def _set_row(source: str, bench: str, key: str, ok: bool | None, p05: float = 0.04) -> dict:
    lo = p05 - 0.01
    return {"signal": "A3", "source": source, "benchmark": bench, "input_key": key,
            "calibrated_at": pd.Timestamp("2024-06-02"), "trials": 200, "tests": 1000 if ok is not None else 0,
            "units": 6, "p01": 0.008, "p01_lo": 0.004, "p01_hi": 0.012, "p05": p05, "p05_lo": lo, "p05_hi": p05 + 0.01,
            "fw_bh": 0.05, "fw_bh_lo": 0.03, "fw_bh_hi": 0.08, "ok": ok}


def test_a_failing_calibration_of_one_item_set_does_not_block_another_sets_confirmed_flag():
    from alerts.engine import evaluate
    from storage.rule_inputs import with_calibration
    sus = pd.DataFrame([_suspicion("m1", "lcb", "livecodebench", "K1"), _suspicion("m2", "repair", "livecodebench", "K2"),
                        _suspicion("m3", "aime", "matharena", "K3"), _suspicion("m4", "other", "x", None)])
    sets = pd.DataFrame([_set_row("livecodebench", "lcb", "K1", True),
                         _set_row("livecodebench", "lcb", "K0", False, p05=0.2),       # an older key: not m1's
                         _set_row("livecodebench", "repair", "K2", False, p05=0.09),
                         _set_row("matharena", "aime", "K3", None)])
    # a global calibration that fails A3 as a whole no longer judges A3's flags
    glob = pd.DataFrame([{**_set_row("", "", "", False, p05=0.3), "signal": "A3"}])
    judged = with_calibration(sus, glob, sets).set_index("model")
    assert judged.at["m1", "calibration_ok"] is True and judged.at["m2", "calibration_ok"] is False
    assert judged.at["m3", "calibration_ok"] is None and judged.at["m4", "calibration_ok"] is None
    ev = evaluate(now=datetime(2024, 6, 2, 1, tzinfo=timezone.utc), previous=[], suspects=judged.reset_index())
    assert [n.labels["model"] for n in ev.notifications if n.transition == "firing"] == ["m1"]
    why = {s.labels["model"]: s.annotations for s in ev.states}
    assert why["m1"]["status"] == "confirmed"
    assert why["m2"]["status"] == "unconfirmed"
    assert why["m2"]["unconfirmed_because"][0].startswith(
        "A3 is miscalibrated on its item set livecodebench/repair (its placebo calibration of 2024-06-02 on 6 clean "
        "models: placebo P(p < 0.01) 0.8% [0.4%, 1.2%], P(p < 0.05) 9.0% [8.0%, 10.0%]")
    assert why["m3"]["unconfirmed_because"][0].startswith(
        "A3 is not calibrated on this data: its item set matharena/aime allows no placebo test")
    assert why["m4"]["unconfirmed_because"][0].startswith(
        "A3 is not calibrated on this data: no calibration of its item set x/other on record")


@pytest.mark.parametrize("ok", [True, False])
def test_other_signals_are_judged_by_the_newest_calibrate_run(ok):
    from storage.rule_inputs import with_calibration
    sus = pd.DataFrame([{**_suspicion("m", "b", "s", None), "signal": "A2"}])
    glob = pd.DataFrame([{**_set_row("", "", "", ok), "signal": "A2"}])
    judged = with_calibration(sus, glob, pd.DataFrame(columns=["signal", "source", "benchmark", "input_key"]))
    assert judged.at[0, "calibration_ok"] == ok and judged.at[0, "calibration"]["item_set"] is None

"""The plug-in recipes of the README ("Add an alert rule", "Add a statistic"), proved on toys.

Each toy is registered the documented way (its declaration plus one line in the registry tuple,
here a monkeypatched tuple) and is then evaluated, rendered, BH-controlled and calibrated by the
unchanged engine code.
"""

from __future__ import annotations

import ast
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import alerts.rules as alert_registry
import analysis.contamination as signal_registry
from alerts import config
from alerts.engine import evaluate
from alerts.records import FIRING, RESOLVED
from alerts.render import render_digest, render_plain
from alerts.rules.base import AlertKind, AlertRule, RuleContext, RuleOutput, make_labels
from analysis.contamination import PLACEBO_COLUMNS, Signal, SignalInputs, Thresholds, calibrate, run_signals, \
    signal_test

REPO = Path(__file__).resolve().parents[2]
T0 = datetime(2026, 3, 1, tzinfo=timezone.utc)
NO_CUTOFFS = pd.DataFrame({"model": pd.Series(dtype=str), "c_lo": pd.Series(dtype="datetime64[us]"),
                           "c_hi": pd.Series(dtype="datetime64[us]")})


# --- a toy alert rule: a benchmark whose row count fell below a floor --------------------------------

TOY_KIND = "toy_rows_low"


def _toy_conditions(frame: pd.DataFrame, ctx: RuleContext) -> RuleOutput:
    low = frame[frame["rows"] < 10]
    conditions = [alert_registry.Condition(
        labels=make_labels(TOY_KIND, benchmark=row["benchmark"]),
        annotations={"rows": int(row["rows"]), "why": "too few rows to rank", "sql": "SELECT 1"},
        data_as_of=ctx.now) for row in low.to_dict("records")]
    return RuleOutput(conditions, {(TOY_KIND, str(b)) for b in frame["benchmark"]})


def _toy_headline(transition: str, labels: Mapping[str, str], a: Mapping[str, Any]) -> str:
    return f"{labels['benchmark']}: rows back to normal" if transition == RESOLVED \
        else f"{labels['benchmark']}: only {a.get('rows')} rows"


TOY_RULE = AlertRule(name="toy_rows", input="toy_rows", conditions=_toy_conditions,
                     kinds=(AlertKind(TOY_KIND, _toy_headline, lambda labels, a: [f"rows {a.get('rows')} < 10"],
                                      scope_keys=("benchmark",)),))


@pytest.fixture
def toy_rule(monkeypatch):
    monkeypatch.setattr(alert_registry, "RULES", alert_registry.RULES + (TOY_RULE,))
    return TOY_RULE


def test_a_frame_no_rule_reads_is_refused():
    with pytest.raises(TypeError, match="toy_rows"):
        evaluate(now=T0, previous=[], toy_rows=pd.DataFrame({"benchmark": ["b"], "rows": [3]}))


def test_toy_rule_is_evaluated_rendered_and_configured_without_engine_changes(toy_rule):
    assert TOY_KIND in alert_registry.all_kinds() and TOY_KIND not in alert_registry.info_kinds()
    frame = pd.DataFrame({"benchmark": ["tiny", "big"], "rows": [3, 500]})
    first = evaluate(now=T0, previous=[], toy_rows=frame)
    [state] = first.states
    assert state.labels["kind"] == TOY_KIND and state.labels["benchmark"] == "tiny" and state.state == FIRING
    [note] = first.notifications
    plain = render_plain(first.notifications, now=T0)
    assert "FIRING   tiny: only 3 rows" in plain and "rows 3 < 10" in plain and "why: too few rows" in plain
    [message] = render_digest(first.notifications, now=T0)
    assert any("tiny: only 3 rows" in b.get("text", {}).get("text", "") for b in message.blocks)
    # digest order follows the registry: the toy, registered last, comes after a source alert
    health = pd.DataFrame({"source": ["epoch"], "consecutive_failures": [5], "last_new_snapshot_at": [T0]})
    both = evaluate(now=T0, previous=[], toy_rows=frame, source_health=health)
    assert [line.split()[1] for line in render_plain(both.notifications, now=T0).splitlines()[1:]
            if line.startswith("FIRING")] == ["epoch:", "tiny:"]

    # no data keeps the state; data without the condition resolves it (scope_keys: per benchmark)
    later = T0 + timedelta(days=1)
    kept = evaluate(now=later, previous=first.states)
    assert [s.state for s in kept.states] == [FIRING] and not kept.notifications
    other = evaluate(now=later, previous=first.states, toy_rows=pd.DataFrame({"benchmark": ["big"], "rows": [9]}))
    assert {s.labels["benchmark"]: s.state for s in other.states} == {"tiny": FIRING, "big": FIRING}
    fixed = evaluate(now=later, previous=first.states, toy_rows=pd.DataFrame({"benchmark": ["tiny"], "rows": [40]}))
    assert [s.state for s in fixed.states] == [RESOLVED]
    assert "RESOLVED tiny: rows back to normal" in render_plain(fixed.notifications, now=later)
    assert note.kind == TOY_KIND


def test_engine_renderer_and_config_name_no_kind():
    """The recipe holds only if the shared code never names a kind: no kind string in them."""
    kinds = set(alert_registry.all_kinds())
    for path in ("alerts/engine.py", "alerts/render.py", "alerts/config.py", "jobs/alerts.py"):
        tree = ast.parse((REPO / path).read_text())
        named = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value in kinds}
        assert not named, f"{path} names kind(s) {named}"


def test_every_registered_kind_renders_a_headline():
    for name, spec in alert_registry.kinds().items():
        labels = {key: "x" for key in config.LABEL_KEYS} | {"kind": name, "level": "high", "scope": "all"}
        assert spec.headline(FIRING, labels, {}) and spec.headline(RESOLVED, labels, {})


# --- a toy statistic: score above one half, normal test with a fixed SE ------------------------------

def _toy_tests(inputs: SignalInputs, th: Thresholds) -> list:
    if inputs.scores is None:
        return []
    out = []
    for row in inputs.scores.to_dict("records"):
        effect, se = row["score"] - 0.5, 0.05
        res = {"effect": effect, "se": se, "p_value": float(stats.norm.sf(effect / se)),
               "ci_low": effect - 1.96 * se, "ci_high": effect + 1.96 * se}
        out.append(signal_test("T1", row["model"], row["benchmark"], row["source"], res))
    return out


def _toy_placebo(inputs: SignalInputs, th: Thresholds, trials: int, power: float = 1.0) -> pd.DataFrame:
    n = 20
    p = inputs.rng.uniform(size=(trials, n)) ** power      # power 1: uniform under the null
    return pd.DataFrame({"trial": np.repeat(np.arange(trials), n), "signal": "T1", "source": "s",
                         "benchmark": "b", "model": np.tile([f"m{i}" for i in range(n)], trials),
                         "effect": 0.1, "se": 0.01, "p_value": p.ravel(), "gate": True}, columns=PLACEBO_COLUMNS)


TOY_SIGNAL = Signal(name="T1", tests=_toy_tests, placebo=_toy_placebo)


def _scores() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    return pd.DataFrame({"source": "s", "benchmark": "b", "model": [f"m{i}" for i in range(30)],
                         "score": np.clip(rng.normal(0.5, 0.06, 30), 0, 1).round(3)})


def _bh_by_hand(p: np.ndarray) -> np.ndarray:
    """q_(i) = min over j >= i of p_(j) m / j (Benjamini–Hochberg), by the definition."""
    m = len(p)
    order = np.argsort(p)
    q_sorted = [min(p[order[j]] * m / (j + 1) for j in range(i, m)) for i in range(m)]
    q = np.empty(m)
    q[order] = np.minimum(q_sorted, 1.0)
    return q


def test_toy_signal_runs_in_its_own_bh_family(monkeypatch):
    monkeypatch.setattr(signal_registry, "SIGNALS", signal_registry.SIGNALS + (TOY_SIGNAL,))
    scores = _scores()
    out = run_signals(scores, None, NO_CUTOFFS, None, None, rng=np.random.default_rng(0),
                      now=pd.Timestamp("2026-01-01"))
    assert set(out["signal"]) == {"T1"} and len(out) == len(scores)
    np.testing.assert_allclose(out["q_value"].to_numpy(), _bh_by_hand(out["p_value"].to_numpy()), rtol=1e-12)
    flagged = out[out["flagged"]]
    assert (flagged["q_value"] <= Thresholds().fdr_q).all() and (flagged["effect"] >= Thresholds().min_effect).all()
    assert (out.loc[~out["flagged"], "status"] == "not_flagged").all()


@pytest.mark.parametrize("power, calibrated", [(1.0, True), (3.0, False)])
def test_toy_signal_is_calibrated_by_the_placebo_loop(monkeypatch, power, calibrated):
    """A uniform placebo passes; a placebo whose p-values pile up near 0 (p = U³) must fail."""
    toy = Signal(name="T1", tests=_toy_tests, placebo=lambda i, th, t: _toy_placebo(i, th, t, power))
    monkeypatch.setattr(signal_registry, "SIGNALS", signal_registry.SIGNALS + (toy,))
    summary = calibrate(_scores(), None, NO_CUTOFFS, None, rng=np.random.default_rng(1),
                        now=pd.Timestamp("2026-01-01"), trials=300).set_index("signal")
    assert list(summary.index) == ["A1", "A2", "A3", "T1"]
    row = summary.loc["T1"]
    assert row["tests"] == 300 * 20
    assert row["ok"] is calibrated
    if calibrated:
        assert row["p05_lo"] <= 0.05 <= row["p05_hi"]

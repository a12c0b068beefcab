"""notify end to end: a temporary DuckDB, the real slack_sdk, the fake Slack (tests/fake_slack.py).

The rule inputs are written by tiny helpers below, as the analysis stores them: `saturation`
rows (migration 002), contamination runs and signals (migration 003, read through the
`suspects` view), fetch attempts through storage.responses.record_fetches, and snapshot rows.
"""

from __future__ import annotations

import json
import re
import logging
from datetime import datetime, timedelta, timezone

import duckdb
import pandas as pd

from analysis.constants import SATURATION_BINS
from analysis.saturation import bin_index
from jobs.relations.levels import run_levels
import pytest

from alerts.slack import SlackWebhookNotifier
from fake_slack import Reply
from helpers import time_bound
from cli import main as cli
from jobs.alerts import NOTIFY_CLAIM_LEASE, run_notify
from storage import alerts as store
from storage import rule_inputs
from storage import db
from storage.contamination import store_calibration, store_set_calibrations
from storage.responses import record_fetches
from storage.store import open_store

# Just ahead of the wall clock, so silences the CLI starts "now" cover the test's evaluations.
T0 = (datetime.now(timezone.utc) + timedelta(days=1)).replace(minute=0, second=0, microsecond=0)


def day(i: float) -> datetime:
    return T0 + timedelta(days=i)


@pytest.fixture(autouse=True)
def _restore_log_level():
    """cli.main sets the `benchwatch` logger level from -v; keep that out of other tests."""
    logger = logging.getLogger("benchwatch")
    level = logger.level
    yield
    logger.setLevel(level)


# Far above the longest test here on a loaded machine, far below "hung": a test waiting on a
# Slack reply or a request that never comes fails with this bound instead of stopping the run.
NOTIFY_TEST_BOUND_SECONDS = 120


@pytest.fixture(autouse=True)
def _bounded(request):
    with time_bound(NOTIFY_TEST_BOUND_SECONDS, request.node.name):
        yield


@pytest.fixture
def db_path(synced_db):
    return str(synced_db)          # migrated, registry loaded: as after any job


def add_saturation(path, as_of, s_index, bench="swebench_verified", scope="all", source="swebench", now=None):
    row = pd.DataFrame([{"table_id": f"{bench}:{source}", "benchmark": bench, "source": source,
                         "sources": [source], "as_of": as_of, "scope": scope, "k": 5, "alpha": 0.5, "z": 1.96,
                         "metric": "proportion", "n_items": 500, "n_models": 30, "s1": 0.8, "sk": 0.78,
                         "se_delta": 0.0213, "r_norm": 0.5, "s_index": s_index, "run_at": as_of}])
    row["bin"] = SATURATION_BINS[int(bin_index(s_index))]
    with db.connect(path) as con:
        db.insert_frame(con, "saturation", row)
        run_levels(con, now or as_of)              # as `analyze` does after storing the rows


def analyze_levels(path, now):
    """A new day without new data: `analyze` recomputes the levels as of `now` (jobs/analyze.py)."""
    with db.connect(path) as con:
        run_levels(con, now)


_runs = iter(range(1, 10_000))


def add_suspect(path, status, model="gpt-x", bench="gpqa_diamond", source="epoch"):
    """A new contamination run (migration 003) whose one test has this status, and the suspicion
    state (migration 022) the analysis would store for it (resolved on the run's new snapshot)."""
    n = next(_runs)
    run = pd.DataFrame([{"run_id": f"run{n}", "run_at": T0 + timedelta(seconds=n), "as_of": T0,
                         "snapshot_ids": [n], "seed": 0, "parameters": "{}", "n_tests": 1,
                         "n_flagged": int(status != "not_flagged")}])
    signal = pd.DataFrame([{"run_id": f"run{n}", "model": model, "benchmark": bench, "source": source,
                            "signal": "A3", "detail": "", "effect": 0.072, "se": 0.021, "ci_low": 0.031,
                            "ci_high": 0.113, "p_value": 0.001, "q_value": 0.02,
                            "flagged": status != "not_flagged", "status": status,
                            "evidence": json.dumps({"n_ref": 12})}])
    state = {"suspect": "pending", "persisted": "confirmed", "corroborated": "confirmed"}.get(status, "resolved")
    suspicion = pd.DataFrame([{
        "model": model, "benchmark": bench, "source": source, "signal": "A3", "detail": "", "state": state,
        "confirmed_by": {"persisted": "distinct_data", "corroborated": "corroborated"}.get(status),
        "first_flagged_at": T0, "confirmed_at": None, "updated_at": T0 + timedelta(seconds=n), "run_id": f"run{n}",
        "distinct_data": 2 if status == "persisted" else 1, "snapshot_ids": [n], "data_as_of": T0,
        "effect": 0.072, "se": 0.021, "ci_low": 0.031, "ci_high": 0.113, "p_value": 0.001, "q_value": 0.02,
        "evidence": json.dumps({"n_ref": 12}), "resolved_at": T0 if state == "resolved" else None,
        "resolved_snapshot_ids": [n] if state == "resolved" else None,
        "resolved_data_as_of": T0 if state == "resolved" else None,
        "resolution": json.dumps({"why": "not flagged on the new data"}) if state == "resolved" else None,
        "calibration_key": "K-test"}])
    with db.connect(path) as con:
        db.insert_frame(con, "contamination_runs", run)
        db.insert_frame(con, "contamination_signals", signal)
        con.execute("DELETE FROM contamination_suspicions WHERE model = ? AND benchmark = ?", [model, bench])
        db.insert_frame(con, "contamination_suspicions", suspicion)
        # A3 passed its placebo calibration on this data (else its flags are never confirmed: issue 50)
        store_calibration(con, pd.DataFrame([{"signal": "A3", "trials": 200, "tests": 1200, "p01": 0.01,
                                              "p01_lo": 0.005, "p01_hi": 0.015, "p05": 0.05, "p05_lo": 0.04,
                                              "p05_hi": 0.06, "fw_bh": 0.05, "fw_bh_lo": 0.03, "fw_bh_hi": 0.08,
                                              "fw_rule": 0.05, "fw_rule_lo": 0.03, "fw_rule_hi": 0.08, "ok": True}]),
                          calibrated_at=T0, seed=0)
        # ... and on this suspicion's own item set, under the key it was judged with (A3 is judged per set)
        store_set_calibrations(con, pd.DataFrame([{
            "signal": "A3", "source": source, "benchmark": bench, "input_key": "K-test", "as_of": T0, "trials": 200,
            "seed": 0, "tests": 1200, "units": 6, "p01": 0.01, "p01_lo": 0.005, "p01_hi": 0.015, "p05": 0.05,
            "p05_lo": 0.04, "p05_hi": 0.06, "fw_bh": 0.05, "fw_bh_lo": 0.03, "fw_bh_hi": 0.08, "fw_rule": 0.05,
            "fw_rule_lo": 0.03, "fw_rule_hi": 0.08, "ok": True}]), calibrated_at=T0)


def add_fetch_runs(path, source, statuses, start):
    rows = pd.DataFrame([{"run_id": f"run-{source}-{start:%j%H%M}-{i}", "source": source,
                          "url": f"https://example.org/{source}", "started_at": start + timedelta(hours=i),
                          "finished_at": start + timedelta(hours=i, seconds=2), "status": status,
                          "error": "HTTP 503 Service Unavailable" if status == "error" else None}
                         for i, status in enumerate(statuses)])
    with db.connect(path) as con:
        record_fetches(con, rows)


def add_snapshot(path, source, first_seen):
    with db.connect(path) as con:
        con.execute("""INSERT INTO snapshots (source, sha256, blob_sha256, file_names, observed_at, first_seen,
                           last_seen, origin, parser_version, n_scores, n_items, n_models, n_rejects)
                       VALUES (?, ?, [], [], ?, ?, ?, 'fetch', 1, 0, 0, 0, 0)""",
                    [source, f"sha-{source}-{first_seen:%s}", first_seen, first_seen, first_seen])


def sections(fake) -> list[str]:
    return [b["text"]["text"] for m in fake.messages() for b in m["blocks"] if b["type"] == "section"]


def outbox(path) -> pd.DataFrame:
    with db.connect(path, read_only=True) as con:
        return con.execute("""SELECT id, kind, transition, delivered_at, receiver, attempts, last_error,
                                     payload->'labels'->>'level' AS level
                              FROM notifications ORDER BY id""").df()


@pytest.fixture
def slack(fake_slack):
    return SlackWebhookNotifier(fake_slack.webhook_url)


def test_bin_crossing_sends_exactly_one_message_once_the_move_has_stood(db_path, fake_slack, slack):
    add_saturation(db_path, day(0), 0.50)                     # moderate: first observation, the baseline only
    first = run_notify(open_store(db_path), now=day(0.1), notifier=slack)
    assert first.sent_titles == ["benchwatch now watches 1 benchmark (1 table) from 1 source: 0 saturated, "
                                 "0 contamination suspects, 0 sources failing"]
    assert run_notify(open_store(db_path), now=day(0.2), notifier=slack).to_deliver == 0
    add_saturation(db_path, day(1), 0.80)                     # proposes high: pending
    summary = run_notify(open_store(db_path), now=day(1.1), notifier=slack)
    assert (summary.pending, summary.to_deliver) == (1, 0)
    add_saturation(db_path, day(2), 0.80)                     # the same table again: no evidence, still pending
    summary = run_notify(open_store(db_path), now=day(2.1), notifier=slack)
    assert (summary.pending, summary.to_deliver) == (1, 0)
    due = day(1).replace(hour=0) + timedelta(days=7)         # LEVEL_DWELL_DAYS calendar days after the move
    analyze_levels(db_path, due - timedelta(minutes=1))       # not yet
    assert run_notify(open_store(db_path), now=due - timedelta(seconds=30), notifier=slack).to_deliver == 0
    analyze_levels(db_path, due)                              # no new snapshot (a frozen source): a week stood
    summary = run_notify(open_store(db_path), now=day(8.1), notifier=slack)
    assert (summary.enqueued, summary.delivered, summary.ok) == (1, 1, True)
    assert str(summary).splitlines()[1] == "  - SWE-bench Verified (SWE-bench): level moderate → high"
    for when in (day(8.1), day(8.2), day(9)):                 # re-running sends nothing
        assert run_notify(open_store(db_path), now=when, notifier=slack).to_deliver == 0
    assert len(fake_slack.requests) == 2                      # the baseline, then the change
    baseline_text, text = sections(fake_slack)
    assert baseline_text.startswith(":eyes: *benchwatch now watches 1 benchmark (1 table) from 1 source")
    assert text.startswith(":rotating_light: *SWE-bench Verified (SWE-bench): level moderate → high*\nS_index 0.80")
    assert f"the level moved on {due:%Y-%m-%d}: S stayed past the edge for 7 days after {day(1):%Y-%m-%d}" in text
    box = outbox(db_path)
    assert box[["kind", "transition", "receiver", "attempts"]].values.tolist() == [
        ["baseline", "firing", "slack-webhook", 0], ["saturation_bin_changed", "firing", "slack-webhook", 0]]
    assert box["level"].tolist()[1] == "high"
    assert box["delivered_at"].iloc[1] == pd.Timestamp(day(8.1))
    with db.connect(db_path, read_only=True) as con:   # the alert's level is the stored one, since the week stood
        assert con.execute("SELECT level, level_since FROM saturation_latest").fetchone() == ("high", due)
    with db.connect(db_path, read_only=True) as con:
        moves = con.execute("""SELECT detail->>'from', detail->>'to' FROM alert_events
                               WHERE event = 'SaturationBinChanged'""").fetchall()
    assert moves == [("moderate", "high")]


@pytest.mark.slow   # several full runs against a fake Slack
def test_slack_outage_over_several_runs_loses_nothing_and_delivers_each_once(db_path, fake_slack, slack):
    fake_slack.outage(503)
    add_saturation(db_path, day(0), 0.50)
    add_snapshot(db_path, "bfcl", day(0))
    add_fetch_runs(db_path, "bfcl", ["ok"], day(0))
    run_notify(open_store(db_path), now=day(0.5), notifier=slack)
    add_suspect(db_path, "corroborated")                      # fires at once
    first = run_notify(open_store(db_path), now=day(1), notifier=slack)
    assert (first.enqueued, first.to_deliver, first.delivered, first.ok) == (1, 2, 0, False)   # + the baseline
    assert first.error == "HTTP 503: internal_error"
    add_saturation(db_path, day(1), 0.80)
    add_saturation(db_path, day(2), 0.81, now=day(8))         # analyzed a week after the move: committed
    second = run_notify(open_store(db_path), now=day(2.5), notifier=slack)
    assert (second.enqueued, second.to_deliver, second.delivered) == (1, 3, 0)
    add_fetch_runs(db_path, "bfcl", ["error", "error", "error"], day(3))   # 3 failed runs in a row
    third = run_notify(open_store(db_path), now=day(3.5), notifier=slack)
    assert (third.enqueued, third.to_deliver, third.delivered) == (1, 4, 0)
    assert fake_slack.messages() == []
    box = outbox(db_path)
    assert box["attempts"].tolist() == [4, 3, 2, 1] and box["delivered_at"].isna().all()
    assert set(box["last_error"]) == {"HTTP 503: internal_error"}

    fake_slack.recover()
    recovered = run_notify(open_store(db_path), now=day(4), notifier=slack)
    assert (recovered.to_deliver, recovered.delivered, recovered.ok) == (4, 4, True)
    assert run_notify(open_store(db_path), now=day(4.5), notifier=slack).to_deliver == 0
    assert len(fake_slack.messages()) == 1                    # one digest
    heads = [t.split("\n")[0] for t in sections(fake_slack)]
    assert heads == [":eyes: *benchwatch now watches 1 benchmark (1 table) from 1 source: 0 saturated, "
                     "0 contamination suspects, 0 sources failing*",
                     ":rotating_light: *bfcl: source failing (3 runs in a row)*",
                     ":rotating_light: *SWE-bench Verified (SWE-bench): level moderate → high*",
                     ":rotating_light: *gpt-x on GPQA Diamond: contamination suspect (corroborated)*"]
    box = outbox(db_path)
    assert box["delivered_at"].tolist() == [pd.Timestamp(day(4))] * 4
    assert box["receiver"].tolist() == ["slack-webhook"] * 4


def test_resolved_notice_is_sent(db_path, fake_slack, slack):
    add_suspect(db_path, "persisted")
    run_notify(open_store(db_path), now=day(1), notifier=slack)
    add_suspect(db_path, "not_flagged")
    summary = run_notify(open_store(db_path), now=day(2), notifier=slack)
    (sent,) = summary.sent_titles
    assert re.fullmatch(r"resolved: gpt-x on GPQA Diamond: contamination suspicion resolved: new data "
                        rf"\(snapshot \d+ of {T0:%Y-%m-%d}\) no longer flag it", sent)
    assert sections(fake_slack)[1].startswith(":white_check_mark: *Resolved: gpt-x on GPQA Diamond")


def test_silence_mutes_delivery_but_the_alert_is_recorded(db_path, fake_slack, slack, capsys):
    rc = cli.main(["silence", "add", "--match", "benchmark=swebench_verified", "kind=saturation_bin_changed",
                   "--for", "3650d", "--comment", "SWE-bench harness change", "--author", "ana", "--db", db_path])
    assert rc == 0
    assert capsys.readouterr().out.startswith(
        "silence 1: benchmark=swebench_verified, kind=saturation_bin_changed until ")
    for i, s in enumerate((0.5, 0.8, 0.81)):                  # one a week: the move stands by the third
        add_saturation(db_path, day(7 * i), s)
        run_notify(open_store(db_path), now=day(7 * i + 0.1), notifier=slack)
    assert outbox(db_path)["kind"].tolist() == ["baseline"]   # the day-one baseline is not a benchmark's alert
    assert len(fake_slack.requests) == 1
    with db.connect(db_path, read_only=True) as con:
        firing = store.alerts_frame(con, state="firing")
        muted_events = con.execute("""SELECT detail->'labels'->>'level', detail->>'baseline' FROM alert_events
                                      WHERE event = 'AlertFiring' AND (detail->>'muted_by') = 'silence 1'
                                      ORDER BY occurred_at""").fetchall()
    assert firing["muted_by"].tolist() == ["silence 1"]
    assert firing["labels"].iloc[0]["level"] == "high"
    assert muted_events == [("moderate", "true"), ("high", None)]   # the baseline, then the move
    assert cli.main(["alerts", "--state", "firing", "--db", db_path]) == 0
    out = capsys.readouterr().out
    assert "SWE-bench Verified (SWE-bench): level high since 2026-" in out and "silence 1" in out

    assert cli.main(["silence", "expire", "1", "--db", db_path]) == 0
    assert capsys.readouterr().out == "silence 1 expired\n"
    summary = run_notify(open_store(db_path), now=day(3), notifier=slack)
    assert summary.delivered == 1                             # still firing: notified once the silence ends
    assert len(fake_slack.messages()) == 2                    # after the baseline
    assert cli.main(["silence", "list", "--db", db_path]) == 0
    assert capsys.readouterr().out == "no active silences\n"


def test_crash_after_slack_accepted_is_the_documented_at_least_once_window(db_path, fake_slack, slack, monkeypatch):
    add_suspect(db_path, "corroborated")
    real_mark = store.mark_delivered

    def crash(*args, **kwargs):
        raise RuntimeError("killed between Slack's 200 and the commit")
    monkeypatch.setattr(store, "mark_delivered", crash)
    with pytest.raises(RuntimeError):
        run_notify(open_store(db_path), now=day(1), notifier=slack)
    monkeypatch.setattr(store, "mark_delivered", real_mark)
    assert len(fake_slack.messages()) == 1
    # an overlapping run within the lease does not send it again ...
    assert run_notify(open_store(db_path), now=day(1) + timedelta(minutes=1), notifier=slack).to_deliver == 0
    # ... after the lease, the claim is taken as lost and the notification goes out again
    later = run_notify(open_store(db_path), now=day(1) + NOTIFY_CLAIM_LEASE + timedelta(seconds=1), notifier=slack)
    assert later.delivered == 1 and len(fake_slack.messages()) == 2
    assert run_notify(open_store(db_path), now=day(2), notifier=slack).to_deliver == 0


def quick_retries(monkeypatch) -> None:
    """The notifiers' own retry handlers, without the SDK's back-off sleeps (0.5 s × 2^n plus up
    to 1 s of jitter per retry): the back-off itself is tested in test_slack.py."""
    from slack_sdk.http_retry.builtin_interval_calculators import FixedValueRetryIntervalCalculator

    from alerts import slack

    real = slack.retry_handlers

    def handlers():
        found = real()
        for handler in found:
            handler.interval_calculator = FixedValueRetryIntervalCalculator(0.01)
        return found

    monkeypatch.setattr(slack, "retry_handlers", handlers)


def test_notify_cli_never_prints_the_webhook_secret(db_path, fake_slack, monkeypatch, capsys, caplog):
    secret = fake_slack.webhook_url.rsplit("/", 1)[1]
    monkeypatch.setenv("SLACK_WEBHOOK_URL", fake_slack.webhook_url)
    quick_retries(monkeypatch)
    add_suspect(db_path, "corroborated", model="<!channel> evil")
    fake_slack.script(*[Reply(503)] * 3)                      # the first run fails (all retries)
    assert cli.main(["-vv", "notify", "--db", db_path]) == 1
    assert cli.main(["-vv", "notify", "--db", db_path]) == 0
    out = capsys.readouterr()
    assert "delivered 1 to slack-webhook" in out.out
    assert "Sending a request - url: [REDACTED]" in caplog.text     # the SDK's debug log was captured
    for text in (out.out, out.err, caplog.text):
        assert secret not in text
    body = json.dumps(fake_slack.messages()[0], ensure_ascii=False)
    assert "<!channel>" not in body and "&lt;!channel&gt; evil" in body


def test_console_delivery_without_slack(db_path, monkeypatch, capsys):
    for var in ("SLACK_WEBHOOK_URL", "SLACK_BOT_TOKEN", "SLACK_CHANNEL", "PREFECT_API_URL"):
        monkeypatch.delenv(var, raising=False)
    add_suspect(db_path, "corroborated")
    assert cli.main(["notify", "--db", db_path]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1] == "FIRING   gpt-x on GPQA Diamond: contamination suspect (corroborated)"
    assert out[-1] == "  - gpt-x on GPQA Diamond: contamination suspect (corroborated)"
    assert outbox(db_path)["receiver"].tolist() == ["console"]


def test_source_health_counts_failed_runs_in_a_row(db_path):
    add_fetch_runs(db_path, "epoch", ["ok", "error", "parse_error"], day(0))
    add_fetch_runs(db_path, "lmarena", ["error", "ok"], day(0))
    add_snapshot(db_path, "epoch", day(0))
    # one run of retries without a run id: three attempts, the last one succeeds
    with db.connect(db_path) as con:
        record_fetches(con, pd.DataFrame([{"run_id": "", "source": "bfcl", "url": "https://x/bfcl",
                                           "started_at": day(1) + timedelta(seconds=10 * i),
                                           "status": s, "error": None} for i, s in
                                          enumerate(["error", "error", "ok"])]))
        health = rule_inputs.read_source_health(con)
    got = health.set_index("source")[["consecutive_failures", "last_error"]].to_dict("index")
    assert got["epoch"]["consecutive_failures"] == 2
    assert got["lmarena"]["consecutive_failures"] == 0
    assert got["bfcl"]["consecutive_failures"] == 0
    assert health.set_index("source").loc["epoch", "last_new_snapshot_at"] == pd.Timestamp(day(0))


def test_saturation_series_carries_names_and_its_tables_sources(db_path):
    """One series per leaderboard table (issue 20): SWE-bench's own table and Epoch's are two,
    each named after its source and carrying only its own source."""
    add_saturation(db_path, day(0), 0.5)
    add_saturation(db_path, day(0), 0.9, source="epoch")
    with db.connect(db_path) as con:
        frame = rule_inputs.read_saturation_series(con, k=5, alpha=0.5)
    assert frame[["table_id", "benchmark_name", "table_name", "s_index"]].values.tolist() == [
        ["swebench_verified:epoch", "SWE-bench Verified", "SWE-bench Verified (Epoch AI)", 0.9],
        ["swebench_verified:swebench", "SWE-bench Verified", "SWE-bench Verified (SWE-bench)", 0.5]]
    assert [list(v) for v in frame["sources"]] == [["epoch"], ["swebench"]]


def test_rule_reads_of_a_file_without_the_analysis_tables_are_none_and_its_transaction_goes_on():
    """A file from before the analysis tables: the saturation and frontier reads are None (not
    resolved), and the evaluation's transaction is not aborted by the failed statement."""
    with duckdb.connect() as con:
        con.execute("CREATE TABLE benchmarks (id VARCHAR, name VARCHAR)")
        con.execute("BEGIN TRANSACTION")
        assert rule_inputs.read_saturation_series(con, k=5, alpha=0.5) is None
        assert rule_inputs.read_frontier_holders(con, k=5) is None
        con.execute("INSERT INTO benchmarks VALUES ('b', 'B')")
        con.execute("COMMIT")
        assert con.execute("SELECT count(*) FROM benchmarks").fetchone() == (1,)


def test_new_frontier_info_alert_when_enabled(db_path, fake_slack, slack):
    from alerts.config import RuleSettings
    on = RuleSettings(enabled_info_kinds=frozenset({"new_frontier"}))

    def record(as_of, model, score):
        row = pd.DataFrame([{"table_id": "gpqa_diamond:epoch", "benchmark": "gpqa_diamond", "source": "epoch",
                             "as_of": as_of, "k": 5, "n_models": 9, "frontier": score,
                             "frontier_model": model, "is_record": True, "run_at": as_of}])
        with db.connect(db_path) as con:
            db.insert_frame(con, "frontier", row)

    record(day(0), "model-a", 0.71)
    assert run_notify(open_store(db_path), now=day(0.1), notifier=slack).to_deliver == 0          # off by default
    assert run_notify(open_store(db_path), now=day(0.2), notifier=slack, rules=on).to_deliver == 0  # first observation
    record(day(1), "model-b", 0.74)
    summary = run_notify(open_store(db_path), now=day(1.1), notifier=slack, rules=on)
    assert summary.sent_titles == ["GPQA Diamond (Epoch AI): new frontier model-b (was model-a)"]
    assert run_notify(open_store(db_path), now=day(1.2), notifier=slack, rules=on).to_deliver == 0


@pytest.mark.slow   # five notify runs on a database (the engine's side: test_alerts_rules' upgrade test)
def test_upgrade_to_stored_levels_neither_resolves_nor_refires(db_path, fake_slack, slack):
    """Rows written before migration 020 have no level: notify keeps the recorded states (no data),
    and the first analyze fills the levels the rule used to compute, so nothing is sent."""
    for i, s in enumerate((0.5, 0.8, 0.81)):
        add_saturation(db_path, day(i), s)
        run_notify(open_store(db_path), now=day(i + 0.1), notifier=slack)
    sent = len(fake_slack.requests)
    with db.connect(db_path) as con:               # as a database written before 020 looks after the migration
        con.execute("UPDATE saturation SET level = NULL, level_since = NULL, pending_bin = NULL, pending_count = 0")
        before = {s.fingerprint: (s.state, s.notified) for s in store.read_states(con)}
    summary = run_notify(open_store(db_path), now=day(3), notifier=slack)
    assert (summary.enqueued, summary.to_deliver) == (0, 0)
    with db.connect(db_path) as con:
        assert {s.fingerprint: (s.state, s.notified) for s in store.read_states(con)} == before
        run_levels(con)                            # the first analyze after the upgrade
    summary = run_notify(open_store(db_path), now=day(4), notifier=slack)
    assert (summary.enqueued, summary.to_deliver) == (0, 0) and len(fake_slack.requests) == sent
    with db.connect(db_path, read_only=True) as con:
        assert {s.fingerprint: (s.state, s.notified) for s in store.read_states(con)} == before


def test_a_run_whose_claim_lapsed_during_a_retry_after_does_not_post_again(db_path, fake_slack, slack, monkeypatch):
    """Issue 24 (5): a 429 with Retry-After 700; a second notify started after the lease delivered,
    then the first woke up and posted the same digest again. Here with seconds, not minutes."""
    import threading
    import time

    from alerts import config
    monkeypatch.setattr(config, "SLACK_MAX_RETRY_AFTER_SECONDS", 5)
    add_suspect(db_path, "corroborated")
    from alerts import slack as slack_module
    fake_slack.script(Reply(429, headers={"Retry-After": "1"}))
    first: dict = {}
    worker = threading.Thread(target=lambda: first.setdefault(
        "summary", run_notify(open_store(db_path), now=day(1), notifier=slack, lease=timedelta(seconds=0.5))),
        daemon=True)
    # The first run's Retry-After sleep lasts until the second run is done (a wall-clock second was
    # too short on a loaded machine: the first woke up before the second had claimed and posted).
    second_done = threading.Event()

    class GatedTime:
        def __getattr__(self, name):
            return getattr(time, name)

        def sleep(self, seconds: float) -> None:
            if threading.current_thread() is worker:
                second_done.wait(60)
            else:
                time.sleep(seconds)
    monkeypatch.setattr(slack_module, "time", GatedTime())
    worker.start()
    try:
        # the first run's 429: if it never posts (nothing to deliver, an error), fail, not wait for ever
        deadline = time.monotonic() + 20
        while not fake_slack.requests and worker.is_alive() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert fake_slack.requests, f"the first run posted nothing (finished: {not worker.is_alive()}, {first})"
        time.sleep(0.5)                                          # the first run's lease is over
        second = run_notify(open_store(db_path), now=day(1) + timedelta(seconds=1), notifier=slack)
    finally:
        second_done.set()                                        # never leave the first run asleep
    worker.join(20)
    assert not worker.is_alive(), "the first run did not finish after its Retry-After"
    assert second.delivered == 1
    assert not first["summary"].ok and first["summary"].delivered == 0
    assert len(fake_slack.messages()) == 1                       # posted once, by the second run
    box = outbox(db_path)
    assert box["delivered_at"].notna().all()


# --- a fake Slack left rate-limited by one test does not reach the next ---------------------------
# (a fast-lane run once hung in this module after failures). The two run in this order on one worker.

LEFT_RETRY_AFTER = "30"      # what the first leaves scripted: a notify honouring it would wait 30 s


@pytest.mark.xdist_group("test_notify_fake_state")
def test_a_test_may_leave_the_fake_slack_rate_limited(db_path, fake_slack):
    """Ends with the fake answering every request 429 Retry-After 30 (queue and default alike),
    as a test that fails mid-way through a rate-limit scenario leaves it."""
    limited = Reply(429, headers={"Retry-After": LEFT_RETRY_AFTER})
    fake_slack.script(limited, limited)
    fake_slack.set_default(limited)
    no_retries = SlackWebhookNotifier(fake_slack.webhook_url, handlers=[])
    add_suspect(db_path, "corroborated")
    got = run_notify(open_store(db_path), now=day(1), notifier=no_retries)
    assert not got.ok and "rate limited" in got.error and [r.status for r in fake_slack.requests] == [429]


@pytest.mark.xdist_group("test_notify_fake_state")
def test_the_next_test_gets_a_fake_slack_that_answers_at_once(db_path, fake_slack, slack):
    """The fixture's fake starts clean for every test (no script, 200, nothing recorded): this
    notify is neither rate-limited nor kept waiting by what the test before left."""
    import time
    assert fake_slack.requests == []
    add_suspect(db_path, "corroborated")
    start = time.monotonic()
    got = run_notify(open_store(db_path), now=day(1), notifier=slack)
    took = time.monotonic() - start
    assert got.ok and got.delivered == 1, got
    assert [r.status for r in fake_slack.requests] == [200]
    assert took < float(LEFT_RETRY_AFTER) / 2, f"notify took {took:.1f} s: a Retry-After left by another test?"


def test_alerts_lists_firing_events_before_the_levels(tmp_path, capsys):
    """`alerts --state firing`: the alerts that fire (a held snapshot, a failing source) come first;
    the levels — states every watched table has, listed as `level` — follow them, however many."""
    path = tmp_path / "alerts.duckdb"
    with db.connect(path) as con:
        rows = [(f"lvl{i}", "saturation_bin_changed",
                 json.dumps({"benchmark": f"b{i}", "table": f"b{i}:src", "scope": "all", "level": "high"}))
                for i in range(5)]
        rows.append(("held1", "snapshot_held", json.dumps({"source": "swebench"})))
        con.executemany("""INSERT INTO alerts (fingerprint, kind, labels, state, since, last_evaluated, pending_count,
                                               notified, muted_by, annotations)
                           VALUES (?, ?, ?, 'firing', '2026-01-01 00:00:00+00', '2026-01-01 00:00:00+00', 0,
                                   'queued', '', '{"snapshot_id": 7}')""", rows)
    assert cli.main(["alerts", "--state", "firing", "--db", str(path)]) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines()[1:] if ln.strip()]
    assert lines[0].lstrip().startswith("firing") and "swebench: snapshot 7 held" in lines[0]
    assert all(ln.lstrip().startswith("level") for ln in lines[1:]) and len(lines) == 6

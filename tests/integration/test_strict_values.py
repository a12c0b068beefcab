"""Values typed strictly and kept plausible (issue 55, item 8).

A τ² score `true` was stored as 0.01 (float(True) / 100); an Elo row whose interval excludes its
own estimate, or is inverted, was accepted; an evaluation date of 9999-12-31 was stored; a
Slack Retry-After given as an HTTP-date (2099) was retried after ~1 s instead of being left for
the next run. Each test failed before its fix.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pandas as pd
import pytest

import scrapers
from common.snapshot import ParsedSnapshot
from common.units import DATE_MAX_AHEAD, DATE_MIN  # noqa: E402
from scrapers.base import validate
from storage.store import open_store

AT = datetime(2026, 1, 1, tzinfo=timezone.utc)
NOW = datetime.now(timezone.utc)


def tau2(results: dict, **extra) -> tuple[bytes, dict[str, bytes]]:
    sub = {"model_name": "M", "submission_date": "2025-11-18", "results": results, **extra}
    return (json.dumps({"submissions": ["m_x_2025-11-18"]}).encode(),
            {"sub_m_x_2025-11-18.json": json.dumps(sub).encode()})


def test_a_boolean_is_not_a_tau2_score():
    manifest, aux = tau2({"retail": {"pass_1": True, "pass_2": 50.0}, "airline": {"pass_1": False}})
    parsed = scrapers.get("tau2_bench").parse_checked(manifest, fetched_at=AT, aux=aux)
    assert parsed.scores["benchmark"].tolist() == ["tau2_bench_retail_pass2"]
    assert parsed.scores["score"].tolist() == [0.5]
    assert sum("True is not a number" in w or "False is not a number" in w for w in parsed.warnings) == 2


def scores(**cols) -> ParsedSnapshot:
    n = len(next(iter(cols.values())))
    base = {"benchmark": ["arena_elo"] * n, "model": [f"m{i}" for i in range(n)], "metric": ["elo"] * n}
    return ParsedSnapshot(source="t", scores=pd.DataFrame({**base, **cols}))


def test_an_interval_must_contain_its_estimate():
    p = validate("t", scores(score=[1300.0] * 6,
                             ci_low=[1290.0, 1310.0, 1310.0, 1300.0, None, 1301.0],
                             ci_high=[1310.0, 1320.0, 1290.0, 1300.0, None, None]), min_rows=1, produces="scores")
    assert p.scores["model"].tolist() == ["m0", "m3", "m4"]
    assert p.rejects["reason"].tolist() == ["CI [1310.0, 1320.0] does not contain the score 1300.0",
                                            "CI [1310.0, 1290.0] does not contain the score 1300.0",
                                            "CI [1301.0, missing] does not contain the score 1300.0"]


@pytest.mark.parametrize("when, kept", [
    ("9999-12-31", False), ("1970-01-01", False), ((DATE_MIN - timedelta(days=1)).date().isoformat(), False),
    (DATE_MIN.date().isoformat(), True), ("2025-11-18", True),
    ((NOW + DATE_MAX_AHEAD + timedelta(days=2)).date().isoformat(), False),
])
def test_an_implausible_date_is_dropped_with_a_warning(when, kept):
    manifest, aux = tau2({"retail": {"pass_1": 50.0}}, methodology={"evaluation_date": when},
                         model_release={"release_date": when})
    parsed = scrapers.get("tau2_bench").parse_checked(manifest, fetched_at=AT, aux=aux)
    got = parsed.scores["evaluated_at"].iloc[0]
    assert (got == pd.Timestamp(when)) if kept else pd.isna(got)
    assert pd.isna(parsed.scores["model_release_date"].iloc[0]) != kept
    said = [w for w in parsed.warnings if "implausible" in w]
    assert len(said) == (0 if kept else 3)       # evaluated_at, model_release_date, models.release_date
    if not kept:
        assert when[:4] in said[0]


@pytest.mark.parametrize("value", ["Thu, 01 Jan 2099 00:00:00 GMT", "Thu Jan  1 00:00:00 2099", "86400"])
def test_a_slack_retry_after_beyond_the_cap_is_left_for_the_next_run(value):
    from alerts import config
    from alerts.slack import rate_limit_reason, retry_after_seconds
    wait = retry_after_seconds({"Retry-After": [value]})
    assert wait is not None and wait > config.SLACK_MAX_RETRY_AFTER_SECONDS
    assert "left for the next run" in rate_limit_reason({"Retry-After": [value]})
    assert "longer than" in rate_limit_reason({"Retry-After": [value]})


def test_a_slack_retry_after_that_is_no_time_is_none():
    from alerts.slack import retry_after_seconds
    assert retry_after_seconds({"Retry-After": ["soon"]}) is None
    assert retry_after_seconds({"Retry-After": ["nan"]}) is None
    assert retry_after_seconds({"retry-after": "2"}) == 2.0


def test_a_replayed_tau2_folder_with_only_its_manifest_is_one_line_not_a_failure(synced_db, tmp_path):
    """The manifest without any submission it lists is no copy to replay: before, each run
    recorded a parse failure and the third paged Slack."""
    from jobs.collect import collect
    from storage.query import run_query
    folder = tmp_path / "replay" / "tau2_bench"
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text(json.dumps({"submissions": ["a_x_2025-01-01", "b_y_2025-02-01"]}))
    for run in ("r1", "r2", "r3"):
        out = collect(open_store(str(synced_db)), ["tau2_bench"], replay_dir=tmp_path / "replay", run_id=run)[0]
        assert out.status == "skipped", out.line()
        assert "none of the 2 file(s) it lists" in out.detail and "\n" not in out.detail
    from tests.integration.test_collect import source_failures
    assert source_failures(str(synced_db), "tau2_bench") == 0
    assert run_query("SELECT count(*) n FROM fetches WHERE source = 'tau2_bench'", open_store(str(synced_db)))["n"][0] == 0

"""Property-based tests: generated leaderboards through parse -> store -> analyze (the generic csv source).

Generated: random sizes (1-25 models), one or two benchmarks, missing optional columns, ties,
one model, all-equal scores, percent or proportion, dates absent or in the future, bad cells.
"""

from __future__ import annotations

import csv
import io
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, Phase, example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import scrapers  # noqa: E402
from scrapers.base import ScrapeError  # noqa: E402
from scrapers.normalize import AmbiguousScale, percent_scale  # noqa: E402
from storage.store import open_store

NOW = datetime(2026, 5, 20, tzinfo=timezone.utc)
BENCHES = ["gpqa_diamond", "math_500"]


@st.composite
def leaderboards(draw):
    n = draw(st.integers(1, 25))
    percent = draw(st.booleans())
    mode = draw(st.sampled_from(["random", "ties", "all_equal"]))
    if mode == "all_equal":
        base = [draw(st.floats(0.01, 1.0))] * n
    elif mode == "ties":
        pool = draw(st.lists(st.floats(0.01, 1.0), min_size=1, max_size=3))
        base = [draw(st.sampled_from(pool)) for _ in range(n)]
    else:
        base = draw(st.lists(st.floats(0.0, 1.0), min_size=n, max_size=n))
    benches = draw(st.lists(st.sampled_from(BENCHES), min_size=1, max_size=2, unique=True))
    cols = ["model", "benchmark", "score"] + draw(st.lists(
        st.sampled_from(["n_items", "stderr", "evaluated_at", "model_release_date"]), unique=True, max_size=4))
    bad = draw(st.sampled_from([None, "inf", "101", "-3", "NaN", "abc"]))
    rows = []
    for b in benches:
        for i, s in enumerate(base):
            v = round(s * 100, 1) if percent else round(s, 4)
            row = {"model": f"m{i}", "benchmark": b, "score": f"{v}"}
            if "n_items" in cols:
                row["n_items"] = draw(st.sampled_from(["", "198", "500"]))
            if "stderr" in cols:
                row["stderr"] = draw(st.sampled_from(["", "0.01", "1.2"])) if percent else draw(st.sampled_from(["", "0.01"]))
            for c in ("evaluated_at", "model_release_date"):
                if c in cols:
                    d = draw(st.sampled_from([None, -400, -30, 0, 400]))     # days from now; 400 = future
                    row[c] = "" if d is None else (NOW + timedelta(days=d)).date().isoformat()
            rows.append(row)
    if bad is not None:
        rows.append({"model": "bad", "benchmark": benches[0], "score": bad})
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=cols, extrasaction="ignore")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue().encode(), base, percent, benches, bad


def wide_stderr_rows(content: bytes, is_percent: bool | None) -> int:
    """Good rows whose stderr cell ("1.2", written for a percent board) is wider than a proportion's
    whole range when the board reads as proportions: rejected by validation (issue 24, item 14)."""
    if is_percent:
        return 0
    rows = csv.DictReader(io.StringIO(content.decode()))
    return sum(1 for r in rows if r.get("model") != "bad" and (r.get("stderr") or "").strip() == "1.2")


def expected_refusal(content: bytes, base: list[float], percent: bool, benches: list[str]) -> str:
    """What a refused board's error must say: the scale cannot be told, or (issue 24) every good
    row's stderr is wider than a proportion's range, so no row is left (an empty table is an error)."""
    expected = expected_scale_is_percent(base, percent)
    if expected is not None and wide_stderr_rows(content, expected) == len(base) * len(benches):
        return "no rows parsed"
    assert expected is None, "a board with a clear scale and a good row was refused"
    return "cannot tell percent"


def expected_scale_is_percent(base: list[float], percent: bool) -> bool | None:
    """Brute force of the scale rule on the written valid values (None = ambiguous)."""
    vals = [round(s * 100, 1) if percent else round(s, 4) for s in base]
    try:
        return percent_scale(np.array(vals, dtype=float))
    except AmbiguousScale:
        return None


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(leaderboards())
@example((b"model,benchmark,score,n_items,stderr\r\nm0,gpqa_diamond,0.0,,1.2\r\n", [0.0], True, ["gpqa_diamond"], None))
def test_parse_keeps_every_good_row_with_the_right_scale(board):
    content, base, percent, benches, bad = board
    expected = expected_scale_is_percent(base, percent)
    s = scrapers.get("csv")
    try:
        parsed = s.parse_checked(content, fetched_at=NOW)
    except ScrapeError as exc:
        assert expected_refusal(content, base, percent, benches) in exc.reason
        return
    assert expected is not None
    got = parsed.scores
    good = got[got["model"] != "bad"]
    wide = wide_stderr_rows(content, expected)
    assert len(good) == len(base) * len(benches) - wide          # no good row lost
    written = np.array([round(x * 100, 1) if percent else round(x, 4) for x in base])
    want = written / 100.0 if expected else written
    for b in benches:
        if not wide:
            assert np.allclose(good[good["benchmark"] == b]["score"].to_numpy(), want)
    assert ((got["score"] >= 0) & (got["score"] <= 1)).all()
    if bad is not None:      # inf, 101 (1.01 as percent), -3, NaN/abc (no score): rejected, never scaled
        assert len(parsed.rejects) == 1 + wide


@pytest.mark.slow
@settings(max_examples=25, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate],
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(leaderboards())
def test_parse_store_analyze_never_crashes(tmp_path_factory, _synced_template, board):
    import shutil
    from jobs.analyze import analyze
    from jobs.ingest import ingest_file
    from storage.query import run_query
    content, base, percent, benches, bad = board
    d = tmp_path_factory.mktemp("prop")
    f = d / "board.csv"
    f.write_bytes(content)
    dbp = str(d / "p.duckdb")
    shutil.copyfile(_synced_template, dbp)      # a new file as the first job leaves it (tests/conftest.py)
    try:
        res = ingest_file(open_store(dbp), "csv", f, observed_at=NOW)
    except ScrapeError as exc:
        assert expected_refusal(content, base, percent, benches) in exc.reason
        return
    wide = wide_stderr_rows(content, expected_scale_is_percent(base, percent))
    assert res.n_scores == len(base) * len(benches) - wide
    analyze(open_store(dbp), now=NOW + timedelta(hours=1))
    latest = run_query("SELECT benchmark, model, score FROM latest_scores", open_store(dbp))
    assert len(latest) == len(base) * len(benches) - wide
    sat = run_query("SELECT * FROM saturation_latest", open_store(dbp))
    assert set(sat["benchmark"]) <= set(benches)

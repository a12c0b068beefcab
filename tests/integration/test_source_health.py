"""Source health (failed runs in a row, last error, last attempt) read from the recent window of
the fetches, against a brute force of its definition over every fetch, on random histories that
reach past the window: long failure streaks, sources no longer fetched, runs that began before
the window, retries within a run and attempts without a run id."""

from __future__ import annotations

import random
from collections import defaultdict
from datetime import datetime, timedelta, timezone

import duckdb
import pandas as pd
import pytest

import storage.rule_inputs as rule_inputs
from storage import db
from storage.rule_inputs import FAILED_FETCH_STATUSES, RUN_SESSION_GAP, read_source_health
from helpers import lane

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
WINDOW = timedelta(hours=30)       # a few runs of the histories below (hourly, over days)


def brute_force(fetches: list[dict], snapshots: dict[str, datetime]) -> pd.DataFrame:
    """The definition, over every fetch: a run is one run id, or for attempts without one a
    session (a new one after a gap longer than RUN_SESSION_GAP); a URL's outcome in a run is its
    last attempt; a run failed when any URL's outcome is a failure; the streak is the failed runs
    newer than the newest run that did not fail."""
    out = {}
    for source in sorted({f["source"] for f in fetches} | set(snapshots)):
        rows = sorted((f for f in fetches if f["source"] == source), key=lambda f: (f["started_at"], f["id"]))
        session, previous, runs = 0, None, defaultdict(list)
        for f in rows:
            if f["run_id"]:
                runs[f["run_id"]].append(f)
                continue
            if previous is None or f["started_at"] - previous > RUN_SESSION_GAP:
                session += 1
            previous = f["started_at"]
            runs[f"session-{session}"].append(f)
        summary = []
        for run, attempts in runs.items():
            last = {}
            for f in attempts:                        # sorted: the later attempt wins
                last[f["url"]] = f
            failed = [f for f in last.values() if f["status"] in FAILED_FETCH_STATUSES]
            run_at = max(f["started_at"] for f in last.values())
            error = max(failed, key=lambda f: f["started_at"])["error"] if failed else None
            summary.append((run_at, run, bool(failed), error))
        summary.sort(reverse=True)                    # newest first (run_at, then run, descending)
        streak = []
        for run_at, run, failed, error in summary:
            if not failed:
                break
            streak.append((run_at, error))
        out[source] = {"source": source, "consecutive_failures": len(streak),
                       "last_new_snapshot_at": snapshots.get(source),
                       "last_attempt_at": summary[0][0] if summary else None,
                       "last_error": streak[0][1] if streak else None}
    return pd.DataFrame(list(out.values()))


def _numbered(fetches: list[dict]) -> list[dict]:
    """The attempts in the order they happened, with the ids the fetch log gives them."""
    fetches.sort(key=lambda f: f["started_at"])
    for i, f in enumerate(fetches, 1):
        f["id"] = i
    return fetches


def random_history(rng: random.Random) -> tuple[list[dict], dict[str, datetime]]:
    fetches: list[dict] = []
    hours = rng.randint(40, 120)
    for s in range(rng.randint(3, 7)):
        source = f"src{s}"
        kind = rng.choice(["healthy", "flaky", "failing_long", "gone", "sessions", "straddling"])
        urls = [f"https://example.test/{source}/{u}" for u in range(rng.randint(1, 3))]
        fail_rate = {"healthy": 0.02, "flaky": 0.3, "failing_long": 0.05, "gone": 0.1,
                     "sessions": 0.25, "straddling": 0.2}[kind]
        last_hour = hours - rng.randint(45, 70) if kind == "gone" else hours   # not fetched in the window
        broken_from = rng.randint(0, max(hours - 45, 1)) if kind == "failing_long" else None
        for h in range(0, max(last_hour, 1), rng.choice([1, 1, 2, 5])):
            run_id = None if kind == "sessions" and rng.random() < 0.7 else f"{source}-run-{h}"
            # a run that began long before its last attempts: its first URL tried 40 hours early
            early = kind == "straddling" and rng.random() < 0.1
            for u, url in enumerate(urls):
                for attempt in range(rng.choice([1, 1, 1, 2])):        # a retry within the run
                    broken = broken_from is not None and h >= broken_from
                    status = rng.choice(FAILED_FETCH_STATUSES) if broken or rng.random() < fail_rate else \
                        rng.choice(["ok", "unchanged", "not_modified"])
                    at = T0 + timedelta(hours=h - (40 if early and u == 0 else 0), minutes=u * 3 + attempt,
                                        seconds=rng.randint(0, 59))
                    fetches.append({"run_id": run_id, "source": source, "url": url, "started_at": at, "status": status,
                                    "error": f"{status} at {at:%d %H:%M:%S} of {url}" if status in FAILED_FETCH_STATUSES else None})
    _numbered(fetches)
    snapshots = {f"src{s}": T0 + timedelta(hours=rng.randint(0, hours)) for s in range(8) if rng.random() < 0.5}
    return fetches, snapshots


def stored(path, fetches: list[dict], snapshots: dict[str, datetime]) -> None:
    attempts = pd.DataFrame(fetches, columns=["id", "run_id", "source", "url", "started_at", "status", "error"])
    snaps = pd.DataFrame({"source": list(snapshots), "first_seen": list(snapshots.values())})
    with db.connect(path) as con:
        con.register("attempts", attempts)
        con.register("snaps", snaps)
        con.execute("INSERT INTO fetches BY NAME SELECT * FROM attempts")
        con.execute("""INSERT INTO snapshots (source, sha256, blob_sha256, file_names, observed_at, first_seen,
                           last_seen, origin, parser_version, n_scores, n_items, n_models, n_rejects)
                       SELECT source, source || '-sha', [], [], first_seen, first_seen, first_seen, 'test', 1, 0, 0, 0, 0
                       FROM snaps""")


class Counting:
    """A connection that counts its statements (the window settles most histories in one)."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con, self.statements = con, 0

    def execute(self, *args, **kwargs):
        self.statements += 1
        return self.con.execute(*args, **kwargs)


def comparable(df: pd.DataFrame) -> list[tuple]:
    def value(v):
        if v is None or v is pd.NaT or (isinstance(v, float) and v != v):
            return None
        return pd.Timestamp(v).to_pydatetime() if isinstance(v, (datetime, pd.Timestamp)) else v
    return [tuple(value(v) for v in row) for row in df[["source", "consecutive_failures", "last_new_snapshot_at",
                                                        "last_attempt_at", "last_error"]].itertuples(index=False)]


@pytest.mark.parametrize("seed", lane(range(12), range(4)))     # the fast lane: 4 histories
def test_the_window_gives_what_every_fetch_gives(synced_db, monkeypatch, seed):
    rng = random.Random(seed)
    fetches, snapshots = random_history(rng)
    stored(synced_db, fetches, snapshots)
    monkeypatch.setattr(rule_inputs, "SOURCE_HEALTH_WINDOW", WINDOW)
    with db.connect(synced_db, read_only=True) as con:
        got = read_source_health(con)
    assert comparable(got) == comparable(brute_force(fetches, snapshots))
    assert got["consecutive_failures"].dtype == "int64"
    assert str(got["last_attempt_at"].dtype).endswith("UTC]")


def test_a_history_the_window_settles_is_one_statement_and_a_long_failure_reads_the_rest(synced_db, monkeypatch):
    """Healthy sources are settled by the window's rows (one statement); a source failing since
    before the window has its streak counted over its whole history, not cut at the window."""
    fetches = []
    for h in range(100):
        for source, status in (("good", "ok"), ("broken", "error" if h >= 20 else "ok")):
            fetches.append({"run_id": f"{source}-{h}", "source": source, "url": f"https://example.test/{source}",
                            "started_at": T0 + timedelta(hours=h), "status": status,
                            "error": "HTTP 503" if status == "error" else None})
    _numbered(fetches)
    monkeypatch.setattr(rule_inputs, "SOURCE_HEALTH_WINDOW", WINDOW)
    stored(synced_db, [f for f in fetches if f["source"] == "good"], {})
    with db.connect(synced_db, read_only=True) as con:
        counting = Counting(con)
        read_source_health(counting)
    assert counting.statements == 1
    stored(synced_db, [f for f in fetches if f["source"] == "broken"], {})
    with db.connect(synced_db, read_only=True) as con:
        counting = Counting(con)
        got = read_source_health(counting).set_index("source")
    assert counting.statements == 2
    assert got.loc["broken", "consecutive_failures"] == 80 and got.loc["good", "consecutive_failures"] == 0
    assert got.loc["broken", "last_error"] == "HTTP 503"


def _attempt(source: str, run_id: str | None, url: str, at: datetime, status: str) -> dict:
    return {"run_id": run_id, "source": source, "url": f"https://example.test/{url}", "started_at": at,
            "status": status, "error": f"{status} of {url}" if status in FAILED_FETCH_STATUSES else None}


@pytest.mark.parametrize("case", ["run", "session", "old_session_ok"])
def test_what_began_before_the_window_is_read_whole(synced_db, monkeypatch, case):
    """The window's edge never cuts a run: a run (or a session of attempts without a run id)
    whose failed URL was tried before the window and whose other URL in it failed the run; and a
    source whose newest good run is a session from before the window counts every failure since."""
    end = T0 + timedelta(hours=100)
    since = end - WINDOW
    fetches = [_attempt("other", f"other-{h}", "other", T0 + timedelta(hours=h), "ok") for h in range(101)]
    if case == "run":        # the newest run of `edge` began before the window with a URL that failed
        fetches += [_attempt("edge", f"edge-{h}", "a", since - timedelta(hours=30 - h), "ok") for h in range(20)]
        fetches += [_attempt("edge", "edge-last", "a", since - timedelta(minutes=5), "error"),
                    _attempt("edge", "edge-last", "b", since + timedelta(minutes=5), "ok")]
        want = 1
    elif case == "session":  # the same run as a session of attempts without a run id, 10 minutes apart
        fetches += [_attempt("edge", None, "a", since - timedelta(hours=30 - h), "ok") for h in range(20)]
        fetches += [_attempt("edge", None, "a", since - timedelta(minutes=5), "error"),
                    _attempt("edge", None, "b", since + timedelta(minutes=4), "ok")]
        want = 1
    else:                    # good once, long ago, without a run id; failing every hour since
        fetches += [_attempt("edge", None, "a", T0, "ok")]
        fetches += [_attempt("edge", f"edge-{h}", "a", T0 + timedelta(hours=h), "error") for h in range(1, 100)]
        want = 99
    fetches = _numbered(fetches)
    stored(synced_db, fetches, {})
    monkeypatch.setattr(rule_inputs, "SOURCE_HEALTH_WINDOW", WINDOW)
    with db.connect(synced_db, read_only=True) as con:
        got = read_source_health(con)
    assert comparable(got) == comparable(brute_force(fetches, {}))
    assert got.set_index("source").loc["edge", "consecutive_failures"] == want


def test_nothing_fetched_is_an_empty_frame_of_the_same_columns(synced_db):
    with db.connect(synced_db, read_only=True) as con:
        got = read_source_health(con)
    assert got.empty and list(got.columns) == ["source", "consecutive_failures", "last_new_snapshot_at",
                                               "last_attempt_at", "last_error"]
    assert got["consecutive_failures"].dtype == "int64" and str(got["last_attempt_at"].dtype).endswith("UTC]")

"""`storage.threads.in_parallel`: reads on two connections at once, each worker taking the next
call when it is free, and what happens when one fails (nothing left running on a connection
about to be closed, nothing more started, the cause raised)."""

from __future__ import annotations

import threading
import time

import duckdb
import pytest

from storage import db
from storage.threads import in_parallel

# 10^11 pairs: minutes, unless interrupted
ENDLESS = "SELECT count(*) FROM range(100000) a, range(1000000) b WHERE a.range + b.range < 0"


@pytest.fixture()
def con(tmp_path):
    with db.connect(tmp_path / "bw.duckdb"):            # a migrated, empty file
        pass
    con = db.open_connection(tmp_path / "bw.duckdb", read_only=True)
    yield con
    con.close()


def _meeting(n: int):
    """n calls that each wait for the next one to have started: only two workers at once get
    through (one after the other, the first would wait out its timeout and return False)."""
    started = [threading.Event() for _ in range(n + 1)]
    started[n].set()

    def call(i: int):
        def read(c):
            started[i].set()
            met = started[i + 1].wait(timeout=10)
            return met, threading.current_thread().name, c.execute("SELECT current_setting('TimeZone')").fetchone()[0]
        return read
    return [call(i) for i in range(n)]


def test_results_come_back_in_order_from_two_workers_at_once(con):
    calls = _meeting(2)
    results = in_parallel(con, *calls, lambda c: c.execute("SELECT count(*) FROM scores").fetchone()[0])
    (met0, thread0, tz0), (met1, thread1, tz1), count = results
    assert met0 and met1                                   # each saw the other start: at the same time
    assert {thread0, thread1} == {threading.current_thread().name, "benchwatch-reads"}
    assert tz0 == tz1 == "UTC"                             # the cursor starts its session as `con` did
    assert count == 0


def test_a_worker_that_is_free_takes_the_next_call(con):
    """Six calls, one slow: the other worker runs the five quick ones meanwhile."""
    order: list[str] = []
    slow_started = threading.Event()

    def slow(c):
        slow_started.set()
        time.sleep(0.3)
        order.append("slow")
        return "slow"

    def quick(i):
        def read(c):
            assert slow_started.wait(timeout=10)
            order.append(f"q{i}")
            return c.execute("SELECT ?", [i]).fetchone()[0]
        return read

    assert in_parallel(con, slow, *[quick(i) for i in range(5)]) == ["slow", 0, 1, 2, 3, 4]
    assert order == ["q0", "q1", "q2", "q3", "q4", "slow"]


def test_an_error_is_raised_after_the_other_call_finished_and_no_call_starts_after_it(con):
    finished, ran = [], []
    failing_started = threading.Event()

    def first(c):
        assert failing_started.wait(timeout=10)
        time.sleep(0.05)
        finished.append("first")
        return 1

    def failing(c):
        failing_started.set()
        c.execute("SELECT * FROM no_such_table")

    def later(c):
        ran.append("later")

    with pytest.raises(duckdb.CatalogException, match="no_such_table"):
        in_parallel(con, first, failing, later, later)
    assert finished == ["first"] and ran == []
    assert con.execute("SELECT 1").fetchone() == (1,)        # `con` is usable: no interrupt left pending


@pytest.mark.parametrize("failing_on", ["caller", "benchwatch-reads"])
def test_an_error_interrupts_the_other_workers_statement(con, failing_on):
    """A long read must not outlive the call (`con` is closed right after it), whichever worker
    failed: the other's statement is interrupted, and the error raised is the cause, not the
    interruption it led to. Both calls are the same: they meet (one on each worker), then the one
    on `failing_on`'s thread fails while the other runs a statement of minutes. The call runs on
    a thread of its own ("caller"), so that a statement left running fails the test, not hangs it."""
    used: list[duckdb.DuckDBPyConnection] = []
    meet = threading.Barrier(2, timeout=10)

    def call(c):
        meet.wait()
        if threading.current_thread().name == failing_on:
            time.sleep(0.1)                    # the endless statement is under way
            raise KeyError("failed")
        used.append(c)
        return c.execute(ENDLESS).fetchone()

    outcome: dict[str, BaseException] = {}

    def caller():
        try:
            in_parallel(con, call, call)
        except BaseException as exc:  # noqa: BLE001 - checked below
            outcome["raised"] = exc

    runner = threading.Thread(target=caller, name="caller")
    runner.start()
    runner.join(timeout=10)
    if runner.is_alive():
        for c in used:
            c.interrupt()
        runner.join()
        pytest.fail("in_parallel still running 10 s after one of its calls failed")
    assert isinstance(outcome.get("raised"), KeyError), outcome
    assert [t for t in threading.enumerate() if t.name == "benchwatch-reads"] == []
    assert len(used) == 1 and (used[0] is con) == (failing_on == "benchwatch-reads")
    if used[0] is not con:
        with pytest.raises(duckdb.ConnectionException):
            used[0].execute("SELECT 1")                     # the cursor: closed
    assert con.execute("SELECT 1").fetchone() == (1,)       # `con`: usable, no interrupt left pending


def test_status_reads_the_same_as_one_group_after_the_other(tmp_path, capsys, monkeypatch):
    """`benchwatch status` prints the same whether its two groups of reads run at once or in turn."""
    from cli.main import main
    from storage import status

    csv = tmp_path / "s.csv"
    csv.write_text("model,benchmark,score\nm1,gpqa_diamond,0.5\nm2,gpqa_diamond,0.6\nzz-unknown,bb,0.7\n")
    path = tmp_path / "bw.duckdb"
    assert main(["ingest", "csv", str(csv), "--db", str(path)]) == 0
    capsys.readouterr()
    assert main(["status", "--db", str(path)]) == 0
    together = capsys.readouterr().out
    monkeypatch.setattr(status, "in_parallel", lambda c, *calls: [call(c) for call in calls])
    assert main(["status", "--db", str(path)]) == 0
    assert capsys.readouterr().out == together
    assert "unknown names: 1 benchmark(s)" in together and "csv" in together

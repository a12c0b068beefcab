"""`storage.threads.in_parallel`: two groups of reads at once, one on a cursor in a thread, and
what happens when either fails (nothing left running on a connection about to be closed)."""

from __future__ import annotations

import threading
import time

import duckdb
import pytest

from storage import db
from storage.threads import in_parallel


@pytest.fixture()
def con(tmp_path):
    with db.connect(tmp_path / "bw.duckdb"):            # a migrated, empty file
        pass
    con = db.open_connection(tmp_path / "bw.duckdb", read_only=True)
    yield con
    con.close()


def test_both_results_come_back_in_order_and_the_second_ran_elsewhere(con):
    seen: dict[str, object] = {}

    def first(c):
        seen["first"] = (c, threading.current_thread())
        return c.execute("SELECT count(*) FROM scores").fetchone()[0]

    def second(c):
        seen["second"] = (c, threading.current_thread())
        return c.execute("SELECT current_setting('TimeZone')").fetchone()[0]

    assert in_parallel(con, first, second) == (0, "UTC")    # the cursor starts its session as `con` did
    assert seen["first"] == (con, threading.main_thread())
    assert seen["second"][0] is not con and seen["second"][1] is not threading.main_thread()


def test_the_two_run_at_the_same_time(con):
    """Each waits for the other to have started: run in turn, the first would wait forever (bounded
    here by the timeout)."""
    started = {"first": threading.Event(), "second": threading.Event()}

    def meet(me: str, other: str):
        def read(c):
            started[me].set()
            return started[other].wait(timeout=10)
        return read

    assert in_parallel(con, meet("first", "second"), meet("second", "first")) == (True, True)


def test_an_error_of_the_second_is_raised_after_the_first_finished(con):
    finished = []

    def first(c):
        time.sleep(0.05)
        finished.append("first")
        return 1

    def second(c):
        c.execute("SELECT * FROM no_such_table")

    with pytest.raises(duckdb.CatalogException, match="no_such_table"):
        in_parallel(con, first, second)
    assert finished == ["first"]
    assert con.execute("SELECT 1").fetchone() == (1,)        # `con` is still usable


def test_an_error_of_the_first_interrupts_the_second_and_closes_its_cursor(con):
    """A long read on the cursor must not outlive the call: `con` is closed right after it."""
    cursors = []
    running = threading.Event()

    def first(c):
        assert running.wait(timeout=10)
        time.sleep(0.05)                       # the second's statement is under way
        raise KeyError("first failed")

    def second(c):
        cursors.append(c)
        running.set()
        # 10^11 pairs: minutes, if not stopped
        return c.execute("SELECT count(*) FROM range(100000) a, range(1000000) b WHERE a.range + b.range < 0").fetchone()

    begun = time.monotonic()
    with pytest.raises(KeyError, match="first failed"):
        in_parallel(con, first, second)
    assert time.monotonic() - begun < 10
    assert [t for t in threading.enumerate() if t.name == "benchwatch-reads"] == []
    with pytest.raises(duckdb.ConnectionException):
        cursors[0].execute("SELECT 1")                      # closed
    con.close()


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
    monkeypatch.setattr(status, "in_parallel", lambda c, first, second: (first(c), second(c)))
    assert main(["status", "--db", str(path)]) == 0
    assert capsys.readouterr().out == together
    assert "unknown names: 1 benchmark(s)" in together and "csv" in together

"""The one keep-or-recompute step (jobs/relations/step.py): what each plan asks of a relation,
whatever the relation (the real relations and their rows: tests/integration/test_incremental_analysis.py)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from jobs.relations import dag
from jobs.relations.base import ANALYSIS, EVERY, ITEM_SET, LINK, TABLE, UNIT_SEP, Relation
from jobs.relations.step import DAY_ONLY_PLAN, Plan, materialize

NOW = datetime(2026, 7, 1, tzinfo=timezone.utc)


def recording(name: str, unit: str, calls: list, *, rows: object = "rows", day: bool = True) -> Relation:
    def compute(inputs, units):
        calls.append((name, "compute", units))
        return rows

    def write(inputs, got, units):
        assert got == rows and inputs.computed[name] == rows
        calls.append((name, "write", units))

    def to_day(inputs, recomputed):
        assert inputs.now == NOW
        calls.append((name, "to_day", recomputed))
    return Relation(name, unit, compute, write, to_day if day else None)


def run(plan: Plan) -> list:
    calls: list = []
    relations = [recording("t", TABLE, calls), recording("a", ANALYSIS, calls), recording("e", EVERY, calls),
                 recording("nothing", TABLE, calls, rows=None)]
    materialize(None, relations, plan, NOW)   # type: ignore[arg-type]   # the fakes never touch a connection
    return calls


def test_a_full_plan_recomputes_and_writes_every_unit_and_moves_nothing():
    assert run(Plan(full=True)) == [("t", "compute", None), ("t", "write", None), ("a", "compute", None),
                                    ("a", "write", None), ("e", "compute", None), ("e", "write", None),
                                    ("nothing", "compute", None)]     # no rows: nothing written


def test_an_incremental_plan_recomputes_the_changed_tables_and_moves_the_kept_ones():
    changed = frozenset({"b:s:", "c:s:"})
    calls = run(Plan(full=False, tables=set(changed)))
    assert calls == [("t", "compute", changed), ("t", "write", changed), ("t", "to_day", changed),
                     ("a", "compute", frozenset({""})), ("a", "write", frozenset({""})),   # the analysis unit: recomputed, not moved
                     ("e", "compute", None), ("e", "write", None),
                     ("nothing", "compute", changed), ("nothing", "to_day", changed)]


def test_a_new_day_recomputes_nothing_but_the_every_day_relations_and_moves_the_rest():
    calls = run(Plan.new_day())
    assert calls == [("t", "to_day", frozenset()), ("a", "to_day", frozenset()), ("e", "compute", None),
                     ("e", "write", None), ("nothing", "to_day", frozenset())]
    assert Plan.new_day().describe() == DAY_ONLY_PLAN


def test_an_incremental_plan_without_a_changed_table_only_moves_the_tables():
    calls = run(Plan(full=False, a3_groups={("s", "b")}, link=False))
    assert ("t", "compute", frozenset()) not in calls and ("t", "to_day", frozenset()) in calls
    assert ("a", "compute", frozenset({""})) in calls


def keeping(name: str, unit: str, calls: list, *, again: frozenset = frozenset()) -> Relation:
    """A relation whose rows a later one carries into a new run: its kept units' stored rows, and
    `again`, units whose stored rows cannot stand in."""
    def compute(inputs, units):
        calls.append((name, "compute", units))
        return f"{name} computed"

    def keep(inputs, recomputed):
        calls.append((name, "keep", recomputed))
        return f"{name} kept", again
    return Relation(name, unit, compute, keep=keep)


def run_keeping(plan: Plan, again: frozenset = frozenset()) -> tuple[list, object]:
    calls: list = []
    relations = [keeping("items", ITEM_SET, calls, again=again), keeping("link", LINK, calls)]
    inputs = materialize(None, relations, plan, NOW)   # type: ignore[arg-type]
    return calls, inputs


def test_an_incremental_plan_keeps_the_unchanged_item_sets_and_the_link_and_recomputes_the_changed():
    calls, inputs = run_keeping(Plan(full=False, a3_groups={("s", "b")}, link=False))
    changed = frozenset({f"s{UNIT_SEP}b"})
    assert calls == [("items", "keep", changed), ("items", "compute", changed), ("link", "keep", frozenset())]
    assert inputs.kept == {"items": "items kept", "link": "link kept"}
    assert inputs.computed == {"items": "items computed"}      # the link: kept whole, not computed


def test_a_kept_unit_whose_stored_rows_cannot_stand_in_is_recomputed():
    bad = frozenset({f"t{UNIT_SEP}c"})
    calls, _ = run_keeping(Plan(full=False, link=True), again=bad)
    assert calls == [("items", "keep", frozenset()), ("items", "compute", bad), ("link", "keep", frozenset({""})),
                     ("link", "compute", frozenset({""}))]


def test_a_full_plan_and_a_new_day_keep_nothing():
    calls, inputs = run_keeping(Plan(full=True))
    assert calls == [("items", "compute", None), ("link", "compute", None)] and inputs.kept == {}
    calls, inputs = run_keeping(Plan.new_day())     # no new run to carry rows into
    assert calls == [] and inputs.kept == {} and inputs.computed == {}


def test_an_unknown_unit_is_refused():
    with pytest.raises(ValueError, match="unknown unit"):
        Plan(full=False).recompute("model")


def test_every_declared_relation_has_a_known_unit_and_a_unique_name_and_runs_before_what_reads_it():
    names = [r.name for r in dag.RELATIONS]
    assert len(names) == len(set(names))
    assert all(r.unit in (TABLE, ANALYSIS, EVERY, ITEM_SET, LINK) for r in dag.RELATIONS)
    # the frontier before the trends (which read its rows), every saturation row before the levels,
    # the contamination run last
    assert names.index("frontier") < names.index("trends") < names.index("levels") < names.index("contamination")
    assert names.index("post_cutoff") < names.index("levels") and names[-1] == "contamination"
    # the sources' disagreements read the scores alone: before the contamination run
    assert names.index("disagreements") < names.index("contamination")
    # the item sets' tests before A1/A2's (the run's one random stream: the signals' registry order)
    assert names.index("item_tests") < names.index("link_tests") < names.index("contamination")
    # no `write`: the relations whose rows the contamination run carries (`keep`), and the run itself
    assert [r.name for r in dag.RELATIONS if r.write is None] == ["item_tests", "link_tests", "contamination"]
    assert [r.name for r in dag.RELATIONS if r.keep is not None] == ["item_tests", "link_tests"]

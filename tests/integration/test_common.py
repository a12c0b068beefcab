"""The shared helpers of `common/` and storage's one bulk-write verb, each against an independent
statement of what it must do (not against its own output)."""

from __future__ import annotations

import json
import logging
from datetime import date, datetime, timedelta, timezone

import duckdb
import numpy as np
import pandas as pd
import pytest

from common import jsonsafe, redact, refs
from common.time import naive_utc, naive_utc_columns, to_utc, to_utc_or_none, utc_columns
from storage import db
from storage.store import open_store

# --- time ------------------------------------------------------------------------------------------

NOON_UTC = datetime(2025, 3, 1, 12, 0, tzinfo=timezone.utc)
SAME_INSTANTS = [NOON_UTC, "2025-03-01T12:00:00Z", "2025-03-01 12:00", datetime(2025, 3, 1, 12, 0),
                 datetime(2025, 3, 1, 7, 0, tzinfo=timezone(timedelta(hours=-5))), pd.Timestamp("2025-03-01 14:00+02:00"),
                 np.datetime64("2025-03-01T12:00")]


@pytest.mark.parametrize("value", SAME_INSTANTS)
def test_every_spelling_of_one_instant_is_one_utc_time(value):
    aware = to_utc(value)
    assert aware == NOON_UTC and aware.utcoffset() == timedelta(0)
    naive = naive_utc(value)
    assert naive.tzinfo is None and naive == pd.Timestamp("2025-03-01 12:00")


@pytest.mark.parametrize("missing", [None, float("nan"), pd.NaT, pd.NA, np.datetime64("NaT")])
def test_a_missing_time_is_refused_or_none(missing):
    with pytest.raises(ValueError):
        to_utc(missing)
    assert to_utc_or_none(missing) is None


def test_frame_columns_both_conventions():
    frame = pd.DataFrame({"a": ["2025-03-01T14:00:00+02:00", None], "b": [pd.Timestamp("2025-03-01 12:00"), pd.NaT]})
    naive = naive_utc_columns(frame.copy(), "a", "b")
    assert naive["a"].dt.tz is None and naive["a"][0] == pd.Timestamp("2025-03-01 12:00") and pd.isna(naive["a"][1])
    aware = utc_columns(frame.copy(), "a", "b")
    assert str(aware["b"].dt.tz) == "UTC" and aware["b"][0] == pd.Timestamp(NOON_UTC)


# --- JSON-safe --------------------------------------------------------------------------------------

def test_jsonable_gives_plain_json_types():
    value = {"i": np.int64(3), "f": np.float32(0.5), "nan": np.nan, "inf": float("inf"), "b": np.bool_(True),
             "arr": np.array([1, 2]), "t": pd.Timestamp("2025-01-02 13:00"), "d": date(2025, 1, 2), "nat": pd.NaT,
             1: ("x", None)}
    out = jsonsafe.jsonable(value)
    assert json.loads(json.dumps(out, allow_nan=False)) == {
        "i": 3, "f": 0.5, "nan": None, "inf": None, "b": True, "arr": [1, 2], "t": "2025-01-02", "d": "2025-01-02",
        "nat": None, "1": ["x", None]}
    assert type(out["i"]) is int and type(out["f"]) is float and type(out["b"]) is bool


@pytest.mark.parametrize("value, expected", [(np.int32(4), 4), (np.float64(0.25), 0.25), (np.bool_(False), False),
                                             ("0.3", None), (np.nan, None), (pd.NA, None), ([1], None), ("", None)])
def test_number(value, expected):
    out = jsonsafe.number(value)
    assert out == expected and type(out) is type(expected)


def test_missing_never_calls_a_container_missing():
    assert all(jsonsafe.is_null(v) for v in (None, np.nan, pd.NA, pd.NaT))
    assert not any(jsonsafe.is_null(v) for v in ([], [np.nan], (), {}, np.array([np.nan]), "", 0))


def test_decoded_and_dumps_round_trip():
    assert jsonsafe.decoded('{"a": [1, 2]}') == {"a": [1, 2]}
    assert jsonsafe.decoded("not json") == "not json" and jsonsafe.decoded(np.nan) is None
    assert jsonsafe.decoded({"t": pd.Timestamp("2025-01-01")}) == {"t": "2025-01-01 00:00:00"}
    assert jsonsafe.dumps_or_none({"a": 1}) == '{"a": 1}' and jsonsafe.dumps_or_none(float("nan")) is None
    assert jsonsafe.dumps_or_none('{"kept": true}') == '{"kept": true}'


# --- reference benchmarks ------------------------------------------------------------------------

def test_one_separator_rule_for_reference_benchmarks():
    assert refs.parse_refs("mmlu_pro; gpqa_diamond;;") == ("mmlu_pro", "gpqa_diamond")
    assert refs.parse_refs(["a", " b ", ""]) == ("a", "b") == refs.parse_refs(np.array(["a", "b"]))
    assert refs.parse_refs(None) == refs.parse_refs(np.nan) == refs.parse_refs(pd.NA) == refs.parse_refs("") == ()
    # another separator is not split: the registry loader then refuses the unknown id loudly
    assert refs.parse_refs("mmlu,gpqa_diamond") == ("mmlu,gpqa_diamond",)


def test_every_reader_of_the_registry_sees_the_same_lists(tmp_path):
    """registry loader, DuckDB registry tables (sync) and the analysis read (storage.reads) agree."""
    import registry
    from storage.reads import read_benchmarks
    from jobs.sync import connect_synced
    loaded = {r.id: tuple(r.reference_benchmarks) for r in registry.load_benchmarks().itertuples()}
    assert any(loaded.values())
    with connect_synced(open_store(tmp_path / "r.duckdb")) as con:
        stored = {r.id: r.reference_benchmarks for r in read_benchmarks(con).itertuples()}
    assert stored == loaded


# --- redaction ----------------------------------------------------------------------------------------

WEBHOOK = "https://hooks.slack.com/services/T0AAA/B0BBB/secretPart123"


def test_one_redaction_covers_slack_secrets_and_url_credentials():
    text = f"POST {WEBHOOK} Authorization: Bearer abc.def xoxb-1-2-3 https://h/p?api_key=K1&page=2&sig=S"
    out = redact.redact(text)
    for secret in ("secretPart123", "abc.def", "xoxb-1-2-3", "K1", "=S"):
        assert secret not in out
    assert "page=2" in out and "https://h/p?api_key=REDACTED" in out


def test_every_logger_of_the_hierarchy_is_redacted_without_a_list(caplog):
    """A logger nobody listed, several levels down, and a library logger: redacted at creation."""
    redact.install()
    redact.install()    # idempotent: one wrapper
    token = "xoxp-" + "9" * 12
    names = ["benchwatch", "benchwatch.some.new.part", "slack_sdk.web.client", "urllib3.connectionpool"]
    with caplog.at_level(logging.INFO):
        for name in names:
            logging.getLogger(name).warning("sent to %s via %s?token=tok123", token, "https://x/y")
        logging.getLogger("unrelated.lib").warning("kept %s", token)
        try:
            raise RuntimeError(WEBHOOK)
        except RuntimeError:
            logging.getLogger("benchwatch.jobs").exception("failed")
    ours = [r for r in caplog.records if r.name in names]
    assert len(ours) == len(names)
    for record in ours:
        assert token not in record.getMessage() and "tok123" not in record.getMessage()
    assert token in caplog.records[len(names)].getMessage()      # outside the hierarchies: untouched
    assert "secretPart123" not in caplog.text and "[REDACTED]" in caplog.text


# --- storage's one bulk write --------------------------------------------------------------------

@pytest.fixture()
def con():
    c = duckdb.connect(config=db.BASE_CONFIG)
    c.execute("CREATE SEQUENCE s START 1")
    c.execute("""CREATE TABLE t (id BIGINT DEFAULT nextval('s') PRIMARY KEY, k VARCHAR UNIQUE, v DOUBLE,
                                 note VARCHAR DEFAULT 'default')""")
    yield c
    c.close()


def test_insert_frame_by_name_whatever_the_local_is_called(con):
    rows = pd.DataFrame({"v": [1.5, 2.5], "k": ["a", "b"]})       # column order differs from the table
    db.insert_frame(con, "t", rows)
    t = pd.DataFrame({"k": ["evil"], "v": [9.0]})                   # a local named like the table
    db.insert_frame(con, "t", rows.assign(k=["c", "d"]))
    assert con.execute("SELECT k, v, note FROM t ORDER BY id").fetchall() == [
        ("a", 1.5, "default"), ("b", 2.5, "default"), ("c", 1.5, "default"), ("d", 2.5, "default")]
    assert len(t) == 1
    assert con.execute("SELECT count(*) FROM duckdb_views() WHERE view_name LIKE '_benchwatch_frame%'").fetchone()[0] == 0


def test_python_locals_are_not_readable_from_sql(con):
    sneaky = pd.DataFrame({"k": ["x"]})  # noqa: F841 - what a replacement scan would read
    with pytest.raises(duckdb.CatalogException):
        con.execute("SELECT * FROM sneaky")


def test_insert_frame_modes(con):
    db.insert_frame(con, "t", pd.DataFrame({"k": ["a", "b"], "v": [1.0, 2.0]}))
    # skip_existing: rows whose key the table holds are left out
    db.insert_frame(con, "t", pd.DataFrame({"k": ["a", "c"], "v": [9.0, 3.0]}), skip_existing="k")
    # ignore_conflicts + returning: only the new row's id comes back
    ids = db.insert_frame(con, "t", pd.DataFrame({"k": ["b", "d"], "v": [9.0, 4.0]}),
                          ignore_conflicts=["k"], returning=["id"])
    assert ids == [(con.execute("SELECT id FROM t WHERE k = 'd'").fetchone()[0],)]
    # columns: only these frame columns (note keeps its default although the frame has one)
    db.insert_frame(con, "t", pd.DataFrame({"k": ["e"], "v": [5.0], "note": ["ignored"]}), columns=["k", "v"])
    assert con.execute("SELECT k, v, note FROM t ORDER BY k").fetchall() == [
        ("a", 1.0, "default"), ("b", 2.0, "default"), ("c", 3.0, "default"), ("d", 4.0, "default"),
        ("e", 5.0, "default")]
    # or_replace: an upsert on the primary key
    con.execute("CREATE TABLE u (k VARCHAR PRIMARY KEY, v DOUBLE)")
    db.insert_frame(con, "u", pd.DataFrame({"k": ["a", "b"], "v": [1.0, 2.0]}))
    db.insert_frame(con, "u", pd.DataFrame({"v": [10.0, 3.0], "k": ["a", "c"]}), or_replace=True)
    assert con.execute("SELECT k, v FROM u ORDER BY k").fetchall() == [("a", 10.0), ("b", 2.0), ("c", 3.0)]


def test_insert_frame_after_a_half_read_result_and_inside_a_transaction(con):
    con.execute("SELECT * FROM range(10)").fetchone()              # left half read
    with db.transaction(con):
        db.insert_frame(con, "t", pd.DataFrame({"k": ["a"], "v": [1.0]}))
    with pytest.raises(duckdb.ConstraintException):
        with db.transaction(con):
            db.insert_frame(con, "t", pd.DataFrame({"k": ["b"], "v": [2.0]}))
            db.insert_frame(con, "t", pd.DataFrame({"k": ["a"], "v": [3.0]}))   # duplicate key: all rolled back
    assert con.execute("SELECT k FROM t").fetchall() == [("a",)]


def _conform_by_conversion(df: pd.DataFrame, columns: dict[str, str]) -> pd.DataFrame:
    """common.snapshot.conform as it was, one conversion per column, missing ones included: the
    oracle of its shortcuts (a missing column built at its dtype, one frame built at the end)."""
    out = pd.DataFrame(index=df.index)
    for col, dtype in columns.items():
        s = df[col] if col in df.columns else pd.Series([None] * len(df), index=df.index, dtype="object")
        if dtype.startswith("datetime"):
            s = pd.to_datetime(s, errors="coerce", utc=True).dt.tz_localize(None).astype(dtype)
        elif dtype == "str":
            s = s.astype("object").where(s.notna(), None)
            s = s.map(lambda v: None if v is None else str(v)).astype("object")
        elif dtype == "boolean":
            s = s.astype("boolean")
        else:
            s = pd.to_numeric(s, errors="coerce").astype(dtype)
        out[col] = s
    return out.reset_index(drop=True)


_CONFORM_VALUES = {   # what a parser may leave in a column of each kind (and some it should not)
    "str": [None, np.nan, pd.NA, pd.NaT, 0, 2.5, np.float64(0.1), np.int64(7), "x", "", True,
            pd.Timestamp("2024-01-02 03:04"), datetime(2024, 1, 2, tzinfo=timezone.utc)],
    "datetime": [None, np.nan, pd.NaT, "2024-03-01", "not a date", datetime(2024, 1, 2, 3, tzinfo=timezone.utc),
                 pd.Timestamp("2023-05-06")],
    "boolean": [None, np.nan, pd.NA, True, False, np.bool_(True)],
    "Int64": [None, np.nan, 0, np.int64(7), "12", "x"],
    "float64": [None, np.nan, pd.NA, 0, 2.5, np.float32(0.25), "0.5", "x", "inf"],
}


@pytest.mark.filterwarnings("ignore:Could not infer format")     # "not a date", read by dateutil
@pytest.mark.parametrize("seed", range(12))
def test_conform_gives_what_converting_every_column_gives(seed):
    from common.snapshot import ITEM_COLUMNS, MODEL_COLUMNS, SCORE_COLUMNS, conform
    rng = np.random.default_rng(seed)
    for columns in (SCORE_COLUMNS, ITEM_COLUMNS, MODEL_COLUMNS):
        n = int(rng.integers(0, 6))
        present = [c for c in columns if rng.random() < 0.5]
        pool = {c: _CONFORM_VALUES["datetime" if columns[c].startswith("datetime") else columns[c]] for c in present}
        df = pd.DataFrame({c: pd.Series([pool[c][int(i)] for i in rng.integers(0, len(pool[c]), n)], dtype="object")
                           for c in present} | {"extra": pd.Series(["e"] * n, dtype="object")})
        for c in present:            # as a parser's frame has them: some columns typed (str, float64, bool, ...)
            if rng.random() < 0.5:
                df[c] = df[c].infer_objects()
        df.index = rng.permutation(n) * 3 if seed % 2 else [5] * n      # a filtered frame's index; repeated labels
        got = conform(df, columns)
        pd.testing.assert_frame_equal(got, _conform_by_conversion(df, columns), check_exact=True)
        assert list(got.columns) == list(columns)
        pd.testing.assert_index_equal(got.index, pd.RangeIndex(n))


def test_each_empty_frame_is_a_frame_of_its_own():
    from common.snapshot import SCORE_COLUMNS, empty_frame
    a, b = empty_frame(SCORE_COLUMNS), empty_frame(SCORE_COLUMNS)
    a["extra"] = []
    a.loc[0] = None
    assert list(b.columns) == list(SCORE_COLUMNS) and b.empty
    built = pd.DataFrame({c: pd.Series(dtype=t) for c, t in SCORE_COLUMNS.items()})
    pd.testing.assert_frame_equal(b, built)


def test_exception_chain_follows_causes_once_and_stops_at_a_cycle():
    from common.errors import exception_chain
    a, b, c = ValueError("a"), KeyError("b"), OSError("c")
    a.__cause__, b.__context__, c.__context__ = b, c, a      # a -> b -> c -> a
    assert exception_chain(a) == [a, b, c]
    assert exception_chain(a, limit=2) == [a, b]

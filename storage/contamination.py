"""Reads for the post-cutoff slices and contamination signals, and writes of their results
(tables of migration 003).

A run is keyed by a hash of what it read (snapshot ids, parameters, seed): storing a run
replaces that run's rows as a whole, in one transaction, so re-running on unchanged data
adds nothing. The views `post_cutoff_scores`, `suspects` and `resolved_cutoffs` show the
newest run; the previous run's flags are read back for the persistence rule.
"""

from __future__ import annotations

import hashlib
import json
import logging
from datetime import datetime
from functools import lru_cache
from importlib import resources

import numpy as np
import pandas as pd

from common.jsonsafe import dumps_or_none
from common.time import naive_utc_columns, utc_columns
from storage.db import insert_frame, quote_ident, transaction
from storage.engine import duckdb
from storage.saturation import benchmark_chunks, memory_limit, shared_strings

log = logging.getLogger("benchwatch.storage")

CUTOFF_COLUMNS = ["model", "c_lo", "c_hi", "knowledge_cutoff", "cutoff_known", "cutoff_provenance", "cutoff_source",
                  "cutoff_trust",
                  "release_date", "release_provenance", "release_source", "conflict", "conflicts", "n_claims"]
SLICE_COLUMNS = ["benchmark", "model", "status", "material_start", "material_date", "c_lo", "c_hi"]
POST_COLUMNS = ["source", "benchmark", "model", "score", "n_items", "stderr", "window_start", "window_end", "low_n",
                "score_std", "score_pre", "n_pre", "stderr_pre", "pre_window_end", "n_undated"]
SUSPICION_COLUMNS = ["model", "benchmark", "source", "signal", "detail", "state", "confirmed_by",
                     "first_flagged_at", "confirmed_at", "updated_at", "run_id", "distinct_data", "snapshot_ids",
                     "data_as_of", "effect", "se", "ci_low", "ci_high", "p_value", "q_value", "evidence",
                     "resolved_at", "resolved_snapshot_ids", "resolved_data_as_of", "resolution",
                     "calibration_key"]
SIGNAL_COLUMNS = ["model", "benchmark", "source", "signal", "detail", "effect", "se", "ci_low", "ci_high", "p_value",
                  "q_value", "flagged", "status", "evidence"]
SKIP_COLUMNS = ["signal", "source", "benchmark", "model", "cutoff", "cutoff_trust", "reason"]
CALIBRATION_COLUMNS = ["signal", "trials", "tests", "p01", "p01_lo", "p01_hi", "p05", "p05_lo", "p05_hi",
                       "fw_bh", "fw_bh_lo", "fw_bh_hi", "fw_rule", "fw_rule_lo", "fw_rule_hi", "ok"]
_RUN_TABLES = ("cutoff_resolutions", "benchmark_slices", "post_cutoff_slices", "contamination_signals",
               "contamination_skips")


# --- reads -------------------------------------------------------------------------------

_HISTORY_ROWS = """
    SELECT sc.source, sc.benchmark, sc.model, sc.setting, sc.score, sc.metric, sc.stderr,
           sc.n_items, sc.snapshot_id, sn.observed_at
    FROM scores sc JOIN snapshots sn ON sn.id = sc.snapshot_id
    WHERE sc.excluded_reason = ''
      AND (sn.status IS DISTINCT FROM 'held' OR NOT coalesce(list_contains(sn.held_tables, 'scores' || chr(31) || sc.benchmark || chr(31) || coalesce(sc.table_version, '')), true))"""
_HISTORY_ORDER = "ORDER BY observed_at, snapshot_id, source, benchmark, model, setting, score"


RECENT_HISTORY_SQL = ("contamination", "recent_history.sql")   # a resource of the analysis package


@lru_cache(maxsize=1)
def recent_history_sql() -> str:
    """The pruning rule of A1/A2's history, owned by analysis/ (storage executes it)."""
    folder, name = RECENT_HISTORY_SQL
    return resources.files("analysis").joinpath(folder, name).read_text(encoding="utf-8")


def read_snapshot_history(con: duckdb.DuckDBPyConnection, reference_benchmarks: list[str] | None = None,
                          benchmarks: list[str] | None = None) -> pd.DataFrame:
    """Every usable score of every snapshot (A2 compares a series' last two values).

    With `reference_benchmarks` (the union of every benchmark's references), only the rows A1
    and A2 can read, by the rule of analysis/contamination/recent_history.sql (every row of
    those benchmarks, and of any other series the rows from its second-to-last usable snapshot
    on), one range of benchmarks at a time (the windows stay within a benchmark); `benchmarks`:
    only those benchmarks' rows (jobs.contamination.linked_benchmarks: A2 tests a benchmark
    with references and reads its references; no other row can make a test).
    """
    if reference_benchmarks is None:
        df = con.execute(f"SELECT * FROM ({_HISTORY_ROWS}) {_HISTORY_ORDER}").df()
        return naive_utc_columns(df, "observed_at")
    sql = recent_history_sql().format(history=_HISTORY_ROWS)
    with memory_limit(con):
        frames = [con.execute(sql, [chunk, sorted(reference_benchmarks)]).df().pipe(shared_strings)
                  for chunk in benchmark_chunks(con, benchmarks=benchmarks)]
    if not frames and benchmarks is not None:     # no such benchmark stored: the columns, no row
        frames = [con.execute(sql, [[""], [""]]).df()]
    if not frames:
        return read_snapshot_history(con)
    # one range of benchmarks per query (storage.saturation.benchmark_chunks), then _HISTORY_ORDER
    df = pd.concat(frames, ignore_index=True).sort_values(
        ["observed_at", "snapshot_id", "source", "benchmark", "model", "setting", "score"], kind="stable",
        ignore_index=True)
    return naive_utc_columns(df, "observed_at")


def read_item_results(con: duckdb.DuckDBPyConnection, benchmarks: list[str] | None = None) -> pd.DataFrame:
    """Item-level results of each source's newest snapshot per benchmark (view latest_item_results);
    `benchmarks`: only those."""
    df = con.execute("""SELECT i.source, i.benchmark, i.model, i.item_id, i.item_date, i.difficulty, i.platform,
                               i.score, i.snapshot_id, sn.observed_at
                        FROM latest_item_results i JOIN snapshots sn ON sn.id = i.snapshot_id
                        WHERE ? IS NULL OR list_contains(?, i.benchmark)""", [benchmarks, benchmarks]).df()
    return naive_utc_columns(df, "item_date", "observed_at")


def read_item_dates(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """The item results' keys and dates without the models (one row per source, benchmark, item,
    snapshot): what an incremental analysis needs of the item groups it does not recompute (their
    material dates, snapshots and observation times)."""
    df = con.execute("""SELECT DISTINCT i.source, i.benchmark, i.item_id, i.item_date, i.snapshot_id, sn.observed_at
                        FROM latest_item_results i JOIN snapshots sn ON sn.id = i.snapshot_id""").df()
    return naive_utc_columns(df, "item_date", "observed_at")


def read_last_post_scores(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """The newest run's post-cutoff scores (POST_COLUMNS, table post_cutoff_slices), times naive UTC."""
    df = con.execute(f"""SELECT {', '.join(POST_COLUMNS)} FROM post_cutoff_slices WHERE run_id = (
                             SELECT run_id FROM contamination_runs ORDER BY run_at DESC, run_id LIMIT 1)
                         ORDER BY source, benchmark, model""").df()
    return naive_utc_columns(df, "window_start", "window_end", "pre_window_end")


def read_previous_flags(con: duckdb.DuckDBPyConnection, run_id: str) -> pd.DataFrame:
    """The tests of the newest run other than `run_id` (the previous evaluation of other data)."""
    return _decoded_tests(con.execute(f"""
        WITH prev AS (SELECT run_id FROM contamination_runs WHERE run_id <> ? ORDER BY run_at DESC, run_id LIMIT 1)
        SELECT {_STORED_TEST} FROM contamination_signals s JOIN prev USING (run_id)""", [run_id]).df())


# a stored test as the hold and the persistence rule read it (families.previous_tests)
_STORED_TEST = ("s.model, s.benchmark, s.source, s.signal, s.detail, s.status, s.flagged, s.effect, s.se, "
                "s.ci_low, s.ci_high, s.p_value, s.q_value, s.evidence, s.run_id")


def _decoded_tests(df: pd.DataFrame) -> pd.DataFrame:
    """`df` (stored tests) with each evidence decoded from its JSON text."""
    df["evidence"] = [json.loads(v) if isinstance(v, str) else v for v in df["evidence"]]
    return df


def read_stored_tests(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """The newest stored test of each key (model, benchmark, source, signal, detail) over every run,
    evidence decoded: what a run may hold (analysis.contamination.families.holdable). A run on the
    data of an earlier run's key (only model dates changed) finds that run's tests here, which
    `read_previous_flags` (another key's run) does not return."""
    # the newest run of each key by its keys alone, then that row's numbers and evidence: the
    # window sorts six short columns of every run's tests, not their evidence (~4.6 KB a test on
    # the real history; a year of daily runs is ~170k tests)
    return _decoded_tests(con.execute(f"""
        WITH newest AS (
            SELECT s.run_id, s.model, s.benchmark, s.source, s.signal, s.detail
            FROM contamination_signals s JOIN contamination_runs r USING (run_id)
            QUALIFY row_number() OVER (PARTITION BY s.model, s.benchmark, s.source, s.signal, s.detail
                                       ORDER BY r.run_at DESC, s.run_id) = 1)
        SELECT {_STORED_TEST}
        FROM contamination_signals s JOIN newest USING (run_id, model, benchmark, source, signal, detail)
        ORDER BY s.signal, s.source, s.benchmark, s.model, s.detail""").df())


def read_last_run(con: duckdb.DuckDBPyConnection) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The newest run's tests (SIGNAL_COLUMNS, evidence as stored JSON) and its models not tested
    (SKIP_COLUMNS): what an incremental analysis keeps of the groups it does not recompute."""
    run = con.execute("SELECT run_id FROM contamination_runs ORDER BY run_at DESC, run_id LIMIT 1").fetchone()
    run_id = None if run is None else run[0]
    tests = con.execute(f"SELECT {', '.join(SIGNAL_COLUMNS)} FROM contamination_signals WHERE run_id = ? "
                        "ORDER BY signal, source, benchmark, model, detail", [run_id]).df()
    skips = con.execute(f"SELECT {', '.join(SKIP_COLUMNS)} FROM contamination_skips WHERE run_id = ? "
                        "ORDER BY signal, source, benchmark, model", [run_id]).df()
    return tests, naive_utc_columns(skips, "cutoff")


_SUSPICION_TIMES = ("first_flagged_at", "confirmed_at", "updated_at", "data_as_of", "resolved_at",
                    "resolved_data_as_of")


def read_suspicions(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Every stored contamination suspicion (table contamination_suspicions), JSON decoded, times naive UTC."""
    df = con.execute(f"SELECT {', '.join(SUSPICION_COLUMNS)} FROM contamination_suspicions "
                     "ORDER BY signal, source, benchmark, model, detail").df()
    for col in ("evidence", "resolution"):
        df[col] = [json.loads(v) if isinstance(v, str) else v for v in df[col]]
    for col in ("snapshot_ids", "resolved_snapshot_ids"):
        df[col] = [_ids(v) for v in df[col]]
    return naive_utc_columns(df, *_SUSPICION_TIMES)


def _ids(v: object) -> list[int] | None:
    """A BIGINT[] cell as a list of ints (None for NULL)."""
    if isinstance(v, (list, tuple, np.ndarray)):
        return [int(i) for i in v]
    return None


def read_snapshot_dates(con: duckdb.DuckDBPyConnection, ids: list[int]) -> dict[int, pd.Timestamp]:
    """snapshot id -> observed_at (naive UTC) of the given snapshots."""
    if not ids:
        return {}
    df = naive_utc_columns(con.execute("SELECT id, observed_at FROM snapshots WHERE list_contains(?, id)",
                                       [sorted({int(i) for i in ids})]).df(), "observed_at")
    return dict(zip(df["id"].astype(int), df["observed_at"]))


def read_suspects(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """The newest run's tests (view `suspects`), evidence decoded."""
    df = con.execute("SELECT * FROM suspects ORDER BY signal, source, benchmark, model, detail").df()
    df["evidence"] = [json.loads(v) if isinstance(v, str) else v for v in df["evidence"]]
    return df


def read_not_tested(con: duckdb.DuckDBPyConnection, *, trust: str | None = None) -> pd.DataFrame:
    """The newest run's models a signal could not test, with the reason (view contamination_not_tested);
    `trust` keeps those whose cutoff has that trust (e.g. 'placeholder')."""
    where, params = ("WHERE cutoff_trust = ?", [trust]) if trust else ("", [])
    return con.execute(f"SELECT {', '.join(SKIP_COLUMNS)} FROM contamination_not_tested {where} "
                       "ORDER BY signal, source, benchmark, model", params).df()


def read_post_cutoff_scores(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    return con.execute("SELECT * FROM post_cutoff_scores ORDER BY source, benchmark, model").df()


# --- writes ------------------------------------------------------------------------------

# The newest contamination run, as `read_last_run` reads it.
_LAST_RUN = "(SELECT run_id FROM contamination_runs ORDER BY run_at DESC, run_id LIMIT 1)"


def move_run_to_day(con: duckdb.DuckDBPyConnection, now: datetime, *, resolved_state: str) -> None:
    """The newest run moved to the day of `now` without new data (jobs/relations/contamination.py):
    its `run_at`, its post-cutoff scores' `window_end` (= now) and the `updated_at` of the open
    suspicions it tested (analysis.contamination.suspicions: a run over the same data moves
    nothing else; `resolved_state`: the state a run leaves alone), in one transaction."""
    with transaction(con):
        con.execute(f"UPDATE contamination_runs SET run_at = $now WHERE run_id = {_LAST_RUN}", {"now": now})
        con.execute(f"""UPDATE post_cutoff_slices SET window_end = timezone('UTC', CAST($now AS TIMESTAMPTZ))
                        WHERE run_id = {_LAST_RUN}""", {"now": now})
        con.execute(f"""
            UPDATE contamination_suspicions s SET updated_at = $now
            WHERE s.state <> $resolved AND s.run_id = {_LAST_RUN} AND EXISTS (
                SELECT 1 FROM contamination_signals t
                WHERE t.run_id = s.run_id AND t.model = s.model AND t.benchmark = s.benchmark
                  AND coalesce(t.source, '') = s.source AND t.signal = s.signal
                  AND coalesce(t.detail, '') = s.detail)""", {"now": now, "resolved": resolved_state})


def _suspicion_rows(suspicions: pd.DataFrame) -> pd.DataFrame:
    missing = set(SUSPICION_COLUMNS) - set(suspicions.columns)
    if missing:
        raise ValueError(f"[storage] contamination_suspicions: frame lacks column(s) {sorted(missing)}")
    out = suspicions[SUSPICION_COLUMNS].copy()
    for col in ("evidence", "resolution"):
        out[col] = out[col].map(dumps_or_none)
    for col in ("snapshot_ids", "resolved_snapshot_ids"):
        out[col] = [_ids(v) for v in out[col]]
    out["distinct_data"] = out["distinct_data"].astype(int)
    return utc_columns(out, *_SUSPICION_TIMES)


def run_key(snapshot_ids: list[int], parameters: dict, seed: int) -> str:
    """The content key of a run: same inputs and parameters -> same run_id -> rows replaced."""
    payload = json.dumps({"snapshots": sorted(int(s) for s in snapshot_ids), "parameters": parameters,
                          "seed": int(seed)}, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def _frame(df: pd.DataFrame, columns: list[str], run_id: str, where: str) -> pd.DataFrame:
    missing = set(columns) - set(df.columns)
    if missing:
        raise ValueError(f"[storage] {where}: frame lacks column(s) {sorted(missing)}")
    out = df[columns].copy()
    out.insert(0, "run_id", run_id)
    return out


def store_contamination_run(con: duckdb.DuckDBPyConnection, *, run_id: str, run_at: datetime,
                            as_of: datetime | None, snapshot_ids: list[int], seed: int, parameters: dict,
                            cutoffs: pd.DataFrame, slices: pd.DataFrame, post_scores: pd.DataFrame,
                            signals: pd.DataFrame, suspicions: pd.DataFrame | None = None,
                            skipped: pd.DataFrame | None = None) -> None:
    """Write one run (replacing an earlier run with the same key) in one transaction; with
    `suspicions`, the suspicion states after it (every row: the table is replaced) in the same one."""
    cut = _frame(cutoffs, CUTOFF_COLUMNS, run_id, "cutoff_resolutions")
    cut["conflicts"] = cut["conflicts"].map(dumps_or_none)
    sl = _frame(slices, SLICE_COLUMNS, run_id, "benchmark_slices")
    post = _frame(post_scores, POST_COLUMNS, run_id, "post_cutoff_slices")
    sig = _frame(signals, SIGNAL_COLUMNS, run_id, "contamination_signals")
    sig["evidence"] = sig["evidence"].map(dumps_or_none)
    run = pd.DataFrame([{"run_id": run_id, "run_at": run_at, "as_of": as_of,
                         "snapshot_ids": sorted(int(s) for s in snapshot_ids), "seed": int(seed),
                         "parameters": json.dumps(parameters, default=str), "n_tests": len(sig),
                         "n_flagged": int(sig["flagged"].sum()) if len(sig) else 0}])
    frames = {"cutoff_resolutions": cut, "benchmark_slices": sl, "post_cutoff_slices": post,
              "contamination_signals": sig}
    if skipped is not None and len(skipped):
        frames["contamination_skips"] = _frame(skipped.assign(source=skipped["source"].fillna("")), SKIP_COLUMNS,
                                               run_id, "contamination_skips")
    with transaction(con):
        for table in _RUN_TABLES:
            con.execute(f"DELETE FROM {quote_ident(table)} WHERE run_id = ?", [run_id])
        con.execute("DELETE FROM contamination_runs WHERE run_id = ?", [run_id])
        insert_frame(con, "contamination_runs", run)
        for table, frame in frames.items():
            if len(frame):
                insert_frame(con, table, frame)
        if suspicions is not None:
            con.execute("DELETE FROM contamination_suspicions")
            if len(suspicions):
                insert_frame(con, "contamination_suspicions", _suspicion_rows(suspicions))
    log.info("[contamination] stored run %s: %d model date(s), %d slice(s), %d post-cutoff score(s), %d test(s), "
             "%d flagged", run_id, len(cut), len(sl), len(post), len(sig), int(run.at[0, "n_flagged"]))


# --- placebo calibrations (migration 050) --------------------------------------------------------

def store_calibration(con: duckdb.DuckDBPyConnection, table: pd.DataFrame, *, calibrated_at: datetime,
                      seed: int) -> str:
    """Store one `benchwatch calibrate` result (analysis.contamination.summarize_placebo's frame, one
    row per signal) in one transaction, with the newest observation of the data (`as_of`); returns
    its calibration id (a hash of its content and time)."""
    row = con.execute("SELECT max(observed_at) FROM snapshots").fetchone()
    as_of = row[0] if row else None
    missing = set(CALIBRATION_COLUMNS) - set(table.columns)
    if missing:
        raise ValueError(f"[storage] contamination_calibrations: frame lacks column(s) {sorted(missing)}")
    rows = table[CALIBRATION_COLUMNS].copy()
    key = hashlib.sha256(json.dumps({"at": str(calibrated_at), "seed": int(seed),
                                     "rows": rows.astype(str).to_dict("records")}, sort_keys=True).encode()).hexdigest()[:16]
    rows["ok"] = [None if v is None or (isinstance(v, float) and np.isnan(v)) else bool(v) for v in rows["ok"]]
    out = pd.DataFrame({"calibration_id": key, "calibrated_at": calibrated_at, "as_of": as_of,
                        "signal": rows["signal"], "trials": rows["trials"].astype(int), "seed": int(seed),
                        "tests": rows["tests"].fillna(0).astype(int)})
    for col in CALIBRATION_COLUMNS[3:]:
        out[col] = rows[col].to_numpy(dtype=object if col == "ok" else float)
    with transaction(con):
        con.execute("DELETE FROM contamination_calibrations WHERE calibration_id = ?", [key])
        insert_frame(con, "contamination_calibrations", out)
    return key


def store_set_calibrations(con: duckdb.DuckDBPyConnection, table: pd.DataFrame, *, calibrated_at: datetime) -> int:
    """Store item-set calibrations (analysis.contamination.set_calibration's frame, migration 077) in
    one transaction; a row whose key is stored already is kept as it is (the same inputs gave it).
    Returns the rows added."""
    # here, not at the top: the analysis package reaches scipy, and notify reads this module
    from analysis.contamination.set_calibration import SET_CALIBRATION_COLUMNS
    missing = set(SET_CALIBRATION_COLUMNS) - set(table.columns)
    if missing:
        raise ValueError(f"[storage] contamination_set_calibrations: frame lacks column(s) {sorted(missing)}")
    if table.empty:
        return 0
    out = table[SET_CALIBRATION_COLUMNS].copy()
    out.insert(4, "calibrated_at", calibrated_at)
    out["ok"] = [None if v is None or (isinstance(v, float) and np.isnan(v)) else bool(v) for v in out["ok"]]
    out["as_of"] = pd.to_datetime(out["as_of"])
    for col in ("trials", "seed", "tests"):
        out[col] = out[col].fillna(0).astype("int64")
    out["units"] = out["units"].astype("Int64")
    out = utc_columns(out, "calibrated_at", "as_of")
    with transaction(con):
        known = _set_calibration_keys(con)
        fresh = out[[(r.signal, r.source, r.benchmark, r.input_key) not in known for r in out.itertuples()]]
        if len(fresh):
            insert_frame(con, "contamination_set_calibrations", fresh)
    return len(fresh)


def _set_calibration_keys(con: duckdb.DuckDBPyConnection) -> set[tuple[str, str, str, str]]:
    return set(con.execute("SELECT signal, source, benchmark, input_key FROM contamination_set_calibrations").fetchall())


def read_set_calibration_keys(con: duckdb.DuckDBPyConnection) -> set[tuple[str, str, str, str]]:
    """(signal, source, benchmark, input_key) of every stored item-set calibration (migration 077)."""
    return _set_calibration_keys(con)


def read_set_calibrations(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Every stored item-set calibration (contamination_set_calibrations), times naive UTC."""
    df = con.execute("SELECT * FROM contamination_set_calibrations "
                     "ORDER BY signal, source, benchmark, calibrated_at, input_key").df()
    return naive_utc_columns(df, "calibrated_at", "as_of")


def read_latest_calibration(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """The newest stored calibration of each signal (contamination_calibrations), times naive UTC;
    no rows before `benchwatch calibrate` stored one."""
    df = con.execute("""SELECT * FROM contamination_calibrations
                        QUALIFY row_number() OVER (PARTITION BY signal ORDER BY calibrated_at DESC, calibration_id) = 1
                        ORDER BY signal""").df()
    return naive_utc_columns(df, "calibrated_at", "as_of")

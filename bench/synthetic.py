"""The bench's inputs, made for it: random score histories, CSV files of unique (and of
rejected) rows, and synthetic DuckDB histories written straight with SQL (the bench's own setup,
not benchwatch's ingest), so that a line measures benchwatch's step and not the making of its input.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from jobs.sync import connect_synced
from storage.engine import duckdb
from storage.store import open_store


def random_history(n_bench: int, n_models: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    n = n_bench * n_models
    days = rng.integers(0, 1500, n)
    score = np.clip(0.2 + 0.7 * (1 - np.exp(-days / 600)) + rng.normal(0, 0.05, n), 0.001, 0.999)
    return pd.DataFrame({"benchmark": np.repeat([f"b{b:03d}" for b in range(n_bench)], n_models),
                         "model": [f"m{i}" for i in range(n)], "score": score,
                         "date": pd.Timestamp("2021-01-01") + pd.to_timedelta(days, "D")})


def write_scores_csv(path: Path, n_rows: int, reject_share: float = 0.0, seed: int = 2) -> None:
    """n_rows unique (model, benchmark) scores; `reject_share` of them repeat an earlier row's
    (model, benchmark) with another score (rejected as duplicates)."""
    rng = np.random.default_rng(seed)
    n_bench = 1000
    n_unique = int(n_rows * (1 - reject_share))
    idx = np.arange(n_unique)
    model = "model-" + pd.Series(idx // n_bench).astype(str)
    bench = "bench_" + pd.Series(idx % n_bench).astype(str)
    df = pd.DataFrame({"model": model, "benchmark": bench, "score": rng.uniform(0, 1, n_unique).round(4),
                       "metric": "proportion", "n_items": 500})
    if n_rows > n_unique:
        dup = df.sample(n_rows - n_unique, replace=True, random_state=seed).assign(score=lambda d: d["score"] / 2)
        df = pd.concat([df, dup], ignore_index=True)
    df.to_csv(path, index=False)


def synthetic_db(path: Path, n_models: int, n_bench: int, n_weeks: int, n_items: int, n_item_models: int,
                 n_sources: int = 1) -> None:
    """A history written straight with SQL (the bench's own setup, not benchwatch's ingest):
    n_weeks weekly snapshots of n_models x n_bench proportion scores (n_items=500 per benchmark;
    each week's score a little noisier than the model's level), model release dates and
    knowledge cutoffs over 3 years, and one snapshot of n_items dated items x n_item_models.
    The registry is synced first and the identity columns written as ingest writes them
    (registry.identity gives these names variant '', population 'models'), so `analyze`
    measures the analysis, not a one-time re-identification of every stored row. With
    `n_sources` > 1 the benchmarks are split over sources `syn00`, `syn01`, … (benchmark b from
    source b mod n_sources), each with its own weekly snapshot."""
    src = "'csv'" if n_sources == 1 else f"printf('syn%02d', b % {n_sources})"
    src_w = "'csv'" if n_sources == 1 else f"printf('syn%02d', s)"
    with connect_synced(open_store(path)) as con:
        con.execute("SET preserve_insertion_order = false")
        con.execute(f"""
            INSERT INTO snapshots (id, source, sha256, blob_sha256, file_names, observed_at, first_seen, last_seen,
                                   origin, parser_version, n_scores, n_items, n_models, n_rejects, status)
            SELECT w * {n_sources} + s + 1, {src_w}, 'syn' || w || '-' || s, ['syn' || w || '-' || s], ['syn.csv'],
                   TIMESTAMPTZ '2024-01-07' + to_weeks(w::INT),
                   TIMESTAMPTZ '2024-01-07' + to_weeks(w::INT), TIMESTAMPTZ '2024-01-07' + to_weeks(w::INT),
                   'ingest', 1, {n_models * n_bench // n_sources}, 0, 0, 0, 'ok'
            FROM range({n_weeks}) r(w), range({n_sources}) q(s)""")
        con.execute(f"""
            INSERT INTO snapshots (id, source, sha256, blob_sha256, file_names, observed_at, first_seen, last_seen,
                                   origin, parser_version, n_scores, n_items, n_models, n_rejects, status)
            VALUES ({n_weeks * n_sources + 1}, 'livecodebench', 'synitems', ['synitems'], ['items.json'], TIMESTAMPTZ '2025-01-01',
                    TIMESTAMPTZ '2025-01-01', TIMESTAMPTZ '2025-01-01', 'ingest', 1, 0, {n_items * n_item_models}, 0, 0, 'ok')""")
        con.execute(f"""
            CREATE TEMP TABLE m AS SELECT i, 'synmodel-' || i AS name,
                   DATE '2021-06-01' + (hash(i) % 1000)::INT AS released,
                   0.3 + 0.6 * ((hash(i * 7) % 1000) / 1000.0) AS level
            FROM range({n_models}) r(i)""")
        con.execute(f"""
            INSERT INTO scores (snapshot_id, source, benchmark, benchmark_raw, model, model_raw, setting, score,
                                raw_value, metric, n_items, model_release_date, knowledge_cutoff, excluded_reason,
                                variant, population)
            SELECT w * {n_sources} + b % {n_sources} + 1, {src}, 'synbench_' || b, 'synbench_' || b, m.name, m.name, '',
                   least(0.999, greatest(0.001, m.level * (0.8 + 0.2 * ((hash(b) % 100) / 100.0))
                         + ((hash(m.i, b, w) % 1000) / 1000.0 - 0.5) * 0.02)),
                   NULL, 'proportion', 500, m.released, m.released - 180, '', '', 'models'
            FROM range({n_weeks}) w(w), range({n_bench}) b(b), m""")
        con.execute(f"""
            INSERT INTO item_results (snapshot_id, source, benchmark, model, model_raw, item_id, item_date,
                                      difficulty, platform, score)
            SELECT {n_weeks * n_sources + 1}, 'livecodebench', 'livecodebench', m.name, m.name, 'item' || it,
                   DATE '2023-01-01' + (it * 730 // {n_items})::INT, 'medium', 'leetcode',
                   CASE WHEN (hash(m.i, it) % 1000) / 1000.0 < m.level THEN 1.0 ELSE 0.0 END
            FROM range({n_items}) t(it), (SELECT * FROM m WHERE i < {n_item_models}) m""")
        con.execute("""
            INSERT INTO model_dates (model, model_raw, source, snapshot_id, release_date, knowledge_cutoff,
                                     provenance, observed_at)
            SELECT name, name, 'csv', 1, released, released - 180, 'leaderboard', TIMESTAMPTZ '2024-01-07' FROM m""")
        con.execute("CHECKPOINT")


def fresh_copy(db: Path, build: Callable[[Path], None]) -> None:
    """`db` as `build` writes it: written once beside it (`<name>.base.duckdb`), copied each round."""
    base = db.with_name(db.stem + ".base.duckdb")
    if not base.exists():
        build(base)
    shutil.copyfile(base, db)


def changed_source(path: Path, source: str) -> int:
    """A new weekly snapshot of `source` (one week after its newest): its newest rows again, each
    score moved a little (what a collection of a changed page stores); returns its row count."""
    with duckdb.connect(str(path)) as con:
        last, new = con.execute("SELECT max(id) FILTER (WHERE source = ?), max(id) + 1 FROM snapshots",
                                [source]).fetchone()
        con.execute("""INSERT INTO snapshots SELECT * REPLACE (? AS id, sha256 || '-next' AS sha256,
                           observed_at + INTERVAL 7 DAY AS observed_at, first_seen + INTERVAL 7 DAY AS first_seen,
                           last_seen + INTERVAL 7 DAY AS last_seen)
                       FROM snapshots WHERE id = ?""", [new, last])
        con.execute("""INSERT INTO scores SELECT * REPLACE (? AS snapshot_id,
                           least(0.999, greatest(0.001, score + ((hash(model, benchmark) % 100) / 100.0 - 0.45) * 0.02))
                           AS score)
                       FROM scores WHERE snapshot_id = ?""", [new, last])
        con.execute("CHECKPOINT")
        return int(con.execute("SELECT count(*) FROM scores WHERE snapshot_id = ?", [new]).fetchone()[0])


def year_of_hourly_fetches(db: Path) -> int:
    """Add a year of hourly collections to the fetch log: each hour every URL of the cycle's first
    run again, unchanged (one run in 97 failed with an HTTP 503, retried successfully the next hour)."""
    con = duckdb.connect(str(db))
    try:
        con.execute("""
            INSERT INTO fetches (run_id, source, url, started_at, finished_at, status, http_status, bytes, sha256,
                                 etag, last_modified, error)
            SELECT 'year-' || h.i, f.source, f.url, f.started_at - to_hours(h.i + 1), f.finished_at - to_hours(h.i + 1),
                   CASE WHEN h.i % 97 = 0 THEN 'error' ELSE 'unchanged' END, f.http_status, f.bytes, f.sha256,
                   f.etag, f.last_modified, CASE WHEN h.i % 97 = 0 THEN 'HTTP 503' END
            FROM (SELECT * FROM fetches WHERE run_id = (SELECT arg_min(run_id, started_at) FROM fetches)) f,
                 range(365 * 24) h(i)""")
        return int(con.execute("SELECT count(*) FROM fetches").fetchone()[0])
    finally:
        con.close()

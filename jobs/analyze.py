"""`benchwatch analyze` as one step: skip it when nothing changed, recompute only the units whose
inputs changed, or recompute everything (issue 23, "incremental analysis per table").

A unit is a leaderboard table (registry.tables: benchmark × source × version, or a declared pool)
or an item group A3 tests (source × benchmark). A unit's fingerprint covers everything its
results read:

- a table: every stored score row of each (source, benchmark) it draws from (all versions: a new
  release makes the old one not current), the snapshots of those sources (date, status, whether
  dated after `now`), the resolved dates and cutoffs of their models (and whether a model's
  release date is still ahead of `now`), the dated items of its benchmark (the post-cutoff
  slices' material dates), and how many of its rows have an evaluation date after `now`;
- an A3 item group: its item rows, its models' resolved dates, how many items lie after `now`;
- shared by all ('global'): the analysis code and constants, the registry tables.

The rows are hashed per unit (one scan of the score rows, which also gives the fingerprint of
the whole input); the models' dates are fingerprinted per model ('model'), and a unit holding a
model whose fingerprint changed is recomputed with the units whose rows changed.

A1 and A2 read reference benchmarks across tables and draw bootstrap replicates from one
random stream, so they are recomputed together, as a whole, when a changed table's benchmark
has or is a reference benchmark, and otherwise kept as stored. Unchanged tests enter the
family-wide Benjamini–Hochberg correction with their stored p-values (analysis.contamination.reuse).

A new day with no new data changes no fingerprint: only the day-relative columns of the trends
(`as_of`, `stale_days`) are recomputed. Everything a full run computes globally and cheaply (model
dates, slices, post-cutoff scores, levels, suspicion states) is recomputed every time.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from dataclasses import dataclass, field
from functools import lru_cache
from datetime import datetime
from pathlib import Path

import numpy as np
import pandas as pd

from common.time import naive_utc, to_utc, utcnow
from analysis.constants import SATURATION_K, SUSPICION_STATES
from jobs.sync import connect_synced
from analysis import constants
from jobs.levels import run_levels
from registry.tables import assign_tables
from storage import new_day, fingerprint as fp, reads
from storage.contamination import read_suspects
from storage.saturation import ANALYSIS_MEMORY_LIMIT, memory_limit, read_saturation_latest
from storage.store import Store
import analysis
import jobs
import registry
import storage

log = logging.getLogger("benchwatch.jobs.analyze")

UNIT_SEP = "\x1f"      # between source and benchmark in an A3 unit's key


@dataclass
class Plan:
    """What an analysis recomputes: everything (`full`), or the tables and A3 groups listed."""

    full: bool
    tables: set[str] = field(default_factory=set)
    a3_groups: set[tuple[str, str]] = field(default_factory=set)
    link: bool = True          # A1/A2 recomputed (else kept as stored)
    units: dict[str, dict[str, str]] = field(default_factory=dict)   # the fingerprints to store after

    def describe(self) -> str:
        if self.full:
            return "full"
        return (f"{len(self.tables)} table(s), {len(self.a3_groups)} A3 item group(s) recomputed"
                f"{', A1/A2 recomputed' if self.link else ''}")


def analyze(store: Store, *, now: datetime | None = None, skip_unchanged: bool = False,
            incremental: bool = True, levels_before: bool = False, stored_levels: bool = True) -> dict:
    """Recompute saturation (history, trends) and contamination signals from the stored data.

    With `skip_unchanged` (the cycle's `run`), an analysis whose inputs hash to the fingerprint of
    the last completed one (storage.fingerprint: stored data, registry, analysis code and
    constants, the UTC day) is not recomputed: the stored results are returned ("skipped": True).
    With `incremental` (the default), only the tables and item groups whose inputs changed since
    the last completed analysis are recomputed; `incremental=False` recomputes everything.
    The results are the same either way (tests/integration/test_incremental_analysis.py).
    With `levels_before`, an analysis that recomputes returns the stored levels it replaced
    ("levels_before", read in its connection before it writes: None when unreadable).
    `stored_levels=False`: a skipped analysis returns no "levels" (None; nothing to read back).
    """
    now = now or utcnow()
    with connect_synced(store) as con, memory_limit(con, ANALYSIS_MEMORY_LIMIT):
        groups = fp.score_table_groups(con, now)      # the one scan of the score rows (the plan reuses it)
        tables = fp.table_digests(con, scores=groups)
        shared = analysis_parameters(None)
        key = fp.combine(tables, {**shared, "day": _day(now)})
        stored = fp.stored_fingerprint(con)
        summary = fp.stored_summary(con) if skip_unchanged and stored == key else None
        if summary is not None:
            from storage.contamination import read_suspects
            log.info("[analyze] inputs unchanged since the last analysis: stored results kept")
            return {"saturation": pd.DataFrame(summary), "suspects": read_suspects(con),
                    "levels": read_saturation_latest(con) if stored_levels else None, "skipped": True}
        data_key = fp.combine(tables, {**shared, "after_now": new_day.day_sensitive_counts(con, now)})
        if incremental and stored is not None and fp.stored_fingerprint(con, DATA_PART) == data_key:
            return _move_to_day(con, now, key)
        from jobs.contamination import run_contamination   # scipy and the analysis: only when computing
        from jobs.saturation import run_saturation
        plan = plan_analysis(con, now, incremental=incremental, groups=groups, digests=tables)
        previous = fp.stored_summary(con) if not plan.full else None
        log.info("[analyze] %s", plan.describe())
        before = _levels_before(con) if levels_before else None
        fp.clear_fingerprint(con)
        fp.clear_fingerprint(con, DATA_PART)
        fp.clear_unit_fingerprints(con)
        if plan.full:
            saturation = run_saturation(con, now=now)
            suspects = run_contamination(con, now=now)
        else:
            # the latest scores read once for the steps (the saturation of the tables recomputed,
            # their post-cutoff scope, contamination, which reads every table's); a full analysis
            # lets each step read its own and drop it (every table's at once: ~130 MB at 10M rows)
            latest = reads.read_latest_scores(con)
            saturation = run_saturation(con, now=now, only=plan.tables, previous=pd.DataFrame(previous or []),
                                        latest=latest)
            suspects = run_contamination(con, now=now, fresh_a3=plan.a3_groups, fresh_link=plan.link, latest=latest)
        levels = read_saturation_latest(con)
        fp.store_fingerprint(con, key, utcnow(), summary=saturation.to_dict(orient="records"))
        fp.store_fingerprint(con, data_key, utcnow(), part=DATA_PART)
        fp.store_unit_fingerprints(con, plan.units, utcnow())
    out = {"saturation": saturation, "suspects": suspects, "levels": levels, "skipped": False,
           "plan": plan.describe()}
    if levels_before:
        out["levels_before"] = before
    return out


def _levels_before(con) -> pd.DataFrame | None:
    try:
        return read_saturation_latest(con)
    except Exception as exc:  # noqa: BLE001 - a store without an analysis yet: every level is new
        log.debug("[analyze] no stored levels: %s", exc)
        return None


# analysis_inputs part: the inputs' fingerprint without the day (with what lies after `now`), of
# the last completed analysis; the same on a new day means no new data (`_move_to_day`)
DATA_PART = "analyze_data"
DAY_ONLY_PLAN = "day-relative columns only (no new data)"
# the suspicion state a day move leaves alone (analysis.constants, not the contamination package: it imports scipy)
RESOLVED_STATE = SUSPICION_STATES[2]


def _day(now: datetime) -> str:
    return to_utc(now).date().isoformat()


def _move_to_day(con, now: datetime, key: str) -> dict:
    """A new day without new data: what a full analysis would compute differs from the stored
    results in the day-relative columns only (storage.new_day), which are updated in place, and
    in the levels (a pending move commits after LEVEL_DWELL_DAYS without a new snapshot:
    jobs/levels.py, pure, no scipy); no table or test is recomputed."""
    summary = fp.stored_summary(con)
    new_day.move_to_day(con, now, k=SATURATION_K, resolved_state=RESOLVED_STATE)
    run_levels(con, naive_utc(now))
    fp.store_fingerprint(con, key, utcnow(), summary=summary)
    log.info("[analyze] a new day without new data: only the day-relative columns moved to %s", _day(now))
    return {"saturation": pd.DataFrame(summary or []), "suspects": read_suspects(con),
            "levels": read_saturation_latest(con), "skipped": False, "plan": DAY_ONLY_PLAN}


def analysis_parameters(now: datetime | None) -> dict:
    """What an analysis depends on besides stored data: its code, its constants, the UTC day
    (left out with `now=None`: the part every unit shares)."""
    out = dict(_code_and_constants())
    if now is not None:
        out["day"] = _day(now)
    return out


@lru_cache(maxsize=1)
def _code_and_constants() -> tuple[tuple[str, object], ...]:
    """The hash of the analysis code and its constants, read once per process (analyze and its
    plan both need it)."""
    code = hashlib.sha256()
    roots = [Path(analysis.__file__).parent, Path(jobs.__file__).parent, Path(storage.__file__).parent]
    files = [p for root in roots for p in root.rglob("*.py")] + list(Path(analysis.__file__).parent.rglob("*.sql"))
    files += [Path(registry.__file__).parent / name for name in ("tables.py", "tables.csv")]   # the table rule
    for path in sorted(files):
        code.update(path.read_bytes())
    consts = {k: v for k, v in vars(constants).items() if k.isupper()}
    return (("code", code.hexdigest()), ("constants", consts))


# --- unit fingerprints -----------------------------------------------------------------------

def _sha(*parts: object) -> str:
    return hashlib.sha256("\n".join(str(p) for p in parts).encode()).hexdigest()


def model_hashes(claims: pd.DataFrame, now: datetime) -> dict[str, int]:
    """model -> a hash of its resolved dates and cutoff (analysis.cutoffs.resolve_model_dates: a
    claim of another model can change a model's trust) and of whether its release is still ahead."""
    from jobs.contamination import resolved_dates
    if not len(claims):
        return {}
    resolved = resolved_dates(claims).sort_values("model", kind="stable").reset_index(drop=True)
    ahead = pd.to_datetime(resolved["release_date"]) > pd.Timestamp(to_utc(now)).tz_localize(None)
    text = resolved.astype(str).assign(_ahead=ahead.astype(str))
    hashes = pd.util.hash_pandas_object(text, index=False).to_numpy(np.uint64)
    return dict(zip(resolved["model"].astype(str), (int(h) for h in hashes)))


def _group_digests(rows: pd.DataFrame, keys: list[str]) -> pd.Series:
    """keys -> "count:xor:future" of `rows` (storage.fingerprint's groups, summed over the rest of
    their keys: a table's units cover every version of its (source, benchmark))."""
    if rows.empty:
        return pd.Series(dtype="object")
    g = rows.assign(xor=rows["xor"].astype(np.uint64)).groupby(keys, sort=True)
    xor = g["xor"].agg(lambda v: int(np.bitwise_xor.reduce(v.to_numpy(np.uint64))))
    return g["n"].sum().astype(str) + ":" + xor.astype(str) + ":" + g["future"].sum().astype(str)


def unit_fingerprints(scores: pd.DataFrame, items: pd.DataFrame, models: dict[str, int],
                      shared: str) -> dict[str, dict[str, str]]:
    """part -> key -> fingerprint: 'global' (`shared`), 'table' (table_id), 'a3' (source␟benchmark),
    'model' (model: its hash, `model_hashes`).

    `scores`/`items`: storage.fingerprint.score_table_groups / item_groups. A unit's own
    fingerprint covers its rows; the dates of its models are the 'model' part, compared one
    model at a time (`plan_analysis`: a unit with a changed model is recomputed), so the rows
    are grouped per unit, not per unit and model."""
    out: dict[str, dict[str, str]] = {"global": {"": shared}, "table": {}, "a3": {},
                                      "model": {m: str(h) for m, h in models.items()}}
    item_groups = _group_digests(items, ["source", "benchmark"])
    for (source, bench), digest in item_groups.items():
        out["a3"][f"{source}{UNIT_SEP}{bench}"] = _sha(shared, digest)
    if scores.empty:
        return out
    by_bench: dict[str, list[str]] = {}
    for (source, bench), digest in item_groups.items():
        by_bench.setdefault(str(bench), []).append(f"{source}={digest}")
    groups = _group_digests(scores, ["source", "benchmark"])
    for t, groups_of in table_members(scores).items():
        bench = next(iter(groups_of))[1]
        out["table"][t] = _sha(shared, *(f"{s}/{b}={groups[(s, b)]}" for s, b in sorted(groups_of)),
                               "items", *sorted(by_bench.get(bench, [])))
    return out


def table_members(scores: pd.DataFrame) -> dict[str, set[tuple[str, str]]]:
    """table_id -> the (source, benchmark) pairs whose rows it draws from (registry.tables)."""
    versions = assign_tables(scores[["source", "benchmark", "table_version"]].drop_duplicates())
    members: dict[str, set[tuple[str, str]]] = {}
    for t, s, b in zip(versions["table_id"], versions["source"], versions["benchmark"]):
        members.setdefault(str(t), set()).add((str(s), str(b)))
    return members


def plan_analysis(con, now: datetime, *, incremental: bool = True, groups: pd.DataFrame | None = None,
                  digests: list[str] | None = None) -> Plan:
    """Which units changed since the last completed analysis (storage.fingerprint, migration 030).

    `groups`, `digests`: storage.fingerprint.score_table_groups and table_digests of this
    analysis, when it has them (not read again)."""
    from jobs.contamination import linked_benchmarks
    registry_names = {t for t, _ in fp.REGISTRY_TABLES}
    registry = [d for d in digests if d.split(":", 1)[0] in registry_names] if digests is not None \
        else fp.table_digests(con, fp.REGISTRY_TABLES)
    shared = _sha(json.dumps(analysis_parameters(None), sort_keys=True, default=str), fp.combine(registry, {}))
    scores = fp.score_table_groups(con, now) if groups is None else groups
    units = unit_fingerprints(scores, fp.item_groups(con, now),
                              model_hashes(reads.read_model_date_claims(con), now), shared)
    stored = {part: fp.stored_unit_fingerprints(con, part) for part in units}
    if not incremental or stored["global"].get("") != shared or fp.stored_summary(con) is None:
        return Plan(full=True, units=units)

    def changed(part: str) -> set[str]:
        now_, before = units[part], stored[part]
        return {k for k in set(now_) | set(before) if now_.get(k) != before.get(k)}

    tables = changed("table")
    a3 = {tuple(k.split(UNIT_SEP, 1)) for k in changed("a3")}
    # the units holding a model whose dates or cutoff changed (its own rows may not have)
    score_pairs, item_pairs = fp.models_in(con, sorted(changed("model")))
    if score_pairs or item_pairs:
        item_benches = {b for _, b in item_pairs}
        tables |= {t for t, pairs in table_members(scores).items()
                   if pairs & score_pairs or any(b in item_benches for _, b in pairs)}
        a3 |= item_pairs
    benches = {t.split(":", 1)[0] for t in tables}
    link = bool(benches & linked_benchmarks(reads.read_benchmarks(con)))
    return Plan(full=False, tables=tables, a3_groups=a3, link=link, units=units)   # type: ignore[arg-type]

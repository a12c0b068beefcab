"""The one keep-or-recompute step of `benchwatch analyze` (issue 23's incremental analysis, as one
setting of every relation rather than a layer per relation; issue 52).

`plan` compares each unit's input fingerprint with the one the last completed analysis stored
(storage.fingerprint, migration 030) and says, per unit kind, what changed; `materialize` then
runs every relation: the units that changed are recomputed and their rows replaced, the others
are kept, and only their day-relative columns move to `now`. The cases:

- full (`Plan.full`: no stored fingerprints, other code or registry, or asked for): every unit;
- incremental: the tables and A3 item groups whose fingerprint changed, and those holding a
  model whose dates changed; A1/A2's link when a changed table's benchmark has or is a
  reference; a kept unit whose stored rows cannot stand in (`Relation.keep`) too;
- a new day without new data (`Plan.day_only`, decided by jobs/analyze.py before any unit is
  fingerprinted): no unit changed, so every relation is kept and moved to the day.

A unit is a leaderboard table (registry.tables: benchmark × source × version, or a declared pool),
an item group A3 tests (source × benchmark; unit kind `item_set`) or A1/A2's link (`link`: decided
from the tables, see `plan`). A unit's fingerprint covers everything its results read:

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
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

import analysis
import jobs
import registry
import storage
from analysis import constants
from common import table_ids
from common.time import to_utc
from jobs.relations.base import ANALYSIS, EVERY, ITEM_SET, LINK, TABLE, UNIT_SEP, Inputs, Relation
from registry.tables import assign_tables, table_key
from storage import fingerprint as fp, reads
from storage.engine import duckdb

log = logging.getLogger("benchwatch.jobs.relations")


@dataclass
class Plan:
    """What an analysis recomputes: everything (`full`), nothing but the day (`day_only`), or the
    tables and A3 groups listed (A1/A2 with `link`)."""

    full: bool
    tables: set[str] = field(default_factory=set)
    a3_groups: set[tuple[str, str]] = field(default_factory=set)
    link: bool = True          # A1/A2 recomputed (else kept as stored)
    units: dict[str, dict[str, str]] = field(default_factory=dict)   # the fingerprints to store after
    day_only: bool = False

    @classmethod
    def new_day(cls) -> "Plan":
        return cls(full=False, link=False, day_only=True)

    def recompute(self, unit: str) -> frozenset[str] | None:
        """The units of kind `unit` to recompute: None for every unit, else those listed (maybe none)."""
        if self.full or unit == EVERY:
            return None
        if unit == TABLE:
            return frozenset(self.tables)
        if unit == ANALYSIS:
            return frozenset() if self.day_only else frozenset({""})
        if unit == ITEM_SET:
            return frozenset(f"{s}{UNIT_SEP}{b}" for s, b in self.a3_groups)
        if unit == LINK:
            return frozenset({""}) if self.link else frozenset()
        raise ValueError(f"[analyze] unknown unit {unit!r}")

    def describe(self) -> str:
        if self.full:
            return "full"
        if self.day_only:
            return DAY_ONLY_PLAN
        return (f"{len(self.tables)} table(s), {len(self.a3_groups)} A3 item group(s) recomputed"
                f"{', A1/A2 recomputed' if self.link else ''}")


DAY_ONLY_PLAN = "day-relative columns only (no new data)"


def materialize(con: duckdb.DuckDBPyConnection, relations: Sequence[Relation], plan: Plan,
                now: datetime) -> Inputs:
    """Run `relations` in order under `plan`: per relation, recompute and write the units that
    changed, and move the kept units' day-relative columns to `now`. Returns the inputs, with
    what each relation computed (`computed`)."""
    inputs = Inputs(con, now, plan)
    for relation in relations:
        units = plan.recompute(relation.unit)
        if units is not None and relation.keep is not None and not plan.day_only:
            # carried into the new run: the stored rows of the units kept; those that cannot stand in are recomputed
            inputs.kept[relation.name], again = relation.keep(inputs, units)
            units = units | again
        if units is None or units:
            rows = relation.compute(inputs, units)
            inputs.computed[relation.name] = rows
            if rows is not None and relation.write is not None:
                relation.write(inputs, rows, units)
        kept = units is not None and (relation.unit == TABLE or not units)
        if kept and relation.to_day is not None:
            relation.to_day(inputs, units or frozenset())
    return inputs


# --- the fingerprints ------------------------------------------------------------------------

def day(now: datetime) -> str:
    return to_utc(now).date().isoformat()


def analysis_parameters(now: datetime | None) -> dict:
    """What an analysis depends on besides stored data: its code, its constants, the UTC day
    (left out with `now=None`: the part every unit shares)."""
    out = dict(_code_and_constants())
    if now is not None:
        out["day"] = day(now)
    return out


@lru_cache(maxsize=1)
def _code_and_constants() -> tuple[tuple[str, object], ...]:
    """The hash of the analysis code and its constants, read once per process (analyze and its
    plan both need it)."""
    code = hashlib.sha256()
    roots = [Path(analysis.__file__).parent, Path(jobs.__file__).parent, Path(storage.__file__).parent]
    files = [p for root in roots for p in root.rglob("*.py")] + list(Path(analysis.__file__).parent.rglob("*.sql"))
    files += [Path(registry.__file__).parent / name for name in ("tables.py", "tables.csv")]   # the table rule
    files.append(Path(table_ids.__file__))                                                     # and its id
    for path in sorted(files):
        code.update(path.read_bytes())
    consts = {k: v for k, v in vars(constants).items() if k.isupper()}
    return (("code", code.hexdigest()), ("constants", consts))


def _sha(*parts: object) -> str:
    return hashlib.sha256("\n".join(str(p) for p in parts).encode()).hexdigest()


def model_hashes(claims: pd.DataFrame, now: datetime) -> dict[str, int]:
    """model -> a hash of its resolved dates and cutoff (analysis.cutoffs.resolve_model_dates: a
    claim of another model can change a model's trust) and of whether its release is still ahead."""
    from jobs.contamination import resolved_dates   # here: it reaches scipy, which an unchanged analysis never loads
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
    model at a time (`plan`: a unit with a changed model is recomputed), so the rows are grouped
    per unit, not per unit and model."""
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


def plan(con: duckdb.DuckDBPyConnection, now: datetime, *, incremental: bool = True,
         groups: pd.DataFrame | None = None, digests: list[str] | None = None,
         stored: fp.Stored | None = None) -> Plan:
    """Which units changed since the last completed analysis (storage.fingerprint, migration 030).

    `groups`, `digests`, `stored`: storage.fingerprint.score_table_groups, table_digests and
    read_stored of this analysis, when it has them (not read again)."""
    from jobs.contamination import linked_benchmarks   # here: it reaches scipy (see model_hashes)
    registry_names = {t for t, _ in fp.REGISTRY_TABLES}
    registry_digests = [d for d in digests if d.split(":", 1)[0] in registry_names] if digests is not None \
        else fp.table_digests(con, fp.REGISTRY_TABLES)
    shared = _sha(json.dumps(analysis_parameters(None), sort_keys=True, default=str), fp.combine(registry_digests, {}))
    scores = fp.score_table_groups(con, now) if groups is None else groups
    units = unit_fingerprints(scores, fp.item_groups(con, now),
                              model_hashes(reads.read_model_date_claims(con), now), shared)
    last = fp.read_stored(con) if stored is None else stored
    if not incremental or last.unit_fingerprints("global").get("") != shared or last.summary() is None:
        return Plan(full=True, units=units)

    def changed(part: str) -> set[str]:
        now_, before = units[part], last.unit_fingerprints(part)
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
    benches = {table_key(t).benchmark for t in tables}   # a unit's key is its table id alone
    link = bool(benches & linked_benchmarks(reads.read_benchmarks(con)))
    return Plan(full=False, tables=tables, a3_groups=a3, link=link, units=units)   # type: ignore[arg-type]

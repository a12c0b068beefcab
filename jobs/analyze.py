"""`benchwatch analyze` as one step: skip it when nothing changed, else run the derived relations
(jobs/relations/dag.py) through the one keep-or-recompute step (jobs/relations/step.py): every
unit (a full analysis), the units whose inputs changed (issue 23, "incremental analysis per
table"), or none but the day.

What decides, in order (storage.fingerprint):

- the inputs' fingerprint with the UTC day equal to the last completed analysis' (`skip_unchanged`,
  the cycle's `run`): nothing to do, the stored results are returned;
- the inputs' fingerprint without the day, with what lies after `now` (part `analyze_data`),
  equal: a new day without new data, `Plan.new_day()`: every relation is kept and only its
  day-relative columns move (the levels are recomputed: a pending move commits after
  LEVEL_DWELL_DAYS without a new snapshot);
- else the units' fingerprints (`step.plan`): full, or the units that changed.
"""

from __future__ import annotations

import logging
from datetime import datetime

import pandas as pd

from common.time import utcnow
from jobs.relations import step
from jobs.relations.step import DAY_ONLY_PLAN, Plan, analysis_parameters, day
from jobs.sync import connect_synced
from storage import fingerprint as fp
from storage.contamination import read_suspects
from storage.saturation import ANALYSIS_MEMORY_LIMIT, memory_limit, read_saturation_latest
from storage.store import Store

log = logging.getLogger("benchwatch.jobs.analyze")

# analysis_inputs part: the inputs' fingerprint without the day (with what lies after `now`), of
# the last completed analysis; the same on a new day means no new data (`Plan.new_day`)
DATA_PART = "analyze_data"
__all__ = ["DATA_PART", "DAY_ONLY_PLAN", "analyze"]


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
        key = fp.combine(tables, {**shared, "day": day(now)})
        stored = fp.read_stored(con)       # the last analysis' fingerprints, read once (the plan reads them too)
        summary = stored.summary() if skip_unchanged and stored.fingerprint() == key else None
        if summary is not None:
            log.info("[analyze] inputs unchanged since the last analysis: stored results kept")
            return {"saturation": pd.DataFrame(summary), "suspects": read_suspects(con),
                    "levels": read_saturation_latest(con) if stored_levels else None, "skipped": True}
        data_key = fp.combine(tables, {**shared, "after_now": fp.day_sensitive_counts(con, now)})
        day_only = incremental and stored.fingerprint() is not None and stored.fingerprint(DATA_PART) == data_key
        plan = Plan.new_day() if day_only else \
            step.plan(con, now, incremental=incremental, groups=groups, digests=tables, stored=stored)
        previous = stored.summary() if not plan.full else None
        log.info("[analyze] %s", plan.describe())
        before = _levels_before(con) if levels_before and not day_only else None
        if not day_only:     # forgotten until the analysis completes: a failed one is recomputed whole
            fp.clear_fingerprint(con)
            fp.clear_fingerprint(con, DATA_PART)
            fp.clear_unit_fingerprints(con)
        from jobs.relations.dag import RELATIONS    # the analysis and its imports: only when computing
        from jobs.saturation import summary as saturation_summary
        inputs = step.materialize(con, RELATIONS, plan, now)
        saturation = pd.DataFrame(previous or []) if day_only else \
            saturation_summary(inputs, pd.DataFrame(previous or []))
        suspects = read_suspects(con) if day_only else inputs.computed["contamination"]
        levels = read_saturation_latest(con)
        fp.store_fingerprint(con, key, utcnow(), summary=previous if day_only else saturation.to_dict(orient="records"))
        if not day_only:
            fp.store_fingerprint(con, data_key, utcnow(), part=DATA_PART)
            fp.store_unit_fingerprints(con, plan.units, utcnow())
    if day_only:
        log.info("[analyze] a new day without new data: only the day-relative columns moved to %s", day(now))
    out = {"saturation": saturation, "suspects": suspects, "levels": levels, "skipped": False,
           "plan": plan.describe()}
    if levels_before and not day_only:
        out["levels_before"] = before
    return out


def _levels_before(con) -> pd.DataFrame | None:
    try:
        return read_saturation_latest(con)
    except Exception as exc:  # noqa: BLE001 - a store without an analysis yet: every level is new
        log.debug("[analyze] no stored levels: %s", exc)
        return None

"""Relation `saturation`, scope `post_cutoff`: per table, the saturation index of only the models
for which its benchmark is post-cutoff (on jobs.contamination.model_slices' slices), upserted on
its key; nothing when no model has a resolved cutoff."""

from __future__ import annotations

import pandas as pd

from analysis.constants import GUARD_BAND_DAYS, SATURATION_ALPHA, SATURATION_K, SATURATION_Z
from analysis.cutoffs import post_cutoff_scope
from analysis.saturation_tables import saturation_table
from jobs.contamination import model_slices, slice_inputs
from jobs.relations.base import TABLE, Inputs, Relation
from jobs.relations.shared import POST_CUTOFF_SCOPE, no_scores, now_of, registry_of, with_table_ids
from storage import saturation as store


def post_cutoff_saturation(latest: pd.DataFrame, slices: pd.DataFrame, registry: pd.DataFrame, *,
                           k: int = SATURATION_K, alpha: float = SATURATION_ALPHA,
                           z: float = SATURATION_Z) -> pd.DataFrame:
    """Saturation on the clean scope: per table, only models for which its benchmark is post-cutoff."""
    latest = with_table_ids(latest) if "source" in latest.columns and "table_id" not in latest.columns else latest
    scoped = post_cutoff_scope(latest, slices)
    sat = saturation_table(scoped, registry, k=k, alpha=alpha, z=z, scope=POST_CUTOFF_SCOPE)
    # An empty clean scope (e.g. one source whose models all predate nothing) still yields one row
    # per table with a reason; its as_of is NaT, typed as a timestamp either way.
    observed = pd.to_datetime(scoped["observed_at"]).astype("datetime64[us]")
    key = scoped["table_id"] if "table_id" in scoped.columns else scoped["benchmark"]
    last = observed.groupby(key).max()
    # reindex, not Series.map: mapping through an empty datetime Series raises in pandas 3
    sat["as_of"] = pd.Series(last.reindex(sat["table_id"]).to_numpy(), index=sat.index, dtype="datetime64[us]")
    if "source" in scoped.columns:
        meta = scoped.assign(table_source=scoped.get("table_source", scoped["source"])).groupby("table_id")
        sources = meta["source"].agg(lambda v: sorted({str(x) for x in v.dropna()}))
        sat["source"] = sat["table_id"].map(meta["table_source"].first())
        if "table_version" in scoped.columns:     # assign_tables sets it; the writer requires it (084)
            sat["table_version"] = sat["table_id"].map(meta["table_version"].first())
        sat["sources"] = [list(sources.get(t, [])) for t in sat["table_id"]]
    return sat


def compute(inputs: Inputs, units: frozenset[str] | None) -> pd.DataFrame | None:
    if no_scores(inputs):
        return None
    data = slice_inputs(inputs.con, inputs.benchmarks, latest=inputs.latest)
    slices = model_slices(data["latest"], data["benchmarks"], data["cutoffs"], guard_days=GUARD_BAND_DAYS)
    if not len(slices):
        return None
    latest = with_table_ids(data["latest"])
    if units is not None:
        latest = latest[latest["table_id"].isin(units)]
    return post_cutoff_saturation(latest, slices, registry_of(inputs))


def write(inputs: Inputs, rows: pd.DataFrame, units: frozenset[str] | None) -> None:
    store.store_scope_saturation(inputs.con, rows, scope=POST_CUTOFF_SCOPE,
                                 run_at=now_of(inputs).tz_localize("UTC").to_pydatetime())


RELATION = Relation("post_cutoff", TABLE, compute, write)

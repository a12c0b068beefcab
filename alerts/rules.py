"""Alert rules and the alert state machine (pure: frames and states in, states and messages out).

Modelled on Prometheus Alertmanager for a snapshot-based service (docs/architecture.md, "Alerts"):

- **Identity.** An alert is its label set (`config.LABEL_KEYS`); `fingerprint(labels)` is a
  stable hash of the sorted labels. Re-evaluating the same data re-asserts the same alerts.
- **States.** pending → firing → resolved; a pending alert whose condition stops holding
  becomes inactive without a message. `for` counts distinct *data versions* (snapshots), never
  runs, so re-running over the same data never advances an alert.
- **Kinds.**
  - `saturation_bin_changed{benchmark, scope, level}`: a level alert per (benchmark, scope,
    level), firing while the *committed* hysteresis bin (docs/statistics.md, "Bin changes without flapping") is `level`, pending while
    the hysteresis proposes a move to `level` that is not committed yet. The first observation
    of a (benchmark, scope) sets its level without a message. When a move is committed the
    new level fires ("moderate → high"); the old level resolves in the same evaluation and its
    resolution is folded into that message. Every committed move of the series is also an
    immutable `SaturationBinChanged` event.
  - `contamination_suspect{model, benchmark, source}`: one alert per flagged (model,
    benchmark, source), whatever signals flagged it. The analysis decides persistence:
    `persisted` (two snapshots) and `corroborated` (a second signal or source) fire, a fresh
    `suspect` is pending. Never labelled "contaminated".
  - `source_failing{source}` (≥ N failed runs in a row) and `source_stale{source}` (no new
    snapshot for ≥ D days). While firing they inhibit every derived alert with the same
    `source` label, or whose numbers come from that source (annotation `sources`: a
    benchmark's saturation pools every source that reports it). Source alerts never inhibit
    each other.
  - `snapshot_held{source}`: the source's newest snapshot is held by the shrink guard (it
    dropped half or more of a benchmark's rows; storage/ingest.py) and is not used until a
    later fetch confirms it or `benchwatch accept` releases it. Resolves when no held snapshot
    of the source is newer than its newest usable one.
  - `new_frontier{benchmark, scope, model}` (info, disabled by default): the record holder
    changed; same exclusive-group mechanics as saturation levels.
- **No data is not resolved.** A kind whose input is None, or a benchmark/source absent from
  its input, keeps its state.
- **Notifications** are produced only on transitions: entering firing, and resolving after a
  firing that was queued. A transition that happens while the alert is muted (silence or
  inhibition) is recorded, not queued; if the alert is still firing when the mute ends, its
  firing is queued then. A resolution while muted is not sent.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from alerts import config
from alerts.config import (
    CONTAMINATION_SUSPECT,
    LABEL_KEYS,
    NEW_FRONTIER,
    SATURATION_BIN_CHANGED,
    SNAPSHOT_HELD,
    SOURCE_FAILING,
    SOURCE_HEALTH_KINDS,
    SOURCE_STALE,
    RuleSettings,
)
from analysis import hysteresis
from analysis.contamination import STATUSES as CONTAMINATION_STATUSES
from analysis.constants import SATURATION_BINS
from common.jsonsafe import decoded as _evidence
from common.jsonsafe import is_missing as _missing
from common.jsonsafe import number as _num
from common.time import to_utc
from storage.alert_records import (  # the records are the alert tables' rows (storage); re-exported
    NOTIFIED_BASELINE,
    NOTIFIED_MUTED,
    NOTIFIED_NONE,
    NOTIFIED_QUEUED,
    AlertEvent,
    AlertState,
    Evaluation,
    Notification,
    Silence,
)

PENDING, FIRING, RESOLVED, INACTIVE = "pending", "firing", "resolved", "inactive"
STATES: tuple[str, ...] = (PENDING, FIRING, RESOLVED, INACTIVE)
TRANSITIONS: tuple[str, ...] = (FIRING, RESOLVED)

# contamination statuses of analysis.contamination (strongest first): a flag is a suspicion,
# never a verdict; `suspect` = flagged on one snapshot, not yet persisted or corroborated
CORROBORATED, PERSISTED, SUSPECT, NOT_FLAGGED = "corroborated", "persisted", "suspect", "not_flagged"
_FLAG_STRENGTH: tuple[str, ...] = (CORROBORATED, PERSISTED, SUSPECT)

EVENT_BIN_CHANGED = "SaturationBinChanged"


# --- identity ------------------------------------------------------------------------------------

def make_labels(kind: str, **labels: Any) -> dict[str, str]:
    """The full label set of an alert: every key of LABEL_KEYS, '' where it does not apply."""
    if kind not in config.ALL_KINDS:
        raise ValueError(f"unknown alert kind {kind!r}; known: {config.ALL_KINDS}")
    unknown = set(labels) - set(LABEL_KEYS)
    if unknown:
        raise ValueError(f"unknown alert label(s) {sorted(unknown)}; known: {LABEL_KEYS}")
    out = {key: "" for key in LABEL_KEYS}
    out["kind"] = kind
    for key, value in labels.items():
        out[key] = "" if _missing(value) else str(value)
    return out


def fingerprint(labels: Mapping[str, str]) -> str:
    """Stable identity of an alert: SHA-256 of its sorted labels (empty labels ignored), 16 hex."""
    items = sorted((str(k), str(v)) for k, v in labels.items() if v not in ("", None))
    return hashlib.sha256(json.dumps(items, separators=(",", ":")).encode()).hexdigest()[:16]


# --- helpers shared with the CLI -------------------------------------------------------------------

_MATCHER = re.compile(r"^([a-z_]+)=(.*)$")
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)([smhdw])$")
_DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_matchers(items: Iterable[str]) -> dict[str, str]:
    """['benchmark=swebench_verified', 'kind=saturation_bin_changed'] -> {label: value}."""
    out: dict[str, str] = {}
    for item in items:
        m = _MATCHER.match(item.strip())
        if not m:
            raise ValueError(f"matcher {item!r} is not key=value")
        key, value = m[1], m[2]
        if key not in LABEL_KEYS:
            raise ValueError(f"matcher {item!r}: unknown label {key!r}; labels are {', '.join(LABEL_KEYS)}")
        if key in out and out[key] != value:
            raise ValueError(f"matcher {item!r}: label {key!r} already matched to {out[key]!r}")
        out[key] = value
    if not out:
        raise ValueError("a silence needs at least one matcher key=value")
    return out


def parse_duration(text: str) -> timedelta:
    """'14d', '12h', '30m', '2w', '90s' -> timedelta (positive)."""
    m = _DURATION.match(text.strip().lower())
    if not m or float(m[1]) <= 0:
        raise ValueError(f"duration {text!r} is not a positive number followed by s, m, h, d or w (e.g. 14d)")
    return timedelta(seconds=float(m[1]) * _DURATION_UNITS[m[2]])


def sql_literal(text: str) -> str:
    """A SQL string literal for the 'where to look' queries shown to people (not executed here)."""
    return "'" + str(text).replace("'", "''") + "'"


# --- conditions -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Condition:
    """An alert whose condition holds in this evaluation."""

    labels: dict[str, str]
    annotations: dict[str, Any]
    data_as_of: datetime
    # distinct data versions the condition must hold before it fires; None = stays pending until
    # its input confirms it (a hysteresis proposal that is not committed yet)
    fire_after: int | None = 1
    group: tuple[str, ...] | None = None    # exclusive group (one firing member at a time)


def _text(row: Mapping[str, Any], key: str, default: str = "") -> str:
    value = row.get(key, default)
    return default if _missing(value) else str(value)


def _require(frame: pd.DataFrame, columns: Sequence[str], name: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{name} frame lacks column(s) {missing}; it has {list(frame.columns)}")


def saturation_bin_series(history: pd.DataFrame) -> pd.DataFrame:
    """The coupling to `analysis.hysteresis`: committed (and proposed) bin after each snapshot.

    `history`: benchmark, as_of, s_index, optionally scope, population and bin_probs (one
    row per benchmark, scope, population and snapshot). A population other than ``models``
    is its own series, labelled scope ``<scope>:<population>`` (``all:systems``), so model
    runs and agent systems never share a state and model-run alerts keep their fingerprints.
    Adds `committed_bin` (the Schmitt-trigger state with its support test, analysis.hysteresis)
    and `proposed_bin` (the move the snapshot proposes while it is pending, else None).
    """
    _require(history, ["benchmark", "as_of", "s_index"], "saturation history")
    frame = history.copy()
    if "scope" not in frame.columns:
        frame["scope"] = ""
    frame["scope"] = frame["scope"].fillna("").astype(str)
    if "population" in frame.columns:
        pop = frame["population"].fillna("models").astype(str)
        frame["scope"] = frame["scope"].where(pop.isin(["", "models"]), frame["scope"] + ":" + pop)
    frame = frame.sort_values(["benchmark", "scope", "as_of"], kind="stable").reset_index(drop=True)
    committed: list[str | None] = []
    proposed: list[str | None] = []
    for _, rows in frame.groupby(["benchmark", "scope"], sort=False):
        values = rows["s_index"].tolist()
        probs = rows["bin_probs"].tolist() if "bin_probs" in rows.columns else [None] * len(values)
        for x, p, st in zip(values, probs, hysteresis.states(values, probs)):
            committed.append(None if st.committed is None else SATURATION_BINS[st.committed])
            if st.pending_count and st.committed is not None:
                proposed.append(SATURATION_BINS[hysteresis.proposal(st.committed, float(x), probs=p)])
            else:
                proposed.append(None)
    frame["committed_bin"] = pd.Series(committed, dtype="object")
    frame["proposed_bin"] = pd.Series(proposed, dtype="object")
    return frame


def saturation_conditions(history: pd.DataFrame) -> tuple[list[Condition], list[AlertEvent], set[tuple[str, ...]]]:
    """Level conditions and SaturationBinChanged events from a benchmark's S_index history.

    `history`: see `saturation_bin_series`; optionally benchmark_name, snapshot_id, `sources`
    (the sources whose scores the index uses: a failing one inhibits the alert) and the numbers
    shown in the message (r_norm, se_delta, k, alpha, z, n_items, n_models).
    Returns the conditions of the newest snapshot of every (benchmark, scope), the events of
    every committed move, and the groups that have data.
    """
    frame = saturation_bin_series(history)
    conditions: list[Condition] = []
    events: list[AlertEvent] = []
    groups: set[tuple[str, ...]] = set()
    for (bench, scope), rows in frame.groupby(["benchmark", "scope"], sort=False):
        records = [r for r in rows.to_dict("records") if r["committed_bin"] is not None]
        if not records:
            continue  # no S_index yet: no data
        group = (SATURATION_BIN_CHANGED, str(bench), str(scope))
        groups.add(group)
        for before, rec in zip(records, records[1:]):
            if rec["committed_bin"] != before["committed_bin"]:
                as_of = to_utc(rec["as_of"])
                level, prev_level = rec["committed_bin"], before["committed_bin"]
                up = SATURATION_BINS.index(level) > SATURATION_BINS.index(prev_level)
                events.append(AlertEvent(
                    key=f"{EVENT_BIN_CHANGED}|{bench}|{scope}|{as_of.isoformat()}", at=as_of,
                    kind=SATURATION_BIN_CHANGED, event=EVENT_BIN_CHANGED,
                    fingerprint=fingerprint(_saturation_labels(rec, bench, scope, level)),
                    detail={"benchmark": str(bench), "scope": str(scope), "from": prev_level, "to": level,
                            "direction": "up" if up else "down", "as_of": as_of.isoformat(),
                            "s_index": _num(rec.get("s_index")), "snapshot_id": _num(rec.get("snapshot_id")),
                            **_scale_annotations(rec)}))
        last = records[-1]
        as_of = to_utc(last["as_of"])
        level = last["committed_bin"]
        conditions.append(Condition(
            labels=_saturation_labels(last, bench, scope, level),
            annotations=_saturation_annotations(last, bench, scope, level, as_of),
            data_as_of=as_of, fire_after=1, group=group))
        if last["proposed_bin"] is not None:
            target = last["proposed_bin"]
            conditions.append(Condition(
                labels=_saturation_labels(last, bench, scope, target),
                annotations=_saturation_annotations(last, bench, scope, target, as_of),
                data_as_of=as_of, fire_after=None, group=None))
    return conditions, events, groups


def _saturation_labels(row: Mapping[str, Any], bench: Any, scope: Any, level: str) -> dict[str, str]:
    return make_labels(SATURATION_BIN_CHANGED, benchmark=bench, scope=scope, level=level,
                       source=_text(row, "source"))


def _saturation_why(level: str) -> str:
    """What the level means for a reader, independent of the direction of the move."""
    if level in ("high", "very high"):
        return ("the top models are statistically indistinguishable: new results on this benchmark "
                "barely separate frontier models")
    if level == "moderate":
        return ("the spread of the top models is comparable to evaluation noise: differences at the "
                "top are only partly meaningful")
    return "the top models are clearly separated: this benchmark still discriminates at the frontier"


def _saturation_annotations(row: Mapping[str, Any], bench: Any, scope: Any, level: str,
                            as_of: datetime) -> dict[str, Any]:
    name = _text(row, "benchmark_name") or str(bench)
    base_scope, _, population = str(scope).partition(":")
    where = f"benchmark = {sql_literal(bench)}" + (f" AND scope = {sql_literal(base_scope)}" if base_scope else "")
    if population:
        where += f" AND population = {sql_literal(population)}"
    for key in ("k", "alpha"):
        if _num(row.get(key)) is not None:
            where += f" AND {key} = {_num(row.get(key)):g}"
    sources = row.get("sources")
    return {
        "benchmark_name": name,
        "sources": sorted(str(x) for x in sources) if isinstance(sources, (list, tuple, np.ndarray)) else [],
        "to_level": level,
        "as_of": as_of.isoformat(),
        "snapshot_id": _num(row.get("snapshot_id")),
        "numbers": {key: _num(row.get(key)) for key in
                    ("s_index", "bin_hold_prob", "r_norm", "se_delta", "k", "alpha", "z", "n_items", "n_models",
                     "resample_draws")},
        "resample_noise": _text(row, "resample_noise") or None,
        **_scale_annotations(row),
        "why": _saturation_why(level),
        "sql": f"SELECT as_of, s_index, bin, r_norm, se_delta, n_models FROM saturation WHERE {where} "
               "ORDER BY as_of DESC LIMIT 10",
    }


def _scale_annotations(row: Mapping[str, Any]) -> dict[str, Any]:
    """Which S scale the row is on; comparable False says its bin is not on the paper's scale."""
    comparable = row.get("comparable")
    return {"scale": _text(row, "scale") or None,
            "comparable": None if _missing(comparable) else bool(comparable)}


def contamination_conditions(suspects: pd.DataFrame, now: datetime) -> list[Condition]:
    """One condition per flagged (model, benchmark, source) of `analysis.contamination.run_signals`.

    `suspects`: model, benchmark, signal, effect, q_value, status, evidence, and optionally
    source, se, ci_low, ci_high, p_value, as_of, model_name, benchmark_name. Persistence is
    decided by the analysis: `persisted` and `corroborated` fire, `suspect` (flagged on one
    snapshot only) is pending, `not_flagged` is no condition.
    """
    _require(suspects, ["model", "benchmark", "signal", "effect", "q_value", "status", "evidence"], "suspects")
    bad = sorted(set(suspects["status"].astype(str)) - set(CONTAMINATION_STATUSES))
    if bad:
        raise ValueError(f"suspects frame: status {bad} not in {CONTAMINATION_STATUSES}")
    frame = suspects.loc[suspects["status"] != NOT_FLAGGED].copy()
    if "source" not in frame.columns:
        frame["source"] = ""
    frame["source"] = frame["source"].fillna("").astype(str)
    conditions = []
    for (model, bench, source), rows in frame.groupby(["model", "benchmark", "source"], sort=True):
        records = rows.to_dict("records")
        statuses = {str(r["status"]) for r in records}
        status = next(s for s in _FLAG_STRENGTH if s in statuses)
        # the strongest evidence first: smallest q, then largest effect
        records.sort(key=lambda r: (1.0 if _num(r["q_value"]) is None else _num(r["q_value"]),
                                    -(_num(r["effect"]) or 0.0)))
        as_ofs = [to_utc(r["as_of"]) for r in records if not _missing(r.get("as_of"))]
        as_of = max(as_ofs) if as_ofs else now
        signals = [{
            "signal": _text(r, "signal"), "detail": _text(r, "detail"), "status": _text(r, "status"),
            **{key: _num(r.get(key)) for key in ("effect", "se", "ci_low", "ci_high", "p_value", "q_value")},
            "evidence": _evidence(r.get("evidence")),
        } for r in records]
        where = f"model = {sql_literal(model)} AND benchmark = {sql_literal(bench)}"
        conditions.append(Condition(
            labels=make_labels(CONTAMINATION_SUSPECT, model=model, benchmark=bench, source=source),
            annotations={
                "model_name": _text(records[0], "model_name") or str(model),
                "benchmark_name": _text(records[0], "benchmark_name") or str(bench),
                "status": status,
                "as_of": as_of.isoformat(),
                "signals": signals,
                "why": "the score outruns what this model does on clean reference data, which test-set "
                       "exposure would explain; read this model's number on this benchmark with caution",
                "sql": f"SELECT * FROM suspects WHERE {where}",
            },
            data_as_of=as_of,
            fire_after=None if status == SUSPECT else 1))
    return conditions


def source_conditions(health: pd.DataFrame, now: datetime, settings: RuleSettings) -> list[Condition]:
    """source_failing / source_stale conditions from `source, consecutive_failures, last_new_snapshot_at`.

    With a `last_attempt_at` column, a source is stale only if it was collected after its last
    new snapshot: a source that is only ingested by hand now and then is not "stale".
    """
    _require(health, ["source", "consecutive_failures", "last_new_snapshot_at"], "source health")
    conditions = []
    for row in health.to_dict("records"):
        source = str(row["source"])
        failures = _num(row["consecutive_failures"]) or 0
        last_new = row["last_new_snapshot_at"]
        last_new = None if _missing(last_new) else to_utc(last_new)
        fetch_sql = ("SELECT started_at, status, http_status, error FROM fetches "
                     f"WHERE source = {sql_literal(source)} ORDER BY started_at DESC LIMIT 5")
        common = {"last_new_snapshot_at": last_new.isoformat() if last_new else None,
                  "consecutive_failures": int(failures), "last_error": _text(row, "last_error") or None,
                  "sql": fetch_sql}
        if failures >= settings.source_failing_runs:
            conditions.append(Condition(
                labels=make_labels(SOURCE_FAILING, source=source),
                annotations={**common, "threshold_runs": settings.source_failing_runs,
                             "why": "alerts computed from this source's data are held back until it recovers"},
                data_as_of=now))
        attempted = row.get("last_attempt_at", now)
        collected_since = not _missing(attempted) and (last_new is None or to_utc(attempted) > last_new)
        if last_new is not None and collected_since:
            age_days = (now - last_new).total_seconds() / 86400
            if age_days >= settings.source_stale_days:
                conditions.append(Condition(
                    labels=make_labels(SOURCE_STALE, source=source),
                    annotations={**common, "age_days": round(age_days, 1),
                                 "threshold_days": settings.source_stale_days,
                                 "why": "the leaderboard may have moved or changed format; alerts computed "
                                        "from its data are held back"},
                    data_as_of=now))
    return conditions


def held_conditions(held: pd.DataFrame) -> list[Condition]:
    """snapshot_held{source}: one per source with a pending held snapshot (`source, snapshot_id, observed_at,
    held_reason`; storage.status.held_snapshots(pending_only=True)). The newest held snapshot is described."""
    _require(held, ["source", "snapshot_id", "observed_at", "held_reason"], "held snapshots")
    conditions = []
    for source, rows in held.groupby("source", sort=True):
        row = rows.sort_values(["observed_at", "snapshot_id"], kind="stable").to_dict("records")[-1]
        sid = int(row["snapshot_id"])
        conditions.append(Condition(
            labels=make_labels(SNAPSHOT_HELD, source=source),
            annotations={"snapshot_id": sid, "held_snapshots": sorted(int(x) for x in rows["snapshot_id"]),
                         "observed_at": to_utc(row["observed_at"]).isoformat(),
                         "held_reason": _text(row, "held_reason"),
                         "why": "a leaderboard cut in half (truncated download) would otherwise replace the "
                                "full one; the previous snapshot stays in use until this one is confirmed by a "
                                f"later fetch or released with `benchwatch accept {sid}`",
                         "sql": f"SELECT id, observed_at, n_scores, status, held_reason FROM snapshots "
                                f"WHERE source = {sql_literal(str(source))} ORDER BY id DESC LIMIT 5"},
            data_as_of=to_utc(row["observed_at"])))
    return conditions


def frontier_conditions(frontier: pd.DataFrame) -> tuple[list[Condition], set[tuple[str, ...]]]:
    """new_frontier: the current record holder per (benchmark, scope); `benchmark, model, score, as_of`."""
    _require(frontier, ["benchmark", "model", "score", "as_of"], "frontier")
    frame = frontier.copy()
    if "scope" not in frame.columns:
        frame["scope"] = ""
    frame["scope"] = frame["scope"].fillna("").astype(str)
    conditions, groups = [], set()
    for (bench, scope), rows in frame.groupby(["benchmark", "scope"], sort=True):
        row = rows.sort_values("as_of", kind="stable").to_dict("records")[-1]
        group = (NEW_FRONTIER, str(bench), str(scope))
        groups.add(group)
        as_of = to_utc(row["as_of"])
        conditions.append(Condition(
            labels=make_labels(NEW_FRONTIER, benchmark=bench, scope=scope, model=row["model"],
                               source=_text(row, "source")),
            annotations={"benchmark_name": _text(row, "benchmark_name") or str(bench),
                         "model_name": _text(row, "model_name") or str(row["model"]),
                         "as_of": as_of.isoformat(),
                         "numbers": {"score": _num(row["score"]), "stderr": _num(row.get("stderr"))},
                         "why": "a new best score on this benchmark",
                         "sql": f"SELECT * FROM frontier WHERE benchmark = {sql_literal(bench)}"},
            data_as_of=as_of, fire_after=1, group=group))
    return conditions, groups


# --- the state machine ------------------------------------------------------------------------------

def evaluate(*, now: datetime, previous: Iterable[AlertState],
             saturation: pd.DataFrame | None = None,
             suspects: pd.DataFrame | None = None,
             source_health: pd.DataFrame | None = None,
             frontier: pd.DataFrame | None = None,
             held_snapshots: pd.DataFrame | None = None,
             silences: Iterable[Silence] = (),
             settings: RuleSettings = RuleSettings()) -> Evaluation:
    """Advance every alert by one evaluation and say what to record and enqueue.

    A frame that is None means "no data for that kind this time": its alerts keep their state.
    Re-evaluating the output states with the same inputs and `now` changes nothing and
    enqueues nothing.
    """
    now = to_utc(now)
    prev = {s.fingerprint: s for s in previous}
    silences = [s for s in silences if s.is_active(now)]
    events: list[AlertEvent] = []
    conditions: list[Condition] = []
    # scopes with data this time: (kind,) for whole-frame kinds, group keys, or (kind, source)
    covered: set[tuple[str, ...]] = set()

    if source_health is not None:
        conditions += source_conditions(source_health, now, settings)
        covered |= {(kind, str(s)) for kind in SOURCE_HEALTH_KINDS for s in source_health["source"]}
    if saturation is not None:
        sat_conditions, sat_events, sat_groups = saturation_conditions(saturation)
        conditions += sat_conditions
        events += sat_events
        covered |= sat_groups
    if suspects is not None:
        conditions += contamination_conditions(suspects, now)
        covered.add((CONTAMINATION_SUSPECT,))
    if held_snapshots is not None:
        conditions += held_conditions(held_snapshots)
        covered.add((SNAPSHOT_HELD,))
    if frontier is not None and NEW_FRONTIER in settings.enabled_info_kinds:
        fr_conditions, fr_groups = frontier_conditions(frontier)
        conditions += fr_conditions
        covered |= fr_groups

    by_fp: dict[str, Condition] = {}
    for cond in conditions:
        fp = fingerprint(cond.labels)
        if fp in by_fp:
            raise ValueError(f"two {cond.labels['kind']} conditions share the labels {cond.labels}; "
                             "the input frames have duplicate rows")
        by_fp[fp] = cond

    # Step 1: states, without notifications (those depend on the mutes computed from step 1).
    known_groups = {_group_of(s.labels) for s in prev.values()}
    stepped: dict[str, AlertState] = {}
    entered: dict[str, str] = {}  # fingerprint -> transition entered in this evaluation
    for fp in sorted(set(prev) | set(by_fp)):
        old, cond = prev.get(fp), by_fp.get(fp)
        if cond is None and (old is None or not _has_data(old.labels, covered)):
            if old is not None:
                stepped[fp] = old
            continue
        new, transition = _step(old, cond, now)
        if transition == FIRING and cond is not None and cond.group is not None \
                and cond.group not in known_groups:
            new = replace(new, notified=NOTIFIED_BASELINE)  # first observation: state, no message
        stepped[fp] = new
        if transition:
            entered[fp] = transition

    # Exclusive groups: a member entering firing folds the resolution of the member it replaces.
    replaced: dict[tuple[str, ...], AlertState] = {}
    for fp, transition in entered.items():
        if transition == RESOLVED and _group_of(stepped[fp].labels) is not None:
            replaced[_group_of(stepped[fp].labels)] = prev[fp]
    folded = {fp for fp, t in entered.items() if t == RESOLVED
              and any(entered.get(f) == FIRING and _group_of(stepped[f].labels) == _group_of(stepped[fp].labels)
                      for f in entered)}

    # Step 2: mutes (inhibition from firing source-health alerts, then silences) and messages.
    failing_sources = {s.labels["source"]: f"inhibited by {s.kind}{{source={s.labels['source']}}}"
                       for s in stepped.values() if s.kind in SOURCE_HEALTH_KINDS and s.state == FIRING}
    notifications: list[Notification] = []
    states: list[AlertState] = []
    for fp in sorted(stepped):
        state = stepped[fp]
        muted_by = _muted_by(state, failing_sources, silences)
        transition = entered.get(fp)
        if transition == FIRING:
            group = _group_of(state.labels)
            if group in replaced:
                old_level = replaced[group]
                state = replace(state, annotations={**state.annotations, **_from_annotations(old_level)})
            if state.notified != NOTIFIED_BASELINE:
                state = replace(state, notified=NOTIFIED_MUTED if muted_by else NOTIFIED_QUEUED)
        elif state.state == FIRING and state.notified == NOTIFIED_MUTED and not muted_by:
            state = replace(state, notified=NOTIFIED_QUEUED)  # the mute ended while it still fires
            transition = FIRING
        state = replace(state, muted_by=muted_by)
        if transition == FIRING and state.notified == NOTIFIED_QUEUED:
            notifications.append(_notification(state, FIRING, now))
        elif transition == RESOLVED and fp not in folded and not muted_by \
                and prev[fp].notified == NOTIFIED_QUEUED:
            notifications.append(_notification(state, RESOLVED, now))
        if fp in entered:
            events.append(_transition_event(state, entered[fp], now, folded=fp in folded))
        elif transition == FIRING:
            events.append(_transition_event(state, "unmuted", now, folded=False))
        states.append(state)
    return Evaluation(states=states, notifications=notifications, events=events)


def _group_of(labels: Mapping[str, str]) -> tuple[str, ...] | None:
    kind = labels["kind"]
    if kind in (SATURATION_BIN_CHANGED, NEW_FRONTIER):
        return (kind, labels["benchmark"], labels["scope"])
    return None


def _has_data(labels: Mapping[str, str], covered: set[tuple[str, ...]]) -> bool:
    """Does this evaluation carry data about the alert? (Without data a state is kept: NoData.)"""
    kind = labels["kind"]
    if kind in SOURCE_HEALTH_KINDS:
        return (kind, labels["source"]) in covered
    group = _group_of(labels)
    if group is not None:
        return group in covered
    return (kind,) in covered


def _step(old: AlertState | None, cond: Condition | None, now: datetime) -> tuple[AlertState, str | None]:
    """One alert, one evaluation: the new state and the transition entered (firing/resolved/...)."""
    if cond is None:
        assert old is not None
        if old.state == PENDING:
            return replace(old, state=INACTIVE, since=now, last_evaluated=now, pending_count=0), INACTIVE
        if old.state == FIRING:
            return replace(old, state=RESOLVED, since=now, last_evaluated=now), RESOLVED
        return replace(old, last_evaluated=now), None

    fp = fingerprint(cond.labels)
    if old is None or old.state in (RESOLVED, INACTIVE):
        count, data_as_of = 1, cond.data_as_of
        base = AlertState(fingerprint=fp, labels=cond.labels, state=PENDING, since=now, last_evaluated=now,
                          annotations=cond.annotations, pending_count=count, data_as_of=data_as_of)
        if cond.fire_after is not None and count >= cond.fire_after:
            return replace(base, state=FIRING, fired_at=now, notified=NOTIFIED_NONE), FIRING
        return base, PENDING
    if old.state == PENDING:
        newer = old.data_as_of is None or cond.data_as_of > old.data_as_of
        count = old.pending_count + (1 if newer else 0)
        data_as_of = cond.data_as_of if newer else old.data_as_of
        if cond.fire_after is not None and count >= cond.fire_after:
            return replace(old, state=FIRING, since=now, last_evaluated=now, annotations=cond.annotations,
                           fired_at=now, pending_count=count, data_as_of=data_as_of,
                           notified=NOTIFIED_NONE), FIRING
        return replace(old, last_evaluated=now, annotations=cond.annotations, pending_count=count,
                       data_as_of=data_as_of), None
    if cond.fire_after is None:
        # firing level, but the hysteresis now proposes it anew: it was left, and is pending again
        return replace(old, state=PENDING, since=now, last_evaluated=now, annotations=cond.annotations,
                       pending_count=1, data_as_of=cond.data_as_of), RESOLVED
    # firing: stays firing, numbers refreshed
    return replace(old, last_evaluated=now, annotations={**cond.annotations, **_from_annotations_kept(old)},
                   data_as_of=max(cond.data_as_of, old.data_as_of or cond.data_as_of)), None


def _from_annotations(old: AlertState) -> dict[str, Any]:
    """What the new member of an exclusive group replaced: a level, or a record holder."""
    if old.kind == SATURATION_BIN_CHANGED:
        return {"from_level": old.labels["level"]}
    return {"from_model": old.labels["model"],
            "from_model_name": old.annotations.get("model_name", old.labels["model"]),
            "from_numbers": old.annotations.get("numbers", {})}


def _from_annotations_kept(old: AlertState) -> dict[str, Any]:
    return {k: v for k, v in old.annotations.items() if k.startswith("from_")}


def _muted_by(state: AlertState, failing_sources: Mapping[str, str], silences: Sequence[Silence]) -> str:
    """Inhibition first (a derived alert whose source, or one of the sources its numbers come
    from, is failing or stale), then silences."""
    labels = state.labels
    if labels["kind"] not in SOURCE_HEALTH_KINDS:
        for source in [labels["source"], *state.annotations.get("sources", [])]:
            if source in failing_sources:
                return failing_sources[source]
    for silence in silences:
        if silence.matches(labels):
            return f"silence {silence.id}"
    return ""


def _notification(state: AlertState, transition: str, now: datetime) -> Notification:
    assert state.fired_at is not None
    return Notification(fingerprint=state.fingerprint, kind=state.kind, transition=transition,
                        episode=state.fired_at, labels=dict(state.labels),
                        annotations=dict(state.annotations), created_at=now)


def _transition_event(state: AlertState, transition: str, now: datetime, *, folded: bool) -> AlertEvent:
    detail: dict[str, Any] = {"labels": state.labels, "state": state.state}
    if state.muted_by:
        detail["muted_by"] = state.muted_by
    if state.notified == NOTIFIED_BASELINE and transition == FIRING:
        detail["baseline"] = True
    if folded:
        detail["folded_into_group_move"] = True
    return AlertEvent(key=f"{state.fingerprint}|{transition}|{now.isoformat()}", at=now, kind=state.kind,
                      event=f"Alert{transition.capitalize()}", fingerprint=state.fingerprint, detail=detail)


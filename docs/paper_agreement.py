"""The saturation paper reproduced (issue 21): its 60 top-5s (../shared/data/paper2026_*.csv) beside
the stored trajectory of each benchwatch table at the paper's data cut-off (PAPER_DATE), with a
verdict read from the data only (block `paper-agreement` of docs/statistics.md, written by
docs/figures.py).
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from docs.doc_blocks import q, table

REPO = Path(__file__).resolve().parents[1]
DEFAULT_PAPER_DATA = REPO.parent / "shared" / "data"   # the saturation paper's 60 rows (paper2026_*.csv)
# The paper's data cut-off: the latest "5th highest-performing model release date" of its
# annotation sheet (PR #38, AIME 2025's top 5 completed by GLM-4.7 on 2025-12-22). No top 5 of the
# paper can predate it, and the sheet was committed a month later (2026-01-22).
PAPER_DATE = "2025-12-22"
PAPER_SNAPSHOT_GAP_DAYS = 31  # a nearest snapshot further than this from PAPER_DATE is a reason to differ


def _hosts(urls) -> set[str]:
    from urllib.parse import urlparse
    out = set()
    for u in re.findall(r"https?://[^\s;,)\]]+", str(urls or "")):
        host = (urlparse(u).hostname or "").lower()
        out.add(host[4:] if host.startswith("www.") else host)
    return out - {""}


def source_hosts(source: str) -> set[str]:
    """The hosts a source reads or names: its URLs' and the domains its module's docstring cites
    (τ²-bench reads a bucket but documents taubench.com)."""
    import sys as _sys
    from urllib.parse import urlparse
    import scrapers
    try:
        scraper = scrapers.get(source)
    except Exception:              # a pool or a source without a module: nothing to compare
        return set()
    hosts = {(urlparse(u).hostname or "").lower() for u in scraper.urls}
    doc = getattr(_sys.modules.get(type(scraper).__module__), "__doc__", None) or ""
    hosts |= {h.lower() for h in re.findall(r"\b((?:[a-z0-9-]+\.)+(?:com|ai|org|io|net|dev|app))\b", doc, re.I)}
    return {h.removeprefix("www.") for h in hosts} - {""}


def _tolerance(value: str) -> float:
    """Half a unit of the last decimal the paper prints (at least one decimal: 80 is 80.0)."""
    decimals = len(value.split(".")[1]) if "." in value else 0
    return 0.5 * 10 ** -max(1, decimals)


def paper_verdict(paper: dict, table: dict | None) -> tuple[str, list[str]]:
    """'agree: top 5', 'agree: bin' or 'differs', and the reasons, read from the data only.

    `paper`: top5 (the paper's scores as printed, percent), bin, n, hosts (its source URLs'
    hosts). `table`: None when benchwatch has no table of the benchmark, else top5 (percent,
    rank order), bin (None without S), n, source, source_hosts, as_of (the trajectory point
    used), after (True when the table has no result dated on or before the paper's date),
    snapshot and gap_days (the table's snapshot nearest the paper's date and its distance).
    """
    if table is None:
        return "differs", ["table not collected"]
    printed = sorted(paper["top5"], key=float, reverse=True)
    ours = list(table["top5"])
    same_top = len(ours) >= len(printed) == 5 and all(
        abs(o - float(t)) <= _tolerance(t) + 1e-9 for o, t in zip(ours, printed))
    if same_top:
        return "agree: top 5", []
    reasons = []
    if table.get("after"):
        reasons.append(f"no result dated by the paper's date (first {table['as_of']})")
    gap = table.get("gap_days")
    if gap is not None and abs(gap) > PAPER_SNAPSHOT_GAP_DAYS:
        reasons.append(f"nearest snapshot {table['snapshot']} ({gap:+d} days)")
    if not paper["hosts"]:
        reasons.append("paper's source not stated")
    elif not paper["hosts"] & set(table["source_hosts"]):
        reasons.append(f"other source (paper: {', '.join(sorted(paper['hosts']))}; here: {table['source']})")
    if table.get("n") is None or pd.isna(table.get("n")):
        reasons.append(f"no n here (paper {paper['n']})")
    elif int(table["n"]) != int(paper["n"]):
        reasons.append(f"n {int(table['n'])} vs paper {int(paper['n'])}")
    if len(ours) < 5:
        reasons.append(f"{len(ours)} result(s) only")
    elif ours:
        rank = next(i for i, (o, t) in enumerate(zip(ours, printed)) if abs(o - float(t)) > _tolerance(t) + 1e-9)
        reasons.append(f"#{rank + 1} {ours[rank]:.1f} vs {float(printed[rank]):.1f}")
    if table.get("bin") is None:
        reasons.append("no S here")
    elif str(table["bin"]).lower() == str(paper["bin"]).lower() and not table.get("after"):
        return "agree: bin", reasons          # a table that starts after the paper's date agrees by chance
    return "differs", reasons


def paper_agreement(db: Path, paper_data: Path = DEFAULT_PAPER_DATA, paper_date: str = PAPER_DATE) -> pd.DataFrame:
    """One row per paper benchmark and benchwatch table (population, scope all) with the verdict.

    benchwatch's side is the stored trajectory (saturation_history: table_id, as_of): the point in
    effect at `paper_date` (the running top 5 of the results dated on or before it), or the
    table's first point when it has none by then; beside it the table's snapshot nearest the date.
    """
    bench = pd.read_csv(paper_data / "paper2026_benchmarks.csv", dtype=str)
    sat = pd.read_csv(paper_data / "paper2026_saturation.csv", dtype=str)
    paper = bench[["paper_id", "name", "n_items", "top5_source_urls"]].merge(
        sat[["id", "s1", "s2", "s3", "s4", "s5", "s_index", "bin"]], left_on="paper_id", right_on="id")
    reg = q(db, "SELECT id AS benchmark, paper_id FROM benchmarks WHERE paper_id IS NOT NULL")
    reg["paper_id"] = reg["paper_id"].astype(int).astype(str)
    hist = q(db, "SELECT h.table_id, h.benchmark, h.source, h.population, h.as_of, h.n_items, h.top_scores, "
                 "h.s_index, h.bin, m.metric FROM saturation_history h LEFT JOIN (SELECT table_id, any_value(metric) "
                 "AS metric FROM saturation GROUP BY table_id) m USING (table_id) WHERE h.scope = 'all' "
                 "ORDER BY h.table_id, h.population, h.as_of")
    tables = q(db, "SELECT table_id, benchmark, source, n_items FROM benchmark_tables ORDER BY table_id")
    snaps = q(db, "SELECT DISTINCT sc.benchmark, sn.source, coalesce(sc.table_version, '') AS table_version, "
                  "sn.observed_at FROM scores sc JOIN snapshots sn ON sn.id = sc.snapshot_id")
    from registry.tables import table_id as make_table_id
    snaps["table_id"] = [make_table_id(b, s, v) for b, s, v in zip(snaps["benchmark"], snaps["source"],
                                                                    snaps["table_version"])]
    when = pd.Timestamp(paper_date, tz="UTC")
    for frame, col in ((hist, "as_of"), (snaps, "observed_at")):
        t = pd.to_datetime(frame[col])
        frame[col] = t.dt.tz_localize("UTC") if t.dt.tz is None else t.dt.tz_convert("UTC")
    rows = []
    for p in paper.itertuples():
        top5 = [p.s1, p.s2, p.s3, p.s4, p.s5]
        side = {"top5": top5, "bin": p.bin, "n": int(p.n_items), "hosts": _hosts(p.top5_source_urls)}
        base = {"paper_id": int(p.paper_id), "paper_name": p.name, "paper_n": int(p.n_items),
                "paper_top5": top5, "paper_s": float(p.s_index), "paper_bin": p.bin.lower()}
        ids = reg.loc[reg["paper_id"] == p.paper_id, "benchmark"].tolist()
        if not ids:
            rows.append({**base, "benchmark": None, "table_id": None, "verdict": "not tracked", "reasons": []})
            continue
        mine = tables[tables["benchmark"].isin(ids)]
        points = hist[hist["benchmark"].isin(ids)]
        if not len(mine):
            verdict, why = paper_verdict(side, None)
            rows.append({**base, "benchmark": ids[0], "table_id": None, "verdict": verdict, "reasons": why})
            continue
        for tid in sorted(set(mine["table_id"]) - set(points["table_id"])):   # a table without a trajectory
            rows.append({**base, "benchmark": ids[0], "table_id": tid, "population": "—", "n_items": None,
                         "snapshot": None, "as_of": "—", "top5": [], "top_scores": [], "s_index": None, "bin": None,
                         "verdict": "differs", "reasons": ["no trajectory stored"]})
        for (tid, pop), pts in points.groupby(["table_id", "population"], sort=True):
            before = pts[pts["as_of"] <= when]
            pt = before.iloc[-1] if len(before) else pts.iloc[0]
            seen = snaps.loc[snaps["table_id"] == tid, "observed_at"]
            near = seen.iloc[(seen - when).abs().argmin()] if len(seen) else None
            scale = 100.0 if pt["metric"] in (None, "proportion") or pd.isna(pt["metric"]) else 1.0
            src = str(pt["source"])
            src_hosts = source_hosts(src)
            ours = {"top5": [scale * float(v) for v in list(pt["top_scores"])[:5]],
                    "bin": None if pd.isna(pt["bin"]) else pt["bin"], "n": pt["n_items"], "source": src,
                    "source_hosts": src_hosts, "as_of": f"{pt['as_of']:%Y-%m-%d}", "after": not len(before),
                    "snapshot": None if near is None else f"{near:%Y-%m-%d}",
                    "gap_days": None if near is None else int((near - when).days)}
            verdict, why = paper_verdict(side, ours)
            rows.append({**base, "benchmark": pt["benchmark"], "table_id": tid, "population": pop,
                         "n_items": None if pd.isna(pt["n_items"]) else int(pt["n_items"]),
                         "snapshot": ours["snapshot"], "as_of": ours["as_of"], "top5": ours["top5"],
                         "top_scores": list(pt["top_scores"])[:5], "s_index": pt["s_index"], "bin": ours["bin"],
                         "verdict": verdict, "reasons": why})
    return pd.DataFrame(rows)


def paper_counts(frame: pd.DataFrame) -> dict[str, int]:
    """Per paper benchmark: agree (some table agrees), differs (tables, none agrees), no table, not tracked."""
    out = {"agree": 0, "differs": 0, "no table": 0, "not tracked": 0}
    for _, g in frame.groupby("paper_id"):
        if (g["verdict"] == "not tracked").all():
            out["not tracked"] += 1
        elif g["table_id"].isna().all():
            out["no table"] += 1
        elif g["verdict"].str.startswith("agree").any():
            out["agree"] += 1
        else:
            out["differs"] += 1
    return out


def block_paper_agreement(frame: pd.DataFrame, paper_date: str = PAPER_DATE) -> str:
    def scores(v) -> str:
        return " / ".join(f"{float(x):.1f}" for x in v) if isinstance(v, list) and v else "—"
    rows = []
    for r in frame[frame["table_id"].notna()].itertuples():
        why = "; ".join(r.reasons)
        rows.append([r.paper_id, r.paper_name.split(":")[0], r.paper_n, scores(r.paper_top5),
                     f"{r.paper_s:.3f} {r.paper_bin}", f"{r.table_id} ({r.population})",
                     "—" if r.n_items is None or pd.isna(r.n_items) else int(r.n_items), r.snapshot or "—", r.as_of,
                     scores(r.top5), "—" if pd.isna(r.s_index) else f"{float(r.s_index):.3f} {r.bin}",
                     r.verdict + (f" ({why})" if why else "")])
    c = paper_counts(frame)
    missing = frame[frame["table_id"].isna() & (frame["verdict"] != "not tracked")]
    return (f"Paper date {paper_date}; of the paper's {frame['paper_id'].nunique()} benchmarks: "
            f"{c['agree']} agree (some table), {c['differs']} differ, {c['no table']} have no benchwatch table, "
            f"{c['not tracked']} are not in the registry.\n\n"
            + table(["#", "paper benchmark", "paper n", "paper top 5", "paper S", "benchwatch table (population)",
                     "n", "nearest snapshot", "top 5 as of", "top 5", "S", "verdict"], rows)
            + "\n\nNo table collected: " + (", ".join(f"{r.paper_id} {r.benchmark}" for r in missing.itertuples())
                                            or "none") + ".")

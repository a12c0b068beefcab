"""One section per benchmark in the HTML report: its primary table's level, facts and two charts,
then each other table of the benchmark beside it. The headline benchmarks (changed, near an
edge) come first, open; the rest are folded by family (the primary table's source)."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import pandas as pd

from common.jsonsafe import is_null as _missing
from report.charts import family_span, frontier_chart, s_history_chart
from report.base import (POPULATION_ORDER, bin_badge, date, esc, forecast_text, level_of, metric_is_proportion,
                                naive, names, num, score_text, STALE_AFTER_DAYS, staleness_days, table_name, tabled,
                                table_keys, top_names, trend_cell)
from alerts.text import level_note
from registry.tables import source_name


def bench_tables(bench: str, levels: pd.DataFrame, hist: pd.DataFrame, frontier: pd.DataFrame,
                 tables: pd.DataFrame, keys: Mapping[str, tuple[str, str]]) -> tuple[str, list[str], list[str]]:
    """(primary table, the releases of its source oldest first, the benchmark's other tables).

    The primary is benchmark_tables' (registry.tables: the owner's leaderboard, the newest
    release of a versioned source), else the level row flagged primary, else the first. `keys`:
    `table_keys` of the frames (table_id -> (source, version)), made once for the whole page."""
    seen: list[str] = []
    for df in (tables, levels, hist, frontier):
        if len(df) and "table_id" in df.columns:
            seen += [str(t) for t in df.loc[df["benchmark"] == bench, "table_id"] if str(t) not in seen]
    t = tables[tables["benchmark"] == bench] if len(tables) else tables
    lv = levels[levels["benchmark"] == bench]
    if len(t) and t["is_primary"].fillna(False).astype(bool).any():
        primary = str(t.loc[t["is_primary"].fillna(False).astype(bool), "table_id"].iloc[0])
    elif "is_primary" in lv.columns and lv["is_primary"].fillna(False).astype(bool).any():
        primary = str(lv.loc[lv["is_primary"].fillna(False).astype(bool), "table_id"].iloc[0])
    else:
        primary = seen[0] if seen else bench
    source = keys.get(primary, ("", ""))[0] or None
    family = sorted((x for x in seen if source is not None and keys.get(x, ("", ""))[0] == source),
                    key=lambda x: (keys.get(x, ("", ""))[1], x)) or [primary]
    others = [x for x in seen if x not in family]
    return primary, family, others


def _level_note(r: Mapping[str, Any]) -> str:
    """Where S lies in another bin than the stored level: why, in words (alerts.text.level_note)."""
    if _missing(r.get("level")) or _missing(r.get("s_index")):
        return ""
    pending = None if _missing(r.get("pending_bin")) else str(r["pending_bin"])
    since = None if _missing(r.get("pending_since")) else r["pending_since"]
    return level_note(float(r["s_index"]), None if _missing(r.get("bin")) else str(r["bin"]), str(r["level"]),
                      pending, since)


def _section(bench: str, levels: pd.DataFrame, hist: pd.DataFrame, frontier: pd.DataFrame,
             trend_by: Mapping[str, Mapping[str, Any]], tables: pd.DataFrame, anchor: str, now: pd.Timestamp,
             keys: Mapping[str, tuple[str, str]], why: str = "") -> str:
    primary, family, others = bench_tables(bench, levels, hist, frontier, tables, keys)
    bench_rows = levels[levels["benchmark"] == bench]
    rows = bench_rows[bench_rows["table_id"] == primary]
    if not len(rows):
        rows = bench_rows[bench_rows["table_id"] == bench_rows["table_id"].iloc[0]]
    main = rows[rows["scope"] == "all"] if (rows["scope"] == "all").any() else rows
    if "population" in main.columns:   # the primary population heads the section; the others follow
        main = main.assign(_p=main["population"].map(POPULATION_ORDER).fillna(len(POPULATION_ORDER))) \
                   .sort_values("_p", kind="stable")
    r = main.iloc[0].to_dict()
    name = table_name(r) or bench
    stale = staleness_days(r, now)
    pop = r.get("population")
    label = "S_index" if _missing(pop) or pop == "models" else f"S_index ({esc(pop)})"
    facts = [f"{label} {num(r.get('s_index'))}" if not _missing(r.get("s_index")) else esc(r.get("reason") or "no index"),
             *[f"S_index ({esc(o.get('population'))}) {num(o.get('s_index'))} {esc(o.get('bin'))}"
               for o in main.iloc[1:].to_dict("records") if not _missing(o.get("s_index"))],
             f"k={esc(r.get('k'))}, α={esc(r.get('alpha'))}, n={esc('' if _missing(r.get('n_items')) else int(r['n_items']))}",
             f"uncertainty {esc(r.get('uncertainty'))}" if not _missing(r.get("uncertainty")) else "",
             f"newest observation {date(r.get('as_of'))}" + ("" if stale is None else f" ({stale:.0f} days ago)")]
    note = _level_note(r)
    if note:
        facts.append(esc(note))
    span = family_span((hist, frontier), family)
    top = top_names(r)
    if top:
        facts.append("top-k: " + ", ".join(esc(m) for m in top))
    t = trend_by.get(primary)
    if len(family) > 1:
        facts.append(f"{len(family)} releases, each its own table: "
                     + ", ".join(esc(keys.get(x, ("", ""))[1] or x) for x in family))
    if t is not None and not _missing(t.get("frontier_model")):
        facts.append(f"frontier {esc(t['frontier_model'])} {esc(score_text(t.get('frontier'), metric_is_proportion(t)))}")
    if t is not None and stale is not None and stale > STALE_AFTER_DAYS:
        facts.append(f"no trend or forecast: the table was last observed {stale:.0f} days ago")
    elif t is not None:
        facts.append(f"trend {trend_cell(t)}")
        fc = forecast_text(t.get("forecast_status"), t.get("forecast_date"), t.get("forecast_reason"), t.get("reached_at"))
        when = naive(t.get("forecast_date"))
        if fc and not (t.get("forecast_status") == "ok" and when is not None and when < now):
            record = t.get("track_record")
            facts.append(f"forecast: {esc(fc)}" + (f" ({esc(record)})" if not _missing(record) and record else ""))
        live = t.get("live_forecast")
        if not _missing(live) and live:
            facts.append(esc(live))
    if others:
        reason = _primary_reason(tables, primary)
        facts.append(f"primary table {esc(primary)}" + (f" ({esc(reason)})" if reason else ""))
    lead = f'<p class="why">{esc(why)}</p>' if why else ""
    return (f'<section id="bench-{anchor}" class="bench"><h3>{esc(name)} {bin_badge(level_of(r))}'
            f' <a class="anchor" href="#bench-{anchor}">#</a></h3>{lead}'
            f'<p class="facts"><code>{esc(bench)}</code> · ' + " · ".join(x for x in facts if x) + "</p>"
            f'<div class="charts">{s_history_chart(bench, name, hist, rows, span, family)}'
            f'{frontier_chart(bench, name, frontier, t, r, span, family)}</div>'
            + "".join(_other_table(bench, other, levels, hist, frontier, trend_by.get(other), tables)
                      for other in others) + "</section>")


def _primary_reason(tables: pd.DataFrame, primary: str) -> str:
    """Why `primary` leads its benchmark's section (benchmark_tables.primary_reason, 060)."""
    if not len(tables) or "primary_reason" not in tables.columns:
        return ""
    hit = tables.loc[tables["table_id"] == primary, "primary_reason"]
    return "" if not len(hit) or _missing(hit.iloc[0]) else str(hit.iloc[0])


def _other_table(bench: str, table_id: str, levels: pd.DataFrame, hist: pd.DataFrame, frontier: pd.DataFrame,
                 trend: Mapping[str, Any] | None, tables: pd.DataFrame) -> str:
    """Another leaderboard table of a benchmark, beside its primary: its own level and charts, on
    an axis of its own data."""
    rows = levels[levels["table_id"] == table_id] if len(levels) else levels
    main = rows[rows["scope"] == "all"] if len(rows) and (rows["scope"] == "all").any() else rows
    r = main.iloc[0].to_dict() if len(main) else {}
    t = tables[tables["table_id"] == table_id] if len(tables) else tables
    name = (r.get("table_name") if not _missing(r.get("table_name")) else None) or \
        (str(t["name"].iloc[0]) if len(t) and "name" in t else table_id)
    level = (f"S_index {num(r.get('s_index'))} {bin_badge(r.get('bin'))}" if not _missing(r.get("s_index"))
             else esc(r.get("reason") or "no current level (a past release or no snapshot-level index)"))
    trend_txt = f" · trend {trend_cell(trend)}" if trend is not None else ""
    span = family_span((hist, frontier), [table_id])
    return (f'<h4>{esc(name)} <span class="src">another table of this benchmark</span></h4>'
            f'<p class="facts"><code>{esc(table_id)}</code> · {level}{trend_txt}</p>'
            f'<div class="charts">{s_history_chart(bench, str(name), hist, rows, span, [table_id])}'
            f'{frontier_chart(bench, str(name), frontier, trend, r or None, span, [table_id])}</div>')


def bench_order(levels: pd.DataFrame) -> list[str]:
    """Benchmarks most saturated first (their highest S), then those without an index, by id."""
    if not len(levels):
        return []
    order = levels.assign(_s=levels["s_index"].fillna(-1.0)).sort_values(["_s", "benchmark"], ascending=[False, True])
    return list(dict.fromkeys(str(b) for b in order["benchmark"]))


def family_of(bench: str, levels: pd.DataFrame, tables: pd.DataFrame, keys: Mapping[str, tuple[str, str]]) -> str:
    """The family a benchmark is folded under: its primary table's source, by display name.
    `keys`: `table_keys(tables, levels)`, made once for all benchmarks."""
    primary, _, _ = bench_tables(bench, levels, pd.DataFrame(), pd.DataFrame(), tables, keys)
    source = keys.get(primary, ("", ""))[0]
    return source_name(source) if source else "other"


def benchmark_sections(levels: pd.DataFrame, hist: pd.DataFrame, frontier: pd.DataFrame, trends: pd.DataFrame,
                       anchors: Mapping[str, str], now: pd.Timestamp, tables: pd.DataFrame | None,
                       headline: Mapping[str, str]) -> tuple[str, str]:
    """(the headline benchmarks' sections, open; every other benchmark's section folded by family)."""
    levels, hist, frontier, trends = (tabled(x) for x in (levels, hist, frontier, trends))
    tables = pd.DataFrame() if tables is None else tables
    trend_by = {r["table_id"]: r for r in trends.to_dict("records")} if len(trends) else {}
    keys, family_keys = table_keys(tables, levels, hist, frontier), table_keys(tables, levels)   # once a page
    lead: list[str] = []
    families: dict[str, list[tuple[str, str]]] = {}
    for bench in bench_order(levels):
        html_ = _section(bench, levels, hist, frontier, trend_by, tables, anchors[bench], now, keys,
                         headline.get(bench, ""))
        if bench in headline:
            lead.append(html_)
        else:
            families.setdefault(family_of(bench, levels, tables, family_keys), []).append((bench, html_))
    folded = []
    for fam in sorted(families, key=str.lower):
        items = families[fam]
        indexed = levels[levels["benchmark"].isin([b for b, _ in items]) & levels["s_index"].notna()]
        summary = (f"{esc(fam)}: {len(items)} benchmark(s), {indexed['benchmark'].nunique()} with an index"
                   + (f", highest S {indexed['s_index'].max():.3f}" if len(indexed) else ""))
        folded.append(f'<details class="family"><summary>{summary}</summary>'
                      + "".join(h for _, h in items) + "</details>")
    return "".join(lead) or '<p class="none">No level changed recently and none is near a bin edge.</p>', "".join(folded)


def toc_entries(levels: pd.DataFrame, headline: Mapping[str, str],
                tables: pd.DataFrame | None = None) -> list[tuple[str, list[tuple[str, str]]]]:
    """What the contents list, grouped as the page is: the headline benchmarks, then each family's
    benchmarks with an index (a benchmark without an index or a change is not listed), most
    saturated first: [(group, [(benchmark, name), ...]), ...]."""
    if not len(levels):
        return []
    tables = pd.DataFrame() if tables is None else tables
    keys = table_keys(tables, levels)
    lead: list[tuple[str, str]] = []
    families: dict[str, list[tuple[str, str]]] = {}
    for bench in bench_order(levels):
        rows = levels[levels["benchmark"] == bench]
        first = rows.iloc[0].to_dict()
        entry = (bench, str(first.get("name") if not _missing(first.get("name")) else bench))
        if bench in headline:
            lead.append(entry)
        elif rows["s_index"].notna().any():
            families.setdefault(family_of(bench, levels, tables, keys), []).append(entry)
    groups = [("Changed or near a bin edge", lead)] if lead else []
    return groups + [(fam, families[fam]) for fam in sorted(families, key=str.lower)]


__all__: Sequence[str] = ("benchmark_sections", "bench_tables", "toc_entries", "family_of")

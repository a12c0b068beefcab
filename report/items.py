"""The item-level parts of the HTML report: accuracy per item release month (error bars, cutoffs),
the time-window control that re-ranks models on the items released after a chosen date, and the
A3 pre/post gaps.

The window control works as the LiveCodeBench leaderboard's date slider does, without a script:
every window (each quarter's start) is precomputed by `storage.report.read_html_report` and the
radio inputs switch the visible table by CSS (`WINDOW_CSS`), so the page stays self-contained.
"""

from __future__ import annotations

from typing import Any, Mapping

import pandas as pd

from common.jsonsafe import is_null as _missing
from report.base import PALETTE, as_int, date, esc, evidence, g2, naive, pct, pp, slugs, table
from report.svg import TimeChart

# Display choices (not statistics): how many lines one post-cutoff chart draws (one per colour of
# the palette), and the fewest items a model-month needs to be drawn (a month of 3 problems is noise).
POST_CUTOFF_MAX_MODELS = len(PALETTE)
POST_CUTOFF_MIN_ITEMS_PER_MONTH = 10
# Error bars and window intervals: mean ± Z95 standard errors.
Z95 = 1.96
# The window control: the newest this many window starts, the models ranked in each, and the fewest
# items a model needs in a window to be ranked.
WINDOW_MAX = 12
WINDOW_TOP = 20
WINDOW_MIN_ITEMS = 20
# The control opens on the most recent window ranking at least this many models (else on all items).
WINDOW_OPEN_MIN_RANKED = 5

# Each radio input shows the pane of its position (enough rules for WINDOW_MAX + 1 windows).
WINDOW_CSS = "".join(f".win>input:nth-of-type({i}):checked~.panes>.pane:nth-child({i}){{display:block}}"
                     for i in range(1, WINDOW_MAX + 2))


def _month_chart(bench: str, g: pd.DataFrame, shown: list[str], flagged: set, cut: Mapping[str, Any]) -> str:
    x0, x1 = g["t"].min() - pd.Timedelta(days=20), g["t"].max() + pd.Timedelta(days=20)
    chart = TimeChart(x_range=(x0, x1), y_range=(0.0, min(1.0, max(0.2, float(g["accuracy"].max()) * 1.15))),
                      title=f"{bench}: accuracy per item release month", y_format=lambda v: f"{v * 100:.0f}%",
                      height=280, width=760)
    for i, m in enumerate(shown):
        color = PALETTE[i % len(PALETTE)]
        mg = g[(g["model"] == m) & (g["n_items"] >= POST_CUTOFF_MIN_ITEMS_PER_MONTH)].sort_values("t")
        label = m + (" (suspect)" if m in flagged else "")
        chart.line(list(zip(mg["t"], mg["accuracy"])), color, width=2.2 if m in flagged else 1.4, legend=label)
        se = mg["se"] if "se" in mg else pd.Series(float("nan"), index=mg.index)
        chart.errorbars([(t, max(a - Z95 * s, 0.0), min(a + Z95 * s, 1.0),
                          f"{m} {t:%Y-%m}: {a * 100:.1f}% ± {Z95 * s * 100:.1f} pp (95%) of {int(n)} items")
                         for t, a, s, n in zip(mg["t"], mg["accuracy"], se, mg["n_items"]) if not _missing(s)], color)
        chart.dots([(t, a, f"{m} {t:%Y-%m}: {a * 100:.1f}% of {int(n)} items")
                    for t, a, n in zip(mg["t"], mg["accuracy"], mg["n_items"])], color, r=2)
        c = cut.get(m)
        c_hi = naive(c.get("c_hi")) if c else None
        if c and c_hi is not None and x0 <= c_hi <= x1:
            chart.vline(c_hi, color, tooltip=f"{m}: cutoff {c_hi:%Y-%m-%d} ({c.get('cutoff_provenance') or 'unknown'})")
    return chart.render()


def post_cutoff(item_months: pd.DataFrame, cutoffs: pd.DataFrame, signals: pd.DataFrame,
                post_cutoff_scores: pd.DataFrame, item_windows: pd.DataFrame | None = None) -> str:
    """Per item-level benchmark: the monthly chart, the window control, the A3 gaps."""
    if not len(item_months):
        return '<p class="none">No item-level data with release dates.</p>'
    cut = {r["model"]: r for r in cutoffs.to_dict("records")} if len(cutoffs) else {}
    a3 = signals[signals["signal"] == "A3"] if len(signals) and "signal" in signals else pd.DataFrame()
    windows = item_windows if item_windows is not None else pd.DataFrame()
    ids = slugs(f"win-{s}-{b}" for s, b in item_months[["source", "benchmark"]].drop_duplicates().itertuples(index=False))
    out = []
    for (source, bench), g in item_months.groupby(["source", "benchmark"], sort=True):
        g = g.copy()
        g["t"] = g["month"].map(naive) + pd.Timedelta(days=14)     # mid-month
        flagged = set(a3.loc[(a3["benchmark"] == bench) & (a3["status"] != "not_flagged"), "model"]) if len(a3) else set()
        tested = set(a3.loc[a3["benchmark"] == bench, "model"]) if len(a3) else set()
        size = g.groupby("model")["n_items"].sum()
        acc = (g["accuracy"] * g["n_items"]).groupby(g["model"]).sum() / size
        rank = sorted(size.index, key=lambda m: (m not in flagged, m not in tested, -acc[m], m))
        shown = rank[:POST_CUTOFF_MAX_MODELS]
        note = (f"{len(shown)} of {len(size)} models drawn (suspects first, then tested, then by accuracy); "
                f"bars: 95% interval of the month's mean (± {Z95} SE); months with fewer than "
                f"{POST_CUTOFF_MIN_ITEMS_PER_MONTH} items of a model are left out; dashed verticals: each model's "
                "knowledge cutoff (upper end of its interval), in its colour.")
        w = windows[(windows["source"] == source) & (windows["benchmark"] == bench)] if len(windows) else windows
        out.append(f'<h3>{esc(bench)} <span class="src">({esc(source)})</span></h3>'
                   f'{_month_chart(str(bench), g, shown, flagged, cut)}<p class="note">{esc(note)}</p>'
                   + (window_control(w, cut, ids[f"win-{source}-{bench}"]) if len(w) else "")
                   + gap_table(a3[a3["benchmark"] == bench] if len(a3) else a3, post_cutoff_scores, str(bench)))
    return "".join(out)


def window_control(w: pd.DataFrame, cut: Mapping[str, Any], slug: str) -> str:
    """Models re-ranked on the items released on or after each window start, one pane per window,
    switched by radio inputs (CSS only)."""
    stamps = {naive(s) for s in w["window_start"]}
    starts = sorted(s for s in stamps if s is not None)[-(WINDOW_MAX + 1):]
    first = starts[0]
    all_rank = _ranked(w[w["window_start"].map(naive) == first])
    all_pos = {m: i + 1 for i, m in enumerate(all_rank["model"])}
    inputs, panes = [], []
    rankings = [_ranked(w[w["window_start"].map(naive) == start]) for start in starts]
    # the control opens on the most recent window that still ranks enough models to compare
    opened = max((i for i, r in enumerate(rankings) if len(r) >= WINDOW_OPEN_MIN_RANKED), default=0)
    for i, (start, ranked) in enumerate(zip(starts, rankings)):
        rid = f"{slug}-{i}"
        label = f"all items (from {start:%Y-%m})" if i == 0 else f"from {start:%Y-%m}"
        inputs.append(f'<input type="radio" name="{slug}" id="{rid}"{" checked" if i == opened else ""}>'
                      f'<label for="{rid}">{esc(label)}</label>')
        rows = []
        for j, r in enumerate(ranked.head(WINDOW_TOP).to_dict("records")):
            c = cut.get(r["model"])
            c_hi = naive(c.get("c_hi")) if c else None
            before = c_hi is not None and c_hi >= start
            rows.append([str(j + 1), esc(r["model"]), pct(r["accuracy"]),
                         "" if _missing(r.get("se")) else f"± {Z95 * float(r['se']) * 100:.1f} pp",
                         as_int(r["n_items"]), esc(all_pos.get(r["model"], "")),
                         (f'<span class="bad">{date(c_hi)}: after the window start</span>' if before else date(c_hi))])
        dropped = int((w["window_start"].map(naive) == start).sum()) - len(ranked)
        extra = f" {dropped} model(s) with fewer than {WINDOW_MIN_ITEMS} items here are not ranked." if dropped else ""
        panes.append(f'<div class="pane"><p class="note">Items released on or after {start:%Y-%m-%d}; accuracy with '
                     f"its 95% interval (± {Z95} SE).{esc(extra)} A cutoff after the window start means some of these "
                     "items may predate the model's training data.</p>"
                     + table(["rank", "model", "accuracy", "95% interval", "items", "rank on all items",
                              "knowledge cutoff"], rows) + "</div>")
    return (f'<div class="win"><p class="wintitle">Re-rank on items released after:</p>{"".join(inputs)}'
            f'<div class="panes">{"".join(panes)}</div></div>')


def _ranked(w: pd.DataFrame) -> pd.DataFrame:
    keep = w[w["n_items"] >= WINDOW_MIN_ITEMS]
    return keep.sort_values(["accuracy", "n_items", "model"], ascending=[False, False, True])


def gap_table(a3: pd.DataFrame, post_cutoff_scores: pd.DataFrame, bench: str) -> str:
    """Pre/post accuracy gap of each tested model against its ability-matched reference models (A3):
    accuracies in %, differences in pp."""
    rows = []
    for r in a3.sort_values("q_value", na_position="last").to_dict("records") if len(a3) else []:
        ev = evidence(r.get("evidence"))
        rows.append([esc(r["model"]), date(ev.get("c_hi")), pct(ev.get("p_pre")), pct(ev.get("p_post")),
                     pp(ev.get("gap_model")), pp(ev.get("gap_ref")),
                     f"{pp(r.get('effect'))}" + (f" ± {pp(r.get('se'), False)}" if not _missing(r.get("se")) else ""),
                     esc(f"{ev.get('n_pre', '')} / {ev.get('n_post', '')}"),
                     esc(len(ev.get("reference_models") or [])), esc(g2(r.get("q_value"))), esc(r.get("status"))])
    head = ["model", "cutoff", "pre acc.", "post acc.", "gap (pre − post)", "reference gap", "excess gap E ± SE",
            "items pre / post", "reference models", "q", "status"]
    out = ("<h4>Pre/post gap against reference models (A3)</h4>" + table(head, rows)) if rows else ""
    pc = post_cutoff_scores[post_cutoff_scores["benchmark"] == bench] if len(post_cutoff_scores) else post_cutoff_scores
    if len(pc):
        pc_rows = [[esc(r["model"]), pct(r.get("score_pre")), esc(as_int(r.get("n_pre"))), pct(r.get("score")),
                    esc(as_int(r.get("n_items"))) + (" (low n)" if r.get("low_n") is True else ""),
                    date(r.get("window_start"))] for r in pc.to_dict("records")]
        out += ("<details><summary>post-cutoff slices of every model</summary>"
                + table(["model", "acc. pre-cutoff", "n pre", "acc. post-cutoff", "n post", "post window starts"],
                        pc_rows) + "</details>")
    return out

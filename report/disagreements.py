"""When sources disagree, as `benchwatch status` and the report show it (issue 54).

The result is the one `analyze` stored (storage/disagreements.py: the view `source_disagreements`
analysed by analysis/disagreement.py), which the alert rule reads too; this module only words and
lays it out: a summary line, the systematic offsets, the transcription errors, and the largest gaps
of each benchmark with both sources' links. Scraped names are escaped in HTML.
"""

from __future__ import annotations

import textwrap
from functools import lru_cache
from typing import Any, Mapping

import pandas as pd

from analysis.constants import DISAGREEMENT_FDR, DISAGREEMENT_Z
from analysis.disagreement import Disagreements, from_rows, largest
from common.jsonsafe import is_null as _missing
from common.redact import inert_text
from report.base import esc, table
from report.text import TEXT_WIDTH, fit_table
import scrapers

TITLE = ("When sources disagree (source_disagreements; docs/disagreements.md): the same model on the same "
         "question set from two sources")
PER_BENCHMARK = 3


@lru_cache(maxsize=1)
def source_links() -> dict[str, str]:
    """Each source's page a person reads (`Scraper.page`, else its first URL)."""
    out = {}
    for name in scrapers.SOURCES:
        scraper = scrapers.get(name)
        out[name] = scraper.page or (scraper.urls[0] if scraper.urls else "")
    return out


def of_frames(frames: Mapping[str, pd.DataFrame]) -> Disagreements | None:
    """The stored result from the report's frames (storage.report: `disagreements`, its rows, and
    `disagreement_offsets`); None when nothing is stored."""
    rows, offsets = frames.get("disagreements"), frames.get("disagreement_offsets")
    if rows is None or offsets is None or not len(rows):
        return None
    return from_rows(rows, offsets)


def _pp(v: Any, metric: str, signed: bool = False) -> str:
    if _missing(v):
        return ""
    if metric == "proportion":
        return f"{float(v) * 100:+.1f} pp" if signed else f"{float(v) * 100:.1f}%"
    return f"{float(v):+.4g}" if signed else f"{float(v):.4g}"


def _t(value: Any) -> str:
    """A scraped name for a terminal: control characters shown, never interpreted."""
    return str(inert_text(str(value)))


def _spread(v: Any, metric: str) -> str:
    """A spread or an SE: pp for a proportion, the metric's unit else."""
    if _missing(v):
        return ""
    return f"{float(v) * 100:.1f} pp" if metric == "proportion" else f"{float(v):.3g}"


def _z(v: Any) -> str:
    return "" if _missing(v) else f"{float(v):+.1f}"


def summary(result: Disagreements) -> str:
    """One sentence: how many pairs, compared, listed, checks, findings."""
    n_bench = len(result.column_values("benchmark"))
    return (f"{result.n_rows} pairs of sources on {n_bench} benchmarks: {len(result.pairs)} compared, "
            f"{len(result.listed)} listed without comparison (settings differ or no standard error), "
            f"{len(result.transcriptions)} transcription checks (a copy beside its origin). Findings: "
            f"{len(result.findings)} gaps with |z| ≥ {DISAGREEMENT_Z:g} after the pair of sources' offset, kept by "
            f"Benjamini-Hochberg at q ≤ {DISAGREEMENT_FDR:g} over {result.n_units} independent (benchmark, model) "
            f"units; {len(result.mismatches)} transcription errors.")


def _offset_lines(result: Disagreements) -> list[str]:
    out = []
    for r in result.offsets.to_dict("records"):
        word = "systematic offset" if r["systematic"] else "offset (not distinguishable from 0)"
        out.append(f"{_t(r['benchmark'])}: {_t(r['table_a'])} − {_t(r['table_b'])}: {word} "
                   f"{_pp(r['table_offset'], r['metric'], True)} ± {_spread(r['offset_se'], r['metric'])} "
                   f"(median of {r['n_pairs']} models; harness spread τ {_spread(r['tau'], r['metric'])})")
    return out


def _mismatch_lines(result: Disagreements) -> list[str]:
    return [f"{_t(r['benchmark'])} · {_t(r['model'])}: {_t(r['table_a'])} {_pp(r['score_a'], r['metric'])} vs "
            f"{_t(r['table_b'])} {_pp(r['score_b'], r['metric'])} ({_pp(r['diff'], r['metric'], True)})"
            for r in result.mismatches.to_dict("records")]


def disagreements_text(result: Disagreements | None, per_benchmark: int = PER_BENCHMARK) -> str:
    """The text block of status and the text report."""
    if result is None or not result.n_rows:
        return "(no model is measured by two sources on one question set)"
    top = largest(result, per_benchmark)
    lines = textwrap.wrap(summary(result), TEXT_WIDTH)
    offsets = _offset_lines(result)
    if offsets:
        lines += ["", "offsets between two sources on one benchmark (estimated once; the gaps below are "
                      "measured against them):"]
        lines += [y for x in offsets for y in textwrap.wrap(x, TEXT_WIDTH, initial_indent="  ",
                                                            subsequent_indent="    ")]
    mismatches = _mismatch_lines(result)
    if mismatches:
        lines += ["", "transcription errors (a copy off the board it copies by more than rounding):"]
        lines += ["  " + x for x in mismatches]
    if len(top):
        lines += ["", f"largest gaps per benchmark (at most {per_benchmark}; * = a finding):"]
        rows = [[("* " if r["finding"] else "") + _t(r["benchmark"]), _t(r["model"]), _t(r["table_a"]), _t(r["table_b"]),
                 _pp(r["score_a"], r["metric"]), _pp(r["score_b"], r["metric"]),
                 _pp(r["diff"], r["metric"], True), _z(r["z"]), _z(r["z_resid"])]
                for r in top.to_dict("records")]
        lines.append(fit_table(["benchmark", "model", "source a", "source b", "a", "b", "a − b", "z",
                                "z vs offset"], rows))
    findings = result.findings
    if len(findings):
        lines += ["", "why (findings):"]
        for r in findings.to_dict("records"):
            lines += textwrap.wrap(f"{_t(r['benchmark'])} · {_t(r['model'])}: {_t(r['why'])}", TEXT_WIDTH,
                                   initial_indent="  ", subsequent_indent="    ")
    used = sorted(result.column_values("source_a") | result.column_values("source_b"))
    links = source_links()
    lines += [""] + textwrap.wrap("sources: " + ", ".join(f"{s} {links.get(s, '')}".strip() for s in used),
                                  TEXT_WIDTH, subsequent_indent="  ", break_on_hyphens=False, break_long_words=False)
    return "\n".join(lines)


def _link(source: str) -> str:
    url = source_links().get(str(source), "")
    return f'<a href="{esc(url)}">{esc(source)}</a>' if url.startswith(("https://", "http://")) else esc(source)


def _table(frame: pd.DataFrame, with_z: bool) -> str:
    head = ["benchmark", "model", "source a", "source b", "a", "b", "a − b"]
    head += ["z", "z vs offset", "q", "finding"] if with_z else []
    head += ["why"]
    rows = []
    for r in frame.to_dict("records"):
        table_a = esc(r["table_a"]).replace(esc(r["source_a"]), _link(r["source_a"]), 1)
        table_b = esc(r["table_b"]).replace(esc(r["source_b"]), _link(r["source_b"]), 1)
        cells = [esc(r["benchmark"]), esc(r["model"]), table_a, table_b, esc(_pp(r["score_a"], r["metric"])),
                 esc(_pp(r["score_b"], r["metric"])), esc(_pp(r["diff"], r["metric"], True))]
        if with_z:
            cells += [esc(_z(r["z"])), esc(_z(r["z_resid"])),
                      "" if _missing(r.get("q")) else f"{float(r['q']):.2g}",
                      '<span class="bad">finding</span>' if r.get("finding") else ""]
        cells.append(esc(r["why"]))
        rows.append(cells)
    return table(head, rows, wrap=("why",))


def disagreements_html(result: Disagreements | None, per_benchmark: int = PER_BENCHMARK) -> str:
    """The report's section: summary, offsets, transcription errors, the largest gaps per benchmark."""
    if result is None or not result.n_rows:
        return '<p class="note">No model is measured by two sources on one question set.</p>'
    top = largest(result, per_benchmark)
    out = [f'<p class="note">{esc(summary(result))} z treats the two runs as independent: conservative '
           "when both ran the same items.</p>"]
    offsets = _offset_lines(result)
    if offsets:
        out.append("<p>Offsets between two sources on one benchmark, estimated once (the gaps are measured "
                   "against them):</p><ul>" + "".join(f"<li>{esc(x)}</li>" for x in offsets) + "</ul>")
    if len(result.mismatches):
        out.append("<p>Transcription errors (a copy off the board it copies by more than rounding):</p>"
                   + _table(result.mismatches, with_z=False))
    if len(top):
        out.append(f"<p>Largest gaps per benchmark (at most {per_benchmark}):</p>" + _table(top, with_z=True))
    return "".join(out)

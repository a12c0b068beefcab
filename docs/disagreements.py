"""Regenerate the real-history figures of docs/disagreements.md (issue 54: when sources disagree).

    python docs/disagreements.py [--snapshots ../shared/snapshots] [--from-db FILE] [--check]

Backfills the dated leaderboard copies of --snapshots into a temporary database with the project's
own backfill (docs/figures.py's `backfill`: `benchwatch backfill DIR`), or reads --from-db (a
database already backfilled from them), reads the view `source_disagreements`, runs
analysis/disagreement.py and rewrites each block `<!-- figures:NAME -->` … `<!-- /figures:NAME -->`
of docs/disagreements.md. --check compares instead (exit 1 when stale, 2 without the snapshots or a
block). Nothing here is tuned to the files: the same code runs on any history.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:                 # `python docs/disagreements.py` from a clone
    sys.path.insert(0, str(REPO))

import pandas as pd  # noqa: E402

from docs.doc_blocks import rewrite  # noqa: E402
from docs.figures import backfill  # noqa: E402

DOC = REPO / "docs" / "disagreements.md"
DEFAULT_SNAPSHOTS = REPO.parent / "shared" / "snapshots"
LARGEST = 12          # measurement pairs listed by |z against the offset|


def _table(frame: pd.DataFrame) -> str:
    if not len(frame):
        return "(none)"
    cell = lambda v: "" if v is None or (isinstance(v, float) and v != v) else str(v).replace("|", "\\|")  # noqa: E731
    lines = ["| " + " | ".join(frame.columns) + " |", "|" + "---|" * len(frame.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join(lines)


def _pct(v) -> str:
    return "" if v is None or v != v else f"{float(v) * 100:.1f}"


def _signed(v) -> str:
    return "" if v is None or v != v else f"{float(v) * 100:+.1f}"


def _z(v) -> str:
    return "" if v is None or v != v else f"{float(v):+.1f}"


def blocks(rows: pd.DataFrame) -> dict[str, str]:
    """Every block of docs/disagreements.md from the view's rows."""
    from analysis.disagreement import analyse
    from report.disagreements import summary
    result = analyse(rows)
    out = {"disagreement-summary": summary(result)}

    per = rows.groupby(["benchmark", "table_a", "table_b", "kind"], sort=True).agg(
        pairs=("model", "size"), compared=("comparable", "sum"),
        median_gap=("diff", "median")).reset_index()
    per["median_gap"] = per["median_gap"].map(_signed)
    per = per.rename(columns={"median_gap": "median a − b (pp)", "compared": "at a common setting"})
    out["disagreement-pairs"] = _table(per)

    off = result.offsets.copy()
    if len(off):
        off = pd.DataFrame({"benchmark": off["benchmark"], "a": off["table_a"], "b": off["table_b"],
                            "models": off["n_pairs"], "offset a − b (pp)": off["table_offset"].map(_signed),
                            "its SE (pp)": off["offset_se"].map(_pct), "harness spread τ (pp)": off["tau"].map(_pct),
                            "systematic": off["systematic"].map(lambda b: "yes" if b else "no")})
    out["disagreement-offsets"] = _table(off)

    mm = result.mismatches
    out["disagreement-transcription"] = _table(pd.DataFrame({
        "benchmark": mm["benchmark"], "model": mm["model"], "copy": mm["table_a"], "origin": mm["table_b"],
        "copy (%)": mm["score_a"].map(_pct), "origin (%)": mm["score_b"].map(_pct),
        "gap (pp)": mm["diff"].map(_signed)}) if len(mm) else pd.DataFrame())

    pairs = result.pairs
    top = pairs.reindex(pairs["z_resid"].abs().sort_values(ascending=False).index).head(LARGEST)
    out["disagreement-largest"] = _table(pd.DataFrame({
        "benchmark": top["benchmark"], "model": top["model"], "a": top["table_a"], "b": top["table_b"],
        "a (%)": top["score_a"].map(_pct), "b (%)": top["score_b"].map(_pct), "a − b (pp)": top["diff"].map(_signed),
        "z": top["z"].map(_z), "z vs offset": top["z_resid"].map(_z),
        "q": top["q"].map(lambda v: f"{float(v):.2g}"),
        "finding": top["finding"].map(lambda b: "yes" if b else "")}) if len(top) else pd.DataFrame())

    listed = result.listed
    out["disagreement-listed"] = _table(pd.DataFrame({
        "benchmark": listed["benchmark"], "model": listed["model"], "a": listed["table_a"], "b": listed["table_b"],
        "a states": listed["setting_a"].replace("", "none"), "b states": listed["setting_b"].replace("", "none"),
        "a (%)": listed["score_a"].map(_pct), "b (%)": listed["score_b"].map(_pct)}) if len(listed) else pd.DataFrame())
    return out


def read_rows(db: Path) -> pd.DataFrame:
    from storage.query import run_query
    from storage.store import open_store
    return run_query("SELECT * FROM source_disagreements ORDER BY benchmark, model, table_a, table_b", open_store(db), threads=1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--snapshots", type=Path, default=DEFAULT_SNAPSHOTS,
                    help="folder of dated leaderboard copies (default ../shared/snapshots beside the repository)")
    ap.add_argument("--from-db", type=Path, default=None,
                    help="a database already backfilled from those copies (read only; no backfill)")
    ap.add_argument("--doc", type=Path, default=DOC, help="the document to rewrite (default docs/disagreements.md)")
    ap.add_argument("--check", action="store_true", help="do not write; exit 1 when the document is stale")
    args = ap.parse_args(argv)
    if args.from_db is not None:
        rows = read_rows(args.from_db)
    else:
        if not args.snapshots.is_dir():
            print(f"disagreements: snapshots folder {args.snapshots} not found", file=sys.stderr)
            return 2
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "history.duckdb"
            backfill(args.snapshots, db)
            rows = read_rows(db)
    return rewrite(args.doc, blocks(rows), check=args.check, name="disagreements",
                           command="python docs/disagreements.py")

if __name__ == "__main__":
    sys.exit(main())

"""Per-table S on the real history, recomputed independently (issue 20, "Done when").

The real leaderboard copies (../shared/snapshots) are backfilled date by date and analyzed after
each date (the session's day-by-day replay, tests/conftest.py's `real_history_replay`, which
tests/system/test_alert_replay.py checks the messages of); after each date on which a table's
source got a new file, its stored S of the table (saturation_latest) is compared with S
recomputed here: the newest file of that source up
to the date, read by a minimal parser written in this test (never the scrapers), the model's
best row, the top k = 5, n from registry/benchmarks.csv and the paper's formula
S = exp(-((s1 - sk) / sqrt(s1 (1 - s1) / n^0.5 + sk (1 - sk) / n^0.5))^2).

Only which page rows are one model (registry identity: `o3-high` is `o3-2025-04-16`) is
taken from the stored scores, by the page's name; everything else (which file, which rows and
columns, the release, the percent scale, n, the top k, the formula) is this test's own.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from pathlib import Path

import pytest

from helpers import ROOT, SNAPSHOTS, needs

K, ALPHA = 5, 0.5


def registry_n() -> dict[str, float]:
    with open(ROOT / "registry" / "benchmarks.csv", encoding="utf-8") as fh:
        return {r["id"]: float(r["n_items"]) for r in csv.DictReader(fh) if r["n_items"]}


def paper_s(scores: list[float], n: float) -> float:
    top = sorted(scores, reverse=True)[:K]
    s1, sk = top[0], top[K - 1]
    n_eff = n ** ALPHA
    se = math.sqrt(s1 * (1 - s1) / n_eff + sk * (1 - sk) / n_eff)
    return math.exp(-((s1 - sk) / max(se, 1e-12)) ** 2)


def key(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.casefold())


# --- minimal parsers: (page name, score as a proportion) ------------------------------------------

def evalplus_humaneval(path: Path) -> list[tuple[str, float]]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".csv":
        return [(r["Model"], float(r["pass@1_base"]) / 100) for r in csv.DictReader(io.StringIO(text))
                if r.get("pass@1_base") not in (None, "", "-")]
    out = []
    for name, entry in json.loads(text).items():
        value = (entry.get("pass@1_base") or entry.get("pass@1") or {}).get("humaneval")
        if value is not None:
            out.append((name, float(value) / 100))
    return out


def simple_evals(column: str):
    """The README's results table: the column whose header starts with `column`."""
    def parse(path: Path) -> list[tuple[str, float]]:
        out, header = [], None
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.startswith("|"):
                header = None if not line.strip() else header
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if cells and cells[0].lower() == "model":
                header = [re.sub(r"\[\^\d+\]|<br>.*|%|\*", "", c).strip().lower() for c in cells]
                continue
            if header is None or set("".join(cells)) <= set(":- "):
                continue
            col = next((i for i, h in enumerate(header) if h.startswith(column.lower())), None)
            if col is None or col >= len(cells):
                continue
            name = re.sub(r"\[\^\d+\]|\*", "", cells[0]).strip()
            value = re.sub(r"[*`]|\[\^\d+\]", "", cells[col]).strip()
            if name and re.fullmatch(r"\d+(\.\d+)?", value):
                out.append((name, float(value) / 100))
        return out
    return parse


def lmarena_mmlu(path: Path) -> list[tuple[str, float]]:
    rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))
    if not rows or "MMLU" not in rows[0]:
        return []
    name_col = "key" if "key" in rows[0] else "Model"
    out = [(r[name_col], float(r["MMLU"])) for r in rows if re.fullmatch(r"\d+(\.\d+)?", (r["MMLU"] or "").strip())]
    if out and max(v for _, v in out) > 1:
        out = [(m, v / 100) for m, v in out]
    return out


def epoch(path: Path) -> list[tuple[str, float]]:
    rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))
    col = "mean_score" if rows and "mean_score" in rows[0] else "Best score (across scorers)"
    return [(r["Model version"], float(r[col])) for r in rows if (r.get(col) or "").strip()]


def swebench_verified(path: Path) -> list[tuple[str, float]]:
    boards = json.loads(path.read_text(encoding="utf-8"))["leaderboards"]
    board = next(b for b in boards if b["name"] == "Verified")
    return [(r["name"], float(r["resolved"]) / 100) for r in board["results"] if r.get("resolved") is not None]


def livebench_global(path: Path) -> list[tuple[str, float]]:
    release = re.search(r"table_(\d{4}_\d{2}_\d{2})", path.name)[1]
    cats = json.loads(sorted(path.parent.glob(f"livebench_categories_{release}_*"))[-1].read_text(encoding="utf-8"))
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
    header = [h.strip() for h in rows[0]]
    out = []
    for row in rows[1:]:
        if len(row) != len(header):
            continue
        cell = dict(zip(header, (c.strip() for c in row)))
        means = []
        for tasks in cats.values():
            values = [cell.get(t, "") for t in tasks]
            if not tasks or any(not re.fullmatch(r"-?\d+(\.\d+)?", v) for v in values):
                break
            means.append(sum(float(v) for v in values) / len(values) / 100)
        else:
            out.append((cell["model"], sum(means) / len(means)))
    return out


# table -> (source folder, file-name pattern, parser, population compared)
TABLES = {
    "humaneval:evalplus": ("evalplus", r"^evalplus_", evalplus_humaneval, "models"),
    "humaneval:simple_evals": ("simple_evals", r"^simple_evals_readme_", simple_evals("humaneval"), "models"),
    "mmlu:simple_evals": ("simple_evals", r"^simple_evals_readme_", simple_evals("mmlu"), "models"),
    "mmlu:lmarena": ("lmarena", r"^lmarena_leaderboard_table_", lmarena_mmlu, "models"),
    "gpqa_diamond:simple_evals": ("simple_evals", r"^simple_evals_readme_", simple_evals("gpqa"), "models"),
    "gpqa_diamond:epoch": ("epoch", r"^epoch_gpqa_diamond_", epoch, "models"),
    "swebench_verified:epoch": ("epoch", r"^epoch_swe_bench_verified_", epoch, "models"),
    # the site's JSON; dates whose newest SWE-bench snapshot is the HTML index are not compared
    "swebench_verified:swebench": ("swebench", r"^swebench_\d", swebench_verified, "systems"),
    "livebench:livebench": ("livebench", r"^livebench_table_", livebench_global, "models"),
}
DATE = re.compile(r"_(\d{4}-\d{2}-\d{2})\.[A-Za-z0-9]+$")


def newest_file(source: str, pattern: str, date: str) -> Path | None:
    """The newest file of `source` up to `date` if it matches `pattern` (else that table's newest
    snapshot is one this test does not read: None)."""
    files = sorted((p for p in (SNAPSHOTS / source).glob("*") if DATE.search(p.name)
                    and DATE.search(p.name)[1] <= date and "categories_" not in p.name),
                   key=lambda p: (DATE.search(p.name)[1], p.name))
    relevant = [p for p in files if re.search(pattern, p.name)]
    if source != "swebench":
        files = relevant      # the source's other files hold other benchmarks (SWE-bench's HTML index: the same)
    if not relevant or files[-1] != relevant[-1]:
        return None
    return relevant[-1]


@needs(SNAPSHOTS)
@pytest.mark.slow
@pytest.mark.xdist_group("replay")   # the session's replay (tests/conftest.py), built once
def test_stored_per_table_s_matches_an_independent_recomputation_date_by_date(real_history_replay):
    """On the session's day-by-day replay (each date's files backfilled, then `analyze`: the
    stored S of every table after each date with files, and the scores' names, tests/conftest.py)."""
    from jobs.backfill import plan_backfill

    replay = real_history_replay
    n_of = registry_n()
    plan = plan_backfill(SNAPSHOTS)
    sources = {s for s, *_ in TABLES.values()}
    checked: dict[str, int] = {}
    dates = sorted({f.date for f in plan})
    assert dates == [d.date for d in replay.days if d.files]          # the replay ran each date with files
    for date in dates:
        todays = [f for f in plan if f.date == date]
        if not sources & {f.source for f in todays}:
            continue
        # Compared on each date where one of today's files is the newest file some table is
        # compared with, and on the last date. A date whose files this test reads for no table (an
        # LMArena history mirror, SWE-bench's HTML index) changes no compared input: its rows reach
        # the next analysis (each recomputes from everything stored), where every table is compared.
        fresh = any(f.path == newest_file(s, pattern, date) for s, pattern, *_ in TABLES.values() for f in todays)
        if not fresh and date != dates[-1]:
            continue
        stored = replay.saturation[date]
        identity = {(s, key(r)): m for s, r, m in replay.names[date]}
        for table, (source, pattern, parse, population) in TABLES.items():
            path = newest_file(source, pattern, date)
            if path is None:
                continue
            bench = table.split(":")[0]
            rows = parse(path)
            best: dict[str, float] = {}
            for name, value in rows:
                model = identity.get((source, key(name)), key(name))
                best[model] = max(best.get(model, -1.0), value)
            if len(best) < K:
                continue
            stored_id = table
            if source == "livebench":
                release = re.search(r"table_(\d{4})_(\d{2})_(\d{2})", path.name)
                stored_id = f"{table}:{release[1]}-{release[2]}-{release[3]}"
            got = stored[(stored["table_id"] == stored_id) & (stored["population"] == population)]
            assert len(got) == 1, f"{date} {stored_id}: no stored row ({sorted(stored['table_id'])[:20]})"
            want = paper_s(list(best.values()), n_of[bench])
            assert got["s_index"].iloc[0] == pytest.approx(want, rel=1e-6, abs=1e-9), \
                f"{date} {stored_id} from {path.name}: stored {got['s_index'].iloc[0]}, independent {want}"
            checked[table] = checked.get(table, 0) + 1
    assert set(checked) == set(TABLES), f"tables never compared: {set(TABLES) - set(checked)}"

"""The recipes of docs/contributing.md ("Add a leaderboard", "Add an alert rule", "Add a statistic") followed to the letter on a
copy of the repository, and the file list each recipe states checked against what following it
touched.

Each recipe ends in a paragraph `Files (N): `a`, `b`, … (comment)` (`<name>` stands for the new
plug-in's name, `<file>` for a source's saved response). A test copies the tracked files into a temporary folder, makes there exactly the edits
the recipe's steps say (a toy plug-in, its registry line, its threshold, its storage read, its
tests, its docs), runs the toy through the unchanged code of that copy (a real DuckDB file,
the engine, the job), runs the tests it added, and requires the files that differ from this
checkout to be the recipe's list, N of them. A step the recipe omits makes the toy fail; a file
the recipe names but the toy never needed makes the count differ.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOY_FILE = "leaderboard.json"     # a toy source's saved response (and the last segment of its URL)
FILES_LINE = re.compile(r"^Files \((\d+)\): ([^(]+)", re.M)    # the list ends at a parenthesis


# --- the recipe and the copy ----------------------------------------------------------------------

def section(doc: Path, heading: str) -> str:
    """The text of `## heading` in `doc`, up to the next heading of that level."""
    text = doc.read_text(encoding="utf-8")
    m = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert m, f"{doc.name} has no section '## {heading}'"
    return m[1]


def recipe_files(doc: Path, heading: str, name: str, file: str = TOY_FILE) -> tuple[int, set[str]]:
    """(N, the paths) of the recipe's `Files (N): …` paragraph, `<name>` and `<file>` replaced."""
    found = FILES_LINE.findall(section(doc, heading))
    assert len(found) == 1, f"'## {heading}' needs one line 'Files (N): `path`, …'"
    count, listed = found[0]
    paths = re.findall(r"`([^`]+)`", listed)
    return int(count), {p.replace("<name>", name).replace("<file>", file) for p in paths}


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def copy(tmp_path) -> Path:
    """The tracked files of this checkout, as they are in the working tree, in a fresh folder."""
    if not (ROOT / ".git").exists() or shutil.which("git") is None:
        pytest.skip("not a git checkout: the recipe tests copy the tracked files")
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    dest = tmp_path / "repo"
    for rel in filter(None, listed.decode().split("\0")):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


def touched(copy: Path) -> set[str]:
    """Files of the copy that are new or differ from this checkout (bytecode, caches and the replay
    copies generated from the cases, which .gitignore lists, aside)."""
    generated = {line.strip().lstrip("/") for line in (copy / ".gitignore").read_text(encoding="utf-8").splitlines()
                 if line.strip().startswith("/tests/fixtures/replay/")}
    out = set()
    for path in copy.rglob("*"):
        if not path.is_file() or "__pycache__" in path.parts or path.suffix == ".pyc" or ".pytest_cache" in path.parts:
            continue
        rel = path.relative_to(copy).as_posix()
        if rel in generated:
            continue
        orig = ROOT / rel
        if not orig.is_file() or _digest(orig) != _digest(path):
            out.add(rel)
    return out


def edit(copy: Path, rel: str, old: str, new: str) -> None:
    path = copy / rel
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{rel}: the recipe's anchor {old!r} is not there once"
    path.write_text(text.replace(old, new), encoding="utf-8")


def append(copy: Path, rel: str, text: str) -> None:
    path = copy / rel
    path.write_text(path.read_text(encoding="utf-8").rstrip("\n") + "\n\n" + textwrap.dedent(text).lstrip("\n"),
                    encoding="utf-8")


def write(copy: Path, rel: str, text: str) -> None:
    (copy / rel).write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")


def run_in(copy: Path, *args: str, timeout: float = 300) -> str:
    """Run python in the copy (its packages first on the path); the output, or a failure with it."""
    env = {**os.environ, "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}
    for var in ("SLACK_WEBHOOK_URL", "SLACK_BOT_TOKEN", "SLACK_CHANNEL", "PREFECT_API_URL", "BENCHWATCH_DB"):
        env.pop(var, None)
    proc = subprocess.run([sys.executable, *args], cwd=copy, env=env, capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, f"{args}: exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


def assert_files_match(copy: Path, doc: Path, heading: str, name: str) -> None:
    count, listed = recipe_files(doc, heading, name)
    got = touched(copy)
    assert got == listed, f"'{heading}' lists {sorted(listed)}; following it touched {sorted(got)}"
    assert count == len(listed) == len(got), f"'{heading}' says {count} files; following it touched {len(got)}"


# --- "Add an alert rule" ----------------------------------------------------------------------------

RULE = "tiny_snapshot"


def follow_the_alert_rule_recipe(copy: Path) -> None:
    # 1. the rule module, its input read through storage, its threshold in alerts/config.py
    write(copy, f"alerts/rules/{RULE}.py", '''
        """tiny_snapshot{source}: the newest usable snapshot of a source holds fewer scores than
        `RuleSettings.tiny_snapshot_min_scores` (a page that lost most of its table). Resolves when a
        newer snapshot has enough."""

        from __future__ import annotations

        from typing import TYPE_CHECKING, Any, Mapping

        import pandas as pd

        from alerts.config import RuleSettings
        from alerts.records import RESOLVED, Condition, to_utc
        from alerts.rules.base import AlertKind, AlertRule, RuleContext, RuleOutput, make_labels
        from alerts.text import clean
        from storage import look_queries as look

        if TYPE_CHECKING:
            from storage.store import Connection

        TINY_SNAPSHOT = "tiny_snapshot"


        def _conditions(frame: pd.DataFrame, ctx: RuleContext) -> RuleOutput:
            low = frame[frame["n_scores"] < ctx.settings.tiny_snapshot_min_scores]
            conditions = [Condition(
                labels=make_labels(TINY_SNAPSHOT, source=row["source"]),
                annotations={"n_scores": int(row["n_scores"]), "snapshot_id": int(row["snapshot_id"]),
                             "why": "a page that lost its table would rank a handful of models",
                             "sql": look.source_snapshots(str(row['source']))},
                data_as_of=to_utc(row["observed_at"])) for row in low.to_dict("records")]
            return RuleOutput(conditions, {(TINY_SNAPSHOT, str(s)) for s in frame["source"]})


        def _headline(transition: str, labels: Mapping[str, str], a: Mapping[str, Any]) -> str:
            source = clean(labels["source"])
            return f"{source}: snapshot size back to normal" if transition == RESOLVED \\
                else f"{source}: newest snapshot has only {a.get('n_scores')} scores"


        def _numbers(labels: Mapping[str, str], a: Mapping[str, Any]) -> list[str]:
            return [f"snapshot {a.get('snapshot_id')}: {a.get('n_scores')} scores"]


        def _read(con: Connection, settings: RuleSettings) -> pd.DataFrame | None:
            from storage import rule_inputs as store
            return store.read_newest_snapshot_sizes(con)


        RULE = AlertRule(name="tiny_snapshot", input="snapshot_sizes", read=_read, conditions=_conditions,
                         kinds=(AlertKind(TINY_SNAPSHOT, _headline, _numbers, scope_keys=("source",)),))
        ''')
    append(copy, "storage/rule_inputs.py", '''
        def read_newest_snapshot_sizes(con: duckdb.DuckDBPyConnection) -> pd.DataFrame | None:
            """Per source: its newest usable snapshot's id, observation and score count (tiny_snapshot)."""
            df = con.execute("""SELECT source, id AS snapshot_id, observed_at, n_scores FROM snapshots
                                WHERE status IS DISTINCT FROM 'held'
                                QUALIFY row_number() OVER (PARTITION BY source ORDER BY observed_at DESC, id DESC) = 1
                                ORDER BY source""").df()
            return None if df.empty else df
        ''')
    edit(copy, "alerts/config.py", "    enabled_info_kinds: frozenset[str] = frozenset()",
         "    tiny_snapshot_min_scores: int = 3   # fewer scores in a source's newest snapshot: tiny_snapshot\n"
         "    enabled_info_kinds: frozenset[str] = frozenset()")
    # 2. one line in RULES (and its import)
    edit(copy, "alerts/rules/__init__.py", "snapshot_held, source_health\n",
         f"snapshot_held, source_health, {RULE}\n")
    edit(copy, "alerts/rules/__init__.py", "    new_frontier.RULE,\n", f"    new_frontier.RULE,\n    {RULE}.RULE,\n")
    # 3. tests: conditions from small frames; headline and numbers
    append(copy, "tests/unit/test_alerts_rules.py", f'''
        def test_tiny_snapshot_fires_below_its_floor_and_covers_every_source():
            from datetime import datetime, timezone

            import pandas as pd

            from alerts.config import RuleSettings
            from alerts.rules.base import RuleContext
            from alerts.rules.{RULE} import RULE

            frame = pd.DataFrame({{"source": ["a", "b"], "snapshot_id": [1, 2], "n_scores": [2, 40],
                                  "observed_at": pd.to_datetime(["2026-01-01", "2026-01-02"], utc=True)}})
            out = RULE.conditions(frame, RuleContext(datetime(2026, 1, 3, tzinfo=timezone.utc), RuleSettings()))
            assert [c.labels["source"] for c in out.conditions] == ["a"]
            assert out.covered == {{("tiny_snapshot", "a"), ("tiny_snapshot", "b")}}
        ''')
    append(copy, "tests/unit/test_alerts_render.py", f'''
        def test_tiny_snapshot_headline_and_numbers():
            from alerts.records import FIRING, RESOLVED
            from alerts.rules import kind

            spec = kind("tiny_snapshot")
            labels = {{"kind": "tiny_snapshot", "source": "csv"}}
            assert spec.headline(FIRING, labels, {{"n_scores": 2}}) == "csv: newest snapshot has only 2 scores"
            assert spec.headline(RESOLVED, labels, {{}}) == "csv: snapshot size back to normal"
            assert spec.numbers(labels, {{"snapshot_id": 7, "n_scores": 2}}) == ["snapshot 7: 2 scores"]
        ''')
    # 4. docs: a line in docs/alerts.md's table
    edit(copy, "docs/alerts.md", "| network outage (every source",
         "| a source's newest snapshot with fewer scores than `tiny_snapshot_min_scores` | state | when it starts "
         "and when a newer snapshot has enough |\n| network outage (every source")


NOTIFY_TINY = """
import sys
from datetime import datetime, timezone

import pandas as pd

from jobs.alerts import run_notify
from storage.db import insert_frame
from jobs.sync import connect_synced
from storage.store import open_store

path = open_store(sys.argv[1])
t = pd.Timestamp("2026-02-01", tz="UTC")
with connect_synced(path) as con:
    insert_frame(con, "snapshots", pd.DataFrame([{
        "id": i, "source": s, "sha256": f"h{i}", "blob_sha256": [f"h{i}"], "file_names": ["x.csv"],
        "observed_at": t, "first_seen": t, "last_seen": t, "origin": "ingest", "parser_version": 1,
        "n_scores": n, "n_items": 0, "n_models": n, "n_rejects": 0, "status": "ok"}
        for i, s, n in ((1, "csv", 2), (2, "aider_polyglot", 50))]))
summary = run_notify(path, now=datetime(2026, 2, 2, tzinfo=timezone.utc))
with connect_synced(path) as con:
    firing = con.execute("SELECT labels->>'source' FROM alerts WHERE kind = 'tiny_snapshot' AND state = 'firing'").fetchall()
    sent = con.execute("SELECT count(*) FROM notifications WHERE kind = 'tiny_snapshot' AND delivered_at IS NOT NULL").fetchone()
print(firing, sent[0], summary.enqueued)
"""


@pytest.mark.slow      # a copy of the repository, one notify and two tests in child processes
def test_the_alert_rule_recipe_adds_a_working_rule_in_the_files_it_lists(copy, tmp_path):
    follow_the_alert_rule_recipe(copy)
    out = run_in(copy, "-c", NOTIFY_TINY, str(tmp_path / "bw.duckdb"))
    assert out.split()[:2] == ["[('csv',)]", "1"], out          # fired for the tiny source only, delivered
    run_in(copy, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/unit/test_alerts_rules.py",
           "tests/unit/test_alerts_render.py", "-k", "tiny_snapshot")
    assert_files_match(copy, copy / "docs" / "contributing.md", "Add an alert rule", RULE)


# --- "Add a statistic" ------------------------------------------------------------------------------

SIGNAL = "above_half"


def follow_the_statistic_recipe(copy: Path) -> None:
    # 1. the signal module; its threshold and floor in analysis/constants.py, its knob in Thresholds
    write(copy, f"analysis/contamination/{SIGNAL}.py", '''
        """TOY (tests/integration/test_recipes.py): a model's proportion score above one half, a one-sided normal
        test with the binomial SE of its n_items (sqrt(s (1 - s) / n)); a placebo of uniform p-values.
        Pure: frames in, tests out."""

        from __future__ import annotations

        import math

        import numpy as np
        import pandas as pd
        from scipy import stats

        from analysis.constants import ABOVE_HALF_CENTER
        from analysis.contamination.base import PLACEBO_COLUMNS, Signal, SignalInputs, SignalTest, Thresholds, \\
            signal_test


        def _tests(inputs: SignalInputs, th: Thresholds) -> list[SignalTest]:
            if inputs.scores is None or not len(inputs.scores):
                return []
            out = []
            for row in inputs.scores.to_dict("records"):
                n, s = row.get("n_items"), row["score"]
                if n is None or pd.isna(n) or n < th.above_half_min_items or not 0 < s < 1:
                    continue
                effect, se = s - ABOVE_HALF_CENTER, math.sqrt(s * (1 - s) / n)
                res = {"effect": effect, "se": se, "p_value": float(stats.norm.sf(effect / se)),
                       "ci_low": effect - 1.96 * se, "ci_high": effect + 1.96 * se, "n_items": int(n)}
                out.append(signal_test("TOY", row["model"], row["benchmark"], row["source"], res))
            return out


        def _placebo(inputs: SignalInputs, th: Thresholds, trials: int) -> pd.DataFrame:
            n = 20
            p = inputs.rng.uniform(size=(trials, n))
            return pd.DataFrame({"trial": np.repeat(np.arange(trials), n), "signal": "TOY", "source": "s",
                                 "benchmark": "b", "model": np.tile([f"m{i}" for i in range(n)], trials),
                                 "effect": 0.1, "se": 0.01, "p_value": p.ravel(), "gate": True},
                                columns=PLACEBO_COLUMNS)


        SIGNAL = Signal(name="TOY", tests=_tests, placebo=_placebo, floors=("above_half_min_items",))
        ''')
    append(copy, "analysis/constants.py", '''
        # Toy signal of tests/integration/test_recipes.py: the score it tests against, and its floor of items.
        ABOVE_HALF_CENTER = 0.5
        ABOVE_HALF_MIN_ITEMS = 50
        ''')
    edit(copy, "analysis/contamination/base.py", "from analysis.constants import (\n",
         "from analysis.constants import (\n    ABOVE_HALF_MIN_ITEMS,\n")
    edit(copy, "analysis/contamination/base.py", "    min_effect: float = MIN_EFFECT\n",
         "    min_effect: float = MIN_EFFECT\n    above_half_min_items: int = ABOVE_HALF_MIN_ITEMS\n")
    # 2. one line in SIGNALS (and its import)
    edit(copy, "analysis/contamination/__init__.py", "from analysis.contamination import a1, a2, a3_signal\n",
         f"from analysis.contamination import a1, a2, a3_signal, {SIGNAL}\n")
    edit(copy, "analysis/contamination/__init__.py", "    a2.SIGNAL,\n)", f"    a2.SIGNAL,\n    {SIGNAL}.SIGNAL,\n)")
    # 3. tests: against an independent computation, and a null test that can fail
    append(copy, "tests/unit/test_contamination.py", f'''
        def test_above_half_is_the_normal_test_computed_by_hand():
            import math

            import numpy as np
            import pandas as pd
            from scipy import stats

            from analysis.contamination import Thresholds, run_signals

            scores = pd.DataFrame({{"source": "s", "benchmark": "b", "model": ["m1", "m2", "m3"],
                                   "score": [0.62, 0.5, 0.9], "n_items": [400, 400, 10]}})
            cut = pd.DataFrame({{"model": pd.Series(dtype=str), "c_lo": pd.Series(dtype="datetime64[us]"),
                                "c_hi": pd.Series(dtype="datetime64[us]")}})
            out = run_signals(scores, None, cut, None, None, rng=np.random.default_rng(0),
                              now=pd.Timestamp("2026-01-01"), th=Thresholds())
            toy = out[out["signal"] == "TOY"].set_index("model")
            assert list(toy.index) == ["m1", "m2"]                    # m3: under the floor of items
            z = 0.12 / math.sqrt(0.62 * 0.38 / 400)
            assert toy.at["m1", "p_value"] == pytest.approx(stats.norm.sf(z), rel=1e-12)
        ''')
    # 4. docs: the formula, its null and its floor in docs/statistics.md
    edit(copy, "docs/statistics.md", "### Suspicions: states and the first notification",
         "### TOY (analysis/contamination/above_half.py)\n\nz = (s − 0.5) / sqrt(s (1 − s) / n), one-sided "
         "normal under H0: s = 0.5; floor: `ABOVE_HALF_MIN_ITEMS` items. `calibrate`: uniform placebo.\n\n"
         "### Suspicions: states and the first notification")


ANALYZE_TOY = """
import sys

import numpy as np
import pandas as pd

from jobs.contamination import run_contamination
from storage.db import insert_frame
from jobs.sync import connect_synced
from storage.store import open_store

path = open_store(sys.argv[1])
t = pd.Timestamp("2026-02-01", tz="UTC")
rng = np.random.default_rng(5)
with connect_synced(path) as con:
    insert_frame(con, "snapshots", pd.DataFrame([{
        "id": 1, "source": "csv", "sha256": "h1", "blob_sha256": ["h1"], "file_names": ["x.csv"],
        "observed_at": t, "first_seen": t, "last_seen": t, "origin": "ingest", "parser_version": 1,
        "n_scores": 30, "n_items": 0, "n_models": 30, "n_rejects": 0, "status": "ok"}]))
    insert_frame(con, "scores", pd.DataFrame({
        "snapshot_id": 1, "source": "csv", "benchmark": "math_500", "benchmark_raw": "math_500",
        "model": [f"toy-{i}" for i in range(30)], "model_raw": [f"toy-{i}" for i in range(30)], "setting": "",
        "score": rng.uniform(0.3, 0.8, 30).round(3), "metric": "proportion", "n_items": 500,
        "excluded_reason": "", "variant": "", "population": "models"}))
    run_contamination(con, now="2026-02-02")
    rows = con.execute("SELECT count(*), count(DISTINCT model) FROM contamination_signals WHERE signal = 'TOY'").fetchone()
print(rows[0], rows[1])
"""


@pytest.mark.slow      # a copy of the repository, one contamination run and one test in child processes
def test_the_statistic_recipe_adds_a_working_signal_in_the_files_it_lists(copy, tmp_path):
    follow_the_statistic_recipe(copy)
    out = run_in(copy, "-c", ANALYZE_TOY, str(tmp_path / "bw.duckdb"))
    assert out.split() == ["30", "30"], out              # stored by the unchanged job and storage
    run_in(copy, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/unit/test_contamination.py", "-k", "above_half")
    assert_files_match(copy, copy / "docs" / "contributing.md", "Add a statistic", SIGNAL)


# --- "Add a leaderboard" ----------------------------------------------------------------------------

SOURCE = "toyboard"
TOY_PAGE = b"""{"updated": "2026-01-20", "rows": [
  {"model": "gpt-4o-2024-08-06", "toy_bench": "71.5%", "evaluated": "2026-01-10"},
  {"model": "claude-3-5-sonnet-20241022", "toy_bench": "68.0%", "evaluated": "2026-01-12"},
  {"model": "A model nobody knows", "toy_bench": "12.25%"},
  {"model": "no score yet", "toy_bench": "n/a"}
]}
"""


def follow_the_source_recipe(copy: Path) -> None:
    # 1-2. a saved response, and the scraper module: name, URL, a pure parse over the base's helpers
    write(copy, f"scrapers/{SOURCE}.py", """
        \"\"\"Toyboard (tests/integration/test_recipes.py): `leaderboard.json`, `{rows: [{model, toy_bench: "71.5%",
        evaluated}]}`; scores in percent, the evaluation date optional (a row without one is dated by its
        observation), a blank score is no row.\"\"\"

        from __future__ import annotations

        from datetime import datetime
        from typing import Mapping

        import pandas as pd

        from scrapers.base import ParsedSnapshot, Scraper
        from scrapers.cases import Absent, Case, S
        from scrapers.normalize import clean_name, is_missing, parse_date, percent_to_proportion

        TOY_BENCH_ITEMS = 200


        class ToyboardScraper(Scraper):
            name = "toyboard"
            urls = ("https://toyboard.example/leaderboard.json",)

            def parse(self, content: bytes, *, fetched_at: datetime, aux: Mapping[str, bytes] | None = None,
                      filename: str | None = None) -> ParsedSnapshot:
                parsed = ParsedSnapshot(source=self.name)
                data = self.json(content, where="leaderboard.json")
                rows = data.get("rows") if isinstance(data, dict) else None
                if not isinstance(rows, list):
                    raise self.error("leaderboard.json has no 'rows' list")
                out = []
                for row in rows:
                    if is_missing(row.get("toy_bench")):
                        continue
                    out.append({"benchmark": "toy_bench", "model": clean_name(row.get("model")),
                                "raw_value": str(row["toy_bench"]), "score": percent_to_proportion(row["toy_bench"]),
                                "metric": "proportion", "n_items": TOY_BENCH_ITEMS,
                                "evaluated_at": parse_date(row.get("evaluated"))})
                if not any(r["evaluated_at"] is not None for r in out):
                    self.warn(parsed, "no evaluation dates")
                parsed.scores = pd.DataFrame(out)
                return parsed

            # 4. its case beside the parser; `replay` makes it the recorded response for `--replay`
            CASES = (
                Case("toyboard/leaderboard.json", scores=3, rejects=0, replay="leaderboard.json", spots=(
                    S(benchmark="toy_bench", model="gpt-4o-2024-08-06")(score=0.715, n_items=200),
                    Absent({"model": "no score yet"}),
                )),
            )
        """)
    # 3. one line in SOURCES
    edit(copy, "scrapers/__init__.py", '    "livebench_releases",\n)', f'    "livebench_releases",\n    "{SOURCE}",\n)')
    # 4. a fixture with a few real rows (its case is in the module above), the generated replay
    #    copy's line in .gitignore, and the copy written
    (copy / "tests" / "fixtures" / SOURCE).mkdir()
    (copy / "tests" / "fixtures" / SOURCE / "leaderboard.json").write_bytes(TOY_PAGE)
    append(copy, ".gitignore", f"/tests/fixtures/replay/{SOURCE}/leaderboard.json\n")
    run_in(copy, "tests/replay_files.py")
    # 5. its benchmark in the registry (the models already resolve: no alias)
    append(copy, "registry/benchmarks.csv",
           "toy_bench,Toy Bench,,2025-06-01,2025-06-01,200,proportion,0,1,public,no,coding,,toy of tests/integration/test_recipes.py\n")


COLLECT_TOY = """
import sys

from jobs.collect import collect
from jobs.sync import connect_synced

from storage.store import open_store

path, replay = open_store(sys.argv[1]), sys.argv[2]
outcomes = collect(path, ["toyboard"], replay_dir=replay)
with connect_synced(path) as con:
    rows = con.execute("SELECT model, round(score, 4), evaluated_at IS NOT NULL FROM scores "
                       "WHERE source = 'toyboard' ORDER BY score DESC").fetchall()
    named = con.execute("SELECT count(*) FROM benchmarks WHERE id = 'toy_bench'").fetchone()[0]
print([o.status for o in outcomes], named, rows)
"""


@pytest.mark.slow      # a copy of the repository, one replayed collection and the source's tests
def test_the_source_recipe_adds_a_working_source_in_the_files_it_lists(copy, tmp_path):
    follow_the_source_recipe(copy)
    out = run_in(copy, "-c", COLLECT_TOY, str(tmp_path / "bw.duckdb"), str(copy / "tests" / "fixtures" / "replay"))
    assert out.startswith("['new'] 1 [('gpt-4o-2024-08-06', 0.715, True), ('claude-3-5-sonnet-20241022', 0.68, True), "
                          "('A model nobody knows', 0.1225, False)]"), out
    run_in(copy, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/unit/test_scraper_cases.py",
           "tests/unit/test_scraper_registry.py", "tests/integration/test_replay_files.py", "-k",
           f"{SOURCE} or every or declared_files or generated or git_ignores")
    assert_files_match(copy, copy / "docs" / "contributing.md", "Add a leaderboard", SOURCE)


ARCHITECTURE_ROWS = {"Add an alert rule": "| a new alert rule |", "Add a statistic": "| a new contamination signal |",
                     "Add a leaderboard": "| a new leaderboard source |"}


def test_every_recipe_states_its_files_and_architecture_points_to_it():
    """The fast lane keeps the recipes' declarations parseable and docs/architecture.md's "Where a
    change goes" row of each pointing at it with the same count (the slow tests above follow them)."""
    rows = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8").splitlines()
    for heading, name in (("Add an alert rule", RULE), ("Add a statistic", SIGNAL), ("Add a leaderboard", SOURCE)):
        count, listed = recipe_files(ROOT / "docs" / "contributing.md", heading, name)
        assert count == len(listed) and all(name in p or (ROOT / p).is_file() for p in listed), (heading, listed)
        row = [r for r in rows if r.startswith(ARCHITECTURE_ROWS[heading])]
        assert len(row) == 1 and f'docs/contributing.md "{heading}" ({count} files)' in row[0], (heading, row)

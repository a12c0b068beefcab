"""Rules of the test suite itself: each test module in its tier's folder, real data found relative
to the repository, every skip says why, and no test module imports Prefect at collection (the
fast lane's collection stays cheap)."""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

from helpers import ROOT, SHARED

TIERS = ("unit", "integration", "system")   # docs/contributing.md, "Test tiers"
TESTS = sorted([*(ROOT / "tests").glob("*.py"), *(p for tier in TIERS for p in (ROOT / "tests" / tier).glob("*.py"))])
HEAVY_AT_IMPORT = ("prefect", "flows")   # seconds to import: only inside the tests that need them


@lru_cache(maxsize=None)
def _tree(path: Path) -> ast.Module:
    """A test module's syntax tree, parsed once for all the rules below."""
    return ast.parse(path.read_text())


def _calls(tree: ast.AST, name: str):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            if (isinstance(f, ast.Attribute) and f.attr == name) or (isinstance(f, ast.Name) and f.id == name):
                yield node


# What puts a test module in tests/system (a server, the browser, the whole real history), and what
# keeps one out of tests/unit (a process, the CLI, a database file, the replay folder, the fake Slack)
SYSTEM_SIGNS = ("prefect_test_harness", "pg.start(", "pg.lake_server(", "lake_pg", '"server", "start"', "chromium",
                "real_history", ".replay(SNAPSHOTS", "plan_backfill(SNAPSHOTS)")
NOT_UNIT_SIGNS = ("subprocess", "synced_db", "connect_synced", "from cli.main import", "cli.main(", "fake_slack",
                  "FakeSlack", '"replay"', "ingest_file")


def _without_block_strings(text: str) -> str:
    """The module's text without its triple-quoted strings (docstrings, quoted sources)."""
    import io
    import tokenize
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if not (tok.type == tokenize.STRING and tok.string.lstrip("rbfuRBFU").startswith(('"""', "'''"))):
            out.append(tok.string)
    return " ".join(out)


def test_every_test_module_sits_in_its_tier():
    """tests/unit is pure and in-memory (the fast lane), tests/integration runs the CLI, files and
    the replay, tests/system starts Prefect, PostgreSQL or the browser or reads the whole real
    history; no test module sits in tests/ itself (helpers, oracles and fixtures do)."""
    wrong = [f"tests/{p.name}: move it to tests/<tier>/" for p in (ROOT / "tests").glob("test_*.py")]
    for path in TESTS:
        tier = path.parent.name
        if tier not in TIERS or path.name == Path(__file__).name:
            continue
        text = path.read_text()
        system = [s for s in SYSTEM_SIGNS if s in text]
        if system and tier != "system":
            wrong.append(f"tests/{tier}/{path.name} uses {system}: it belongs in tests/system")
        code = _without_block_strings(text)      # docstrings and sources quoted as test data say nothing
        not_unit = [s for s in NOT_UNIT_SIGNS if s in code]
        if not_unit and tier == "unit":
            wrong.append(f"tests/unit/{path.name} uses {not_unit}: it belongs in tests/integration")
    assert not wrong, wrong


def test_shared_is_beside_the_repository():
    assert SHARED == ROOT.parent / "shared"


def test_no_test_reaches_real_data_by_an_absolute_or_own_path():
    offenders = []
    for path in TESTS:
        text = path.read_text()
        if path.name not in ("helpers.py", Path(__file__).name) and ('"/work/' in text or '/ "shared"' in text or "'shared'" in text):
            offenders.append(path.name)
    assert not offenders, f"use helpers.SHARED / SNAPSHOTS / PAPER_DATA in {offenders}"


def test_every_skip_has_a_reason():
    missing = []
    for path in TESTS:
        tree = _tree(path)
        for call in _calls(tree, "skipif"):
            if not any(k.arg == "reason" for k in call.keywords):
                missing.append(f"{path.name}:{call.lineno} skipif without reason")
        for call in _calls(tree, "skip"):
            if isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name) \
                    and call.func.value.id == "pytest" and not (call.args or call.keywords):
                missing.append(f"{path.name}:{call.lineno} pytest.skip() without reason")
    assert not missing, missing


def test_test_modules_import_nothing_heavy_at_module_level():
    offenders = []
    for path in TESTS:
        for node in _tree(path).body:
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path.name}:{node.lineno} {n}" for n in names if n.split(".")[0] in HEAVY_AT_IMPORT]
    assert not offenders, f"import these inside the tests that need them: {offenders}"


def test_every_test_that_starts_a_prefect_server_is_slow():
    """`prefect_test_harness` starts a server subprocess: such tests are `slow` (by decorator, or
    through the `harness` fixture, which tests/conftest.py marks)."""
    from conftest import SLOW_FIXTURES

    unmarked = []
    for path in TESTS:
        for node in ast.walk(_tree(path)):
            if not isinstance(node, ast.FunctionDef) or node.name in SLOW_FIXTURES:
                continue
            if any(True for _ in _calls(node, "prefect_test_harness")) \
                    and not any("slow" in ast.unparse(d) for d in node.decorator_list):
                unmarked.append(f"{path.name}:{node.lineno} {node.name}")
    assert not unmarked, f"mark these @pytest.mark.slow: {unmarked}"


def test_every_package_is_installed():
    """A package missing from pyproject's list works from the checkout (cwd on sys.path) but not
    for an installed benchwatch: the worker's subprocesses, `benchwatch` from another folder."""
    import tomllib

    root = Path(__file__).resolve().parents[2]
    listed = set(tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    from helpers import code_folders
    found = {".".join(p.parent.relative_to(root).parts) for top in code_folders(root)
             for p in top.glob("**/__init__.py")}
    assert found - listed == set(), f"add to [tool.setuptools] packages in pyproject.toml: {sorted(found - listed)}"


def test_the_crash_locator_knows_every_top_level_package():
    """`benchwatch` names the innermost frame of the project's own code on a crash (cli.main.where):
    its package list must follow pyproject's."""
    import tomllib

    from cli.main import _PACKAGES

    root = Path(__file__).resolve().parents[2]
    listed = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    assert set(_PACKAGES) == {p.split(".")[0] for p in listed}


def test_every_top_level_package_resolves_to_this_repository_and_no_other_distribution_claims_it():
    """The generic top-level names stay (docs/architecture.md, "Why this layout"), so a collision
    must be visible: each resolves here (`benchwatch` checks it at start-up, cli.main.foreign_packages),
    and no other installed distribution lists it (pip would mix both into site-packages/<name>/)."""
    import importlib.metadata

    from cli.main import _HOME, _PACKAGES, foreign_packages

    assert _HOME == ROOT and foreign_packages() == []
    claimed = importlib.metadata.packages_distributions()
    others = {name: sorted(set(claimed.get(name, ())) - {"benchwatch"}) for name in _PACKAGES}
    assert not {name: d for name, d in others.items() if d}, f"other distributions install these names: {others}"


def test_a_shadowing_package_is_reported(tmp_path, monkeypatch):
    """A same-named package earlier on the path is what `foreign_packages` reports (and only that)."""
    import importlib

    from cli.main import foreign_packages

    home, other = tmp_path / "home", tmp_path / "other"
    for base, name in ((home, "bw_probe_ours"), (home, "bw_probe_shadowed"), (other, "bw_probe_shadowed")):
        (base / name).mkdir(parents=True)
        (base / name / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(home))
    monkeypatch.syspath_prepend(str(other))        # first on sys.path: wins the import
    importlib.invalidate_caches()
    found = foreign_packages(("bw_probe_ours", "bw_probe_shadowed", "bw_probe_missing"), home=home.resolve())
    assert found == [f"'bw_probe_shadowed' from {other / 'bw_probe_shadowed'}", "'bw_probe_missing' from nowhere"]


def test_benchwatch_refuses_to_start_on_a_shadowed_package(monkeypatch, capsys):
    from cli import main as cli

    monkeypatch.setattr(cli, "foreign_packages", lambda: ["'storage' from /elsewhere/storage"])
    assert cli.main(["status"]) == cli.EXIT_FAILED
    err = capsys.readouterr().err
    assert err.startswith("benchwatch: top-level package(s) 'storage' from /elsewhere/storage, not from this benchwatch")
    assert len(err.splitlines()) == 1


SERVER_STARTS = ("prefect_test_harness", "pg.start(", "pg.lake_server(", '"server", "start"')
SERVER_FIXTURES = {"lake_pg", "lake_store_template", "lake_store_url"}   # tests/conftest.py's PostgreSQL
REAL_HISTORY_FIXTURES = {"real_history", "real_history_backfilled", "real_history_copy"}
REPLAY_FIXTURES = {"real_history_replay"}


def _xdist_group(node: ast.AST) -> str | None:
    """The name in the first `xdist_group("name")` call under `node` (a decorator list, a pytestmark)."""
    for call in _calls(node, "xdist_group"):
        args = [*call.args, *(k.value for k in call.keywords if k.arg == "name")]
        if args and isinstance(args[0], ast.Constant):
            return str(args[0].value)
    return None


def _module_fixtures(functions: list[ast.FunctionDef]) -> set[str]:
    return {f.name for f in functions for d in f.decorator_list for call in _calls(d, "fixture")
            if any(k.arg == "scope" and getattr(k.value, "value", None) == "module" for k in call.keywords)}


def _users(functions: list[ast.FunctionDef], names: set[str]) -> set[str]:
    """The functions of a module that take one of `names`, directly or through its other fixtures."""
    found = set(names)
    grew = True
    while grew:
        used = {f.name for f in functions if {a.arg for a in f.args.args} & found}
        grew = not used <= found
        found |= used
    return found


def test_tests_that_share_a_fixture_or_a_server_run_in_one_xdist_group():
    """Under pytest-xdist (`-n 2`, pyproject's `--dist loadgroup`) every test is a unit of its own
    unless an `xdist_group` mark says otherwise: a test that starts PostgreSQL or a Prefect server
    (itself or through a fixture of its module) is in the "servers" group, run one at a time; one
    that reads the session's real-history backfill is in "real-history", built once by the worker
    that runs the group; one that reads the session's day-by-day replay is in "replay", likewise; the tests that use one module-scoped fixture are in one group, so it is
    built once (tests/conftest.py)."""
    from conftest import REAL_HISTORY, REPLAY, SERVERS

    wrong = []
    for path in TESTS:
        if not path.name.startswith("test_") or path.name == Path(__file__).name:
            continue
        tree = _tree(path)
        module_group = next((_xdist_group(n) for n in tree.body if isinstance(n, ast.Assign)
                             and any(getattr(t, "id", "") == "pytestmark" for t in n.targets)), None)
        functions = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
        tests = {f.name: f for f in functions if f.name.startswith("test_")}
        group = {name: _xdist_group(ast.Module(body=f.decorator_list, type_ignores=[])) or module_group
                 for name, f in tests.items()}
        lines = path.read_text().splitlines()
        starts = _users(functions, SERVER_FIXTURES | {f.name for f in functions if any(
            s in "\n".join(lines[f.lineno - 1:f.end_lineno]) for s in SERVER_STARTS)})
        for name in tests:
            nodeid = f"{path.name}::{name}"
            if name in starts and group[name] != SERVERS:
                wrong.append(f"{nodeid} starts a server: mark it xdist_group({SERVERS!r})")
            if name in _users(functions, REAL_HISTORY_FIXTURES) and group[name] != REAL_HISTORY:
                wrong.append(f"{nodeid} reads the real history: mark it xdist_group({REAL_HISTORY!r})")
            if name in _users(functions, REPLAY_FIXTURES) and group[name] != REPLAY:
                wrong.append(f"{nodeid} reads the replay: mark it xdist_group({REPLAY!r})")
        for fixture in _module_fixtures(functions):
            groups = {group[name] for name in tests if name in _users(functions, {fixture})}
            if None in groups or len(groups) > 1:
                wrong.append(f"{path.name}: the tests using the module fixture {fixture} are in groups {groups}: "
                             "give them one xdist_group (the module's name)")
    assert not wrong, wrong


def test_the_suite_is_scheduled_by_xdist_alone():
    """No scheduler of our own, no collector or thread tricks: xdist's `loadgroup` and the marks
    above decide where a test runs (issue 52)."""
    import tomllib

    conftest = (ROOT / "tests" / "conftest.py").read_text()
    for trick in ("pytest_xdist_make_scheduler", "gc.freeze", "BENCHWATCH_THREADS", "items.sort"):
        assert trick not in conftest, trick
    addopts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["addopts"]
    assert "--dist loadgroup" in addopts


def test_one_duckdb_pin_everywhere():
    """`pip install -e .` and the ducklake extra must agree on DuckDB: the extension wheels load only
    into the DuckDB release they were built for, so the package pins that exact release."""
    import re
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = [d for d in project["dependencies"] if re.match(r"duckdb\b", d)]
    extensions = [d for d in project["optional-dependencies"]["ducklake"] if d.startswith("duckdb-extension-")]
    versions = {d.split("==", 1)[1] for d in extensions}
    assert len(pins) == 1 and len(versions) == 1 and pins[0] == f"duckdb=={versions.pop()}", (pins, extensions)

"""The layering rule of docs/architecture.md, checked over the AST import graph.

The layers are declared once, in the ```layers block of docs/architecture.md (top line = top
layer). A module may import modules of its own package and of packages on a lower line;
packages on one line are siblings that never import each other. Every import counts:
module-level, function-level and `if TYPE_CHECKING:` ones (a late import is still a
dependency). Besides pointing down, the graph of modules must have no cycle.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

import pytest

from helpers import code_folders

pytestmark = pytest.mark.xdist_group("test_layers")   # its module fixture is built once

ROOT = Path(__file__).resolve().parents[2]
ARCHITECTURE = ROOT / "docs" / "architecture.md"


# --- the declaration -------------------------------------------------------------------------------

def parse_layers(text: str) -> dict[str, tuple[int, int]]:
    """package -> (layer, sibling group) from the ```layers block (first line = highest layer).

    A line lists packages separated by `|` (siblings) and may end in a `#` comment.
    """
    m = re.search(r"```layers\n(.*?)```", text, re.S)
    if not m:
        raise AssertionError("docs/architecture.md has no ```layers block")
    lines = [line.split("#", 1)[0].strip() for line in m[1].splitlines()]
    lines = [line for line in lines if line]
    out: dict[str, tuple[int, int]] = {}
    for depth, line in enumerate(lines):
        layer = len(lines) - 1 - depth
        for group, name in enumerate(p.strip() for p in line.split("|")):
            if not re.fullmatch(r"[a-z_][a-z0-9_]*", name):
                raise AssertionError(f"layers block: {name!r} is not a package name")
            if name in out:
                raise AssertionError(f"layers block: {name} declared twice")
            out[name] = (layer, group)
    return out


def parse_third_party(text: str) -> dict[str, set[str]]:
    """third-party package -> the benchwatch packages that may import it (```third-party block)."""
    m = re.search(r"```third-party\n(.*?)```", text, re.S)
    if not m:
        raise AssertionError("docs/architecture.md has no ```third-party block")
    out: dict[str, set[str]] = {}
    for line in m[1].splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, owners = line.partition(":")
            out[name.strip()] = set(owners.split())
    return out


# --- the graph -------------------------------------------------------------------------------------

def project_modules(root: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file of every top-level package/folder of code."""
    out: dict[str, Path] = {}
    for top in code_folders(root):
        for path in sorted(top.rglob("*.py")):
            rel = path.relative_to(root).with_suffix("")
            parts = list(rel.parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The longest prefix of `name` that is a project module (None for third-party names)."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        candidate = ".".join(parts[:i])
        if candidate in modules:
            return candidate
    return None


@lru_cache(maxsize=None)
def _parse(source: str) -> ast.Module:
    """A module's syntax tree, parsed once for the import graph and the logger names."""
    return ast.parse(source)


def imports_of(module: str, source: str, modules: dict[str, Path]) -> set[str]:
    """Project modules `module` imports anywhere in its source (`from p import m` -> p.m if m is a module)."""
    is_package = modules[module].name == "__init__.py"
    package = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(_parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = _resolve(alias.name, modules)
                if target:
                    found.add(target)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")
                base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for alias in node.names:
                target = _resolve(f"{base}.{alias.name}", modules) or _resolve(base, modules)
                if target:
                    found.add(target)
    found.discard(module)
    return found


def third_party_imports(source: str) -> set[str]:
    """Top-level names of the absolute imports in a module (module-level and inside functions)."""
    found: set[str] = set()
    for node in ast.walk(_parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.split(".")[0])
    return found


def misplaced_third_party(root: Path, owners: dict[str, set[str]]) -> list[str]:
    """Every import of a declared third-party package outside the packages that own it."""
    problems = []
    for module, path in sorted(project_modules(root).items()):
        top = module.split(".")[0]
        for name in sorted(third_party_imports(path.read_text(encoding="utf-8")) & set(owners)):
            if top not in owners[name]:
                problems.append(f"{module} imports {name} (only {', '.join(sorted(owners[name]))} may)")
    return problems


def import_graph(root: Path) -> dict[str, set[str]]:
    modules = project_modules(root)
    return {m: imports_of(m, path.read_text(encoding="utf-8"), modules) for m, path in modules.items()}


def layer_violations(graph: dict[str, set[str]], layers: dict[str, tuple[int, int]]) -> list[str]:
    """Every edge that points up or sideways between sibling packages, and every undeclared package."""
    problems = []
    for module, targets in sorted(graph.items()):
        top = module.split(".")[0]
        if top not in layers:
            problems.append(f"{module}: package {top!r} is not in the layers block of docs/architecture.md")
            continue
        for target in sorted(targets):
            other = target.split(".")[0]
            if other == top or other not in layers:
                continue
            lm, lt = layers[top][0], layers[other][0]
            if lt > lm:
                problems.append(f"{module} -> {target}: {top} (layer {lm}) imports {other} (layer {lt}), a higher layer")
            elif lt == lm:
                problems.append(f"{module} -> {target}: {top} and {other} are siblings of layer {lm}")
    return problems


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each strongly connected component of more than one module, as one cycle through it (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:   # the project graph is small: recursion depth is fine
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                components.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [_cycle_in(comp, graph) for comp in components]


def _cycle_in(component: list[str], graph: dict[str, set[str]]) -> list[str]:
    """A closed path start -> … -> start inside one strongly connected component (breadth-first)."""
    members = set(component)
    start = component[0]
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & members):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return path[::-1] + [start]
                if w not in previous:
                    previous[w] = v
                    nxt.append(w)
        frontier = nxt
    return component


# --- the rule on this repository ----------------------------------------------------------------

@pytest.fixture(scope="module")
def project_graph() -> dict[str, set[str]]:
    """This repository's import graph, parsed once for the tests below."""
    return import_graph(ROOT)


def test_every_import_points_down_a_layer(project_graph):
    layers = parse_layers(ARCHITECTURE.read_text(encoding="utf-8"))
    problems = layer_violations(project_graph, layers)
    assert not problems, "imports against docs/architecture.md's layers:\n" + "\n".join(problems)


def test_heavy_third_party_packages_are_imported_only_by_their_layer():
    owners = parse_third_party(ARCHITECTURE.read_text(encoding="utf-8"))
    assert owners == {"prefect": {"flows", "cli"}, "slack_sdk": {"alerts"}, "scipy": {"analysis"}}
    problems = misplaced_third_party(ROOT, owners)
    assert not problems, "third-party imports against docs/architecture.md:\n" + "\n".join(problems)
    # the walk sees them where they are
    flows = third_party_imports((ROOT / "flows" / "pipeline.py").read_text(encoding="utf-8"))
    assert "prefect" in flows


def test_duckdb_is_imported_by_storage_engine_alone():
    """One owner of the DuckDB import (storage/engine.py); every other module takes `duckdb` from it."""
    importers = sorted(module for module, path in project_modules(ROOT).items()
                       if module.split(".")[0] != "bench"      # the bench measures `import duckdb` itself
                       and {"duckdb", "_duckdb"} & third_party_imports(path.read_text(encoding="utf-8")))
    assert importers == ["storage.engine"]


def private_imports(source: str, project: set[str]) -> list[str]:
    """Imports of another distribution's private module (`_duckdb`, `_sha256`, `pandas._libs`):
    a name with a part that starts with `_`, outside benchwatch's own packages."""
    found = []
    for node in ast.walk(_parse(source)):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module] if isinstance(node, ast.ImportFrom) and not node.level and node.module else []
        found += [n for n in names if n != "__future__" and n.split(".")[0] not in project
                  and any(part.startswith("_") for part in n.split("."))]
    return found


def test_no_module_imports_a_private_module_of_another_package():
    modules = project_modules(ROOT)
    project = {m.split(".")[0] for m in modules}
    tests = {f"tests.{p.stem}": p for p in (ROOT / "tests").rglob("*.py")}
    problems = [f"{module}: {name}" for module, path in sorted({**modules, **tests}.items())
                for name in private_imports(path.read_text(encoding="utf-8"), project | {"helpers", "conftest"})]
    assert not problems, "private modules imported:\n" + "\n".join(problems)
    assert private_imports("import _duckdb\nfrom pandas._libs import lib\nfrom scrapers._cells import x\n",
                           {"scrapers"}) == ["_duckdb", "pandas._libs"]


def test_a_synthetic_misplaced_third_party_import_is_reported(tmp_path):
    root = _write(tmp_path, {
        "alerts/__init__.py": "",
        "alerts/slack.py": "def f():\n    from prefect.blocks.system import Secret\n    import slack_sdk.web\n",
        "flows/__init__.py": "import prefect\nfrom prefect import flow\n",
        "jobs/__init__.py": "from . import x\n",
    })
    owners = {"prefect": {"flows", "cli"}, "slack_sdk": {"alerts"}}
    assert misplaced_third_party(root, owners) == ["alerts.slack imports prefect (only cli, flows may)"]


def test_flows_reach_the_store_only_through_the_jobs(project_graph):
    """flows/ wraps jobs/ (retries, concurrency, artifacts); a read or write of its own is a second owner."""
    edges = [f"{m} -> {t}" for m, targets in project_graph.items() if m.split(".")[0] == "flows"
             for t in targets if t.split(".")[0] == "storage"]
    assert edges == []
    assert "jobs.cycle" in project_graph["flows.pipeline"]


def test_no_import_cycle_between_modules(project_graph):
    cycles = find_cycles(project_graph)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_the_graph_sees_the_whole_project(project_graph):
    """The checks above mean something only if the walk finds the modules and their edges."""
    graph = project_graph
    layers = parse_layers(ARCHITECTURE.read_text(encoding="utf-8"))
    assert {"common", "storage", "analysis", "jobs", "flows", "cli"} <= set(layers)
    assert "storage.db" in graph and "cli.main" in graph
    assert "storage.db" in graph["storage.registry_sync"]          # a module-level edge
    assert "jobs.analyze" in graph["cli.commands.analyze"]          # a function-level edge
    assert sum(len(t) for t in graph.values()) > 100


def logger_names(source: str) -> list[str]:
    """The constant names passed to `logging.getLogger(...)` in a module's source."""
    return [node.args[0].value for node in ast.walk(_parse(source))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "getLogger"
            and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)]


def misnamed_loggers(root: Path) -> list[str]:
    """Loggers not named after their module's layer: a module of package P logs as `benchwatch.P`
    or below it (`benchwatch` alone only configures the hierarchy), so a log line says its layer."""
    problems = []
    for module, path in project_modules(root).items():
        top = module.split(".")[0]
        for name in logger_names(path.read_text(encoding="utf-8")):
            if name != "benchwatch" and name != f"benchwatch.{top}" and not name.startswith(f"benchwatch.{top}."):
                problems.append(f"{module}: logger {name!r} (expected benchwatch.{top}[.<part>])")
    return problems


def test_every_logger_is_named_after_its_layer():
    problems = misnamed_loggers(ROOT)
    assert not problems, "\n".join(problems)
    assert "benchwatch.jobs" in logger_names((ROOT / "jobs" / "cycle.py").read_text(encoding="utf-8"))


# --- the checks can fail ----------------------------------------------------------------------------

LAYERS_DOC = """
```layers
top              # may import anything below
middle | side    # siblings
base
```
"""


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_a_synthetic_back_edge_is_reported(tmp_path):
    root = _write(tmp_path, {
        "base/__init__.py": "",
        "base/util.py": "def late():\n    from top.app import run  # a function-level back-edge\n",
        "middle/__init__.py": "from base import util\n",
        "side/__init__.py": "import middle\n",
        "top/__init__.py": "",
        "top/app.py": "from middle import *\nfrom base.util import late\n\ndef run():\n    pass\n",
    })
    problems = layer_violations(import_graph(root), parse_layers(LAYERS_DOC))
    assert any(p.startswith("base.util -> top.app") and "higher layer" in p for p in problems), problems
    assert any(p.startswith("side -> middle") and "siblings" in p for p in problems), problems
    assert not any(p.startswith(("top.", "middle ")) for p in problems), problems


def test_a_synthetic_cycle_is_reported_with_its_path(tmp_path):
    root = _write(tmp_path, {
        "base/__init__.py": "",
        "base/a.py": "from base import b\n",
        "base/b.py": "def f():\n    from . import c\n",
        "base/c.py": "import base.a\n",
        "base/d.py": "import base.a\n",
    })
    cycles = find_cycles(import_graph(root))
    assert cycles == [["base.a", "base.b", "base.c", "base.a"]]


def test_an_undeclared_package_is_reported(tmp_path):
    root = _write(tmp_path, {"base/__init__.py": "", "extra/__init__.py": "import base\n"})
    problems = layer_violations(import_graph(root), parse_layers(LAYERS_DOC))
    assert problems == ["extra: package 'extra' is not in the layers block of docs/architecture.md"]


def test_the_layers_block_is_well_formed():
    with pytest.raises(AssertionError, match="declared twice"):
        parse_layers("```layers\na\nb | a\n```")
    assert parse_layers(LAYERS_DOC) == {"top": (2, 0), "middle": (1, 0), "side": (1, 1), "base": (0, 0)}


def test_a_logger_named_after_another_layer_is_reported(tmp_path):
    root = _write(tmp_path, {
        "jobs/__init__.py": "",
        "jobs/run.py": "import logging\nlog = logging.getLogger('benchwatch.flows')\n"
                       "ok = logging.getLogger('benchwatch.jobs.run')\n",
        "flows/__init__.py": "import logging\nlogging.getLogger('benchwatch').setLevel(10)\n",
    })
    assert misnamed_loggers(root) == ["jobs.run: logger 'benchwatch.flows' (expected benchwatch.jobs[.<part>])"]


def test_storage_never_imports_scrapers(project_graph):
    """A source's parser and storage meet only in the declarations below both (common.snapshot,
    common.checks, common.naming): what storage needs from a source (its rows, shrink limit,
    naming rules, the csv source's cell reading) is handed down by the jobs."""
    edges = sorted(f"{m} -> {t}" for m, targets in project_graph.items() if m.split(".")[0] == "storage"
                   for t in targets if t.split(".")[0] == "scrapers")
    assert not edges, "storage imports scrapers:\n" + "\n".join(edges)


def test_alerts_build_no_sql_text():
    """The alert rules read through storage functions and take the queries their messages show
    from storage.look_queries: no SQL statement is written in alerts/."""
    statement = re.compile(r"\bSELECT\b.+\bFROM\b|\b(?:INSERT INTO|DELETE FROM|UPDATE \w+ SET)\b", re.IGNORECASE)
    offenders = []
    for path in sorted((ROOT / "alerts").rglob("*.py")):
        for node in ast.walk(_parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and statement.search(node.value):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []


# --- the store is made once at the edge (issue 52) ---------------------------------------------------
# cli/ and flows/ make one `Store` (storage/store.py) from the `--db` value or the flow's `db_path`
# and hand it down: below them no function takes a path to the database, nothing opens the
# database by its path, and only storage/ tells a DuckLake URL from a file by its prefix.

EDGE = {"cli", "flows", "bench"}
DB_PATH_PARAMETER = re.compile(r"^(db|dbp|db_?path|db_?file|db_?url|db_?target|database|database_?path|database_?url)$")
# the storage functions that open the database by its path (the store's own implementation)
OPENS_BY_PATH = {"connect", "open_connection", "open_current"}
STORE_MAKERS = {"open_store", "FileStore", "LakeStore"}
SNIFFING_CALLS = {"startswith", "endswith", "removeprefix", "find", "index", "partition", "split",
                  "match", "search", "fullmatch", "compile", "sub"}


def db_path_parameters(source: str, module: str) -> list[str]:
    """Parameters of functions (and lambdas) named like a path to the database."""
    found = []
    for node in ast.walk(_parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = node.args
            for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, *([a.vararg] if a.vararg else []),
                        *([a.kwarg] if a.kwarg else [])]:
                if DB_PATH_PARAMETER.match(arg.arg):
                    name = getattr(node, "name", "<lambda>")
                    found.append(f"{module}:{node.lineno} {name}({arg.arg})")
    return found


def opens_by_path(source: str, module: str) -> list[str]:
    """Calls that open the database from a path or make a store (not through a store handed down)."""
    found = []
    for node in ast.walk(_parse(source)):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        base = f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else None
        if name in STORE_MAKERS or (name in OPENS_BY_PATH and base in ("db", None)):
            found.append(f"{module}:{node.lineno} {ast.unparse(f)}(…)")
    return found


def lake_sniffs(source: str, module: str) -> list[str]:
    """Places that tell a DuckLake URL from a file by its text: `is_lake_url` or `storage.lake.PREFIX`
    used, or a `ducklake:` string compared, matched or used as a pattern (docstrings, help texts
    and messages may name it)."""
    found = []
    tree = _parse(source)

    def lake_text(node: ast.AST) -> bool:
        return isinstance(node, ast.Constant) and isinstance(node.value, str) and "ducklake:" in node.value.lower()

    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "storage.lake":
            found += [f"{module}:{node.lineno} imports {a.name}" for a in node.names if a.name in ("is_lake_url", "PREFIX")]
        elif isinstance(node, ast.Attribute) and node.attr in ("is_lake_url", "PREFIX") \
                and isinstance(node.value, ast.Name) and node.value.id == "lake":
            found.append(f"{module}:{node.lineno} lake.{node.attr}")
        elif isinstance(node, ast.Compare) and any(lake_text(n) for n in [node.left, *node.comparators]):
            found.append(f"{module}:{node.lineno} compares a ducklake: text")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in SNIFFING_CALLS \
                and any(lake_text(n) for n in node.args):
            found.append(f"{module}:{node.lineno} {node.func.attr}(ducklake: …)")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("^") \
                and "ducklake" in node.value:
            found.append(f"{module}:{node.lineno} a ducklake pattern")
    return found


def below_the_edge(root: Path) -> dict[str, Path]:
    return {m: p for m, p in project_modules(root).items() if m.split(".")[0] not in EDGE}


def test_no_function_below_cli_and_flows_takes_a_path_to_the_database():
    problems = [p for module, path in sorted(below_the_edge(ROOT).items())
                for p in db_path_parameters(path.read_text(encoding="utf-8"), module)]
    assert not problems, "take the store (storage.store.Store) instead:\n" + "\n".join(problems)


def test_only_storage_opens_the_database_by_its_path():
    """jobs/, report/, alerts/ open connections through the store they were handed (`store.connect()`,
    `jobs.sync.connect_synced(store)`), never `storage.db.connect(path)` or a store of their own."""
    problems = [p for module, path in sorted(below_the_edge(ROOT).items()) if module.split(".")[0] != "storage"
                for p in opens_by_path(path.read_text(encoding="utf-8"), module)]
    assert not problems, "open through the store handed down:\n" + "\n".join(problems)


def test_only_storage_tells_a_lake_from_a_file():
    problems = [p for module, path in sorted(project_modules(ROOT).items()) if module.split(".")[0] != "storage"
                for p in lake_sniffs(path.read_text(encoding="utf-8"), module)]
    assert not problems, "ask the store (`store.is_lake`, `store.file`) instead:\n" + "\n".join(problems)


def test_the_store_checks_can_fail():
    bad = '''
from storage.lake import is_lake_url
from storage import db, lake

def ingest(db_path, source, *, database=None):
    if str(db_path).startswith("ducklake:") or "ducklake:" in source or lake.is_lake_url(db_path):
        with db.connect(db_path) as con:
            pass
    return open_store(db_path)

PATTERN = "^ducklake:.*password"
'''
    good = '''
def ingest(store, source, path):
    """Into the store (a file or a ducklake:postgres: URL)."""
    with store.connect() as con:
        pass
    with connect_synced(store) as con:
        pass
    raise ValueError("migrate --to needs a DuckLake URL: ducklake:postgres:<conninfo>")
'''
    assert db_path_parameters(bad, "m") == ["m:5 ingest(db_path)", "m:5 ingest(database)"]
    assert sorted(p.split(" ", 1)[1] for p in opens_by_path(bad, "m")) == ["db.connect(…)", "open_store(…)"]
    assert len(lake_sniffs(bad, "m")) == 5, lake_sniffs(bad, "m")
    assert db_path_parameters(good, "m") == opens_by_path(good, "m") == lake_sniffs(good, "m") == []

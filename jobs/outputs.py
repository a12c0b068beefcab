"""No output path may be an input: a file benchwatch writes is never one it reads.

`report --out db.duckdb --db db.duckdb` replaced the database with a page ("report written",
exit 0): the whole history lost to a typo. Every command that writes a file (the report page,
the database of `run`/`ingest`/`backfill`) names its output and the files it reads, and
`refusal` says why the output may not be written — the paths compared after resolving `~`,
relative parts and symbolic links (and by inode, so a hard link is the same file too).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, NamedTuple

from common import settings
from storage.store import Store

_HOME = Path(__file__).resolve().parents[1]      # the directory holding benchwatch's packages


class Input(NamedTuple):
    """A file (or, `folder`, every file under a folder) benchwatch reads, and what it is, in words."""

    what: str
    path: str | os.PathLike
    folder: bool = False


def _resolved(path: str | os.PathLike) -> Path:
    return Path(os.path.realpath(os.path.expanduser(os.fspath(path))))


def database_inputs(store: Store) -> list[Input]:
    """The database a command reads: a DuckDB file with its write-ahead log and spill folder, or
    a DuckLake store's local data folder ($BENCHWATCH_DATA_PATH)."""
    if store.file is None:
        data = settings.read().data_path
        return [Input("the DuckLake store's data folder", data, folder=True)] if data and "://" not in data else []
    text = str(store.file)
    return [Input("the database", text), Input("the database's write-ahead log", text + ".wal"),
            Input("the database's spill folder", text + ".tmp", folder=True)]


def own_inputs() -> list[Input]:
    """benchwatch's own configuration and SQL, read by every run: the registry (CSV files),
    storage/ (migrations, views), prefect.yaml and pyproject.toml of the checkout."""
    found = [Input("benchwatch's registry (its configuration)", _HOME / "registry", folder=True),
             Input("benchwatch's SQL (migrations and views)", _HOME / "storage", folder=True),
             Input("benchwatch's prefect.yaml", _HOME / "prefect.yaml"),
             Input("benchwatch's pyproject.toml", _HOME / "pyproject.toml")]
    return [i for i in found if Path(i.path).exists()]


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:         # either missing: the resolved paths decide
        return False


def refusal(out: str | os.PathLike, inputs: Iterable[Input]) -> str | None:
    """Why `out` may not be written (one line), or None: it is one of `inputs` or lies in an
    input folder, after resolving both (relative parts, `~`, symbolic links, hard links)."""
    target = _resolved(out)
    for item in inputs:
        if not os.fspath(item.path):
            continue
        source = _resolved(item.path)
        if target == source or _same_file(target, source) or (item.folder and source in target.parents):
            where = "" if os.fspath(out) == os.fspath(item.path) else f" ({source})"
            inside = "inside " if item.folder and target != source else ""
            return f"{os.fspath(out)} is {inside}{item.what}{where}: an output may not be a file benchwatch reads; " \
                   "choose another path"
    return None

"""Keep the database's registry tables equal to the shipped `registry/` files.

Called explicitly by the jobs that read or write registry-dependent rows (ingest, collect,
reparse, analyze, notify: `jobs.sync.connect_synced`) and by the CLI after migrating an older file;
never hidden inside `db.connect`. Does work only when the registry content changed. Scraped
rows keep their raw names, so a new alias re-maps history without re-ingesting anything.
"""

from __future__ import annotations

import hashlib
import logging
import os
from importlib import resources
from pathlib import Path
from typing import Mapping

import pandas as pd

import registry
from common.naming import NamingRules
from common.refs import parse_refs
from registry.identity import identify_frame
from storage.db import insert_frame, quote_ident, registered_frame, transaction
from storage.engine import duckdb

log = logging.getLogger("benchwatch.storage")


# What the registry tables are made of: the curated files and the code that loads and applies
# them (loaders and checks, identity). Their bytes, with the sources' naming rules (data handed
# down by the jobs: `synced_digest`), are the registry's digest.
REGISTRY_FILES = ("benchmarks.csv", "models.csv", "aliases.csv", "__init__.py", "identity.py")
_digests: dict[tuple, str] = {}


def _frames() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    return registry.load_benchmarks(), registry.load_models(), registry.load_aliases()


def registry_digest(folder: str | os.PathLike | None = None) -> str:
    """sha256 of the registry files (`REGISTRY_FILES` of the shipped package, or of `folder`),
    read as bytes: no loading (pandas, checks) to find that nothing changed. Computed once per
    process while the files keep their (mtime, size): every job's connection asks for it."""
    root = Path(folder) if folder is not None else Path(registry.__file__).parent
    paths = [root / name for name in REGISTRY_FILES]
    try:
        key: tuple | None = (str(root), tuple((st.st_mtime_ns, st.st_size) for st in (p.stat() for p in paths)))
    except OSError:    # not plain files (a zipped install): read through importlib.resources, uncached
        key = None
    if key is not None and key in _digests:
        return _digests[key]
    h = hashlib.sha256()
    for path in paths:
        data = (path.read_bytes() if key is not None
                else resources.files("registry").joinpath(path.name).read_bytes())
        h.update(f"{path.name}\0{len(data)}\0".encode())
        h.update(data)
    digest = h.hexdigest()
    if key is not None:
        _digests[key] = digest
    return digest


def naming_digest(naming: Mapping[str, NamingRules]) -> str:
    """sha256 of the sources' naming rules (canonical text, sources sorted)."""
    h = hashlib.sha256()
    for source in sorted(naming):
        h.update(f"{source}\0{naming[source].fingerprint()}\0".encode())
    return h.hexdigest()


def synced_digest(naming: Mapping[str, NamingRules]) -> str:
    """What `meta.registry_sha256` holds: the registry files' digest and the naming rules' digest.
    A change to either re-loads the registry tables and re-identifies the stored rows."""
    files = registry_digest()
    return hashlib.sha256(f"{files}\0{naming_digest(naming)}".encode()).hexdigest()


class NameMapper:
    """Maps page names to canonical ids through the aliases (and the ids themselves), and
    identifies score rows by the naming rules of their sources (`naming`, handed down)."""

    def __init__(self, aliases: pd.DataFrame, benchmark_ids, model_ids, naming: Mapping[str, NamingRules],
                 release_dates: Mapping[str, object] | None = None):
        self.naming = dict(naming)
        self.release_dates = dict(release_dates or {})   # canonical model id -> registry release date
        self._maps: dict[str, dict[str, str]] = {"model": {}, "benchmark": {}}
        for kind, ids in (("benchmark", benchmark_ids), ("model", model_ids)):
            for i in ids:
                self._maps[kind][registry.alias_key(i)] = i
        for kind, alias, canonical in aliases[["kind", "alias", "canonical"]].itertuples(index=False):
            self._maps[kind][registry.alias_key(alias)] = canonical

    def map(self, kind: str, names: pd.Series) -> pd.Series:
        table = self._maps[kind]
        # once per distinct name (a file repeats each name many times), then broadcast
        uniq = {n: table.get(registry.alias_key(n), n) for n in pd.unique(names.dropna()) if isinstance(n, str)}
        return names.map(lambda n: uniq.get(n, n) if isinstance(n, str) else n)

    def identify(self, rows: pd.DataFrame) -> pd.DataFrame:
        """registry.identity over score rows (source, benchmark, model_raw, model_tag, snapshot_id,
        optional model_release_date): model, variant, population, underlying."""
        return identify_frame(rows, self._maps["model"], self.naming, self.release_dates)

    @classmethod
    def from_db(cls, con: duckdb.DuckDBPyConnection, naming: Mapping[str, NamingRules]) -> "NameMapper":
        aliases = con.execute("SELECT kind, alias, canonical FROM aliases").df()
        bids = [r[0] for r in con.execute("SELECT id FROM benchmarks").fetchall()]
        models = con.execute("SELECT id, release_date FROM models").fetchall()
        return cls(aliases, bids, [r[0] for r in models], naming, {r[0]: r[1] for r in models if r[1] is not None})


def sync_registry(con: duckdb.DuckDBPyConnection, naming: Mapping[str, NamingRules]) -> bool:
    """Reload registry tables and re-map stored names if the shipped registry or the sources'
    naming rules (`scrapers.naming_rules()`, handed down by the jobs) changed."""
    digest = synced_digest(naming)
    row = con.execute("SELECT value FROM meta WHERE key = 'registry_sha256'").fetchone()
    if row and row[0] == digest:
        return False
    benchmarks, models, aliases = _frames()
    b = benchmarks.copy()
    if "reference_benchmarks" in b.columns:
        b["reference_benchmarks"] = b["reference_benchmarks"].map(lambda v: list(parse_refs(v)))
    a = aliases.copy()
    a["alias_key"] = a["alias"].map(registry.alias_key)
    a = a.drop_duplicates(["kind", "alias_key"], keep="first")
    m = models.copy()
    claims = pd.DataFrame({
        "model": m["id"], "model_raw": m["id"], "source": "registry", "snapshot_id": pd.Series([None] * len(m), dtype="Int64"),
        "release_date": m["release_date"], "knowledge_cutoff": m["knowledge_cutoff"],
        "provenance": m["cutoff_provenance"].fillna("registry").replace("", "registry"), "org": m["org"],
        "observed_at": pd.Timestamp.now(tz="UTC"),
    })
    claims = claims[claims["release_date"].notna() | claims["knowledge_cutoff"].notna()]
    with transaction(con):
        for table in ("benchmarks", "models", "aliases"):
            con.execute(f"DELETE FROM {quote_ident(table)}")
        insert_frame(con, "benchmarks", b)
        insert_frame(con, "models", m)
        insert_frame(con, "aliases", a, columns=["kind", "alias_key", "alias", "canonical"])
        con.execute("DELETE FROM model_dates WHERE source = 'registry'")
        insert_frame(con, "model_dates", claims)
        _remap(con, NameMapper(aliases, b["id"], m["id"], naming,
                               dict(zip(m["id"], m["release_date"])) if "release_date" in m.columns else None))
        insert_frame(con, "meta", pd.DataFrame({"key": ["registry_sha256"], "value": [digest]}), or_replace=["key"])
    log.info("[storage] registry synced: %d benchmarks, %d models, %d aliases", len(b), len(m), len(a))
    return True


def _remap(con: duckdb.DuckDBPyConnection, mapper: NameMapper) -> None:
    for table, kind, raw_col, col in (("scores", "benchmark", "benchmark_raw", "benchmark"),
                                      ("item_results", "model", "model_raw", "model"),
                                      ("model_dates", "model", "model_raw", "model")):
        t, c, rc = quote_ident(table), quote_ident(col), quote_ident(raw_col)
        raw = con.execute(f"SELECT DISTINCT {rc} AS raw FROM {t}").df()
        if raw.empty:
            continue
        raw["mapped"] = mapper.map(kind, raw["raw"])
        with registered_frame(con, raw) as rel:
            con.execute(f"UPDATE {t} SET {c} = raw.mapped FROM {rel} AS raw "
                        f"WHERE {t}.{rc} = raw.raw AND {t}.{c} <> raw.mapped")
    _reidentify(con, mapper)


def _reidentify(con: duckdb.DuckDBPyConnection, mapper: NameMapper) -> None:
    """Score rows' model, variant, population and underlying model from registry.identity."""
    keys = con.execute("""SELECT DISTINCT source, snapshot_id, benchmark, model_raw, model_tag, model_release_date
                          FROM scores""").df()
    if keys.empty:
        return
    ident = pd.concat([keys, mapper.identify(keys)], axis=1)
    with registered_frame(con, ident) as rel:
        con.execute(f"""UPDATE scores SET model = i.model, variant = i.variant, population = i.population,
                                          underlying = i.underlying
                       FROM {rel} i
                       WHERE scores.source = i.source AND scores.snapshot_id = i.snapshot_id
                         AND scores.benchmark = i.benchmark AND scores.model_raw = i.model_raw
                         AND scores.model_tag IS NOT DISTINCT FROM i.model_tag
                         AND scores.model_release_date IS NOT DISTINCT FROM i.model_release_date
                         AND (scores.model IS DISTINCT FROM i.model OR scores.variant IS DISTINCT FROM i.variant
                              OR scores.population IS DISTINCT FROM i.population
                              OR scores.underlying IS DISTINCT FROM i.underlying)""")

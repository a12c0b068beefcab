"""Bad-input corpus over every source's recorded responses (tests/fixtures/replay/<source>/, csv's own).

Each broken copy goes through `ingest_file` into a database that already holds the good copy.
- Structural breakage (empty, HTML error page, binary garbage, wrong shape, header only, a
  column missing, truncated mid-file, over the size cap): a ScrapeError naming the source and a
  one-line reason, and the database unchanged.
- Truncation at a line boundary may still parse: then the snapshot is held (shrink guard: a table
  dropped more than a fifth of its rows, or the source's own limit) or
  refused by the row floor — either way `latest_scores` is unchanged.
- Value breakage (inf / negative / > 100% / NaN in one score cell, a duplicated row, cp1252
  text): the bad row goes to `rejects` with the reason (NaN = "no score"), the good rows stored.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import zipfile
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import scrapers
from helpers import lane
from jobs.ingest import ingest_file
from scrapers import http
from scrapers.base import ScrapeError
from storage import db
from storage.query import run_query
from storage.status import table_counts
from storage.store import open_store

FIX = Path(__file__).resolve().parents[1] / "fixtures"
REPLAY = FIX / "replay"
NOW = datetime(2026, 5, 20, tzinfo=timezone.utc)


def source_files(source: str) -> tuple[Path, list[Path]]:
    """The primary response and aux responses of one source, in plan order."""
    if source == "csv":
        return FIX / "csv" / "scores_percent.csv", []
    s = scrapers.get(source)
    paths = [REPLAY / source / s.response_name(u) for u in s.plan()]
    found = [REPLAY / source / s.response_name(u) for u in s.discover(paths[0].read_bytes())]   # a manifest's entries
    return paths[0], paths[1:] + [p for p in found if p.exists()]


SOURCES = list(scrapers.SOURCES)
SCORE_SOURCES = [s for s in SOURCES if scrapers.get(s).produces == "scores"]
# the fast lane's slice of each source axis: one JSON and one CSV source (the full suite: all)
FAST_SOURCES = ("swebench", "bfcl")


def fmt(path: Path) -> str:
    head = path.read_bytes()[:4]
    if head.startswith(b"PK"):
        return "zip"
    suffix = path.suffix.lower()
    if suffix in (".json", "") and path.read_bytes().lstrip()[:1] in (b"{", b"["):
        return "json"
    return {".yml": "yaml", ".yaml": "yaml", ".md": "md", ".csv": "csv"}.get(suffix, "text")


def half(content: bytes) -> bytes:
    return content[: len(content) // 2]


_JS_ARRAY = re.compile(r"^\s*(?:export\s+)?(?:const|let|var)\s+\w+[^=]*=\s*\[\s*$")   # `const x: T[] = [`


def header_only(content: bytes, kind: str) -> bytes:
    if kind == "csv":
        return content.split(b"\n", 1)[0] + b"\n"
    if kind == "json":
        return b"{}" if content.lstrip().startswith(b"{") else b"[]"
    if kind == "yaml":
        return b"[]\n"
    if kind == "zip":
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            with zipfile.ZipFile(io.BytesIO(content)) as src:
                for name in src.namelist():
                    z.writestr(name, src.read(name).split(b"\n", 1)[0] + b"\n")
        return buf.getvalue()
    lines = content.decode("utf-8").splitlines(keepends=True)
    if any(_JS_ARRAY.match(ln) for ln in lines):
        # a JS/TS module (terminal_bench's data.ts, matharena's table_data.js): every declared
        # array literal emptied, the declarations and the rest of the module kept
        out, inside = [], False
        for ln in lines:
            if inside:
                if re.match(r"^\]\s*;?\s*$", ln):
                    out.append(ln)
                    inside = False
                continue
            out.append(ln)
            inside = _JS_ARRAY.match(ln) is not None
        return "".join(out).encode()
    if kind == "md" and not any(ln.lstrip().startswith("|") for ln in lines):
        # a markdown file without tables (livebench_releases' changelog): its title line only
        return lines[0].encode() if lines else b""
    # markdown: keep every table's header and separator, drop the body rows
    out, prev_sep = [], False
    for ln in lines:
        is_row = ln.lstrip().startswith("|")
        is_sep = is_row and re.fullmatch(r"\s*\|?[\s:|-]+\|?\s*", ln) is not None
        if not is_row or is_sep or not prev_sep and not any(o.lstrip().startswith("|") for o in out[-1:]):
            out.append(ln)
        prev_sep = is_sep or (prev_sep and not is_row)
    return "".join(out).encode()


def drop_model_column(content: bytes, kind: str) -> bytes | None:
    """The file without the columns/keys naming the model (CSV) or holding the model id or score (JSON)."""
    if kind == "csv":
        lines = content.decode("utf-8").splitlines(keepends=True)
        header = next(csv.reader([lines[0]]))
        idx = [i for i, c in enumerate(header) if re.search(r"model|name|^key$", c.strip(), re.I)]
        if not idx:
            return None
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        for row in csv.reader(lines):
            w.writerow([c for i, c in enumerate(row) if i not in idx])
        return out.getvalue().encode()
    if kind == "json":
        def strip(o):
            if isinstance(o, dict):
                return {k: strip(v) for k, v in o.items()
                        if not re.fullmatch(r"(?i)model(_name)?|name|id|slug|pass@1|score|resolved|rating", k)}
            if isinstance(o, list):
                return [strip(v) for v in o]
            return o
        return json.dumps(strip(json.loads(content))).encode()
    return None


STRUCTURAL = {
    "empty": lambda c, k: b"",
    "whitespace": lambda c, k: b"  \n\n\t ",
    "html_error_page": lambda c, k: b"<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head>"
                                    b"<body><h1>502 Bad Gateway</h1></body></html>",
    "binary_garbage": lambda c, k: np.random.default_rng(7).integers(0, 256, 4096, dtype=np.uint8).tobytes(),
    "wrong_shape_json": lambda c, k: b'{"error": {"code": 404, "message": "Not Found"}}',
    "wrong_shape_csv": lambda c, k: b"id,name,value\n1,foo,bar\n2,baz,qux\n",
    "header_only": header_only,
    "column_missing": drop_model_column,
    "truncated_mid_byte": lambda c, k: half(c) if k in ("json", "zip") else None,
}


# (source, mutation or test) -> why it means nothing for that source's primary file (skipped with the
# reason). Any other mutation must change the file: one that leaves it as it was tests nothing.
NOT_APPLICABLE = {
    ("tau2_bench", "column_missing"): "the manifest lists submission directories only; model names and "
                                      "scores are in the submission files",
    ("tau2_bench", "non_utf8"): "the manifest holds directory names, not model names: a renamed "
                                "directory is a listed submission without a file",
}


def not_applicable(source: str, mutation: str) -> None:
    if (source, mutation) in NOT_APPLICABLE:
        pytest.skip(f"{source}: {mutation} does not apply: {NOT_APPLICABLE[source, mutation]}")


def baseline(tmp_path_factory, source: str, template: Path) -> str:
    """A database with the good copy of `source` stored (built once per source, from a copy of the
    session's synced template, then copied)."""
    root = tmp_path_factory.getbasetemp() / "bad_inputs_base"
    root.mkdir(exist_ok=True)
    path = root / f"{source}.duckdb"
    if not path.exists():
        shutil.copyfile(template, path)
        primary, aux = source_files(source)
        ingest_file(open_store(str(path)), source, primary, aux_paths=aux, observed_at=NOW)
    return str(path)


@pytest.fixture
def fresh(tmp_path, tmp_path_factory, _synced_template):
    def make(source: str) -> str:
        target = tmp_path / "db.duckdb"
        shutil.copy(baseline(tmp_path_factory, source, _synced_template), target)
        return str(target)
    return make


def state(path: str) -> tuple:
    with db.connect(path, read_only=True) as con:
        counts = table_counts(con)
        latest = con.execute("SELECT source, benchmark, model, setting, score FROM latest_scores ORDER BY ALL").fetchall()
    return counts, latest


def write_broken(tmp_path: Path, primary: Path, content: bytes) -> Path:
    out = tmp_path / "broken" / primary.name
    out.parent.mkdir(exist_ok=True)
    out.write_bytes(content)
    return out


@pytest.mark.parametrize("mutation", list(STRUCTURAL))
@pytest.mark.parametrize("source", lane(SOURCES, FAST_SOURCES))
def test_structural_breakage_is_one_line_and_changes_nothing(source, mutation, fresh, tmp_path):
    not_applicable(source, mutation)
    primary, aux = source_files(source)
    kind = fmt(primary)
    content = STRUCTURAL[mutation](primary.read_bytes(), kind)
    if content is None:
        pytest.skip(f"{mutation} does not apply to {kind} files")
    assert content != primary.read_bytes(), f"{mutation} leaves the file unchanged: declare it in NOT_APPLICABLE"
    dbp = fresh(source)
    before = state(dbp)
    with pytest.raises(ScrapeError) as exc:
        ingest_file(open_store(dbp), source, write_broken(tmp_path, primary, content), aux_paths=aux, observed_at=NOW)
    assert exc.value.source == source and "\n" not in str(exc.value) and exc.value.reason
    assert str(exc.value).startswith(f"[{source}] ")
    assert state(dbp) == before


@pytest.mark.parametrize("source", lane(SOURCES, FAST_SOURCES))
def test_over_the_size_cap_changes_nothing(source, fresh, tmp_path, monkeypatch):
    primary, aux = source_files(source)
    dbp = fresh(source)
    before = state(dbp)
    monkeypatch.setattr(http, "DEFAULT_MAX_BYTES", primary.stat().st_size - 1)
    with pytest.raises(ScrapeError, match="size cap"):
        ingest_file(open_store(dbp), source, primary, aux_paths=aux, observed_at=NOW)
    assert state(dbp) == before


@pytest.mark.parametrize("fraction", [0.5, 0.25])
@pytest.mark.parametrize("source", lane([s for s in SCORE_SOURCES if fmt(source_files(s)[0]) in ("csv", "md", "yaml")],
                                         FAST_SOURCES))
def test_line_boundary_truncation(source, fraction, fresh, tmp_path):
    """Cut at a line boundary: refused, or stored and held exactly when some table (benchmark and
    table_version) dropped more than the source's share of its rows (counted here independently);
    a held snapshot leaves latest_scores unchanged."""
    from storage.shrink_guard import shrink_max_drop
    primary, aux = source_files(source)
    lines = primary.read_bytes().splitlines(keepends=True)
    content = b"".join(lines[: max(1, int(len(lines) * fraction))])
    dbp = fresh(source)
    _, latest_before = state(dbp)
    try:
        res = ingest_file(open_store(dbp), source, write_broken(tmp_path, primary, content), aux_paths=aux, observed_at=NOW)
    except ScrapeError as exc:           # the row floor or a parse error: nothing stored
        assert exc.source == source
        return
    n = run_query("SELECT snapshot_id, benchmark, table_version, count(*) n FROM scores GROUP BY ALL", open_store(dbp))
    new = n[n["snapshot_id"] == res.snapshot_id].set_index(["benchmark", "table_version"])["n"]
    old = n[n["snapshot_id"] != res.snapshot_id].set_index(["benchmark", "table_version"])["n"]
    common = new.index.intersection(old.index)
    shrunk = (old[common] - new[common] > shrink_max_drop(scrapers.get(source).shrink_max_drop) * old[common])
    expected_held = bool(shrunk.any())
    assert bool(res.held_reason) == expected_held, res.summary()
    if expected_held:   # only the tables that shrank are held (migration 041): their rows in use stay
        benches = {b for b, _ in shrunk[shrunk].index}
        keep = lambda rows: [r for r in rows if r[1] in benches]   # noqa: E731
        assert keep(state(dbp)[1]) == keep(latest_before)


# --- value breakage -------------------------------------------------------------------------------

BAD_VALUES = {
    "inf": {"csv": "inf", "md": "inf", "json": "Infinity", "yaml": ".inf"},
    "negative": {"csv": "-5", "md": "-5", "json": "-5", "yaml": "-5"},
    "over_100_percent": {"csv": "250", "md": "250", "json": "250", "yaml": "250"},
    "nan": {"csv": "NaN", "md": "NaN", "json": "NaN", "yaml": ".nan"},
}


def good_parse(source: str):
    primary, aux = source_files(source)
    s = scrapers.get(source)
    return s.parse_checked(primary.read_bytes(), fetched_at=NOW, aux={p.name: p.read_bytes() for p in aux},
                           filename=primary.name)


def target_cell(source: str) -> tuple[str, bytes]:
    """A proportion score's raw cell that occurs exactly once in the file (so it can be replaced)."""
    primary, _ = source_files(source)
    content = primary.read_bytes()
    scores = good_parse(source).scores
    for raw in scores.loc[scores["metric"] == "proportion", "raw_value"].dropna().astype(str):
        token = raw.strip().encode()
        if len(token) >= 3 and content.count(token) == 1 and re.search(rb"\d", token):
            return raw.strip(), content
    pytest.skip(f"{source}: no proportion score cell that occurs once in the file")


VALUE_SOURCES = [s for s in SCORE_SOURCES if fmt(source_files(s)[0]) != "zip"]


# the fast lane: two kinds of bad value per fast source (a NaN, a value out of range); inf and a negative
# score are rejected there by the same checks (test_csv_ingest::test_every_kind_of_reject_matches_the_pandas_path)
@pytest.mark.parametrize("bad", lane(list(BAD_VALUES), ("nan", "over_100_percent")))
@pytest.mark.parametrize("source", lane(VALUE_SOURCES, FAST_SOURCES))
def test_value_breakage_rejects_the_row_and_keeps_the_rest(source, bad, synced_db, tmp_path):
    primary, aux = source_files(source)
    kind = fmt(primary)
    raw, content = target_cell(source)
    token = BAD_VALUES[bad].get(kind, BAD_VALUES[bad]["csv"])
    if kind == "json" and raw.startswith('"') is False and f'"{raw}"'.encode() in content:
        token = f"{token}"          # a quoted string cell stays quoted: "inf" inside quotes
    broken = content.replace(raw.encode(), token.encode(), 1)
    dbp = str(synced_db)
    good = good_parse(source).scores
    res = ingest_file(open_store(dbp), source, write_broken(tmp_path, primary, broken), aux_paths=aux, observed_at=NOW)
    stored = run_query("SELECT score, raw_value FROM scores", open_store(dbp))
    # the bad row is gone; so may be aggregates the page derives from it (LiveBench category means)
    assert len(good) - 5 <= res.n_scores <= len(good) - 1, res.summary()
    assert np.isfinite(stored["score"]).all()
    # a row is (benchmark, table_version, model, setting): one model's rows on two boards of a
    # benchmark (ARC-AGI-2's public and semi-private splits) differ only by table_version
    key = ["benchmark", "table_version", "model", "setting"]
    kept = run_query("SELECT benchmark_raw AS benchmark, coalesce(table_version, '') AS table_version, "
                     "model_raw AS model, setting, score FROM scores", open_store(dbp))
    good = good.assign(table_version=good.get("table_version", pd.Series("", index=good.index)).fillna(""))
    merged = kept.merge(good[key + ["score"]], on=key, how="left", suffixes=("", "_good"))
    assert np.allclose(merged["score"], merged["score_good"])       # good rows stored unchanged
    assert raw not in set(stored["raw_value"].astype(str).str.strip())
    if bad != "nan":     # NaN is a leaderboard's "no score": dropped or rejected, never stored
        reasons = run_query("SELECT reason FROM rejects", open_store(dbp))["reason"]
        assert res.n_rejects >= 1 and reasons.str.contains("outside the range|missing").any()


@pytest.mark.parametrize("source", lane([s for s in VALUE_SOURCES if fmt(source_files(s)[0]) in ("csv", "md")],
                                         FAST_SOURCES))
def test_duplicated_row_is_rejected_once(source, synced_db, tmp_path):
    primary, aux = source_files(source)
    raw, content = target_cell(source)
    lines = content.splitlines(keepends=True)
    i = next(j for j, ln in enumerate(lines) if raw.encode() in ln)
    broken = b"".join(lines[: i + 1] + [lines[i]] + lines[i + 1:])
    dbp = str(synced_db)
    good = good_parse(source).scores
    res = ingest_file(open_store(dbp), source, write_broken(tmp_path, primary, broken), aux_paths=aux, observed_at=NOW)
    assert res.n_scores == len(good)
    reasons = run_query("SELECT reason FROM rejects", open_store(dbp))["reason"]
    # rejected with the reason, or dropped by the scraper with a warning saying so
    assert reasons.str.contains("duplicate").sum() + sum("duplicate" in w for w in res.warnings) >= 1


@pytest.mark.parametrize("source", lane([s for s in SOURCES if fmt(source_files(s)[0]) != "zip"], FAST_SOURCES))
def test_non_utf8_is_decoded_as_cp1252_or_refused_never_stored_as_control_chars(source, synced_db, tmp_path):
    not_applicable(source, "non_utf8")
    primary, aux = source_files(source)
    text = primary.read_bytes().decode("utf-8")
    parsed = good_parse(source)
    frame = parsed.models if parsed.scores.empty else parsed.scores
    name = next((m for m in frame["model"].dropna() if len(m) >= 4 and text.count(m) == 1 and m.isascii()), None)
    if name is None:
        pytest.skip("no model name that occurs once")
    broken = text.replace(name, name + " ’v2’", 1).encode("cp1252", errors="replace")
    dbp = str(synced_db)
    try:
        res = ingest_file(open_store(dbp), source, write_broken(tmp_path, primary, broken), aux_paths=aux, observed_at=NOW)
    except ScrapeError as exc:
        assert exc.source == source and "\n" not in exc.reason
        return
    assert any("Windows-1252" in w for w in res.warnings)
    names = run_query("SELECT model_raw FROM model_dates UNION ALL SELECT model_raw FROM scores", open_store(dbp))["model_raw"]
    assert not names.astype(str).str.contains("[\x80-\x9f]", regex=True).any()
    assert names.astype(str).str.contains("’v2’", regex=False).any()


# --- bombs (issue 24, item 3): a small file that unpacks or expands to gigabytes ---------------------

def _zip_with(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


def test_a_zip_member_over_the_cap_is_refused_while_it_unpacks(fresh, tmp_path):
    """Before: `archive.read(member)` unpacked the whole member (a 3 MB zip with a 3 GB member:
    6.2 GB RSS, MemoryError). A member past the 64 MB cap is one ScrapeError line, nothing stored."""
    primary, _ = source_files("epoch")
    with zipfile.ZipFile(primary) as real:
        members = {n: real.read(n) for n in real.namelist()}
    members["frontiermath.csv"] = bytes(http.DEFAULT_MAX_BYTES + 1)   # a declared member; NUL bytes: ~65 KB
    content = _zip_with(members)
    assert len(content) < 1024 * 1024
    dbp = fresh("epoch")
    before = state(dbp)
    with pytest.raises(ScrapeError) as exc:
        ingest_file(open_store(dbp), "epoch", write_broken(tmp_path, primary, content), observed_at=NOW)
    assert "frontiermath.csv" in exc.value.reason and "cap" in exc.value.reason and "\n" not in str(exc.value)
    assert state(dbp) == before


def test_zip_members_over_the_cap_together_are_refused(tmp_path, monkeypatch):
    """The cap bounds the archive's unpacked total, not only each member."""
    primary, _ = source_files("epoch")
    with zipfile.ZipFile(primary) as real:
        members = {n: real.read(n) for n in real.namelist()}
    each = max(len(v) for v in members.values())
    monkeypatch.setattr(http, "DEFAULT_MAX_BYTES", sum(len(v) for v in members.values()) + each // 2)
    scraper = scrapers.get("epoch")
    scraper.parse_checked(primary.read_bytes(), fetched_at=NOW)        # the real archive fits
    members["math_level_5.csv"] = next(iter(members.values()))     # a declared member (undeclared ones are not read)
    with pytest.raises(ScrapeError, match="math_level_5.csv unpacks to more than"):
        scraper.parse_checked(_zip_with(members), fetched_at=NOW)


# nine lists of nine aliases of the list before: 9**k names from a few hundred bytes
ALIAS_BOMB = ("- &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
              + "".join(f"- &{b} [*{a}, *{a}, *{a}, *{a}, *{a}, *{a}, *{a}, *{a}, *{a}]\n"
                        for a, b in zip("abcd", "bcde")))


@pytest.mark.parametrize("source", ["aider_polyglot", "aider_edit"])
def test_yaml_aliases_are_refused(source):
    """Before: a 721-byte YAML whose `model:` was nested aliases took 6.3 GB and 105 s. No source's
    YAML uses anchors or aliases: any is refused as malformed (one line)."""
    primary, _ = source_files(source)
    good = primary.read_bytes()
    bomb = ALIAS_BOMB.encode() + b"- model: *e\n  pass_rate_2: 50.0\n  test_cases: 10\n" + good
    with pytest.raises(ScrapeError, match="anchors and aliases are not accepted") as exc:
        scrapers.get(source).parse_checked(bomb, fetched_at=NOW)
    assert "\n" not in str(exc.value)
    anchored = b"- &run\n  model: x\n  pass_rate_2: 50.0\n" + good       # an anchor alone is refused too
    with pytest.raises(ScrapeError, match="anchor &run"):
        scrapers.get(source).parse_checked(anchored, fetched_at=NOW)


@pytest.mark.parametrize("cell", [b"[gpt-4o, claude]", b"{name: gpt-4o}"])
def test_a_list_or_mapping_as_a_name_is_a_rejected_row_never_its_text(cell):
    primary, _ = source_files("aider_polyglot")
    content = b"- model: " + cell + b"\n  pass_rate_2: 50.0\n  test_cases: 10\n" + primary.read_bytes()
    parsed = scrapers.get("aider_polyglot").parse_checked(content, fetched_at=NOW)
    assert not parsed.scores["model"].str.contains(r"[\[{]", regex=True).any()
    assert len(parsed.rejects) >= 1 and parsed.rejects["reason"].str.contains("model").any()


def test_clean_name_refuses_containers():
    from scrapers.normalize import clean_name
    assert clean_name(["a", "b"]) is None and clean_name({"a": 1}) is None and clean_name(b"x") is None
    assert clean_name("  GPT-4o ") == "GPT-4o" and clean_name(7) == "7"

"""Epoch's hub read by declaration (scrapers/epoch_members.csv): undeclared and broken members, the
declaration file's own checks, bounded unpacking of every compression method, and an independent
reading of the real zip (../shared) from the declarations alone."""

from __future__ import annotations

import csv
import io
import lzma
import math
import re
import struct
import tracemalloc
import zipfile
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pandas as pd
import pytest

import scrapers
from helpers import SNAPSHOTS, fixture_scraper, require
from scrapers import epoch, http
from scrapers.base import ScrapeError

pytestmark = pytest.mark.xdist_group("test_epoch_hub")   # its module fixture is built once

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "epoch"
AT = datetime(2026, 3, 12)
HUB = "epoch/epoch_2026-03-12.zip"


def _zip(files: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as z:
        for name, data in files.items():
            z.writestr(name, data)
    return buf.getvalue()


def _hub(*pairs: tuple[str, str]) -> bytes:
    """A zip of fixture files under member names."""
    return _zip({f"benchmark_data/{member}": (FIXTURES / rel).read_bytes() for member, rel in pairs})


def test_an_undeclared_member_is_named_and_never_read_and_the_declared_ones_ingest():
    content = _hub(("hle_external.csv", "hub/hle_external.csv"), ("new_board_external.csv", "hub/new_board_external.csv"),
                   ("metr_time_horizons_external.csv", "hub/metr_time_horizons_external.csv"))
    p = fixture_scraper("epoch").parse_checked(content, fetched_at=AT)
    assert set(p.scores.benchmark) == {"humanitys_last_exam", "metr_time_horizon"}
    assert p.meta["undeclared"] == ["benchmark_data/new_board_external.csv"] and p.meta["failed"] == []
    assert any("undeclared" in w and "new_board_external.csv" in w for w in p.warnings)


def test_a_declared_column_missing_fails_that_member_only():
    content = _hub(("mmlu_external.csv", "hub/mmlu_without_em.csv"), ("hle_external.csv", "hub/hle_external.csv"))
    p = fixture_scraper("epoch").parse_checked(content, fetched_at=AT)
    assert set(p.scores.benchmark) == {"humanitys_last_exam"}
    assert p.meta["failed"] == ["benchmark_data/mmlu_external.csv"]
    assert any("mmlu_external.csv lacks its declared column(s) ['EM']" in w for w in p.warnings)
    # alone (a single CSV): an error naming member and column
    with pytest.raises(ScrapeError, match=r"mmlu_external\.csv lacks its declared column\(s\) \['EM'\]"):
        fixture_scraper("epoch").parse_checked((FIXTURES / "hub" / "mmlu_without_em.csv").read_bytes(),
                                               fetched_at=AT, filename="mmlu_external.csv")


def test_a_single_csv_of_an_undeclared_member_is_an_error_naming_it():
    with pytest.raises(ScrapeError, match=r"'new_board_external' is not a declared Epoch member"):
        fixture_scraper("epoch").parse_checked((FIXTURES / "hub" / "new_board_external.csv").read_bytes(),
                                               fetched_at=AT, filename="new_board_external.csv")


def test_a_zip_with_no_readable_declared_member_is_an_error():
    content = _hub(("new_board_external.csv", "hub/new_board_external.csv"))
    with pytest.raises(ScrapeError, match=r"no declared member.*new_board_external\.csv"):
        fixture_scraper("epoch").parse_checked(content, fetched_at=AT)


def test_a_declared_unit_that_contradicts_the_values_rejects_rows_with_one_warning(monkeypatch):
    """Units are declared, never inferred: a proportion declaration over percents rejects the rows
    (out of range) and says so once, rather than rescaling them."""
    wrong = dict(epoch.members())
    wrong["aider_polyglot_external"] = epoch.Member(**{**wrong["aider_polyglot_external"].__dict__, "unit": "proportion"})
    monkeypatch.setattr(epoch, "members", lambda: wrong)
    p = fixture_scraper("epoch").parse_checked(
        _hub(("aider_polyglot_external.csv", "hub/aider_polyglot_external.csv"),
             ("hle_external.csv", "hub/hle_external.csv")), fetched_at=AT)
    assert set(p.scores.benchmark) == {"humanitys_last_exam"} and len(p.rejects) == 3
    assert any("aider_polyglot_external.csv: 3 of 3 Percent correct value(s) outside the declared unit" in w
               for w in p.warnings)


@pytest.mark.parametrize("edit,why", [
    (("unit", "share"), "is not one of"),
    (("external", "no"), "_external member"),
    (("setting", "Shots"), "key:Column"),
    (("stderr_unit", "percent"), "only with a stderr column"),
    (("ci_low", "CI_low"), "both bounds"),
    (("n_items", "0"), "positive whole number"),
])
def test_a_malformed_declaration_names_its_line_and_column(tmp_path, edit, why):
    rows = list(csv.DictReader(epoch.MEMBERS_FILE.open(encoding="utf-8", newline="")))
    line = next(i for i, r in enumerate(rows) if r["member"] == "mmlu_external")
    rows[line][edit[0]] = edit[1]
    path = tmp_path / "epoch_members.csv"
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    with pytest.raises(ValueError, match=rf"line {line + 2}, column .*{edit[0]}.*{why}"):
        epoch.load_members(path)


def test_every_declared_benchmark_is_registered():
    import registry
    known = set(registry.load_benchmarks()["id"])
    declared = {m.benchmark for m in epoch.members().values() if m.unit != epoch.NOT_READ}
    assert declared - known == set()


# --- unpacking: every compression method is counted while it unpacks (issue 55, item 5) ---------------

BIG = 16 * 1024 * 1024      # what one member unpacks to; the cap is set to 1 MB below


@pytest.fixture(scope="module")
def bombs() -> dict[int, bytes]:
    """A zip per method whose one declared member unpacks to 16 MB of one byte (a few hundred bytes to
    10 KB packed). The LZMA dictionary is 1 MB, so that the decompressor's own state stays small beside
    the member."""
    out = {}

    def small_dictionary(self) -> bytes:      # zipfile's LZMA header with a 1 MB dictionary (default: 8 MB)
        props = lzma._encode_filter_properties({"id": lzma.FILTER_LZMA1, "dict_size": 1 << 20})
        self._comp = lzma.LZMACompressor(lzma.FORMAT_RAW, filters=[
            lzma._decode_filter_properties(lzma.FILTER_LZMA1, props)])
        return struct.pack("<BBH", 9, 4, len(props)) + props

    for method in (zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA):
        buf = io.BytesIO()
        with pytest.MonkeyPatch.context() as mp, zipfile.ZipFile(buf, "w", method) as z:
            mp.setattr(zipfile.LZMACompressor, "_init", small_dictionary)
            with z.open("benchmark_data/gpqa_diamond.csv", "w") as fh:
                fh.write(b"Model version,mean_score\n")
                block = b"a" * (1024 * 1024)
                for _ in range(BIG // len(block)):
                    fh.write(block)
        out[method] = buf.getvalue()
    return out


@pytest.mark.parametrize("method", [zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA], ids=["bzip2", "lzma"])
def test_a_bzip2_or_lzma_member_is_refused_at_the_cap_without_unpacking_it_whole(bombs, method, monkeypatch):
    """Before: zipfile hands bzip2/LZMA input to the decompressor without an output bound, so the
    first read of an 800-byte bzip2 member allocated the whole member (1.66 GB) before the cap was
    checked. Now each decompressor call is bounded: memory stays near the cap."""
    monkeypatch.setattr(http, "DEFAULT_MAX_BYTES", 1024 * 1024)
    content = bombs[method]
    assert len(content) < 20_000
    tracemalloc.start()
    try:
        with pytest.raises(ScrapeError, match=r"gpqa_diamond\.csv unpacks to more than the 1 MB cap"):
            scrapers.get("epoch").parse_checked(content, fetched_at=AT)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 6 * 1024 * 1024, f"peak {peak / 2**20:.1f} MB while refusing a 16 MB member at a 1 MB cap"


@pytest.mark.parametrize("method", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA],
                         ids=["stored", "deflate", "bzip2", "lzma"])
def test_every_compression_method_gives_the_same_rows(method):
    files = {f"benchmark_data/{n}": (FIXTURES / n).read_bytes()
             for n in ("gpqa_diamond.csv", "swe_bench_verified.csv", "epoch_capabilities_index.csv")}
    base = fixture_scraper("epoch").parse_checked(_zip(files, zipfile.ZIP_STORED), fetched_at=AT).scores
    got = fixture_scraper("epoch").parse_checked(_zip(files, method), fetched_at=AT).scores
    assert got.equals(base) and len(got) == 9


def test_a_corrupt_bzip2_member_is_an_error_naming_it():
    files = {"benchmark_data/gpqa_diamond.csv": (FIXTURES / "gpqa_diamond.csv").read_bytes()}
    content = bytearray(_zip(files, zipfile.ZIP_BZIP2))
    start = content.index(b"BZh") + 40
    content[start:start + 8] = b"\xff" * 8
    with pytest.raises(ScrapeError, match=r"gpqa_diamond\.csv"):
        scrapers.get("epoch").parse_checked(bytes(content), fetched_at=AT)


# --- the real hub: an independent reading from the declarations alone -------------------------------

def _number(cell: str) -> float | None:
    text = cell.strip().replace("%", "")
    if text.lower() in ("", "n/a", "na", "none", "-", "nan"):
        return None
    return float(text)


# the effort / thinking-budget suffix of a model version, written here again (not imported) so that
# this reading stays independent of the parser's
EFFORT = re.compile(r"_(?:x?high|medium|low|minimal|max|none|unknown|\d+[kK])$")


def _name_cell(row: dict[str, str], decl: epoch.Member) -> str:
    """A row's model name: the declared model column, else its fallback column."""
    return (row[decl.model] or "").strip() or (row[decl.model_fallback].strip() if decl.model_fallback else "")


def _read_members(z: zipfile.ZipFile) -> Iterator[tuple[str, epoch.Member]]:
    """(member name, declaration) of each member of the hub that its declaration says to read."""
    declared = epoch.members()
    for name in z.namelist():
        decl = declared.get(epoch.member_name(name))
        if decl is not None and decl.unit != epoch.NOT_READ:
            yield name, decl


def _report(link: str) -> str:
    """One report however linked: an arXiv paper by its identifier, another page by its URL."""
    m = re.search(r"arxiv\.org/(?:abs|pdf|html)/(\d{4}\.\d{4,5})", link or "")
    return m[1] if m else re.sub(r"^https?://(www\.)?", "", (link or "").strip()).rstrip("/").lower()


def _rows(data: bytes):
    return csv.DictReader(io.StringIO(data.decode("utf-8-sig")))


def _versions_by_report(z: zipfile.ZipFile) -> dict[tuple[str, str], str]:
    """(report's name, report) -> the one Model version the hub's rows give it (names given two: absent)."""
    seen: dict[tuple[str, str], set[str]] = {}
    for member, decl in _read_members(z):
        if not decl.report or decl.model_fallback in ("", "Agent"):
            continue
        for r in _rows(z.read(member)):
            label, version = " ".join((r[decl.model_fallback] or "").split()), (r[decl.model] or "").strip()
            if label and version and (r[decl.report] or "").strip().startswith("http"):
                seen.setdefault((label, _report(r[decl.report])), set()).add(EFFORT.sub("", version))
    return {k: v.pop() for k, v in seen.items() if len(v) == 1}


def _plain_top5(data: bytes, decl: epoch.Member, by_report: dict[tuple[str, str], str]) -> list[tuple[str, float]]:
    """The top five (model, stored score) of one member, read with the csv module from its declaration:
    the score column times its unit's factor, the model column (else the fallback, else the one
    version the hub gives the fallback name in the same report) without the effort suffix; ties
    broken by model name."""
    factor = {"percent": 0.01}.get(decl.unit, 1.0)
    rows = []
    for r in _rows(data):
        value = _number(r[decl.score])
        name = (r[decl.model] or "").strip()
        if not name and decl.model_fallback:
            label = " ".join(r[decl.model_fallback].split())
            link = (r[decl.report] or "").strip() if decl.report and decl.model_fallback != "Agent" else ""
            name = by_report.get((label, _report(link)), label) if link.startswith("http") else label
        name = " ".join(re.sub("[🥇🥈🥉🏆]", " ", name).split())      # a rank medal is no part of a name
        if value is None or not name:
            continue
        rows.append((EFFORT.sub("", name), value * factor))
    rows.sort(key=lambda t: (-t[1], t[0]))
    return rows[:5]


def test_the_real_hub_matches_an_independent_reading_of_every_declared_member():
    path = require(SNAPSHOTS / HUB)
    p = scrapers.get("epoch").parse_checked(path.read_bytes(), fetched_at=AT)
    checked = 0
    with zipfile.ZipFile(path) as z:
        by_report = _versions_by_report(z)
        for name, decl in _read_members(z):
            want = _plain_top5(z.read(name), decl, by_report)
            rows = p.scores[(p.scores.benchmark == decl.benchmark)
                            & (p.scores.table_version == ("external" if decl.external else ""))]
            got = sorted(zip(rows.model, rows.score), key=lambda t: (-t[1], t[0]))[:5]
            assert [m for m, _ in got] == [m for m, _ in want], name
            assert all(math.isclose(a, b, rel_tol=1e-9) for (_, a), (_, b) in zip(got, want)), name
            assert set(rows.metric) == {epoch.UNITS[decl.unit][0]}, name
            checked += 1
    assert p.meta["failed"] == []
    assert checked == p.meta["members"] - len(p.meta["undeclared"]) - len(p.meta["not_read"])
    # uncertainty where the hub publishes it: HLE and Terminal-Bench standard errors, METR and WebDev intervals
    s = p.scores
    for bench in ("humanitys_last_exam", "terminal_bench_2", "balrog", "apex_agents"):
        assert s.loc[s.benchmark == bench, "stderr"].notna().all(), bench
    for bench in ("metr_time_horizon", "webdev_arena"):
        rows = s[s.benchmark == bench]
        assert rows.ci_low.notna().all() and (rows.ci_low <= rows.score).all() and (rows.score <= rows.ci_high).all()
    assert s.loc[s.benchmark == "apex_agents", "stderr"].max() < 0.1      # percentage points read as shares



# the month an arXiv identifier states, written here again (not imported) so this count stays independent
ARXIV = re.compile(r"arxiv\.org/(?:abs|pdf)/(\d\d)(\d\d)\.\d{4,5}")


def test_arxiv_month_end_reads_the_identifier_month_and_nothing_else():
    from scrapers.normalize import arxiv_month_end
    assert arxiv_month_end("http://arxiv.org/abs/2307.09288") == datetime(2023, 7, 31)
    assert arxiv_month_end("https://arxiv.org/pdf/2309.13165v1") == datetime(2023, 9, 30)
    assert arxiv_month_end("https://arxiv.org/pdf/2402.16819.pdf") == datetime(2024, 2, 29)   # leap year
    assert arxiv_month_end("https://arxiv.org/abs/2412.19437") == datetime(2024, 12, 31)
    assert arxiv_month_end("https://arxiv.org/abs/1501.00001") == datetime(2015, 1, 31)
    for link in ("https://crfm.stanford.edu/helm/lite/latest/", "https://arxiv.org/abs/hep-th/9901001",
                 "https://arxiv.org/abs/2313.00001", "https://arxiv.org/abs/0703.1234",
                 "https://example.org/?u=arxiv.org/abs/2307.0928", None, float("nan"), ""):
        assert arxiv_month_end(link) is None, link


def test_report_key_tells_one_report_however_linked_and_two_reports_apart():
    from scrapers.normalize import report_key
    paper = report_key("http://arxiv.org/abs/2303.08774")
    assert paper == "arxiv:2303.08774"
    assert {report_key(link) for link in ("https://arxiv.org/pdf/2303.08774", "https://arxiv.org/abs/2303.08774v3",
                                          "https://www.arxiv.org/pdf/2303.08774v1.pdf")} == {paper}
    assert report_key("https://arxiv.org/abs/2303.08775") != paper
    assert report_key("https://crfm.stanford.edu/helm/lite/latest/") == report_key("http://crfm.stanford.edu/helm/lite/latest")
    assert report_key("https://crfm.stanford.edu/helm/classic/latest/") != report_key("https://crfm.stanford.edu/helm/lite/latest/")
    assert report_key("https://example.org/?u=arxiv.org/abs/2307.09288") != "arxiv:2307.09288"
    for cell in ("Stanford HELM", "", None, float("nan")):
        assert report_key(cell) is None, cell


def test_the_real_hub_dates_numbers_from_papers_by_their_arxiv_month():
    """Every row without a date of its own whose report is an arXiv paper is dated at the last day of
    the paper's month, unless its model was released after it; counted again from the csv module."""
    path = require(SNAPSHOTS / HUB)
    p = scrapers.get("epoch").parse_checked(path.read_bytes(), fetched_at=AT)
    want = 0
    with zipfile.ZipFile(path) as z:
        for name, decl in _read_members(z):
            if not decl.report:
                continue
            for r in csv.DictReader(io.StringIO(z.read(name).decode("utf-8-sig"))):
                name_cell = _name_cell(r, decl)
                m = ARXIV.search(r[decl.report] or "")
                if _number(r[decl.score]) is None or not name_cell or m is None:
                    continue
                if decl.evaluated_at and (r[decl.evaluated_at] or "").strip():
                    continue
                end = (datetime(2000 + int(m[1]) + int(m[2]) // 12, int(m[2]) % 12 + 1, 1)).toordinal() - 1
                release = (r[decl.release_date] or "").strip()
                if release and datetime.strptime(release[:10], "%Y-%m-%d").toordinal() > end:
                    continue
                want += 1
    assert want > 1000                      # most numbers of the old benchmarks come from papers
    assert p.meta["dated_by_report"] == want
    s = p.scores
    mmlu = s[(s.benchmark == "mmlu") & (s.table_version == "external")]
    # the Llama 2 paper (arXiv 2307.09288) dates its MMLU numbers at July 2023's last day
    assert (mmlu.loc[mmlu.model == "Llama-2-70b-hf", "evaluated_at"] == pd.Timestamp("2023-07-31")).any()
    assert s["evaluated_at"].max() <= pd.Timestamp(AT)

# --- reported by name: the ingest line and `benchwatch status` ----------------------------------------

def test_an_undeclared_member_is_named_by_ingest_and_by_status(tmp_path, capsys, monkeypatch):
    """Real CLI, real DuckDB file: the declared members are stored, the undeclared one is named in the
    ingest's warnings and in `status` (from the snapshot's meta), the broken one as failed."""
    from cli.main import main
    for name in ("SLACK_WEBHOOK_URL", "SLACK_BOT_TOKEN", "SLACK_CHANNEL", "PREFECT_API_URL"):
        monkeypatch.delenv(name, raising=False)
    zpath = tmp_path / "benchmark_data.zip"
    zpath.write_bytes(_hub(("gpqa_diamond.csv", "gpqa_diamond.csv"), ("swe_bench_verified.csv", "swe_bench_verified.csv"),
                           ("epoch_capabilities_index.csv", "epoch_capabilities_index.csv"),
                           ("hle_external.csv", "hub/hle_external.csv"),
                           ("metr_time_horizons_external.csv", "hub/metr_time_horizons_external.csv"),
                           ("lech_mazur_writing_external.csv", "hub/lech_mazur_writing_external.csv"),
                           ("webdev_arena_external.csv", "hub/webdev_arena_external.csv"),
                           ("aider_polyglot_external.csv", "hub/aider_polyglot_external.csv"),
                           ("swe_bench_bash.csv", "swe_bench_bash_only.csv"),       # past the source's floor of 20 rows
                           ("new_board_external.csv", "hub/new_board_external.csv"),
                           ("mmlu_external.csv", "hub/mmlu_without_em.csv")))
    db = str(tmp_path / "hub.duckdb")
    assert main(["ingest", "epoch", str(zpath), "--db", db, "--observed-at", "2026-03-12"]) == 0
    out = capsys.readouterr().out
    assert "[epoch] new snapshot" in out and "new_board_external.csv" in out and "mmlu_external.csv lacks" in out
    assert main(["status", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "epoch snapshot 1: undeclared: benchmark_data/new_board_external.csv" in out
    assert "epoch snapshot 1: failed: benchmark_data/mmlu_external.csv" in out
    assert main(["query", "--db", db, "SELECT benchmark, metric, count(*) AS n FROM scores GROUP BY ALL ORDER BY 1"]) == 0
    out = capsys.readouterr().out
    assert "metr_time_horizon" in out and "minutes" in out and "score_10" in out and "elo" in out


def test_a_copied_board_s_methods_are_systems_on_their_model_and_status_lists_the_model(tmp_path, monkeypatch):
    """Real CLI ingest into a real DuckDB file: the copied ScienceQA board's rows without a Model
    version, named by the paper's method over an API model (`CoT GPT-3 (AE)`), are systems on
    that model: `status` lists the one model name (GPT-3), never each method's; fine-tunes named
    the same way (`DDCoT (T5)`, `CoT UnifiedQA`) stay model names; a registry alias resolves."""
    import duckdb
    from cli.main import main
    from storage.status import unknown
    for name in ("SLACK_WEBHOOK_URL", "SLACK_BOT_TOKEN", "SLACK_CHANNEL", "PREFECT_API_URL"):
        monkeypatch.delenv(name, raising=False)
    zpath = tmp_path / "benchmark_data.zip"
    zpath.write_bytes(_hub(("swe_bench_bash.csv", "swe_bench_bash_only.csv"),      # past the source's floor of 20 rows
                           ("gpqa_diamond.csv", "gpqa_diamond.csv"),
                           ("epoch_capabilities_index.csv", "epoch_capabilities_index.csv"),
                           ("hle_external.csv", "hub/hle_external.csv"),
                           ("aider_polyglot_external.csv", "hub/aider_polyglot_external.csv"),
                           ("lech_mazur_writing_external.csv", "hub/lech_mazur_writing_external.csv"),
                           ("science_qa_external.csv", "hub/science_qa_external.csv")))
    db = str(tmp_path / "hub.duckdb")
    assert main(["ingest", "epoch", str(zpath), "--db", db, "--observed-at", "2026-03-12"]) == 0
    with duckdb.connect(db, read_only=True) as con:
        rows = dict(con.execute("SELECT model_raw, population || ':' || coalesce(underlying, model) FROM scores "
                                "WHERE benchmark = 'scienceqa'").fetchall())
        names = {r[1] for r in unknown(con, limit=500)[0].rows}
    assert rows == {"CoT GPT-3 (AE)": "systems:GPT-3", "CoT GPT-3 (ALE)": "systems:GPT-3",
                    "DDCoT (GPT-3)": "systems:GPT-3", "Chameleon (ChatGPT)": "systems:ChatGPT",
                    "CoT UnifiedQA": "models:CoT UnifiedQA", "DDCoT (T5)": "models:DDCoT (T5)",
                    "GPT-NeoX (20B)": "models:gpt-neox-20b"}
    assert {"GPT-3", "ChatGPT", "CoT UnifiedQA", "DDCoT (T5)"} <= names
    assert not names & {"CoT GPT-3 (AE)", "CoT GPT-3 (ALE)", "DDCoT (GPT-3)", "Chameleon (ChatGPT)", "GPT-NeoX (20B)"}

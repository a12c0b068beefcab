"""The one redaction of secrets: log records, stored errors and CLI output.

Secrets reach text in several ways: a Slack webhook URL or bot token (bearer credentials:
anyone holding them can post to the channel) in our own messages or in slack_sdk's request
logs; a credential in a URL's query string (`?token=`, `&api_key=`) in urllib3's request line
or in a fetch error. `redact` removes the secrets registered when the settings were loaded,
plus anything that looks like one:

- `https://hooks.slack.com/services/T…/B…/…` and any other `/services/T…/B…/…` webhook path,
- Slack tokens `xoxb-…`, `xoxp-…`, `xoxa-…`, `xoxr-…`, `xoxs-…`, `xoxe-…`, `xapp-…`,
- `Authorization: Bearer …` header values,
- the value of a credential-like query parameter (`redact_url`: names ending in token, key,
  secret, password, passwd, signature; `sig`, `auth`),
- a PostgreSQL password in a libpq connection string, keyword form (`password=…`, quoted or
  not) and URI form (`postgresql://user:PASSWORD@host/db`: the password of any URL's userinfo).
  `register_conninfo` also registers the password itself (a driver may quote it in its own way).

Logging: a `logging.Filter` on a logger only sees records created on that very logger, not
those propagated from its children, so a filter on `benchwatch` alone would miss
`benchwatch.storage`, and a list of logger names drifts. `install()` therefore wraps the log
record factory once: every record created under a logger of `HIERARCHIES` (the `benchwatch`
hierarchy, the two libraries that log our URLs: slack_sdk, urllib3, and Prefect, whose engine
logs a refused flow run's parameters verbatim) is redacted when it is created, before any handler sees it (ours, Prefect's API handler, pytest's).
"""

from __future__ import annotations

import logging
import re
import threading
from typing import Callable
from urllib.parse import unquote, urlsplit

REDACTED = "[REDACTED]"

# Root loggers whose whole hierarchy is redacted. Every benchwatch logger is `benchwatch.<part>`.
HIERARCHIES: tuple[str, ...] = ("benchwatch", "slack_sdk", "urllib3", "prefect")

# Query parameters whose values never reach a log line or an error message: group 1 is "?name=".
_SECRET_QUERY = re.compile(r"([?&](?:[\w.-]*(?:token|key|secret|password|passwd|signature)|sig|auth)=)[^&#\s\"']*",
                           re.IGNORECASE)

# libpq keyword form: `password = value`, the value bare (up to white space) or single-quoted.
_CONNINFO_PASSWORD = re.compile(r"(\bpassword\s*=\s*)(?:'(?:[^'\\]|\\.)*'?|\S+)", re.IGNORECASE)
# A URL's userinfo password: scheme://user:PASSWORD@host (postgresql://, postgres://, any other).
# The scheme is at most 64 characters: unbounded, every word start in a long `a.a.a.…` run rescanned
# the run to its end (quadratic in the text, which may quote scraped cells).
_SCHEME = r"\b[a-z][a-z0-9+.-]{0,63}://"
_URL_PASSWORD = re.compile(rf"({_SCHEME}[^/\s:@\"']*:)[^@\s/\"']*@", re.IGNORECASE)

_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # the secret part of a webhook URL is the path after /services/
    (re.compile(r"(/services/)T[A-Za-z0-9_-]*/B[A-Za-z0-9_-]*/[^\s\"'<>|)\]]+"), r"\1" + REDACTED),
    (re.compile(r"\bx(?:ox[abprse]|app)-[A-Za-z0-9-]+"), "xox?-" + REDACTED),
    (re.compile(r"(?i)(bearer\s+)[^\s\"',}]+"), r"\1" + REDACTED),
    (_SECRET_QUERY, r"\1REDACTED"),
    (_CONNINFO_PASSWORD, r"\1" + REDACTED),
    (_URL_PASSWORD, r"\1" + REDACTED + "@"),
)

_lock = threading.Lock()
_secrets: set[str] = set()

def register_secret(value: str | None) -> None:
    """Remember a configured secret so that every later `redact` call removes it verbatim."""
    if value and len(value) >= 8:  # shorter values would redact ordinary words
        with _lock:
            _secrets.add(value)


def conninfo_passwords(conninfo: str) -> list[str]:
    """The password(s) a libpq connection string carries, keyword or URI form (to register)."""
    found = []
    for m in re.finditer(r"\bpassword\s*=\s*('(?:[^'\\]|\\.)*'|\S+)", conninfo, re.IGNORECASE):
        value = m[1]
        found.append(value)
        if value.startswith("'") and value.endswith("'") and len(value) >= 2:
            found.append(re.sub(r"\\(.)", r"\1", value[1:-1]))
    for m in re.finditer(rf"{_SCHEME}\S+", conninfo, re.IGNORECASE):
        try:
            password = urlsplit(m[0]).password
        except ValueError:
            continue
        if password:
            found += [password, unquote(password)]
    return found


def split_conninfo_password(text: str) -> tuple[str, str | None]:
    """`text` (a libpq conninfo or a `ducklake:postgres:<conninfo>` URL) without its password, and
    the password (None when it carries none). Keyword form (`password=…`, quoted or not), URI form
    (`postgresql://user:PW@host/db`) and a URI's `?password=` parameter. Why: a password must not
    become a Prefect flow parameter (Prefect stores parameters with the run); the caller hands it
    to libpq through PGPASSWORD instead, which psycopg and DuckDB's postgres extension both honour."""
    found: list[str] = []

    def keyword(m: re.Match[str]) -> str:
        value = m[1]
        if value.startswith("'") and value.endswith("'") and len(value) >= 2:
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        found.append(value)
        return ""

    def userinfo(m: re.Match[str]) -> str:
        found.append(unquote(m[2]))
        return m[1] + "@"

    def query(m: re.Match[str]) -> str:
        found.append(unquote(m[2]))
        return m[1] if m[3] == "&" else ""

    # keyword form: `password` starts the string, a key (after white space) or the conninfo (after `:`)
    out = re.sub(r"(?<![^\s:])password\s*=\s*('(?:[^'\\]|\\.)*'|\S+)\s*", keyword, text, flags=re.IGNORECASE)
    out = re.sub(rf"({_SCHEME}[^/\s:@\"']*):([^@\s/\"']*)@", userinfo, out, flags=re.IGNORECASE)
    out = re.sub(r"([?&])password=([^&#\s]*)(&?)", query, out, flags=re.IGNORECASE)
    out = re.sub(r"[?&]$", "", out.strip()) if out != text else out
    return out, (found[0] if found else None)


def register_conninfo(conninfo: str) -> None:
    """Register the password(s) of a connection string (a DuckLake catalog's) as secrets."""
    for password in conninfo_passwords(conninfo):
        register_secret(password)


def redact_url(text: str) -> str:
    """A URL (or any text containing URLs) with credential-like query values (token=, key=...) hidden."""
    return _SECRET_QUERY.sub(r"\1REDACTED", text)


def redact(text: object) -> str:
    """`text` as a string with every registered secret and secret-looking pattern replaced."""
    out = str(text)
    with _lock:
        secrets = sorted(_secrets, key=len, reverse=True)
    for secret in secrets:
        if secret in out:
            out = out.replace(secret, REDACTED)
    for pattern, replacement in _PATTERNS:
        out = pattern.sub(replacement, out)
    return out


def first_line(exc: BaseException) -> str:
    """The first line of an error, redacted (DuckDB's and libpq's messages quote a conninfo); the
    error's type when it has no text. The one-line reason storage puts in its own errors."""
    lines = str(exc).strip().splitlines()
    return redact(lines[0]) if lines else type(exc).__name__


def one_line(text: object, limit: int = 300) -> str:
    """A redacted, single-line, length-capped reason for stored errors and CLI output."""
    flat = " ".join(redact(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# Characters a terminal acts on (C0 controls, DEL, C1 controls such as CSI): shown as \xNN in
# table and CSV output (bidi controls as \uNNNN), so a scraped name cannot move the cursor,
# retitle the window, hide or reorder text.
# Bidirectional overrides, isolates and marks (U+202E shows "gpt-4\u202efdp.exe" as "gpt-4exe.pdf") too.
_TERMINAL_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def inert_text(value: object) -> object:
    """A string cell without terminal control characters (shown as \\xNN); other values as they are.
    Here, not in cli/commands/query.py, so that `status` shows cells without importing `query`."""
    if not isinstance(value, str):
        return value
    return _TERMINAL_CONTROL.sub(lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) < 0x100 else f"\\u{ord(m[0]):04x}",
                                 value)


def redact_record(record: logging.LogRecord) -> logging.LogRecord:
    """Rewrite a record's message (with its args), exception and stack text through `redact`."""
    try:
        message = record.getMessage()
    except Exception:  # a malformed record: leave it to the handler to report
        return record
    record.msg = redact(message)
    record.args = None
    if record.exc_info and record.exc_info[0] is not None:
        # the Formatter reuses exc_text when set, so the traceback is redacted once here
        record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
        record.exc_info = None
    if record.stack_info:
        record.stack_info = redact(record.stack_info)
    return record


class RedactingFilter(logging.Filter):
    """`redact_record` as a filter, for a handler or logger outside the redacted hierarchies."""

    def filter(self, record: logging.LogRecord) -> bool:
        redact_record(record)
        return True


def in_hierarchy(name: str, roots: tuple[str, ...] = HIERARCHIES) -> bool:
    """Whether logger `name` is one of `roots` or below one of them."""
    return any(name == root or name.startswith(root + ".") for root in roots)


_installed: Callable[..., logging.LogRecord] | None = None


def install() -> None:
    """Redact every record created under `HIERARCHIES` from now on (idempotent, thread-safe)."""
    global _installed
    with _lock:
        current = logging.getLogRecordFactory()
        if _installed is not None and current is _installed:
            return
        previous = current

        def factory(*args, **kwargs) -> logging.LogRecord:
            record = previous(*args, **kwargs)
            return redact_record(record) if in_hierarchy(record.name) else record

        logging.setLogRecordFactory(factory)
        _installed = factory

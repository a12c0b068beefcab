"""Log records a command also prints in its own summary: shown on the terminal once.

`benchwatch run` prints one line per source (new / unchanged / failed, with the reason) after the
cycle; the records that say the same while it runs (the HTTP layer's final failure of a URL, the
collection's outcome of a source, a flow run's report lines) carry `REPORTED` as their `extra`.
The CLI's console handler drops them (`DropReported`); every other handler keeps them (a Prefect
run's log in the UI, a worker's output, `-v`'s file), so nothing is lost where no summary is printed.
"""

from __future__ import annotations

import logging
from typing import Any, Iterable

from common.redact import inert_text

REPORTED_ATTR = "benchwatch_reported"
REPORTED = {REPORTED_ATTR: True}


class DropReported(logging.Filter):
    """Drops records tagged REPORTED (for the terminal handler of a command that prints its summary)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not getattr(record, REPORTED_ATTR, False)


def printable(text: str) -> str:
    """`text` with every character a terminal acts on escaped (`common.redact.inert_text`: C0 and
    C1 controls, DEL, bidi overrides as \\xNN / \\uNNNN), except the line feeds and tabs that lay
    out the CLI's own output. A value that may hold a newline of its own (a file name, a channel)
    is escaped whole with `inert_text` where it is worded."""
    if text.isprintable():
        return text
    return "\n".join("\t".join(str(inert_text(part)) for part in line.split("\t")) for line in text.split("\n"))


class PrintableStream:
    """A text stream that writes `printable(text)` to the stream it wraps (the CLI's stdout and
    stderr, `cli.main`): the one place every line the CLI prints passes, print or log record."""

    def __init__(self, stream: Any):
        self._stream = stream

    @property
    def wrapped(self) -> Any:
        return self._stream

    def write(self, text: str) -> int:
        self._stream.write(printable(text))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:      # flush, fileno, isatty, encoding, buffer, …
        return getattr(self._stream, name)

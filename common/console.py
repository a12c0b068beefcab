"""Log records a command also prints in its own summary: shown on the terminal once.

`benchwatch run` prints one line per source (new / unchanged / failed, with the reason) after the
cycle; the records that say the same while it runs (the HTTP layer's final failure of a URL, the
collection's outcome of a source, a flow run's report lines) carry `REPORTED` as their `extra`.
The CLI's console handler drops them (`DropReported`); every other handler keeps them (a Prefect
run's log in the UI, a worker's output, `-v`'s file), so nothing is lost where no summary is printed.
"""

from __future__ import annotations

import logging

REPORTED_ATTR = "benchwatch_reported"
REPORTED = {REPORTED_ATTR: True}


class DropReported(logging.Filter):
    """Drops records tagged REPORTED (for the terminal handler of a command that prints its summary)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not getattr(record, REPORTED_ATTR, False)

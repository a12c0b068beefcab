"""`python -m storage.views [--write]`: docs/query.md's table of views and tables, from their comments
(an in-memory database migrated by this code); `--write` puts it between docs/query.md's markers."""

from __future__ import annotations

import sys
from pathlib import Path

from storage import db, views
from storage.engine import duckdb

PAGE = Path(__file__).resolve().parents[2] / "docs" / "query.md"
BEGIN, END = "<!-- views:begin", "<!-- views:end -->"


def generated() -> str:
    con = duckdb.connect()
    try:
        db.migrate(con)
        return views.readme_table(con)
    finally:
        con.close()


def readme_block(text: str) -> str:
    """The table between docs/query.md's markers (the line after BEGIN up to END)."""
    start = text.index(BEGIN)
    return text[text.index("\n", start) + 1:text.index(END)].rstrip("\n")


def main(argv: list[str]) -> int:
    table = generated()
    if "--write" not in argv:
        print(table)
        return 0
    text = PAGE.read_text(encoding="utf-8")
    old = readme_block(text)
    PAGE.write_text(text.replace(old, table, 1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

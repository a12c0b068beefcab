"""The generated blocks of the docs: `<!-- figures:NAME -->` … `<!-- /figures:NAME -->` replaced by
what a generator (docs/figures.py, docs/disagreements.py, …) computed, or compared with it
(--check), and the reads and markdown tables those generators share.
"""

from __future__ import annotations

import difflib
import re
import sys
from pathlib import Path

import pandas as pd

BLOCK = re.compile(r"(<!-- figures:(?P<name>[\w-]+) -->)(?P<body>.*?)(<!-- /figures:(?P=name) -->)", re.S)


def q(db: Path, sql: str) -> pd.DataFrame:
    from storage.query import run_query
    from storage.store import open_store
    return run_query(sql, open_store(db), threads=1)


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def render(doc: str, blocks: dict[str, str]) -> tuple[str, list[str]]:
    """`doc` with each block replaced; the names of blocks the doc lacks."""
    seen = set()

    def sub(m: re.Match) -> str:
        name = m["name"]
        if name not in blocks:
            return m[0]
        seen.add(name)
        body = blocks[name]
        inline = "\n" not in m["body"] and "\n" not in body
        return m[1] + (body if inline else f"\n{body}\n") + m[4]

    return BLOCK.sub(sub, doc), sorted(set(blocks) - seen)


def rewrite(doc: Path, blocks: dict[str, str], *, check: bool, name: str, command: str) -> int:
    """Put `blocks` into `doc` (or, with `check`, say whether it is stale): the step every
    generator of a document's figures ends with. 0 written or current, 1 stale, 2 a block missing."""
    old = doc.read_text(encoding="utf-8")
    new, missing = render(old, blocks)
    if missing:
        print(f"{name}: {doc} lacks the block(s) {', '.join(missing)}", file=sys.stderr)
        return 2
    if check:
        if new != old:
            sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                                       str(doc), "regenerated"))
            print(f"{name}: {doc} differs from what the code produces now; run {command}", file=sys.stderr)
            return 1
        print(f"{name}: {doc} is up to date")
        return 0
    if new != old:
        doc.write_text(new, encoding="utf-8")
        print(f"{name}: rewrote {doc}")
    else:
        print(f"{name}: {doc} already up to date")
    return 0

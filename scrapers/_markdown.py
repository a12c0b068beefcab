"""Markdown pipe tables and footnotes (helper, not a source).

Used by the sources whose data is a README: `simple_evals` (openai/simple-evals results
table) and `knowledge_cutoffs` (one table per vendor). GitHub-flavoured tables are
tolerant of ragged rows (a row may have fewer or more cells than the header, with or
without the outer pipes), so rows are returned as split, and callers decide what a
short or long row means.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_SEPARATOR_CELL = re.compile(r"^\s*:?-+:?\s*$")
# An ATX heading's opening: up to three spaces, 1-6 `#`, white space. The title is the rest with its
# closing `#`s and white space stripped in code (`heading_title`), not by the pattern: adjacent
# quantifiers over one run of spaces (`(.*?)\s*#*\s*$`) backtrack cubically on a long hostile line.
_HEADING_OPEN = re.compile(r"\s{0,3}#{1,6}\s")
_FOOTNOTE_DEF = re.compile(r"^\s{0,3}\[\^([^\]]+)\]:\s?(.*)$")
_FOOTNOTE_REF = re.compile(r"\[\^([^\]]+)\]")
_LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]*)[^)]*\)")


@dataclass
class MarkdownTable:
    """One pipe table: its nearest preceding heading, header cells and body rows (raw cells)."""

    heading: str | None
    header: list[str]
    rows: list[list[str]] = field(default_factory=list)
    line: int = 0          # 1-based line number of the header row, for error messages


def heading_title(line: str) -> str | None:
    """The title of an ATX heading line ('### 2025-11-25 ##' -> '2025-11-25'), or None.

    Linear in the line's length: a pattern anchors the opening, the closing sequence is stripped
    with `str.rstrip` (trailing white space, then `#`s, then white space).
    """
    m = _HEADING_OPEN.match(line)
    if m is None:
        return None
    return line[m.end() - 1:].strip().rstrip("#").rstrip()


def split_row(line: str) -> list[str]:
    """'| a | b [^1] |c' -> ['a', 'b [^1]', 'c']: outer pipes optional, `\\|` is a literal pipe."""
    text = line.strip()
    if text.startswith("|"):
        text = text[1:]
    if text.endswith("|") and not text.endswith("\\|"):
        text = text[:-1]
    cells = re.split(r"(?<!\\)\|", text)
    return [c.replace("\\|", "|").strip() for c in cells]


def _is_separator(line: str) -> bool:
    cells = split_row(line)
    return "|" in line and bool(cells) and all(_SEPARATOR_CELL.match(c) for c in cells if c) and any(cells)


def tables(text: str) -> list[MarkdownTable]:
    """Every pipe table in a markdown document, in order.

    A table is a row of cells followed by a separator row (`|---|:--:|`); its body runs
    until the first line that is blank or has no pipe.
    """
    lines = text.splitlines()
    found: list[MarkdownTable] = []
    heading: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        title = heading_title(line)
        if title is not None:
            heading = title
        if "|" in line and i + 1 < len(lines) and _is_separator(lines[i + 1]) and not _is_separator(line):
            table = MarkdownTable(heading=heading, header=split_row(line), line=i + 1)
            i += 2
            while i < len(lines) and lines[i].strip() and "|" in lines[i]:
                table.rows.append(split_row(lines[i]))
                i += 1
            found.append(table)
            continue
        i += 1
    return found


def footnotes(text: str) -> dict[str, str]:
    """Footnote definitions `[^6]: text` -> {'6': 'text'}."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        m = _FOOTNOTE_DEF.match(line)
        if m:
            out[m.group(1).strip()] = m.group(2).strip()
    return out


def footnote_refs(cell: str) -> list[str]:
    """The footnote labels a cell cites: 'o3 [^9] [^10]' -> ['9', '10']."""
    return [m.strip() for m in _FOOTNOTE_REF.findall(cell or "")]


def link_urls(cell: str) -> list[str]:
    """Targets of the markdown links in a cell, plus bare http(s) URLs."""
    urls = [m.group(2) for m in _LINK.finditer(cell or "")]
    rest = _LINK.sub(" ", cell or "")
    urls += re.findall(r"https?://\S+", rest)
    return urls

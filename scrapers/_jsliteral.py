"""Data in JavaScript/TypeScript syntax, read as text and never run (helper, not a source).

Two leaderboards publish their table as source code: Terminal-Bench 1.0 (`data.ts`, a TS module
of object literals) and MathArena's first site (`var result_data = [...]`). This module reads
the literals of such a file with a small recursive-descent parser: objects (bare, quoted or
computed-free keys), arrays, strings ('…', "…", `…` without interpolation), numbers, `true`,
`false`, `null`, `undefined`, dotted identifiers (`IntegrationMethod.API` → ``"API"``, the
enum member's name) and spreads (`...rawLaunchLeaderboardData` → a `Spread`). `//` and
`/* */` comments outside strings are skipped, so a commented-out entry is never read.
Anything else (a function call, an arrow function) raises `ValueError` naming the offset.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

__all__ = ["Spread", "declarations", "parse_literal"]

_IDENT = re.compile(r"[A-Za-z_$][\w$]*(?:\s*\.\s*[A-Za-z_$][\w$]*)*")
_NUMBER = re.compile(r"-?(?:\d[\d_]*\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)")
# `const name: Type[] = [` / `var name = [` / `export const name = {`. Linear on hostile text: a
# declaration starts after `;` or a line break followed by blanks that are no line break (one start
# per run of empty lines, not one per line: `\s*` there made a run of newlines quadratic), and a type
# annotation is at most _TYPE_MAX characters (an unbounded `[^=\n]*` rescanned a long line from each
# `;const a:` on it).
_TYPE_MAX = 200
_DECL = re.compile(r"(?:^|[;\n])[^\S\n]*(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*"
                   rf"(?::[^=\n]{{0,{_TYPE_MAX}}})?=\s*(?=[\[{{])")


@dataclass(frozen=True)
class Spread:
    """`...name` inside an array or object literal: the named declaration's elements go here."""

    name: str


class _Parser:
    def __init__(self, text: str, pos: int = 0):
        self.text, self.pos = text, pos

    def fail(self, what: str) -> ValueError:
        return ValueError(f"{what} at offset {self.pos}: {self.text[self.pos:self.pos + 40]!r}")

    def skip(self) -> None:
        t = self.text
        while self.pos < len(t):
            c = t[self.pos]
            if c.isspace():
                self.pos += 1
            elif t.startswith("//", self.pos):
                end = t.find("\n", self.pos)
                self.pos = len(t) if end < 0 else end + 1
            elif t.startswith("/*", self.pos):
                end = t.find("*/", self.pos + 2)
                if end < 0:
                    raise self.fail("unterminated comment")
                self.pos = end + 2
            else:
                return

    def peek(self) -> str:
        self.skip()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def value(self) -> Any:
        c = self.peek()
        if c == "{":
            return self.obj()
        if c == "[":
            return self.arr()
        if c in "'\"`":
            return self.string()
        if self.text.startswith("...", self.pos):
            self.pos += 3
            self.skip()
            m = _IDENT.match(self.text, self.pos)
            if not m:
                raise self.fail("spread without a name")
            self.pos = m.end()
            return Spread(m.group(0))
        m = _NUMBER.match(self.text, self.pos)
        if m and m.group(0) not in ("-", "."):
            self.pos = m.end()
            return float(m.group(0).replace("_", "")) if any(ch in m.group(0) for ch in ".eE") else int(m.group(0).replace("_", ""))
        m = _IDENT.match(self.text, self.pos)
        if m:
            self.pos = m.end()
            word = re.sub(r"\s+", "", m.group(0))
            if self.peek() in "(=":   # a call or an arrow function: code, not data
                raise self.fail(f"code ({word}…) where a literal was expected")
            return {"true": True, "false": False, "null": None, "undefined": None}.get(word, word.rsplit(".", 1)[-1])
        raise self.fail("unexpected character")

    def string(self) -> str:
        quote, start = self.text[self.pos], self.pos
        self.pos += 1
        out = []
        while self.pos < len(self.text):
            c = self.text[self.pos]
            if c == "\\":
                nxt = self.text[self.pos + 1:self.pos + 2]
                if nxt == "u":
                    digits = self.text[self.pos + 2:self.pos + 6]
                    if not re.fullmatch(r"[0-9A-Fa-f]{4}", digits):
                        raise self.fail("bad \\u escape")
                    out.append(chr(int(digits, 16)))
                    self.pos += 6
                    continue
                out.append({"n": "\n", "t": "\t", "r": "\r"}.get(nxt, nxt))
                self.pos += 2
                continue
            if c == quote:
                self.pos += 1
                return "".join(out)
            if quote == "`" and self.text.startswith("${", self.pos):
                raise self.fail("template interpolation")
            out.append(c)
            self.pos += 1
        self.pos = start
        raise self.fail("unterminated string")

    def key(self) -> str:
        c = self.peek()
        if c in "'\"`":
            return self.string()
        m = re.compile(r"[\w$]+").match(self.text, self.pos)
        if not m:
            raise self.fail("object key expected")
        self.pos = m.end()
        return m.group(0)

    def expect(self, ch: str) -> None:
        if self.peek() != ch:
            raise self.fail(f"{ch!r} expected")
        self.pos += 1

    def obj(self) -> dict[str, Any]:
        self.expect("{")
        out: dict[str, Any] = {}
        while self.peek() != "}":
            if self.text.startswith("...", self.pos):
                spread = self.value()
                out.setdefault("...", []).append(spread)
            else:
                k = self.key()
                self.expect(":")
                out[k] = self.value()
            if self.peek() == ",":
                self.pos += 1
            elif self.peek() != "}":
                raise self.fail("',' or '}' expected")
        self.pos += 1
        return out

    def arr(self) -> list[Any]:
        self.expect("[")
        out: list[Any] = []
        while self.peek() != "]":
            out.append(self.value())
            if self.peek() == ",":
                self.pos += 1
            elif self.peek() != "]":
                raise self.fail("',' or ']' expected")
        self.pos += 1
        return out


def parse_literal(text: str, pos: int = 0) -> tuple[Any, int]:
    """The literal starting at `pos` (after blanks and comments) and the offset after it."""
    p = _Parser(text, pos)
    value = p.value()
    return value, p.pos


def declarations(text: str) -> dict[str, Any]:
    """Every `const|let|var NAME[: Type] = <array or object literal>` of a file, by name, in order.

    A declaration whose value is not a plain literal (`raw.map(...)`) is not a literal and is
    left out; one whose literal is malformed raises ValueError.
    """
    out: dict[str, Any] = {}
    for m in _DECL.finditer(_blank_comments(text)):
        value, _ = parse_literal(text, m.end())
        out[m.group(1)] = value
    return out


def _blank_comments(text: str) -> str:
    """`text` with comments (outside strings) replaced by spaces: offsets stay the same, and a
    commented-out declaration is not found."""
    out, i, n = list(text), 0, len(text)
    quote = ""
    while i < n:
        c = text[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if c == quote:
                quote = ""
        elif c in "'\"`":
            quote = c
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out[i:end] = " " * (end - i)
            i = end
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out[i:end] = [ch if ch == "\n" else " " for ch in text[i:end]]
            i = end
            continue
        i += 1
    return "".join(out)

"""The cells of LMArena's markdown boards (CherryHQ's daily scrape of the live leaderboard): which
column is which, the model and organisation in a model cell, the score and its interval, the page a
cell links. Pure text rules, kept beside scrapers/lmarena.py, whose parser reads a board with them."""

from __future__ import annotations

import re

from scrapers.normalize import clean_name, model_link

# Vendor-logo alt texts the markdown scrape glues before a model name ("Azurephi-4"), besides the
# row's own organisation (stripped too). An unknown one stays in the name (unresolved in status).
LOGO_PREFIXES = ("01.AI", "Anthropic", "Azure", "Cohere", "HuggingFace", "InternLM", "Meta", "Minimax",
                 "MoonshotAI", "Nvidia", "OpenChat", "RWKV", "Snowflake", "Stability", "Stepfun", "Tencent")
# the organisation glued after a model's name: capitalised words ('Google', 'AllenAI/UW', 'xAI'),
# or a number before one ('01 AI': `yi-34b-chat01 AI`)
_ORG_SUFFIX = re.compile(r"^(.*?[a-z0-9.)\]])(x?(?:\d+ )?[A-Z][\w.&/]*(?: [A-Z][\w.&/]*)*)$")
_SCORE_CELL = re.compile(r"(-?\d+(?:\.\d+)?)(?:\s*+\(?\s*+±\s*+(\d+(?:\.\d+)?)\s*+\)?)?(?:\s*+[^\W\d_]+)?")

# the page a markdown model cell links: `[name](url)` or the note after it, `name [<sup>1</sup>](url)`
_CELL_LINK = re.compile(r"\]\(\s*(https?://[^\s)]+)\s*\)")


def link_of(cell: str) -> str | None:
    """The page a markdown model cell gives for its model (the first link; None without one)."""
    m = _CELL_LINK.search(cell or "")
    return model_link(m[1]) if m else None


def find_column(header: list[str], *words: str) -> int | None:
    """The index of the first header cell naming one of `words` (a whole ASCII word, or a CJK substring)."""
    for i, h in enumerate(header):
        low = h.lower()
        if any((w in low) if not w.isascii() else re.search(rf"\b{w}\b", low) for w in words):
            return i
    return None


def model_name(cell: str, org: str) -> tuple[str | None, str]:
    """The model of a markdown cell: links, superscript notes, the `<Org> · <licence>` tail and a
    glued logo prefix removed; with the organisation (`org`, the row's organisation cell, else
    the one the tail names; '' when neither does)."""
    text = re.sub(r"\[\s*<sup>[^<]*</sup>\s*\]\([^)]*\)", "", cell or "")
    name = clean_name(text)
    if not name:
        return None, org
    if " · " in name:                       # 2026 layout: "<model><Org> · <licence>"
        name = name.split(" · ", 1)[0]
        known = next((p for p in sorted(LOGO_PREFIXES, key=len, reverse=True)
                      if name.endswith(p) and len(name) > len(p) and name[-len(p) - 1].isalnum()), None)
        m = None if known else _ORG_SUFFIX.match(name)
        if known:
            name, org = name[: -len(known)], org or known
        elif m:
            name, org = m[1], org or m[2]
    candidates = {p for p in LOGO_PREFIXES}
    if org:
        candidates |= {org, org.replace(" ", ""), org.split()[0]}
    for prefix in sorted(candidates, key=len, reverse=True):
        rest = name[len(prefix):]
        if name.startswith(prefix) and rest[:1].isalnum():    # 'Meta-Llama…' is a name, 'MetaMeta-…' a prefix
            name = rest
            break
    return name.strip() or None, org

def score_cells(score_cell: str, ci_cell: str) -> tuple[float | None, float | None, float | None]:
    """(score, ci_low, ci_high) from '1446' + '+5/-4', '1452' + '±4', '1504±10' or '1508 (±6)'."""
    # a trailing label ('1349Preliminary': few votes yet) is kept in raw_value only
    # stripped first and possessive (`\s*+`): adjacent `\s*` over one run of spaces backtrack
    # super-linearly on a long hostile cell
    m = _SCORE_CELL.fullmatch((score_cell or "").strip())
    if not m:
        return None, None, None
    score = float(m[1])
    if m[2] is not None:
        return score, score - float(m[2]), score + float(m[2])
    ci = (ci_cell or "").strip()
    pm = re.match(r"^±\s*(\d+(?:\.\d+)?)$", ci)
    if pm:
        return score, score - float(pm[1]), score + float(pm[1])
    updown = re.match(r"^\+\s*(\d+(?:\.\d+)?)\s*/\s*-\s*(\d+(?:\.\d+)?)$", ci)
    if updown:
        return score, score - float(updown[2]), score + float(updown[1])
    return score, None, None

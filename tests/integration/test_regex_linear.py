"""Scraped text never makes a pattern backtrack super-linearly (issue 55, item 4).

One changelog heading of `# a` + 4,000 spaces + `!` took 58 s in the heading pattern (cubic: three
adjacent quantifiers over the same spaces). Each case below feeds one hostile line of ~100k
characters to the real code path in a child process: linear matching finishes in well under a
second, the old patterns would run for hours, so a generous timeout separates the two without
timing normal speed.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.helpers import ROOT

N = 100_000
CASES = {
    "livebench_releases heading": (
        "from datetime import datetime, timezone\n"
        "import scrapers\n"
        f"text = b'### 2025-01-02\\n# a' + b' ' * {N} + b'!\\n'\n"
        "p = scrapers.get('livebench_releases').parse(text, fetched_at=datetime.now(timezone.utc))\n"
        "assert p.meta['releases'] == ['2025_01_02'], p.meta"),
    "markdown heading": (
        "from scrapers._markdown import tables\n"
        f"t = tables('# a' + '\\t' * {N} + '!\\n\\n| m | s |\\n|---|---|\\n| x | 1 |\\n')\n"
        "assert t[0].heading.startswith('a') and t[0].heading.endswith('!'), t[0].heading[:20]"),
    "markdown closing hashes": (
        "from scrapers._markdown import tables\n"
        f"t = tables('## Vendor ' + ' #' * {N} + ' x\\n| m | s |\\n|---|---|\\n| x | 1 |\\n')\n"
        "assert t[0].heading.startswith('Vendor'), t[0].heading[:20]"),
    "lmarena score cell": (
        "from scrapers._lmarena_cells import score_cells\n"
        f"assert score_cells('1' + ' ' * {N} + '\\x00', '') == (None, None, None)\n"
        f"assert score_cells('1' + ' ' * {N} + '±', '') == (None, None, None)"),
    "js declarations": (
        "from scrapers._jsliteral import declarations\n"
        f"assert declarations('\\n' * {N} + '!') == {{}}\n"
        f"assert declarations(';const a:' * {N // 10}) == {{}}\n"
        f"assert declarations('\\n\\nconst a = [1]\\n' + ' ' * {N}) == {{'a': [1]}}"),
    "redact url": (
        "from common.redact import redact\n"
        f"text = 'http://a:' + 'a.' * {N // 2} + '\\n!'\n"
        "assert redact(text) == text"),
    "naming rules": (
        "import scrapers\n"
        "from registry.identity import split_variant\n"
        "rules = type(scrapers.get('simple_evals')).NAMING\n"
        f"name = 'o3 ' + '(rerun' * {N // 6} + '!'\n"
        "assert split_variant(rules, name) == (name, '')\n"
        "assert split_variant(rules, 'o3 (rerun 2)') == ('o3', 'label=rerun 2')"),
    "identity model tag": (
        "from registry.identity import model_tags\n"
        f"model_tags('Model: a' + ' ' * {N} + '!')"),
}


def test_hostile_lines_match_in_linear_time():
    """All cases in one child (one interpreter start); each prints its name before it runs, so a
    timeout names the case that hung."""
    script = "\n".join(f"print({name!r}, flush=True)\n{code}" for name, code in sorted(CASES.items()))
    try:
        done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        hung = out.strip().splitlines()[-1] if out.strip() else "(before the first case)"
        pytest.fail(f"{hung}: a ~{N:,}-character hostile line did not finish in 60 s (super-linear backtracking)")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == [w for name in sorted(CASES) for w in name.split()]

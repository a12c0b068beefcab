"""Walking an exception's chain: the one definition the error classifiers share."""

from __future__ import annotations


def exception_chain(exc: BaseException, limit: int = 10) -> list[BaseException]:
    """`exc` and the exceptions it came from (`__cause__`, else `__context__`), at most `limit`, no
    exception twice (a cycle in the chain ends the walk)."""
    seen: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and cur not in seen and len(seen) < limit:
        seen.append(cur)
        cur = cur.__cause__ or cur.__context__
    return seen

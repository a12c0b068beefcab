"""Column-level cell conversion shared by the percent-valued sources (helper, not a source).

`scrapers.normalize` converts one cell and raises on garbage; a leaderboard column should
instead keep its good rows and leave the bad cell NULL, so `validate` rejects just that row
(with its raw value) rather than the whole snapshot failing.
"""

from __future__ import annotations

from typing import Any, Iterable

import pandas as pd

from scrapers.normalize import parse_number


def percent_cells(values: Iterable[Any], index: pd.Index | None = None) -> tuple[pd.Series, list[Any]]:
    """Percent cells (0-100, '62.1%', 'N/A', '-') as proportions, and the cells that were garbage.

    Missing tokens become NaN silently; unparseable cells become NaN and are returned so the
    caller can log them.
    """
    numbers, bad = number_cells(values, index)
    return numbers / 100.0, bad


def number_cells(values: Iterable[Any], index: pd.Index | None = None) -> tuple[pd.Series, list[Any]]:
    """Plain-number cells (Elo, 0-10 scores, dollars, 0-1 proportions) as floats, plus the garbage cells.

    Missing tokens become NaN silently; unparseable cells become NaN and are returned.
    """
    out: list[float] = []
    bad: list[Any] = []
    for v in values:
        try:
            x = parse_number(v)
        except (TypeError, ValueError):
            bad.append(v)
            x = None
        out.append(float("nan") if x is None else x)
    return pd.Series(out, index=index, dtype="float64"), bad


def raw_text(values: Iterable[Any]) -> list[str | None]:
    """Cells as the page had them, for `scores.raw_value` (None stays None)."""
    return [None if v is None else str(v) for v in values]


def stated_models(names: Iterable[Any], *, orgs: Iterable[Any] | None = None,
                  links: Iterable[Any] | None = None, also: Iterable[Any] | None = None) -> pd.DataFrame:
    """The `models` rows (model, org, link, provenance) of the models whose row states something
    about them: the page's organisation cell, else the owner of a Hugging Face model page it links
    (`normalize.hugging_face_repo`); and the page it gives for the model (`link`: a model card,
    repository, paper or announcement; `normalize.model_link`). A row that states none of these
    gives no row: the database learns a model's name only from what its source says (view
    learned_models), never from a guess. ``also``: another name the same row gives the same entry
    (AlpacaEval's results key beside its display name): stated with the same facts."""
    from scrapers.normalize import clean_name, hugging_face_repo, model_link
    names = list(names)
    org_cells = list(orgs) if orgs is not None else [None] * len(names)
    link_cells = list(links) if links is not None else [None] * len(names)
    also_cells = list(also) if also is not None else [None] * len(names)
    rows = []
    for name, org, link, other in zip(names, org_cells, link_cells, also_cells):
        stated = clean_name(org) if isinstance(org, str) else None
        if stated is None:
            repo = hugging_face_repo(link)
            stated = repo[0] if repo else None
        page = model_link(link)
        if stated is None and page is None:
            continue
        for model in (clean_name(name), clean_name(other) if isinstance(other, str) else None):
            if model is not None:
                rows.append({"model": model, "org": stated, "link": page, "provenance": "leaderboard"})
    return pd.DataFrame(rows, columns=["model", "org", "link", "provenance"]).drop_duplicates("model", ignore_index=True)

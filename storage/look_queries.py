"""The "where to look" queries an alert message shows (`benchwatch query "…"` under each section).

SQL text is storage's (it owns the schema and the views these name), so the alert rules ask
for a query here instead of writing one. Nothing here runs a query: each function returns the
text a person may paste, its values quoted as SQL string literals.
"""

from __future__ import annotations

from typing import Any

RECENT_FETCHES = "SELECT source, started_at, status, error FROM fetches ORDER BY started_at DESC LIMIT 20"
CORRECTIONS = "SELECT * FROM table_corrections ORDER BY table_id, corrected_at"


def sql_literal(text: Any) -> str:
    """A SQL string literal of `text` (quotes doubled)."""
    return "'" + str(text).replace("'", "''") + "'"


def saturation_series(benchmark: Any, *, scope: str = "", table_id: str = "", population: str = "",
                      k: float | None = None, alpha: float | None = None) -> str:
    """A table's latest S rows (the saturation view) for one scope, population, k and alpha; an
    empty scope or table_id, and the default population (`models`), are left out of the filter."""
    where = f"benchmark = {sql_literal(benchmark)}" + (f" AND scope = {sql_literal(scope)}" if scope else "")
    if table_id:
        where += f" AND table_id = {sql_literal(table_id)}"
    if population and population != "models":
        where += f" AND population = {sql_literal(population)}"
    for key, value in (("k", k), ("alpha", alpha)):
        if value is not None:
            where += f" AND {key} = {value:g}"
    return (f"SELECT as_of, s_index, bin, level, r_norm, se_delta, n_models FROM saturation WHERE {where} "
            "ORDER BY as_of DESC LIMIT 10")


def frontier(benchmark: Any, table_id: str = "") -> str:
    """A benchmark's frontier rows (of one table, when given), each table's in date order."""
    return f"SELECT * FROM frontier WHERE benchmark = {sql_literal(benchmark)}" + \
        (f" AND table_id = {sql_literal(table_id)}" if table_id else "") + " ORDER BY table_id, k, as_of"


def source_fetches(source: str) -> str:
    """A source's last fetch attempts."""
    return ("SELECT started_at, status, http_status, error FROM fetches "
            f"WHERE source = {sql_literal(source)} ORDER BY started_at DESC LIMIT 5")


def source_snapshots(source: str) -> str:
    """A source's last snapshots and why any was held."""
    return (f"SELECT id, observed_at, n_scores, status, held_reason FROM snapshots "
            f"WHERE source = {sql_literal(source)} ORDER BY id DESC LIMIT 5")


def suspicions(model: Any, benchmark: Any) -> str:
    """The contamination suspicions of one model on one benchmark."""
    return (f"SELECT * FROM contamination_suspicions WHERE model = {sql_literal(model)} "
            f"AND benchmark = {sql_literal(benchmark)} ORDER BY source, signal, detail")


def disagreements(benchmark: Any, model: Any) -> str:
    """Every pair of sources measuring one model on one benchmark as the last analysis judged it
    (table disagreements: the gap against the two tables' offset, its q, finding or not)."""
    return (f"SELECT * FROM disagreements WHERE benchmark = {sql_literal(benchmark)} "
            f"AND model = {sql_literal(model)} ORDER BY table_a, table_b, role")

"""Which way is better for each metric kind, without pandas (common.units re-exports it; the
views of storage/views read it when a read-only command checks that they are current)."""

from __future__ import annotations

# metric kind -> which way is better. The frontier of a lower-is-better kind is the running
# minimum (cheapest so far), not the maximum. The one place a direction is decided: every
# kind of common.units.METRIC_RANGES has one (tests/unit/test_trends.py checks it).
METRIC_DIRECTIONS: dict[str, str] = {
    "proportion": "higher",
    "elo": "higher",
    "score_10": "higher",
    "index": "higher",
    "cost_usd": "lower",
    "minutes": "higher",          # a longer time horizon is better
}


def lower_is_better(metric: str | None) -> bool:
    """True for a metric kind whose best value is its smallest (costs); unknown kinds are higher-is-better."""
    return METRIC_DIRECTIONS.get(metric or "", "higher") == "lower"

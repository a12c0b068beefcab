"""Units and cells that scrapers, the registry and the analysis share: metric kinds (their
ranges and directions), missing cells, numbers, percent vs proportion, leaderboard dates.

Scores are converted once, at parse time (scrapers): accuracy-like metrics become proportions
in [0, 1]; other metric kinds keep their own unit (see `METRIC_RANGES`). The registry checks
its chance/ceiling values against the same ranges; the analysis reads directions and dates
through the same functions (docs/architecture.md, "Units").
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timedelta, timezone
from typing import Any

import numpy as np
import pandas as pd

# metric kind -> closed range of valid values. A value outside is a rejected row, never clipped.
METRIC_RANGES: dict[str, tuple[float, float]] = {
    "proportion": (0.0, 1.0),     # accuracy, pass@1, % resolved, win rate: stored as a proportion
    "elo": (0.0, 4000.0),         # arena ratings
    "score_10": (0.0, 10.0),      # MT-bench style 1-10 judge scores
    "index": (-1000.0, 1000.0),   # composite indices such as Epoch's ECI
    "cost_usd": (0.0, 1e7),       # dollars
    "minutes": (0.0, 1e6),        # a task length in minutes (METR's time horizon); no saturation index
}

# metric kind -> which way is better: common/metrics.py (no pandas, so that storage/views reads it
# at a read-only command's start-up), re-exported here.
from common.metrics import METRIC_DIRECTIONS, lower_is_better  # noqa: E402,F401


MISSING_TOKENS = {"", "-", "—", "–", "n/a", "na", "none", "null", "nan", "unknown", "?", "tbd", "tba"}
FOOTNOTE = re.compile(r"\[\^?[^\]]*\]|\*+|†|‡|¹|²|³")


def is_missing(value: Any) -> bool:
    """An empty leaderboard cell: None, NaN, NA, NaT or a missing token ('-', 'n/a', 'TBD', …)
    (`common.jsonsafe.is_null` is the null scalar alone)."""
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    if value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, str) and value.strip().lower() in MISSING_TOKENS


def parse_number(value: Any) -> float | None:
    """'62.19%', ' 07.6 ', '88.7 [^3]', '**`92.4`**', 'n/a', 1.5 -> float or None. Raises on garbage."""
    if is_missing(value):
        return None
    if isinstance(value, bool):
        raise ValueError(f"not a number: {value!r}")
    if isinstance(value, (int, float)):
        return float(value)
    text = FOOTNOTE.sub("", str(value)).replace("%", "").replace(",", "").replace("`", "").strip()
    if text.lower() in MISSING_TOKENS:
        return None
    return float(text)


def percent_to_proportion(value: Any) -> float | None:
    """A percent cell (0-100) as a proportion; None if missing."""
    x = parse_number(value)
    return None if x is None else x / 100.0


class AmbiguousScale(ValueError):
    """A column whose valid values fit both percent (0-100) and proportion (0-1) readings."""


def percent_scale(values: pd.Series, *, signed: pd.Series | None = None) -> bool:
    """Whether an accuracy-like column is in percent (True) or proportion (False). Raises AmbiguousScale.

    Decided from the column's *valid* values only, so one bad cell (``inf``, ``101``, ``-3``),
    which is rejected later anyway, can never rescale the good ones:

    - candidates are finite values in [0, 100] (valid under the percent reading);
      among the cells written without '%': P = those in (1, 100] (valid only as percent),
      Q = those in (0, 1] (valid either way; 0 says nothing); S = the valid cells written
      with '%' (``signed``, a mask over ``values``: percent by their own sign);
    - P empty and Q empty -> percent when S, else proportion;
    - P empty -> proportion, unless S outnumbers Q (then the unsigned values are low percents):
      one '%' cell never rescales a column of proportions; the caller rejects such a cell
      (its unit contradicts the column's);
    - len(P) + len(S) >= len(Q) -> percent (the values <= 1 are low scorers, e.g. 0.4 %);
    - otherwise ambiguous: most values read as proportions but some only as percents
      (typos in a proportion column, or a percent column where most models score <= 1 %).
      The caller turns this into a ScrapeError naming source and column; declaring the
      metric ('proportion' or 'percent') removes the guess.
    """
    x = pd.Series(pd.to_numeric(values, errors="coerce")).astype("float64")
    ok = np.isfinite(x) & (x >= 0.0) & (x <= 100.0)
    sign = (pd.Series(False, index=x.index) if signed is None
            else signed.reindex(x.index, fill_value=False).fillna(False).astype(bool))
    plain = x[ok & ~sign]
    return percent_scale_from_counts(int((plain > 1.0).sum()), int(((plain > 0.0) & (plain <= 1.0)).sum()),
                                     signed=int((ok & sign).sum()))


def percent_scale_from_counts(above: int, below: int, *, signed: int = 0) -> bool:
    """`percent_scale` from its counts: among the valid cells written without '%', `above` in
    (1, 100] and `below` in (0, 1]; `signed` valid cells written with '%'.

    For callers that count in SQL (the CSV ingest) instead of holding the column."""
    if above == 0:
        if below == 0:
            return signed > 0
        return signed > below
    if above + signed >= below:
        return True
    raise AmbiguousScale(f"cannot tell percent from proportion: {above + signed} value(s) in (1, 100] "
                         f"or written with '%' (percent only) but {below} in (0, 1]")


def proportions_from(values: pd.Series, *, signed: pd.Series | None = None) -> pd.Series:
    """A column that may be proportions (0-1) or percents (0-100), as proportions (see `percent_scale`).

    Invalid cells keep their (scaled) value so that `validate` rejects them with the raw cell. In
    a column of proportions, a cell written with '%' (``signed``) contradicts the column's unit:
    it becomes NaN (rejected as a missing score) rather than rescaling the others.
    """
    x = pd.to_numeric(values, errors="coerce").astype("float64")
    if percent_scale(x, signed=signed):
        return x / 100.0
    if signed is not None:
        x = x.mask(signed.reindex(x.index, fill_value=False).fillna(False).astype(bool))
    return x


# The plausible range of a date a leaderboard states (a model's release or knowledge cutoff, an
# evaluation, an item): none of the boards predates 2015 (the oldest real date is a 2018 cutoff),
# and none can be later than now (an announced release: a few days). Outside it, a date is a typo
# or a placeholder (9999-12-31, 1970-01-01) and degrades to NULL with a warning.
DATE_MIN = datetime(2015, 1, 1)
DATE_MAX_AHEAD = timedelta(days=7)


def implausible_dates(values: pd.Series, now: datetime) -> pd.Series:
    """The present dates of `values` (naive UTC) outside [DATE_MIN, now + DATE_MAX_AHEAD]."""
    latest = pd.Timestamp(now).tz_convert("UTC").tz_localize(None) if pd.Timestamp(now).tzinfo else pd.Timestamp(now)
    dates = pd.to_datetime(values, errors="coerce")
    return (dates.notna() & ((dates < pd.Timestamp(DATE_MIN)) | (dates > latest + DATE_MAX_AHEAD))).astype(bool)


def date_range_text() -> str:
    """The plausible range as a reason says it."""
    return f"{DATE_MIN:%Y-%m-%d} to now + {DATE_MAX_AHEAD.days} days"


_MONTHS = {m: i for i, m in enumerate(
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], start=1)}


def parse_date(value: Any) -> datetime | None:
    """Dates as leaderboards write them -> naive UTC datetime (None if missing/unparseable).

    Handles epoch seconds/milliseconds, ISO dates and timestamps, 'YYYY/M', 'YYYY.MM',
    'YYYY.MM.DD', 'YYYY-MM', 'YYYY', 'Sep 2023', 'September 2023', 'early/mid/late/end of 2023'.
    Month-only dates resolve to the first of the month.
    """
    if is_missing(value):
        return None
    if isinstance(value, datetime):
        return value.astimezone(timezone.utc).replace(tzinfo=None) if value.tzinfo else value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = value / 1000.0 if value > 1e11 else float(value)
        return datetime.fromtimestamp(seconds, tz=timezone.utc).replace(tzinfo=None)
    text = FOOTNOTE.sub("", str(value)).strip()
    if not text or text.lower() in MISSING_TOKENS:
        return None
    m = re.fullmatch(r"(\d{4})[./-](\d{1,2})(?:[./-](\d{1,2}))?", text)
    if m:
        y, mo, d = int(m[1]), int(m[2]), int(m[3] or 1)
        try:
            return datetime(y, mo, d)
        except ValueError:
            return None
    m = re.fullmatch(r"(\d{4})", text)
    if m:
        return datetime(int(m[1]), 1, 1)
    m = re.fullmatch(r"(early|mid|late|end of)[- ](\d{4})", text, re.I)
    if m:
        return datetime(int(m[2]), {"early": 1, "mid": 6, "late": 10, "end of": 12}[m[1].lower()], 1)
    m = re.fullmatch(r"([A-Za-z]{3})[a-z]*\.?,? (\d{4})", text)
    if m and m[1].lower() in _MONTHS:
        return datetime(int(m[2]), _MONTHS[m[1].lower()], 1)
    try:
        ts = pd.Timestamp(text)
    except (ValueError, TypeError):
        return None
    if ts is pd.NaT:
        return None
    if ts.tzinfo is not None:
        ts = ts.tz_convert("UTC").tz_localize(None)
    return ts.to_pydatetime()

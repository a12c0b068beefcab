"""A small SVG writer for the HTML report's charts: time on x, a linear scale on y.

Why hand-written and not matplotlib: the report needs a handful of chart primitives (step
lines, bands, points, vertical markers, axes with date ticks); matplotlib would add a large
dependency and its import to every report, and its SVG
output carries ids and fonts we would have to post-process. This module has no dependency
beyond the standard library, is imported only when a report is rendered, and escapes every
piece of text it writes (labels and tooltips quote scraped model names).

Charts carry no `id` attributes (no gradients, no clip paths: values are clamped to the plot
area instead), so any number of charts can share one page without collisions.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from typing import Any, Callable, Iterable, Sequence

_EPOCH = datetime(1970, 1, 1)


def esc(text: object) -> str:
    """Text for SVG/HTML content or a double-quoted attribute: &, <, >, " and ' escaped."""
    return html.escape(str(text), quote=True)


def to_days(value: object) -> float:
    """A date/datetime/pandas Timestamp as days since 1970-01-01 (naive UTC; aware values converted)."""
    if hasattr(value, "to_pydatetime"):
        value = value.to_pydatetime()
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            value = value.astimezone(timezone.utc).replace(tzinfo=None)
        return (value - _EPOCH).total_seconds() / 86400.0
    if isinstance(value, date):
        return float((value - _EPOCH.date()).days)
    raise TypeError(f"[svg] not a date: {value!r}")


def from_days(x: float) -> datetime:
    return _EPOCH + timedelta(days=x)


def _time_ticks(x0: float, x1: float, max_ticks: int = 8) -> list[tuple[float, str]]:
    """Month-aligned ticks: every 1, 2, 3, 6, 12, 24, ... months, whichever gives <= max_ticks."""
    start, end = from_days(x0), from_days(x1)
    months_span = (end.year - start.year) * 12 + end.month - start.month + 1
    step = next((s for s in (1, 2, 3, 6, 12, 24, 60, 120) if months_span / s <= max_ticks), 240)
    m = start.year * 12 + start.month - 1          # months since year 0; 12 % step == 0 below a year
    if step < 12:
        m = -(-m // step) * step
    else:
        years = step // 12
        m = -(-(-(-m // 12)) // years) * years * 12   # January of the next year divisible by `years`
    ticks = []
    while True:
        d = datetime(m // 12, m % 12 + 1, 1)
        x = to_days(d)
        if x > x1:
            break
        if x >= x0:
            ticks.append((x, f"{d:%Y}" if step >= 12 else f"{d:%Y-%m}"))
        m += step
    return ticks


def _nice_ticks(y0: float, y1: float, n: int = 5) -> list[float]:
    span = y1 - y0
    if not span > 0:
        return [y0]
    raw = span / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(s * mag for s in (1, 2, 2.5, 5, 10) if s * mag >= raw)
    first = math.ceil(y0 / step - 1e-9) * step
    out, v = [], first
    while v <= y1 + 1e-9 * span:
        out.append(round(v, 10))
        v += step
    return out


@dataclass
class TimeChart:
    """One chart: add layers in drawing order, then `render()`. x values are dates, y floats.

    The caller fixes the ranges (`x_range` as dates, `y_range` as floats); anything outside is
    clamped to the plot area, so a forecast far in the future cannot draw over the legend.
    """

    x_range: tuple[object, object]
    y_range: tuple[float, float]
    title: str = ""
    y_format: Callable[[float], str] = lambda v: f"{v:g}"
    width: int = 720
    height: int = 240
    margin: tuple[int, int, int, int] = (28, 96, 30, 52)   # top, right, bottom, left
    # explicit x ticks (position, label) for an x that is not calendar time (a forecast horizon
    # drawn as days from 1970); None: month-aligned date ticks
    x_ticks: Sequence[tuple[object, str]] | None = None
    _layers: list[str] = field(default_factory=list)
    _legend: list[tuple[str, str, str]] = field(default_factory=list)
    _boxes: list[tuple[float, float, float, float]] = field(default_factory=list)   # placed labels

    def __post_init__(self) -> None:
        self._x0, self._x1 = to_days(self.x_range[0]), to_days(self.x_range[1])
        if not self._x1 > self._x0:
            self._x0, self._x1 = self._x0 - 15, self._x0 + 15
        y0, y1 = self.y_range
        if not y1 > y0:
            y0, y1 = y0 - 0.5, y0 + 0.5
        self._y0, self._y1 = float(y0), float(y1)

    # --- coordinates ---------------------------------------------------------------------------
    @property
    def _plot(self) -> tuple[float, float, float, float]:
        top, right, bottom, left = self.margin
        return left, top, self.width - right, self.height - bottom

    def px(self, x: object) -> float:
        left, _, right, _ = self._plot
        xd = min(max(to_days(x), self._x0), self._x1)
        return left + (xd - self._x0) / (self._x1 - self._x0) * (right - left)

    def py(self, y: float) -> float:
        _, top, _, bottom = self._plot
        yc = min(max(float(y), self._y0), self._y1)
        return bottom - (yc - self._y0) / (self._y1 - self._y0) * (bottom - top)

    # --- layers ----------------------------------------------------------------------------------
    def hband(self, y0: float, y1: float, fill: str, label: str = "", opacity: float = 0.25) -> None:
        """A horizontal band across the plot (e.g. a saturation bin), labelled at the right edge."""
        left, _, right, _ = self._plot
        top, bottom = self.py(max(y0, y1)), self.py(min(y0, y1))
        if bottom - top < 0.5:
            return
        self._layers.append(f'<rect x="{left:.1f}" y="{top:.1f}" width="{right - left:.1f}" '
                            f'height="{bottom - top:.1f}" fill="{esc(fill)}" fill-opacity="{opacity}"/>')
        if label and bottom - top >= 9:
            self._layers.append(f'<text x="{right + 4:.1f}" y="{(top + bottom) / 2 + 3.5:.1f}" '
                                f'class="band">{esc(label)}</text>')

    def vband(self, x0: object, x1: object, fill: str, opacity: float = 0.15, tooltip: str = "") -> None:
        """A vertical band (e.g. a forecast date's confidence interval)."""
        _, top, _, bottom = self._plot
        a, b = sorted((self.px(x0), self.px(x1)))
        tip = f"<title>{esc(tooltip)}</title>" if tooltip else ""
        self._layers.append(f'<rect x="{a:.1f}" y="{top:.1f}" width="{max(b - a, 1.0):.1f}" '
                            f'height="{bottom - top:.1f}" fill="{esc(fill)}" fill-opacity="{opacity}">{tip}</rect>')

    def hline(self, y: float, color: str, label: str = "", dash: str = "4 3") -> None:
        left, _, right, _ = self._plot
        yy = self.py(y)
        self._layers.append(f'<line x1="{left:.1f}" y1="{yy:.1f}" x2="{right:.1f}" y2="{yy:.1f}" '
                            f'stroke="{esc(color)}" stroke-dasharray="{esc(dash)}" stroke-width="1"/>')
        if label:
            self._layers.append(f'<text x="{right + 4:.1f}" y="{yy + 3.5:.1f}" class="band">{esc(label)}</text>')

    def vline(self, x: object, color: str, label: str = "", dash: str = "3 3", tooltip: str = "") -> None:
        _, top, _, bottom = self._plot
        xx = self.px(x)
        tip = f"<title>{esc(tooltip)}</title>" if tooltip else ""
        self._layers.append(f'<line x1="{xx:.1f}" y1="{top:.1f}" x2="{xx:.1f}" y2="{bottom:.1f}" '
                            f'stroke="{esc(color)}" stroke-dasharray="{esc(dash)}" stroke-width="1.2">{tip}</line>')
        if label:
            self._layers.append(f'<text x="{xx + 3:.1f}" y="{top + 10:.1f}" class="mark" '
                                f'fill="{esc(color)}">{esc(label)}</text>')

    def line(self, points: Sequence[tuple[object, float]], color: str, *, step: bool = False,
             width: float = 1.8, dash: str = "", tooltip: str = "", legend: str = "") -> None:
        """A polyline through (date, y) points; `step=True` holds each value until the next point."""
        pts = [(self.px(x), self.py(y)) for x, y in points if y is not None and not _nan(y)]
        if not pts:
            return
        if step:
            stepped = [pts[0]]
            for (xa, ya), (xb, yb) in zip(pts, pts[1:]):
                stepped += [(xb, ya), (xb, yb)]
            pts = stepped
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
        dash_attr = f' stroke-dasharray="{esc(dash)}"' if dash else ""
        tip = f"<title>{esc(tooltip)}</title>" if tooltip else ""
        self._layers.append(f'<polyline points="{path}" fill="none" stroke="{esc(color)}" '
                            f'stroke-width="{width}"{dash_attr} stroke-linejoin="round">{tip}</polyline>')
        if legend:
            self._legend.append((legend, color, dash))

    def area(self, xs: Sequence[object], lo: Sequence[float], hi: Sequence[float], fill: str,
             opacity: float = 0.2, tooltip: str = "", legend: str = "") -> None:
        """A band between two curves sampled at the same x values (e.g. a slope's CI fan)."""
        keep = [(x, a, b) for x, a, b in zip(xs, lo, hi) if not (_nan(a) or _nan(b))]
        if len(keep) < 2:
            return
        upper = [(self.px(x), self.py(b)) for x, _, b in keep]
        lower = [(self.px(x), self.py(a)) for x, a, _ in reversed(keep)]
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in upper + lower)
        tip = f"<title>{esc(tooltip)}</title>" if tooltip else ""
        self._layers.append(f'<polygon points="{path}" fill="{esc(fill)}" fill-opacity="{opacity}" '
                            f'stroke="none">{tip}</polygon>')
        if legend:
            self._legend.append((legend, fill, "area"))

    def dots(self, points: Iterable[tuple[object, float, str]], color: str, r: float = 2.8,
             hollow: bool = False, legend: str = "") -> None:
        """Points with a tooltip each: (date, y, tooltip text)."""
        fill = "white" if hollow else esc(color)
        for x, y, tip in points:
            if _nan(y):
                continue
            title = f"<title>{esc(tip)}</title>" if tip else ""
            self._layers.append(f'<circle cx="{self.px(x):.1f}" cy="{self.py(y):.1f}" r="{r}" fill="{fill}" '
                                f'stroke="{esc(color)}" stroke-width="1.2">{title}</circle>')
        if legend:
            self._legend.append((legend, color, "dot"))

    def errorbars(self, bars: Iterable[tuple[object, float, float, str]], color: str, cap: float = 2.5) -> None:
        """Vertical error bars (date, low, high, tooltip), e.g. mean ± 1.96 SE of a month's items."""
        for x, lo, hi, tip in bars:
            if _nan(lo) or _nan(hi):
                continue
            xx, y0, y1 = self.px(x), self.py(lo), self.py(hi)
            title = f"<title>{esc(tip)}</title>" if tip else ""
            self._layers.append(f'<path d="M{xx - cap:.1f},{y0:.1f}H{xx + cap:.1f}M{xx:.1f},{y0:.1f}V{y1:.1f}'
                                f'M{xx - cap:.1f},{y1:.1f}H{xx + cap:.1f}" stroke="{esc(color)}" '
                                f'stroke-width="1" fill="none" stroke-opacity="0.7">{title}</path>')

    def label(self, x: object, y: float, text: str, color: str = "#333", above: bool = True,
              max_chars: int = 30) -> bool:
        """A short text beside a point (e.g. the model that set a record), kept inside the plot and
        off the labels already placed (tried above, below, then further out; skipped when every
        place is taken, the point's tooltip still names it). True when it was placed."""
        if _nan(y):
            return False
        text = text if len(text) <= max_chars else text[: max_chars - 1] + "…"
        left, top, right, bottom = self._plot
        xx, yy = self.px(x), self.py(y)
        anchor = "end" if xx > (left + right) / 2 else "start"
        w = 6.8 * len(text)      # wide enough for 11-px system-ui text, capitals included
        bx0 = xx - 4 - w if anchor == "end" else xx + 4
        offsets = (-5, 12, -17, 24) if above else (12, -5, 24, -17)
        for dy in offsets:
            ty = min(max(yy + dy, top + 9), bottom - 3)
            box = (bx0, ty - 11, bx0 + w, ty + 4)   # an 11-px line's ascent and descent, as a browser draws it
            if all(box[2] < b[0] or box[0] > b[2] or box[3] < b[1] or box[1] > b[3] for b in self._boxes):
                self._boxes.append(box)
                dx = -4 if anchor == "end" else 4
                self._layers.append(f'<text x="{xx + dx:.1f}" y="{ty:.1f}" text-anchor="{anchor}" class="lbl" '
                                    f'fill="{esc(color)}">{esc(text)}</text>')
                return True
        return False

    # --- output -----------------------------------------------------------------------------------
    def _axes(self) -> list[str]:
        left, top, right, bottom = self._plot
        out = [f'<rect x="{left}" y="{top}" width="{right - left}" height="{bottom - top}" class="frame"/>']
        for v in _nice_ticks(self._y0, self._y1):
            y = self.py(v)
            out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" class="grid"/>')
            out.append(f'<text x="{left - 5}" y="{y + 3.5:.1f}" text-anchor="end" class="tick">'
                       f'{esc(self.y_format(v))}</text>')
        ticks = _time_ticks(self._x0, self._x1) if self.x_ticks is None else \
            [(to_days(x), label) for x, label in self.x_ticks]
        for x, label in ticks:
            xx = self.px(from_days(x))
            out.append(f'<line x1="{xx:.1f}" y1="{bottom}" x2="{xx:.1f}" y2="{bottom + 4}" class="axis"/>')
            out.append(f'<text x="{xx:.1f}" y="{bottom + 16}" text-anchor="middle" class="tick">{esc(label)}</text>')
        return out

    def _legend_rows(self) -> list[list[tuple[float, str, str, str]]]:
        """Legend entries laid out left to right, wrapped into rows that fit the chart's width."""
        left = float(self.margin[3])
        rows: list[list[tuple[float, str, str, str]]] = [[]]
        x = left
        for label, color, kind in self._legend:
            text = label if len(label) <= 48 else label[:47] + "…"
            w = 24 + 6.0 * len(text)
            if rows[-1] and x + w > self.width - 8:
                rows.append([])
                x = left
            rows[-1].append((x, text, color, kind))
            x += w
        return rows if rows[0] else []

    def _legend_items(self, rows: list[list[tuple[float, str, str, str]]]) -> list[str]:
        out = []
        for i, row in enumerate(rows):
            y = 12 + 15 * i
            for x, text, color, kind in row:
                if kind == "dot":
                    mark = f'<circle cx="{x + 6:.1f}" cy="{y}" r="3" fill="{esc(color)}"/>'
                elif kind == "area":
                    mark = f'<rect x="{x:.1f}" y="{y - 4}" width="12" height="8" fill="{esc(color)}" fill-opacity="0.35"/>'
                else:
                    dash_attr = f' stroke-dasharray="{esc(kind)}"' if kind else ""
                    mark = (f'<line x1="{x:.1f}" y1="{y}" x2="{x + 12:.1f}" y2="{y}" stroke="{esc(color)}" '
                            f'stroke-width="2"{dash_attr}/>')
                out.append(mark + f'<text x="{x + 16:.1f}" y="{y + 3.5}" class="legend">{esc(text)}</text>')
        return out

    def render(self) -> str:
        """The `<svg>` element (inline in HTML; no ids, no external references). A legend of
        several rows grows the image upwards: the plot is shifted down, its coordinates kept."""
        rows = self._legend_rows()
        extra = max(len(rows) - 1, 0) * 15
        label = esc(self.title) if self.title else "chart"
        plot = "".join(self._axes() + self._layers)
        if extra:
            plot = f'<g transform="translate(0,{extra})">{plot}</g>'
        height = self.height + extra
        return (f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {self.width} {height}" '
                f'width="{self.width}" height="{height}" role="img" aria-label="{label}">'
                f"<title>{label}</title>{plot}{''.join(self._legend_items(rows))}</svg>")


def _nan(v: Any) -> bool:
    try:
        return v is None or math.isnan(float(v))
    except (TypeError, ValueError):
        return True

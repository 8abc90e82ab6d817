"""Charts drawn on the server as inline SVG (no scripts, no external files)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

from ladder.web.security import visible


@dataclass(frozen=True)
class Point:
    """One point of a line chart: its value, an x-axis label and a tooltip."""

    value: float
    label: str
    tip: str


@dataclass(frozen=True)
class Band:
    """A horizontal band across a chart, from `low` to `high` around `centre`, with a tooltip."""

    centre: float
    low: float
    high: float
    tip: str


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values covering [low, high], about `count` of them."""
    if high <= low:
        low, high = low - 10, high + 10
    raw = (high - low) / max(1, count - 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    start = math.floor(low / step) * step
    ticks = []
    value = start
    while value < high + step * 0.999:
        ticks.append(round(value, 6))
        value += step
    return ticks


def _text(value: str) -> Markup:
    """Text for the SVG: escaped, and `visible` (titles and tips hold bot names)."""
    return escape(visible(value))


def _fmt(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def line_chart(
    points: Sequence[Point],
    *,
    width: int = 640,
    height: int = 220,
    title: str = "",
    baseline: float | None = None,
    band: Band | None = None,
    x_label: str = "",
    y_label: str = "",
) -> Markup:
    """A line chart of `points` left to right, with labelled axes and point tooltips, over
    a shaded `band` if given."""
    left, right, top, bottom = 66, 16, 14, 44
    inner_w, inner_h = width - left - right, height - top - bottom
    values = [p.value for p in points] + ([baseline] if baseline is not None else [])
    if band is not None:
        values += [band.low, band.high]
    ticks = nice_ticks(min(values), max(values)) if values else [0.0, 1.0]
    y_low, y_high = ticks[0], ticks[-1]

    def x(i: int) -> float:
        if len(points) == 1:
            return left + inner_w / 2
        return left + inner_w * i / (len(points) - 1)

    def y(v: float) -> float:
        return top + inner_h * (1 - (v - y_low) / (y_high - y_low))

    parts = [
        f'<svg class="chart" viewBox="0 0 {width} {height}" width="100%" '
        f'preserveAspectRatio="xMidYMid meet" role="img" aria-label="{_text(title)}">',
        f"<title>{_text(title)}</title>",
    ]
    for tick in ticks:
        ty = y(tick)
        parts.append(
            f'<line class="grid" x1="{left}" x2="{width - right}" y1="{ty:.1f}" y2="{ty:.1f}"/>'
            f'<text class="axis" x="{left - 6}" y="{ty + 4:.1f}" text-anchor="end">'
            f"{_fmt(tick)}</text>"
        )
    if band is not None:
        high, low, centre = y(band.high), y(band.low), y(band.centre)
        parts.append(
            f'<g class="band"><title>{_text(band.tip)}</title>'
            f'<rect class="band-area" x="{left}" y="{high:.1f}" width="{inner_w}" '
            f'height="{max(1.0, low - high):.1f}"/>'
            f'<line class="band-centre" x1="{left}" x2="{width - right}" y1="{centre:.1f}" '
            f'y2="{centre:.1f}"/></g>'
        )
    if baseline is not None:
        by = y(baseline)
        parts.append(
            f'<line class="baseline" x1="{left}" x2="{width - right}" y1="{by:.1f}" y2="{by:.1f}"/>'
        )
    label_every = max(1, math.ceil(len(points) / 8))
    for i, point in enumerate(points):
        if i % label_every == 0 or i == len(points) - 1:
            parts.append(
                f'<text class="axis" x="{x(i):.1f}" y="{height - 24}" text-anchor="middle">'
                f"{_text(point.label)}</text>"
            )
    parts.append(
        f'<text class="axis-title x-title" x="{left + inner_w / 2:.1f}" y="{height - 6}" '
        f'text-anchor="middle">{_text(x_label)}</text>'
        f'<text class="axis-title y-title" x="{-(top + inner_h / 2):.1f}" y="14" '
        f'transform="rotate(-90)" text-anchor="middle">{_text(y_label)}</text>'
    )
    if len(points) > 1:
        path = " ".join(
            f"{'M' if i == 0 else 'L'}{x(i):.1f},{y(p.value):.1f}" for i, p in enumerate(points)
        )
        parts.append(f'<path class="line" d="{path}"/>')
    for i, point in enumerate(points):
        parts.append(
            f'<circle class="dot" cx="{x(i):.1f}" cy="{y(point.value):.1f}" r="3.5">'
            f"<title>{_text(point.tip)}</title></circle>"
        )
    parts.append("</svg>")
    return Markup("".join(parts))


def interval_bar(
    rating: float,
    low: float,
    high: float,
    scale: tuple[float, float],
    *,
    width: int = 220,
    height: int = 18,
) -> Markup:
    """A 95% interval drawn as a bar from `low` to `high` with a dot at `rating`.

    `scale` is the (min, max) shared by every bar of a table, so bars line up.
    """
    lo, hi = scale
    span = hi - lo or 1.0

    def x(v: float) -> float:
        return 4 + (width - 8) * (v - lo) / span

    mid = height / 2
    tip = f"{rating:.0f} (95% interval {low:.0f} to {high:.0f})"
    return Markup(
        f'<svg class="ci" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'role="img" aria-label="{_text(tip)}"><title>{_text(tip)}</title>'
        f'<line class="ci-axis" x1="4" x2="{width - 4}" y1="{mid}" y2="{mid}"/>'
        f'<rect class="ci-bar" x="{x(low):.1f}" y="{mid - 4}" width="{max(1.0, x(high) - x(low)):.1f}" '
        f'height="8" rx="3"/>'
        f'<circle class="ci-dot" cx="{x(rating):.1f}" cy="{mid}" r="4"/></svg>'
    )


def interval_scale(lines: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """The shared (min, max) of a table's intervals, with a little margin."""
    if not lines:
        return (0.0, 1.0)
    low = min(lo for lo, _ in lines)
    high = max(hi for _, hi in lines)
    margin = (high - low) * 0.05 or 10.0
    return (low - margin, high + margin)

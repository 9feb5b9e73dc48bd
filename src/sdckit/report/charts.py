"""Bar and scatter charts drawn as inline SVG, for the pages every run writes.

The risk page (``sdckit analyze --html``) and the anonymization report draw only bar charts,
histograms and one scatter of checked transformations. With matplotlib those cost a 0.4 s
import and about 0.4 s per figure on a 2-core machine -- more than the whole anonymization
search -- so these two shapes are written as SVG elements directly (a few milliseconds, crisp
at any zoom, text selectable). Figures that need a plotting library (R-U maps, distributions
in evaluate/compare/mask) stay matplotlib figures; :class:`~sdckit.report.writer.Section`
takes both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from html import escape

import numpy as np

__all__ = ["BarChart", "ChartRow", "GroupedBarChart", "ScatterChart", "histogram_chart"]

_W, _H = 360.0, 230.0  # one panel, in SVG user units (pixels at 100%)
_LEFT, _RIGHT, _TOP, _BOTTOM = 48.0, 10.0, 24.0, 40.0
_FONT = 'font-family="sans-serif" font-size="10"'


def _nice_ticks(high: float, count: int = 4) -> np.ndarray:
    """Round tick values from 0 to at least ``high`` (1, 2, 2.5 or 5 times a power of 10)."""
    if not np.isfinite(high) or high <= 0:
        return np.array([0.0, 1.0])
    raw = high / count
    power = 10.0 ** np.floor(np.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    return np.arange(0.0, high + step * 0.999, step)


def _fmt(v: float) -> str:
    return f"{v:g}" if abs(v) < 1e5 else f"{v:.2g}"


def _frame(title: str, xlabel: str, ylabel: str, y_ticks: np.ndarray, y_max: float) -> list[str]:
    """Title, axis labels, the y axis with its ticks and grid lines."""
    plot_h = _H - _TOP - _BOTTOM
    out = [
        f'<text x="{_W / 2}" y="14" text-anchor="middle" {_FONT} font-weight="bold">'
        f"{escape(title)}</text>",
        f'<text x="{(_LEFT + _W - _RIGHT) / 2}" y="{_H - 6}" text-anchor="middle" {_FONT}>'
        f"{escape(xlabel)}</text>",
        f'<text transform="translate(11 {_TOP + plot_h / 2}) rotate(-90)" '
        f'text-anchor="middle" {_FONT}>{escape(ylabel)}</text>',
    ]
    for t in y_ticks:
        y = _TOP + plot_h * (1 - t / y_max)
        out.append(
            f'<line x1="{_LEFT}" x2="{_W - _RIGHT}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e4e4e4"/>'
            f'<text x="{_LEFT - 4}" y="{y + 3:.1f}" text-anchor="end" {_FONT}>{_fmt(t)}</text>'
        )
    out.append(
        f'<line x1="{_LEFT}" x2="{_W - _RIGHT}" y1="{_H - _BOTTOM}" y2="{_H - _BOTTOM}" '
        'stroke="#555"/>'
    )
    return out


def _svg(panels: Sequence[list[str]], label: str) -> str:
    width = _W * len(panels)
    body = "".join(
        f'<g transform="translate({i * _W} 0)">{"".join(p)}</g>' for i, p in enumerate(panels)
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="{escape(label)}" '
        f'viewBox="0 0 {width:g} {_H:g}" width="{width:g}" height="{_H:g}">'
        f'<rect width="100%" height="100%" fill="#fff"/>{body}</svg>'
    )


@dataclass(frozen=True)
class BarChart:
    """Bars of ``values`` over category ``labels``; ``marker`` (a position in bar units, 0 =
    left edge of the first bar) draws a dashed vertical line, e.g. a threshold; only every
    ``label_every``-th label is written under the axis (under the bar's middle, or its left
    edge with ``labels_at_edges``)."""

    title: str
    xlabel: str
    ylabel: str
    labels: Sequence[str]
    values: Sequence[float]
    color: str = "#3d6fb6"
    marker: float | None = None
    label_every: int = 1
    labels_at_edges: bool = False  # a histogram's labels are its bin edges

    def panel(self) -> list[str]:
        """The SVG elements of this chart as one panel."""
        values = np.asarray(self.values, dtype=float)
        ticks = _nice_ticks(float(values.max()) if values.size else 0.0)
        y_max = float(ticks[-1]) or 1.0
        out = _frame(self.title, self.xlabel, self.ylabel, ticks, y_max)
        plot_w, plot_h = _W - _LEFT - _RIGHT, _H - _TOP - _BOTTOM
        slot = plot_w / max(len(values), 1)
        for i, (label, v) in enumerate(zip(self.labels, values, strict=True)):
            h = plot_h * v / y_max
            x = _LEFT + i * slot
            out.append(
                f'<rect x="{x + slot * 0.1:.1f}" y="{_H - _BOTTOM - h:.1f}" '
                f'width="{slot * 0.8:.1f}" height="{h:.1f}" fill="{self.color}">'
                f"<title>{escape(str(label))}: {_fmt(round(float(v), 4))}</title></rect>"
            )
            if i % max(self.label_every, 1) == 0:
                lx = x if self.labels_at_edges else x + slot / 2
                out.append(
                    f'<text x="{lx:.1f}" y="{_H - _BOTTOM + 12}" text-anchor="middle" '
                    f"{_FONT}>{escape(str(label))}</text>"
                )
        if self.marker is not None:
            x = _LEFT + self.marker * slot
            out.append(
                f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{_TOP}" y2="{_H - _BOTTOM}" stroke="#000" '
                'stroke-dasharray="4 3"/>'
            )
        return out

    def to_svg(self) -> str:
        """The chart as one ``<svg>`` element."""
        return _svg([self.panel()], self.title)


@dataclass(frozen=True)
class GroupedBarChart:
    """Bars of several series side by side over category ``labels`` (``series``: a legend
    label -> one value per category; ``colors`` in the series' order), with a legend; e.g. an
    original and a synthetic distribution. Labels are cut to ``label_chars`` characters and
    written slanted."""

    title: str
    ylabel: str
    labels: Sequence[str]
    series: Mapping[str, Sequence[float] | np.ndarray]
    colors: Sequence[str] = ("#3d6fb6", "#e08a2c")
    label_chars: int = 12

    def panel(self) -> list[str]:
        """The SVG elements of this chart as one panel."""
        values = [np.asarray(v, dtype=float) for v in self.series.values()]
        top = max((float(np.nanmax(v)) for v in values if v.size), default=0.0)
        ticks = _nice_ticks(top)
        y_max = float(ticks[-1]) or 1.0
        out = _frame(self.title, "", self.ylabel, ticks, y_max)
        plot_w, plot_h = _W - _LEFT - _RIGHT, _H - _TOP - _BOTTOM
        slot = plot_w / max(len(self.labels), 1)
        width = slot * 0.8 / max(len(values), 1)
        for k, (name, v) in enumerate(zip(self.series, values, strict=True)):
            color = self.colors[k % len(self.colors)]
            for i, (label, value) in enumerate(zip(self.labels, v, strict=True)):
                h = plot_h * (0.0 if np.isnan(value) else value) / y_max
                x = _LEFT + i * slot + slot * 0.1 + k * width
                out.append(
                    f'<rect x="{x:.1f}" y="{_H - _BOTTOM - h:.1f}" width="{width:.1f}" '
                    f'height="{h:.1f}" fill="{color}"><title>{escape(str(label))}, '
                    f"{escape(name)}: {_fmt(round(float(value), 4))}</title></rect>"
                )
            out.append(
                f'<rect x="{_W - _RIGHT - 80}" y="{_TOP + 2 + 12 * k}" width="8" height="8" '
                f'fill="{color}"/><text x="{_W - _RIGHT - 68}" y="{_TOP + 10 + 12 * k}" '
                f"{_FONT}>{escape(name)}</text>"
            )
        for i, label in enumerate(self.labels):
            x, y = _LEFT + (i + 0.5) * slot, _H - _BOTTOM + 8
            out.append(
                f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="end" font-size="7" '
                f'font-family="sans-serif" transform="rotate(-45 {x:.1f} {y:.1f})">'
                f"{escape(str(label)[: self.label_chars])}</text>"
            )
        return out

    def to_svg(self) -> str:
        """The chart as one ``<svg>`` element."""
        return _svg([self.panel()], self.title)


def histogram_chart(
    values: np.ndarray,
    bins: np.ndarray,
    title: str,
    xlabel: str,
    marker: float | None = None,
    weights: np.ndarray | None = None,
) -> BarChart:
    """A histogram of ``values`` over the edges ``bins`` as a :class:`BarChart` of % of
    values per bin (``marker``: a value on the x axis to mark with a dashed line; ``weights``:
    how many records each value stands for, e.g. class sizes)."""
    counts, edges = np.histogram(values, bins=bins, weights=weights)
    total = len(values) if weights is None else float(np.sum(weights))
    share = counts / max(total, 1) * 100
    position = None
    if marker is not None:
        position = float(np.interp(marker, edges, np.arange(len(edges))))
    return BarChart(
        title,
        xlabel,
        "% of records",
        [f"{e:g}" for e in edges[:-1]],
        share.tolist(),
        color="#c0504d",
        marker=position,
        label_every=max(len(share) // 5, 1),
        labels_at_edges=True,
    )


@dataclass(frozen=True)
class ScatterChart:
    """Points ``(x, y)`` in groups: ``groups`` maps a legend label to ``(x, y, color, size)``."""

    title: str
    xlabel: str
    ylabel: str
    groups: dict[str, tuple[Sequence[float], Sequence[float], str, float]] = field(
        default_factory=dict
    )

    def to_svg(self) -> str:
        """The chart as one ``<svg>`` element (with a legend)."""
        xs = [np.asarray(g[0], float) for g in self.groups.values()]
        ys = [np.asarray(g[1], float) for g in self.groups.values()]
        all_x = np.concatenate(xs) if xs else np.zeros(0)
        all_y = np.concatenate(ys) if ys else np.zeros(0)
        all_y = all_y[np.isfinite(all_y)]
        ticks = _nice_ticks(float(all_y.max()) if all_y.size else 0.0)
        y_max = float(ticks[-1]) or 1.0
        out = _frame(self.title, self.xlabel, self.ylabel, ticks, y_max)
        plot_w, plot_h = _W - _LEFT - _RIGHT, _H - _TOP - _BOTTOM
        x_lo = float(np.floor(all_x.min())) if all_x.size else 0.0
        x_hi = float(np.ceil(all_x.max())) if all_x.size else 1.0
        span = max(x_hi - x_lo, 1.0)

        def px(v: np.ndarray) -> np.ndarray:
            return _LEFT + 6 + (v - x_lo) / span * (plot_w - 12)

        step = max(int(np.ceil(span / 8)), 1)
        for t in range(int(x_lo), int(x_hi) + 1, step):
            out.append(
                f'<text x="{px(np.array(t)):.1f}" y="{_H - _BOTTOM + 12}" text-anchor="middle" '
                f"{_FONT}>{t}</text>"
            )
        legend_y = _TOP + 4
        out.append(
            f'<rect x="{_W - _RIGHT - 116}" y="{_TOP - 4}" width="114" '
            f'height="{12 * len(self.groups) + 4}" fill="#fff" fill-opacity="0.85"/>'
        )
        for (label, (_, _, color, size)), x, y in zip(self.groups.items(), xs, ys, strict=True):
            ok = np.isfinite(y)
            cy = _TOP + plot_h * (1 - y[ok] / y_max)
            out.extend(
                f'<circle cx="{a:.1f}" cy="{b:.1f}" r="{size:g}" fill="{color}"/>'
                for a, b in zip(px(x[ok]), cy, strict=True)
            )
            out.append(
                f'<circle cx="{_W - _RIGHT - 110}" cy="{legend_y}" r="3" fill="{color}"/>'
                f'<text x="{_W - _RIGHT - 104}" y="{legend_y + 3}" {_FONT}>{escape(label)}</text>'
            )
            legend_y += 12
        return _svg([out], self.title)


@dataclass(frozen=True)
class ChartRow:
    """Bar charts side by side, as the panels of one ``<svg>`` element."""

    charts: Sequence[BarChart | GroupedBarChart]
    label: str

    def to_svg(self) -> str:
        """The row as one ``<svg>`` element."""
        return _svg([c.panel() for c in self.charts], self.label)

"""Plotly figures of the web app, built as plain JSON documents (``{"data", "layout"}``).

The browser draws them with plotly.js (served from the ``plotly`` package of the ``ui``
extra); the server only builds the documents, so no plotting library runs in it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = [
    "bar_figure",
    "class_size_figure",
    "comparison_bars",
    "ru_map_figure",
    "solution_space_figure",
    "threshold_figure",
]

_BLUE = "#3d6fb6"
_GREY = "#b5b5b5"
_RED = "#c0504d"


def _layout(title: str, x: str, y: str, **extra: Any) -> dict[str, Any]:
    return {
        "title": {"text": title, "font": {"size": 14}},
        "xaxis": {"title": {"text": x}},
        "yaxis": {"title": {"text": y}},
        "margin": {"l": 60, "r": 20, "t": 40, "b": 50},
        "height": 320,
        **extra,
    }


def bar_figure(labels: Sequence[Any], values: Sequence[float], title: str, x: str, y: str):
    """One bar trace."""
    return {
        "data": [
            {
                "type": "bar",
                "x": [str(v) for v in labels],
                "y": list(values),
                "marker": {"color": _BLUE},
            }
        ],
        "layout": _layout(title, x, y),
    }


def class_size_figure(sizes: np.ndarray, counts: np.ndarray) -> dict[str, Any]:
    """Records per equivalence-class size (how many records sit in classes of size 1, 2, ...);
    sizes above 50 are pooled into one bar."""
    sizes = np.asarray(sizes)
    records = np.asarray(counts) * sizes
    capped = np.minimum(sizes, 51)
    labels = [str(s) if s <= 50 else ">50" for s in sorted(set(capped.tolist()))]
    values = [int(records[capped == s].sum()) for s in sorted(set(capped.tolist()))]
    return bar_figure(labels, values, "Records by equivalence-class size", "class size", "records")


def threshold_figure(class_risk: np.ndarray, class_records: np.ndarray) -> dict[str, Any]:
    """Share of records whose prosecutor risk exceeds a threshold, for thresholds 0..1."""
    thresholds = np.linspace(0.0, 1.0, 101)
    order = np.argsort(class_risk)
    risk = np.asarray(class_risk, dtype=float)[order]
    recs = np.asarray(class_records, dtype=float)[order]
    total = recs.sum() or 1.0
    above = recs[::-1].cumsum()[::-1]  # records with risk >= risk[i]
    idx = np.searchsorted(risk, thresholds, side="right")
    share = np.append(above, 0.0)[idx] / total
    return {
        "data": [
            {
                "type": "scatter",
                "mode": "lines",
                "x": thresholds.tolist(),
                "y": share.tolist(),
                "line": {"color": _BLUE, "shape": "hv"},
            }
        ],
        "layout": _layout(
            "Records at risk by threshold",
            "prosecutor risk threshold",
            "share of records above",
            yaxis={"title": {"text": "share above"}, "range": [0, 1]},
        ),
    }


def solution_space_figure(space: dict[str, Any]) -> dict[str, Any]:
    """The checked transformations of an optimal search: sum of levels vs metric, those
    satisfying the models in blue, the others (their lower bound) in grey, the optimum red.
    Each point carries its levels (``customdata``) for the click that opens its release."""
    nodes = space["nodes"]
    chosen = list(space.get("chosen") or [])
    traces = []
    for label, colour, keep in (
        ("fails the models (lower bound)", _GREY, lambda n: not n["satisfied"]),
        ("satisfies the models", _BLUE, lambda n: n["satisfied"] and n["levels"] != chosen),
        ("chosen optimum", _RED, lambda n: n["satisfied"] and n["levels"] == chosen),
    ):
        picked = [n for n in nodes if keep(n)]
        if not picked:
            continue
        traces.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": label,
                "x": [sum(n["levels"]) for n in picked],
                "y": [
                    n["metric"] if n["metric"] is not None else n.get("lower_bound") for n in picked
                ],
                "customdata": [",".join(map(str, n["levels"])) for n in picked],
                "text": ["levels " + ",".join(map(str, n["levels"])) for n in picked],
                "marker": {"color": colour, "size": 11 if colour == _RED else 7},
                "hovertemplate": "%{text}<br>metric %{y}<extra></extra>",
            }
        )
    return {
        "data": traces,
        "layout": _layout(
            "Solution space (click a point to see its release)",
            "sum of generalization levels",
            str(space.get("metric") or "metric"),
            height=360,
        ),
    }


def ru_map_figure(
    rows: Sequence[dict[str, Any]], limits: dict[str, float] | None = None
) -> dict[str, Any]:
    """The R-U map of a comparison: disclosure risk against information loss per run, and
    the steward's ceilings (``limits``: ``max_risk``, ``max_loss``) as red lines."""
    shapes = []
    for key, axis in (("max_risk", "y"), ("max_loss", "x")):
        if limits and limits.get(key) is not None:
            line: dict[str, Any] = {"type": "line", "line": {"color": "#c0392b", "width": 2}}
            if axis == "y":  # DR is on the y axis here
                line |= {"xref": "paper", "x0": 0, "x1": 1, "y0": limits[key], "y1": limits[key]}
            else:
                line |= {"yref": "paper", "y0": 0, "y1": 1, "x0": limits[key], "x1": limits[key]}
            shapes.append(line)
    figure: dict[str, Any] = {
        "data": [
            {
                "type": "scatter",
                "mode": "markers+text",
                "x": [r["il"] for r in rows],
                "y": [r["dr"] for r in rows],
                "text": [r["label"] for r in rows],
                "textposition": "top center",
                "marker": {"color": _BLUE, "size": 10},
                "hovertemplate": "%{text}<br>IL %{x:.2f}<br>DR %{y:.2f}<extra></extra>",
            }
        ],
        "layout": _layout(
            "R-U map (lower left is better)",
            "information loss (IL)",
            "disclosure risk (DR)",
            height=420,
        ),
    }
    if shapes:
        figure["layout"]["shapes"] = shapes
    return figure


def comparison_bars(
    original: tuple[list[str], list[float]], released: tuple[list[str], list[float]], column: str
) -> dict[str, Any]:
    """Before/after distribution of one attribute (two bar traces, shares of records)."""
    return {
        "data": [
            {
                "type": "bar",
                "name": "original",
                "x": original[0],
                "y": original[1],
                "marker": {"color": _GREY},
            },
            {
                "type": "bar",
                "name": "released",
                "x": released[0],
                "y": released[1],
                "marker": {"color": _BLUE},
            },
        ],
        "layout": _layout(
            f"{column}: before and after", column, "share of records", barmode="group"
        ),
    }

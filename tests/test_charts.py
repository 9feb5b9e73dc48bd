"""The inline SVG charts of the reports: values drawn to scale, text escaped, no matplotlib."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np

from sdckit.report.charts import BarChart, ChartRow, ScatterChart, histogram_chart


def _bars(svg: str) -> list[float]:
    return [
        float(h)
        for h in re.findall(r'<rect x="[^"]+" y="[^"]+" width="[^"]+" height="([^"]+)"', svg)
    ]


def test_bar_heights_are_proportional_and_axis_is_round():
    svg = BarChart("t", "x", "y", ["a", "b", "c"], [10, 20, 40]).to_svg()
    heights = _bars(svg)
    assert heights[1] == 2 * heights[0] and heights[2] == 4 * heights[0]
    # the y axis runs to 40 (ticks 0, 10, 20, 30, 40): the largest bar fills the plot height
    assert ">40</text>" in svg and heights[2] == 230 - 24 - 40


def test_text_is_escaped():
    svg = BarChart("<script>", "a&b", "y", ["<x>"], [1]).to_svg()
    assert "<script>" not in svg and "&lt;script&gt;" in svg and "a&amp;b" in svg


def test_histogram_shares_and_threshold_marker():
    chart = histogram_chart(np.array([0.05, 0.05, 0.5, 1.0]), np.linspace(0, 1, 11), "h", "risk",
                            marker=0.2)  # fmt: skip
    assert list(chart.values) == [50, 0, 0, 0, 0, 25, 0, 0, 0, 25]
    assert chart.marker == 2.0  # the left edge of the third bin
    assert "stroke-dasharray" in chart.to_svg()


def test_row_and_scatter_render_one_svg_each():
    row = ChartRow([BarChart("a", "x", "y", ["1"], [1]), BarChart("b", "x", "y", ["1"], [2])], "r")
    assert row.to_svg().count("<svg") == 1 and 'viewBox="0 0 720 230"' in row.to_svg()
    sc = ScatterChart("s", "x", "y", {"ok": ([1, 2], [0.5, 1.0], "#000", 2.0)}).to_svg()
    assert sc.count("<circle") == 3  # two points and the legend mark


def test_risk_page_draws_without_matplotlib(tmp_path):
    data = tmp_path / "d.csv"
    data.write_text("a,b\n1,x\n1,x\n2,y\n3,z\n")
    script = (
        "import sys; from sdckit.cli import main; "
        f"sys.argv = ['sdckit', 'analyze', r'{data}', '--qi', 'a,b', '--html', "
        f"r'{tmp_path / 'r.html'}', '-q']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('MPL', 'matplotlib' in sys.modules)"
    )
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert "MPL False" in res.stdout, res.stderr[-500:]
    html = (tmp_path / "r.html").read_text()
    assert html.count("<svg") == 1 and "Per-record re-identification risk" in html


def test_grouped_bars_side_by_side_with_a_legend():
    from sdckit.report.charts import GroupedBarChart

    chart = GroupedBarChart(
        "age", "% of records", ["<20", "20-40"], {"original": [10, 40], "synthetic": [20, 30]}
    )
    svg = chart.to_svg()
    heights = _bars(svg)
    # one bar per (series, category), then a legend swatch per series (8 high)
    bars = [h for h in heights if h != 8.0]
    assert bars == [heights[0], heights[1], heights[3], heights[4]]
    assert bars[1] == 4 * bars[0] and bars[2] == 2 * bars[0] and bars[3] == 3 * bars[0]
    assert svg.count(">original</text>") == 1 and svg.count(">synthetic</text>") == 1
    assert "&lt;20" in svg and svg.count("<svg") == 1
    row = ChartRow([chart, chart], "two").to_svg()
    assert row.count("<svg") == 1 and row.count(">age</text>") == 2

"""The one report writer: a :class:`Report` of :class:`Section` objects rendered to HTML.

Every command (analyze, anonymize, mask, evaluate, compare) builds a ``Report`` and calls
:meth:`Report.write_html`; machine-readable output goes through :func:`write_json`. Figures
are charts drawn as inline SVG (:mod:`sdckit.report.charts`) or matplotlib figures embedded
as PNG (base64), so the page is one self-contained file a person can open and read without
the JSON. Writes are atomic.
"""

from __future__ import annotations

import base64
import datetime as _dt
import functools
import io
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from jinja2 import Environment, FileSystemBytecodeCache, PackageLoader, Template, select_autoescape
from jinja2.bccache import Bucket

from sdckit.core.io import current_run_id, write_text
from sdckit.core.spec import json_ready
from sdckit.core.uri import Target


def write_json(path: Target, document: Mapping[str, Any]) -> Target:
    """Atomically write ``document`` as indented JSON.

    Inside an output set (:func:`sdckit.core.io.output_set`) a mapping gets the set's
    ``run_id``, which the HTML report of the same run shows too.
    """
    run_id = current_run_id()
    if run_id is not None and isinstance(document, Mapping) and "run_id" not in document:
        document = {**document, "run_id": run_id}
    return write_text(path, json.dumps(json_ready(document), indent=2, ensure_ascii=False) + "\n")


def figure_png(fig) -> str:
    """A matplotlib figure as a base64 PNG string (the figure is closed)."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def na(value: Any) -> Any:
    """A value for a report table: ``"n/a"`` for a measure that does not apply (None)."""
    return "n/a" if value is None else value


def _fmt(value: Any) -> str:
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if math.isnan(v):
            return "–"
        if v != 0 and (abs(v) < 1e-3 or abs(v) >= 1e7):
            return f"{v:.4g}"
        return f"{v:,.6f}".rstrip("0").rstrip(".") if not v.is_integer() else f"{int(v):,}"
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return f"{int(value):,}"
    if isinstance(value, (list, tuple)):
        return ", ".join(_fmt(v) for v in value)
    if isinstance(value, Mapping):
        return "; ".join(f"{k}: {_fmt(v)}" for k, v in value.items())
    return str(value)


@dataclass
class Section:
    """One part of a report: a heading, prose, a key-value table, a table and/or figures."""

    title: str
    text: str | None = None
    facts: Mapping[str, Any] | None = None
    table: pd.DataFrame | Sequence[Mapping[str, Any]] | None = None
    table_limit: int = 200
    #: matplotlib figures (embedded as PNG) or charts of :mod:`sdckit.report.charts`
    #: (anything with ``to_svg()``, embedded as inline SVG)
    figures: list[Any] = field(default_factory=list)
    note: str | None = None
    #: a CSS class per table cell (rows x columns; "" for none), e.g. a cell's status
    cell_classes: Sequence[Sequence[str]] | None = None

    def render_context(self) -> dict[str, Any]:
        """Strings ready for the template."""
        table = None
        truncated = 0
        if self.table is not None:
            df = self.table if isinstance(self.table, pd.DataFrame) else pd.DataFrame(self.table)
            truncated = max(0, len(df) - self.table_limit)
            df = df.head(self.table_limit)
            table = {
                "columns": [str(c) for c in df.columns],
                "rows": [[_fmt(v) for v in row] for row in df.itertuples(index=False)],
            }
        return {
            "title": self.title,
            "text": self.text,
            "facts": [(k, _fmt(v)) for k, v in (self.facts or {}).items()],
            "table": table,
            "truncated": truncated,
            "images": [figure_png(f) for f in self.figures if not hasattr(f, "to_svg")],
            "svgs": [f.to_svg() for f in self.figures if hasattr(f, "to_svg")],
            "note": self.note,
            "cell_classes": [list(r) for r in self.cell_classes[: self.table_limit]]
            if self.cell_classes is not None
            else None,
        }


class _TemplateCache(FileSystemBytecodeCache):
    """Jinja2's file cache of compiled templates, where a damaged file (truncated, overwritten)
    is a miss -- the template is compiled and the file written again -- not an error (Jinja2
    itself lets a truncated file's unpickling error through)."""

    def load_bytecode(self, bucket: Bucket) -> None:
        """Fill ``bucket`` from its file, or leave it empty when the file cannot be read."""
        try:
            super().load_bytecode(bucket)
        except Exception:  # any damage: unpickling and unmarshalling raise many types
            bucket.reset()


@functools.cache
def _template(name: str = "report.html") -> Template:
    """The report's page template (``notebook.html``: the same sections as a fragment for
    Jupyter), compiled once per process.

    Jinja2's own bytecode cache keeps the compiled template between runs (in its per-user
    directory under the temporary folder, mode 0700, checked by Jinja2; keyed by the
    template's source checksum, so an edited template is compiled again): compiling it
    costs 12-18 ms of every command that writes a report, loading it 0.5 ms. Where no safe
    cache folder exists the template is compiled each time.
    """
    try:
        cache: FileSystemBytecodeCache | None = _TemplateCache()
    except (OSError, RuntimeError):  # no usable temporary folder
        cache = None
    env = Environment(
        loader=PackageLoader("sdckit.report", "templates"),
        autoescape=select_autoescape(["html"]),
        bytecode_cache=cache,
    )
    return env.get_template(name)


@dataclass
class Report:
    """An HTML report: title, subtitle and sections."""

    title: str
    subtitle: str | None = None
    sections: list[Section] = field(default_factory=list)

    def add(self, section: Section) -> Section:
        """Append a section and return it."""
        self.sections.append(section)
        return section

    def render_html(self) -> str:
        """The self-contained HTML page."""
        from sdckit._version import __version__

        return _template().render(
            title=self.title,
            subtitle=self.subtitle,
            sections=[s.render_context() for s in self.sections],
            generated=_dt.datetime.now().strftime("%Y-%m-%d %H:%M"),
            version=__version__,
            run_id=current_run_id(),
        )

    def render_fragment(self) -> str:
        """The sections as one ``<div>`` with its own scoped styles and no page around it:
        what a result shows in a Jupyter notebook (``_repr_html_``)."""
        return _template("notebook.html").render(
            title=self.title,
            subtitle=self.subtitle,
            sections=[s.render_context() for s in self.sections],
        )

    def write_html(self, path: Target) -> Target:
        """Atomically write the HTML page to ``path``."""
        return write_text(path, self.render_html())

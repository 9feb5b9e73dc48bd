"""Evaluate a protected file against its original (``sdckit evaluate``): read both files,
compute every information-loss and disclosure-risk measure
(:func:`sdckit.evaluation.protected_file.evaluate`), then write the JSON and the HTML report.

Every measure is computed before anything is written, so bad input writes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from sdckit.core.hierarchy import Hierarchy
    from sdckit.core.uri import Target

__all__ = ["read_hierarchies", "run_evaluate"]


def read_hierarchies(specs: Sequence[str]) -> dict[str, Hierarchy]:
    """``--hierarchy`` values ``["age=h_age.csv", ...]`` -> ``{"age": Hierarchy}`` (ARX
    hierarchy files; ConfigError for a bad spec, a column given twice, a missing file)."""
    from sdckit.core.hierarchy import read_hierarchy
    from sdckit.errors import ConfigError

    out: dict[str, Hierarchy] = {}
    for spec in specs:
        col, sep, path = spec.partition("=")
        if not sep or not col.strip() or not path.strip():
            raise ConfigError(
                f"--hierarchy {spec!r}: expected COLUMN=FILE, e.g. --hierarchy age=hier_age.csv"
            )
        if col.strip() in out:
            raise ConfigError(f"--hierarchy: column {col.strip()!r} is given twice")
        if not Path(path.strip()).is_file():
            raise ConfigError(f"--hierarchy {spec!r}: file {path.strip()!r} does not exist")
        out[col.strip()] = read_hierarchy(path.strip(), name=col.strip())
    return out


def run_evaluate(
    original: Path,
    protected: Path,
    *,
    columns: Sequence[str] = (),
    qi: Sequence[str] = (),
    categorical: Sequence[str] = (),
    json_out: Target | None = None,
    html_out: Target | None = None,
    known_method: str | None = None,
    p_percent: float | None = None,
    k: int | None = None,
    target: str | None = None,
    learned_distance: Sequence[str] = (),
    learned_time_limit: float = 60.0,
    intruder_share: float | None = None,
    dbrl_weights: Mapping[str, float] | None = None,
    hierarchy: Sequence[str] = (),
    delimiter: str | None = None,
    encoding: str = "utf-8",
    seed: int = 0,
    isolation_c: float = 2.0,
    isolation_t: int = 5,
) -> dict[str, Any]:
    """Read both files, evaluate, then write the outputs; returns the JSON document.

    The options are :func:`sdckit.evaluation.protected_file.evaluate`'s; ``hierarchy`` the
    ``--hierarchy`` values (``COLUMN=FILE``, :func:`read_hierarchies`). Every measure is
    computed before anything is written, so bad input writes nothing.
    """
    from sdckit.core.io import check_output_paths, read_table
    from sdckit.evaluation.protected_file import evaluate, split_column_types
    from sdckit.report.evaluation_report import evaluation_report
    from sdckit.report.writer import write_json

    check_output_paths(
        {"--json": json_out, "--html": html_out},
        {"--original": original, "--protected": protected},
    )
    cols = list(columns) or None
    hierarchies = read_hierarchies(hierarchy)
    orig = read_table(original, delimiter=delimiter, encoding=encoding, columns=cols)
    prot = read_table(protected, delimiter=delimiter, encoding=encoding)
    doc = evaluate(
        orig,
        prot,
        columns=cols,
        quasi_identifiers=list(qi) or None,
        categorical=list(categorical),
        known_method=known_method,  # type: ignore[arg-type]
        p_percent=p_percent,
        k=k,
        target=target,
        learned_distance=list(learned_distance),
        learned_time_limit=learned_time_limit,
        intruder_share=intruder_share,
        dbrl_weights=dict(dbrl_weights) if dbrl_weights is not None else None,
        hierarchies=hierarchies or None,
        seed=seed,
        isolation_c=isolation_c,
        isolation_t=isolation_t,
    )
    doc["original"] = str(original)
    doc["protected"] = str(protected)
    from sdckit.core.io import output_set, write_text

    with output_set():  # one release: renamed into place together, or not at all
        report = None
        if html_out:
            _, _, o, p = split_column_types(
                orig, prot, doc["columns"]["compared"], doc["columns"]["categorical"]
            )
            report = evaluation_report(
                doc, o, p, subtitle=f"original: {original} — protected: {protected}"
            ).render_html()
        if json_out:
            write_json(json_out, doc)
        if html_out and report is not None:
            write_text(html_out, report)
    return doc

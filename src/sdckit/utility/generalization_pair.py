"""The generalization metrics on any (original, protected) pair with hierarchies.

:func:`sdckit.utility.generalization.output_metrics` computes ARX's generalized loss, Sweeney's
precision, discernibility, AECS, non-uniform entropy and height from an
:class:`~sdckit.core.release.AlgorithmOutput` (per-record domain shares). A released file
read back from disk -- produced by sdckit, ARX or sdcMicro -- has no such object; this module
rebuilds it from the pair itself and the quasi-identifiers' hierarchies, so the same metrics
(same definitions, same code) apply to any pair:

* a released value of quasi-identifier ``q`` is located in ``q``'s hierarchy as the label of
  the original value's ancestor at the lowest level ``h`` where they agree (``h = 0``: not
  generalized); its domain share is ``leaves under it / |D_q|`` (Iyengar 2002; ARX
  ``MetricMDNMLoss``), as the anonymization algorithms compute it;
* ``"*"`` (ARX's suppression / root label) has share 1; a record whose every quasi-identifier
  is ``"*"`` counts as suppressed;
* the transformation is full-domain (``{q: level}``, which precision and height use) when all
  non-suppressed records of each quasi-identifier sit at one level, otherwise ``None`` (then
  precision is the certainty-penalty form, see ``output_metrics``).

A released value that is not an ancestor of the record's original value in the hierarchy
(the files are not aligned, or the hierarchy is not the one used) raises
:class:`~sdckit.errors.HierarchyError` naming the column, row and values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from sdckit.core.encoding import as_text
from sdckit.core.hierarchy import Hierarchy
from sdckit.errors import DataError, HierarchyError, preview

__all__ = ["generalization_metrics", "output_from_pair"]

SUPPRESSED = "*"


def output_from_pair(
    original: pd.DataFrame,
    protected: pd.DataFrame,
    hierarchies: Mapping[str, Hierarchy],
    quasi_identifiers: Sequence[str] | None = None,
):
    """Rebuild the :class:`~sdckit.core.release.AlgorithmOutput` of a released file.

    ``quasi_identifiers`` defaults to the columns that have a hierarchy. Returns the output
    (``data`` = the protected rows, ``share`` per QI, ``suppressed``, ``transformation`` when
    full-domain). See the module docstring for the rules.
    """
    from sdckit.core.release import AlgorithmOutput

    qis = list(hierarchies) if quasi_identifiers is None else list(quasi_identifiers)
    if not qis:
        raise DataError("generalization metrics: no quasi-identifier with a hierarchy given")
    no_h = [q for q in qis if q not in hierarchies]
    if no_h:
        raise HierarchyError(
            f"generalization metrics need a hierarchy for every quasi-identifier; "
            f"{preview(no_h)} have none: give one (an ARX hierarchy CSV) or leave them out"
        )
    for name, frame in (("original", original), ("protected", protected)):
        missing = [q for q in qis if q not in frame.columns]
        if missing:
            raise DataError(f"column(s) {preview(missing)} not in the {name} data")
    if len(original) != len(protected):
        raise DataError(
            f"generalization metrics compare records one by one, but the original data has "
            f"{len(original)} rows and the protected data {len(protected)}"
        )
    n = len(original)
    released = {q: as_text(protected[q].reset_index(drop=True)) for q in qis}
    star = np.column_stack([released[q] == SUPPRESSED for q in qis])
    suppressed = np.asarray(star.all(axis=1), dtype=bool)
    share: dict[str, np.ndarray] = {}
    levels_used: dict[str, np.ndarray] = {}
    for q in qis:
        h = hierarchies[q]
        leaf = h.leaf_index(original[q].reset_index(drop=True), column=q)
        rel = released[q]
        level = np.full(n, -1, dtype=np.int64)
        for lv in range(h.height):
            labels = h.labels[lv][h.levels[lv][leaf]]
            hit = (level < 0) & (labels == rel)
            level[hit] = lv
        is_star = rel == SUPPRESSED
        bad = (level < 0) & ~is_star
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise HierarchyError(
                f"column {q!r}, row {row + 1}: the released value {rel[row]!r} is not a "
                f"generalization of the original value {as_text(original[q].iloc[[row]])[0]!r} "
                f"in the hierarchy of {q!r} ({int(bad.sum())} such records); check that the "
                "files are row-aligned and that the hierarchy is the one used"
            )
        total = float(len(h.leaves))
        s = np.ones(n)
        ok = level >= 0
        for lv in np.unique(level[ok]):
            sel = level == lv
            codes = h.levels[int(lv)][leaf[sel]]
            s[sel] = h.leaves_under(int(lv))[codes] / total
        s[is_star | suppressed] = 1.0
        share[q] = s
        levels_used[q] = np.where(is_star, h.height - 1, level)
    transformation: dict[str, int] | None = {}
    for q in qis:
        used = np.unique(levels_used[q][~suppressed])
        if used.size > 1:
            transformation = None
            break
        transformation[q] = int(used[0]) if used.size else hierarchies[q].height - 1  # type: ignore[index]
    return AlgorithmOutput(
        data=protected.reset_index(drop=True),
        share=share,
        suppressed=suppressed,
        transformation=transformation,
    )


def generalization_metrics(
    original: pd.DataFrame,
    protected: pd.DataFrame,
    hierarchies: Mapping[str, Hierarchy],
    quasi_identifiers: Sequence[str] | None = None,
    metric: str | Mapping[str, Any] = "loss",
) -> dict[str, Any]:
    """ARX-style generalization metrics of a released file against its original.

    Rebuilds the per-record shares (:func:`output_from_pair`) and applies
    :func:`sdckit.utility.generalization.output_metrics` (loss, precision, discernibility,
    aecs, non_uniform_entropy, height, iloss; definitions and sources there). Adds
    ``suppressed_records``, ``transformation`` (``None`` when not full-domain) and ``qi`` (the
    quasi-identifiers measured; ``quasi_identifiers`` defaults to the columns with a hierarchy).
    """
    from sdckit.core.schema import Schema
    from sdckit.utility.generalization import output_metrics

    out = output_from_pair(original, protected, hierarchies, quasi_identifiers)
    qis = list(out.share)
    schema = Schema.from_roles(quasi_identifying=qis, hierarchies={q: hierarchies[q] for q in qis})
    res: dict[str, Any] = dict(output_metrics(original.reset_index(drop=True), out, schema, metric))
    res["suppressed_records"] = out.suppressed_records
    res["transformation"] = out.transformation
    res["qi"] = qis
    return res

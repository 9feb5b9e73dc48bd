"""Datafly (Sweeney 2002): greedy full-domain generalization plus suppression.

L. Sweeney, "Achieving k-anonymity privacy protection using generalization and suppression",
International Journal of Uncertainty, Fuzziness and Knowledge-Based Systems 10(5), 2002,
571-588, Figure 6 ("Datafly"). Starting from the original data (every QI at level 0), while
the records in classes that violate the privacy models exceed what may be suppressed, the QI
with the most distinct values at its current generalization level is generalized one level
(full-domain: every value of the column moves up its hierarchy together). When the violating
records fit the suppression limit (Sweeney: at most ``k`` outliers; here
``suppression_limit * n``, as ARX does), they are suppressed.

Ties between QIs with the same number of distinct values go to the QI that comes first in the
schema. A QI already at its hierarchy's top level is not chosen again. Each step is a roll-up
of the previous frequency set (no rescan of the rows).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from sdckit.core.release import AlgorithmOutput
from sdckit.core.schema import Schema
from sdckit.errors import ConfigError
from sdckit.models.base import PrivacyModel

from ._heuristics import (
    Progress,
    leaf_shares,
    no_solution,
    prepare,
    refuse_metric,
    release,
    report_progress,
    suppress_violations,
)
from .options import parse_options

__all__ = ["datafly"]


def datafly(
    data: pd.DataFrame,
    schema: Schema,
    models: list[PrivacyModel],
    *,
    suppression_limit: float = 0.0,
    metric: Any = None,
    seed: int | None = None,
    progress: Progress = None,
    **options,
) -> AlgorithmOutput:
    """Anonymize with Sweeney's Datafly heuristic (full-domain, one level at a time).

    Every QI needs a hierarchy. Returns the chosen ``transformation`` (QI -> level); the
    sequence of generalization steps is in ``details["steps"]``. ``metric`` and ``seed`` do not
    influence the (deterministic) heuristic. Raises :class:`~sdckit.errors.NoSolutionError`
    when even the top of every hierarchy leaves more violating records than may be suppressed.
    """
    refuse_metric(
        metric,
        "datafly",
        "it generalizes the attribute with the most distinct values, one level at a time",
    )
    parse_options("datafly", options)
    prep = prepare(data, schema, models, suppression_limit, "datafly")
    missing = [q for q in prep.qis if schema.hierarchy(q) is None]
    if missing:
        raise ConfigError(
            f"datafly: quasi-identifier(s) {', '.join(map(repr, missing))} have no hierarchy; "
            "full-domain generalization needs one per QI: give a hierarchy file or build one "
            "with sdckit.core.hierarchy_builders (interval_hierarchy for numbers, "
            "order_hierarchy, masking_hierarchy, date_hierarchy)"
        )
    fs = prep.base
    qs = list(fs.quasi_identifiers)
    levels = [0] * len(qs)
    total_steps = sum(q.height - 1 for q in qs)
    steps: list[dict] = []
    nodes = 0
    while True:
        nodes += 1
        report_progress(progress, len(steps), total_steps)
        res = suppress_violations(fs, prep.models, prep.max_suppressed)
        if res.ok:
            break
        distinct = [len(np.unique(fs.keys[:, i])) for i in range(len(qs))]
        open_ = [i for i, q in enumerate(qs) if levels[i] < q.height - 1]
        if not open_:
            raise no_solution(
                prep,
                res.suppressed_records,
                "Even with every quasi-identifier at its top level the models fail.",
            )
        pick = max(open_, key=lambda i: (distinct[i], -i))
        levels[pick] += 1
        steps.append(
            {
                "attribute": qs[pick].name,
                "distinct_values": int(distinct[pick]),
                "to_level": levels[pick],
                "violating_records": int(res.suppressed_records),
            }
        )
        fs = fs.rollup(levels)
    report_progress(progress, total_steps, total_steps)
    suppressed = res.suppressed_classes[fs.row_class()]
    labels, share = {}, {}
    for q, lv in zip(qs, levels, strict=True):
        # prepare() encoded every QI with schema.hierarchy(q), checked non-None above
        assert q.hierarchy is not None
        codes = q.codes_at(lv)
        labels[q.name] = q.labels(lv)[codes]
        share[q.name] = leaf_shares(q.hierarchy, lv)[codes]
    out, shares = release(prep, labels, share, suppressed)
    transformation = {q.name: int(lv) for q, lv in zip(qs, levels, strict=True)}
    details = {
        "algorithm": "datafly",
        "steps": steps,
        "transformation": transformation,
        "suppressed_records": int(np.count_nonzero(suppressed)),
        "classes": int(fs.n_classes - np.count_nonzero(res.suppressed_classes)),
    }
    return AlgorithmOutput(
        data=out,
        share=shares,
        suppressed=suppressed,
        transformation=transformation,
        nodes_checked=nodes,
        details=details,
    )

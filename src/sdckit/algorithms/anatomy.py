"""Anatomy: l-diverse bucketization (Xiao & Tao 2006).

X. Xiao, Y. Tao, "Anatomy: simple and effective privacy preservation", VLDB 2006, Figure 3
(algorithm *Anatomize*). The quasi-identifiers are released unchanged; the link between a
record and its sensitive value is cut by publishing two tables joined by a group id:

* the QI table -- every input column except the sensitive attribute, plus ``group_id``;
* the sensitive table ``extra_tables["sensitive_table"]`` -- ``(group_id, value, count)``.

Anatomize: hash the records into buckets by sensitive value; while at least ``l`` buckets are
non-empty, form a new QI-group with one record from each of the ``l`` largest buckets; then
each residual record (at most one per bucket, at most ``l - 1``; Xiao & Tao, Property 2) is
added to a group that does not yet hold its sensitive value. Every group therefore holds
``>= l`` records with pairwise distinct sensitive values, i.e. each value has frequency
``<= 1/l`` in its group (the paper's l-diversity).

Eligibility (Xiao & Tao, Section 4): a solution exists iff no sensitive value occurs in more
than ``n / l`` records. When it fails, the fewest records of the over-frequent values are
suppressed so that it holds (values capped at the largest ``T`` with
``l * T <= sum_v min(count_v, T)``) -- at most ``suppression_limit * n``; suppressed records
keep their row with ``"*"`` in every QI and no group.

Parameters: option ``l`` (default: the ``l`` of the l-diversity model in ``models``) and the
sensitive attribute (that model's attribute, else option ``sensitive``, else the schema's first
sensitive attribute). "An arbitrary tuple" of a bucket is taken in row order, or in a random
order drawn from ``seed`` when one is given; a residual record goes to the first eligible group
(a random eligible one with a ``seed``). All ``models`` are checked on the QI-groups (the
groups are Anatomy's equivalence classes).

Shares: QIs are not generalized: share ``1/|D|`` (one of the hierarchy's ``|D|`` leaves) for a
QI with a hierarchy, else 0 -- the minimum share, so the loss of every QI is 0.
``details["verification_key"] = ["group_id"]`` tells the independent verification to recompute
the classes from the group ids (the sensitive values come from the input rows).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from sdckit.core.encoding import encode
from sdckit.core.release import SUPPRESSED, AlgorithmOutput
from sdckit.core.schema import Schema
from sdckit.errors import ConfigError, NoSolutionError
from sdckit.models.base import PrivacyModel
from sdckit.models.ldiversity import LDiversity

from ._anatomy_kernel import anatomize_counts
from ._heuristics import (
    Progress,
    class_frequency_set,
    evaluate_all,
    point_share,
    prepare,
    refuse_metric,
    release,
    report_progress,
)
from .options import AnatomyOptions, parse_options

__all__ = ["anatomy", "eligible_cap"]

GROUP_COLUMN = "group_id"


def eligible_cap(counts: np.ndarray, l: int) -> int:  # noqa: E741 - the paper's name
    """Largest cap ``T`` with ``l * T <= sum_v min(counts_v, T)`` (Xiao & Tao's eligibility).

    Capping every sensitive value at ``T`` records keeps the most records among the ways of
    making the data eligible (no value in more than ``1/l`` of the records).
    """
    counts = np.asarray(counts, dtype=np.int64)
    # f(T) = sum_v min(counts_v, T) - l*T is concave with f(0) = 0, so {T : f(T) >= 0} is an
    # interval [0, T*]: binary search for T* (O(m log max) time, O(m) memory)
    lo, hi = 0, int(counts.max()) if counts.size else 0
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if l * mid <= int(np.minimum(counts, mid).sum()):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _parameters(prep_models, schema: Schema, options: AnatomyOptions) -> tuple[int, str]:
    ldiv = [m for m in prep_models if isinstance(m, LDiversity)]
    if options.l is not None:
        l_val = options.l
    elif ldiv:
        l_val = int(np.ceil(ldiv[0].l))
    else:
        raise ConfigError(
            "anatomy: give option l (the diversity of every QI-group, e.g. l=3) or an "
            "l_diversity model naming the sensitive attribute"
        )
    attr = ldiv[0].attribute if ldiv else options.sensitive
    if attr is None:
        if not schema.sensitive:
            raise ConfigError(
                "anatomy: no sensitive attribute: mark one column as sensitive in the schema "
                "or give option sensitive"
            )
        attr = schema.sensitive[0]
    return int(l_val), str(attr)


def anatomy(
    data: pd.DataFrame,
    schema: Schema,
    models: list[PrivacyModel],
    *,
    suppression_limit: float = 0.0,
    metric: Any = None,
    seed: int | None = None,
    progress: Progress = None,
    **options: Any,
) -> AlgorithmOutput:
    """Bucketize into l-diverse QI-groups (see the module docstring).

    Returns the QI table as ``data`` (sensitive column replaced by ``group_id``) and the
    sensitive table as ``extra_tables["sensitive_table"]``. Raises
    :class:`~sdckit.errors.NoSolutionError` when making the data eligible would suppress more
    than ``suppression_limit * n`` records or a model fails on the groups.
    """
    refuse_metric(
        metric,
        "anatomy",
        "it bucketizes by sensitive value and releases the quasi-identifiers unchanged",
    )
    opts = parse_options("anatomy", options)
    assert isinstance(opts, AnatomyOptions)
    models = list(models)
    l_val, attr = _parameters(models, schema, opts)
    if attr not in data.columns:
        raise ConfigError(
            f"anatomy: sensitive attribute {attr!r} is not a column of the data "
            f"(columns: {', '.join(map(str, data.columns))})"
        )
    if attr in schema.quasi_identifiers:
        raise ConfigError(f"anatomy: sensitive attribute {attr!r} is also a quasi-identifier")
    if not any(isinstance(m, LDiversity) and m.attribute == attr for m in models):
        models.append(LDiversity(attribute=attr, l=l_val, variant="distinct"))
    prep = prepare(data, schema, models, suppression_limit, "anatomy")
    n = prep.n
    rng = np.random.default_rng(seed) if seed is not None else None

    enc = encode(prep.data[attr], attr)
    counts = np.bincount(enc.codes, minlength=enc.cardinality).astype(np.int64)
    cap = eligible_cap(counts, l_val)
    over = np.maximum(counts - cap, 0)
    if over.sum() > prep.max_suppressed:
        top = enc.values[int(np.argmax(counts))]
        raise NoSolutionError(
            f"anatomy: {l_val}-diverse groups need every value of {attr!r} in at most 1/{l_val}"
            f" of the records, but {top!r} occurs {int(counts.max())} times in {n}; making "
            f"the data eligible would suppress {int(over.sum())} records, more than the "
            f"suppression limit allows ({prep.max_suppressed}). Raise suppression_limit or "
            "lower l."
        )
    # records per bucket, in row order or a seeded random order
    tiebreak = rng.permutation(n) if rng is not None else np.arange(n)
    order = np.lexsort((tiebreak, enc.codes))
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n) - starts[enc.codes[order]]
    suppressed = rank >= cap  # the last records of over-frequent values (in that order)
    report_progress(progress, 0, n)

    kept_counts = np.minimum(counts, cap)
    groups, left = anatomize_counts(kept_counts, l_val)
    n_groups = len(groups)
    group_of = np.full(n, -1, dtype=np.int64)
    if n_groups:
        flat_b = groups.ravel()
        flat_g = np.repeat(np.arange(n_groups), l_val)
        by_b = np.argsort(flat_b, kind="stable")
        use_start = np.concatenate([[0], np.cumsum(np.bincount(flat_b, minlength=len(counts)))])
        use_rank = np.empty(len(flat_b), dtype=np.int64)
        use_rank[by_b] = np.arange(len(flat_b)) - use_start[flat_b[by_b]]
        record = order[starts[flat_b] + use_rank]
        group_of[record] = flat_g
    # residual records: one per bucket with something left, each to a group lacking its value
    for b in np.flatnonzero(left > 0).tolist():
        for r in range(int(left[b])):
            rec = int(order[starts[b] + kept_counts[b] - int(left[b]) + r])
            free = np.flatnonzero(~(groups == b).any(axis=1)) if n_groups else np.zeros(0, int)
            taken = np.unique(group_of[order[starts[b] : starts[b] + kept_counts[b]]])
            free = np.setdiff1d(free, taken)
            if free.size == 0:
                raise NoSolutionError(
                    f"anatomy: record {rec + 1} (value {enc.values[b]!r} of {attr!r}) fits in "
                    f"no {l_val}-diverse group; the data has too few distinct values of "
                    f"{attr!r} for l={l_val}. Lower l or raise suppression_limit."
                )
            group_of[rec] = int(free[0] if rng is None else rng.choice(free))
    report_progress(progress, n, n)

    kept = ~suppressed
    rows = np.flatnonzero(kept)
    fs = class_frequency_set(prep, group_of[rows], max(n_groups, 1), rows)
    failed = [r for r in evaluate_all(prep.models, fs) if not r.satisfied]
    if failed:
        raise NoSolutionError(
            f"anatomy: the {l_val}-diverse QI-groups do not satisfy "
            f"{', '.join(r.model for r in failed)}; Anatomy guarantees l-diversity of the "
            "groups only (use a generalization algorithm for the other models)"
        )

    labels, share = {}, {}
    for q in prep.qis:
        labels[q] = prep.data[q].to_numpy(dtype=object)
        share[q] = np.full(n, point_share(prep, q))
    out, shares = release(prep, labels, share, suppressed)
    gid = pd.array(np.where(kept, group_of + 1, 0), dtype="Int64")
    gid[suppressed] = pd.NA
    out = out.drop(columns=[attr])
    out[GROUP_COLUMN] = pd.Series(gid, index=out.index)
    sens = (
        pd.DataFrame({GROUP_COLUMN: group_of[rows] + 1, attr: enc.values[enc.codes[rows]]})
        .groupby([GROUP_COLUMN, attr], sort=True)
        .size()
        .rename("count")
        .reset_index()
    )
    sizes = np.bincount(group_of[rows], minlength=n_groups) if n_groups else np.zeros(0, int)
    details = {
        "algorithm": "anatomy",
        "l": l_val,
        "sensitive_attribute": attr,
        "groups": int(n_groups),
        "min_group_size": int(sizes.min()) if sizes.size else 0,
        "max_group_size": int(sizes.max()) if sizes.size else 0,
        "residual_records": int(left.sum()),
        "suppressed_records": int(np.count_nonzero(suppressed)),
        "verification_key": [GROUP_COLUMN],
        "suppressed_label": SUPPRESSED,
    }
    return AlgorithmOutput(
        data=out,
        share=shares,
        suppressed=suppressed,
        transformation=None,
        nodes_checked=int(n_groups),
        details=details,
        extra_tables={"sensitive_table": sens},
    )

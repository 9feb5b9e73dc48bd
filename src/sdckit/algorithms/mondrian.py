"""Mondrian: strict multidimensional partitioning (LeFevre, DeWitt & Ramakrishnan 2006).

K. LeFevre, D. J. DeWitt, R. Ramakrishnan, "Mondrian multidimensional k-anonymity", ICDE 2006.
The record space is cut recursively: for a partition, choose the dimension with the widest
*normalized* range, cut it at the median, and keep the cut only if it is *allowable* -- here:
every resulting part satisfies every privacy model that can be checked per partition
(k-anonymity as in the paper; l-diversity and t-closeness as in LeFevre et al. 2006b,
"Workload-aware anonymization", and Li et al. 2007). When the widest dimension has no
allowable cut, the next widest is tried; a partition with no allowable cut is final.

Dimensions
----------
* numeric QIs (schema type integer/decimal): the normalized range is
  ``(max - min) / (global max - global min)`` of the partition's values; the cut is at the
  lower median ``m``: ``x <= m`` | ``x > m`` (when ``m`` is the maximum, ``x < m`` | ``x >= m``
  so that both sides are non-empty). With ``relaxed=True`` (relaxed multidimensional
  partitioning, LeFevre et al. 2006, Section 4) the sorted records are cut into two halves of
  equal size, so equal values may fall on both sides.
* categorical QIs with a hierarchy: a partition sits at the lowest common ancestor (LCA) of its
  values; the normalized range is ``leaves under the LCA / |D|``; the cut splits along the
  LCA's children (one part per child present: LeFevre et al.'s categorical splits along a
  generalization hierarchy).
* other QIs (categorical without hierarchy) are not cut.

Released values and shares
--------------------------
Numeric QIs are released as the closed range of the partition's values, ``"[20, 34]"``
(a single value ``"34"``), share ``(max - min) / (global max - global min)``, or, when the QI
also has a hierarchy, the hierarchy leaves inside the range over all leaves. Hierarchical QIs
are released as the LCA label, share ``leaves under it / |D|`` (``|D|`` = hierarchy leaves);
a partition spanning several top-level labels is released as ``"*"`` (share 1). A QI without
hierarchy is released as its value when the partition holds one value (share 0, as an
ungeneralized value), else ``"*"`` (share 1).

Every round evaluates all candidate parts of all open partitions at once: the part of every
record becomes the single "QI" of one frequency set (:func:`class_frequency_set`), so the
models are checked in one vectorized pass per round, not per partition.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from sdckit.core.frequency import group_keys
from sdckit.core.hierarchy import Hierarchy
from sdckit.core.release import AlgorithmOutput
from sdckit.core.schema import Schema
from sdckit.models.base import PrivacyModel

from ._heuristics import (
    Prepared,
    Progress,
    class_frequency_set,
    evaluate_all,
    is_numeric,
    leaf_shares,
    no_solution,
    numeric_values,
    prepare,
    range_labels,
    range_shares,
    refuse_metric,
    release,
    report_progress,
    require_partition_models,
    suppress_violations,
)
from .options import MondrianOptions, parse_options

__all__ = ["mondrian"]

_NUMERIC, _HIERARCHY, _FIXED = "numeric", "hierarchy", "fixed"


@dataclass
class _Dim:
    """One quasi-identifier as a Mondrian dimension."""

    name: str
    kind: str
    values: np.ndarray | None = None  # numeric: float per record
    span: float = 0.0  # numeric: global max - min
    hierarchy: Hierarchy | None = None
    codes: np.ndarray | None = None  # hierarchy: leaf rank in DFS order; fixed: value code
    anc: np.ndarray | None = None  # hierarchy: (height, leaves) code per level of each rank
    labels: np.ndarray | None = None  # fixed: value per code

    # -- the per-kind fields, narrowed (_dims sets those of the dimension's kind) -----------
    def _unset(self, fields: str) -> RuntimeError:
        return RuntimeError(
            f"mondrian: {self.kind} dimension {self.name!r} lacks {fields}, which _dims sets "
            "for its kind. This is a bug in sdckit."
        )

    def numeric(self) -> np.ndarray:
        """``values`` of a numeric dimension."""
        if self.values is None:
            raise self._unset("values")
        return self.values

    def tree(self) -> tuple[Hierarchy, np.ndarray, np.ndarray]:
        """``hierarchy``, ``anc`` and ``codes`` (leaf ranks) of a hierarchical dimension."""
        if self.hierarchy is None or self.anc is None or self.codes is None:
            raise self._unset("hierarchy, anc or codes")
        return self.hierarchy, self.anc, self.codes

    def fixed(self) -> tuple[np.ndarray, np.ndarray]:
        """``codes`` and ``labels`` of a dimension that is not cut."""
        if self.codes is None or self.labels is None:
            raise self._unset("codes or labels")
        return self.codes, self.labels

    def level_codes(self, level: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Codes at ``level`` (per record) of hierarchical dimension records ``rows``."""
        _, anc, codes = self.tree()
        return anc[level, codes[rows]]


def _dims(prep: Prepared) -> list[_Dim]:
    dims = []
    for i, q in enumerate(prep.qis):
        if is_numeric(prep, q):
            v = numeric_values(prep, q)
            dims.append(_Dim(q, _NUMERIC, values=v, span=float(v.max() - v.min())))
            continue
        h = prep.schema.hierarchy(q)
        enc = prep.base.quasi_identifiers[i]
        if h is not None:
            # number the leaves depth-first so that every subtree is a contiguous range: the
            # LCA of a partition is then the LCA of its smallest and largest leaf rank
            order = np.lexsort(tuple(h.levels[lv] for lv in range(h.height)))
            rank = np.empty(len(order), dtype=np.int64)
            rank[order] = np.arange(len(order))
            anc = np.stack([h.levels[lv][order] for lv in range(h.height)]).astype(np.int64)
            dims.append(_Dim(q, _HIERARCHY, hierarchy=h, codes=rank[enc.codes], anc=anc))
        else:
            dims.append(_Dim(q, _FIXED, codes=enc.codes.astype(np.int64), labels=enc.values))
    return dims


def _min_max(values: np.ndarray, part: np.ndarray, n_parts: int) -> tuple[np.ndarray, np.ndarray]:
    """Per partition minimum and maximum of ``values`` (unbuffered ``ufunc.at``, no sort)."""
    lo = np.full(n_parts, np.inf)
    hi = np.full(n_parts, -np.inf)
    np.minimum.at(lo, part, values)
    np.maximum.at(hi, part, values)
    return lo, hi


def _lca(
    dim: _Dim, rows: np.ndarray, part: np.ndarray, n_parts: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per partition: the level and code of the lowest common ancestor of its values.

    With leaves ranked depth-first, the LCA of a set of leaves is the LCA of its smallest and
    largest rank. Level ``height`` stands for a virtual root above several top-level labels.
    """
    _, anc, codes = dim.tree()
    height = anc.shape[0]
    lo, hi = _min_max(codes[rows].astype(np.float64), part, n_parts)
    lo, hi = lo.astype(np.int64), hi.astype(np.int64)
    level = np.full(n_parts, height, dtype=np.int64)
    code = np.zeros(n_parts, dtype=np.int64)
    for lv in range(height - 1, -1, -1):
        a = anc[lv, lo]
        same = a == anc[lv, hi]
        level = np.where(same, lv, level)
        code = np.where(same, a, code)
    return level, code


def _describe(
    dims: list[_Dim], part: np.ndarray, rows: np.ndarray, n_parts: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per new partition (dense ids ``part`` of ``rows``) and dimension: the normalized range
    (-1 where no cut is possible) and, for hierarchical dimensions, the LCA level."""
    widths = np.full((n_parts, len(dims)), -1.0)
    levels = np.zeros((n_parts, len(dims)), dtype=np.int64)
    for j, d in enumerate(dims):
        if d.kind == _NUMERIC:
            lo, hi = _min_max(d.numeric()[rows], part, n_parts)
            w = (hi - lo) / d.span if d.span > 0 else np.zeros(n_parts)
            widths[:, j] = np.where(hi > lo, w, -1.0)
        elif d.kind == _HIERARCHY:
            level, code = _lca(d, rows, part, n_parts)
            h, anc, _ = d.tree()
            height = anc.shape[0]
            shares = np.ones(n_parts)
            inside = level < height
            for lv in np.unique(level[inside]):
                sel = inside & (level == lv)
                shares[sel] = leaf_shares(h, int(lv))[code[sel]]
            widths[:, j] = np.where(level > 0, shares, -1.0)
            levels[:, j] = level
    return widths, levels


def _numeric_side(values: np.ndarray, part: np.ndarray, n_parts: int, relaxed: bool) -> np.ndarray:
    """0/1 side of the median cut for every record (``part`` = its partition, dense)."""
    order = np.lexsort((values, part))
    sizes = np.bincount(part, minlength=n_parts)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    side = np.zeros(len(values), dtype=np.int64)
    if relaxed:
        rank = np.arange(len(values)) - starts[part[order]]
        side[order] = (rank >= sizes[part[order]] // 2).astype(np.int64)
        return side
    sorted_v = values[order]
    med = sorted_v[np.minimum(starts + (np.maximum(sizes, 1) - 1) // 2, len(values) - 1)]
    top = sorted_v[np.maximum(starts + sizes - 1, 0)]
    m, t = med[part], top[part]
    return np.where(m < t, values > m, values >= m).astype(np.int64)


def mondrian(
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
    """Anonymize by strict (or relaxed) multidimensional Mondrian partitioning.

    Options: ``relaxed`` (bool, default False). Models must be checkable per partition
    (k-anonymity, l-diversity, t-closeness). ``metric`` and ``seed`` do not influence the
    (deterministic) partitioning. If the whole table violates a model, all records would
    have to be suppressed: this is done when the suppression limit allows it, else
    :class:`~sdckit.errors.NoSolutionError` is raised. See the module docstring for the
    released labels and shares.
    """
    refuse_metric(
        metric,
        "mondrian",
        "it cuts the partition's widest attribute (normalized range) at its median",
    )
    opts = parse_options("mondrian", options)
    assert isinstance(opts, MondrianOptions)
    relaxed = opts.relaxed
    prep = prepare(data, schema, models, suppression_limit, "mondrian")
    require_partition_models(prep)
    dims = _dims(prep)
    n, m = prep.n, len(dims)

    root = suppress_violations(
        class_frequency_set(prep, np.zeros(n, np.int64), 1), prep.models, prep.max_suppressed
    )
    if not root.ok:
        raise no_solution(prep, n, "The whole table already violates them.")
    if root.suppressed_records:
        return _output(prep, dims, np.zeros(n, np.int64), np.ones(n, bool), relaxed, 1, 0, 0)

    pid = np.zeros(n, dtype=np.int64)
    width, lca = _describe(dims, pid, np.arange(n), 1)
    final = np.zeros(1, dtype=bool)
    tried = np.zeros((1, m), dtype=bool)
    nodes = 1
    rounds = 0
    while True:
        rows = np.flatnonzero(~final[pid])
        report_progress(progress, n - len(rows), n)
        if rows.size == 0:
            break
        rounds += 1
        open_ids = np.flatnonzero(~final)
        n_open = len(open_ids)
        position = np.full(len(final), -1, dtype=np.int64)
        position[open_ids] = np.arange(n_open)
        ap = position[pid[rows]]
        widths = np.where(tried[open_ids], -1.0, width[open_ids])
        can = widths.max(axis=1) >= 0
        final[open_ids[~can]] = True
        choose = np.argmax(widths, axis=1)
        sel = can[ap]
        if not sel.any():
            continue
        r_rows, r_ap = rows[sel], ap[sel]
        sub = np.zeros(len(r_rows), dtype=np.int64)
        levels_open = lca[open_ids]
        for j, d in enumerate(dims):
            on = choose[r_ap] == j
            if not on.any():
                continue
            if d.kind == _NUMERIC:
                _, dense = np.unique(r_ap[on], return_inverse=True)
                sub[on] = _numeric_side(
                    d.numeric()[r_rows[on]], dense, int(dense.max()) + 1, relaxed
                )
            else:
                sub[on] = d.level_codes(levels_open[r_ap[on], j] - 1, r_rows[on])
        cand, n_cand, rep = group_keys([r_ap, sub], [n_open, int(sub.max()) + 1])
        nodes += n_cand
        results = evaluate_all(prep.models, class_frequency_set(prep, cand, n_cand, r_rows))
        violating = np.zeros(n_cand, dtype=bool)
        for r in results:
            violating |= np.asarray(r.violating, dtype=bool)
        bad = np.zeros(n_open, dtype=bool)
        bad[r_ap[rep][violating]] = True
        rejected = can & bad
        tried[open_ids[rejected], choose[rejected]] = True
        accepted_rec = ~bad[r_ap]
        if accepted_rec.any():
            keep_cand = np.zeros(n_cand, dtype=bool)
            keep_cand[cand[accepted_rec]] = True
            local = np.cumsum(keep_cand) - 1
            n_new = int(keep_cand.sum())
            moved = r_rows[accepted_rec]
            new_local = local[cand[accepted_rec]]
            pid[moved] = new_local + len(final)
            w_new, l_new = _describe(dims, new_local, moved, n_new)
            width = np.concatenate([width, w_new])
            lca = np.concatenate([lca, l_new])
            final[open_ids[can & ~bad]] = True  # the parent is gone (no records left)
            final = np.concatenate([final, np.zeros(n_new, dtype=bool)])
            tried = np.concatenate([tried, np.zeros((n_new, m), dtype=bool)])
    _, dense = np.unique(pid, return_inverse=True)
    return _output(
        prep, dims, dense, np.zeros(n, bool), relaxed, int(dense.max()) + 1, nodes, rounds
    )


def _output(
    prep: Prepared,
    dims: list[_Dim],
    part: np.ndarray,
    suppressed: np.ndarray,
    relaxed: bool,
    n_parts: int,
    nodes: int,
    rounds: int,
) -> AlgorithmOutput:
    """Labels and shares of every partition, then the released rows."""
    sizes = np.bincount(part, minlength=n_parts)
    rows = np.arange(len(part))
    labels: dict[str, np.ndarray] = {}
    share: dict[str, np.ndarray] = {}
    for d in dims:
        if d.kind == _NUMERIC:
            lo, hi = _min_max(d.numeric(), part, n_parts)
            p_lab = range_labels(lo, hi)
            p_share = range_shares(prep, d.name, lo, hi)
        elif d.kind == _HIERARCHY:
            level, code = _lca(d, rows, part, n_parts)
            h, anc, _ = d.tree()
            height = anc.shape[0]
            p_lab = np.full(n_parts, "*", dtype=object)
            p_share = np.ones(n_parts)
            for lv in np.unique(level[level < height]):
                s = level == lv
                p_lab[s] = h.labels[int(lv)][code[s]]
                p_share[s] = leaf_shares(h, int(lv))[code[s]]
        else:
            codes, values = d.fixed()
            lo, hi = _min_max(codes.astype(np.float64), part, n_parts)
            lo = lo.astype(np.int64)
            one = lo == hi
            p_lab = np.where(one, values[lo], "*").astype(object)
            p_share = np.where(one, 0.0, 1.0)
        labels[d.name] = p_lab[part]
        share[d.name] = p_share[part]
    data, shares = release(prep, labels, share, suppressed)
    kept = sizes[sizes > 0] if not suppressed.any() else np.zeros(0, np.int64)
    details = {
        "algorithm": "mondrian",
        "relaxed": bool(relaxed),
        "partitions": int(len(kept)),
        "rounds": int(rounds),
        "min_partition_size": int(kept.min()) if kept.size else 0,
        "max_partition_size": int(kept.max()) if kept.size else 0,
        "mean_partition_size": float(kept.mean()) if kept.size else 0.0,
        "suppressed_records": int(np.count_nonzero(suppressed)),
        "label_format": "numeric QIs as closed ranges '[min, max]' of the partition's values "
        "(a single value as is); hierarchical QIs as the lowest common ancestor's label",
    }
    return AlgorithmOutput(
        data=data,
        share=shares,
        suppressed=np.asarray(suppressed, dtype=bool),
        transformation=None,
        nodes_checked=int(nodes),
        details=details,
    )

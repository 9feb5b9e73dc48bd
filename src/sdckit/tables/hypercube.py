"""The hypercube heuristic for secondary cell suppression (GHMiter, Repsilber 1994/2002).

For a primary cell ``p`` with nodes ``(n_1, .., n_k)``, a hypercube chooses one other node
``q_d`` per dimension from a family of ``n_d`` (its siblings and its parent, or its children
when ``n_d`` is a sub-total) and suppresses the ``2^k`` corner cells with nodes in
``{n_d, q_d}``. Within a family every relation holds (parent = sum of children), so moving the
corners alternately by ``+t`` and ``-t`` keeps every relation: corners at an even number of
steps from ``p`` move with ``p``, the others against it. With non-negative cells the intruder's
interval for ``p`` therefore reaches ``p + min(odd corners)`` and ``p - min(even corners)``: a
hypercube protects ``p`` when the odd corners are at least ``UPL_p`` and the even ones (``p``
aside) at least ``LPL_p`` (Repsilber's "sufficient" condition; Giessing & Repsilber 2002,
"Tools and strategies to protect multiple tables with the GHQUAR cell suppression engine").
Among protecting hypercubes the cheapest (cost of the corners not yet suppressed) is taken;
primaries are processed from the most to the least valuable, as GHMiter does.

GHMiter's result may leave a cell exposed (interactions between hypercubes of different
sub-tables, corners that are themselves protected by nothing); :func:`hypercube_pattern`
returns the pattern only, and :func:`sdckit.tables.suppression.suppress` audits it and repairs
it before anything is released. Corners are never empty cells (known zeros). Per dimension at
most ``max_candidates`` alternative nodes are tried (the largest cells on the primary's lines
first), which bounds the work at ``max_candidates ** k`` hypercubes per primary.
"""

from __future__ import annotations

import itertools

import numpy as np

from sdckit.tables.rules import Primary
from sdckit.tables.table import Table

__all__ = ["hypercube_pattern"]


def _alternatives(table: Table, dim: int, node: int) -> np.ndarray:
    """The nodes that form a 2-node family edge with ``node`` in dimension ``dim``."""
    d = table.dimensions[dim]
    out: list[int] = []
    parent = int(d.parent[node])
    if parent >= 0:
        out.append(parent)
        out.extend(int(s) for s in d.children[parent] if s != node)
    out.extend(int(c) for c in d.children[node])
    return np.unique(np.array(out, dtype=np.int64))


def hypercube_pattern(
    table: Table,
    primary: Primary,
    cost: np.ndarray,
    *,
    max_candidates: int = 6,
) -> np.ndarray:
    """The GHMiter-style suppression pattern (primaries included); see the module docstring.

    Deterministic: ties are broken by cell order. A primary for which no hypercube is
    sufficient gets the cheapest hypercube with the largest protection (the audit-and-repair
    step of the caller completes it).
    """
    k = len(table.dimensions)
    shape = table.shape
    empty = (table.freq == 0) & (table.value == 0)
    suppressed = primary.unsafe.copy()
    value = np.abs(table.value)
    order = np.flatnonzero(primary.unsafe)
    order = order[np.argsort(-value[order], kind="stable")]
    # parity of every corner (number of dimensions where it takes the alternative node)
    corners = np.array(list(itertools.product((0, 1), repeat=k)), dtype=np.int64)
    odd = corners.sum(axis=1) % 2 == 1
    for p in order:
        nodes = table.nodes[p]
        options: list[np.ndarray] = []
        for j in range(k):
            alt = _alternatives(table, j, int(nodes[j]))
            if len(alt) == 0:
                break
            # the cell on p's line through each alternative: larger ones protect more
            line = np.tile(nodes, (len(alt), 1))
            line[:, j] = alt
            line_cells = np.ravel_multi_index(tuple(line.T), shape)
            usable = ~empty[line_cells]
            alt, line_cells = alt[usable], line_cells[usable]
            if len(alt) == 0:
                break
            keep = np.argsort(-value[line_cells], kind="stable")[:max_candidates]
            options.append(alt[keep])
        if len(options) < k:
            continue  # no hypercube through p (e.g. a one-code dimension)
        combos = np.array(list(itertools.product(*options)), dtype=np.int64)  # (m, k)
        # corner nodes: (m, 2^k, k)
        base = np.broadcast_to(nodes, (len(combos), len(corners), k))
        alt_nodes = np.broadcast_to(combos[:, None, :], base.shape)
        corner_nodes = np.where(corners[None, :, :] == 1, alt_nodes, base)
        cells = np.ravel_multi_index(tuple(np.moveaxis(corner_nodes, -1, 0)), shape)
        valid = ~empty[cells].any(axis=1)
        if not valid.any():
            continue
        vals = value[cells]
        up = np.where(odd[None, :], vals, np.inf).min(axis=1)
        even_others = np.where(~odd[None, :], vals, np.inf)
        even_others[:, 0] = np.inf  # corner 0 is p itself
        down = even_others.min(axis=1)
        down = np.minimum(down, value[p])
        sufficient = valid & (up >= primary.upper[p]) & (down >= primary.lower[p])
        extra = np.where(suppressed[cells], 0.0, cost[cells]).sum(axis=1)
        if sufficient.any():
            score = np.where(sufficient, extra, np.inf)
        else:  # best effort: the most protective valid hypercube, then the cheapest
            score = np.where(valid, -np.minimum(up, down) * 1e6 + extra, np.inf)
        best = int(np.argmin(score))
        suppressed[cells[best]] = True
    return suppressed

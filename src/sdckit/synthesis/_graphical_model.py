"""A tree-structured graphical model fitted to noisy marginals, and sampling from it.

This is the estimation step of MST (McKenna, Miklau & Sheldon 2021, "Winning the NIST
Contest: A scalable and general approach to differentially private synthetic data", *Journal
of Privacy and Confidentiality* 11(3), sec. 4), which uses Private-PGM (McKenna, Sheldon &
Miklau 2019, "Graphical-model based estimation and inference for differential privacy",
ICML): among all distributions whose marginals are consistent, find the one whose marginals
``mu`` minimize the weighted squared error to the noisy measurements,

    L(mu) = 1/2 * sum_m sum_cells ((N * mu_m - y_m) / sigma_m)**2,

where ``y_m`` are the noisy counts of measurement ``m``, ``sigma_m`` their noise standard
deviation (per cell) and ``N`` the estimated number of records (the generalized least
squares objective of McKenna et al. 2019, sec. 3, eq. (2), with the Gaussian noise of each
measurement as its weight).

Here the measured cliques are single attributes and the edges of a forest, so every consistent
set of marginals is the set of marginals of a distribution that factorizes over the forest
(the junction-tree property of trees: Wainwright & Jordan 2008, "Graphical models,
exponential families, and variational inference", Foundations and Trends in ML 1(1-2),
Proposition 2.1 and sec. 4.1). The distribution is held as log-potentials ``theta`` (one
table per attribute, one per forest edge),

    P(x) ∝ exp(sum_i theta_i(x_i) + sum_(p, c) theta_pc(x_p, x_c)),

and fitted by entropic mirror descent in ``theta`` (McKenna et al. 2019, Algorithm 1:
``theta <- theta - alpha * dL/dmu``, then ``mu`` = the marginals of ``P_theta``), the step size
chosen by backtracking (Armijo's rule along the mirror-descent path, their sec. 3.3). The
marginals of ``P_theta`` are computed exactly by sum-product belief propagation on the forest
(Pearl 1988; Wainwright & Jordan 2008, sec. 2.5.1), in log space.

Sampling follows the forest from each root (the root from its marginal, each child from
``P(x_c | x_p) = mu_pc(x_p, x_c) / mu_p(x_p)``), all records at once; within each group of
records sharing a parent value the child is drawn by systematic sampling (one uniform offset
per group, Madow 1949, "On the theory of systematic sampling, II", Annals of Mathematical
Statistics 20(3)) and assigned in random order, so the synthetic counts follow the model's
conditional tables to within one record per cell (the same aim as Private-PGM's rounding of
the expected counts when it generates records). Everything here is post-processing of the
noisy measurements and costs no privacy.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Forest", "Measurement", "FittedForest", "estimate_total", "fit_forest"]


def _logsumexp(values: np.ndarray, axis: int | None = None) -> np.ndarray:
    """``log(sum(exp(values)))`` along ``axis``, shifted by the maximum for stability."""
    top = np.max(values, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(values - top), axis=axis, keepdims=True)) + top
    return np.squeeze(out, axis=axis) if axis is not None else out.reshape(())


@dataclass(frozen=True)
class Measurement:
    """Noisy counts of one marginal: ``clique`` is ``(i,)`` or ``(a, b)``; ``values`` has the
    clique's table shape; ``sigma`` is the noise standard deviation of each cell (same shape)."""

    clique: tuple[int, ...]
    values: np.ndarray
    sigma: np.ndarray


class Forest:
    """Attributes ``0..d-1`` with ``sizes[i]`` values, joined by the undirected ``edges``
    (which must form a forest): roots, parents and a breadth-first order."""

    def __init__(self, sizes: list[int], edges: list[tuple[int, int]]) -> None:
        self.sizes = [int(k) for k in sizes]
        d = len(self.sizes)
        neighbours: list[list[int]] = [[] for _ in range(d)]
        for a, b in edges:
            neighbours[a].append(b)
            neighbours[b].append(a)
        self.parent = [-1] * d
        self.children: list[list[int]] = [[] for _ in range(d)]
        self.order: list[int] = []
        seen = [False] * d
        for root in range(d):
            if seen[root]:
                continue
            seen[root] = True
            queue = [root]
            while queue:
                node = queue.pop(0)
                self.order.append(node)
                for nxt in sorted(neighbours[node]):
                    if not seen[nxt]:
                        seen[nxt] = True
                        self.parent[nxt] = node
                        self.children[node].append(nxt)
                        queue.append(nxt)
                    elif nxt != self.parent[node]:
                        raise ValueError("the edges of a forest must not form a cycle")
        self.edges = [(self.parent[c], c) for c in self.order if self.parent[c] >= 0]

    def marginals(
        self, theta_node: list[np.ndarray], theta_edge: dict[int, np.ndarray]
    ) -> tuple[list[np.ndarray], dict[int, np.ndarray]]:
        """The exact marginals of ``P_theta``: per attribute, and per edge keyed by its child
        (table ``parent x child``). Sum-product: an upward pass collects each subtree into a
        message to its parent, a downward pass combines a node's belief without the child's
        own message with the child's subtree (module docstring). Potentials are exponentiated
        after subtracting their maximum and messages are rescaled to a maximum of 1, which
        leaves every normalized marginal unchanged; a pass that underflows anyway is redone in
        log space."""
        d = len(self.sizes)
        unary = [np.exp(t - t.max()) for t in theta_node]
        pair = {c: np.exp(t - t.max()) for c, t in theta_edge.items()}
        inward: list[np.ndarray] = [np.empty(0)] * d
        message: list[np.ndarray] = [np.empty(0)] * d
        for c in reversed(self.order):
            inn = unary[c]
            for g in self.children[c]:
                inn = inn * message[g]
            inward[c] = inn
            if self.parent[c] >= 0:
                msg = pair[c] @ inn
                top = msg.max()
                if not top > 0:
                    return self._log_marginals(theta_node, theta_edge)
                message[c] = msg / top
        node: list[np.ndarray] = [np.empty(0)] * d
        edge: dict[int, np.ndarray] = {}
        for c in self.order:
            p = self.parent[c]
            if p < 0:
                total = inward[c].sum()
                if not total > 0:
                    return self._log_marginals(theta_node, theta_edge)
                node[c] = inward[c] / total
                continue
            msg = message[c]
            outside = np.divide(node[p], msg, out=np.zeros_like(msg), where=msg > 0)
            joint = outside[:, None] * pair[c] * inward[c][None, :]
            total = joint.sum()
            if not total > 0:
                return self._log_marginals(theta_node, theta_edge)
            joint /= total
            edge[c] = joint
            node[c] = joint.sum(axis=0)
        return node, edge

    def _log_marginals(
        self, theta_node: list[np.ndarray], theta_edge: dict[int, np.ndarray]
    ) -> tuple[list[np.ndarray], dict[int, np.ndarray]]:
        """:meth:`marginals` computed in log space throughout (slower, never underflows)."""
        d = len(self.sizes)
        inward: list[np.ndarray] = [np.empty(0)] * d
        message: list[np.ndarray] = [np.empty(0)] * d
        for c in reversed(self.order):
            inn = theta_node[c]
            for g in self.children[c]:
                inn = inn + message[g]
            inward[c] = inn
            if self.parent[c] >= 0:
                message[c] = _logsumexp(theta_edge[c] + inn[None, :], axis=1)
        log_node: list[np.ndarray] = [np.empty(0)] * d
        node: list[np.ndarray] = [np.empty(0)] * d
        edge: dict[int, np.ndarray] = {}
        for c in self.order:
            p = self.parent[c]
            if p < 0:
                log_belief = inward[c] - _logsumexp(inward[c])
            else:
                log_joint = (log_node[p] - message[c])[:, None] + theta_edge[c] + inward[c][None, :]
                log_joint = log_joint - _logsumexp(log_joint)
                edge[c] = np.exp(log_joint)
                log_belief = _logsumexp(log_joint, axis=0)
            log_node[c] = log_belief
            node[c] = np.exp(log_belief)
        return node, edge


def project_to_simplex(target: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """The probability vector ``p`` closest to ``target`` in the weighted squared distance
    ``sum_j w_j (p_j - t_j)**2`` (``w > 0``).

    The KKT conditions give ``p_j = max(0, t_j - lam / w_j)`` with ``lam`` such that the ``p_j``
    sum to 1; ``sum_j p_j`` is piecewise linear and decreasing in ``lam``, with breakpoints
    ``t_j w_j``, so ``lam`` is found exactly by sorting them (the weighted form of the
    sort-based Euclidean projection of Held, Wolfe & Crowder 1974, "Validation of subgradient
    optimization", Mathematical Programming 6; Duchi, Shalev-Shwartz, Singer & Chandra 2008,
    "Efficient projections onto the l1-ball for learning in high dimensions", ICML, Fig. 1).
    """
    t = np.asarray(target, dtype=np.float64).ravel()
    w = np.broadcast_to(np.asarray(weight, dtype=np.float64), np.shape(target)).ravel()
    breaks = t * w
    order = np.argsort(-breaks)
    sum_t = np.cumsum(t[order])
    sum_inv = np.cumsum(1.0 / w[order])
    lam = (sum_t - 1.0) / sum_inv  # the multiplier if exactly the first m entries are positive
    below = np.append(breaks[order][1:], -np.inf)
    valid = np.flatnonzero(lam >= below)
    m = valid[0] if len(valid) else len(t) - 1
    return np.maximum(0.0, t - lam[m] / w).reshape(np.shape(target))


def estimate_total(measurements: list[Measurement]) -> float:
    """The number of records estimated from the noisy measurements: the inverse-variance
    weighted mean of their totals (the total of a measurement with per-cell noise ``sigma`` has
    variance ``sum(sigma**2)``), at least 1."""
    weights = np.array([1.0 / float(np.sum(m.sigma**2)) for m in measurements])
    totals = np.array([float(np.sum(m.values)) for m in measurements])
    return max(1.0, float(np.sum(weights * totals) / np.sum(weights)))


@dataclass
class FittedForest:
    """A fitted model: the forest, its attribute and edge marginals (probabilities), and how
    the fit went (``iterations``, final ``loss``)."""

    forest: Forest
    node: list[np.ndarray]
    edge: dict[int, np.ndarray]
    iterations: int = 0
    loss: float = 0.0
    history: list[float] = field(default_factory=list)

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` records as an ``n x d`` array of codes (module docstring: root first, each child
        given its parent, systematic sampling within each parent value's group)."""
        forest = self.forest
        codes = np.empty((n, len(forest.sizes)), dtype=np.int64)
        for c in forest.order:
            p = forest.parent[c]
            if p < 0:
                cdf = np.cumsum(self.node[c])
                cdf /= cdf[-1]
                points = (rng.random() + np.arange(n)) / n
                values = np.minimum(np.searchsorted(cdf, points, side="right"), len(cdf) - 1)
                codes[:, c] = rng.permutation(values)
                continue
            table = self.edge[c]
            k_p, k_c = table.shape
            rows = table.sum(axis=1, keepdims=True)
            fallback = self.node[c] / self.node[c].sum()
            cond = np.where(rows > 0, table / np.where(rows > 0, rows, 1.0), fallback[None, :])
            cdf = np.cumsum(cond, axis=1)
            cdf /= cdf[:, -1:]
            flat = (cdf + np.arange(k_p)[:, None]).ravel()
            parent_values = codes[:, p]
            order = np.lexsort((rng.random(n), parent_values))
            grouped = parent_values[order]
            counts = np.bincount(grouped, minlength=k_p)
            starts = np.cumsum(counts) - counts
            rank = np.arange(n) - starts[grouped]
            offsets = rng.random(int(k_p))
            points = grouped + (offsets[grouped] + rank) / counts[grouped]
            values = np.searchsorted(flat, points, side="right") - grouped * k_c
            codes[order, c] = np.clip(values, 0, k_c - 1)
        return codes


def _oriented(forest: Forest, m: Measurement) -> tuple[str, int, np.ndarray, np.ndarray]:
    """Where measurement ``m`` lands: ``("node", i, ...)`` or ``("edge", child, ...)`` with the
    table transposed to ``parent x child`` where needed."""
    if len(m.clique) == 1:
        return "node", m.clique[0], m.values.astype(np.float64), m.sigma.astype(np.float64)
    a, b = m.clique
    if forest.parent[b] == a:
        return "edge", b, m.values.astype(np.float64), m.sigma.astype(np.float64)
    if forest.parent[a] == b:
        return "edge", a, m.values.T.astype(np.float64), m.sigma.T.astype(np.float64)
    raise ValueError(f"measured pair {m.clique} is not an edge of the forest")


def _initial_potentials(
    forest: Forest, placed: list[tuple[str, int, np.ndarray, np.ndarray]], total: float
) -> tuple[list[np.ndarray], dict[int, np.ndarray]]:
    """A starting point near the optimum: each measured table projected onto the probability
    simplex (:func:`project_to_simplex`, weights ``1 / sigma**2``), mixed with a floor of half
    a record spread over its cells so that no log-potential is infinite; the root of each tree
    gets its 1-way estimate, each edge the conditional table ``child | parent`` of its 2-way
    estimate (a distribution that factorizes over the forest: its edge marginals are the
    projected tables up to the disagreement between the parents' estimates)."""
    floor = 0.5 / max(total, 1.0)
    estimate: dict[tuple[str, int], np.ndarray] = {}
    for kind, key, y, sigma in placed:
        if (kind, key) not in estimate:  # the first measurement of a clique starts it
            q = project_to_simplex(y / total, 1.0 / sigma**2)
            estimate[(kind, key)] = (q + floor / q.size) / (1.0 + floor)
    theta_node = []
    for i, k in enumerate(forest.sizes):
        node_q = estimate.get(("node", i))
        if forest.parent[i] >= 0 or node_q is None:
            theta_node.append(np.zeros(k))
        else:
            theta_node.append(np.log(node_q))
    theta_edge = {}
    for p, c in forest.edges:
        edge_q = estimate.get(("edge", c))
        if edge_q is None:
            theta_edge[c] = np.zeros((forest.sizes[p], forest.sizes[c]))
        else:
            theta_edge[c] = np.log(edge_q) - np.log(edge_q.sum(axis=1, keepdims=True))
    return theta_node, theta_edge


def fit_forest(
    sizes: list[int],
    edges: list[tuple[int, int]],
    measurements: list[Measurement],
    total: float,
    *,
    max_iterations: int = 500,
    tolerance: float = 1e-4,
) -> FittedForest:
    """Minimize the weighted squared error ``L(mu)`` (module docstring) over the distributions
    that factorize over the forest, by mirror descent with backtracking (McKenna, Sheldon &
    Miklau 2019, Algorithm 1 and sec. 3.3), from :func:`_initial_potentials`.

    A step ``theta - alpha * dL/dmu`` is accepted when the loss falls by at least half the
    decrease its gradient predicts, ``L(mu) - L(mu') >= <dL/dmu, mu - mu'> / 2`` (Armijo's
    rule along the mirror-descent path); otherwise ``alpha`` is halved and the step retried.
    The first ``alpha`` is ``1 / sum_m max(N**2 / sigma_m**2)``, the inverse of the smoothness
    constant of ``L`` over the probability simplex in the L1 norm (each joint cell lies in
    exactly one cell of each measured marginal), and ``alpha`` doubles after every 5 accepted
    steps in a row. Stops after ``max_iterations`` or when the loss fell by less than
    ``tolerance`` (relative) over the last 25 iterations.
    """
    forest = Forest(sizes, edges)
    placed = [_oriented(forest, m) for m in measurements]
    weight = [total / sigma**2 for _, _, _, sigma in placed]
    theta_node, theta_edge = _initial_potentials(forest, placed, total)

    def loss_and_gradient(node, edge):
        loss = 0.0
        g_node: dict[int, np.ndarray] = {}
        g_edge: dict[int, np.ndarray] = {}
        for (kind, key, y, _), w in zip(placed, weight, strict=True):
            mu = node[key] if kind == "node" else edge[key]
            residual = total * mu - y
            scaled = w * residual  # dL/dmu = N (N mu - y) / sigma**2
            loss += 0.5 * float((scaled * residual).sum()) / total
            target = g_node if kind == "node" else g_edge
            target[key] = target[key] + scaled if key in target else scaled
        return loss, g_node, g_edge

    def predicted_decrease(g_node, g_edge, node, edge, new_node, new_edge) -> float:
        out = 0.0
        for i, g in g_node.items():
            out += float((g * (node[i] - new_node[i])).sum())
        for c, g in g_edge.items():
            out += float((g * (edge[c] - new_edge[c])).sum())
        return out

    node, edge = forest.marginals(theta_node, theta_edge)
    loss, g_node, g_edge = loss_and_gradient(node, edge)
    smooth = sum(float(w.max()) * total for w in weight)
    alpha = 1.0 / smooth if smooth > 0 else 1.0
    history = [loss]
    iterations = 0
    streak = 0
    for _ in range(max_iterations):
        for _attempt in range(60):
            new_theta_node = [
                t - alpha * g_node[i] if i in g_node else t for i, t in enumerate(theta_node)
            ]
            new_theta_edge = {
                c: (t - alpha * g_edge[c] if c in g_edge else t) for c, t in theta_edge.items()
            }
            new_node, new_edge = forest.marginals(new_theta_node, new_theta_edge)
            new_loss, new_g_node, new_g_edge = loss_and_gradient(new_node, new_edge)
            predicted = predicted_decrease(g_node, g_edge, node, edge, new_node, new_edge)
            if loss - new_loss >= 0.5 * predicted:
                break
            alpha *= 0.5
            streak = 0
        else:  # no step size decreases the loss: converged to rounding error
            break
        theta_node, theta_edge = new_theta_node, new_theta_edge
        node, edge, loss = new_node, new_edge, new_loss
        g_node, g_edge = new_g_node, new_g_edge
        history.append(loss)
        iterations += 1
        streak += 1
        if streak >= 5:
            alpha *= 2.0
            streak = 0
        if len(history) > 25 and history[-26] - loss <= tolerance * max(abs(loss), 1e-300):
            break
    return FittedForest(forest, node, edge, iterations, loss, history)

"""Information-loss metrics of generalization and suppression.

Two entry points share the definitions below:

* :class:`LatticeMetrics` -- built once from the ungeneralized frequency set and the QI
  hierarchies; evaluates a metric on any generalized frequency set (with a mask of suppressed
  classes) and gives, for whole arrays of level vectors at once, the *generalization-only*
  part of a metric, a lower bound that is monotone along generalization (used by the optimal
  lattice search, :mod:`sdckit.algorithms.optimal`).
* :func:`output_metrics` -- the same metrics on any ``(original data, AlgorithmOutput)`` pair,
  from the per-record domain ``share`` arrays and the released labels (for every algorithm:
  optimal, Datafly, Mondrian, TDS, ...).

Definitions (``n`` records, ``m`` quasi-identifiers, ``D_i`` leaves of attribute ``i``'s
hierarchy; a suppressed record counts as generalized to the root ``*``):

* **loss** -- ARX's generalized information loss (Iyengar 2002, "Transforming data to satisfy
  privacy constraints", KDD; ARX ``MetricMDNMLoss``; Prasser et al. 2016, "Lightning"): a
  record's share in attribute ``i`` is ``leaves under its value / D_i`` (1 when suppressed);
  ``loss_i = (sum_records share - n/D_i) / (n - n/D_i)`` (0 when ``D_i = 1``); aggregated by
  the geometric mean ``prod_i (1 + loss_i)^(w_i / sum w) - 1`` (ARX's default
  ``AggregateFunction.GEOMETRIC_MEAN``, shifted by one so zero losses are allowed), or
  ``arithmetic`` (``sum w_i loss_i / sum w``), ``sum`` (``sum w_i loss_i``), ``max``
  (``max w_i loss_i``). Weights default to 1.
* **precision** -- Sweeney's precision (Sweeney 2002, "Achieving k-anonymity privacy
  protection using generalization and suppression", IJUFKS 10(5)):
  ``Prec = 1 - sum_i sum_j (h_ij / HGV_i) / (n * m)`` with ``h_ij`` the level of record ``j``
  in attribute ``i`` and ``HGV_i`` the hierarchy's top level (suppressed: ``h = HGV``).
  Higher is better; the search minimises ``1 - Prec``.
* **discernibility** -- Bayardo & Agrawal 2005 ("Data privacy through optimal
  k-anonymization", ICDE): ``sum_{released classes E} |E|^2 + (suppressed records) * n``.
* **aecs** -- average equivalence class size (LeFevre et al. 2006, "Mondrian"):
  ``released records / released classes`` (``C_AVG = aecs / k``).
* **entropy** (``non_uniform_entropy``) -- Gionis & Tassa 2009 ("k-anonymization with
  minimal loss of information", IEEE TKDE 21(2)), as ARX ``MetricMDNUEntropy``: each record
  costs ``sum_i -log2(f_i(v) / F_i(g))`` where ``v`` is its original value, ``g`` its
  released value, ``f_i(v)`` the number of records with value ``v`` and ``F_i(g)`` the number
  of records whose value lies under ``g`` (both over all ``n`` input records); a suppressed
  value lies under the root (``F = n``).
* **height** -- the sum of the transformation's levels (ARX ``MetricMDHeight``; Samarati
  2001's "height" of a lattice node).
* **iloss** -- Xiao & Tao 2006 ("Personalized privacy preservation", SIGMOD):
  ``sum_records sum_i w_i (|v_g| - 1) / D_i`` with ``|v_g|`` leaves under the released value
  (for a numeric range: its width share, the continuous analogue).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sdckit.algorithms.base import SUPPRESSED
from sdckit.core.encoding import as_text, encode
from sdckit.core.frequency import FrequencySet, group_keys
from sdckit.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from sdckit.algorithms.base import AlgorithmOutput
    from sdckit.core.schema import Schema

__all__ = [
    "AGGREGATES",
    "METRICS",
    "LatticeMetrics",
    "MetricSpec",
    "aggregate_losses",
    "output_metrics",
    "parse_metric",
]

#: Metric names accepted by the searches (``non_uniform_entropy`` is an alias of ``entropy``).
METRICS = ("loss", "precision", "discernibility", "aecs", "entropy", "height", "iloss")
AGGREGATES = ("geometric", "arithmetic", "sum", "max")
_ALIASES = {"non_uniform_entropy": "entropy", "nue": "entropy", "dm": "discernibility"}


@dataclass(frozen=True)
class MetricSpec:
    """A metric to minimise: its name, the aggregate over attributes and per-QI weights."""

    name: str = "loss"
    aggregate: str = "geometric"
    weights: Mapping[str, float] | None = None

    def weight_vector(self, names: Sequence[str]) -> np.ndarray:
        """Weights aligned with ``names`` (1 where not given)."""
        w = dict(self.weights or {})
        unknown = [k for k in w if k not in names]
        if unknown:
            raise ConfigError(
                f"metric.weights: {unknown} are not quasi-identifiers (quasi-identifiers: "
                f"{list(names)}); give weights only for quasi-identifying attributes"
            )
        out = np.array([float(w.get(n, 1.0)) for n in names], dtype=float)
        if (out < 0).any() or not np.isfinite(out).all() or out.sum() <= 0:
            raise ConfigError(
                f"metric.weights must be finite numbers >= 0 with a positive sum, got {w}"
            )
        return out


def parse_metric(metric: str | Mapping[str, Any] | MetricSpec) -> MetricSpec:
    """Normalise ``"loss"`` / ``{"name": "loss", "aggregate": ..., "weights": {...}}``."""
    if isinstance(metric, MetricSpec):
        spec = metric
    elif isinstance(metric, str):
        spec = MetricSpec(name=metric)
    elif isinstance(metric, Mapping):
        unknown = set(metric) - {"name", "aggregate", "weights"}
        if unknown:
            raise ConfigError(
                f"metric: unknown key(s) {sorted(unknown)}; allowed: name, aggregate, weights"
            )
        spec = MetricSpec(
            name=metric.get("name", "loss"),
            aggregate=metric.get("aggregate", "geometric"),
            weights=metric.get("weights"),
        )
    else:
        raise ConfigError(f"metric must be a name such as 'loss' or a mapping, got {metric!r}")
    name = _ALIASES.get(str(spec.name), str(spec.name))
    if name not in METRICS:
        raise ConfigError(f"metric.name must be one of {', '.join(METRICS)}, got {spec.name!r}")
    if spec.aggregate not in AGGREGATES:
        raise ConfigError(
            f"metric.aggregate must be one of {', '.join(AGGREGATES)}, got {spec.aggregate!r}"
        )
    return MetricSpec(name, spec.aggregate, spec.weights)


def aggregate_losses(losses: np.ndarray, weights: np.ndarray, how: str = "geometric") -> np.ndarray:
    """Aggregate per-attribute losses (last axis) as ARX's ``AggregateFunction`` does.

    ``geometric``: ``prod (1 + l_i)^(w_i / sum w) - 1``; ``arithmetic``: weighted mean;
    ``sum``: ``sum w_i l_i``; ``max``: ``max w_i l_i``.
    """
    losses = np.asarray(losses, dtype=float)
    w = np.asarray(weights, dtype=float)
    if how == "geometric":
        return np.exp((np.log1p(losses) * (w / w.sum())).sum(axis=-1)) - 1.0
    if how == "arithmetic":
        return (losses * w).sum(axis=-1) / w.sum()
    if how == "sum":
        return (losses * w).sum(axis=-1)
    if how == "max":
        return (losses * w).max(axis=-1)
    raise ConfigError(f"metric.aggregate must be one of {', '.join(AGGREGATES)}, got {how!r}")


def _normalized_loss(share_sum: np.ndarray, n: float, domain: np.ndarray) -> np.ndarray:
    """``(sum share - n/D) / (n - n/D)``, 0 where ``D <= 1`` or ``n = 0``."""
    low = n / np.maximum(domain, 1)
    denom = n - low
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(denom > 0, (share_sum - low) / np.where(denom > 0, denom, 1.0), 0.0)
    return np.clip(out, 0.0, 1.0)


class LatticeMetrics:
    """The metrics of full-domain generalizations of one data set, on frequency sets.

    Built from the *ungeneralized* frequency set (``base``, levels all 0, codes = hierarchy
    leaf indices). Per attribute and level it precomputes the share of every code, the
    generalization-only sums of shares, levels and entropy costs over all records, so the
    lower bound of a node is a table look-up.
    """

    def __init__(self, base: FrequencySet, spec: MetricSpec | str = "loss") -> None:
        self.spec = parse_metric(spec)
        qis = base.quasi_identifiers
        if any(lv != 0 for lv in base.levels):
            raise ConfigError("LatticeMetrics needs the ungeneralized frequency set (levels 0)")
        self.names = [q.name for q in qis]
        self.weights = self.spec.weight_vector(self.names)
        self.n = float(base.n_records)
        self.m = len(qis)
        self.heights = np.array([q.height for q in qis], dtype=np.int64)
        self.domain = np.array([q.cardinality(0) for q in qis], dtype=float)
        self.share: list[list[np.ndarray]] = []  # [i][level][code] -> leaves under / D_i
        self.entropy_cost: list[list[np.ndarray]] = []  # [i][level][leaf] -> -log2 f/F
        self.entropy_root: list[np.ndarray] = []  # [i][leaf] -> -log2 f/n
        share_sum = np.zeros((self.m, int(self.heights.max(initial=1))))
        entropy_sum = np.zeros_like(share_sum)
        for i, q in enumerate(qis):
            freq = np.bincount(base.keys[:, i], weights=base.counts, minlength=q.cardinality(0))
            shares, costs = [], []
            for level in range(q.height):
                if q.hierarchy is not None:
                    under = q.hierarchy.leaves_under(level).astype(float)
                    leaf_to_code = q.step(0, level)
                else:
                    under = np.ones(q.cardinality(0))
                    leaf_to_code = np.arange(q.cardinality(0))
                sh = under / self.domain[i]
                shares.append(sh)
                big_f = np.bincount(leaf_to_code, weights=freq, minlength=len(under))[leaf_to_code]
                cost = _neg_log2_ratio(freq, big_f)
                costs.append(cost)
                share_sum[i, level] = (freq * sh[leaf_to_code]).sum()
                entropy_sum[i, level] = (freq * cost).sum()
            self.share.append(shares)
            self.entropy_cost.append(costs)
            self.entropy_root.append(_neg_log2_ratio(freq, np.full(len(freq), self.n)))
        self._share_sum = share_sum
        self._entropy_sum = entropy_sum
        self._base_keys = base.keys
        self._base_counts = base.counts.astype(float)

    # -- lower bounds (generalization only) ------------------------------------------------
    def lower_bounds(self, nodes: np.ndarray) -> np.ndarray:
        """Generalization-only cost of every level vector in ``nodes`` (shape ``(N, m)``).

        Equals the exact cost when nothing is suppressed; suppression only adds cost (a
        suppressed value is the root), so it is a lower bound, and it is monotone along
        generalization. For ``discernibility`` and ``aecs`` no cheap bound is known and the
        bound is 0 (the search then evaluates every node that is not pruned otherwise).
        """
        nodes = np.asarray(nodes, dtype=np.int64)
        name, cols = self.spec.name, np.arange(self.m)
        if name == "loss":
            sums = self._share_sum[cols, nodes]
            losses = _normalized_loss(sums, self.n, self.domain)
            return aggregate_losses(losses, self.weights, self.spec.aggregate)
        if name == "precision":
            top = np.maximum(self.heights - 1, 1)
            frac = np.where(self.heights > 1, nodes / top, 0.0)
            return (frac * self.weights).sum(axis=1) / self.weights.sum()
        if name == "height":
            return nodes.sum(axis=1).astype(float)
        if name == "entropy":
            return self._entropy_sum[cols, nodes].sum(axis=1)
        if name == "iloss":
            sums = self._share_sum[cols, nodes] - self.n / self.domain
            return (np.maximum(sums, 0.0) * self.weights).sum(axis=1)
        return np.zeros(len(nodes))

    # -- exact cost --------------------------------------------------------------------------
    def share_sums(self, fs: FrequencySet, suppressed: np.ndarray) -> np.ndarray:
        """Per attribute, the sum over records of the domain share (suppressed: 1)."""
        keep = ~suppressed
        counts = fs.counts.astype(float)
        n_supp = counts[suppressed].sum()
        out = np.empty(self.m)
        for i, level in enumerate(fs.levels):
            out[i] = (counts[keep] * self.share[i][level][fs.keys[keep, i]]).sum() + n_supp
        return out

    def cost(self, fs: FrequencySet, suppressed: np.ndarray) -> float:
        """The value the search minimises for ``fs`` with the classes ``suppressed``."""
        return float(self.values(fs, suppressed, (self.spec.name,))[self.spec.name])

    def values(
        self, fs: FrequencySet, suppressed: np.ndarray, which: Sequence[str] = METRICS
    ) -> dict[str, float]:
        """Metric values (``precision`` as ``1 - Prec`` here: lower is better)."""
        suppressed = np.asarray(suppressed, dtype=bool)
        counts = fs.counts.astype(float)
        n_supp = float(counts[suppressed].sum())
        out: dict[str, float] = {}
        for name in which:
            if name == "loss":
                losses = _normalized_loss(self.share_sums(fs, suppressed), self.n, self.domain)
                out[name] = float(aggregate_losses(losses, self.weights, self.spec.aggregate))
            elif name == "iloss":
                sums = self.share_sums(fs, suppressed) - self.n / self.domain
                out[name] = float((np.maximum(sums, 0.0) * self.weights).sum())
            elif name == "precision":
                top = np.maximum(self.heights - 1, 1)
                lv = np.asarray(fs.levels, dtype=float)
                per = np.where(self.heights > 1, ((self.n - n_supp) * lv + n_supp * top) / top, 0)
                out[name] = float((per * self.weights).sum() / (self.weights.sum() * self.n))
            elif name == "discernibility":
                kept = counts[~suppressed]
                out[name] = float((kept * kept).sum() + n_supp * self.n)
            elif name == "aecs":
                kept = counts[~suppressed]
                out[name] = float(kept.sum() / len(kept)) if len(kept) else 0.0
            elif name == "height":
                out[name] = float(sum(fs.levels))
            elif name == "entropy":
                out[name] = self._entropy_value(fs, suppressed)
            else:  # pragma: no cover - parse_metric rejects others
                raise ConfigError(f"unknown metric {name!r}")
        return out

    def _entropy_value(self, fs: FrequencySet, suppressed: np.ndarray) -> float:
        levels = np.asarray(fs.levels)
        total = float(self._entropy_sum[np.arange(self.m), levels].sum())
        if not suppressed.any():
            return total
        if fs.base_map is None and len(fs.counts) == len(self._base_counts) and not levels.any():
            base_supp = suppressed  # the base frequency set itself
        elif fs.base_map is None or len(fs.base_map) != len(self._base_counts):
            raise ConfigError(
                "non-uniform entropy with suppression needs a roll-up of the base frequency "
                "set (its base_map tells the original values of the suppressed records)"
            )
        else:
            base_supp = suppressed[fs.base_map]
        keys = self._base_keys[base_supp]
        counts = self._base_counts[base_supp]
        extra = 0.0
        for i in range(self.m):
            leaf = keys[:, i]
            delta = self.entropy_root[i][leaf] - self.entropy_cost[i][int(levels[i])][leaf]
            extra += float((counts * delta).sum())
        return total + extra


def _neg_log2_ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``-log2(num/den)`` where ``num > 0``, else 0."""
    out = np.zeros(len(num))
    ok = (num > 0) & (den > 0)
    out[ok] = -np.log2(num[ok] / den[ok])
    return out


# ---------------------------------------------------------------------------------------------
# Metrics of any released output (every algorithm)
# ---------------------------------------------------------------------------------------------
def output_metrics(
    original: pd.DataFrame,
    output: AlgorithmOutput,
    schema: Schema,
    metric: MetricSpec | str | Mapping[str, Any] = "loss",
) -> dict[str, float | None]:
    """All metrics of a released output, from its per-record shares and released labels.

    Returns ``loss``, ``precision`` (Sweeney's, higher is better), ``discernibility``,
    ``aecs``, ``non_uniform_entropy``, ``height`` and ``iloss``. ``loss`` uses the aggregate and
    weights of ``metric``. The minimum share of attribute ``i`` is ``1/D_i`` (``D_i`` leaves)
    when it has a hierarchy and 0 otherwise (a numeric point has width 0). ``precision`` and
    ``height`` use the transformation's levels when the output has one (full-domain
    algorithms); otherwise precision is ``1 - mean(share - min share)`` over records and QIs
    (the certainty penalty of Xu et al. 2006, the range analogue of ``h / HGV``) and height is
    ``None``. Entropy: ``F(g)`` sums ``f(v)`` over the original values ``v`` released as ``g``.
    """
    spec = parse_metric(metric)
    qis = [q for q in schema.quasi_identifiers if q in output.share]
    missing = [q for q in schema.quasi_identifiers if q not in output.share]
    if missing:
        raise ConfigError(f"the algorithm output has no domain shares for {missing}")
    supp = np.asarray(output.suppressed, dtype=bool)
    n = float(len(supp))
    m = len(qis)
    weights = spec.weight_vector(qis)
    low = np.zeros(m)
    share_sums = np.zeros(m)
    for i, q in enumerate(qis):
        h = schema.hierarchy(q)
        low[i] = 1.0 / len(h.leaves) if h is not None else 0.0
        share_sums[i] = float(np.asarray(output.share[q], dtype=float).sum())
    with np.errstate(divide="ignore", invalid="ignore"):
        denom = n - n * low
        losses = np.where(denom > 0, (share_sums - n * low) / np.where(denom > 0, denom, 1), 0.0)
    losses = np.clip(losses, 0.0, 1.0)
    result: dict[str, float | None] = {
        "loss": float(aggregate_losses(losses, weights, spec.aggregate)) if m else 0.0
    }
    trans = output.transformation
    if trans is not None and all(schema.hierarchy(q) is not None for q in qis):
        heights = np.array([schema.hierarchy(q).height for q in qis])
        top = np.maximum(heights - 1, 1)
        lv = np.array([trans[q] for q in qis], dtype=float)
        n_supp = float(supp.sum())
        per = np.where(heights > 1, ((n - n_supp) * lv + n_supp * top) / top, 0.0)
        result["precision"] = 1.0 - float(per.sum() / (n * m)) if n and m else 1.0
        result["height"] = float(sum(trans[q] for q in qis))
    else:
        pen = (share_sums - n * low) / np.where(1 - low > 0, 1 - low, 1)
        result["precision"] = 1.0 - float(pen.sum() / (n * m)) if n and m else 1.0
        result["height"] = None
    # classes of the released rows (non-suppressed)
    kept = output.data.loc[~supp, qis] if m else output.data.loc[~supp]
    counts = _class_sizes(kept, qis)
    result["discernibility"] = float((counts.astype(float) ** 2).sum() + supp.sum() * n)
    result["aecs"] = float(counts.sum() / len(counts)) if len(counts) else 0.0
    result["non_uniform_entropy"] = _output_entropy(original, output, qis, supp)
    result["iloss"] = float(((share_sums - n * low) * weights).sum())
    return result


def _class_sizes(frame: pd.DataFrame, qis: Sequence[str]) -> np.ndarray:
    """Sizes of the equivalence classes of ``frame`` on ``qis`` (one group-by, the engine's)."""
    if len(frame) == 0:
        return np.zeros(0, dtype=np.int64)
    encoded = [encode(frame[q], q) for q in qis]
    group, n_groups, _ = group_keys([e.codes for e in encoded], [e.cardinality for e in encoded])
    return np.bincount(group, minlength=n_groups)


def _output_entropy(
    original: pd.DataFrame, output: AlgorithmOutput, qis: Sequence[str], supp: np.ndarray
) -> float:
    """Gionis & Tassa's non-uniform entropy of a released output (see module docstring)."""
    n = len(supp)
    total = 0.0
    for q in qis:
        orig = encode(original[q].reset_index(drop=True), q)
        released = as_text(output.data[q].reset_index(drop=True))
        released = np.where(supp, SUPPRESSED, released)
        rel = encode(pd.Series(released), q)
        f = np.bincount(orig.codes, minlength=orig.cardinality).astype(float)
        is_root = rel.values == SUPPRESSED
        # distinct (value, released) pairs -> F(g) = sum of f(v) over values released as g
        _, _, rep = group_keys([orig.codes, rel.codes], [orig.cardinality, rel.cardinality])
        pv, pg = orig.codes[rep], rel.codes[rep]
        big_f = np.bincount(pg, weights=f[pv], minlength=rel.cardinality)
        big_f[is_root] = n
        per_record = _neg_log2_ratio(f[orig.codes], big_f[rel.codes])
        total += float(per_record.sum())
    return total

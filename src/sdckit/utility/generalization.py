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
  With ``gs_factor`` (ARX's generalization/suppression factor ``g``, default 0.5 as ARX):
  generalization weighs ``gF = 1`` if ``g <= 0.5`` else ``2 - 2g``, suppression ``sF = 2g`` if
  ``g < 0.5`` else 1; a kept record adds ``gF * share``, a suppressed one
  ``share + sF * (1 - share)`` (its share at the transformation's level), and the minimum is
  ``gF * n / D_i`` (ARX ``MetricMDNMLoss``). At 0.5 both factors are 1: the definition above.
* **aecs** -- average equivalence class size (LeFevre et al. 2006, "Mondrian"). Two
  conventions (``metric: {name: aecs, suppressed: ...}``): ``released`` (default)
  ``released records / released classes`` (``C_AVG = aecs / k``); ``as_class`` (ARX
  ``MetricSDAECS``) ``n / (released classes + 1)`` when records are suppressed -- all ``n``
  records, the suppressed ones forming one more class.
* **entropy** (``non_uniform_entropy``) -- Gionis & Tassa 2009 ("k-anonymization with
  minimal loss of information", IEEE TKDE 21(2)): each record costs
  ``sum_i -log2(f_i(v) / F_i(g))`` where ``v`` is its original value, ``g`` its released
  value, ``f_i(v)`` the number of records with value ``v`` and ``F_i(g)`` the number of
  records whose value lies under ``g`` (both over all ``n`` input records). Suppressed records
  (``metric: {name: entropy, suppressed: ...}``): ``root`` (default; sdckit's reading of
  Gionis & Tassa: a suppressed value is released as the root, ``F = n``); ``not_charged``
  (ARX's monotonic ``createEntropyMetric(true)``, ``MetricMDNUEntropyPrecomputed``: suppressed
  records cost what their generalization costs, suppression adds nothing); ``group`` (ARX's
  default non-monotonic ``MetricMDNUNMEntropy``: the generalization cost of every record plus,
  per attribute, ``-sum_g c_g log2(c_g / S)`` over the generalized values ``g`` of the ``S``
  suppressed records, ``c_g`` of them showing ``g``).
* **height** -- the sum of the transformation's levels (ARX ``MetricMDHeight``; Samarati
  2001's "height" of a lattice node).
* **publisher_payout** -- ARX's publisher payout (``MetricSDNMPublisherPayout``; Wan et al.
  2015, "A game theoretic framework for analyzing re-identification risk", PLoS ONE 10(3):
  e0120592): a released record of class ``c`` earns ``payout(c) = B (1 - IL(c)) - (L p if
  G p - C > 0 else 0)`` (:mod:`sdckit.models.profitability`: ``IL`` the entropy-based loss of
  its hierarchy levels, ``p = 1/|c|`` against a prosecutor, ``1/P`` with ``P`` the population
  class against a journalist), a suppressed one nothing; the search minimises
  ``gF sum_kept |c| (B - payout(c)) + sF B (suppressed records)`` (``gs_factor`` as for
  ``loss``), i.e. maximises the summed payout. Chosen as the search metric only (not among
  the metrics every release reports); not monotone along generalization (bigger classes
  lower ``p``), so the search does not skip the nodes above a satisfying one, and its lower
  bound ``gF B sum_records IL`` (no attack, nothing suppressed) is used only while
  ``sF >= gF`` (it is then below the cost).
* **iloss** -- Xiao & Tao 2006 ("Personalized privacy preservation", SIGMOD):
  ``sum_records sum_i w_i (|v_g| - 1) / D_i`` with ``|v_g|`` leaves under the released value
  (for a numeric range: its width share, the continuous analogue).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

import numpy as np
import pandas as pd
from pydantic import Field, field_validator, model_validator

from sdckit.core.encoding import EncodedColumn, encode
from sdckit.core.frequency import FrequencySet, group_keys
from sdckit.core.release import SUPPRESSED
from sdckit.core.spec import Number, Spec
from sdckit.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from sdckit.core.hierarchy import Hierarchy
    from sdckit.core.release import AlgorithmOutput
    from sdckit.core.schema import Schema

__all__ = [
    "AGGREGATES",
    "COST_BENEFIT_DEFAULTS",
    "METRICS",
    "SEARCH_METRICS",
    "LatticeMetrics",
    "MetricSpec",
    "aggregate_losses",
    "output_metrics",
    "parse_metric",
]

#: Metric names accepted by the searches (``non_uniform_entropy`` is an alias of ``entropy``).
METRICS = ("loss", "precision", "discernibility", "aecs", "entropy", "height", "iloss")
#: Metrics a search may minimise that are not among those every release reports (they need
#: parameters of their own).
SEARCH_METRICS = ("publisher_payout",)
#: ARX's default cost/benefit configuration (``ARXCostBenefitConfiguration``).
COST_BENEFIT_DEFAULTS = {
    "publisher_benefit": 1200.0,
    "publisher_loss": 300.0,
    "adversary_gain": 300.0,
    "adversary_cost": 4.0,
}
AGGREGATES = ("geometric", "arithmetic", "sum", "max")
_ALIASES = {"non_uniform_entropy": "entropy", "nue": "entropy", "dm": "discernibility"}


#: Conventions for suppressed records, per metric (the first is the default).
SUPPRESSED_CONVENTIONS = {
    "aecs": ("released", "as_class"),
    "entropy": ("root", "not_charged", "group"),
}


class MetricSpec(Spec):
    """A metric to minimise: its name, the aggregate over attributes and per-QI weights,
    ARX's generalization/suppression factor (``loss``) and the convention for suppressed
    records (``aecs``, ``entropy``; see the module docstring).

    Parameters
    ----------
    name : str
        One of :data:`METRICS` (aliases ``non_uniform_entropy``/``nue`` -> ``entropy``,
        ``dm`` -> ``discernibility``); default ``loss``.
    aggregate : {"geometric", "arithmetic", "sum", "max"}
        How per-attribute values are combined (ARX's ``AggregateFunction``).
    weights : dict, optional
        Per quasi-identifier weight (>= 0; 1 where not given).
    gs_factor : float
        ``loss`` only: ARX's generalization/suppression factor in [0, 1] (0 favours
        suppression, 1 generalization, 0.5 treats both alike).
    suppressed : str, optional
        ``aecs`` (``released`` | ``as_class``) and ``entropy`` (``root`` | ``not_charged``
        | ``group``) only: how suppressed records count.
    publisher_benefit, publisher_loss, adversary_gain, adversary_cost : float, optional
        ``publisher_payout`` only: the cost/benefit amounts (>= 0); unset, those of the job's
        profitability model, else ARX's defaults (1200, 300, 300, 4).
    attacker : {"prosecutor", "journalist"}
        ``publisher_payout`` only: the success probability ``1/|c|`` or ``1/P`` (the
        journalist's needs the job's ``profitability_journalist`` model and its population).

    Examples
    --------
    >>> MetricSpec("dm").name
    'discernibility'
    >>> MetricSpec("loss", gs_factor=0.2).s_factor
    0.4
    """

    spec_name: ClassVar[str] = "metric"

    name: str = "loss"
    aggregate: Literal["geometric", "arithmetic", "sum", "max"] = "geometric"
    weights: dict[str, Annotated[Number, Field(ge=0)]] | None = None
    gs_factor: Annotated[
        Number,
        Field(
            ge=0,
            le=1,
            description="ARX's generalization/suppression factor: 0 favours suppression, 1 "
            "generalization, 0.5 treats both alike",
        ),
    ] = 0.5
    suppressed: str | None = None
    publisher_benefit: Annotated[Number, Field(ge=0)] | None = None
    publisher_loss: Annotated[Number, Field(ge=0)] | None = None
    adversary_gain: Annotated[Number, Field(ge=0)] | None = None
    adversary_cost: Annotated[Number, Field(ge=0)] | None = None
    attacker: Literal["prosecutor", "journalist"] | None = None

    @field_validator("name", mode="before")
    @classmethod
    def _known_name(cls, value: Any) -> str:
        name = _ALIASES.get(str(value), str(value)) if isinstance(value, str) else value
        if name not in METRICS + SEARCH_METRICS:
            raise ValueError(f"must be one of {', '.join(METRICS + SEARCH_METRICS)}")
        return name

    @model_validator(mode="after")
    def _metric_options(self) -> MetricSpec:
        if self.gs_factor != 0.5 and self.name not in ("loss", "publisher_payout"):
            raise ValueError(
                f"gs_factor applies to the loss metric (and publisher_payout); metric "
                f"{self.name!r} takes none"
            )
        if self.name != "publisher_payout":
            given = [
                k for k in (*COST_BENEFIT_DEFAULTS, "attacker") if getattr(self, k) is not None
            ]
            if given:
                raise ValueError(
                    f"{', '.join(given)} set(s) the publisher_payout metric; metric "
                    f"{self.name!r} takes none"
                )
        if self.suppressed is not None:
            choices = SUPPRESSED_CONVENTIONS.get(self.name)
            if choices is None:
                raise ValueError(
                    "suppressed sets the convention of aecs or entropy; metric "
                    f"{self.name!r} has none"
                )
            if self.suppressed not in choices:
                raise ValueError(
                    f"suppressed for {self.name} must be one of {', '.join(choices)}, got "
                    f"{self.suppressed!r}"
                )
        object.__setattr__(self, "gs_factor", float(self.gs_factor))
        return self

    @property
    def monotonic_with_generalization(self) -> bool:
        """Whether a coarser transformation without suppression never costs less (false for
        ``publisher_payout``: bigger classes lower the adversary's success probability)."""
        return self.name != "publisher_payout"

    def amount(self, name: str) -> float:
        """A cost/benefit amount of ``publisher_payout``: the spec's, else ARX's default."""
        value = getattr(self, name)
        return float(COST_BENEFIT_DEFAULTS[name] if value is None else value)

    @property
    def g_factor(self) -> float:
        """ARX's generalization factor: 1 up to ``gs_factor = 0.5``, then down to 0 at 1."""
        return 1.0 if self.gs_factor <= 0.5 else 1.0 - 2.0 * (self.gs_factor - 0.5)

    @property
    def s_factor(self) -> float:
        """ARX's suppression factor: ``2 * gs_factor`` below 0.5, else 1."""
        return 2.0 * self.gs_factor if self.gs_factor < 0.5 else 1.0

    def convention(self, metric: str) -> str:
        """The suppressed-record convention this spec gives ``metric`` (``aecs`` or
        ``entropy``): the spec's own when it is that metric, else the default."""
        if metric == self.name and self.suppressed is not None:
            return self.suppressed
        return SUPPRESSED_CONVENTIONS[metric][0]

    def conventions(self) -> dict[str, Any]:
        """What the JSON states next to the values: the convention behind each metric."""
        out: dict[str, Any] = {
            "loss_gs_factor": self.gs_factor if self.name == "loss" else 0.5,
            "aecs_suppressed": self.convention("aecs"),
            "non_uniform_entropy_suppressed": self.convention("entropy"),
        }
        if self.name == "publisher_payout":  # the amounts ARX's payout metric was run with
            out["publisher_payout"] = {
                "gs_factor": self.gs_factor,
                "attacker": self.attacker or "prosecutor",
                **{k: self.amount(k) for k in COST_BENEFIT_DEFAULTS},
            }
        return out

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


def parse_metric(metric: str | Mapping[str, Any] | MetricSpec | None) -> MetricSpec:
    """``"loss"`` / ``{"name": "loss", "aggregate": ..., "weights": {...}}`` / a
    :class:`MetricSpec` -> a :class:`MetricSpec` (``None``: the default, ``loss``).

    A bad value raises :class:`~sdckit.errors.ParameterError` naming ``metric.<key>``.
    """
    if metric is None:
        return MetricSpec()
    if isinstance(metric, MetricSpec):
        return metric
    if isinstance(metric, str):
        return MetricSpec.from_dict({"name": metric}, "metric")
    if isinstance(metric, Mapping):
        return MetricSpec.from_dict(metric, "metric")
    raise ConfigError(f"metric must be a name such as 'loss' or a mapping, got {metric!r}")


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


def _normalized_loss(
    share_sum: np.ndarray, n: float, domain: np.ndarray, g_factor: float = 1.0
) -> np.ndarray:
    """``(sum share - gF n/D) / (n - gF n/D)``, 0 where ``D <= 1`` or ``n = 0`` (ARX's
    normalization; ``gF`` the generalization factor, 1 by default)."""
    low = g_factor * n / np.maximum(domain, 1)
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

    def __init__(
        self,
        base: FrequencySet,
        spec: MetricSpec | str = "loss",
        marginals: Sequence[np.ndarray] | None = None,
        success: Callable[[FrequencySet], np.ndarray] | None = None,
    ) -> None:
        """``marginals``: per QI, the records per leaf code, when ``base`` does not hold the
        classes itself (the Spark engine keeps them on the cluster and passes a frequency
        set of the QIs without classes); then the entropy charge of suppressed records is
        given per call (:meth:`partials`' ``base_keys``). ``success``: for
        ``publisher_payout`` against a journalist, per class of a frequency set the
        adversary's success probability (the profitability model's, from its population);
        by default ``1/|c|`` (prosecutor)."""
        self.spec = parse_metric(spec)
        self._success = success
        qis = base.quasi_identifiers
        if any(lv != 0 for lv in base.levels):
            raise ConfigError("LatticeMetrics needs the ungeneralized frequency set (levels 0)")
        self.names = [q.name for q in qis]
        self.weights = self.spec.weight_vector(self.names)
        if marginals is None:
            self.n = float(base.n_records)
        else:
            self.n = float(sum(int(np.asarray(f).sum()) for f in marginals[:1]))
        self.m = len(qis)
        self.heights = np.array([q.height for q in qis], dtype=np.int64)
        self.domain = np.array([q.cardinality(0) for q in qis], dtype=float)
        self.share: list[list[np.ndarray]] = []  # [i][level][code] -> leaves under / D_i
        self.entropy_cost: list[list[np.ndarray]] = []  # [i][level][leaf] -> -log2 f/F
        self.entropy_root: list[np.ndarray] = []  # [i][leaf] -> -log2 f/n
        share_sum = np.zeros((self.m, int(self.heights.max(initial=1))))
        entropy_sum = np.zeros_like(share_sum)
        # sum over records of log10(leaves under), or for ARX's interval shares of log10(the
        # interval's width): the publisher payout's information loss times log10 prod D_i
        log_under_sum = np.zeros_like(share_sum)
        il_domain = self.domain.copy()  # D_i of that loss (the range's width for intervals)
        for i, q in enumerate(qis):
            intervals = None if q.hierarchy is None else q.hierarchy.interval_shares
            if intervals is not None:
                il_domain[i] = intervals.domain_size
            if marginals is None:
                freq = np.bincount(base.keys[:, i], weights=base.counts, minlength=q.cardinality(0))
            else:
                freq = np.asarray(marginals[i], dtype=float)
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
                units = under if intervals is None else intervals.shares[level] * il_domain[i]
                log_under_sum[i, level] = (freq * np.log10(units)[leaf_to_code]).sum()
                entropy_sum[i, level] = (freq * cost).sum()
            self.share.append(shares)
            self.entropy_cost.append(costs)
            self.entropy_root.append(_neg_log2_ratio(freq, np.full(len(freq), self.n)))
        self._share_sum = share_sum
        self._log_under_sum = log_under_sum
        self._max_il = float(np.log10(np.prod(il_domain))) if self.m else 0.0
        # the bound below holds while no share exceeds 1 (an interval range narrower than one
        # unit gives its values 1 / D_i > 1; the bound is then 0)
        self._il_bound = bool((il_domain >= 1).all())
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
            # the loss of every attribute at every level once (a small table), then looked
            # up per node: elementwise, so each node gets the values computing them per node
            # would give, and the per-node aggregation is unchanged
            g = self.spec.g_factor
            table = _normalized_loss(g * self._share_sum, self.n, self.domain[:, None], g)
            if self.spec.aggregate == "geometric":  # as aggregate_losses, log1p per table cell
                w = np.asarray(self.weights, dtype=float)
                terms = np.log1p(table) * (w / w.sum())[:, None]
                return np.exp(terms[cols, nodes].sum(axis=-1)) - 1.0
            return aggregate_losses(table[cols, nodes], self.weights, self.spec.aggregate)
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
        if name == "publisher_payout" and self.spec.s_factor >= self.spec.g_factor:
            # every record at least gF B IL: a kept one loses B IL and maybe its expected
            # fine, a suppressed one sF B >= gF B >= gF B IL
            if self._max_il <= 0 or not self._il_bound:
                return np.zeros(len(nodes))
            il_sum = self._log_under_sum[cols, nodes].sum(axis=-1) / self._max_il
            g = self.spec.g_factor
            return g * self.spec.amount("publisher_benefit") * np.clip(il_sum, 0.0, self.n)
        return np.zeros(len(nodes))

    # -- the price of suppressing one more class ----------------------------------------------
    def suppression_prices(self, fs: FrequencySet, suppressed: np.ndarray) -> np.ndarray | None:
        """Per class of ``fs``, the first-order change of the cost (:meth:`cost`) when that
        class is suppressed too, on top of ``suppressed``: the gradient of the metric in
        the per-attribute share sums times the class's change of them (exact for
        ``iloss`` and for ``loss`` aggregated by ``arithmetic``/``sum``, a linearization
        for ``geometric``/``max``). ``None`` where classes of equal size have equal prices
        (``aecs``, ``discernibility``, ``precision``, ``height``) or where no per-class
        price exists (``entropy``: a suppressed record's charge depends on the others).
        Used to choose, among classes a global model treats alike, the cheapest ones
        (:func:`sdckit.models.base.enforce_global_models`)."""
        name = self.spec.name
        if name not in ("loss", "iloss") or not self.m:
            return None
        codes = fs.keys.T.astype(np.intp)
        share = np.stack(
            [np.take(self.share[i][level], codes[i]) for i, level in enumerate(fs.levels)],
            axis=1,
        )  # (classes, attributes)
        counts = fs.counts.astype(float)[:, None]
        if name == "iloss":
            return ((counts * (1.0 - share)) * self.weights).sum(axis=1)
        g, s_factor = self.spec.g_factor, self.spec.s_factor
        # per record: kept gF * share; suppressed share + sF (1 - share) (ARX)
        delta = counts * (share + s_factor * (1.0 - share) - g * share)
        p = self.partials(fs, suppressed, ("loss",))
        n_supp = float(p["n_supp"])
        if g == 1.0 and s_factor == 1.0:
            sums = p["share_kept"] + n_supp
        else:
            sums = g * p["share_kept"] + (p["share_supp"] + s_factor * (n_supp - p["share_supp"]))
        losses = _normalized_loss(sums, self.n, self.domain, g)
        low = g * self.n / np.maximum(self.domain, 1)
        denom = self.n - low
        slope = np.where(denom > 0, 1.0 / np.where(denom > 0, denom, 1.0), 0.0)
        w = np.asarray(self.weights, dtype=float)
        how = self.spec.aggregate
        if how == "geometric":
            total = float(aggregate_losses(losses, w, how))
            grad = (1.0 + total) * (w / w.sum()) / (1.0 + losses)
        elif how == "arithmetic":
            grad = w / w.sum()
        elif how == "sum":
            grad = w.copy()
        else:  # max: the attribute that sets the maximum
            grad = np.zeros(self.m)
            grad[int(np.argmax(losses * w))] = w[int(np.argmax(losses * w))]
        return (delta * (grad * slope)).sum(axis=1)

    # -- exact cost --------------------------------------------------------------------------
    def share_sums(self, fs: FrequencySet, suppressed: np.ndarray) -> np.ndarray:
        """Per attribute, the sum over records of the domain share (suppressed: 1)."""
        p = self.partials(fs, suppressed, ("iloss",))
        return p["share_kept"] + p["n_supp"]

    def cost(self, fs: FrequencySet, suppressed: np.ndarray) -> float:
        """The value the search minimises for ``fs`` with the classes ``suppressed``."""
        return float(self.values(fs, suppressed, (self.spec.name,))[self.spec.name])

    def values(
        self, fs: FrequencySet, suppressed: np.ndarray, which: Sequence[str] = METRICS
    ) -> dict[str, float]:
        """Metric values (``precision`` as ``1 - Prec`` here: lower is better)."""
        return self.values_from(self.partials(fs, suppressed, which), fs.levels, which)

    def partials(
        self,
        fs: FrequencySet,
        suppressed: np.ndarray,
        which: Sequence[str] = METRICS,
        base_keys: np.ndarray | None = None,
        base_counts: np.ndarray | None = None,
    ) -> dict[str, Any]:
        """The sums over classes the metrics ``which`` are made of, for ``fs`` with the
        classes ``suppressed``: each entry is a sum over classes (arrays: one sum per
        attribute or code), so the partials of disjoint sets of classes add up to the
        partials of their union -- which is how the Spark engine evaluates a node whose
        classes are spread over executors (:meth:`add_partials`, then
        :meth:`values_from`). ``base_keys``/``base_counts``: the base classes ``fs`` was
        rolled up from (``fs.base_map`` maps them), for the entropy charge of suppressed
        records; by default the base this object was built from."""
        suppressed = np.asarray(suppressed, dtype=bool)
        counts = fs.counts.astype(float)
        keep = ~suppressed
        kept = counts[keep]
        out: dict[str, Any] = {"n_supp": float(counts[suppressed].sum())}
        names = set(which)
        if names & {"aecs", "discernibility"}:
            out["kept_records"] = float(kept.sum())
            out["kept_classes"] = float(len(kept))
            out["kept_squares"] = float((kept * kept).sum())
        if names & {"loss", "iloss"}:
            codes = fs.keys[keep].T.astype(np.intp)  # per attribute, contiguous: fast look-ups
            out["share_kept"] = np.array(
                [(kept * np.take(self.share[i][level], codes[i])).sum()
                 for i, level in enumerate(fs.levels)]
            ) if self.m else np.zeros(0)  # fmt: skip
            if "loss" in names and (self.spec.g_factor != 1.0 or self.spec.s_factor != 1.0):
                supp = counts[suppressed]
                codes_s = fs.keys[suppressed].T.astype(np.intp)
                out["share_supp"] = np.array(
                    [(supp * np.take(self.share[i][level], codes_s[i])).sum()
                     for i, level in enumerate(fs.levels)]
                ) if self.m else np.zeros(0)  # fmt: skip
        if "publisher_payout" in names:
            out["payout_kept"] = self._payout_kept(fs, keep)
        if "entropy" in names and suppressed.any():
            convention = self.spec.convention("entropy")
            if convention == "group":
                out["entropy_group"] = [
                    np.bincount(
                        fs.keys[suppressed, i],
                        weights=counts[suppressed],
                        minlength=fs.quasi_identifiers[i].cardinality(fs.levels[i]),
                    )
                    for i in range(self.m)
                ]
            elif convention != "not_charged":
                out["entropy_extra"] = self._entropy_extra(fs, suppressed, base_keys, base_counts)
        return out

    @staticmethod
    def add_partials(parts: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """The partials of the union of disjoint sets of classes (entrywise sums)."""
        out: dict[str, Any] = {}
        for part in parts:
            for key, value in part.items():
                if key not in out:
                    out[key] = [np.array(v) for v in value] if isinstance(value, list) else value
                elif isinstance(value, list):
                    out[key] = [a + b for a, b in zip(out[key], value, strict=True)]
                else:
                    out[key] = out[key] + value
        return out

    def values_from(
        self, partials: Mapping[str, Any], levels: Sequence[int], which: Sequence[str] = METRICS
    ) -> dict[str, float]:
        """The metric values ``which`` of a node at ``levels`` from its :meth:`partials`."""
        n_supp = float(partials["n_supp"])
        out: dict[str, float] = {}
        for name in which:
            if name == "loss":
                g, s = self.spec.g_factor, self.spec.s_factor
                if g == 1.0 and s == 1.0:
                    sums = partials["share_kept"] + n_supp
                else:  # ARX: gF * share for kept records, share + sF (1 - share) suppressed
                    supp = partials["share_supp"]
                    sums = g * partials["share_kept"] + (supp + s * (n_supp - supp))
                losses = _normalized_loss(sums, self.n, self.domain, g)
                out[name] = float(aggregate_losses(losses, self.weights, self.spec.aggregate))
            elif name == "iloss":
                sums = partials["share_kept"] + n_supp - self.n / self.domain
                out[name] = float((np.maximum(sums, 0.0) * self.weights).sum())
            elif name == "precision":
                top = np.maximum(self.heights - 1, 1)
                lv = np.asarray(levels, dtype=float)
                per = np.where(self.heights > 1, ((self.n - n_supp) * lv + n_supp * top) / top, 0)
                out[name] = float((per * self.weights).sum() / (self.weights.sum() * self.n))
            elif name == "discernibility":
                out[name] = float(partials["kept_squares"] + n_supp * self.n)
            elif name == "aecs":
                out[name] = aecs_of_sums(
                    partials["kept_records"],
                    int(partials["kept_classes"]),
                    n_supp,
                    self.spec.convention("aecs"),
                )
            elif name == "height":
                out[name] = float(sum(levels))
            elif name == "publisher_payout":
                b = self.spec.amount("publisher_benefit")
                kept_records = self.n - n_supp
                out[name] = float(
                    self.spec.g_factor * (kept_records * b - float(partials["payout_kept"]))
                    + self.spec.s_factor * n_supp * b
                )
            elif name == "entropy":
                total = float(self._entropy_sum[np.arange(self.m), np.asarray(levels)].sum())
                if "entropy_group" in partials:
                    total += _group_entropy_of_counts(partials["entropy_group"])
                elif "entropy_extra" in partials:
                    total += float(partials["entropy_extra"])
                out[name] = total
            else:  # pragma: no cover - parse_metric rejects others
                raise ConfigError(f"unknown metric {name!r}")
        return out

    def _payout_kept(self, fs: FrequencySet, keep: np.ndarray) -> float:
        """The publisher's summed expected payout over the kept classes of ``fs``
        (:mod:`sdckit.models.profitability`, the same definitions as the models)."""
        from sdckit.models.profitability import information_loss, publisher_payout

        if not keep.any():
            return 0.0
        if self._success is not None:
            success = np.asarray(self._success(fs), dtype=float)
        else:
            success = 1.0 / np.maximum(fs.counts, 1).astype(float)
        amount = self.spec.amount
        payout, _ = publisher_payout(
            information_loss(fs),
            success,
            amount("publisher_benefit"),
            amount("publisher_loss"),
            amount("adversary_gain"),
            amount("adversary_cost"),
        )
        return float((fs.counts[keep].astype(float) * payout[keep]).sum())

    def _entropy_extra(
        self,
        fs: FrequencySet,
        suppressed: np.ndarray,
        base_keys: np.ndarray | None,
        base_counts: np.ndarray | None,
    ) -> float:
        """The entropy charge of the suppressed records beyond their generalized values':
        per record, ``-log2 f/n`` of its original value instead of ``-log2 f/F``."""
        levels = np.asarray(fs.levels)
        keys_all = self._base_keys if base_keys is None else base_keys
        counts_all = self._base_counts if base_counts is None else np.asarray(base_counts, float)
        if fs.base_map is None and len(fs.counts) == len(counts_all) and not levels.any():
            base_supp = suppressed  # the base frequency set itself
        elif fs.base_map is None or len(fs.base_map) != len(counts_all):
            raise ConfigError(
                "non-uniform entropy with suppression needs a roll-up of the base frequency "
                "set (its base_map tells the original values of the suppressed records)"
            )
        else:
            base_supp = suppressed[fs.base_map]
        keys = keys_all[base_supp]
        counts = counts_all[base_supp]
        extra = 0.0
        for i in range(self.m):
            leaf = keys[:, i]
            delta = self.entropy_root[i][leaf] - self.entropy_cost[i][int(levels[i])][leaf]
            extra += float((counts * delta).sum())
        return extra


def aecs(kept_counts: np.ndarray, n_suppressed: float, convention: str = "released") -> float:
    """Average equivalence class size (LeFevre et al. 2006) of the released classes
    ``kept_counts``: ``released`` -- released records / released classes; ``as_class`` (ARX
    ``MetricSDAECS``) -- all records / (released classes + 1 when records are suppressed)."""
    kept = np.asarray(kept_counts, dtype=float)
    return aecs_of_sums(float(kept.sum()), len(kept), n_suppressed, convention)


def aecs_of_sums(
    kept_records: float, kept_classes: int, n_suppressed: float, convention: str = "released"
) -> float:
    """:func:`aecs` from the released records and classes (what a sum over classes gives)."""
    if convention == "as_class":
        classes = kept_classes + (1 if n_suppressed > 0 else 0)
        return float((kept_records + n_suppressed) / classes) if classes else 0.0
    return float(kept_records / kept_classes) if kept_classes else 0.0


def _group_entropy(keys: np.ndarray, counts: np.ndarray) -> float:
    """ARX ``MetricMDNUNMEntropy``'s charge for the suppressed records: per attribute,
    ``-sum_g c_g log2(c_g / S)`` over the generalized values ``g`` (the rows of ``keys``) of
    the ``S`` suppressed records."""
    counts = np.asarray(counts, dtype=float)
    return _group_entropy_of_counts(
        [np.bincount(keys[:, i], weights=counts) for i in range(keys.shape[1])]
    )


def _group_entropy_of_counts(per_attribute: Sequence[np.ndarray]) -> float:
    """:func:`_group_entropy` from the suppressed records per generalized value of each
    attribute (``per_attribute[i][g]``)."""
    out = 0.0
    for counts in per_attribute:
        c = np.asarray(counts, dtype=float)
        total_s = c.sum()
        if total_s <= 0:
            return 0.0
        c = c[c > 0]
        out += float(-(c * np.log2(c / total_s)).sum())
    return out


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
    ``None``. Entropy: for full-domain outputs ``F(g)`` counts the records whose value lies
    under ``g`` in the hierarchy; otherwise it sums ``f(v)`` over the original values ``v``
    released as ``g`` (the records "under" a Mondrian range or TDS value). ``discernibility``
    and ``aecs`` count the classes by the QI labels, or by the columns of
    ``output.details["verification_key"]`` when the algorithm names its classes (Anatomy's
    QI-groups, Xiao & Tao 2006: an intruder links a record to its group, not to its labels).
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
    loss_sums = np.zeros(m)
    g, s = spec.g_factor, spec.s_factor
    trans: Mapping[str, int] = output.transformation or {}
    full_domain = output.transformation is not None and all(
        schema.hierarchy(q) is not None for q in qis
    )
    for i, q in enumerate(qis):
        h = schema.hierarchy(q)
        low[i] = 1.0 / len(h.leaves) if h is not None else 0.0
        shares = np.asarray(output.share[q], dtype=float)
        share_sums[i] = float(shares.sum())
        loss_sums[i] = g * float(shares[~supp].sum())
        if supp.any() and s != 1.0:  # ARX: share + sF * (1 - share) at the node's level
            if not full_domain:
                raise ConfigError(
                    "metric.gs_factor below 0.5 with suppressed records needs a full-domain "
                    "generalization (optimal, datafly): the share a suppressed record had "
                    "before suppression is known only there"
                )
            assert h is not None  # full-domain: every QI has its hierarchy
            level = int(trans[q])
            leaf = h.leaf_index(original[q].to_numpy()[supp], column=q)
            before = h.leaves_under(level)[h.levels[level][leaf]] / len(h.leaves)
            loss_sums[i] += float((before + s * (1.0 - before)).sum())
        else:
            loss_sums[i] += float(shares[supp].sum())
    with np.errstate(divide="ignore", invalid="ignore"):
        denom = n - g * n * low
        losses = np.where(denom > 0, (loss_sums - g * n * low) / np.where(denom > 0, denom, 1), 0.0)
    losses = np.clip(losses, 0.0, 1.0)
    result: dict[str, float | None] = {
        "loss": float(aggregate_losses(losses, weights, spec.aggregate)) if m else 0.0
    }
    if full_domain:
        heights = np.array([_hierarchy_of(schema, q).height for q in qis])
        top = np.maximum(heights - 1, 1)
        lv = np.array([trans[q] for q in qis], dtype=np.float64)
        n_supp = float(supp.sum())
        per = np.where(heights > 1, ((n - n_supp) * lv + n_supp * top) / top, 0.0)
        result["precision"] = 1.0 - float(per.sum() / (n * m)) if n and m else 1.0
        result["height"] = float(sum(trans[q] for q in qis))
    else:
        pen = (share_sums - n * low) / np.where(1 - low > 0, 1 - low, 1)
        result["precision"] = 1.0 - float(pen.sum() / (n * m)) if n and m else 1.0
        result["height"] = None
    # classes of the released rows (non-suppressed): by their QI labels, or by the columns
    # the algorithm names as its classes (Anatomy's QI-groups: group_id)
    key = list(output.details.get("verification_key") or qis)
    kept = output.data.loc[~supp, key] if key else output.data.loc[~supp]
    counts = _class_sizes(kept, key)
    result["discernibility"] = float((counts.astype(float) ** 2).sum() + supp.sum() * n)
    result["aecs"] = aecs(counts, float(supp.sum()), spec.convention("aecs"))
    convention = spec.convention("entropy")
    if full_domain:
        result["non_uniform_entropy"] = _full_domain_entropy(
            original, trans, schema, qis, supp, convention
        )
    else:
        if supp.any() and convention != "root":
            raise ConfigError(
                f"non-uniform entropy with suppressed: {convention} needs a full-domain "
                "generalization (optimal, datafly): the generalized value of a suppressed "
                "record is known only there"
            )
        result["non_uniform_entropy"] = _output_entropy(original, output, qis, supp)
    result["iloss"] = float(((share_sums - n * low) * weights).sum())
    return result


def _hierarchy_of(schema: Schema, name: str) -> Hierarchy:
    """The hierarchy of ``name`` where the caller knows it has one (full-domain outputs)."""
    h = schema.hierarchy(name)
    if h is None:  # pragma: no cover - callers check full_domain first
        raise ConfigError(f"quasi-identifier {name!r} has no hierarchy")
    return h


def _class_sizes(frame: pd.DataFrame, qis: Sequence[str]) -> np.ndarray:
    """Sizes of the equivalence classes of ``frame`` on ``qis`` (one group-by, the engine's)."""
    if len(frame) == 0:
        return np.zeros(0, dtype=np.int64)
    encoded = [encode(frame[q], q) for q in qis]
    group, n_groups, _ = group_keys([e.codes for e in encoded], [e.cardinality for e in encoded])
    return np.bincount(group, minlength=n_groups)


def _full_domain_entropy(
    original: pd.DataFrame,
    transformation: Mapping[str, int],
    schema: Schema,
    qis: Sequence[str],
    supp: np.ndarray,
    convention: str = "root",
) -> float:
    """Non-uniform entropy of a full-domain generalization: ``F(g)`` from the hierarchy;
    suppressed records as ``convention`` says (module docstring)."""
    from sdckit.core.frequency import encode_quasi_identifier

    n = float(len(supp))
    total = 0.0
    for q in qis:
        enc = encode_quasi_identifier(original[q], q, schema.hierarchy(q))
        f = np.bincount(enc.codes, minlength=enc.cardinality(0)).astype(float)
        to_code = enc.step(0, int(transformation[q]))
        big_f = np.bincount(to_code, weights=f)[to_code]  # per leaf: records under its g
        cost = _neg_log2_ratio(f, big_f)
        root = _neg_log2_ratio(f, np.full(len(f), n))
        per_leaf_records = np.bincount(enc.codes[~supp], minlength=len(f))
        supp_records = f - per_leaf_records
        if convention == "root":
            total += float((per_leaf_records * cost).sum() + (supp_records * root).sum())
            continue
        total += float((f * cost).sum())  # every record at its generalization
        if convention == "group" and supp.any():
            total += _group_entropy(to_code[enc.codes[supp]][:, None], np.ones(int(supp.sum())))
    return total


def _output_entropy(
    original: pd.DataFrame, output: AlgorithmOutput, qis: Sequence[str], supp: np.ndarray
) -> float:
    """Gionis & Tassa's non-uniform entropy of a released output (see module docstring)."""
    n = len(supp)
    total = 0.0
    for q in qis:
        orig = encode(original[q].reset_index(drop=True), q)
        rel = encode(output.data[q].reset_index(drop=True), q)
        if supp.any():
            star = np.flatnonzero(rel.values == SUPPRESSED)
            values = rel.values if star.size else np.append(rel.values, SUPPRESSED)
            codes = rel.codes.copy()
            codes[supp] = star[0] if star.size else len(rel.values)
            rel = EncodedColumn(q, codes, values)
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

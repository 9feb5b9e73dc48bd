"""Privacy models as predicates over a frequency set.

A privacy model never reads rows. It is evaluated on a
:class:`~sdckit.core.frequency.FrequencySet` (the equivalence classes of the quasi-identifiers
at some generalization levels) and answers, per class, whether the class violates it. This is
how ARX evaluates its ``PrivacyCriterion`` objects on the entries of its ``HashGroupify``
table (Prasser & Kohlmayer, "Putting statistical disclosure control into practice: the ARX
data anonymization tool", 2015; Kohlmayer et al., "Flash", 2012).

Protocol used by the anonymization algorithms:

1. :meth:`PrivacyModel.prepare` is called once with the *ungeneralized* frequency set of all
   records (t-closeness stores the overall distribution here, delta-presence/k-map encode the
   population table).
2. :meth:`PrivacyModel.evaluate` is called on a generalized frequency set; the records of the
   violating classes are suppressed (within the suppression limit) and the model is evaluated
   again on ``fs.select(~violating)``.

Class-level ("local") models flag the violating classes. Global models (average risk, sample
uniqueness) have no per-class verdict: when they fail, ``violating`` is all ``False`` and
``satisfied`` is ``False``.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from sdckit.core.frequency import FrequencySet
from sdckit.core.spec import Spec, json_ready
from sdckit.errors import NoSolutionError

__all__ = ["ModelResult", "PrivacyModel", "json_ready", "settle_group_models"]


@dataclass
class ModelResult:
    """The verdict of one privacy model on one frequency set.

    ``violating`` has one entry per class of the evaluated frequency set (all ``False`` for a
    global model, whose failure is reported by ``satisfied`` alone). ``details`` holds
    JSON-ready facts (minimum class size, worst distance, ...).

    ``class_values`` is, where the model has one, the per-class quantity the verdict was
    taken on (t-closeness: each class's distance), for algorithms (e.g.
    :meth:`PrivacyModel.finer_violations`); it is not part of the JSON facts.
    """

    model: str
    satisfied: bool
    violating: np.ndarray
    details: dict = field(default_factory=dict)
    class_values: np.ndarray | None = field(default=None, repr=False)

    @property
    def n_violating_classes(self) -> int:
        """Number of classes that violate the model."""
        return int(np.count_nonzero(self.violating))


class PrivacyModel(Spec):
    """A privacy model (ARX: ``PrivacyCriterion``) evaluated on a frequency set.

    A model is a frozen :class:`~sdckit.core.spec.Spec`: its parameters are declared fields,
    validated once when it is built (from Python or from a job file's ``models:`` entry named
    by ``spec_name``); what :meth:`prepare` computes from the data is kept in private
    attributes, never in the parameters.

    Class attributes (documented per model, following ARX's ``isMonotonicWithSuppression``
    and ``isMonotonicWithGeneralization``):

    * ``monotonic`` -- ARX ``isMonotonicWithSuppression``: a class that satisfies the model
      still does after it is merged with any other class (also a violating, to-be-suppressed
      one), so a violation can only disappear by generalizing, the violating records never
      increase along a generalization path, and lattice searches may prune with it.
    * ``monotonic_with_generalization`` -- ARX ``isMonotonicWithGeneralization``: if all
      classes of a transformation satisfy the model, all classes of every coarser
      transformation do (ARX's default: ``True``).
    * ``is_global`` -- the model is a property of the whole release, not of single classes.
    * ``bounds_finer_violations`` -- :meth:`finer_violations` gives a nonzero lower bound on
      the violating records at every finer transformation although the model is not
      monotonic, which lets a lattice search prune below a failing node.
    * ``reports_checks`` -- the details of the model's verification on a release state
      what the release was checked against beyond the parameters (a derived threshold), so
      the release's ``model_checks`` (JSON and report) carry them, as they carry every
      global model's and every full-domain model's.
    * ``class_local`` -- a class's verdict depends on that class alone. ``False`` for models
      that judge groups of classes sharing some QI values (LKC-privacy, confidence
      bounding): suppressing some classes changes the groups of the others, which can then
      violate, so algorithms re-evaluate them on the released classes until none violates
      (:func:`settle_group_models`).
    """

    monotonic: ClassVar[bool] = False
    monotonic_with_generalization: ClassVar[bool] = True
    is_global: ClassVar[bool] = False
    bounds_finer_violations: ClassVar[bool] = False
    class_local: ClassVar[bool] = True
    reports_checks: ClassVar[bool] = False

    @property
    @abstractmethod
    def name(self) -> str:
        """Human-readable name, e.g. ``"5-anonymity"``."""

    @property
    def sensitive_attributes(self) -> tuple[str, ...]:
        """Attributes whose (classes x values) histograms the model needs."""
        return ()

    def minimal_class_size(self) -> int:
        """A class smaller than this always violates the model (ARX ``getMinimalClassSize``).

        Algorithms may use it to prune; 1 means no such bound.
        """
        return 1

    def minimal_population_class_size(self) -> tuple[FrequencySet, int] | None:
        """For a model that compares each released class with the population records it
        covers (k-map, δ-presence with a population table; after :meth:`prepare`):
        ``(population, m)``, the population's classes at leaf level and the fewest population
        records a class must cover -- a released class whose population class has fewer than
        ``m`` records always violates the model. Algorithms may prune with it as with
        :meth:`minimal_class_size`. Default: None (no such bound)."""
        return None

    def finer_violations(self, fs: FrequencySet, result: ModelResult) -> float:
        """Lower bound on the records violating the model at every finer transformation.

        ``result`` is :meth:`evaluate` of ``fs``; "finer" means every transformation whose
        classes are subsets of the classes of ``fs`` (``fs`` itself included). A lattice
        search may skip every node below a failing node whose bound exceeds the suppression
        budget. Default: a monotonic model's own violating records (they never decrease
        towards finer transformations; ARX ``isMonotonicWithSuppression``), else 0 (no bound).
        """
        if self.monotonic:
            return float(fs.counts[np.asarray(result.violating, dtype=bool)].sum())
        return 0.0

    def holds_after_removing_smallest(self, sizes: np.ndarray) -> np.ndarray | None:
        """For a global model: whether it holds once the ``j`` smallest classes are suppressed,
        for ``j = 0 .. len(sizes)`` (``sizes``: the released class sizes, ascending).

        ARX enforces its sample-based criteria (average risk, sample uniqueness) this way:
        after the class-based models, the smallest classes are suppressed one after another
        until the criterion holds or the suppression limit is reached
        (``TransformationChecker``/``enforceSampleBasedCriteria``). ``None`` (the default):
        the model cannot be enforced by suppression and is checked as it is.
        """
        return None

    def size_conflict(self, n_records: int) -> str | None:
        """Why a size parameter of the model can never be met by data of ``n_records``
        records (e.g. ``k`` above it), or None. :func:`sdckit.models.check` refuses such a
        model as a parameter error, naming the model. Default: None."""
        del n_records
        return None

    def unreachable(self, base: FrequencySet) -> str | None:
        """Why no generalization or suppression of ``base`` can satisfy the model, or None.

        ``base`` is the ungeneralized frequency set of all records. A model that fails even
        when every record is in one class (e.g. l above the number of distinct sensitive
        values) cannot be met by any release but the empty one; saying so beats suggesting a
        higher suppression limit. Default: None (no such check).
        """
        return None

    def prepare(self, base: FrequencySet) -> None:  # noqa: B027 - optional hook
        """Called once with the ungeneralized frequency set of all records (default: nothing)."""

    @abstractmethod
    def evaluate(self, fs: FrequencySet) -> ModelResult:
        """Evaluate the model on ``fs``: which classes violate it, and is it satisfied."""

    def describe(self) -> dict:
        """JSON description, e.g. ``{"model": "k_anonymity", "k": 5}``: the job-file entry's
        name and its parameters (those left unset omitted)."""
        params = {k: v for k, v in self.to_dict().items() if v is not None}
        return {"model": self.spec_name, **params}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.describe()})"

    def __str__(self) -> str:
        return repr(self)

    # -- helpers for subclasses ---------------------------------------------------------
    def _result(
        self,
        violating: np.ndarray,
        details: dict,
        satisfied: bool | None = None,
        class_values: np.ndarray | None = None,
    ) -> ModelResult:
        """Build a result; ``satisfied`` defaults to "no class violates"."""
        violating = np.asarray(violating, dtype=bool)
        ok = (not violating.any()) if satisfied is None else bool(satisfied)
        return ModelResult(
            self.name, ok, violating, json_ready(details, keep_nan=True), class_values
        )


def enforce_global_models(
    fs: FrequencySet,
    violating: np.ndarray,
    models: Sequence[PrivacyModel],
    budget: int,
    prices: Callable[[np.ndarray], np.ndarray | None] | None = None,
    cost: Callable[[np.ndarray], float] | None = None,
) -> tuple[np.ndarray, bool]:
    """Suppress, within ``budget`` records in all, the fewest smallest released classes that
    make every global model hold (ARX's enforcement of sample-based criteria).

    ``violating`` flags the classes the class-based models already suppress. Returns the new
    flags and whether every model holds. A model without
    :meth:`PrivacyModel.holds_after_removing_smallest` is checked on the release as it is.

    Which classes of the boundary size: the global models judge the released class sizes
    only, so when ``j`` smallest classes are needed and the ``j``-th has size ``c``, any
    ``m`` of the classes of size ``c`` (``m`` of them fall within the first ``j``) satisfy
    the models equally. With ``prices`` (per class, the search metric's price of
    suppressing it on top of a given suppression:
    :meth:`sdckit.utility.generalization.LatticeMetrics.suppression_prices`) the ``m``
    cheapest are taken, and with ``cost`` (the metric of a suppression) that choice is kept
    only when it costs less than the ``m`` first in class order; without them, or on equal
    prices, classes of equal size are taken in class order (deterministic).
    """
    violating = np.asarray(violating, dtype=bool)
    kept = np.flatnonzero(~violating)
    order = kept[np.argsort(fs.counts[kept], kind="stable")]
    sizes = fs.counts[order]
    left = budget - int(fs.counts[violating].sum())
    affordable = int(np.searchsorted(np.cumsum(sizes), left, side="right"))  # max j
    feasible = np.ones(len(sizes) + 1, dtype=bool)
    plain = []
    for md in models:
        holds = md.holds_after_removing_smallest(sizes)
        if holds is None:
            plain.append(md)
        else:
            feasible &= np.asarray(holds, dtype=bool)
    feasible[affordable + 1 :] = False
    hits = np.flatnonzero(feasible)
    if not len(hits):
        return violating, False
    j = int(hits[0])
    out = violating.copy()
    out[order[:j]] = True
    if j and prices is not None and not plain:
        out = _cheapest_at_the_boundary(out, order, sizes, j, prices, cost)
    if plain:
        kept_fs = fs.select(~out) if out.any() else fs
        if not all(md.evaluate(kept_fs).satisfied for md in plain):
            return violating, False
    return out, True


def _cheapest_at_the_boundary(
    out: np.ndarray,
    order: np.ndarray,
    sizes: np.ndarray,
    j: int,
    prices: Callable[[np.ndarray], np.ndarray | None],
    cost: Callable[[np.ndarray], float] | None,
) -> np.ndarray:
    """``out`` with its classes of the boundary size (the ``j``-th smallest's) replaced by as
    many of that size priced cheapest, when that costs less (:func:`enforce_global_models`)."""
    size = sizes[j - 1]
    lo = int(np.searchsorted(sizes, size, side="left"))
    hi = int(np.searchsorted(sizes, size, side="right"))
    m = j - lo
    if hi - lo <= m:
        return out  # every class of the boundary size is suppressed: no choice
    tied = order[lo:hi]
    base = out.copy()
    base[tied] = False  # the classes below the boundary size only
    price = prices(base)
    if price is None:
        return out
    pick = tied[np.lexsort((tied, price[tied]))[:m]]
    other = base
    other[pick] = True
    if np.array_equal(other, out):
        return out
    if cost is not None and not cost(other) < cost(out):
        return out
    return other


def settle_group_models(
    fs: FrequencySet, violating: np.ndarray, models: Sequence[PrivacyModel], budget: int
) -> tuple[np.ndarray, bool]:
    """Suppress, on top of ``violating``, the classes that the group-judging models of
    ``models`` (``class_local`` false) flag once the ``violating`` classes are gone, until
    they flag none; returns the flags and whether at most ``budget`` records are suppressed.

    Example (confidence bounding ``<age -> s, 0.28>`` with 3-anonymity): the age group of a
    class of 10 records (3 with ``s``) and one of 2 (none) has confidence 3/12; once
    3-anonymity suppresses the small class, the group left has 3/10 and violates. Each round
    only adds classes, so this ends; with nothing suppressed it changes nothing.
    """
    violating = np.asarray(violating, dtype=bool).copy()
    group = [m for m in models if not m.class_local and not m.is_global]
    if not group:
        return violating, int(fs.counts[violating].sum()) <= budget
    while violating.any() and not violating.all():
        kept = np.flatnonzero(~violating)
        released = fs.select(~violating)
        new = np.zeros(len(kept), dtype=bool)
        for m in group:
            new |= np.asarray(m.evaluate(released).violating, dtype=bool)
        if not new.any():
            break
        violating[kept[new]] = True
        if int(fs.counts[violating].sum()) > budget:
            return violating, False
    return violating, int(fs.counts[violating].sum()) <= budget


def exceeds_records(parameter: str, value: int, n_records: int, why: str = "") -> str | None:
    """The :meth:`PrivacyModel.size_conflict` of a class-size parameter (``k``, ``K``) larger
    than the number of records, or None when it fits."""
    if value <= n_records:
        return None
    return (
        f"parameter {parameter!r} ({value}) is larger than the number of records "
        f"({n_records}); {why}choose {parameter} <= {n_records}"
    )


def check_reachable(
    models: Sequence[PrivacyModel], base: FrequencySet, algorithm: str, suppression_limit: float
) -> None:
    """Raise :class:`~sdckit.errors.NoSolutionError` naming every model of ``models`` that no
    transformation of ``base`` can satisfy (:meth:`PrivacyModel.unreachable`).

    With a suppression limit of 1 the empty release (every record suppressed) is allowed, as
    in ARX, so nothing is refused up front.
    """
    if suppression_limit >= 1.0:
        return
    reasons = [r for r in (m.unreachable(base) for m in models) if r]
    if reasons:
        raise NoSolutionError(
            f"{algorithm}: no release can satisfy the privacy models: " + "; ".join(reasons)
        )

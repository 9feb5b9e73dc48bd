"""Models that compare the released sample with a population: delta-presence and k-map.

* delta-presence: M. E. Nergiz, M. Atzori, C. Clifton, "Hiding the presence of individuals
  from shared databases", SIGMOD 2007, 665-676. The released data ``T`` is a subset of a
  population table ``P`` with the same quasi-identifiers; for every generalized class,
  ``delta = |T in class| / |P in class|`` must lie in ``[delta_min, delta_max]``
  (ARX ``DPresence``).
* k-map: L. Sweeney, "Computational disclosure control: a primer on data privacy protection",
  PhD thesis, MIT, 2001; each released class must match at least ``k`` population records
  (ARX ``KMap`` with a research subset). Without a population table ARX estimates the
  population class sizes from the sampling fraction with the Poisson (D3, Pannekoek 1999) or
  zero-truncated Poisson (D4) estimator of K. El Emam & F. Dankar, "Protecting privacy using
  k-anonymity", JAMIA 15(5), 2008, 627-637, and checks k'-anonymity with a derived ``k'``.

The population is encoded with the sample's QI codes (the QI hierarchies; values of a QI
without hierarchy that the sample lacks get codes of their own) and aggregated once; classes
of the sample and of the population are joined on integer keys with
:func:`~sdckit.core.frequency.group_keys`.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

import numpy as np
import pandas as pd
from pydantic import Field, PrivateAttr, model_validator

from sdckit.core.encoding import as_text
from sdckit.core.frequency import FrequencySet, group_keys
from sdckit.core.spec import Integer, Number
from sdckit.errors import ConfigError, DataError, HierarchyError, ParameterError, preview
from sdckit.models.base import ModelResult, PrivacyModel

__all__ = ["DeltaPresence", "KMap", "PopulationIndex", "derive_k"]

_ESTIMATORS = ("poisson", "zero_truncated_poisson")
Share = Annotated[Number, Field(ge=0, le=1)]


class PopulationIndex:
    """A population table encoded with a sample's QI codes, for class-wise population counts.

    Built from the ungeneralized sample frequency set ``base`` (its quasi-identifiers carry
    the hierarchies and dictionaries). :meth:`counts_for` returns, for the classes of any
    frequency set derived from ``base``, the number of population records in each class.
    """

    def __init__(self, population: pd.DataFrame, base: FrequencySet, model: str) -> None:
        if not isinstance(population, pd.DataFrame):
            raise ParameterError(
                f"{model}: parameter 'population' must be a pandas DataFrame "
                f"with the quasi-identifier columns, got "
                f"{type(population).__name__}"
            )
        missing = [n for n in base.names if n not in population.columns]
        if missing:
            raise DataError(
                f"{model}: the population table lacks the quasi-identifier column(s) "
                f"{preview(missing)}; it needs the same QI columns as the data "
                f"(population columns: {preview(list(population.columns))})"
            )
        self.model = model
        cols, cards = [], []
        for q in base.quasi_identifiers:
            if q.hierarchy is not None:
                try:
                    codes = q.hierarchy.leaf_index(population[q.name], column=q.name)
                except HierarchyError as exc:
                    raise HierarchyError(f"{model}, population table: {exc}") from None
                card = q.cardinality(0)
            else:
                text = as_text(population[q.name])
                known = pd.Index(np.asarray(q.values, dtype=object)).get_indexer(text)
                unknown = known < 0
                codes = known.astype(np.int64)
                card = len(q.values)
                if unknown.any():  # values the sample lacks: codes of their own
                    _, extra = np.unique(text[unknown], return_inverse=True)
                    codes[unknown] = card + extra
                    card += int(extra.max()) + 1
            cols.append(np.asarray(codes, dtype=np.int64))
            cards.append(card)
        self._cards0 = cards
        n_pop = len(population)
        if cols:
            group, n_groups, rep = group_keys(cols, cards)
            self.keys0 = np.stack([c[rep] for c in cols], axis=1)
        else:
            group = np.zeros(n_pop, dtype=np.int64)
            n_groups = 1 if n_pop else 0
            self.keys0 = np.zeros((n_groups, 0), dtype=np.int64)
        self.counts0 = np.bincount(group, minlength=n_groups).astype(np.int64)
        self.n_records = n_pop
        self.quasi_identifiers = base.quasi_identifiers

    def join(self, fs: FrequencySet) -> tuple[np.ndarray, np.ndarray]:
        """``(pcount per class of fs, population counts of classes fs does not have)``."""
        if fs.names != tuple(q.name for q in self.quasi_identifiers):
            raise ConfigError(
                f"{self.model}: the frequency set has quasi-identifiers "
                f"{list(fs.names)}, but prepare() saw "
                f"{[q.name for q in self.quasi_identifiers]}"
            )
        n = fs.n_classes
        cols, cards = [], []
        for i, (q, level) in enumerate(zip(fs.quasi_identifiers, fs.levels, strict=True)):
            pop = self.keys0[:, i]
            if level > 0:
                pop = q.step(0, level)[pop]
                card = q.cardinality(level)
            else:
                card = self._cards0[i]
            cols.append(np.concatenate([fs.keys[:, i].astype(np.int64), pop]))
            cards.append(card)
        if not cols:
            pcount = np.full(n, self.n_records, dtype=np.int64)
            return pcount, np.zeros(0, dtype=np.int64)
        group, n_groups, _ = group_keys(cols, cards)
        sample_group = group[:n]
        pop_per_group = np.bincount(group[n:], weights=self.counts0, minlength=n_groups).astype(
            np.int64
        )
        has_sample = np.zeros(n_groups, dtype=bool)
        has_sample[sample_group] = True
        return pop_per_group[sample_group], pop_per_group[~has_sample & (pop_per_group > 0)]

    def check_contains(self, base: FrequencySet) -> None:
        """The population must contain every sample record (class-wise at level 0)."""
        pcount, _ = self.join(base)
        short = pcount < base.counts
        if short.any():
            i = int(np.argmax(short))
            labels = base.labels().iloc[i].drop("count").to_dict()
            raise DataError(
                f"{self.model}: the population table must contain every record of the data, "
                f"but the class {labels} has {int(base.counts[i])} record(s) in the data and "
                f"only {int(pcount[i])} in the population ({int(short.sum())} class(es) "
                "affected); pass the full population (the data's records included)"
            )


class DeltaPresence(PrivacyModel):
    """delta-presence of the data within ``population`` (Nergiz, Atzori & Clifton 2007).

    Each released class needs ``delta_min <= count / population count <= delta_max``. As in
    ARX (``HashGroupify``: classes without research-subset records are not checked), only
    classes that contain released records are checked; population classes without released
    records (delta = 0) are reported in ``details`` (``empty_population_classes``).

    Monotonicity (ARX ``DPresence``): not monotonic with suppression (suppressing released
    records lowers delta); monotonic with generalization (a merged class's delta lies between
    the parts').

    Parameters
    ----------
    delta_min, delta_max : float
        The bounds on each class's delta, ``0 <= delta_min <= delta_max <= 1``.
    population : pandas.DataFrame
        The population table (the quasi-identifier columns; it contains the data's records).
        A job file names its CSV/Parquet file.
    """

    spec_name: ClassVar[str] = "delta_presence"
    spec_label: ClassVar[str] = "delta-presence"
    monotonic: ClassVar[bool] = False
    monotonic_with_generalization: ClassVar[bool] = True

    delta_min: Share
    delta_max: Share
    population: pd.DataFrame

    _index: PopulationIndex | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _ordered(self) -> DeltaPresence:
        if self.delta_min > self.delta_max:
            raise ValueError(
                f"parameter 'delta_min' ({self.delta_min}) must not exceed 'delta_max' "
                f"({self.delta_max})"
            )
        return self

    @property
    def name(self) -> str:
        return f"({self.delta_min:g},{self.delta_max:g})-presence"

    def prepare(self, base: FrequencySet) -> None:
        """Encode and aggregate the population with the data's QI codes."""
        self._index = PopulationIndex(self.population, base, self.name)
        self._index.check_contains(base)

    def deltas(self, fs: FrequencySet) -> np.ndarray:
        """delta = count / population count, per class of ``fs``."""
        pcount, _ = self._joined(fs)
        return fs.counts / np.maximum(pcount, 1)

    def _joined(self, fs: FrequencySet) -> tuple[np.ndarray, np.ndarray]:
        if self._index is None:
            raise ConfigError(
                f"{self.name}: call prepare(base) with the frequency set of all "
                "records before evaluate() (sdckit.models.check does this)"
            )
        return self._index.join(fs)

    def evaluate(self, fs: FrequencySet) -> ModelResult:
        """Flag released classes whose delta lies outside ``[delta_min, delta_max]``."""
        pcount, empty = self._joined(fs)
        delta = fs.counts / np.maximum(pcount, 1)
        violating = (delta < self.delta_min) | (delta > self.delta_max)
        details = {
            "delta_min": self.delta_min,
            "delta_max": self.delta_max,
            "min_delta": float(delta.min()) if delta.size else 0.0,
            "max_delta": float(delta.max()) if delta.size else 0.0,
            "population_records": len(self.population),
            "empty_population_classes": int(len(empty)),
            "violating_classes": int(np.count_nonzero(violating)),
            "violating_records": int(fs.counts[violating].sum()),
        }
        return self._result(violating, details)

    def describe(self) -> dict:
        """The parameters, with the population's size instead of the table."""
        return {
            "model": self.spec_name,
            "delta_min": self.delta_min,
            "delta_max": self.delta_max,
            "population_records": len(self.population),
        }


def derive_k(
    k: int, sampling_fraction: float, estimator: str, significance_level: float
) -> tuple[int, float]:
    """ARX's derived k' for k-map without a population table, and its type-I error.

    The population size of a sample class of size ``k`` is modelled with ``lambda = f * k``
    (``f`` the sampling fraction). ``poisson`` (D3): the smallest ``x`` with
    ``P(X <= x) >= 1 - alpha`` for ``X ~ Poisson(lambda)``, and ``k' = x + 2`` (ARX
    ``KMap.calculateKPoisson`` returns its loop counter plus one). ``zero_truncated_poisson``
    (D4): the smallest ``x >= 1`` with ``sum_{j=1..x} P(X = j) / (1 - P(X = 0)) >= 1 - alpha``,
    and ``k' = x + 1`` (ARX ``calculateKZeroPoisson``). Returns ``(k', 1 - reached
    probability)``.
    """
    lam = sampling_fraction * k
    threshold = 1.0 - significance_level
    from scipy import stats  # imported here: scipy.stats takes ~0.5 s to import

    dist = stats.poisson(lam)
    if estimator == "poisson":
        x = 0
        value = float(dist.cdf(0))
        while value < threshold:
            x += 1
            value = float(dist.cdf(x))
        return x + 2, 1.0 - value
    norm = 1.0 - float(dist.pmf(0))
    x = 1
    value = float(dist.pmf(1)) / norm
    while value < threshold:
        x += 1
        value += float(dist.pmf(x)) / norm
    return x + 1, 1.0 - value


class KMap(PrivacyModel):
    """k-map: every released class matches at least ``k`` records of the population.

    With ``population`` (a DataFrame with the QI columns that contains the data's records)
    the population class sizes are counted exactly. Without it, give ``estimator``
    (``"poisson"`` or ``"zero_truncated_poisson"``) and ``sampling_fraction`` (sample size /
    population size): the model then checks ``k'``-anonymity with ARX's derived
    ``k' = min(k, estimated k, number of records)`` (see :func:`derive_k`) at
    ``significance_level``.

    Monotonicity (ARX ``KMap``): monotonic with generalization and suppression (population
    class sizes only grow when classes merge and do not depend on other classes).

    Parameters
    ----------
    k : int
        The fewest population records a released class must match (>= 1).
    population : pandas.DataFrame, optional
        The population table (a job file names its file).
    estimator : {"poisson", "zero_truncated_poisson"}, optional
        Without a population: the estimator of the population class sizes.
    sampling_fraction : float, optional
        Without a population: sample size / population size, in (0, 1].
    significance_level : float
        Without a population: the level of the derived k', in (0, 1) (default 0.05).
    """

    spec_name: ClassVar[str] = "k_map"
    spec_label: ClassVar[str] = "k-map"
    monotonic: ClassVar[bool] = True
    monotonic_with_generalization: ClassVar[bool] = True

    k: Annotated[Integer, Field(ge=1)]
    population: pd.DataFrame | None = None
    estimator: Literal["poisson", "zero_truncated_poisson"] | None = None
    sampling_fraction: Annotated[Number, Field(gt=0, le=1)] | None = None
    significance_level: Annotated[Number, Field(gt=0, lt=1)] = 0.05

    _index: PopulationIndex | None = PrivateAttr(default=None)
    _estimated: tuple[int, float] | None = PrivateAttr(default=None)
    _derived_k: int | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _population_or_estimate(self) -> KMap:
        if self.population is not None and (
            self.estimator is not None or self.sampling_fraction is not None
        ):
            raise ValueError(
                "give either 'population' or 'estimator' with 'sampling_fraction', not both"
            )
        if self.population is None and (self.estimator is None or self.sampling_fraction is None):
            raise ValueError(
                f"without a 'population' table give 'estimator' (one of "
                f"{', '.join(_ESTIMATORS)}) and 'sampling_fraction' (sample size / "
                "population size, in (0, 1])"
            )
        return self

    def model_post_init(self, context: object, /) -> None:
        """Derive ARX's k' once from the estimator (no population table)."""
        if self.estimator is not None and self.sampling_fraction is not None:
            self._estimated = derive_k(
                self.k, self.sampling_fraction, self.estimator, self.significance_level
            )
            self._derived_k = min(self.k, self._estimated[0])

    @property
    def estimated_k(self) -> int | None:
        """The k estimated from the sampling fraction (None with a population table)."""
        return None if self._estimated is None else self._estimated[0]

    @property
    def type1_error(self) -> float | None:
        """The type-I error of the estimated k (None with a population table)."""
        return None if self._estimated is None else self._estimated[1]

    @property
    def derived_k(self) -> int | None:
        """ARX's k' checked instead of k-map without a population (after :meth:`prepare`:
        capped at the number of records)."""
        return self._derived_k

    @property
    def name(self) -> str:
        if self.estimator is None:
            return f"{self.k}-map"
        return f"{self.k}-map (estimated as {self.derived_k}-anonymity, {self.estimator})"

    def minimal_class_size(self) -> int:
        return self.derived_k if self.derived_k is not None else 1

    def size_conflict(self, n_records: int) -> str | None:
        """``k`` above the size of the given population."""
        del n_records
        if self.population is not None and self.k > len(self.population):
            return (
                f"parameter 'k' ({self.k}) is larger than the population "
                f"({len(self.population)} records)"
            )
        return None

    def prepare(self, base: FrequencySet) -> None:
        """Encode the population, or cap the derived k at the number of records (as ARX)."""
        if self.population is not None:
            self._index = PopulationIndex(self.population, base, self.name)
            self._index.check_contains(base)
        else:
            assert self.estimated_k is not None
            self._derived_k = max(1, min(self.k, self.estimated_k, base.n_records))

    def evaluate(self, fs: FrequencySet) -> ModelResult:
        """Flag classes matching fewer than ``k`` population records (or ``count < k'``)."""
        if self.population is None:
            sizes = fs.counts
            bound = self.derived_k
        else:
            if self._index is None:
                raise ConfigError(
                    f"{self.name}: call prepare(base) with the frequency set of "
                    "all records before evaluate() (sdckit.models.check does "
                    "this)"
                )
            sizes, _ = self._index.join(fs)
            bound = self.k
        violating = sizes < bound
        details: dict[str, Any] = {
            "k": self.k,
            "min_population_class_size" if self.population is not None else "min_class_size": int(
                sizes.min()
            )
            if sizes.size
            else 0,
            "violating_classes": int(np.count_nonzero(violating)),
            "violating_records": int(fs.counts[violating].sum()),
        }
        if self.estimator is not None:
            details.update(
                estimator=self.estimator,
                derived_k=self.derived_k,
                sampling_fraction=self.sampling_fraction,
                significance_level=self.significance_level,
                type1_error=self.type1_error,
            )
        return self._result(violating, details)

    def describe(self) -> dict:
        """The parameters, with the population's size instead of the table."""
        out: dict = {"model": self.spec_name, "k": self.k}
        if self.population is not None:
            out["population_records"] = len(self.population)
        else:
            out.update(
                estimator=self.estimator,
                sampling_fraction=self.sampling_fraction,
                significance_level=self.significance_level,
            )
        return out

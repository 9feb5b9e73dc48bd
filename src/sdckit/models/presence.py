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
without hierarchy that the sample lacks get codes of their own) and aggregated once into a
frequency set; at each transformation the population's classes are rolled up from a cached
finer set, as the sample's are (ARX keeps the population in its groupify table and counts the
research subset beside it), and each sample class finds its population class by its codes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Annotated, Any, ClassVar, Literal

import numpy as np
import pandas as pd
from pydantic import Field, PrivateAttr, model_validator

from sdckit.core.encoding import encode
from sdckit.core.frequency import (
    FrequencySet,
    QuasiIdentifier,
    build_frequency_set,
    encode_quasi_identifier,
    group_keys,
)
from sdckit.core.rollups import RollupCache
from sdckit.core.spec import Integer, Number
from sdckit.errors import ConfigError, DataError, HierarchyError, ParameterError, preview
from sdckit.models.base import ModelResult, PrivacyModel

__all__ = ["DeltaPresence", "KMap", "PopulationIndex", "derive_k"]

_ESTIMATORS = ("poisson", "zero_truncated_poisson")
_KEY_LIMIT = 1 << 62  # mixed-radix keys below this are exact in int64
Share = Annotated[Number, Field(ge=0, le=1)]


def _radix_key(keys: np.ndarray, cards: Sequence[int]) -> np.ndarray:
    """Each row's codes as one int64 in mixed radix (first column most significant): the
    rows' lexicographic order (``prod(cards) < _KEY_LIMIT``)."""
    key = np.zeros(len(keys), dtype=np.int64)
    for i, card in enumerate(cards):
        key *= max(int(card), 1)
        key += keys[:, i]
    return key


class PopulationIndex:
    """A population table encoded with a sample's QI codes, for class-wise population counts.

    Built from the ungeneralized sample frequency set ``base`` (its quasi-identifiers carry
    the hierarchies and dictionaries). The population is encoded as the sample is
    (:func:`~sdckit.core.frequency.encode_quasi_identifier`) and kept as a frequency set
    (:attr:`classes`); :meth:`join` returns, for the classes of any
    frequency set derived from ``base``, the number of population records in each class. The
    population's frequency set at a transformation is rolled up from the cached finer one with
    the fewest classes (:class:`~sdckit.core.rollups.RollupCache`, the lattice search's own
    cache), so a search rolls the population up as it rolls the sample up, node to node.
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
        qis = []
        for q in base.quasi_identifiers:
            if q.hierarchy is not None:
                try:
                    qis.append(encode_quasi_identifier(population[q.name], q.name, q.hierarchy))
                except HierarchyError as exc:
                    raise HierarchyError(f"{model}, population table: {exc}") from None
                continue
            # the distinct values (text form, as the sample's were encoded) matched once
            enc = encode(population[q.name], q.name)
            values = np.asarray(q.values, dtype=object)
            known = pd.Index(values).get_indexer(enc.values)
            unknown = known < 0
            if unknown.any():  # values the sample lacks: codes of their own
                known[unknown] = len(values) + np.arange(int(unknown.sum()))
                values = np.concatenate([values, enc.values[unknown]])
            codes = known.astype(np.int32)[enc.codes]
            qis.append(QuasiIdentifier(q.name, codes, values, None))
        self.n_records = len(population)
        self.quasi_identifiers = base.quasi_identifiers
        #: the population's classes at level 0 (the sample's leaf codes)
        self.classes = build_frequency_set(qis) if qis else None
        self._rollups = RollupCache(self.classes.n_classes if self.classes else 0, len(qis))
        if self.classes is not None:
            self._rollups.store(self.classes.levels, self.classes, force=True)

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the cached roll-ups (rebuilt on demand from the base set)."""
        state = dict(self.__dict__)
        state["_rollups"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        n_qis = len(self.quasi_identifiers)
        self._rollups = RollupCache(self.classes.n_classes if self.classes else 0, n_qis)
        if self.classes is not None:
            self._rollups.store(self.classes.levels, self.classes, force=True)

    def at_levels(self, levels: Sequence[int]) -> FrequencySet:
        """The population's frequency set at ``levels`` (rolled up and cached)."""
        if self.classes is None:
            raise ConfigError(f"{self.model}: the data has no quasi-identifier")
        pop = self._rollups.get(levels)
        self._rollups.store(levels, pop)  # a source for the next, coarser transformations
        return pop

    def join(self, fs: FrequencySet) -> tuple[np.ndarray, np.ndarray]:
        """``(pcount per class of fs, population counts of classes fs does not have)``.

        The population's classes at ``fs.levels`` (:meth:`at_levels`) are sorted by their
        codes (:func:`~sdckit.core.frequency.group_keys` orders classes lexicographically), so
        each class of ``fs`` finds its population class by a binary search on the mixed-radix
        key of its codes; a class the population lacks gets 0.
        """
        if fs.names != tuple(q.name for q in self.quasi_identifiers):
            raise ConfigError(
                f"{self.model}: the frequency set has quasi-identifiers "
                f"{list(fs.names)}, but prepare() saw "
                f"{[q.name for q in self.quasi_identifiers]}"
            )
        n = fs.n_classes
        if self.classes is None:
            pcount = np.full(n, self.n_records, dtype=np.int64)
            return pcount, np.zeros(0, dtype=np.int64)
        pop = self.at_levels(fs.levels)
        cards = [q.cardinality(lv) for q, lv in zip(pop.quasi_identifiers, fs.levels, strict=True)]
        if math.prod(cards) >= _KEY_LIMIT:  # no exact int64 key: group both sets' codes
            cols = [
                np.concatenate([fs.keys[:, i], pop.keys[:, i]]).astype(np.int64)
                for i in range(len(cards))
            ]
            group, n_groups, _ = group_keys(cols, cards)
            at = np.full(n_groups, -1, dtype=np.int64)
            at[group[n:]] = np.arange(pop.n_classes)
            at = at[group[:n]]
            found = at >= 0
        else:
            pkey, skey = _radix_key(pop.keys, cards), _radix_key(fs.keys, cards)
            at = np.minimum(np.searchsorted(pkey, skey), max(pop.n_classes - 1, 0))
            found = pkey[at] == skey if pop.n_classes else np.zeros(n, dtype=bool)
        pcount = np.where(found, pop.counts[at] if pop.n_classes else 0, 0).astype(np.int64)
        has_sample = np.zeros(pop.n_classes, dtype=bool)
        has_sample[at[found]] = True
        return pcount, pop.counts[~has_sample]

    def threshold(self, fewest: int) -> tuple[FrequencySet, int] | None:
        """For :meth:`~sdckit.models.base.PrivacyModel.minimal_population_class_size`: the
        population's leaf classes and ``fewest``, or None when that bounds nothing."""
        if self.classes is None or fewest <= 1:
            return None
        return self.classes, fewest

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

    def minimal_population_class_size(self) -> tuple[FrequencySet, int] | None:
        """The population's classes and the fewest population records ``m`` a released class
        must cover: ``delta = count / pcount >= 1 / pcount``, so a class with
        ``1 / pcount > delta_max`` violates whatever its count; ``m`` is the smallest ``p``
        with ``1 / p <= delta_max`` (computed in the same floating point as :meth:`evaluate`;
        with ``delta_max = 0`` every class violates). None before :meth:`prepare` or when
        ``m = 1``."""
        if self._index is None:
            return None
        if self.delta_max <= 0:
            return self._index.threshold(self._index.n_records + 1)
        fewest = max(1, math.ceil(1.0 / self.delta_max))
        while fewest > 1 and 1.0 / (fewest - 1) <= self.delta_max:
            fewest -= 1
        while 1.0 / fewest > self.delta_max:
            fewest += 1
        return self._index.threshold(fewest)

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

    def minimal_population_class_size(self) -> tuple[FrequencySet, int] | None:
        """With a population table (after :meth:`prepare`): its classes and ``k`` (a class
        covering fewer than ``k`` population records violates k-map); else None."""
        return None if self._index is None else self._index.threshold(self.k)

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

"""Masking methods as typed, frozen spec objects, and the pipeline applying them in order.

Every method a mask job's ``methods:`` list can name is a :class:`MaskingMethod`: a frozen
:class:`~sdckit.core.spec.Spec` whose fields are the method's parameters (type, bounds and
default declared once) and whose :meth:`~MaskingMethod.apply` calls the masking function of
:mod:`sdckit.masking` that does the work. The same object comes from Python
(``Noise(["income"], alpha=0.2)``) and from a job file (``- noise: {columns: [income], alpha:
0.2}``); a bad parameter raises :class:`~sdckit.errors.ParameterError` naming it
(``noise: parameter 'alpha' must be > 0, got -1``; in a job file the key path,
``'job.yaml': methods[0].noise.alpha must be > 0, got -1``). A :class:`Pipeline` is the
``methods:`` list: :meth:`Pipeline.from_entries` parses it, :meth:`Pipeline.to_entries` writes
it back, :meth:`Pipeline.apply` masks a table with every step in turn.

Job-file names (:data:`METHODS`; ``columns`` is always a list of column names, one name is
accepted too) and their classes:

===========================  =================================================================
``noise``                    :class:`Noise` -- additive noise (Brand 2002; Kim 1986):
(``additive_noise``)         ``columns``, ``alpha`` (> 0, noise variance / attribute variance,
                             default 0.1), ``method`` (``uncorrelated`` | ``correlated`` |
                             ``kim``)
``multiplicative_noise``     :class:`MultiplicativeNoise` -- ``columns``, ``sd`` (> 0, default
                             0.1)
``microaggregation``         :class:`Microaggregation` -- ``columns``, ``k`` (default 3),
                             ``method``: ``mdav`` (default; also ``groups`` -- attribute groups
                             aggregated separately, then ``columns`` may be left out --,
                             ``centroid`` (``mean`` | ``median``), ``standardize``), ``vmdav``
                             (+ ``gamma``), ``optimal_univariate`` and ``individual_ranking``
                             (each column on its own), ``categorical`` (+ ``order``),
                             ``kanonymity`` (the columns are the quasi-identifiers), ``fuzzy``
                             (+ ``m``, ``max_iter``, ``tol``); every method within ``strata``
                             or blocks (``block_by`` + ``block_size``)
``rank_swapping``            :class:`RankSwapping` -- ``columns``, ``p_percent`` (a percentage
                             of n in (0, 100], default 5), ``variant`` (``standard`` |
                             ``p_buckets`` | ``p_distribution``)
``data_swapping``            :class:`DataSwapping` -- Dalenius-Reiss: ``columns`` (swapped),
                             ``match_columns``, ``rate``
``record_swapping``          :class:`RecordSwapping` -- sdcMicro ``recordSwap``:
                             ``household``, ``similar``, ``hierarchy``,
                             ``quasi_identifiers`` (sdcMicro's ``riskVars``; the old key
                             ``risk_variables`` is read too), ``swap_rate``,
                             ``k_anonymity``, ``carry_along``
``pram``                     :class:`Pram` -- ``columns``, ``p_diagonal``, ``matrix``,
                             ``invariant``, ``alpha``, ``random_diagonal``
``randomized_response``      :class:`RandomizedResponse` -- ``column``, ``p`` (in (0.5, 1]),
                             ``categories``
``rounding``                 :class:`Rounding` -- ``columns``, ``base``
``resampling``               :class:`Resampling` -- Heer (1993): ``columns``, ``t``
``sampling``                 :class:`Sampling` -- ``fraction`` or ``n``, ``strata``
``global_recoding``          :class:`GlobalRecoding` -- ``columns``, ``method``
                             (``equal_width`` | ``equal_frequency`` | ``log_equidistant`` |
                             ``breaks``), ``bins``, ``breaks``, ``labels``; or ``mapping`` for
                             grouping categories
``top_bottom_coding``        :class:`TopBottomCoding` -- ``columns``, ``top``, ``bottom``,
                             ``top_quantile``, ``bottom_quantile``, ``replace`` (``threshold``
                             | ``mean``)
``local_suppression``        :class:`LocalSuppression` -- sdcMicro ``localSuppression``:
                             ``columns`` (the key variables), ``k``, ``importance``,
                             ``combinations_up_to``
===========================  =================================================================

Every step also takes ``allow_unchanged`` (default false). A perturbative method
(:attr:`MaskingMethod.must_change`: noise, swapping, PRAM, randomized response, resampling)
exists to change values; a step of one that changed none of its columns (noise on a constant
column, swapping one row, ...) would release the data unprotected, so the pipeline refuses it
unless the step says ``allow_unchanged: true``.

Seeds: with a job seed ``s`` step ``i`` gets the seed of the ``i``-th child of
``numpy.random.SeedSequence(s)``, so a method's randomness does not depend on which methods
come before it. The pipeline does not publish the seeds in its records (knowing them would let
an intruder undo the noise).

Examples
--------
>>> steps = Pipeline.from_entries([{"rounding": {"columns": ["age"], "base": 5}}])
>>> steps.steps[0] == Rounding(["age"], 5)
True
>>> steps.to_entries()
[{'rounding': {'columns': ['age'], 'base': 5.0}}]
"""

from __future__ import annotations

import types
from abc import abstractmethod
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    ClassVar,
    Literal,
    Self,
    Union,
    get_args,
    get_origin,
)

import numpy as np
from pydantic import (
    AliasChoices,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from sdckit.core.spec import (
    Boolean,
    ColumnList,
    ColumnName,
    Integer,
    NonEmptyList,
    NonEmptyMapping,
    Number,
    Spec,
    named_entry,
)
from sdckit.errors import ConfigError, DataError, ParameterError, SdcInputError, short_repr

if TYPE_CHECKING:
    import pandas as pd

    from sdckit.masking.base import MaskResult

__all__ = [
    "METHODS",
    "DataSwapping",
    "GlobalRecoding",
    "LocalSuppression",
    "MaskingMethod",
    "Microaggregation",
    "MultiplicativeNoise",
    "Noise",
    "Pipeline",
    "Pram",
    "RandomizedResponse",
    "RankSwapping",
    "RecordSwapping",
    "Resampling",
    "Rounding",
    "Sampling",
    "TopBottomCoding",
    "method_names",
    "step_seeds",
]

#: What ``apply`` takes as randomness: a generator, an integer seed, or None (fresh entropy).
Rng = np.random.Generator | int | None


# -- field types (beside those of sdckit.core.spec) --------------------------------------------
#: A number > 0.
Positive = Annotated[Number, Field(gt=0)]
#: A probability (or share) in [0, 1].
Probability = Annotated[Number, Field(ge=0, le=1)]
#: A whole number >= 1 (a group size, a count).
Count = Annotated[Integer, Field(ge=1)]


def _holds_values(annotation: Any) -> bool:
    """Whether a field's values are themselves lists or mappings (or anything at all)."""
    if annotation is Any:
        return True
    origin = get_origin(annotation)
    if origin is Annotated:
        return _holds_values(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        return any(_holds_values(a) for a in get_args(annotation) if a is not type(None))
    return origin in (list, dict, tuple) or annotation in (list, dict, tuple)


# -- the base class ----------------------------------------------------------------------------
#: The engines of a method that both the local and the Spark engine run.
LOCAL_AND_SPARK = frozenset({"local", "spark"})
#: job-file name (and aliases) -> class; filled as the classes below are defined.
METHODS: dict[str, type[MaskingMethod]] = {}


class MaskingMethod(Spec):
    """One masking step: its parameters (the fields) and how it masks a table (:meth:`apply`).

    Subclasses declare the method's parameters as fields, ``spec_name`` (the job-file name;
    other accepted names in ``spec_aliases``) and :attr:`must_change`; defining one registers
    it in :data:`METHODS`. Positional arguments fill the parameters in declaration order
    (``Noise(["a"], 0.2)``); ``allow_unchanged`` is keyword-only.

    Parameters
    ----------
    allow_unchanged : bool, default False
        Accept that a step of a :attr:`must_change` method changed nothing (see the module
        docstring); checked by :meth:`Pipeline.apply`.
    """

    model_config = ConfigDict(populate_by_name=True)

    #: A perturbative method: a step that changed none of its columns released the data
    #: unprotected, which :meth:`Pipeline.apply` refuses unless ``allow_unchanged``.
    #: Non-perturbative methods (recoding, coding, rounding, suppression, sampling) and
    #: microaggregation reach their target property by construction: data that already has
    #: it may legitimately stay as it is.
    must_change: ClassVar[bool] = False
    #: The engines that run the method (``"local"``, ``"spark"``); a job on another engine
    #: refuses the step before any data is read.
    engines: ClassVar[frozenset[str]] = frozenset({"local"})

    allow_unchanged: Boolean = False

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        if "spec_name" not in cls.__dict__:  # an intermediate or derived class: no new name
            return
        for name in (cls.spec_name, *cls.spec_aliases):
            other = METHODS.get(name)
            if other is not None and other.__qualname__ != cls.__qualname__:
                raise TypeError(f"masking method name {name!r} is taken by {other.__name__}")
            METHODS[name] = cls

    @classmethod
    def positional_names(cls) -> tuple[str, ...]:
        """Positional arguments fill the method's parameters (``allow_unchanged`` is
        keyword-only)."""
        return cls.parameter_names()

    @classmethod
    def parameter_names(cls) -> tuple[str, ...]:
        """The method's parameters as a job file names them, in declaration order
        (``allow_unchanged``, a setting of the step, not of the method, left out)."""
        return tuple(
            f.alias or name for name, f in cls.model_fields.items() if name != "allow_unchanged"
        )

    @classmethod
    def scalar_parameters(cls) -> frozenset[str]:
        """Parameters (job-file names) whose value is one number, text or flag -- not a list
        or mapping such as ``columns``, ``groups`` or a PRAM ``matrix``. A comparison grid
        expands a list given for one of these into one configuration per value."""
        return frozenset(
            f.alias or name
            for name, f in cls.model_fields.items()
            if name != "allow_unchanged" and not _holds_values(f.annotation)
        )

    def _active(self) -> tuple[str, ...]:
        """The field names that mean something for this object (all, unless a variant of the
        method takes only some)."""
        return tuple(n for n in type(self).model_fields if n != "allow_unchanged")

    def parameters(self) -> dict[str, Any]:
        """The method's parameters (job-file names -> values as held, defaults filled in)."""
        fields = type(self).model_fields
        return {fields[n].alias or n: getattr(self, n) for n in self._active()}

    def to_dict(self) -> dict[str, Any]:
        """The parameters in job-file form; ``allow_unchanged`` only when true."""
        fields = type(self).model_fields
        out = {
            (fields[n].alias or n): value
            for n, value in super().to_dict().items()
            if n in self._active()
        }
        if self.allow_unchanged:
            out["allow_unchanged"] = True
        return out

    def with_params(self, **changes: Any) -> Self:
        """A copy with some parameters changed (validated like a new object)."""
        params = {**self.parameters(), "allow_unchanged": self.allow_unchanged, **changes}
        return type(self)(**params)

    def check_data(self, data: pd.DataFrame, where: str) -> None:
        """Refuse, before any step runs, parameters that cannot fit ``data`` (``where`` names
        the step in the message): :meth:`check_records` with its number of records."""
        self.check_records(len(data), where)

    def check_records(self, n: int, where: str) -> None:
        """Refuse parameters that cannot fit ``n`` records (both engines call it before any
        step runs). Nothing to check unless a method says otherwise."""

    def masked_columns(self) -> list[str]:
        """The columns this step masks, as its parameters name them."""
        out: list[str] = []
        for key in ("columns", "column", "hierarchy", "carry_along"):
            value = getattr(self, key, None)
            out += [value] if isinstance(value, str) else list(value or [])
        return out

    @abstractmethod
    def apply(self, data: pd.DataFrame, rng: Rng = None) -> list[MaskResult]:
        """Mask ``data``; one :class:`~sdckit.masking.base.MaskResult` per call of the masking
        function (a method applied column by column gives one per column, the last holding
        the fully masked table).

        ``rng`` is the randomness: a ``numpy.random.Generator``, an integer seed (the same
        seed gives the same output; :meth:`Pipeline.apply` passes each step the seed derived
        from the job seed) or None (fresh entropy); deterministic methods ignore it. The
        input is not modified. The unchanged-release rule is the pipeline's
        (:meth:`Pipeline.apply`).
        """


def _per_column(
    fn: Callable[..., MaskResult], data: pd.DataFrame, columns: Sequence[str], **kw: Any
) -> list[MaskResult]:
    """Apply a one-column function to each column in turn (each result feeds the next)."""
    results = []
    for c in columns:
        r = fn(data, c, **kw)
        results.append(r)
        data = r.data
    return results


def _result_columns(results: Sequence[MaskResult]) -> list[str]:
    """The columns the results' parameters name as masked (``columns``, ``column`` or
    ``quasi_identifiers``), in order."""
    out: list[str] = []
    for r in results:
        for key in ("columns", "column", "quasi_identifiers"):
            value = r.parameters.get(key)
            if value is not None:
                out += [value] if isinstance(value, str) else list(value)
    return list(dict.fromkeys(out))


# -- the methods -------------------------------------------------------------------------------
class Noise(MaskingMethod):
    """Additive noise on numeric columns (:func:`sdckit.masking.noise.additive_noise`).

    Parameters
    ----------
    columns : list of str
        The numeric columns to mask.
    alpha : float, default 0.1
        Noise variance as a fraction of the attribute variance (> 0).
    method : {"uncorrelated", "correlated", "kim"}, default "uncorrelated"
        Independent noise per column, noise with the covariance of the columns, or
        correlated noise followed by Kim's linear transformation.

    References
    ----------
    Brand, R. (2002). Microdata protection through noise addition. In *Inference Control in
    Statistical Databases*, LNCS 2316, 97-116. Kim, J. (1986). A method for limiting
    disclosure in microdata based on random noise and transformation. Proc. ASA Section on
    Survey Research Methods, 370-374.
    """

    spec_name: ClassVar[str] = "noise"
    engines: ClassVar[frozenset[str]] = LOCAL_AND_SPARK
    spec_aliases: ClassVar[tuple[str, ...]] = ("additive_noise",)
    must_change: ClassVar[bool] = True

    columns: ColumnList
    alpha: Positive = 0.1
    method: Literal["uncorrelated", "correlated", "kim"] = "uncorrelated"

    def apply(self, data: pd.DataFrame, rng: Rng = None) -> list[MaskResult]:
        """Add the noise (see :meth:`MaskingMethod.apply`)."""
        from sdckit.masking import noise

        return [noise.additive_noise(data, self.columns, self.alpha, self.method, seed=rng)]


class MultiplicativeNoise(MaskingMethod):
    """Multiplicative noise ``x (1 + e)`` (:func:`sdckit.masking.other.multiplicative_noise`).

    Parameters
    ----------
    columns : list of str
        The numeric columns to mask.
    sd : float, default 0.1
        Standard deviation of the noise ``e`` (> 0).

    References
    ----------
    Kim, J. J. & Winkler, W. E. (2003). Multiplicative noise for masking continuous data. US
    Census Bureau, Research Report RRS2003/01.
    """

    spec_name: ClassVar[str] = "multiplicative_noise"
    engines: ClassVar[frozenset[str]] = LOCAL_AND_SPARK
    must_change: ClassVar[bool] = True

    columns: ColumnList
    sd: Positive = 0.1

    def apply(self, data: pd.DataFrame, rng: Rng = None) -> list[MaskResult]:
        """Multiply by the noise (see :meth:`MaskingMethod.apply`)."""
        from sdckit.masking import other

        return [other.multiplicative_noise(data, self.columns, self.sd, seed=rng)]


_MA_COMMON = ("columns", "k", "method")
#: every variant can run within strata (or blocks along a sort key)
_MA_STRATA = ("strata", "block_by", "block_size")
#: microaggregation ``method`` -> the parameters it takes
_MA_VARIANTS: dict[str, tuple[str, ...]] = {
    "mdav": (*_MA_COMMON, "groups", "centroid", "standardize", *_MA_STRATA),
    "vmdav": (*_MA_COMMON, "groups", "centroid", "standardize", "gamma", *_MA_STRATA),
    "optimal_univariate": (*_MA_COMMON, *_MA_STRATA),
    "individual_ranking": (*_MA_COMMON, *_MA_STRATA),
    "categorical": (*_MA_COMMON, "order", *_MA_STRATA),
    "kanonymity": (*_MA_COMMON, *_MA_STRATA),
    "fuzzy": (*_MA_COMMON, "m", "max_iter", "tol", *_MA_STRATA),
}


class Microaggregation(MaskingMethod):
    """Microaggregation: every value replaced by the representative of a group of >= k
    similar records (:mod:`sdckit.masking.microaggregation`).

    Parameters
    ----------
    columns : list of str, optional
        The columns aggregated (required unless ``groups`` are given).
    k : int, default 3
        Minimum group size (>= 1, at most the number of records).
    method : str, default "mdav"
        ``mdav`` (:func:`~sdckit.masking.microaggregation.mdav`), ``vmdav``,
        ``optimal_univariate`` and ``individual_ranking`` (each column on its own),
        ``categorical`` (mixed data, Gower distance), ``kanonymity`` (the columns are the
        quasi-identifiers, aggregated jointly) or ``fuzzy``. Each takes only its own
        parameters below.
    groups : list of lists of str, optional
        mdav, vmdav: attribute groups aggregated separately (then ``columns`` may be left out).
    centroid : {"mean", "median"}, default "mean"
        mdav, vmdav: the group representative.
    standardize : bool, default True
        mdav, vmdav: partition on z-scores (False: raw values).
    gamma : float, default 0.2
        vmdav: group extension threshold (>= 0).
    order : mapping of str to list, optional
        categorical: ordinal columns and their categories in order.
    m : float, default 1.5
        fuzzy: the fuzzifier (> 1).
    max_iter : int, default 100
        fuzzy: fuzzy c-means iterations at most (>= 1).
    tol : float, default 1e-6
        fuzzy: convergence threshold on the centre moves (> 0).
    strata : list of str, optional
        Microaggregate within the strata: the groups of records with equal values of these
        columns (sdcMicro's ``strata_variables``); every stratum needs at least ``k`` records
        (a smaller one is a DataError naming it). Needed on the Spark engine, where every
        stratum is aggregated on one executor.
    block_by, block_size : list of str, int, optional
        Instead of ``strata``: strata of ``block_size`` consecutive records along the sort key
        ``block_by`` (ascending, missing last, ties in row order; the last block takes the
        remainder, so blocks hold ``block_size`` to ``2 block_size - 1`` records). Give both;
        ``block_size >= k``.

    With strata (or blocks) each stratum is aggregated on its own, exactly as the method
    aggregates a whole file (:func:`sdckit.masking.microaggregation.strata_labels`); ``fuzzy``
    draws within a stratum from the seed
    :func:`~sdckit.masking.microaggregation.stratum_seed` derives from the step seed and the
    stratum. The details give the strata (number, smallest and largest) and the group sizes
    over all strata.

    References
    ----------
    Domingo-Ferrer, J. & Torra, V. (2005). Ordinal, continuous and heterogeneous k-anonymity
    through microaggregation. Data Mining and Knowledge Discovery 11(2). Solanas, A. &
    Martinez-Balleste, A. (2006). V-MDAV. COMPSTAT 2006. Hansen, S. L. & Mukherjee, S.
    (2003). A polynomial algorithm for optimal univariate microaggregation. IEEE TKDE 15(4).
    Torra, V. (2017). Fuzzy microaggregation for the transparency principle. Journal of
    Applied Logic 23.
    """

    spec_name: ClassVar[str] = "microaggregation"
    engines: ClassVar[frozenset[str]] = LOCAL_AND_SPARK

    columns: ColumnList | None = None
    k: Count = 3
    method: Literal[
        "mdav",
        "vmdav",
        "optimal_univariate",
        "individual_ranking",
        "categorical",
        "kanonymity",
        "fuzzy",
    ] = "mdav"
    groups: NonEmptyList | None = None
    centroid: Literal["mean", "median"] = "mean"
    standardize: Boolean = True
    gamma: Annotated[Number, Field(ge=0)] = 0.2
    order: NonEmptyMapping | None = None
    m: Annotated[Number, Field(gt=1)] = 1.5
    max_iter: Count = 100
    tol: Positive = 1e-6
    strata: ColumnList | None = None
    block_by: ColumnList | None = None
    block_size: Count | None = None

    @field_validator(
        "groups", "centroid", "standardize", "gamma", "order", "m", "max_iter", "tol", mode="before"
    )
    @classmethod
    def _taken_by_the_method(cls, value: Any, info: ValidationInfo) -> Any:
        """A parameter of one variant given to another is an error (runs only when given)."""
        method = info.data.get("method")
        if method in _MA_VARIANTS and info.field_name not in _MA_VARIANTS[method]:
            raise ValueError(
                f"is not a parameter of method {method!r}; allowed for it: "
                f"{', '.join(_MA_VARIANTS[method])}"
            )
        return value

    @model_validator(mode="after")
    def _columns_or_groups(self) -> Self:
        if self.columns is None and self.groups is None:
            raise ValueError("columns is required (or, for mdav/vmdav, groups)")
        if (self.block_by is None) != (self.block_size is None):
            raise ValueError(
                "give block_by and block_size together (blocks of block_size records along "
                "the sort key block_by)"
            )
        if self.block_by is not None and self.strata is not None:
            raise ValueError("give strata or block_by/block_size, not both")
        if self.block_size is not None and self.block_size < self.k:
            raise ValueError(
                f"block_size={self.block_size} must be at least k={self.k} (every block is "
                "microaggregated on its own)"
            )
        return self

    def _active(self) -> tuple[str, ...]:
        """The variant's parameters; the strata ones only when given (a job file without
        strata reads as before)."""
        return tuple(
            n
            for n in _MA_VARIANTS[self.method]
            if n not in _MA_STRATA or getattr(self, n) is not None
        )

    @property
    def stratified(self) -> bool:
        """True when the step aggregates within strata or blocks."""
        return self.strata is not None or self.block_by is not None

    def strata_spec(self) -> dict[str, Any]:
        """How the strata are formed, as the step's parameters say it: ``{"strata": [...]}``
        or ``{"block_by": [...], "block_size": n}``; empty without strata."""
        if self.strata is not None:
            return {"strata": list(self.strata)}
        if self.block_by is not None:
            return {"block_by": list(self.block_by), "block_size": int(self.block_size or 0)}
        return {}

    def unstratified(self) -> Microaggregation:
        """The same step without strata: what runs within each stratum."""
        return self.with_params(strata=None, block_by=None, block_size=None)

    def check_records(self, n: int, where: str) -> None:
        """k larger than the number of records is refused before any step runs."""
        if self.k > n:
            raise ParameterError(
                f"{where}.k: k={self.k} is larger than the {n} rows of the data; "
                "choose k <= the number of rows"
            )

    def apply(self, data: pd.DataFrame, rng: Rng = None) -> list[MaskResult]:
        """Aggregate (see :meth:`MaskingMethod.apply`; only ``fuzzy`` draws random numbers;
        a generator given as ``rng`` gives it an integer seed drawn from it). With strata or
        blocks: :meth:`apply_within_strata`."""
        if self.stratified:
            return self.apply_within_strata(data, rng)
        return self._apply_whole(data, rng)

    def apply_within_strata(self, data: pd.DataFrame, rng: Rng = None) -> list[MaskResult]:
        """Aggregate every stratum on its own (:func:`~sdckit.masking.microaggregation.
        strata_labels`) and merge the records (:func:`~sdckit.masking.microaggregation.
        merge_stratum_details`). A loop over strata, not records."""
        import pandas as pd

        from sdckit.masking import microaggregation as ma
        from sdckit.masking.base import MaskResult

        labels, keys = ma.strata_labels(data, self.strata, self.block_by, self.block_size)
        if isinstance(rng, np.random.Generator):
            rng = int(rng.integers(2**63))
        base = None if rng is None else int(rng)
        inner = self.unstratified()
        order = np.argsort(labels, kind="stable")
        sizes = np.bincount(labels, minlength=len(keys))
        bounds = np.concatenate(([0], np.cumsum(sizes)))
        per_stratum: list[list[MaskResult]] = []
        for s, key in enumerate(keys):
            ma.check_stratum_size(int(sizes[s]), self.k, key, "microaggregation")
            rows = order[bounds[s] : bounds[s + 1]]
            per_stratum.append(inner._apply_whole(data.iloc[rows], ma.stratum_seed(base, key)))
        combined = pd.concat([r[-1].data for r in per_stratum]).iloc[np.argsort(order)]
        combined.index = data.index
        out = data.copy()
        for c in _result_columns(per_stratum[0]):
            out[c] = combined[c]
        summary = ma.strata_summary(self.strata_spec(), sizes.tolist(), keys)
        results = []
        for j, first in enumerate(per_stratum[0]):
            params = {k: v for k, v in first.parameters.items() if k != "seed"}
            params.update(self.strata_spec())
            details = ma.merge_stratum_details([r[j].details for r in per_stratum], summary)
            results.append(MaskResult(out, first.method, params, details))
        return results

    def _apply_whole(self, data: pd.DataFrame, rng: Rng = None) -> list[MaskResult]:
        from sdckit.masking import microaggregation as ma

        cols, k = self.columns, self.k
        if self.method == "mdav":
            return [ma.mdav(data, cols, k, self.groups, self.centroid, self.standardize)]
        if self.method == "vmdav":
            return [
                ma.vmdav(data, cols, k, self.gamma, self.groups, self.centroid, self.standardize)
            ]
        listed = list(cols or ())
        if self.method == "optimal_univariate":
            return _per_column(ma.optimal_univariate, data, listed, k=k)
        if self.method == "individual_ranking":
            return [ma.individual_ranking(data, cols, k)]
        if self.method == "categorical":
            return [ma.categorical_microaggregation(data, cols, k, self.order)]
        if self.method == "kanonymity":
            return [ma.kanonymity_microaggregation(data, listed, k)]
        if isinstance(rng, np.random.Generator):  # the engine records an integer seed
            rng = int(rng.integers(2**63))
        seed = None if rng is None else int(rng)
        return [
            ma.fuzzy_microaggregation(
                data, cols, k, self.m, seed=seed, max_iter=self.max_iter, tol=self.tol
            )
        ]


class RankSwapping(MaskingMethod):
    """Rank swapping of numeric columns (:mod:`sdckit.masking.swapping`).

    Parameters
    ----------
    columns : list of str
        The columns swapped (each on its own).
    p_percent : float, default 5
        Largest rank distance of a swap, in percent of the number of records, in (0, 100].
    variant : {"standard", "p_buckets", "p_distribution"}, default "standard"
        Moore's rank swapping, or one of the two variants of Nin, Herranz & Torra.

    References
    ----------
    Moore, R. (1996). Controlled data-swapping techniques for masking public use microdata
    sets. US Census Bureau RR96/04. Nin, J., Herranz, J. & Torra, V. (2008). Rethinking rank
    swapping to decrease disclosure risk. Data & Knowledge Engineering 64(1), 346-364.
    """

    spec_name: ClassVar[str] = "rank_swapping"
    must_change: ClassVar[bool] = True

    columns: ColumnList
    p_percent: Annotated[Number, Field(gt=0, le=100)] = 5.0
    variant: Literal["standard", "p_buckets", "p_distribution"] = "standard"

    def apply(self, data: pd.DataFrame, rng: Rng = None) -> list[MaskResult]:
        """Swap (see :meth:`MaskingMethod.apply`)."""
        from sdckit.masking import swapping

        if self.variant == "standard":
            return [swapping.rank_swap(data, self.columns, self.p_percent, seed=rng)]
        if self.variant == "p_buckets":
            return [swapping.rank_swap_p_buckets(data, self.columns, self.p_percent, seed=rng)]
        return [swapping.rank_swap_p_distribution(data, self.columns, self.p_percent, seed=rng)]


class DataSwapping(MaskingMethod):
    """Data swapping between records that agree on matching columns
    (:func:`sdckit.masking.swapping.data_swap`).

    Parameters
    ----------
    columns : list of str
        The columns whose values are swapped.
    match_columns : list of str, optional
        Records swap only with records of the same values of these columns.
    rate : float, default 0.05
        Share of the records swapped, in [0, 1].

    References
    ----------
    Dalenius, T. & Reiss, S. P. (1982). Data-swapping: a technique for disclosure control.
    Journal of Statistical Planning and Inference 6, 73-85.
    """

    spec_name: ClassVar[str] = "data_swapping"
    must_change: ClassVar[bool] = True

    columns: ColumnList
    match_columns: ColumnList | None = None
    rate: Probability = 0.05

    def apply(self, data: pd.DataFrame, rng: Rng = None) -> list[MaskResult]:
        """Swap (see :meth:`MaskingMethod.apply`)."""
        from sdckit.masking import swapping

        return [swapping.data_swap(data, self.columns, self.match_columns, self.rate, seed=rng)]


class RecordSwapping(MaskingMethod):
    """Targeted record swapping of households across areas
    (:func:`sdckit.masking.swapping.record_swap`, after sdcMicro ``recordSwap``).

    Parameters
    ----------
    household : str
        The household identifier column.
    similar : list
        Columns a donor household must share (or a list of such lists, tried in turn).
    hierarchy : list of str
        The geographic levels, highest first (the values swapped).
    quasi_identifiers : list of str
        Columns whose rare combinations make a household risky (sdcMicro's ``riskVars``;
        ``risk_variables``, the name this parameter had before, is accepted too).
    swap_rate : float, default 0.05
        Share of the households swapped, in [0, 1].
    k_anonymity : int, default 3
        A household is risky where fewer than this many records share its values (>= 1).
    carry_along : list of str, optional
        Further columns swapped with the hierarchy.

    References
    ----------
    sdcMicro ``recordSwap`` (J. Gussenbauer), the SDC method recommended for the European
    2021 census round.
    """

    spec_name: ClassVar[str] = "record_swapping"
    must_change: ClassVar[bool] = True

    household: ColumnName
    similar: NonEmptyList
    hierarchy: ColumnList
    # sdcMicro's riskVars; `risk_variables` is the name it had before (job files keep working)
    quasi_identifiers: ColumnList = Field(
        validation_alias=AliasChoices("quasi_identifiers", "risk_variables")
    )
    swap_rate: Probability = 0.05
    k_anonymity: Count = 3
    carry_along: ColumnList | None = None

    @model_validator(mode="before")
    @classmethod
    def _one_name(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and {"quasi_identifiers", "risk_variables"} <= set(data):
            raise ValueError("give quasi_identifiers only (risk_variables is its former name)")
        return data

    def apply(self, data: pd.DataFrame, rng: Rng = None) -> list[MaskResult]:
        """Swap (see :meth:`MaskingMethod.apply`)."""
        from sdckit.masking import swapping

        return [
            swapping.record_swap(
                data,
                self.household,
                self.similar,
                self.hierarchy,
                self.quasi_identifiers,
                swap_rate=self.swap_rate,
                k_anonymity=self.k_anonymity,
                carry_along=self.carry_along,
                seed=rng,
            )
        ]


class Pram(MaskingMethod):
    """Post-randomization of categorical columns (:func:`sdckit.masking.randomization.pram`).

    Parameters
    ----------
    columns : list of str
        The categorical columns.
    p_diagonal : float, default 0.8
        Probability of keeping a category, in (0, 1] (when no ``matrix`` is given).
    matrix : mapping, optional
        Per column, the transition matrix ``{from: {to: probability}}``.
    invariant : bool, default False
        Make the matrix invariant (expected released frequencies = observed ones).
    alpha : float, default 0.5
        Mixing weight of the invariant matrix with the identity, in [0, 1].
    random_diagonal : bool, default False
        Draw each category's keep probability in [p_diagonal, 1] (sdcMicro's construction).

    References
    ----------
    Gouweleeuw, J. M., Kooiman, P., Willenborg, L. C. R. J. & de Wolf, P.-P. (1998). Post
    randomisation for statistical disclosure control: theory and implementation. Journal of
    Official Statistics 14(4), 463-478.
    """

    spec_name: ClassVar[str] = "pram"
    engines: ClassVar[frozenset[str]] = LOCAL_AND_SPARK
    must_change: ClassVar[bool] = True

    columns: ColumnList
    p_diagonal: Annotated[Number, Field(gt=0, le=1)] = 0.8
    matrix: NonEmptyMapping | None = None
    invariant: Boolean = False
    alpha: Probability = 0.5
    random_diagonal: Boolean = False

    def apply(self, data: pd.DataFrame, rng: Rng = None) -> list[MaskResult]:
        """Randomize (see :meth:`MaskingMethod.apply`)."""
        from sdckit.masking import randomization

        return [
            randomization.pram(
                data,
                self.columns,
                p_diagonal=self.p_diagonal,
                matrix=self.matrix,
                invariant=self.invariant,
                alpha=self.alpha,
                random_diagonal=self.random_diagonal,
                seed=rng,
            )
        ]


class RandomizedResponse(MaskingMethod):
    """Randomized response on one binary column
    (:func:`sdckit.masking.randomization.randomized_response`).

    Parameters
    ----------
    column : str
        The column (two categories).
    p : float, default 0.75
        Probability of releasing the true category, in (0.5, 1].
    categories : list, optional
        The two categories (default: those of the column).
    insecure_reproducible_noise : bool, default False
        Draw the flips from the job's ``seed`` (tests only; the result says NOT PRIVATE). By
        default they come from the OS CSPRNG whatever ``seed`` is: the seed is in the job
        file, and whoever holds it could regenerate the flips and undo them.

    References
    ----------
    Warner, S. L. (1965). Randomized response: a survey technique for eliminating evasive
    answer bias. JASA 60, 63-69.
    """

    spec_name: ClassVar[str] = "randomized_response"
    engines: ClassVar[frozenset[str]] = LOCAL_AND_SPARK
    must_change: ClassVar[bool] = True

    column: ColumnName
    p: Annotated[Number, Field(gt=0.5, le=1)] = 0.75
    categories: NonEmptyList | None = None
    insecure_reproducible_noise: bool = False

    def apply(self, data: pd.DataFrame, rng: Rng = None) -> list[MaskResult]:
        """Randomize (see :meth:`MaskingMethod.apply`)."""
        from sdckit.masking import randomization

        return [
            randomization.randomized_response(
                data,
                self.column,
                self.p,
                self.categories,
                seed=rng,
                insecure_reproducible_noise=self.insecure_reproducible_noise,
            )
        ]


class Rounding(MaskingMethod):
    """Rounding of numeric columns to a base (:func:`sdckit.masking.other.round_to_base`).

    Parameters
    ----------
    columns : list of str
        The numeric columns.
    base : float
        The rounding base (> 0).

    References
    ----------
    Hundepool, A. et al. (2012). *Statistical Disclosure Control*. Wiley, sec. 3.4.5.
    """

    spec_name: ClassVar[str] = "rounding"
    engines: ClassVar[frozenset[str]] = LOCAL_AND_SPARK

    columns: ColumnList
    base: Positive

    def apply(self, data: pd.DataFrame, rng: Rng = None) -> list[MaskResult]:
        """Round (see :meth:`MaskingMethod.apply`; deterministic)."""
        from sdckit.masking import other

        return [other.round_to_base(data, self.columns, self.base)]


class Resampling(MaskingMethod):
    """Resampling of numeric columns (:func:`sdckit.masking.other.resample`).

    Parameters
    ----------
    columns : list of str
        The numeric columns.
    t : int, default 10
        Number of bootstrap samples averaged (>= 1).

    References
    ----------
    Heer, G. R. (1993). A bootstrap procedure to preserve statistical confidentiality in
    contingency tables. Proc. Int. Seminar on Statistical Confidentiality, Eurostat.
    """

    spec_name: ClassVar[str] = "resampling"
    must_change: ClassVar[bool] = True

    columns: ColumnList
    t: Count = 10

    def apply(self, data: pd.DataFrame, rng: Rng = None) -> list[MaskResult]:
        """Resample (see :meth:`MaskingMethod.apply`)."""
        from sdckit.masking import other

        return [other.resample(data, self.columns, self.t, seed=rng)]


class Sampling(MaskingMethod):
    """Simple or stratified random sampling of records (:func:`sdckit.masking.recoding.sample`).

    Parameters
    ----------
    fraction : float, optional
        Share of the records kept, in (0, 1].
    n : int, optional
        Number of records kept (>= 1). Give exactly one of ``fraction`` and ``n``.
    strata : list of str, optional
        Sample within the groups of these columns.

    References
    ----------
    Willenborg, L. & de Waal, T. (2001). *Elements of Statistical Disclosure Control*.
    Springer, ch. 4.
    """

    spec_name: ClassVar[str] = "sampling"

    fraction: Annotated[Number, Field(gt=0, le=1)] | None = None
    n: Count | None = None
    strata: ColumnList | None = None

    @model_validator(mode="after")
    def _fraction_or_n(self) -> Self:
        if (self.fraction is None) == (self.n is None):
            raise ValueError("give exactly one of fraction (e.g. 0.1) and n (a number of records)")
        return self

    def apply(self, data: pd.DataFrame, rng: Rng = None) -> list[MaskResult]:
        """Sample (see :meth:`MaskingMethod.apply`)."""
        from sdckit.masking import recoding

        return [recoding.sample(data, self.fraction, self.n, self.strata, seed=rng)]


class GlobalRecoding(MaskingMethod):
    """Global recoding: numeric columns to intervals (:func:`sdckit.masking.recoding.global_recode`)
    or categories grouped (:func:`sdckit.masking.recoding.group_categories`), column by column.

    Parameters
    ----------
    columns : list of str
        The columns recoded.
    method : {"equal_width", "equal_frequency", "log_equidistant", "breaks"}, default "equal_width"
        How the intervals are cut.
    bins : int, optional
        Number of intervals (>= 1).
    breaks : list of float, optional
        The interval limits (method ``breaks``).
    labels : list of str, optional
        Labels of the intervals.
    mapping : mapping, optional
        Group categories instead: ``{category: group}`` (the interval parameters are unused).

    References
    ----------
    Willenborg, L. & de Waal, T. (2001). *Elements of Statistical Disclosure Control*.
    Springer, ch. 4-5; sdcMicro ``globalRecode`` and ``groupAndRename``.
    """

    spec_name: ClassVar[str] = "global_recoding"
    engines: ClassVar[frozenset[str]] = LOCAL_AND_SPARK

    columns: ColumnList
    method: Literal["equal_width", "equal_frequency", "log_equidistant", "breaks"] = "equal_width"
    bins: Count | None = None
    breaks: NonEmptyList | None = None
    labels: NonEmptyList | None = None
    mapping: NonEmptyMapping | None = None

    def apply(self, data: pd.DataFrame, rng: Rng = None) -> list[MaskResult]:
        """Recode (see :meth:`MaskingMethod.apply`; deterministic, one result per column)."""
        from sdckit.masking import recoding

        if self.mapping is not None:
            return _per_column(recoding.group_categories, data, self.columns, mapping=self.mapping)
        return _per_column(
            recoding.global_recode,
            data,
            self.columns,
            method=self.method,
            bins=self.bins,
            breaks=self.breaks,
            labels=self.labels,
        )


class TopBottomCoding(MaskingMethod):
    """Top and bottom coding of numeric columns (:func:`sdckit.masking.recoding.top_bottom_code`),
    column by column.

    Parameters
    ----------
    columns : list of str
        The numeric columns.
    top, bottom : float, optional
        Values above ``top`` (below ``bottom``) are coded.
    top_quantile, bottom_quantile : float, optional
        The thresholds as quantiles of the column, in [0, 1].
    replace : {"threshold", "mean"}, default "threshold"
        The coded value: the threshold, or the mean of the values coded.

    References
    ----------
    Hundepool, A. et al. (2012). *Statistical Disclosure Control*. Wiley, sec. 3.4; sdcMicro
    ``topBotCoding``.
    """

    spec_name: ClassVar[str] = "top_bottom_coding"
    engines: ClassVar[frozenset[str]] = LOCAL_AND_SPARK

    columns: ColumnList
    top: Number | None = None
    bottom: Number | None = None
    top_quantile: Probability | None = None
    bottom_quantile: Probability | None = None
    replace: Literal["threshold", "mean"] = "threshold"

    def apply(self, data: pd.DataFrame, rng: Rng = None) -> list[MaskResult]:
        """Code (see :meth:`MaskingMethod.apply`; deterministic, one result per column)."""
        from sdckit.masking import recoding

        return _per_column(
            recoding.top_bottom_code,
            data,
            self.columns,
            top=self.top,
            bottom=self.bottom,
            top_quantile=self.top_quantile,
            bottom_quantile=self.bottom_quantile,
            replace=self.replace,
        )


class LocalSuppression(MaskingMethod):
    """Local suppression to k-anonymity of categorical keys
    (:func:`sdckit.masking.suppression.local_suppression`, after sdcMicro ``localSuppression``).

    Parameters
    ----------
    columns : list of str
        The key variables (quasi-identifiers).
    k : int, default 3
        Every key combination must be shared by at least k records (>= 1).
    importance : list of int or mapping, optional
        Importance of the keys (the least important is suppressed first).
    combinations_up_to : int, optional
        Check only the combinations of at most this many keys (>= 1).

    References
    ----------
    Templ, M., Kowarik, A. & Meindl, B. (2015). Statistical disclosure control for micro-data
    using the R package sdcMicro. Journal of Statistical Software 67(4), sec. 4.2.
    """

    spec_name: ClassVar[str] = "local_suppression"
    engines: ClassVar[frozenset[str]] = LOCAL_AND_SPARK

    columns: ColumnList
    k: Count = 3
    importance: Any = None
    combinations_up_to: Count | None = None

    def apply(self, data: pd.DataFrame, rng: Rng = None) -> list[MaskResult]:
        """Suppress (see :meth:`MaskingMethod.apply`; deterministic)."""
        from sdckit.masking import suppression

        return [
            suppression.local_suppression(
                data, self.columns, self.k, self.importance, self.combinations_up_to
            )
        ]


def method_names() -> list[str]:
    """Every accepted method name (aliases included), sorted."""
    return sorted(METHODS)


# -- the pipeline ------------------------------------------------------------------------------
_EXAMPLE = "noise: {columns: [a, b], alpha: 0.1}"


def _parse_step(item: Any, where: str) -> MaskingMethod:
    """One entry of a ``methods:`` list (a step, ``{name: {params}}``, ``(name, params)`` or
    a bare name) as a step; ConfigError/ParameterError naming ``where`` otherwise."""
    if isinstance(item, MaskingMethod):
        return item
    if isinstance(item, (tuple, list)) and len(item) == 2 and isinstance(item[0], Hashable):
        item = {item[0]: item[1]}
    name, params = named_entry(item, where, method_names(), _EXAMPLE)
    return METHODS[name].from_dict(params, f"{where}.{name}")


def _parse_steps(entries: Any, where: str) -> list[MaskingMethod]:
    if isinstance(entries, (str, Mapping)) or not isinstance(entries, Sequence):
        raise ConfigError(
            f"{where} must be a list of `- method: {{parameters}}` entries, e.g. "
            f"`[{{{_EXAMPLE}}}]`; got {short_repr(entries)}"
        )
    return [_parse_step(item, f"{where}[{i}]") for i, item in enumerate(entries)]


def step_seeds(seed: int | None, n: int) -> list[int]:
    """One integer seed per step: the ``i``-th child of ``numpy.random.SeedSequence(seed)``
    (fresh entropy when ``seed`` is None)."""
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
        raise ConfigError(f"seed: {seed!r} must be an integer (or absent for a random run)")
    if seed is not None and seed < 0:
        raise ConfigError(f"seed: {seed!r} must be a non-negative integer")
    ss = np.random.SeedSequence(None if seed is None else int(seed))
    return [int(c.generate_state(1, dtype=np.uint64)[0]) for c in ss.spawn(n)]


def _same(before: pd.Series, after: pd.Series) -> bool:
    """True when two columns hold the same values row by row (missing equals missing)."""
    import pandas as pd

    a, b = before.to_numpy(), after.to_numpy()
    if a.shape != b.shape:
        return False
    equal = pd.Series(a == b, dtype=bool).to_numpy() | (pd.isna(a) & pd.isna(b))
    return bool(equal.all())


def _check_changed(
    before: pd.DataFrame, results: Sequence[MaskResult], step: MaskingMethod, where: str
) -> None:
    """DataError when a perturbative step left every value of its columns as it was."""
    after = results[-1].data
    columns = [c for r in results for c in (r.parameters.get("columns") or [])]
    if not columns:  # the step's own parameters: columns, column, or swapped geography
        columns = step.masked_columns()
    columns = [c for c in dict.fromkeys(columns) if c in before.columns and c in after.columns]
    if not columns or len(after) != len(before):
        return
    if all(_same(before[c], after[c]) for c in columns):
        raise unchanged_error(where, len(before), columns)


def unchanged_error(where: str, n: int, columns: Sequence[str]) -> DataError:
    """The error of a perturbative step that changed none of the ``n`` values of its
    ``columns`` (both engines raise it)."""
    return DataError(
        f"{where} changed none of the {n:,} values of "
        f"{', '.join(map(repr, columns))}, so the release would be the original data: "
        "the method cannot protect this input (a constant column, a single row, too "
        "few records?). Choose another method, or set `allow_unchanged: true` on this "
        "step if an unchanged release is what you want"
    )


class Pipeline(Spec):
    """Masking steps applied in order: a mask job's ``methods:`` list.

    Parameters
    ----------
    steps : list of MaskingMethod
        The steps (method objects; job-file entries ``{name: {parameters}}`` or
        ``(name, parameters)`` pairs are parsed as by :meth:`from_entries`).

    Examples
    --------
    >>> p = Pipeline([Microaggregation(["a", "b"], k=4), Noise(["c"], alpha=0.05)])
    >>> Pipeline.from_entries(p.to_entries()) == p
    True
    """

    spec_label: ClassVar[str] = "pipeline"

    steps: list[MaskingMethod]

    def __init__(self, steps: Any = (), **kwargs: Any) -> None:
        super().__init__(steps=_parse_steps(steps, "steps"), **kwargs)

    @classmethod
    def from_entries(cls, entries: Any, where: str = "methods") -> Self:
        """Parse a ``methods:`` list: ``{name: {parameters}}`` entries (a bare name for a
        method with its defaults) or ``(name, parameters)`` pairs.

        Every entry is validated; an error names its key path under ``where``
        (``methods[1].noise.alpha must be > 0, got -1``; a job passes
        ``"'job.yaml': methods"``).
        """
        return cls(_parse_steps(entries, where))

    @classmethod
    def from_dict(cls, params: Mapping[str, Any] | None, where: str | None = None) -> Self:
        """``{steps: [entries]}`` (the form :meth:`to_dict` writes) as a pipeline."""
        if not isinstance(params, Mapping) or set(params) != {"steps"}:
            raise ConfigError(
                f"{where or 'pipeline'} must be `{{steps: [{{{_EXAMPLE}}}]}}`, got "
                f"{short_repr(params)}"
            )
        return cls(_parse_steps(params["steps"], f"{where or 'pipeline'}.steps"))

    def to_entries(self) -> list[dict[str, Any]]:
        """The ``methods:`` list of a job file: one ``{name: {parameters}}`` per step."""
        return [step.to_entry() for step in self.steps]

    def to_dict(self) -> dict[str, Any]:
        """``{"steps": to_entries()}``."""
        return {"steps": self.to_entries()}

    def apply(
        self, data: pd.DataFrame, seed: int | None = None, *, where: str = "methods"
    ) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
        """Mask ``data`` with every step in order; returns the masked table and the records.

        Before any step runs, every step checks its parameters against ``data`` (a
        microaggregation ``k`` larger than the number of records is refused). Step ``i`` gets
        its own seed, the ``i``-th of :func:`step_seeds` (``seed``): the same seed gives the
        same output, and a step's randomness does not depend on the steps before it. An error
        raised by a step keeps its type and is prefixed with ``<where>[i].<name>:``; a step of
        a :attr:`~MaskingMethod.must_change` method that changed none of its columns is a
        DataError unless it says ``allow_unchanged``. The input is not modified.

        Each record is :meth:`~sdckit.masking.base.MaskResult.record` plus ``step`` (the index
        ``i``); a method applied column by column gives one record per column.
        """
        import pandas as pd

        if not isinstance(data, pd.DataFrame):
            raise DataError(f"pipeline: data must be a pandas DataFrame, got {type(data).__name__}")
        keys = [f"{where}[{i}].{step.spec_name}" for i, step in enumerate(self.steps)]
        for step, key in zip(self.steps, keys, strict=True):
            step.check_data(data, key)
        seeds = step_seeds(seed, len(self.steps))
        records: list[dict[str, Any]] = []
        current = data
        for i, (step, key, s) in enumerate(zip(self.steps, keys, seeds, strict=True)):
            try:
                with np.errstate(all="ignore"):
                    results = step.apply(current, s)
            except SdcInputError as exc:
                raise type(exc)(f"{key}: {exc}") from exc
            if step.must_change and not step.allow_unchanged:
                _check_changed(current, results, step, key)
            for r in results:
                records.append({**r.record(), "step": i})
            current = results[-1].data
        return (current.copy() if current is data else current), records

"""What every masking step shares: the base class of the methods as spec objects, and the
registry of their job-file names.

Every method a mask job's ``methods:`` list can name is a :class:`MaskingMethod`: a frozen
:class:`~sdckit.core.spec.Spec` whose fields are the method's parameters (type, bounds and
default declared once) and whose :meth:`~MaskingMethod.apply` calls the masking function that
does the work. Each class lives beside its function (``Noise`` beside
:func:`sdckit.masking.noise_addition.noise`, ``Microaggregation`` in
:mod:`sdckit.masking.microaggregation`, ...) and, when defined, registers its job-file name,
aliases and :class:`MaskingTraits` in :data:`METHODS`. The job-file names, the parameters of
each method and the :class:`~sdckit.masking.pipeline.Pipeline` applying the steps in order are
documented in :mod:`sdckit.masking.pipeline` (which imports every method module, so its
``METHODS`` lists them all).
"""

from __future__ import annotations

import types
from abc import abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Self, Union, get_args, get_origin

import numpy as np
from pydantic import ConfigDict, Field

from sdckit.core.registry import Registry
from sdckit.core.spec import Boolean, Integer, Number, Spec

if TYPE_CHECKING:
    import pandas as pd

    from sdckit.masking.base import MaskResult
    from sdckit.masking.stats import ColumnStats, Plan

__all__ = [
    "LOCAL_AND_SPARK",
    "METHODS",
    "Count",
    "MaskingMethod",
    "MaskingTraits",
    "Positive",
    "Probability",
    "Rng",
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


@dataclass(frozen=True)
class MaskingTraits:
    """What a caller needs to know of a masking method before running it: ``engines``, the
    engines that run it (``"local"``, ``"spark"``), and ``must_change``, whether it is a
    perturbative method whose step must change its columns. Read from the class
    (:meth:`of`), where they are declared (:attr:`MaskingMethod.engines`,
    :attr:`MaskingMethod.must_change`)."""

    engines: frozenset[str]
    must_change: bool

    @classmethod
    def of(cls, method: type[MaskingMethod]) -> MaskingTraits:
        """The traits a method class declares."""
        return cls(engines=frozenset(method.engines), must_change=bool(method.must_change))


class MaskingMethod(Spec):
    """One masking step: its parameters (the fields) and how it masks a table (:meth:`apply`).

    Subclasses declare the method's parameters as fields, ``spec_name`` (the job-file name;
    other accepted names in ``spec_aliases``) and :attr:`must_change`; defining one registers
    it in :data:`METHODS`. Positional arguments fill the parameters in declaration order
    (``Noise(["a"], 0.2)``); ``allow_unchanged`` is keyword-only.

    Parameters
    ----------
    allow_unchanged : bool, default False
        Accept that a step of a :attr:`must_change` method changed nothing (see
        :mod:`sdckit.masking.pipeline`); checked by :meth:`Pipeline.apply`.
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
    #: Why the Spark engine does not run the method (it is global by nature); None when it
    #: runs it (``"spark"`` in :attr:`engines`) or has no reason given.
    spark_refusal: ClassVar[str | None] = None
    #: A Spark-specific step (``"module:function"``, loaded by the Spark engine) for a method
    #: whose release is not record by record (microaggregation: one stratum per executor).
    spark_hook: ClassVar[str | None] = None

    allow_unchanged: Boolean = Field(
        False,
        description="true: accept a perturbative step that changed none of its columns, "
        "refused otherwise since it would release them unprotected",
    )

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        if "spec_name" not in cls.__dict__:  # an intermediate or derived class: no new name
            return
        METHODS.add(cls.spec_name, cls, MaskingTraits.of(cls), aliases=tuple(cls.spec_aliases))

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

    def plan(self, stats: ColumnStats, seed: int | None = None) -> Plan:
        """What the method fixes from the whole data, read through ``stats`` (checks on the
        parameters against the data included), released record by record with
        :meth:`~sdckit.masking.stats.Plan.release`: the Spark engine's way to run a method
        (``seed``: the step's seed, for a draw made once per step). Methods the Spark engine
        does not run have none."""
        raise NotImplementedError(f"masking method {self.spec_name!r} has no plan")

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


#: job-file name (and aliases) -> class and :class:`MaskingTraits`; filled as the method classes
#: are defined (:mod:`sdckit.masking.pipeline` imports every method module, so there it lists
#: them all). An entry added without traits gets the base class's.
METHODS: Registry[MaskingTraits] = Registry(
    "masking method",
    MaskingTraits.of(MaskingMethod),  # type: ignore[type-abstract]  # its declared defaults
)


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

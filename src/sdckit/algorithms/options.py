"""The options each anonymization algorithm takes (a job file's ``options:``), as specs.

One frozen :class:`~sdckit.core.spec.Spec` per algorithm declares its options with their
types and defaults; :func:`parse_options` validates a mapping once, at the entry point
(:func:`sdckit.anonymize` or the algorithm function itself), and the algorithm reads the
parsed object.

=============  ==============================================================================
``optimal``    none (the search is exhaustive and deterministic)
``datafly``    none
``mondrian``   ``relaxed`` (bool, default false: strict partitioning)
``tds``        ``class_attribute`` (default: the first sensitive, else the first insensitive
               column)
``anatomy``    ``l`` (integer >= 2, default: the l of the l-diversity model), ``sensitive``
               (default: the l-diversity model's attribute, else the first sensitive column)
``safepub``    ``search_steps`` (integer >= 1, default 100 as ARX), ``score`` (``loss``, the
               default, ``discernibility`` or ``aecs``), ``output`` (``exponential``, the
               default: a private choice among the visited pivots; ``last``; or
               ``best_exact``, ARX's choice by exact score, not covered by epsilon); epsilon,
               delta and the search budget are the parameters of the ``differential_privacy``
               model
=============  ==============================================================================
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, StrictBool, field_validator

from sdckit.core.spec import ColumnName, Integer, Spec
from sdckit.errors import ConfigError

__all__ = [
    "AlgorithmOptions",
    "AnatomyOptions",
    "DataflyOptions",
    "MondrianOptions",
    "OptimalOptions",
    "SafePubOptions",
    "TdsOptions",
    "parse_options",
]


class AlgorithmOptions(Spec):
    """Options of one algorithm (``spec_name`` is the algorithm's name)."""

    spec_noun: ClassVar[str] = "option"


class OptimalOptions(AlgorithmOptions):
    """The optimal search takes no options."""

    spec_name: ClassVar[str] = "optimal"


class DataflyOptions(AlgorithmOptions):
    """Datafly takes no options."""

    spec_name: ClassVar[str] = "datafly"


class MondrianOptions(AlgorithmOptions):
    """Mondrian: ``relaxed`` partitioning (LeFevre et al. 2006, section 4.2) or strict.

    Parameters
    ----------
    relaxed : bool
        Relaxed partitioning: a numeric cut splits the sorted records into two halves of
        equal size, so equal values may fall on both sides (default false: strict, a cut at
        the median value).
    """

    spec_name: ClassVar[str] = "mondrian"

    relaxed: StrictBool = False


class TdsOptions(AlgorithmOptions):
    """Top-down specialization: the class attribute its information gain is measured on.

    Parameters
    ----------
    class_attribute : str, optional
        The column (default: the first sensitive, else the first insensitive column).
    """

    spec_name: ClassVar[str] = "tds"

    class_attribute: ColumnName | None = None


class AnatomyOptions(AlgorithmOptions):
    """Anatomy: the diversity ``l`` of every QI-group and the ``sensitive`` attribute.

    Parameters
    ----------
    l : int, optional
        Distinct sensitive values per QI-group (default: the l of the l-diversity model).
    sensitive : str, optional
        The sensitive column (default: the l-diversity model's attribute, else the first
        sensitive column).
    """

    spec_name: ClassVar[str] = "anatomy"

    l: Annotated[Integer, Field(ge=2)] | None = None  # noqa: E741 - the model's name
    sensitive: ColumnName | None = None


class SafePubOptions(AlgorithmOptions):
    """SafePub (Bild, Kuhn & Prasser 2018): the private search's ``search_steps`` (ARX
    ``ARXConfiguration.getDPSearchStepNumber``, default 100), its ``score`` function (ARX's
    default quality model is ``loss``) and which visited pivot is released (``output``:
    ``exponential``, the default, a final exponential-mechanism choice; ``last``; or
    ``best_exact``, the highest exact score as in ARX, which epsilon does not cover; see
    :mod:`sdckit.algorithms.safepub`).
    The privacy parameters (epsilon, delta, epsilon_search) belong to the model
    :class:`~sdckit.models.differential_privacy.DifferentialPrivacy`, since ``k`` depends on
    them.

    Parameters
    ----------
    insecure_reproducible_noise : bool
        Tests only: draw the sampling and the search from the seed (the release is then not
        private); otherwise from the OS CSPRNG whatever the seed.
    search_steps : int
        Steps of the private search (ARX's default 100).
    score : str
        The score function of the search: ``loss`` (ARX's default), ``discernibility`` or
        ``aecs``.
    output : str
        The visited pivot released: ``exponential`` (a private choice), ``last``, or
        ``best_exact`` (the highest exact score, as ARX; not covered by epsilon).
    """

    spec_name: ClassVar[str] = "safepub"

    #: tests only: draw the sampling and the search from the seed (the release is then not
    #: private); otherwise from the OS CSPRNG whatever the seed (:mod:`sdckit.dp.randomness`)
    insecure_reproducible_noise: bool = False
    search_steps: Annotated[Integer, Field(ge=1)] = 100
    score: Literal["loss", "discernibility", "aecs"] = "loss"
    output: Literal["exponential", "last", "best_exact"] = "exponential"

    @field_validator("output", mode="before")
    @classmethod
    def _renamed_best(cls, value: Any) -> Any:
        if value == "best":
            raise ValueError(
                "'best' is now 'best_exact' (ARX's choice of the visited pivot by its exact "
                "score, which epsilon does not cover); the default 'exponential' chooses "
                "privately and is covered"
            )
        return value


_OPTIONS: dict[str, type[AlgorithmOptions]] = {
    c.spec_name: c
    for c in (
        OptimalOptions,
        DataflyOptions,
        MondrianOptions,
        TdsOptions,
        AnatomyOptions,
        SafePubOptions,
    )
}


def parse_options(
    algorithm: str, options: Mapping[str, Any] | AlgorithmOptions | None, where: str | None = None
) -> AlgorithmOptions:
    """Validate ``options`` for ``algorithm`` (a parsed object is returned as it is).

    Raises :class:`~sdckit.errors.ParameterError` naming the option (and ``where``, the key
    path in a job file, when given): ``mondrian: unknown option 'relax'; allowed: relaxed``.
    """
    cls = _OPTIONS.get(algorithm)
    if cls is None:
        raise ConfigError(f"unknown algorithm {algorithm!r}; use one of {', '.join(_OPTIONS)}")
    if isinstance(options, cls):
        return options
    if isinstance(options, AlgorithmOptions):
        raise ConfigError(f"{algorithm}: options are {type(options).__name__}; give {cls.__name__}")
    return cls.from_dict(options, where)

"""The anonymization algorithms a job file (``algorithm:``) or :func:`sdckit.anonymize` may
name, with what each needs and where it runs.

:data:`ALGORITHMS` is the :class:`~sdckit.core.registry.Registry` of the algorithms: name ->
the algorithm function (the signature of :func:`sdckit.algorithms.optimal.optimal`, returning
an :class:`~sdckit.core.release.AlgorithmOutput`), imported on first use, and its
:class:`AlgorithmTraits`. Reading the names or the traits imports no algorithm.
"""

from __future__ import annotations

from dataclasses import dataclass

from sdckit.core.registry import Registry
from sdckit.models import model_traits

__all__ = ["ALGORITHMS", "AlgorithmTraits", "needed_algorithms"]


@dataclass(frozen=True)
class AlgorithmTraits:
    """What an algorithm needs and where it runs.

    ``metric``: it minimises the utility metric a request names (``metric``); the others
    choose by their own rule and refuse one. ``needs_hierarchy``: it recodes whole columns
    along a hierarchy (full-domain generalization), so every quasi-identifier needs one.
    ``partitioning``: it cuts numeric quasi-identifiers into ranges but can generalize a
    categorical one only along its hierarchy -- without one it would release ``*``
    everywhere, so it refuses. ``sampling``: it releases a random sample, the records not
    drawn suppressed by the algorithm's definition (SafePub; ARX runs its differential
    privacy model with a 100% suppression limit), so its release is verified with a limit
    of 1. ``differential_privacy``: it gives the guarantee of a differential privacy model
    (:class:`sdckit.models.ModelTraits`), which no other algorithm gives. ``models``: the
    only privacy models it accepts (None: any model that needs no other algorithm).
    ``per_partition``: it checks the models on each partition of the records, so it takes
    only the models whose traits say ``per_partition``
    (:func:`sdckit.algorithms._heuristics.require_partition_models`). ``refused_models``:
    the models it cannot give whatever the data, each with the reason (refused before any
    data is read). ``engines``: the engines that run it (``local``, ``spark``).
    """

    metric: bool = False
    needs_hierarchy: bool = False
    partitioning: bool = False
    sampling: bool = False
    differential_privacy: bool = False
    models: tuple[str, ...] | None = None
    per_partition: bool = False
    refused_models: tuple[tuple[str, str], ...] = ()
    engines: tuple[str, ...] = ("local",)


#: Algorithm name -> its function, imported only when used.
ALGORITHMS: Registry[AlgorithmTraits] = Registry("algorithm", AlgorithmTraits())
ALGORITHMS.add(
    "optimal",
    "sdckit.algorithms.optimal:optimal",
    AlgorithmTraits(metric=True, needs_hierarchy=True, engines=("local", "spark")),
)
ALGORITHMS.add(
    "mondrian",
    "sdckit.algorithms.mondrian:mondrian",
    AlgorithmTraits(partitioning=True, per_partition=True),
)
ALGORITHMS.add(
    "datafly", "sdckit.algorithms.datafly:datafly", AlgorithmTraits(needs_hierarchy=True)
)
ALGORITHMS.add("tds", "sdckit.algorithms.tds:tds", AlgorithmTraits(partitioning=True))
_UNCHANGED_QIS = (
    "Anatomy publishes the quasi-identifiers unchanged beside a group id, so no grouping of "
    "the records changes"
)
ALGORITHMS.add(
    "anatomy",
    "sdckit.algorithms.anatomy:anatomy",
    AlgorithmTraits(
        refused_models=(
            ("delta_presence", f"{_UNCHANGED_QIS} which population records match them"),
            ("k_map", f"{_UNCHANGED_QIS} how many population records match them"),
            (
                "profitability_journalist_no_attack",
                f"{_UNCHANGED_QIS} how many population records match them",
            ),
            (
                "confidence_bounding",
                f"{_UNCHANGED_QIS} what a template's quasi-identifier values single out",
            ),
        )
    ),
)
ALGORITHMS.add(
    "safepub",
    "sdckit.algorithms.safepub:safepub",
    AlgorithmTraits(
        needs_hierarchy=True,
        sampling=True,
        differential_privacy=True,
        models=("differential_privacy",),
    ),
)


def needed_algorithms(model: object) -> tuple[str, ...] | None:
    """The algorithms that can give ``model``'s guarantee when only some can (a differential
    privacy model: those whose traits say ``differential_privacy``), else None."""
    if model_traits(model).differential_privacy:
        return ALGORITHMS.where(lambda t: t.differential_privacy)
    return None

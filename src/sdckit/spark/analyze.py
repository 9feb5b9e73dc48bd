"""``sdckit analyze`` on Spark: the base frequency set counted on Spark, every measure on the
driver by the local engine's own :func:`sdckit.risk.analyze.analyze_frequency_set`.

What needs the individual records rather than their classes -- household risk (each member's
household) -- is not computed here, and says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from sdckit.errors import DataError
from sdckit.risk.analyze import (
    RiskAnalysis,
    analyze_frequency_set,
    check_quasi_identifiers,
    column_list,
)

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame

    from sdckit.core.frequency import FrequencySet
    from sdckit.core.hierarchy import Hierarchy


def population_class_sizes_spark(fs: FrequencySet, population: DataFrame) -> np.ndarray:
    """Per class of ``fs``, the number of population records with the same QI values (at the
    same levels): the population counted on Spark, matched to the sample's classes by their
    labels (the canonical texts both engines key on)."""
    from sdckit.spark.frequency import base_frequency_set

    names = list(fs.names)
    missing = [c for c in names if c not in population.columns]
    if missing:
        raise DataError(f"population table lacks the quasi-identifier column(s) {missing}")
    hierarchies = {q.name: q.hierarchy for q in fs.quasi_identifiers if q.hierarchy is not None}
    pop = base_frequency_set(population, names, hierarchies=hierarchies)
    if any(fs.levels):
        pop = pop.rollup(fs.levels)
    mine = fs.labels().drop(columns="count").astype(str)
    theirs = pop.labels().astype(str)
    mine["__class"] = np.arange(fs.n_classes)
    joined = mine.merge(theirs, on=names, how="left")
    out = np.zeros(fs.n_classes, dtype=np.int64)
    found = joined["count"].notna().to_numpy()
    out[joined["__class"].to_numpy()[found]] = joined["count"].to_numpy()[found].astype(np.int64)
    return out


def check_request(
    columns: Sequence[str], quasi_identifiers: Sequence[str], household: str | None
) -> None:
    """DataError for an analysis the Spark engine cannot run on data with ``columns``: a
    quasi-identifier that is not a column, or household risk. Checked from the columns
    alone, so that a command checks it before Spark starts (:func:`analyze_spark` again)."""
    check_quasi_identifiers(column_list(quasi_identifiers), list(columns))
    if household is not None:
        raise DataError(
            "household risk needs each member's record, which the Spark engine does not "
            "collect; run it with the local engine (--engine local)"
        )


def analyze_spark(
    data: DataFrame,
    quasi_identifiers: Sequence[str],
    sensitive: Sequence[str] = (),
    sampling_fraction: float | None = None,
    weight: str | None = None,
    household: str | None = None,
    threshold: float = 0.2,
    population: DataFrame | None = None,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    levels: Sequence[int] | None = None,
    max_combination_size: int | None = None,
    suda: bool = True,
    measures: Sequence[str] | str | None = None,
    suda_max_size: int | None = None,
    missing: str = "wildcard",
) -> RiskAnalysis:
    """:func:`sdckit.risk.analyze.analyze` of a Spark DataFrame: the same parameters and the
    same summary (same numbers; weighted sums equal up to the order of floating additions).
    ``population`` is a Spark DataFrame too. Household risk needs every member's record and
    is refused (run it with the local engine)."""
    import time

    from sdckit.core.frequency import require_values
    from sdckit.spark.frequency import base_frequency_set

    t0 = time.perf_counter()
    qi = column_list(quasi_identifiers)
    sensitive = column_list(sensitive)
    check_request(list(data.columns), qi, household)
    fs = base_frequency_set(data, qi, sensitive, hierarchies, weights=weight)
    if fs.n_records == 0:
        raise DataError("the data has no records")
    if levels is not None and any(levels):
        fs = fs.rollup(levels)
    require_values(fs)
    pop_counts = None
    pop_records = None
    if population is not None:
        pop_counts = population_class_sizes_spark(fs, population)
        pop_records = int(population.count())
    return analyze_frequency_set(
        fs,
        sensitive=sensitive,
        sampling_fraction=sampling_fraction,
        weighted=weight is not None,
        threshold=threshold,
        population_counts=pop_counts,
        population_records=pop_records,
        max_combination_size=max_combination_size,
        suda=suda,
        measures=measures,
        suda_max_size=suda_max_size,
        missing=missing,
        started=t0,
    )

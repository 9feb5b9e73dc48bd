"""``sdckit analyze`` on Spark: the base frequency set counted on Spark, every measure on the
driver by the local engine's own :func:`sdckit.risk.analyze.analyze_frequency_set`.

What needs the individual records rather than their classes -- household risk (each member's
household) -- is not computed here, and says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

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
    from sdckit.spark.classes import ClassTable


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
    from sdckit.spark.classes import ClassTable
    from sdckit.spark.frequency import count_classes, frequency_set_of_counts

    t0 = time.perf_counter()
    qi = column_list(quasi_identifiers)
    sensitive = column_list(sensitive)
    check_request(list(data.columns), qi, household)
    counted, chosen = count_classes(data, qi, sensitive, hierarchies, weights=weight)
    if isinstance(counted, ClassTable):
        try:
            return analyze_distributed(
                counted,
                chosen,
                sensitive=sensitive,
                sampling_fraction=sampling_fraction,
                weighted=weight is not None,
                threshold=threshold,
                population=population,
                levels=levels,
                suda=suda,
                measures=measures,
                missing=missing,
                started=t0,
            )
        finally:
            counted.unpersist()
    fs = frequency_set_of_counts(counted, qi, sensitive, hierarchies)
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
    analysis = analyze_frequency_set(
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
    analysis.summary["frequency_set"] = chosen
    return analysis


def refuse_distributed(what: str, chosen: Mapping[str, Any], fix: str) -> DataError:
    """The error for ``what`` asked of classes kept on Spark (``chosen``: the path taken,
    :func:`sdckit.spark.frequency.count_classes`), naming the fix."""
    from sdckit.spark.classes import DRIVER_CLASSES_CONF

    return DataError(
        f"{what} on the Spark engine needs every class on the driver, and the data has "
        f"{chosen['classes']:,} distinct combinations, more than the driver takes "
        f"({chosen['driver_classes']:,}); {fix}, raise the limit with --spark-conf "
        f"{DRIVER_CLASSES_CONF}=N (and spark.driver.memory) if the driver has the memory, "
        "or use engine local"
    )


def analyze_distributed(
    table: ClassTable,
    chosen: Mapping[str, Any],
    *,
    sensitive: Sequence[str] = (),
    sampling_fraction: float | None = None,
    weighted: bool = False,
    threshold: float = 0.2,
    population: DataFrame | None = None,
    levels: Sequence[int] | None = None,
    suda: bool = True,
    measures: Sequence[str] | str | None = None,
    missing: str = "wildcard",
    started: float | None = None,
) -> RiskAnalysis:
    """:func:`analyze_spark` with the classes kept on Spark (:mod:`sdckit.spark.classes`):
    the class sizes come to the driver as a histogram (distinct size, classes) and the
    sensitive attributes' diversity and disclosure as per-shard minima, maxima and sums, so
    the figures are the local engine's (:func:`~sdckit.risk.analyze.class_size_measures`
    and :func:`~sdckit.risk.analyze.sensitive_measures` on the histogram and the shards).
    What compares classes with each other -- distinction, SUDA -- is skipped with the
    reason; what needs per-class figures on the driver (individual risk from weights, a
    population table, wildcard matching of missing key values) is refused with the fix."""
    import time

    from sdckit.risk.analyze import (
        MISSING_SEMANTICS,
        _chosen_measures,
        _missing_cells,
        class_size_measures,
        combine_sensitive_measures,
        missing_summary,
        sampling_measures,
        sensitive_measures,
    )

    t0 = time.perf_counter() if started is None else started
    if missing not in MISSING_SEMANTICS:
        raise DataError(
            f"missing must be one of {', '.join(MISSING_SEMANTICS)} (what a missing key value "
            f"matches), got {missing!r}"
        )
    if table.n_records == 0:
        raise DataError("the data has no records")
    if weighted:
        raise refuse_distributed("individual risk from sampling weights", chosen, "drop --weight")
    if population is not None:
        raise refuse_distributed(
            "journalist risk against a population table", chosen, "drop --population"
        )
    chosen_measures = _chosen_measures(measures, suda)
    if measures is not None and chosen_measures:
        raise refuse_distributed(
            f"{', '.join(sorted(chosen_measures))} (comparing every class with the others)",
            chosen,
            "drop --measures",
        )
    names = list(table.names)
    at = tuple(int(x) for x in levels) if levels is not None else (0,) * len(names)
    table.skeleton().rollup(at)  # levels checked on the driver, with the local engine's errors
    overall = table.overall() if sensitive else None

    def work(_frag: FrequencySet, fs: FrequencySet) -> dict[str, Any]:
        sizes, classes = np.unique(fs.counts, return_counts=True)
        out: dict[str, Any] = {
            "sizes": sizes,
            "classes": classes,
            "missing": int(fs.counts[_missing_cells(fs).any(axis=1)].sum()),
            "sensitive": {a: sensitive_measures(fs, a, overall) for a in sensitive},
        }
        return out

    parts = table.shards(at, work)
    sizes = np.concatenate([p["sizes"] for p in parts])
    classes = np.concatenate([p["classes"] for p in parts])
    distinct, inverse = np.unique(sizes, return_inverse=True)
    per_size = np.bincount(inverse.ravel(), weights=classes).astype(np.int64)
    records_missing = sum(p["missing"] for p in parts)
    if missing == "wildcard" and records_missing > 0:
        raise refuse_distributed(
            f"wildcard matching of missing key values ({records_missing:,} records have one)",
            chosen,
            "pass --missing category (a missing value as a category of its own)",
        )
    summary: dict[str, Any] = {
        "records": table.n_records,
        "quasi_identifiers": names,
        "equivalence_classes": int(per_size.sum()),
        "missing_values": missing_summary(missing, records_missing),
    }
    summary.update(class_size_measures(distinct, threshold, None, per_size))
    if sampling_fraction is not None:
        summary.update(sampling_measures(distinct, sampling_fraction, per_size))
    if sensitive:
        summary["sensitive"] = {
            a: combine_sensitive_measures([p["sensitive"][a] for p in parts]) for a in sensitive
        }
    skipped = {
        m: (
            f"{m} compares every class with the others; the Spark engine keeps the "
            f"{chosen['classes']:,} classes on the cluster (more than the driver takes, "
            f"{chosen['driver_classes']:,}), so it is not computed"
        )
        for m in sorted(chosen_measures)
    }
    if skipped:
        summary["skipped"] = skipped
    summary["frequency_set"] = dict(chosen)
    summary["elapsed_seconds"] = time.perf_counter() - t0
    return RiskAnalysis(
        summary=summary,
        frequency_set=None,
        class_risk=1.0 / np.maximum(distinct, 1),
        risk_records=distinct * per_size,
    )

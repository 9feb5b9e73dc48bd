"""Re-identification risk from equivalence-class sizes (prosecutor, journalist, marketer).

Definitions: El Emam & Dankar (2008), "Protecting privacy using k-anonymity", JAMIA 15(5);
the same measures as ARX's ``RiskEstimateBuilder`` (sample-based risk). With ``f_j`` the size
of sample class ``j``, ``F_j`` the size of the matching population class, ``n`` records and
``J`` classes:

* prosecutor risk of a record in class ``j``: ``1 / f_j``; the maximum is ``1 / min f_j``, the
  minimum ``1 / max f_j`` and the average over records ``J / n``;
* journalist risk: ``1 / F_j`` when a population table is known (else equal to prosecutor);
* marketer risk (expected share of records re-identified by an intruder matching everyone):
  ``(1/n) * sum_j f_j / F_j``; ``J / n`` when the sample is the population;
* records at risk: the share of records whose (prosecutor) risk exceeds a threshold.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sdckit.errors import DataError


@dataclass(frozen=True)
class RiskSummary:
    """Minimum, maximum and record-average of a per-record risk."""

    min: float
    max: float
    average: float

    def to_dict(self) -> dict[str, float]:
        """JSON form: ``{"min", "max", "average"}``."""
        return {"min": self.min, "max": self.max, "average": self.average}


def _summary(sizes: np.ndarray, weights: np.ndarray) -> RiskSummary:
    """Risk 1/size per class, summarized over records (``weights`` = records per class)."""
    if len(sizes) == 0 or weights.sum() == 0:
        return RiskSummary(0.0, 0.0, 0.0)
    risk = 1.0 / sizes
    return RiskSummary(
        min=float(risk.min()),
        max=float(risk.max()),
        average=float((risk * weights).sum() / weights.sum()),
    )


def record_risk_summary(frequencies: np.ndarray, records: np.ndarray) -> RiskSummary:
    """Risk ``1/f`` summarized over records, for rows of ``records`` records each having the
    sample frequency ``frequencies`` (the wildcard ``f_k`` of sdcMicro, say; with
    ``frequencies = records`` this is :func:`prosecutor_risk`)."""
    f = np.asarray(frequencies, dtype=np.float64)
    r = np.asarray(records, dtype=np.float64)
    keep = r > 0
    return _summary(f[keep], r[keep])


def prosecutor_risk(counts: np.ndarray, classes: np.ndarray | None = None) -> RiskSummary:
    """Prosecutor risk over records from class sizes ``counts`` (El Emam & Dankar 2008).

    ``classes``: how many classes have each size in ``counts`` (a class-size histogram,
    as the Spark engine counts it), by default one each."""
    counts = np.asarray(counts, dtype=np.float64)
    records = counts if classes is None else counts * np.asarray(classes, dtype=np.float64)
    keep = counts > 0
    return _summary(counts[keep], records[keep])


def journalist_risk(
    counts: np.ndarray,
    population_counts: np.ndarray | None = None,
    classes: np.ndarray | None = None,
) -> RiskSummary:
    """Journalist risk: ``1/F_j`` per record of class ``j`` (prosecutor risk without population).

    ``population_counts[j]`` is the population size of sample class ``j``; it must be
    ``>= counts[j]`` (the sample is drawn from the population). ``classes``: as
    :func:`prosecutor_risk` (without a population only).
    """
    counts = np.asarray(counts, dtype=np.float64)
    if population_counts is None:
        return prosecutor_risk(counts, classes)
    if classes is not None:
        raise DataError("a population needs one population count per class, not a histogram")
    pop = np.asarray(population_counts, dtype=np.float64)
    keep = counts > 0
    if np.any(pop[keep] < counts[keep]):
        raise DataError(
            "the population table has fewer records than the sample in some equivalence "
            "class; the sample must be a subset of the population"
        )
    return _summary(pop[keep], counts[keep])


def marketer_risk(
    counts: np.ndarray,
    population_counts: np.ndarray | None = None,
    classes: np.ndarray | None = None,
) -> float:
    """Marketer risk ``(1/n) sum_j f_j/F_j`` (``J/n`` without a population table).

    ``classes``: as :func:`prosecutor_risk` (without a population only)."""
    counts = np.asarray(counts, dtype=np.float64)
    if classes is not None:
        if population_counts is not None:
            raise DataError("a population needs one population count per class, not a histogram")
        mult = np.asarray(classes, dtype=np.float64)
        n = (counts * mult).sum()
        return float(mult[counts > 0].sum() / n) if n else 0.0
    n = counts.sum()
    if n == 0:
        return 0.0
    if population_counts is None:
        return float((counts > 0).sum() / n)
    pop = np.asarray(population_counts, dtype=np.float64)
    keep = counts > 0
    return float((counts[keep] / pop[keep]).sum() / n)


def records_at_risk_share(
    counts: np.ndarray,
    threshold: float = 0.2,
    frequencies: np.ndarray | None = None,
    classes: np.ndarray | None = None,
) -> float:
    """Share of records whose prosecutor risk ``1/f_j`` exceeds ``threshold``.

    ``frequencies``: each row's ``f`` when it is not its record count (wildcard matching);
    ``classes``: how many classes have each size in ``counts`` (a class-size histogram).
    """
    if not 0 < threshold <= 1:
        raise DataError(f"--threshold must be in (0, 1], got {threshold}")
    counts = np.asarray(counts, dtype=np.float64)
    if classes is not None:
        f = counts if frequencies is None else np.asarray(frequencies, dtype=np.float64)
        counts = counts * np.asarray(classes, dtype=np.float64)
        n = counts.sum()
        return (
            float(counts[(counts > 0) & (1.0 / np.maximum(f, 1) > threshold)].sum() / n)
            if n
            else 0.0
        )
    f = counts if frequencies is None else np.asarray(frequencies, dtype=np.float64)
    n = counts.sum()
    if n == 0:
        return 0.0
    return float(counts[(counts > 0) & (1.0 / np.maximum(f, 1) > threshold)].sum() / n)


def class_size_distribution(
    counts: np.ndarray,
    frequencies: np.ndarray | None = None,
    classes: np.ndarray | None = None,
) -> list[dict[str, float]]:
    """Classes and records per class size: ``[{"size", "classes", "records", "records_share"}]``.

    ``frequencies``: each row's ``f`` when it is not its record count (wildcard matching);
    ``size`` is then that ``f`` and ``classes`` the distinct key combinations having it.
    ``classes``: how many classes have each size in ``counts`` (a class-size histogram).
    """
    counts = np.asarray(counts, dtype=np.int64)
    f = counts if frequencies is None else np.asarray(frequencies, dtype=np.int64)
    mult = np.ones(len(counts), dtype=np.int64) if classes is None else np.asarray(classes)
    keep = counts > 0
    counts, f, mult = counts[keep], f[keep], mult[keep].astype(np.int64)
    records_per = counts * mult
    n = records_per.sum()
    sizes, inverse = np.unique(f, return_inverse=True)
    classes = np.bincount(inverse.ravel(), weights=mult, minlength=len(sizes)).astype(np.int64)
    records = np.bincount(inverse.ravel(), weights=records_per, minlength=len(sizes)).astype(
        np.int64
    )
    return [
        {
            "size": int(s),
            "classes": int(c),
            "records": int(r),
            "records_share": float(r / n) if n else 0.0,
        }
        for s, c, r in zip(sizes, classes, records, strict=True)
    ]

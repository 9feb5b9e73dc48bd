"""What the heuristic anonymizers (Mondrian, Datafly, TDS, Anatomy) share.

* :func:`prepare` validates the call (suppression limit, models, sensitive attributes), encodes
  the sensitive attributes once and prepares every model with the ungeneralized frequency set
  of all records (the protocol of :mod:`sdckit.models.base`).
* :func:`class_frequency_set` turns any partitioning of the records (one integer id per record)
  into a :class:`~sdckit.core.frequency.FrequencySet` with that id as its single "QI" column, so
  that all partitions are checked against the models with one vectorized evaluation (design
  rule 2, "group by integers").
* :func:`suppress_violations` applies local suppression under the suppression limit the way ARX
  does for a transformation: the records of violating classes are suppressed, and the models
  are evaluated again on the remaining classes (Prasser & Kohlmayer 2015, "Putting statistical
  disclosure control into practice: the ARX data anonymization tool"; Sweeney 2002, Datafly's
  suppression of at most ``k`` outliers generalized to a share of the records).
* :func:`release` writes the released rows: generalized labels in the QI columns, ``"*"`` in
  every QI of a suppressed record, non-QI columns unchanged (the :mod:`sdckit.core.release`
  contract).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from sdckit.core import params
from sdckit.core.encoding import EncodedColumn, as_text
from sdckit.core.frequency import (
    FrequencySet,
    QuasiIdentifier,
    build_frequency_set,
    encode_ordered,
    encode_quasi_identifier,
    sensitive_column,
)
from sdckit.core.hierarchy import Hierarchy
from sdckit.core.io import to_numeric
from sdckit.core.release import SUPPRESSED
from sdckit.core.schema import Schema
from sdckit.errors import ConfigError, DataError, NoSolutionError
from sdckit.models import model_traits
from sdckit.models.base import ModelResult, PrivacyModel, check_reachable
from sdckit.models.check import _validate

Progress = Callable[[int, int], None] | None


@dataclass
class Prepared:
    """A validated call: data, QIs, encoded sensitive attributes, prepared models."""

    data: pd.DataFrame
    schema: Schema
    qis: list[str]
    models: list[PrivacyModel]
    sensitive: dict[str, EncodedColumn]
    suppression_limit: float
    max_suppressed: int
    algorithm: str
    base: FrequencySet  # QIs at leaf level (hierarchy leaf codes, else dictionary codes)

    @property
    def n(self) -> int:
        """Number of records."""
        return len(self.data)


def refuse_metric(metric: Any, algorithm: str, rule: str) -> None:
    """ConfigError when a metric is given to a heuristic that a metric cannot steer.

    Mondrian, Datafly, TDS and Anatomy choose by their own rule (``rule``), as in their
    papers and in ARX; the result's metrics are all reported either way, so a metric given
    to them would be silently ignored: it is refused, naming the way to optimize it.
    """
    if metric is None:
        return
    name = metric.get("name", metric) if isinstance(metric, Mapping) else metric
    name = getattr(name, "name", name)  # a parsed MetricSpec
    raise ConfigError(
        f"{algorithm}: a metric does not steer this algorithm ({rule}); every metric of "
        f"the result is reported either way. Remove the metric ({name!r}), or use algorithm "
        "'optimal' to minimise it"
    )


def prepare(
    data: pd.DataFrame,
    schema: Schema,
    models: Sequence[PrivacyModel],
    suppression_limit: float,
    algorithm: str,
    *,
    need_qis: bool = True,
) -> Prepared:
    """Validate the call and prepare the models on the ungeneralized frequency set."""
    if not isinstance(data, pd.DataFrame):
        raise ConfigError(f"{algorithm}: data must be a pandas DataFrame, got {type(data)}")
    if not isinstance(schema, Schema):
        raise ConfigError(f"{algorithm}: schema must be a sdckit Schema, got {type(schema)}")
    limit = params.suppression_limit(suppression_limit, f"{algorithm}: suppression_limit")
    schema.check_columns(data)
    qis = schema.quasi_identifiers
    if need_qis and not qis:
        raise ConfigError(
            f"{algorithm}: the schema has no quasi-identifying attribute; mark the columns an "
            "intruder could know as quasi_identifying"
        )
    if len(data) == 0:
        raise DataError(f"{algorithm}: the data has no records")
    models = list(models) if isinstance(models, Sequence) else models
    sensitive_names = _validate(data, schema, models)
    sensitive = {
        a: encode_ordered(
            sensitive_column(data, a),
            a,
            schema.attributes[a].order if a in schema.attributes else None,
        )
        for a in sensitive_names
    }
    base = build_frequency_set(
        [encode_quasi_identifier(data[q], q, schema.hierarchy(q)) for q in qis], None, sensitive
    )
    for m in models:
        m.prepare(base)
    check_reachable(models, base, algorithm, limit)
    n = len(data)
    max_suppressed = int(math.floor(limit * n + 1e-9))
    return Prepared(
        data, schema, qis, list(models), sensitive, limit, max_suppressed, algorithm, base
    )


def require_partition_models(prep: Prepared) -> None:
    """ConfigError unless every model is checkable per partition: its traits say
    ``per_partition`` (:class:`sdckit.models.ModelTraits`; a model whose verdict on a class
    depends on that class alone) and the object is not global. Confidence bounding is not
    among them: a template on a subset of the QIs groups records of several partitions."""
    for m in prep.models:
        if not model_traits(m).per_partition or m.is_global:
            raise ConfigError(
                f"{prep.algorithm}: model {m.name} cannot be checked partition by partition; "
                "this algorithm supports k-anonymity, l-diversity, t-closeness, "
                "(alpha,k)-anonymity, beta-likeness, delta-disclosure privacy, (k,e)- and "
                "(epsilon,m)-anonymity, personalized privacy, MultiR k-anonymity and "
                "(X,Y)-privacy (use "
                "algorithm 'optimal', 'datafly' or 'tds' for other models)"
            )


def class_frequency_set(
    prep: Prepared, class_id: np.ndarray, n_classes: int, rows: np.ndarray | None = None
) -> FrequencySet:
    """Frequency set whose classes are record partitions.

    ``class_id`` holds one partition id (``0 .. n_classes-1``) per record, or per record of
    ``rows`` (indices into the data) when given. All partitions are grouped and their
    sensitive histograms built in one pass.
    """
    q = QuasiIdentifier(
        "__partition__",
        np.asarray(class_id, dtype=np.int32),
        np.arange(n_classes, dtype=np.int64).astype(object),
    )
    sensitive = prep.sensitive
    if rows is not None:
        sensitive = {
            a: EncodedColumn(e.name, e.codes[rows], e.values) for a, e in sensitive.items()
        }
    return build_frequency_set([q], None, sensitive)


def qi_frequency_set(
    prep: Prepared, codes: Mapping[str, np.ndarray], labels: Mapping[str, np.ndarray]
) -> FrequencySet:
    """Frequency set of the QIs recoded to ``codes`` (per record) with ``labels`` per code.

    Codes are compacted to the ones present first, so the grouping radix stays small.
    """
    qs = []
    for q in prep.qis:
        present, dense = np.unique(np.asarray(codes[q]), return_inverse=True)
        qs.append(QuasiIdentifier(q, dense.astype(np.int32), np.asarray(labels[q])[present]))
    return build_frequency_set(qs, None, prep.sensitive)


@dataclass
class SuppressionResult:
    """Outcome of local suppression on one frequency set."""

    ok: bool
    suppressed_classes: np.ndarray  # bool per class of the evaluated frequency set
    suppressed_records: int
    results: list[ModelResult]


def evaluate_all(models: Sequence[PrivacyModel], fs: FrequencySet) -> list[ModelResult]:
    """Evaluate every model on ``fs``."""
    return [m.evaluate(fs) for m in models]


def suppress_violations(
    fs: FrequencySet, models: Sequence[PrivacyModel], max_records: int
) -> SuppressionResult:
    """Suppress violating classes until all models hold, within ``max_records`` records.

    Records of violating classes are suppressed; the models are evaluated again on the
    remaining classes (a model such as LKC-privacy, which looks at projections over several
    classes, can find new violations once classes are removed) until no class violates. ``ok``
    is false when more than ``max_records`` records would have to go or a global model stays
    unsatisfied.
    """
    keep = np.ones(fs.n_classes, dtype=bool)
    current = fs
    while True:
        results = evaluate_all(models, current)
        violating = np.zeros(current.n_classes, dtype=bool)
        for r in results:
            violating |= np.asarray(r.violating, dtype=bool)
        suppressed = int(fs.counts[~keep].sum())
        if not violating.any():
            ok = all(r.satisfied for r in results) and suppressed <= max_records
            return SuppressionResult(ok, ~keep, suppressed, results)
        keep[np.flatnonzero(keep)[violating]] = False
        suppressed = int(fs.counts[~keep].sum())
        if suppressed > max_records:
            return SuppressionResult(False, ~keep, suppressed, results)
        current = fs.select(keep)


def no_solution(prep: Prepared, needed: int | None, what: str = "") -> NoSolutionError:
    """The NoSolutionError of a call whose models cannot be met within the limit."""
    names = ", ".join(m.name for m in prep.models)
    need = f"; {needed} of {prep.n} records would have to be suppressed" if needed else ""
    extra = f" {what}" if what else ""
    return NoSolutionError(
        f"{prep.algorithm}: the privacy models ({names}) cannot be met within the suppression "
        f"limit of {prep.suppression_limit:g} ({prep.max_suppressed} of {prep.n} records)"
        f"{need}.{extra} Raise suppression_limit, relax the models, or use coarser hierarchies."
    )


def numeric_values(prep: Prepared, name: str) -> np.ndarray:
    """A numeric QI's values as floats (DataError naming the row for text or missing values)."""
    values = to_numeric(prep.data[name], name)
    bad = ~np.isfinite(values)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise DataError(
            f"{prep.algorithm}: numeric quasi-identifier {name!r} has a missing or non-finite "
            f"value in row {row + 1} ({int(bad.sum())} in all); fill or drop those rows, or "
            "declare the column as nominal with a hierarchy"
        )
    return values


def is_numeric(prep: Prepared, name: str) -> bool:
    """True when the schema types ``name`` as integer or decimal."""
    return prep.schema.attributes[name].type.numeric


def range_labels(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Closed-interval labels ``"[lo, hi]"``; a single point ``lo == hi`` is printed as is.

    Numbers print as :func:`sdckit.core.encoding.as_text` does (``20.0 -> "20"``).
    """
    lo_t = as_text(pd.Series(np.asarray(lo, dtype=float)))
    hi_t = as_text(pd.Series(np.asarray(hi, dtype=float)))
    ranged = np.char.add(np.char.add(np.char.add("[", lo_t.astype(str)), ", "), hi_t.astype(str))
    ranged = np.char.add(ranged, "]").astype(object)
    return np.where(np.asarray(lo) == np.asarray(hi), lo_t, ranged).astype(object)


def point_share(prep: Prepared, name: str) -> float:
    """Share of an ungeneralized value: ``1/|D|`` with a hierarchy (one leaf), else 0.

    This is the minimum share :func:`sdckit.utility.generalization.output_metrics` assumes,
    so an unchanged attribute has loss 0.
    """
    h = prep.schema.hierarchy(name)
    return 1.0 / len(h.leaves) if h is not None else 0.0


def range_shares(prep: Prepared, name: str, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Share of the numeric ranges ``[lo, hi]`` of QI ``name``.

    With a hierarchy: the hierarchy leaves whose number lies in the range, over all leaves
    (ARX's "leaves under the value / |D|", the range's count of domain values); without:
    the width ``(hi - lo) / (max - min)`` of the attribute's values (0 when they are equal).
    """
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    h = prep.schema.hierarchy(name)
    if h is None:
        values = numeric_values(prep, name)
        span = float(values.max() - values.min())
        return (hi - lo) / span if span > 0 else np.zeros(len(lo))
    leaves = pd.to_numeric(pd.Series(h.leaves, dtype=object), errors="coerce").to_numpy(float)
    leaves = np.sort(leaves[np.isfinite(leaves)])
    inside = np.searchsorted(leaves, hi, "right") - np.searchsorted(leaves, lo, "left")
    return np.maximum(inside, 1) / float(len(h.leaves))


def leaf_shares(hierarchy: Hierarchy, level: int) -> np.ndarray:
    """Per code at ``level``: leaves under it / number of leaves (ARX's domain share)."""
    counts = np.bincount(hierarchy.levels[level], minlength=len(hierarchy.labels[level]))
    return counts / float(len(hierarchy.leaves))


def release(
    prep: Prepared,
    labels: Mapping[str, np.ndarray],
    share: Mapping[str, np.ndarray],
    suppressed: np.ndarray,
) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """Released rows (input order and index) and per-QI shares, with suppression applied."""
    out = prep.data.copy()
    suppressed = np.asarray(suppressed, dtype=bool)
    shares: dict[str, np.ndarray] = {}
    for q in prep.qis:
        col = np.asarray(labels[q], dtype=object).copy()
        col[suppressed] = SUPPRESSED
        out[q] = pd.Series(col, index=out.index, dtype=object)
        s = np.asarray(share[q], dtype=float).copy()
        s[suppressed] = 1.0
        shares[q] = np.clip(s, 0.0, 1.0)
    return out, shares


def report_progress(progress: Progress, done: int, total: int) -> None:
    """Call ``progress(done, total)`` when a callback was given."""
    if progress is not None:
        progress(int(done), int(total))

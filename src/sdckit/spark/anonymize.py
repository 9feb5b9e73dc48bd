"""``sdckit anonymize`` on Spark: search on the driver, transform and verify distributed.

This module is the fast path, taken when the distinct combinations fit the driver
(:func:`sdckit.spark.frequency.count_classes`); beyond that the classes stay on Spark and
:mod:`sdckit.spark.anonymize_distributed` searches, applies and verifies there.

1. The base frequency set (leaf codes of every QI, sensitive histograms) is counted on Spark
   (:mod:`sdckit.spark.frequency`); the models are prepared on it and the local engine's
   optimal search (:func:`sdckit.algorithms.optimal.solve`) runs on the driver -- the same
   optimum, metrics and solution space as the local engine.
2. The transformation is applied on Spark: each QI's leaf code is replaced by its label at
   the chosen level (a broadcast join with the small code -> label map) and the records of
   the suppressed classes -- known as a set of base classes, i.e. leaf-code combinations --
   get ``*`` in every QI (a broadcast join with that set). Identifying attributes are
   dropped. The release is written as a folder of part files (Parquet or CSV).
3. Before the folder is renamed into place, the written files are read back and counted
   again on Spark (the released labels, not the codes the search used): the number of
   records, the suppressed records within the limit, and every model evaluated on the
   recount -- as :func:`sdckit.algorithms.anonymize.verify_output` does locally. A failure
   leaves nothing behind.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sdckit.core.frequency import JointAttribute
from sdckit.core.release import SUPPRESSED
from sdckit.errors import ConfigError, DataError, VerificationError

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame

    from sdckit.algorithms.anonymize import AnonymizationResult
    from sdckit.algorithms.optimal import OptimalSolution
    from sdckit.core.frequency import FrequencySet
    from sdckit.core.schema import Schema
    from sdckit.models.base import PrivacyModel
    from sdckit.spark.frequency import CountedTexts

#: Rows of the release read back for the report's examples (the release itself is the folder).
PREVIEW_ROWS = 20


def check_request(
    columns: Sequence[str],
    schema: Schema,
    models: Sequence[PrivacyModel],
    algorithm: str,
    suppression_limit: float = 0.0,
    metric: str | Mapping[str, Any] | None = None,
    **algorithm_options: Any,
) -> list[str]:
    """ConfigError/DataError for what the Spark engine cannot do or the data lacks, from the
    data's ``columns`` and the request alone (a job checks it before Spark starts,
    :func:`anonymize_spark` again on the data): the algorithm, options, suppression limit
    and metric, the schema's columns and roles, each model's attributes. Returns the
    sensitive attributes the models read."""
    from sdckit.algorithms.options import parse_options
    from sdckit.core import params
    from sdckit.utility.generalization import parse_metric

    sensitive = _check_models(columns, schema, models, algorithm)
    parse_options("optimal", algorithm_options)
    params.suppression_limit(suppression_limit)
    if parse_metric(metric).name == "publisher_payout":
        raise ConfigError(
            "metric publisher_payout is not available on the Spark engine; use engine local"
        )
    return sensitive


def _check_models(
    columns: Sequence[str], schema: Schema, models: Sequence[PrivacyModel], algorithm: str
) -> list[str]:
    from sdckit.algorithms.registry import ALGORITHMS, needed_algorithms
    from sdckit.models import model_traits

    if algorithm not in ALGORITHMS.where(lambda t: "spark" in t.engines):
        raise ConfigError(
            f"engine spark runs the optimal search (algorithm: optimal); {algorithm!r} works "
            "record by record on one machine: use engine local for it"
        )
    missing = [n for n in schema.attributes if n not in columns]
    if missing:
        raise DataError(
            f"column(s) {', '.join(map(repr, missing))} not found in the input; available "
            f"columns: {', '.join(map(str, columns))}"
        )
    if not schema.quasi_identifiers:
        raise ConfigError(
            "the schema has no quasi-identifying attribute; mark the columns an intruder could "
            "know as quasi_identifying"
        )
    pseudonymized = [n for n, a in schema.attributes.items() if a.pseudonymize]
    if pseudonymized:
        raise ConfigError(
            f"attribute(s) {', '.join(map(repr, pseudonymized))} ask for pseudonymization, "
            "which the Spark engine does not do (the keyed HMAC runs on the driver); drop them "
            "(role: identifying without pseudonymize) or use engine local"
        )
    if not models:
        raise ConfigError("name at least one privacy model, e.g. `models: [{k_anonymity: {k: 5}}]`")
    sensitive: list[str] = []
    for m in models:
        if model_traits(m).full_domain:
            raise ConfigError(
                f"model {m.name} is not available on the Spark engine (the verification "
                "judges its classes by their hierarchy levels on the driver); use engine local"
            )
        if getattr(m, "population", None) is not None:
            raise ConfigError(
                f"model {m.name} with a population table is not available on the Spark "
                "engine; use engine local"
            )
        only = needed_algorithms(m)
        if only is not None and algorithm not in only:
            raise ConfigError(
                f"model {m.name} needs algorithm {' or '.join(map(repr, only))}, which the "
                "Spark engine does not run; use engine local"
            )
        for a in m.sensitive_attributes:
            if isinstance(a, JointAttribute):
                raise ConfigError(
                    f"model {m.name} reads the joint values of {', '.join(a.columns)}, which "
                    "the Spark engine does not count; use engine local"
                )
            if a not in columns:
                raise ConfigError(
                    f"model {m.name}: attribute {a!r} is not a column of the data (columns: "
                    f"{', '.join(map(str, columns))})"
                )
            if a in schema.quasi_identifiers:
                raise ConfigError(
                    f"model {m.name}: attribute {a!r} is a quasi-identifier in the schema; a "
                    "sensitive attribute must not also be a quasi-identifier"
                )
            if a in schema.identifying:
                raise ConfigError(
                    f"model {m.name}: attribute {a!r} is identifying and is dropped from the "
                    "output; mark it sensitive"
                )
            if a not in sensitive:
                sensitive.append(a)
    return sensitive


def _small_frame(spark: Any, data: dict[str, np.ndarray], types: dict[str, str]) -> DataFrame:
    """A small Spark DataFrame from driver arrays with the given Spark SQL types."""
    from pyspark.sql import types as T

    kinds = {"int": T.IntegerType(), "string": T.StringType(), "boolean": T.BooleanType()}
    schema = T.StructType([T.StructField(c, kinds[types[c]], False) for c in data])
    return spark.createDataFrame(pd.DataFrame(data), schema=schema)


#: Largest release map (distinct QI combinations) sent to every executor; a larger one is
#: joined by a shuffle instead.
BROADCAST_ROWS = 2_000_000


def release_frame(
    data: DataFrame,
    columns: Sequence[str],
    base: FrequencySet,
    solution: OptimalSolution,
    counted: CountedTexts,
) -> DataFrame:
    """The released rows on Spark: ``data`` joined once with the release map -- one row per
    distinct combination of the QIs' canonical texts (from ``counted``), giving each QI's
    label at the solution's level, or ``*`` in every QI when the combination's base class is
    suppressed (a broadcast join up to :data:`BROADCAST_ROWS` combinations); the output
    keeps ``columns`` in their order."""
    from pyspark.sql import functions as F

    from sdckit.core.frequency import group_keys
    from sdckit.spark.frequency import quasi_identifier_codes
    from sdckit.spark.io import text_column

    item_codes = []
    labels = []
    for q, level in zip(base.quasi_identifiers, solution.levels, strict=True):
        coded, _, _ = quasi_identifier_codes(counted, q.name, q.hierarchy)
        item_codes.append(coded.codes)
        at_level = np.asarray(q.labels(level), dtype=object)[q.step(0, level)]
        labels.append(at_level[coded.codes].astype(str))
    assert solution.frequency_set is not None and solution.violating is not None  # driver path
    suppressed_base = solution.violating[solution.frequency_set.base_map]
    if len(item_codes[0]):
        cards = [q.cardinality(0) for q in base.quasi_identifiers]
        item_class, _, _ = group_keys(item_codes, cards)  # the base classes' own order
        hit = suppressed_base[item_class]
    else:
        hit = np.zeros(0, dtype=bool)
    n_qi = len(base.quasi_identifiers)
    frame = {f"__t{i}": counted.texts[q.name].astype(str)
             for i, q in enumerate(base.quasi_identifiers)}  # fmt: skip
    for i in range(n_qi):
        frame[f"__g{i}"] = np.where(hit, SUPPRESSED, labels[i])
    release_map = pd.DataFrame(frame).drop_duplicates(subset=[f"__t{i}" for i in range(n_qi)])
    mapping = _small_frame(
        data.sparkSession,
        {c: release_map[c].to_numpy() for c in release_map.columns},
        {c: "string" for c in release_map.columns},
    )
    if len(release_map) <= BROADCAST_ROWS:
        mapping = F.broadcast(mapping)
    keyed = data.select(
        "*", *[text_column(data, q.name).alias(f"__t{i}")
               for i, q in enumerate(base.quasi_identifiers)]
    )  # fmt: skip
    out = keyed.join(mapping, on=[f"__t{i}" for i in range(n_qi)], how="inner")
    names = {q.name: i for i, q in enumerate(base.quasi_identifiers)}
    return out.select(
        *[F.col(f"__g{names[c]}").alias(c) if c in names else F.col(f"`{c}`") for c in columns]
    )


def star_classes(recount: FrequencySet) -> np.ndarray:
    """Per class of a recount of released labels: whether every QI is ``*`` (suppressed)."""
    if recount.n_classes == 0 or not recount.quasi_identifiers:
        return np.zeros(recount.n_classes, dtype=bool)
    labels = np.stack(
        [np.asarray(q.values, dtype=object)[recount.keys[:, i]].astype(str)
         for i, q in enumerate(recount.quasi_identifiers)],
        axis=1,
    )  # fmt: skip
    return (labels == SUPPRESSED).all(axis=1)


def star_is_a_class(quasi_identifiers: Sequence[Any], levels: Sequence[int]) -> bool:
    """Whether ``*`` in every QI is a real class at ``levels`` (every QI's level has a ``*``
    label), not the mark of suppression."""
    return all(
        SUPPRESSED in set(map(str, q.labels(level)))
        for q, level in zip(quasi_identifiers, levels, strict=True)
    )


def check_suppressed(suppressed: int, solution: OptimalSolution, budget: int) -> None:
    """VerificationError unless the written release suppresses the records the search did,
    within the budget."""
    if suppressed != solution.suppressed_records or suppressed > budget:
        raise VerificationError(
            f"the written release suppresses {suppressed:,} records; the search suppressed "
            f"{solution.suppressed_records:,} and the limit allows {budget:,}. This is a "
            "bug in sdckit; nothing was written."
        )


def verify_release(
    written: DataFrame,
    base: FrequencySet,
    solution: OptimalSolution,
    models: Sequence[PrivacyModel],
    sensitive: Sequence[str],
    orders: Mapping[str, Sequence[str]],
    budget: int,
) -> tuple[list[str], FrequencySet]:
    """Recount the written release on Spark and re-check it; return the satisfied models'
    names and the recount (classes of the released labels, suppressed records in one class
    of ``*``). Raises :class:`VerificationError` on any failure."""
    from sdckit.spark.frequency import base_frequency_set

    names = list(base.names)
    recount = base_frequency_set(written, names, sensitive, orders=orders)
    if recount.n_records != base.n_records:
        raise VerificationError(
            f"the written release has {recount.n_records:,} records, the input "
            f"{base.n_records:,}; nothing was written. This is a bug in sdckit."
        )
    star = star_classes(recount)
    star_is_class = star_is_a_class(base.quasi_identifiers, solution.levels)
    if not star_is_class:
        check_suppressed(int(recount.counts[star].sum()), solution, budget)
    for m in models:
        m.prepare(recount)
    kept = recount if star_is_class else recount.select(~star)
    satisfied = []
    for m in models:
        r = m.evaluate(kept)
        if not r.satisfied:
            raise VerificationError(
                f"the written release does not satisfy {r.model} ({r.n_violating_classes} "
                f"violating classes): {r.details}. This is a bug in sdckit; nothing was written."
            )
        satisfied.append(r.model)
    return satisfied, recount


def anonymize_spark(
    data: DataFrame,
    schema: Schema,
    models: Sequence[PrivacyModel] | PrivacyModel,
    output: str | Path,
    *,
    delimiter: str = ",",
    neutralize: bool = False,
    partition_by: Sequence[str] = (),
    suppression_limit: float = 0.0,
    metric: str | Mapping[str, Any] | None = None,
    algorithm: str = "optimal",
    progress: Callable[[int, int], Any] | None = None,
    risk: bool = True,
    **algorithm_options: Any,
) -> AnonymizationResult:
    """:func:`sdckit.anonymize` of a Spark DataFrame, the release written to ``output`` (a
    folder of Parquet parts when it ends in ``.parquet``, else CSV parts with a header;
    ``partition_by``: columns of the release written as Hive partition folders).

    The folder is staged and renamed into place after the written files passed the
    recount (inside :func:`sdckit.core.io.output_set` together with the job's other
    outputs). Returns the :class:`~sdckit.algorithms.anonymize.AnonymizationResult` whose
    ``data`` is a preview of the release (its first :data:`PREVIEW_ROWS` rows read back) and
    whose ``details["engine"]`` is ``"spark"``.
    """
    from sdckit.algorithms.anonymize import METRIC_KEYS, AnonymizationResult
    from sdckit.algorithms.optimal import require_hierarchies, solve, suppression_budget
    from sdckit.core import params
    from sdckit.core.io import atomic_write_dir
    from sdckit.models.base import PrivacyModel
    from sdckit.risk.analyze import analyze_frequency_set
    from sdckit.spark.analyze import analyze_distributed
    from sdckit.spark.anonymize_distributed import (
        release_distributed,
        search_distributed,
        verify_distributed,
    )
    from sdckit.spark.classes import ClassTable
    from sdckit.spark.frequency import count_classes, frequency_set_of_counts
    from sdckit.spark.io import read_spark, to_pandas, write_spark
    from sdckit.utility.generalization import parse_metric

    t0 = time.perf_counter()
    if isinstance(models, PrivacyModel):
        models = [models]
    models = list(models)
    sensitive = check_request(
        list(data.columns), schema, models, algorithm, suppression_limit, metric,
        **algorithm_options,
    )  # fmt: skip
    limit = params.suppression_limit(suppression_limit)
    spec = parse_metric(metric)
    qis = require_hierarchies(schema)
    hierarchies = {q: h for q in qis if (h := schema.hierarchy(q)) is not None}
    orders: dict[str, Sequence[str]] = {}
    for a in sensitive:
        order = schema.attributes[a].order if a in schema.attributes else None
        if order is not None:
            orders[a] = order
    counted, chosen = count_classes(data, qis, sensitive, hierarchies, orders=orders)
    columns = [c for c in data.columns if c not in set(schema.identifying)]
    table = counted if isinstance(counted, ClassTable) else None
    if table is not None:
        if table.n_records == 0:
            raise DataError("the data has no records; nothing to anonymize")
        solution, suppressed = search_distributed(table, chosen, models, limit, spec, progress)
        budget = suppression_budget(limit, table.n_records)
        released = release_distributed(data, columns, table, solution.levels, suppressed)
    else:
        assert not isinstance(counted, ClassTable)
        base = frequency_set_of_counts(counted, qis, sensitive, hierarchies, orders)
        if base.n_records == 0:
            raise DataError("the data has no records; nothing to anonymize")
        for m in models:
            m.prepare(base)
        solution = solve(base, models, limit, spec, progress)
        budget = suppression_budget(limit, base.n_records)
        released = release_frame(data, columns, base, solution, counted)
    t1 = time.perf_counter()
    if neutralize:  # CSV injection defence, as the local writer's neutralize=True
        from sdckit.spark.frame import neutralize_formulas_spark

        released = neutralize_formulas_spark(released)
    spark = data.sparkSession
    outcome: dict[str, Any] = {}

    def write_and_verify(folder: Path) -> None:
        write_spark(released, folder, delimiter, target=output, partition_by=partition_by)
        written = read_spark(spark, folder, delimiter=delimiter)
        if table is not None:
            outcome["satisfied"], outcome["risk_after"] = verify_distributed(
                written, table, solution, models, sensitive, orders, budget, risk
            )
        else:
            outcome["satisfied"], recount = verify_release(
                written, base, solution, models, sensitive, orders, budget
            )
            if risk:
                outcome["risk_after"] = analyze_frequency_set(
                    recount, measures=[], missing="category"
                ).summary
        outcome["preview"] = to_pandas(written.limit(PREVIEW_ROWS))

    try:
        atomic_write_dir(output, write_and_verify)
        t2 = time.perf_counter()
        risk_before: dict[str, Any] = {}
        risk_after: dict[str, Any] = outcome.get("risk_after", {})
        if risk and table is not None:
            risk_before = analyze_distributed(
                table, chosen, measures=[], missing="category"
            ).summary
        elif risk:
            risk_before = analyze_frequency_set(base, measures=[], missing="category").summary
    finally:
        if table is not None:
            table.unpersist()
    for summary in (risk_before, risk_after):
        summary.pop("frequency_set", None)
    t3 = time.perf_counter()
    details = dict(solution.details)
    details["engine"] = "spark"
    details["frequency_set"] = chosen
    details["output_folder"] = str(output)
    details["preview_rows"] = len(outcome["preview"])
    details["timings"] = {
        "count_and_search_seconds": t1 - t0,
        "apply_write_verify_seconds": t2 - t1,
        "risk_seconds": t3 - t2,
    }
    details["iloss"] = solution.details["metrics"].get("iloss")
    details["metric"] = spec.name
    details["metric_conventions"] = {
        **spec.conventions(),
        "precision": "Sweeney's precision, higher is better (ARX prints 1 - precision)",
    }
    return AnonymizationResult(
        data=outcome["preview"],
        transformation=solution.transformation,
        suppressed_records=solution.suppressed_records,
        metrics={k: solution.details["metrics"][k] for k in METRIC_KEYS},
        models_satisfied=outcome["satisfied"],
        verified=True,
        nodes_checked=solution.nodes_checked,
        elapsed_seconds=time.perf_counter() - t0,
        risk_before=risk_before,
        risk_after=risk_after,
        details=details,
        algorithm=algorithm,
        models=[m.describe() for m in models],
        suppression_limit=float(limit),
    )

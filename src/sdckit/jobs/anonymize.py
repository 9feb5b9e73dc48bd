"""Run an anonymization job: job file -> :func:`sdckit.anonymize` -> verified outputs.

Nothing is written unless the whole job succeeded: :func:`sdckit.anonymize` verifies the
released rows independently (and raises otherwise); only then are the released data, the
HTML report and the JSON summary written, each atomically (temporary file + rename).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sdckit.core.io import output_set, write_table
from sdckit.errors import ConfigError, MissingHierarchyError
from sdckit.jobs.config import Job
from sdckit.report.writer import write_json


@dataclass
class AnonymizeJobOutcome:
    """The result of a job run plus the files it wrote."""

    result: Any  # sdckit.algorithms.anonymize.AnonymizationResult
    summary: dict[str, Any]
    written: dict[str, Path] = field(default_factory=dict)


def run_anonymize_job(
    job: Job,
    *,
    json_out: Path | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> AnonymizeJobOutcome:
    """Anonymize the job's input as the job says and write its outputs (only on success).

    ``json_out`` overrides ``output.json``. Returns the result, the JSON summary and the
    paths written.
    """
    from sdckit.algorithms.anonymize import anonymize

    if not job.raw.get("models"):
        raise ConfigError(
            f"{job.key('models')} is missing: name at least one privacy model, e.g. "
            "`models: [{k_anonymity: {k: 5}}]`"
        )
    job.check_outputs({"--json": json_out})
    source = job.open()
    if source.distributed:
        return _run_on_spark(job, json_out, progress)
    data = source.frame()
    try:
        result = anonymize(
            data,
            job.schema,
            job.models,
            suppression_limit=job.suppression_limit,
            metric=job.metric,
            algorithm=job.algorithm,
            seed=job.seed,
            progress=progress,
            **job.algorithm_options,
        )
    except MissingHierarchyError as exc:  # say it as the job file would
        raise exc.for_job_file(job.key(f"attributes.{exc.attribute}")) from None
    out = job.output
    json_path = json_out or out.json
    summary = dict(result.to_dict())
    summary["input"] = str(job.input["path"])
    written: dict[str, Path] = {}
    with output_set() as outputs:  # one release: renamed into place together, or not at all
        summary["run_id"] = outputs.run_id
        if out.path is not None:
            written["data"] = write_table(
                result.data, out.path, out.delimiter, neutralize=out.neutralize_formulas
            )
            for name, table in getattr(result, "extra_tables", {}).items():
                extra = out.path.with_name(f"{out.path.stem}.{name}{out.path.suffix}")
                written[name] = write_table(
                    table, extra, out.delimiter, neutralize=out.neutralize_formulas
                )
        _write_report_and_json(result, summary, written, out.report, json_path)
    return AnonymizeJobOutcome(result, summary, written)


def _write_report_and_json(
    result: Any,
    summary: dict[str, Any],
    written: dict[str, Path],
    report: Path | None,
    json_path: Path | None,
) -> None:
    """The report and the JSON of a job (inside its output set), the data files already in
    ``written``; ``summary["outputs"]`` lists what was written (both engines)."""
    summary["outputs"] = {k: str(v) for k, v in written.items()}
    if report is not None:
        from sdckit.report.anonymization_report import anonymization_report

        written["report"] = anonymization_report(result).write_html(report)
    if json_path is not None:
        if report is not None:
            summary["outputs"]["report"] = str(report)
        written["json"] = write_json(json_path, summary)


def check_before_spark(job: Job) -> None:
    """Everything of an ``engine: spark`` anonymization job that can be checked without
    Spark, checked before Spark starts (a JVM takes seconds to a minute to start): the
    input's columns from its header (:meth:`~sdckit.jobs.source.Source.columns`), the
    attributes (:meth:`~sdckit.jobs.config.Job.check_attributes`), the models' parameters
    (when they need no hierarchy from the data), the algorithm, its options, the
    suppression limit and the metric (:func:`sdckit.spark.anonymize.check_request`)."""
    from sdckit.spark.anonymize import check_request

    columns = job.open().columns()
    job.check_attributes(columns)
    models = job.models_without_data()
    if columns is None:
        return
    schema = job.schema_without_data(columns)
    if models is not None:
        check_request(
            columns,
            schema,
            models,
            job.algorithm,
            job.suppression_limit,
            job.metric,
            **job.algorithm_options,
        )
    bare = {q: schema.attributes[q] for q in schema.quasi_identifiers}
    bare = {q: a for q, a in bare.items() if job.spec.attributes[q].hierarchy is None}
    if bare:  # the search's own refusal of a quasi-identifier without a hierarchy
        from sdckit.algorithms.optimal import require_hierarchies
        from sdckit.core.schema import Schema

        try:
            require_hierarchies(Schema(bare))
        except MissingHierarchyError as exc:
            raise exc.for_job_file(job.key(f"attributes.{exc.attribute}")) from None


def _run_on_spark(
    job: Job, json_out: Path | None, progress: Callable[[int, int], None] | None
) -> AnonymizeJobOutcome:
    """The job with ``engine: spark`` (:func:`sdckit.spark.anonymize.anonymize_spark`): the
    release is a folder of part files at ``output.path`` (Parquet when it ends in
    ``.parquet``, else CSV), verified by a recount before it is renamed into place together
    with the report and the JSON."""
    from sdckit.spark.anonymize import anonymize_spark

    out = job.output
    if out.path is None:
        raise ConfigError(
            f"{job.key('output.path')} is missing: a Spark job writes its release as a folder "
            "of part files, e.g. `output: {path: released.parquet}`"
        )
    json_path = json_out or out.json
    check_before_spark(job)
    source = job.open()
    sdf = source.frame()
    with output_set() as outputs:  # one release: renamed into place together, or not at all
        try:
            result = anonymize_spark(
                sdf,
                job.schema,
                job.models,
                out.path,
                delimiter=out.delimiter,
                neutralize=out.neutralize_formulas,
                suppression_limit=job.suppression_limit,
                metric=job.metric,
                algorithm=job.algorithm,
                progress=progress,
                **job.algorithm_options,
            )
        except MissingHierarchyError as exc:  # say it as the job file would
            raise exc.for_job_file(job.key(f"attributes.{exc.attribute}")) from None
        summary = dict(result.to_dict())
        summary["input"] = str(job.input["path"])
        summary["engine"] = source.name
        summary["spark_master"] = job.spec.spark.master
        summary["run_id"] = outputs.run_id
        written: dict[str, Path] = {"data": out.path}
        _write_report_and_json(result, summary, written, out.report, json_path)
    return AnonymizeJobOutcome(result, summary, written)

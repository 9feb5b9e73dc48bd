"""Run an anonymization job: job file -> :func:`sdckit.anonymize` -> verified outputs.

Nothing is written unless the whole job succeeded: :func:`sdckit.anonymize` verifies the
released rows independently (and raises otherwise); only then are the released data, the
HTML report and the JSON summary written, each atomically (temporary file + rename).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sdckit.core.uri import Target
from sdckit.errors import ConfigError, MissingHierarchyError
from sdckit.jobs.config import Job
from sdckit.report.writer import write_json


@dataclass
class AnonymizeJobOutcome:
    """The result of a job run plus the files it wrote."""

    result: Any  # sdckit.algorithms.anonymize.AnonymizationResult
    summary: dict[str, Any]
    written: dict[str, Target] = field(default_factory=dict)


def run_anonymize_job(
    job: Job,
    *,
    json_out: Target | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> AnonymizeJobOutcome:
    """Anonymize the job's input as the job says and write its outputs (only on success).

    ``json_out`` overrides ``output.json``. Returns the result, the JSON summary and the
    paths written.
    """
    if not job.raw.get("models"):
        raise ConfigError(
            f"{job.key('models')} is missing: name at least one privacy model, e.g. "
            "`models: [{k_anonymity: {k: 5}}]`"
        )
    job.refuse_table_keys("anonymize")
    job.check_outputs({"--json": json_out})
    source = job.open()
    source.check_anonymization()  # Spark: everything the header allows, before Spark starts
    out = job.output
    json_path = json_out or out.json
    with source.outputs() as outputs:  # one release: renamed into place together, or not at all
        try:
            result, written = source.anonymize(progress)
        except MissingHierarchyError as exc:  # say it as the job file would
            raise exc.for_job_file(job.key(f"attributes.{exc.attribute}")) from None
        summary = dict(result.to_dict())
        summary["input"] = str(job.input["path"])
        summary.update(source.summary_fields())
        summary["run_id"] = outputs.run_id
        meta = source.file_meta()
        labels = meta.column_labels if meta is not None else None
        _write_report_and_json(result, summary, written, out.report, json_path, labels)
    return AnonymizeJobOutcome(result, summary, written)


def _write_report_and_json(
    result: Any,
    summary: dict[str, Any],
    written: dict[str, Target],
    report: Target | None,
    json_path: Target | None,
    labels: dict[str, str] | None = None,
) -> None:
    """The report and the JSON of a job (inside its output set), the data files already in
    ``written``; ``summary["outputs"]`` lists what was written (both engines). ``labels``:
    the input file's variable labels, shown in the report."""
    summary["outputs"] = {k: str(v) for k, v in written.items()}
    if report is not None:
        from sdckit.report.anonymization_report import anonymization_report

        written["report"] = anonymization_report(result, labels).write_html(report)
    if json_path is not None:
        if report is not None:
            summary["outputs"]["report"] = str(report)
        written["json"] = write_json(json_path, summary)

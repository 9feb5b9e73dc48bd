"""Run a risk analysis (``sdckit analyze``): the data and its roles from a job file or the
options, the re-identification risk on the job's engine, the JSON summary and the HTML report.

The input is read through the job's :class:`~sdckit.jobs.source.Source`
(:meth:`~sdckit.jobs.source.Source.risk`: :func:`sdckit.risk.analyze.analyze` locally,
:func:`sdckit.spark.analyze.analyze_spark` on Spark, the request checked on the header before
Spark starts). Everything is computed and rendered before the first file is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sdckit.core.uri import Target
from sdckit.errors import ConfigError, DataError
from sdckit.jobs.config import Job, job_from_dict, load_job

__all__ = ["AnalyzeRequest", "analyze_request", "run_analyze"]


@dataclass
class AnalyzeRequest:
    """What an analysis reads and writes: the ``job`` whose input is analyzed, its
    ``input`` as named in the summary, the quasi-identifiers, the sensitive attributes and
    the output paths (a job file's, unless options named them)."""

    job: Job
    input: Path
    qi: list[str]
    sensitive: list[str] = field(default_factory=list)
    json_out: Target | None = None
    html_out: Target | None = None


def analyze_request(
    input: Path | None,
    qi: list[str],
    sensitive: list[str],
    *,
    delimiter: str | None = None,
    encoding: str = "utf-8",
    json_out: Target | None = None,
    html_out: Target | None = None,
    config: Path | None = None,
    engine: str | None = None,
    spark_master: str | None = None,
    spark_conf: Sequence[str] | None = None,
) -> AnalyzeRequest:
    """The analysis the options describe. With ``config`` (a job file) the input, its
    delimiter and encoding, the quasi-identifiers (``qi:``, else the attributes with role
    quasi_identifying), the sensitive attributes, the engine and the JSON/HTML outputs come
    from the job; options given here win. The roles are read without starting Spark where
    the header names the columns (:meth:`~sdckit.jobs.source.Source.roles`)."""
    from sdckit.jobs.source import check_engine

    job = None
    if config is not None:
        job = load_job(config).with_engine(engine, spark_master, spark_conf)
        job.refuse_table_keys("analyze")
        if input is not None:
            raise ConfigError("give the data either as INPUT or in the job file's input:, not both")
        src = job.input["path"]
        input = src if isinstance(src, Path) else job._path(src)  # noqa: A001
        delimiter = delimiter or job.input.get("delimiter")
        encoding = job.input.get("encoding", encoding) if encoding == "utf-8" else encoding
        schema = job.open().roles()
        if not qi:
            qi = list(job.spec.qi or []) or schema.quasi_identifiers
        if not sensitive:
            sensitive = schema.sensitive
        json_out = json_out or job.output.json
        html_out = html_out or job.output.report
    if input is None:
        raise DataError("name the data to analyze (sdckit analyze DATA.csv) or give --config JOB")
    if not qi:
        raise DataError("name the quasi-identifiers with --qi A,B,C")
    read = {"delimiter": delimiter, "encoding": encoding}
    if job is None:
        doc: dict[str, Any] = {"input": {"path": str(input), **read}}
        doc["engine"] = check_engine(engine or "local")
        doc["spark"] = {"master": spark_master or "local[2]"}
        job = job_from_dict(doc).with_engine(conf=spark_conf)
    else:  # the options' delimiter and encoding read the input and the population
        job = job.with_input(**read)
    return AnalyzeRequest(job, input, list(qi), list(sensitive), json_out, html_out)


def run_analyze(
    request: AnalyzeRequest, population: Path | None = None, **options: Any
) -> dict[str, Any]:
    """The risk of the request's data (``options``: :func:`sdckit.risk.analyze.analyze`'s,
    ``sensitive`` aside), its summary written to the JSON and rendered as the HTML report;
    returns the summary. No output may overwrite the input or the population table."""
    from sdckit.core.io import check_output_paths, write_text
    from sdckit.core.uri import is_remote
    from sdckit.models.attacks import attack_coverage
    from sdckit.report.risk_report import risk_report
    from sdckit.report.writer import write_json
    from sdckit.risk.analyze import measured_models

    json_out, html_out = request.json_out, request.html_out
    source = request.job.open()
    outputs = {"--json": json_out, "--html": html_out}
    remote = {k: str(v) for k, v in outputs.items() if is_remote(v)}
    source.accept_remote_outputs(remote)  # refused, or checked when the engine starts
    check_output_paths(
        {k: v for k, v in outputs.items() if k not in remote},
        {"input": request.input, "--population": population},
    )
    result = source.risk(request.qi, request.sensitive, population, **options)
    summary = dict(result.summary)
    summary["input"] = str(request.input)
    summary["engine"] = source.name
    summary["attack_coverage"] = attack_coverage(measured_models(summary))
    # Everything is computed and rendered before the first file is written, so a failure
    # leaves nothing behind (each write is itself atomic).
    with source.outputs():  # one release: renamed into place together, or not at all
        html = (
            risk_report(
                summary,
                result.class_risk,
                source=str(request.input),
                risk_weights=result.class_records,
            ).render_html()
            if html_out
            else None
        )
        if json_out:
            write_json(json_out, summary)
        if html_out and html is not None:
            write_text(html_out, html)
    return summary

"""The mask job: read, validate the methods, mask, report, write.

A job file's ``methods:`` list is parsed into a :class:`~sdckit.masking.pipeline.Pipeline` of
masking-method objects (:mod:`sdckit.masking.pipeline` documents every method name and
parameter, the per-step ``allow_unchanged`` and how seeds are derived); errors name the key,
``'job.yaml': methods[i].<method>.<param>``. :func:`run_mask_job` reads the input, drops (or
pseudonymizes) the identifying attributes, applies the pipeline with the job's ``seed``,
evaluates the result and writes the release, the report and the JSON. A job with
``engine: spark`` runs the same steps on Spark: the runner asks the job's
:class:`~sdckit.jobs.source.Source` to mask (:func:`mask_locally` here,
:meth:`sdckit.spark.source.SparkSource.mask` on Spark) and summarizes, reports and writes what
it returns the same way on both engines.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sdckit.core.uri import Target
from sdckit.errors import ConfigError


@dataclass
class MaskJobResult:
    """What :func:`run_mask_job` produced.

    ``data`` is the released table (a Spark DataFrame for ``engine: spark``, in input order,
    recomputed from the input when read again); ``records`` the published method records (as
    :meth:`~sdckit.masking.pipeline.Pipeline.apply` returns them); ``summary`` the JSON
    document (also written to the job's ``output.json``); ``report`` the HTML report;
    ``written`` the files written, by kind (``data``, ``report``, ``json``).
    """

    data: Any
    records: list[dict]
    summary: dict[str, Any]
    report: Any
    written: dict[str, Target] = field(default_factory=dict)

    def _repr_html_(self) -> str:
        """The mask job's result in a Jupyter notebook: the sections of its HTML report
        (masked columns before/after, the numeric evaluation), as a fragment with scoped
        styles (:meth:`sdckit.report.writer.Report.render_fragment`)."""
        return str(self.report.render_fragment())


@dataclass
class MaskRun:
    """A mask job's pipeline applied on one engine (:meth:`~sdckit.jobs.source.Source.mask`):
    what the runner summarizes, reports and writes.

    ``released`` the masked data in the engine's frame (input order, identifiers dropped or
    pseudonymized); ``records`` the published method records; ``records_in`` /
    ``records_out`` the record counts; ``identifiers`` the identifying columns ``dropped`` and
    ``pseudonymized``; ``columns``, ``category_changes``, ``numeric_evaluation`` and
    ``original_records`` the summary's evaluation of the masked columns; ``engine_fields``
    what the summary says of the engine's randomness (after ``strata``); ``close`` frees
    what the engine keeps for the run (cached frames), once the outputs are written.
    """

    released: Any
    records: list[dict]
    records_in: int
    records_out: int
    identifiers: dict[str, list[str]]
    columns: Any
    category_changes: Any
    numeric_evaluation: Any
    original_records: Any
    engine_fields: dict[str, Any] = field(default_factory=dict)
    close: Any = None


def _prepare_identifiers(
    data: pd.DataFrame, schema: Any, base_dir: Path | None = None
) -> tuple[pd.DataFrame, dict[str, list[str]]]:
    """Drop the identifying attributes, or replace them by keyed tokens where configured.

    The rule is :func:`sdckit.core.pseudonymize.protect_identifiers`; this adds which columns
    were dropped and which pseudonymized, for the report.
    """
    from sdckit.core.pseudonymize import protect_identifiers

    out, _ = protect_identifiers(data, schema, base_dir)
    ids = [n for n in schema.identifying if n in data.columns]
    return out, {
        "dropped": [n for n in ids if n not in out.columns],
        "pseudonymized": [n for n in ids if n in out.columns],
    }


def _typed(data: pd.DataFrame, schema: Any) -> pd.DataFrame:
    """Give text columns (CSV input is read as text) their numeric type where they are numbers.

    A column declared ``integer``/``decimal`` in the schema must parse (DataError naming the
    row and value otherwise); a column declared with another type stays text; an undeclared
    text column becomes numeric when every non-missing value parses as a number and none has
    a leading zero (codes such as ZIP ``01234`` stay text). Integral columns become ``int64``
    (``Int64`` with missing values), the others ``float64``. In text columns an empty cell
    becomes a missing value (what PRAM leaves alone and local suppression writes); other
    tokens such as ``NA`` stay values of a text column (``NA`` may be Namibia).
    """
    from sdckit.core.io import MISSING_TOKENS, to_numeric

    out = data.copy()
    for c in data.columns:
        s = data[c]
        if s.dtype != object and not pd.api.types.is_string_dtype(s.dtype):
            continue
        attr = schema.attributes.get(c)
        if attr is not None and not attr.type.numeric:
            out[c] = s.mask(s.astype(str).str.strip() == "")  # empty cell = missing
            continue
        if attr is None:  # numeric when every value parses (each distinct value once)
            codes, uniques = pd.factorize(s)  # a missing cell: code -1
            text = pd.Series(uniques, dtype=object).astype(str).str.strip()
            blank = np.r_[(text == "").to_numpy(), False][codes]  # (index -1: the False)
            absent = text.isin(MISSING_TOKENS).to_numpy()
            present = text[~absent]
            if present.empty or present.str.match(r"^[+-]?0\d").any():
                out[c] = s.mask(blank)  # empty cell = missing
                continue
            parsed = pd.to_numeric(text.where(~absent), errors="coerce")
            if parsed[~absent].isna().any():
                out[c] = s.mask(blank)  # empty cell = missing
                continue
            x = np.r_[parsed.to_numpy(dtype=np.float64, na_value=np.nan), np.nan][codes]
        else:
            x = to_numeric(s, c, "the input")
        ok = ~np.isnan(x)
        if np.all(x[ok] == np.round(x[ok])) and np.all(np.abs(x[ok]) < 2**53):
            if ok.all():
                out[c] = x.astype(np.int64)
            else:
                out[c] = pd.array(np.where(ok, x, 0).astype(np.int64), dtype="Int64")
                out.loc[~ok, c] = pd.NA
        else:
            out[c] = x
    return out


def _touched_columns(records: Sequence[dict], columns: Sequence[str]) -> list[str]:
    """Columns named in the methods' parameters, in data order."""
    named: set[str] = set()

    def collect(v: Any) -> None:
        if isinstance(v, str):
            named.add(v)
        elif isinstance(v, (list, tuple)):
            for item in v:
                collect(item)

    for r in records:
        for key, v in r["parameters"].items():
            if key in (
                "columns",
                "column",
                "quasi_identifiers",
                "swap_columns",
                "carry_along",
            ):
                collect(v)
    return [c for c in columns if c in named]


def _strata_of(records: Sequence[dict]) -> list[dict[str, Any]]:
    """The strata of every step that microaggregated within strata (number, smallest and
    largest), once per step: what the summary and the report state."""
    out: dict[int, dict[str, Any]] = {}
    for r in records:
        strata = r["details"].get("strata") if isinstance(r.get("details"), dict) else None
        if isinstance(strata, dict) and "n_strata" in strata:
            out.setdefault(r["step"], {"step": r["step"], **strata})
    return list(out.values())


def _check_identifiers_unused(
    methods: Sequence[tuple[str, dict]], dropped: list[str], where: str = "methods"
) -> None:
    """ConfigError when a method names an identifying attribute (dropped before masking);
    ``where`` is the key of the ``methods`` list in messages."""
    if not dropped:
        return

    def names(v: Any) -> list[str]:
        if isinstance(v, str):
            return [v]
        if isinstance(v, (list, tuple)):
            return [x for item in v for x in names(item)]
        return []

    for i, (name, params) in enumerate(methods):
        for pname, v in params.items():
            hit = [c for c in names(v) if c in dropped]
            if hit:
                raise ConfigError(
                    f"{where}[{i}].{name}.{pname}: column {hit[0]!r} is an identifying attribute; "
                    "identifying attributes are dropped before masking -- remove it from the "
                    "method or give it another role (or `pseudonymize:` to keep it as tokens)"
                )


#: The mask job's options (``options:``); the methods' parameters go under ``methods:``.
_OPTIONS = ("original_share_warning",)


def _share_threshold(job: Any) -> float:
    """The mask job's ``options: {original_share_warning: 0.1}`` (its only option), checked
    before the input is read."""
    from sdckit.risk.original_records import check_threshold

    options = job.algorithm_options
    unknown = [k for k in options if k not in _OPTIONS]
    if unknown:
        raise ConfigError(
            f"{job.key('options.' + str(unknown[0]))}: a mask job takes one option, "
            "original_share_warning (the share of released records equal to an original "
            "record above which the report warns, e.g. `options: {original_share_warning: "
            "0.1}`); the methods' parameters go under `methods:`"
        )
    return check_threshold(
        options.get("original_share_warning"), job.key("options.original_share_warning")
    )


def _source_name(src: Any) -> str:
    return str(src) if isinstance(src, (str, Path)) else f"a {type(src).__name__} in memory"


def run_mask_job(job: Any, json_path: str | Path | None = None) -> MaskJobResult:
    """Run a mask job (a :class:`sdckit.jobs.config.Job`, a job-file path or a dict).

    Steps: read the input; drop the identifying attributes (or pseudonymize them with a keyed
    HMAC where the schema says so); apply the job's ``methods`` (a
    :class:`~sdckit.masking.pipeline.Pipeline`, validated before the input is read) with its
    ``seed``; summarize every masked column before/after and evaluate the numeric ones
    (:func:`numeric_evaluation`); build the HTML report. Only when all of that succeeded are
    the outputs written (``output.path`` CSV/Parquet, ``output.report`` HTML,
    ``output.json`` or ``json_path``), each atomically. The summary's ``original_records``
    counts the released records equal to an input record on every released column
    (:func:`sdckit.risk.original_records.original_records`), warning above ``options:
    {original_share_warning: ...}`` (default 0.1). Errors are :class:`SdcInputError`
    subclasses naming the key, column or value.
    """
    from sdckit.core.io import write_text
    from sdckit.jobs.config import Job, job_from_dict, load_job
    from sdckit.masking.pipeline import Pipeline
    from sdckit.report.writer import write_json

    if isinstance(job, (str, Path)):
        job = load_job(job)
    elif isinstance(job, Mapping):
        job = job_from_dict(job)
    if not isinstance(job, Job):
        raise ConfigError(f"run_mask_job: expected a job, a job-file path or a dict, got {job!r}")
    methods = job.methods
    if not methods:
        raise ConfigError(
            f"{job.key('methods')}: a mask job needs at least one method, e.g. "
            "`methods: [{microaggregation: {columns: [a, b], k: 3}}]`"
        )
    job.refuse_table_keys("mask")
    where = job.key("methods")
    pipeline = Pipeline.from_entries(methods, where)  # fail on the config before reading data
    source = job.open()
    source.check_mask(pipeline, methods, where)  # Spark: before Spark starts
    job.check_outputs({"--json": json_path})
    run = source.mask(pipeline, methods, where, _share_threshold(job))
    try:
        spec = job.output
        json_target = Path(json_path) if json_path is not None else spec.json
        summary: dict[str, Any] = {
            "command": "mask",
            **source.summary_fields(),
            "input": _source_name(job.input["path"]),
            "records_in": run.records_in,
            "records_out": run.records_out,
            "seed_given": job.seed is not None,
            "job_methods": [{"method": n, "parameters": p} for n, p in methods],
            "identifiers": run.identifiers,
            "methods": run.records,
            "strata": _strata_of(run.records),
            **run.engine_fields,
            "columns": run.columns,
            "category_changes": run.category_changes,
            "numeric_evaluation": run.numeric_evaluation,
            # released records equal to a record of the input (identifiers as released)
            "original_records": run.original_records,
            "outputs": {
                "data": spec.path,
                "report": spec.report,
                "json": json_target,
            },
        }
        from sdckit.report.mask_report import mask_report

        report = mask_report(summary)
        written: dict[str, Target] = {}
        with source.outputs() as outputs:  # one release: renamed into place together, or not at all
            summary["run_id"] = outputs.run_id
            html = report.render_html()
            if spec.path is not None:
                written["data"] = source.write(
                    run.released, spec.path, spec.delimiter, neutralize=spec.neutralize_formulas
                )
            if spec.report is not None:
                written["report"] = write_text(spec.report, html)
            if json_target is not None:
                written["json"] = write_json(json_target, summary)
    finally:
        if run.close is not None:
            run.close()
    return MaskJobResult(run.released, run.records, summary, report, written)


def mask_locally(
    job: Any, pipeline: Any, methods: Sequence[tuple[str, dict]], where: str, share_limit: float
) -> MaskRun:
    """The pipeline on the input table read on this machine (``engine: local``): identifiers
    dropped or pseudonymized (:func:`_prepare_identifiers`), columns typed
    (:func:`_typed`), the steps applied with the job's seed, the masked columns summarized
    (:func:`sdckit.evaluation.masking_summary.column_changes`,
    :func:`~sdckit.evaluation.masking_summary.numeric_evaluation`) and the released records
    equal to an input record counted
    (:func:`sdckit.risk.original_records.original_records`)."""
    from sdckit.evaluation.masking_summary import column_changes, numeric_evaluation
    from sdckit.risk.original_records import original_records

    data = job.open().frame()
    prepared, ids = _prepare_identifiers(data, job.schema, job.base_dir)
    prepared = _typed(prepared, job.schema)
    _check_identifiers_unused(methods, ids["dropped"], where)
    masked, records = pipeline.apply(prepared, seed=job.seed, where=where)
    touched = _touched_columns(records, list(masked.columns))
    changes, categories = column_changes(prepared, masked, touched)
    return MaskRun(
        released=masked,
        records=records,
        records_in=len(data),
        records_out=len(masked),
        identifiers=ids,
        columns=changes,
        category_changes=categories,
        numeric_evaluation=numeric_evaluation(
            prepared, masked, touched, seed=0 if job.seed is None else job.seed
        ),
        original_records=original_records(prepared, masked, threshold=share_limit).to_dict(),
    )


#: The parameters of a masking step that name columns (as lists, or one name).
_COLUMN_PARAMETERS = ("columns", "column", "strata", "block_by", "groups")


def check_mask_columns(
    job: Any, pipeline: Any, methods: Sequence[tuple[str, dict]], where: str
) -> None:
    """What a mask job on Spark can have checked before Spark starts (a JVM takes seconds to
    a minute to start), beside the pipeline and the outputs: the input's columns from its
    header (:meth:`~sdckit.jobs.source.Source.columns`), the attributes and their keys
    (:meth:`~sdckit.jobs.config.Job.check_attributes`), no method naming an identifying
    attribute that is dropped, and every column a method names in the input (the error the
    step gives on the data, :func:`sdckit.spark.mask.apply_pipeline_spark`)."""
    from sdckit.errors import DataError

    columns = job.open().columns()
    job.check_attributes(columns)
    if columns is None:
        return
    attributes = job.spec.attributes
    dropped = [
        n for n, a in attributes.items()
        if str(a.role) == "identifying" and a.pseudonymize is None and n in columns
    ]  # fmt: skip
    _check_identifiers_unused(methods, dropped, where)
    names = [c for c in columns if c not in dropped]
    for i, step in enumerate(pipeline.steps):
        given = step.model_dump()
        named: list[str] = []
        for key in _COLUMN_PARAMETERS:
            value = given.get(key)
            if isinstance(value, str):
                named.append(value)
            elif isinstance(value, (list, tuple)):
                for v in value:
                    named += [v] if isinstance(v, str) else [x for x in v if isinstance(x, str)]
        missing = list(dict.fromkeys(c for c in named if c not in names))
        if missing:
            raise DataError(
                f"{where}[{i}].{step.spec_name}: column(s) {', '.join(map(repr, missing))} not "
                f"found; available columns: {', '.join(names)}"
            )

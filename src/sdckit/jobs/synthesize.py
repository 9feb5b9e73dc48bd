"""The synthesize job: read, validate, synthesize, evaluate, write (together or not at all).

::

    input: {path: adult.csv, delimiter: ";"}
    attributes:                     # optional: roles (TCAP's keys and target, partial's
      age: quasi_identifying        #   quasi-identifiers, identifying columns dropped) and
      salary-class: sensitive       #   hierarchies (safepub)
    columns: [age, sex, ...]        # optional: only these columns
    method: cart                    # cart | parametric | partial | hybrid | marginal_dp |
                                    # safepub | alpha_beta
    epsilon: 1.0                    # marginal_dp, safepub
    delta: 1.0e-6
    m: 1                            # synthetic copies (cart, parametric, partial, hybrid,
                                    # marginal_dp)
    seed: 3
    options: {min_leaf: 5, holdout: 0.2}   # the method's parameters; holdout (default 0.2);
                                           # records: per copy (default: as many as the
                                           # input, holdout or not; n: is its former name);
                                           # regression: {target: age, predictors: [sex]};
                                           # original_share_warning (default 0.1);
                                           # dcr_sample: synthetic records the DCR
                                           # measures (default 2000; null: all)
    output: {path: synthetic.csv, report: synth.html, json: synth.json}

With ``m`` > 1 copies, copy ``i`` is written to ``<stem>_<i><suffix>`` (``synthetic_1.csv``,
``synthetic_2.csv``, ...; synthpop's ``write.syn`` names them so); the evaluation is of the
first copy. The method's parameters are those of :mod:`sdckit.synthesis` (each method's
class documents them); ``marginal_dp`` needs every column's public domain declared there
(``domain``, ``bounds``; :mod:`sdckit.synthesis.marginal_dp`). The JSON and the report keep
what may be published with the copies (``release``) apart from the evaluation against the
original, which is for the data steward and not covered by epsilon (``steward_evaluation``;
:meth:`sdckit.synthesis.api.SynthesisResult.to_dict`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sdckit.core.formats import file_meta
from sdckit.core.io import output_set, write_table
from sdckit.core.uri import Target
from sdckit.errors import ConfigError, ParameterError, SdcInputError
from sdckit.jobs.config import Job
from sdckit.report.writer import write_json

__all__ = ["SynthesizeJobOutcome", "check_parameters", "copy_paths", "run_synthesize_job"]

#: Options of the job itself (the others are the method's parameters).
_JOB_OPTIONS = (
    "holdout",
    "records",
    "n",
    "regression",
    "original_share_warning",
    "dcr_sample",
)


@dataclass
class SynthesizeJobOutcome:
    """The synthesis result, the JSON summary and the files written."""

    result: Any  # sdckit.synthesis.api.SynthesisResult
    summary: dict[str, Any]
    written: dict[str, Target] = field(default_factory=dict)


def copy_paths(path: Path, m: int) -> list[Path]:
    """Where the ``m`` copies go: ``path`` itself for one, ``<stem>_<i><suffix>`` for more."""
    if m == 1:
        return [path]
    return [path.with_name(f"{path.stem}_{i}{path.suffix}") for i in range(1, m + 1)]


def check_parameters(
    method: str,
    parameters: dict[str, Any],
    where: str,
    *,
    epsilon: float | None = None,
    delta: float | None = None,
    schema: Any = None,
) -> None:
    """Build ``method``'s synthesizer from ``parameters`` (the job's ``options:`` less
    :data:`_JOB_OPTIONS`; nothing is fitted), so that a bad or unknown parameter stops the job
    before the fit: :class:`~sdckit.errors.ParameterError` naming ``where`` (the key path of
    ``options``) and the parameter (:func:`sdckit.synthesis.api.make_synthesizer`)."""
    from sdckit.synthesis.api import make_synthesizer

    try:
        make_synthesizer(method, epsilon=epsilon, delta=delta, schema=schema, **parameters)
    except ParameterError as exc:
        raise ParameterError(f"{where}: {exc}") from None


def run_synthesize_job(job: Job, *, json_out: Target | None = None) -> SynthesizeJobOutcome:
    """Synthesize as the job says and write the copies, the report and the JSON."""
    from sdckit.jobs.mask import _typed
    from sdckit.synthesis.api import DCR_SAMPLE, METHODS, synthesize

    job.refuse_table_keys("synthesize")
    spec = job.spec
    method = spec.method or "cart"
    if method not in METHODS:
        from sdckit.core.spec import did_you_mean

        raise ConfigError(
            f"{job.key('method')}: unknown method {method!r}; one of {', '.join(METHODS)}"
            f"{did_you_mean(method, list(METHODS))}"
        )
    options = job.algorithm_options
    if "records" in options and "n" in options:
        raise ConfigError(
            f"{job.key('options')}: give the records per copy once, as records: (n: is its "
            "former name)"
        )
    records = options.get("records", options.get("n"))
    job.check_outputs({"--json": json_out})
    data = job.read_input()
    schema = job.schema
    data = _typed(data, schema)
    if spec.columns:
        missing = [c for c in spec.columns if c not in data.columns]
        if missing:
            raise ConfigError(
                f"{job.key('columns')}: column {missing[0]!r} is not in the input (columns: "
                f"{', '.join(map(str, data.columns))})"
            )
        data = data[list(spec.columns)]
    parameters = {k: v for k, v in options.items() if k not in _JOB_OPTIONS}
    check_parameters(
        method,
        parameters,
        job.key("options"),
        epsilon=spec.epsilon,
        delta=spec.delta,
        schema=schema if spec.attributes else None,
    )
    m = spec.m or 1
    try:
        result = synthesize(
            data,
            method,
            seed=spec.seed,
            m=m,
            n=records,
            epsilon=spec.epsilon,
            delta=spec.delta,
            holdout=options.get("holdout", 0.2),
            regression=options.get("regression"),
            original_share_warning=options.get("original_share_warning"),
            dcr_sample=options.get("dcr_sample", DCR_SAMPLE),
            schema=schema if spec.attributes else None,
            options=parameters,
        )
    except SdcInputError as exc:
        if isinstance(exc, ConfigError):
            raise ConfigError(f"{job.source}: {exc}") from None
        raise
    summary = result.to_dict()
    summary["input"] = str(job.input["path"]) if not hasattr(job.input["path"], "shape") else None
    summary["seed_given"] = spec.seed is not None
    out = job.output
    json_path = json_out or out.json
    written: dict[str, Target] = {}
    with output_set() as outputs:
        summary["run_id"] = outputs.run_id
        if out.path is not None:
            paths = copy_paths(Path(out.path), len(result.copies))  # (local: no URI here)
            meta = file_meta(job.read_input())  # an SPSS/Stata/SAS input's labels
            for i, (copy, path) in enumerate(zip(result.copies, paths, strict=True), 1):
                written[f"data_{i}" if len(paths) > 1 else "data"] = write_table(
                    copy, path, out.delimiter, meta=meta
                )
            summary["outputs_data"] = [str(p) for p in paths]
        if out.report is not None:
            from sdckit.report.synthesis_report import synthesis_report

            training = data  # the report's marginal plots compare with the whole input
            written["report"] = synthesis_report(summary, training, result.data).write_html(
                out.report
            )
        if json_path is not None:
            summary["outputs"] = {k: str(v) for k, v in written.items()}
            written["json"] = write_json(json_path, summary)
    return SynthesizeJobOutcome(result, summary, written)

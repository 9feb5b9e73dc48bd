"""``sdckit compare`` jobs: a grid of protections of one data set, evaluated and ranked.

A compare job runs a grid of masking methods x parameters
(:class:`sdckit.masking.pipeline.Pipeline`) and of anonymizations x parameters
(:func:`sdckit.anonymize`) on one input, evaluates every protected file against the original
and ranks the configurations by R-U score on one of two scales (``options.scale``: ``score``,
the default for masking-only grids, or ``reidentification``, the default as soon as the grid
anonymizes). This module is the job: the grid language (:func:`expand_grid` turns a job file's
``grid:`` into :class:`~sdckit.evaluation.comparison.Configuration` objects) and
:func:`run_compare_job` (read -> validate -> call -> write). The measurement -- the scales,
evaluating and ranking -- is :mod:`sdckit.evaluation.comparison`; the R-U map and the page are
:mod:`sdckit.report.compare_report`.

Grid file (YAML or TOML; read by :func:`sdckit.jobs.config.load_job`, paths relative to it)::

    input: {path: census.csv, delimiter: ","}
    columns: [AGI, FEDTAX, PTOTVAL]   # masked and compared (default `columns` of each method)
    qi: [AGI, FEDTAX]                 # quasi-identifiers, the intruder's attributes (default:
                                      # the numeric columns, or the attributes' QIs)
    attributes: {...}                 # as in an anonymize job; needed by anonymize entries
    seed: 1                           # one seed for every configuration (same seed, same run)
    grid:
      - microaggregation: {method: mdav, k: [3, 5, 10]}        # 3 configurations
      - noise: {alpha: [0.1, 0.5], method: [uncorrelated, correlated]}   # 4
      - rank_swapping: {p_percent: [5, 10, 15]}                # 3
      - label: mdav k=3 + noise                                # a pipeline: 1 configuration
        methods:
          - microaggregation: {k: 3}
          - noise: {alpha: 0.05}
      - protected: {path: census_arx.csv, label: ARX output}  # a file made by any tool
      - anonymize:                                             # 3 x 2 = 6 configurations
          models: [{k_anonymity: {k: [2, 5, 10]}}]
          suppression_limit: [0, 0.05]
          algorithm: optimal                                   # or a list: [optimal, mondrian]
      - synthesize:                                            # 3
          method: [cart, marginal_dp]
          epsilon: [0.5, 1]                                    # marginal_dp only
          delta: 1.0e-6
          options: {domain: {sex: [m, f]}, bounds: {age: [0, 99]}}  # marginal_dp's domain
    options: {categorical: [], transparency: true, scale: reidentification,
              max_risk: 5}   # optional ceilings (DR, and max_loss for IL; 0-100): the
                             # releases within them are ranked first
    output: {report: compare.html, json: compare.json}

A grid entry ``{method: {param: value, ...}}`` expands to the cartesian product of every
parameter given as a list (in the order written), except parameters whose value is itself a
list or mapping (``columns``, ``groups``, PRAM ``matrix``, ...): those are taken as they are.
Method names and parameters are those of :mod:`sdckit.masking.pipeline`; ``columns`` defaults to
the top-level ``columns``. An entry with ``methods:`` (and an optional ``label``) is one
configuration applying several methods in order (each method's lists are expanded too). A
``protected: {path, label, delimiter}`` entry adds a protected file made elsewhere (ARX,
sdcMicro, ``sdckit anonymize``...; same records in the same order), evaluated as it is. An
``anonymize: {models, suppression_limit, algorithm, metric, options}`` entry (the keys of an
anonymize job) expands every list the same way -- model parameters, suppression limits,
algorithms, metrics -- and runs :func:`sdckit.anonymize` with the top-level ``attributes``;
an anonymization without a solution is ranked last with a note. A ``synthesize: {method,
epsilon, delta, options}`` entry runs :func:`sdckit.synthesize` (fitted on every record, the
job's seed; ``method`` a list expands, and ``epsilon``/``delta`` lists expand for the
differentially private methods only; ``options`` are the method's parameters, and
``marginal_dp``'s public domain -- ``domain``, ``bounds``, ``other``, ``nullable``,
``max_categories``, which it requires -- is given to it only, so one entry serves
``[cart, marginal_dp]``). Synthetic
releases do not keep the original records, so a grid with synthesize entries is ranked on the
``synthetic`` scale (IL = 100 pMSE / its maximum, DR = 100 TCAP of the ``target`` option, by
default the first sensitive attribute, from the quasi-identifiers), which every other entry
shares. ``options``: ``categorical``
(columns to treat as categories), ``transparency`` (default true: rank-swapping configurations
also get the transparency attack with their ``p_percent`` and univariate microaggregation --
``individual_ranking``/``optimal_univariate`` -- with its ``k``; Nin, Herranz & Torra 2008),
``prl_max_full_pairs``, ``scale``, ``target``.

Every masking configuration must keep the records aligned (no ``sampling``): the score and
re-identification measures compare records one by one. Nothing is written unless every
configuration ran and was evaluated.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sdckit.core.params import suppression_limit as valid_suppression_limit
from sdckit.errors import ConfigError, SdcInputError
from sdckit.evaluation.comparison import (
    SCALES,
    Configuration,
    compare,
    compare_frames,
    rank_configurations,
)

__all__ = [
    # the job
    "expand_grid",
    "run_compare_job",
    # the measurement engine, re-exported from sdckit.evaluation.comparison (where it lives)
    "SCALES",
    "Configuration",
    "compare",
    "compare_frames",
    "rank_configurations",
]

_OPTION_KEYS = (
    "categorical",
    "transparency",
    "prl_max_full_pairs",
    "scale",
    "target",
    "max_risk",
    "max_loss",
)
_SYNTHESIZE_KEYS = ("method", "epsilon", "delta", "options")
_ANONYMIZE_KEYS = ("models", "suppression_limit", "algorithm", "metric", "options")


def _fmt_value(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(_fmt_value(x) for x in v) + "]"
    return str(v)


def _expand_method(
    name: Any, params: Any, where: str, columns: Sequence[str] | None
) -> list[tuple[str, dict[str, Any]]]:
    from sdckit.masking.pipeline import METHODS, method_names

    if not isinstance(name, str) or name not in METHODS:
        raise ConfigError(f"{where}: unknown method {name!r}; allowed: {', '.join(method_names())}")
    if params is None:
        params = {}
    if not isinstance(params, Mapping):
        raise ConfigError(f"{where}.{name}: parameters must be a mapping, got {params!r}")
    method = METHODS.load(name)
    params = dict(params)
    if "columns" in method.parameter_names() and "columns" not in params and columns:
        params["columns"] = list(columns)
    keys, choices = [], []
    scalar = method.scalar_parameters()
    for key, value in params.items():
        if isinstance(value, list) and key in scalar:
            if not value:
                raise ConfigError(f"{where}.{name}.{key}: an empty list expands to nothing")
            keys.append(key)
            choices.append(value)
    out = []
    for combo in itertools.product(*choices):
        p = dict(params)
        p.update(zip(keys, combo, strict=True))
        out.append((name, p))
    return out


def _label(steps: Sequence[tuple[str, dict[str, Any]]], shown: Sequence[set[str]]) -> str:
    """``name(k=v, ...)`` per step, showing the scalar parameters written in the grid."""
    parts = []
    for (name, p), keys in zip(steps, shown, strict=True):
        items = [f"{k}={_fmt_value(v)}" for k, v in p.items() if k in keys]
        parts.append(f"{name}({', '.join(items)})" if items else name)
    return " + ".join(parts)


def _shown(name: str, params: Any) -> set[str]:
    """Parameters written in a grid entry whose values are scalars (or lists to expand)."""
    from sdckit.masking.pipeline import METHODS

    scalar = METHODS.load(name).scalar_parameters()
    return {k for k in (params or {}) if k in scalar}


def _expand_anonymize(spec: Any, where: str, job) -> list[tuple[dict[str, Any], list[str]]]:
    """The concrete ``anonymize`` settings of an entry (lists expanded) and their label parts.

    ``suppression_limit``, ``algorithm``, ``metric`` and every model parameter given as a list
    expand to the cartesian product, in the order written; ``options`` are taken as they are.
    The label parts are the algorithm and every setting written (model parameters under their
    own name, or ``model.parameter`` when two models share the name).
    Each model is built with :func:`sdckit.jobs.config.build_model` (a ConfigError names the
    key, e.g. ``grid[0].anonymize.models[0].k_anonymity``).
    """
    from sdckit.algorithms.anonymize import ALGORITHMS
    from sdckit.jobs.config import build_model, job_from_dict
    from sdckit.utility.generalization import parse_metric

    if not isinstance(spec, Mapping):
        raise ConfigError(
            f"{where}.anonymize: expected `{{models: [{{k_anonymity: {{k: [2, 5]}}}}], "
            f"suppression_limit: 0.05}}`, got {spec!r}"
        )
    extra = [k for k in spec if k not in _ANONYMIZE_KEYS]
    if extra:
        raise ConfigError(
            f"{where}.anonymize.{extra[0]}: unknown key (known: {', '.join(_ANONYMIZE_KEYS)})"
        )
    if "models" not in spec:
        raise ConfigError(
            f"{where}.anonymize.models is missing: name at least one privacy model, e.g. "
            "`models: [{k_anonymity: {k: [2, 5, 10]}}]`"
        )
    # the shape is checked by the job loader (same messages as in an anonymize job)
    shaped = job_from_dict({"models": spec["models"]}, source=f"{where}.anonymize").spec.models
    axes: list[tuple[str, str, list[Any]]] = []  # (path, shown name, values)
    for key in ("algorithm", "suppression_limit", "metric"):
        if key in spec:
            values = spec[key] if isinstance(spec[key], list) else [spec[key]]
            if not values:
                raise ConfigError(f"{where}.anonymize.{key}: an empty list expands to nothing")
            axes.append((key, key, values))
    counts: dict[str, int] = {}
    for _, params in shaped:
        for k in params:
            counts[k] = counts.get(k, 0) + 1
    for j, (name, params) in enumerate(shaped):
        for k, v in params.items():
            if isinstance(v, list):
                if not v:
                    raise ConfigError(
                        f"{where}.anonymize.models[{j}].{name}.{k}: an empty list expands to "
                        "nothing"
                    )
                shown = k if counts[k] == 1 else f"{name}.{k}"
                axes.append((f"models[{j}].{k}", shown, v))
    out = []
    for combo in itertools.product(*(values for _, _, values in axes)):
        chosen = dict(zip((path for path, _, _ in axes), combo, strict=True))
        models_spec = [
            (name, {k: chosen.get(f"models[{j}].{k}", v) for k, v in params.items()})
            for j, (name, params) in enumerate(shaped)
        ]
        alg = chosen.get("algorithm", "optimal")
        if not isinstance(alg, str) or alg not in ALGORITHMS:
            raise ConfigError(
                f"{where}.anonymize.algorithm: unknown algorithm {alg!r}; use one of "
                f"{', '.join(ALGORITHMS)}"
            )
        sl = valid_suppression_limit(
            chosen.get("suppression_limit", 0.0), f"{where}.anonymize.suppression_limit"
        )
        metric = chosen.get("metric")
        try:
            parse_metric(metric)
        except SdcInputError as exc:
            raise ConfigError(f"{where}.anonymize.metric: {exc}") from None
        options = spec.get("options") or {}
        if not isinstance(options, Mapping):
            raise ConfigError(f"{where}.anonymize.options must be a mapping, got {options!r}")
        settings = {
            "algorithm": alg,
            "suppression_limit": float(sl),
            "metric": metric,
            "options": dict(options),
            "models_spec": models_spec,
            "models": [
                build_model(name, p, job, f"{where}.anonymize.models[{j}].{name}")
                for j, (name, p) in enumerate(models_spec)
            ],
        }
        # the label shows every setting written in the grid (not only the expanded ones)
        parts = [alg] + [
            f"{key}={_fmt_value(chosen.get(key, spec[key]))}"
            for key in ("suppression_limit", "metric")
            if key in spec
        ]
        parts += [
            f"{k if counts[k] == 1 else f'{name}.{k}'}={_fmt_value(v)}"
            for name, params in models_spec
            for k, v in params.items()
            if not isinstance(v, Mapping)
        ]
        out.append((settings, parts))
    return out


def _expand_synthesize(spec: Any, where: str) -> list[tuple[dict[str, Any], list[str]]]:
    """The concrete ``synthesize`` settings of an entry and their label parts: one per method
    (a list expands), and for the differentially private methods (marginal_dp, safepub) one
    per ``epsilon`` x ``delta`` (lists expand; the other methods take no budget). ``options``
    (the method's parameters) are taken as they are."""
    from sdckit.synthesis.api import METHODS

    if not isinstance(spec, Mapping):
        raise ConfigError(
            f"{where}.synthesize: expected `{{method: [cart, marginal_dp], epsilon: [0.5, 1]}}`, "
            f"got {spec!r}"
        )
    extra = [k for k in spec if k not in _SYNTHESIZE_KEYS]
    if extra:
        raise ConfigError(
            f"{where}.synthesize.{extra[0]}: unknown key (known: {', '.join(_SYNTHESIZE_KEYS)})"
        )

    def listed(key: str, default: list[Any]) -> list[Any]:
        v = spec.get(key)
        values = default if v is None else (v if isinstance(v, list) else [v])
        if not values:
            raise ConfigError(f"{where}.synthesize.{key}: an empty list expands to nothing")
        return values

    options = spec.get("options") or {}
    if not isinstance(options, Mapping):
        raise ConfigError(f"{where}.synthesize.options must be a mapping, got {options!r}")

    def method_options(method: str) -> dict[str, Any]:
        """The entry's options for ``method``: marginal_dp's domain declaration goes to it only."""
        if method == "marginal_dp":
            return dict(options)
        return {k: v for k, v in options.items() if k not in DECLARATION_KEYS}

    from sdckit.synthesis.marginal_dp import DECLARATION_KEYS

    out = []
    for method in listed("method", ["cart"]):
        if method not in METHODS:
            raise ConfigError(
                f"{where}.synthesize.method: unknown method {method!r}; use one of "
                f"{', '.join(METHODS)}"
            )
        if METHODS.traits(method).dp:
            for eps, delta in itertools.product(listed("epsilon", [None]), listed("delta", [None])):
                settings = {"method": method, "options": method_options(method)}
                parts = [str(method)]
                if eps is not None:
                    settings["epsilon"] = eps
                    parts.append(f"epsilon={_fmt_value(eps)}")
                if delta is not None:
                    settings["delta"] = delta
                    parts.append(f"delta={_fmt_value(delta)}")
                out.append((settings, parts))
        else:
            out.append(({"method": method, "options": method_options(method)}, [str(method)]))
    return out


def expand_grid(
    grid: Any, columns: Sequence[str] | None = None, base_dir: str | Path = ".", job=None
) -> list[Configuration]:
    """The configurations of a grid (see the module docstring for the format).

    Labels name the method and the parameters that vary (lists) plus ``method``, e.g.
    ``microaggregation(method=mdav, k=5)``. Raises :class:`ConfigError` naming ``grid[i]...``
    for unknown methods, bad shapes and duplicate labels; the parameters themselves are
    validated by :meth:`sdckit.masking.pipeline.Pipeline.from_entries` (a ParameterError). A
    ``protected: {path, label, delimiter}`` entry is a protected file given as it is (made by
    any tool); its path is relative to ``base_dir``. An ``anonymize: {models,
    suppression_limit, algorithm, metric, options}`` entry runs :func:`sdckit.anonymize`
    (lists expand; see :func:`_expand_anonymize`); ``job`` (the grid's
    :class:`~sdckit.jobs.config.Job`) resolves the models' population files and hierarchies.
    """
    from sdckit.jobs.config import job_from_dict
    from sdckit.masking.pipeline import Pipeline

    if job is None:
        job = job_from_dict({}, base_dir=base_dir)

    if not isinstance(grid, list) or not grid:
        raise ConfigError(
            "grid: must be a non-empty list of entries like `- noise: {alpha: [0.1, 0.5]}`"
        )
    configs: list[Configuration] = []
    for i, entry in enumerate(grid):
        where = f"grid[{i}]"
        if not isinstance(entry, Mapping):
            raise ConfigError(f"{where}: expected `method: {{parameters}}`, got {entry!r}")
        if "protected" in entry:
            spec = entry["protected"]
            if len(entry) != 1 or not isinstance(spec, Mapping) or "path" not in spec:
                raise ConfigError(
                    f"{where}: a protected-file entry is `protected: {{path: file.csv, label: "
                    "name}` and nothing else"
                )
            extra = [k for k in spec if k not in ("path", "label", "delimiter")]
            if extra:
                raise ConfigError(
                    f"{where}.protected.{extra[0]}: unknown key (known: path, label, delimiter)"
                )
            path = Path(str(spec["path"])).expanduser()
            path = path if path.is_absolute() else Path(base_dir) / path
            label = spec.get("label", path.stem)
            if not isinstance(label, str) or not label:
                raise ConfigError(f"{where}.protected.label: must be a non-empty text")
            configs.append(Configuration(label, (), where, path, spec.get("delimiter")))
            continue
        if "synthesize" in entry:
            extra = [k for k in entry if k not in ("synthesize", "label")]
            if extra:
                raise ConfigError(
                    f"{where}.{extra[0]}: unknown key (a synthesize entry has synthesize, label)"
                )
            expanded_s = _expand_synthesize(entry["synthesize"], where)
            base = entry.get("label")
            for settings, parts in expanded_s:
                label = f"synthesize({', '.join(parts)})"
                if base:
                    label = base if len(expanded_s) == 1 else f"{base}: {label}"
                configs.append(Configuration(label, (), where, synthesize=settings))
            continue
        if "anonymize" in entry:
            extra = [k for k in entry if k not in ("anonymize", "label")]
            if extra:
                raise ConfigError(
                    f"{where}.{extra[0]}: unknown key (an anonymize entry has anonymize, label)"
                )
            base = entry.get("label")
            if base is not None and not isinstance(base, str):
                raise ConfigError(f"{where}.label: must be a text, got {base!r}")
            expanded_a = _expand_anonymize(entry["anonymize"], where, job)
            for settings, parts in expanded_a:
                label = f"anonymize({', '.join(parts)})"
                if base:
                    label = base if len(expanded_a) == 1 else f"{base}: {label}"
                configs.append(Configuration(label, (), where, anonymize=settings))
            continue
        if "methods" in entry:
            extra = [k for k in entry if k not in ("methods", "label")]
            if extra:
                raise ConfigError(
                    f"{where}.{extra[0]}: unknown key (a pipeline has methods, label)"
                )
            steps_spec = entry["methods"]
            if not isinstance(steps_spec, list) or not steps_spec:
                raise ConfigError(f"{where}.methods: must be a non-empty list of methods")
            per_step = []
            for j, step in enumerate(steps_spec):
                if not isinstance(step, Mapping) or len(step) != 1:
                    raise ConfigError(
                        f"{where}.methods[{j}]: expected one `method: {{parameters}}` entry"
                    )
                ((name, params),) = step.items()
                per_step.append(_expand_method(name, params, f"{where}.methods[{j}]", columns))
            combos = list(itertools.product(*per_step))
            base = entry.get("label")
            if base is not None and not isinstance(base, str):
                raise ConfigError(f"{where}.label: must be a text, got {base!r}")
            for i, combo in enumerate(combos):
                label = (base if len(combos) == 1 else f"{base} #{i + 1}") if base else None
                shown = [
                    _shown(n, next(iter(st.values())))
                    for st, (n, _) in zip(steps_spec, combo, strict=True)
                ]
                configs.append(Configuration(label or _label(combo, shown), tuple(combo), where))
        else:
            body = {k: v for k, v in entry.items() if k != "label"}
            if len(body) != 1:
                raise ConfigError(
                    f"{where}: one method per entry (got {', '.join(map(str, body))}); use "
                    "`methods: [...]` for a pipeline"
                )
            ((name, params),) = body.items()
            expanded = _expand_method(name, params, where, columns)
            base = entry.get("label")
            if base is not None and not isinstance(base, str):
                raise ConfigError(f"{where}.label: must be a text, got {base!r}")
            shown = [_shown(name, params)]
            for one in expanded:
                label = _label([one], shown)
                if base:
                    label = base if len(expanded) == 1 else f"{base}: {label}"
                configs.append(Configuration(label, (one,), where))
    for config in configs:  # every masking configuration's steps (ParameterError naming the key)
        if config.methods:
            Pipeline.from_entries(
                config.methods, where=f"{config.source} ({config.label}): methods"
            )
    seen: dict[str, str] = {}
    for config in configs:
        if config.label in seen:
            raise ConfigError(
                f"{config.source}: configuration {config.label!r} also comes from "
                f"{seen[config.label]}; remove the duplicate or give the entries distinct "
                "`label:`s"
            )
        seen[config.label] = config.source
    return configs


def run_compare_job(job, json_out=None, html_out=None) -> dict[str, Any]:
    """Run a grid job (:class:`sdckit.jobs.config.Job` with a ``grid``) and write its outputs.

    Output paths: ``json_out``/``html_out`` override the job's ``output.json``/``output.report``.
    Everything is computed before anything is written (atomic writes).
    """
    from sdckit.report.writer import write_json

    raw = job.raw
    job.refuse_table_keys("compare")
    if "grid" not in raw:
        raise ConfigError(
            f"{job.key('grid')} is missing; list the masking configurations to compare"
        )
    for key in ("models", "methods"):
        if key in raw:
            raise ConfigError(
                f"{job.key(key)}: a compare job lists its configurations under grid:, not "
                f"{key}:; move them into grid"
            )
    options = dict(raw.get("options", {}))
    for k in options:
        if k not in _OPTION_KEYS:
            raise ConfigError(
                f"{job.key(f'options.{k}')}: unknown option (known: {', '.join(_OPTION_KEYS)})"
            )
    categorical = options.get("categorical", []) or []
    if not isinstance(categorical, list):
        raise ConfigError(f"{job.key('options.categorical')} must be a list of column names")
    transparency = options.get("transparency", True)
    if not isinstance(transparency, bool):
        raise ConfigError(f"{job.key('options.transparency')} must be true or false")
    scale = options.get("scale")
    if scale is not None and scale not in SCALES:
        raise ConfigError(
            f"{job.key('options.scale')}: unknown scale {scale!r}; use one of {', '.join(SCALES)}"
        )
    mfp = options.get("prl_max_full_pairs")
    if mfp is not None and (isinstance(mfp, bool) or not isinstance(mfp, int) or mfp < 1):
        raise ConfigError(f"{job.key('options.prl_max_full_pairs')} must be a positive integer")
    limits: dict[str, float] = {}
    for key in ("max_risk", "max_loss"):
        value = options.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
            raise ConfigError(
                f"{job.key(f'options.{key}')} must be a number >= 0 on the scale's 0-100 "
                f"(percent), got {value!r}"
            )
        limits[key] = float(value)
    columns = raw.get("columns")
    configs = expand_grid(raw["grid"], columns, job.base_dir, job=job)
    job.check_outputs(
        {"--json": json_out, "--html": html_out},
        {f"{c.source}.protected.path": c.protected_path for c in configs if c.protected_path},
    )
    data = job.read_input()
    if any(c.synthesize is not None for c in configs):  # synthesizers model typed columns
        from sdckit.jobs.mask import _typed

        data = _typed(data, job.schema)
    if columns is None:
        columns_used = None
    else:
        missing = [c for c in columns if c not in data.columns]
        if missing:
            raise ConfigError(
                f"{job.key('columns')}: {', '.join(map(repr, missing))} not in the input "
                f"(its columns: {', '.join(map(str, data.columns))})"
            )
        columns_used = list(columns)
    try:
        result = compare(
            data,
            configs,
            columns=columns_used,
            quasi_identifiers=raw.get("qi"),  # the job-file key is `qi:`
            categorical=categorical,
            seed=job.seed,
            transparency=transparency,
            max_full_pairs=mfp,
            scale=scale,
            schema=job.schema if "attributes" in raw else None,
            key=job.key,
            target=options.get("target"),
        )
    except ConfigError:
        raise
    except SdcInputError as exc:
        raise type(exc)(f"{job.source}: {exc}") from exc
    if limits:  # the releases within the steward's ceilings first; the score stays a column
        result["ranking"] = rank_configurations(result["ranking"], **limits)
        result["limits"] = limits
    src = raw["input"]["path"]
    result["input"] = f"input: {src}" if isinstance(src, str) else None
    result["seed"] = job.seed
    out = job.output
    json_path = Path(json_out) if json_out else out.json
    html_path = Path(html_out) if html_out else out.report
    from sdckit.core.io import output_set, write_text

    with output_set() as outputs:  # one release: renamed into place together, or not at all
        if json_path or html_path:
            result["run_id"] = outputs.run_id
        from sdckit.report.compare_report import compare_report

        html = compare_report(result).render_html() if html_path else None
        if json_path:
            write_json(json_path, result)
        if html_path and html is not None:
            write_text(html_path, html)
    result["written"] = [str(p) for p in (json_path, html_path) if p]
    return result

"""Compare protections of one data set: evaluate each, draw the R-U map, rank them.

``sdckit compare --config GRID.yaml`` runs a grid of masking methods x parameters
(:class:`sdckit.masking.methods.Pipeline`) and of anonymizations x parameters
(:func:`sdckit.anonymize`) on one input, evaluates every protected file against the original,
draws the **R-U map** (Duncan, Keller-McNulty & Stokes 2001; disclosure risk on x, information
loss on y, one numbered point per configuration) and ranks the configurations by the **R-U
score** ``(IL + DR) / 2`` (Domingo-Ferrer & Torra 2001), both halves in percent. Lower is
better. Two scales (``options.scale``):

* ``score`` (the default for masking-only grids): the 2001 score of
  :func:`sdckit.evaluation.protected_file.evaluate` on the numeric attributes, ``IL = score_il`` and
  ``DR = 100 score_dr = 100 (0.25 DBRL + 0.25 PRL + 0.5 interval disclosure)`` (Domingo-Ferrer,
  Mateo-Sanz & Torra 2001);
* ``reidentification`` (the default as soon as the grid anonymizes): measured on the
  quasi-identifiers, which generalization turns into labels the 2001 measures cannot compare.
  ``DR`` = 100 x the expected share of records a prosecutor re-identifies by matching their
  original QI values against the released ones (:func:`sdckit.risk.matching.matching_risk`;
  ``J/n``, ARX's prosecutor success rate, for a global recoding without suppression), ``IL`` =
  100 x the relative entropy-based loss of the QIs (Kooiman et al. 1998; ARX's non-uniform
  entropy for generalization). Generalization, suppression, recoding, PRAM and swapping of the
  QIs share this scale; noise on a QI does not (its released numbers match nothing exactly --
  an error says so).

Grid file (YAML or TOML; read by :func:`sdckit.jobs.config.load_job`, paths relative to it)::

    input: {path: census.csv, delimiter: ","}
    columns: [AGI, FEDTAX, PTOTVAL]   # masked and compared (default `columns` of each method)
    qi: [AGI, FEDTAX]                 # intruder attributes (default: the numeric columns, or
                                      # the attributes' quasi-identifiers)
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
    options: {categorical: [], transparency: true, scale: reidentification}
    output: {report: compare.html, json: compare.json}

A grid entry ``{method: {param: value, ...}}`` expands to the cartesian product of every
parameter given as a list (in the order written), except parameters whose value is itself a
list or mapping (``columns``, ``groups``, PRAM ``matrix``, ...): those are taken as they are.
Method names and parameters are those of :mod:`sdckit.masking.methods`; ``columns`` defaults to
the top-level ``columns``. An entry with ``methods:`` (and an optional ``label``) is one
configuration applying several methods in order (each method's lists are expanded too). A
``protected: {path, label, delimiter}`` entry adds a protected file made elsewhere (ARX,
sdcMicro, ``sdckit anonymize``...; same records in the same order), evaluated as it is. An
``anonymize: {models, suppression_limit, algorithm, metric, options}`` entry (the keys of an
anonymize job) expands every list the same way -- model parameters, suppression limits,
algorithms, metrics -- and runs :func:`sdckit.anonymize` with the top-level ``attributes``;
an anonymization without a solution is ranked last with a note. ``options``: ``categorical``
(columns to treat as categories), ``transparency`` (default true: rank-swapping configurations
also get the transparency attack with their ``p_percent`` and univariate microaggregation --
``individual_ranking``/``optimal_univariate`` -- with its ``k``; Nin, Herranz & Torra 2008),
``prl_max_full_pairs``, ``scale``.

Every configuration must keep the records aligned (no ``sampling``): the measures compare
records one by one. Nothing is written unless every configuration ran and was evaluated.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from sdckit.core.params import suppression_limit as valid_suppression_limit
from sdckit.errors import ConfigError, DataError, MissingHierarchyError, SdcInputError

__all__ = [
    "Configuration",
    "compare",
    "compare_frames",
    "expand_grid",
    "rank_configurations",
    "run_compare_job",
]

_OPTION_KEYS = ("categorical", "transparency", "prl_max_full_pairs", "scale")
_ANONYMIZE_KEYS = ("models", "suppression_limit", "algorithm", "metric", "options")
#: The R-U scales a comparison can use (see the module docstring).
SCALES = ("score", "reidentification")


@dataclass(frozen=True)
class Configuration:
    """One point of the grid: a label and the masking steps ``(name, parameters)``."""

    label: str
    methods: tuple[tuple[str, dict[str, Any]], ...]
    source: str  # where in the grid it came from, e.g. "grid[1]"
    protected_path: Path | None = None  # a protected file given as is (no masking)
    delimiter: str | None = None
    anonymize: Mapping[str, Any] | None = None  # an `anonymize:` entry: models and settings


def _fmt_value(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(_fmt_value(x) for x in v) + "]"
    return str(v)


def _expand_method(
    name: Any, params: Any, where: str, columns: Sequence[str] | None
) -> list[tuple[str, dict[str, Any]]]:
    from sdckit.masking.methods import METHODS, method_names

    if not isinstance(name, str) or name not in METHODS:
        raise ConfigError(f"{where}: unknown method {name!r}; allowed: {', '.join(method_names())}")
    if params is None:
        params = {}
    if not isinstance(params, Mapping):
        raise ConfigError(f"{where}.{name}: parameters must be a mapping, got {params!r}")
    method = METHODS[name]
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
    from sdckit.masking.methods import METHODS

    scalar = METHODS[name].scalar_parameters()
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


def expand_grid(
    grid: Any, columns: Sequence[str] | None = None, base_dir: str | Path = ".", job=None
) -> list[Configuration]:
    """The configurations of a grid (see the module docstring for the format).

    Labels name the method and the parameters that vary (lists) plus ``method``, e.g.
    ``microaggregation(method=mdav, k=5)``. Raises :class:`ConfigError` naming ``grid[i]...``
    for unknown methods, bad shapes and duplicate labels; the parameters themselves are
    validated by :meth:`sdckit.masking.methods.Pipeline.from_entries` (a ParameterError). A
    ``protected: {path, label, delimiter}`` entry is a protected file given as it is (made by
    any tool); its path is relative to ``base_dir``. An ``anonymize: {models,
    suppression_limit, algorithm, metric, options}`` entry runs :func:`sdckit.anonymize`
    (lists expand; see :func:`_expand_anonymize`); ``job`` (the grid's
    :class:`~sdckit.jobs.config.Job`) resolves the models' population files and hierarchies.
    """
    from sdckit.jobs.config import job_from_dict
    from sdckit.masking.methods import Pipeline

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
            for c, steps in enumerate(combos):
                label = (base if len(combos) == 1 else f"{base} #{c + 1}") if base else None
                shown = [
                    _shown(n, next(iter(st.values())))
                    for st, (n, _) in zip(steps_spec, steps, strict=True)
                ]
                configs.append(Configuration(label or _label(steps, shown), tuple(steps), where))
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
            for steps in expanded:
                label = _label([steps], shown)
                if base:
                    label = base if len(expanded) == 1 else f"{base}: {label}"
                configs.append(Configuration(label, (steps,), where))
    for c in configs:  # every masking configuration's steps (ParameterError naming the key)
        if c.methods:
            Pipeline.from_entries(c.methods, where=f"{c.source} ({c.label}): methods")
    seen: dict[str, str] = {}
    for c in configs:
        if c.label in seen:
            raise ConfigError(
                f"{c.source}: configuration {c.label!r} also comes from {seen[c.label]}; "
                "remove the duplicate or give the entries distinct `label:`s"
            )
        seen[c.label] = c.source
    return configs


# --------------------------------------------------------------------------------------------
# evaluation and ranking
# --------------------------------------------------------------------------------------------
def _known_method(methods: Sequence[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """Transparency-attack arguments when the configuration is one attackable method."""
    if len(methods) != 1:
        return {}
    name, p = methods[0]
    if name == "rank_swapping" and p.get("variant", "standard") in (None, "standard"):
        return {"known_method": "rank_swapping", "p_percent": p.get("p_percent", 5)}
    if name == "microaggregation" and p.get("method") in (
        "individual_ranking",
        "optimal_univariate",
    ):
        return {"known_method": "microaggregation", "k": p.get("k", 3)}
    return {}


def rank_configurations(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Sort by R-U score (ascending; undefined scores last, in input order) and add ``rank``."""
    defined = sorted((r for r in rows if r["ru_score"] is not None), key=lambda r: r["ru_score"])
    undefined = [r for r in rows if r["ru_score"] is None]
    out = []
    for i, r in enumerate(defined + undefined, start=1):
        out.append({"rank": i if r["ru_score"] is not None else None, **r})
    return out


def _row(label: str, doc: dict[str, Any], methods, seconds: float) -> dict[str, Any]:
    il, dr = doc["information_loss"], doc["disclosure_risk"]
    il_pct = il["score_il"]
    dr_pct = None if dr["score_dr"] is None else 100.0 * dr["score_dr"]
    score = None if il_pct is None or dr_pct is None else (il_pct + dr_pct) / 2.0
    row = {
        "label": label,
        "methods": list(methods),
        "information_loss": il_pct,
        "disclosure_risk": dr_pct,
        "ru_score": score,
        "il1s": il["il1s"],
        "bounded_il": il["bounded_il"],
        "propensity_u": il["propensity_u"],
        "dbrl": dr["dbrl"],
        "prl": dr["prl"],
        "interval_disclosure": dr["interval_disclosure"],
        "seconds": seconds,
    }
    ta = doc.get("transparency_attack")
    row["certain_matches"] = None if ta is None else ta["certain_matches"]
    row["reidentified"] = None if ta is None else ta["reidentified"]
    return row


def compare_frames(
    original: pd.DataFrame,
    protected: Mapping[str, pd.DataFrame],
    *,
    columns: Sequence[str] | None = None,
    qi: Sequence[str] | None = None,
    categorical: Sequence[str] = (),
    known_methods: Mapping[str, dict[str, Any]] | None = None,
    methods: Mapping[str, Any] | None = None,
    seed: int = 0,
    max_full_pairs: int | None = None,
) -> dict[str, Any]:
    """Evaluate each ``label -> protected frame`` against ``original`` and rank them.

    ``known_methods[label]`` may give transparency-attack arguments for a label
    (``{"known_method": ..., "p_percent"/"k": ...}``). Returns ``{"ranking": [rows sorted by
    R-U score], "evaluations": {label: evaluate document}, "ru_score": "(IL + DR) / 2 ..."}``;
    each row holds ``rank, label, information_loss (score_il), disclosure_risk (100 score_dr),
    ru_score`` and the underlying measures.
    """
    from sdckit.evaluation.protected_file import MAX_FULL_PAIRS, evaluate

    if not protected:
        raise DataError("compare: no protected files to compare")
    rows, docs = [], {}
    for label, frame in protected.items():
        t0 = time.perf_counter()
        try:
            doc = evaluate(
                original,
                frame,
                columns=columns,
                qi=qi,
                categorical=categorical,
                seed=seed,
                max_full_pairs=max_full_pairs or MAX_FULL_PAIRS,
                **(known_methods or {}).get(label, {}),
            )
        except SdcInputError as exc:
            raise type(exc)(f"configuration {label!r}: {exc}") from exc
        docs[label] = doc
        steps = (methods or {}).get(label, ())
        rows.append(_row(label, doc, steps, time.perf_counter() - t0))
    return {
        "ru_score": "(information_loss + disclosure_risk) / 2 with information_loss = score_il "
        "and disclosure_risk = 100 * score_dr (percent); lower is better",
        "ranking": rank_configurations(rows),
        "evaluations": docs,
    }


def compare(
    original: pd.DataFrame,
    configurations: Sequence[Configuration],
    *,
    columns: Sequence[str] | None = None,
    qi: Sequence[str] | None = None,
    categorical: Sequence[str] = (),
    seed: int | None = None,
    transparency: bool = True,
    max_full_pairs: int | None = None,
    scale: str | None = None,
    schema=None,
    key: Callable[[str], str] | None = None,
) -> dict[str, Any]:
    """Protect ``original`` with every configuration, evaluate each and rank them.

    Masking configurations are applied by :meth:`sdckit.masking.methods.Pipeline.apply`,
    anonymize configurations by :func:`sdckit.anonymize` with ``schema`` (roles and
    hierarchies), all with the same ``seed``; the ``masking`` records of each are added to the
    result. ``scale`` is the R-U scale (:data:`SCALES`; default ``"reidentification"`` when a
    configuration anonymizes, else ``"score"``): ``"score"`` evaluates with
    :func:`compare_frames` (the 2001 score on numeric attributes), ``"reidentification"``
    with :func:`compare_reidentification` on the quasi-identifiers ``qi`` (default: the
    schema's). An anonymize configuration without a solution is ranked last with a note.
    ``key`` formats the job keys named in errors (e.g. ``Job.key``: the file name first).
    """
    from sdckit.masking.methods import Pipeline

    key = key or str
    has_anonymize = any(c.anonymize is not None for c in configurations)
    scale = scale or ("reidentification" if has_anonymize else "score")
    if scale not in SCALES:
        raise ConfigError(
            f"{key('options.scale')}: unknown scale {scale!r}; use one of {', '.join(SCALES)}"
        )
    if has_anonymize and scale == "score":
        raise ConfigError(
            f"{key('options.scale')}: anonymize entries generalize the quasi-identifiers, "
            "which the 2001 score's numeric measures (DBRL, PRL, interval disclosure, "
            "score_il) cannot compare; use `scale: reidentification` (the default with "
            "anonymize entries)"
        )
    if has_anonymize and schema is None:
        raise ConfigError(
            f"{key('attributes')}: anonymize entries need the quasi-identifiers and their "
            "hierarchies; add `attributes:` as in an anonymize job"
        )
    frames, records, known, steps = {}, {}, {}, {}
    anonymized: dict[str, dict[str, Any]] = {}
    for c in configurations:
        if c.anonymize is not None:
            try:
                anonymized[c.label] = _run_anonymize(original, schema, c, seed)
            except MissingHierarchyError as exc:  # say it as the job file would
                raise exc.for_job_file(key(f"attributes.{exc.attribute}")) from None
            records[c.label] = [anonymized[c.label]["record"]]
            steps[c.label] = [{"anonymize": anonymized[c.label]["record"]["parameters"]}]
            if anonymized[c.label]["data"] is not None:
                frames[c.label] = anonymized[c.label]["data"]
            continue
        if c.protected_path is not None:
            from sdckit.core.io import read_table

            try:
                frames[c.label] = read_table(c.protected_path, delimiter=c.delimiter)
            except SdcInputError as exc:
                raise type(exc)(f"{c.source} ({c.label}): {exc}") from exc
            records[c.label] = [
                {"method": "given file", "parameters": {"path": str(c.protected_path)}}
            ]
            steps[c.label] = []
            if len(frames[c.label]) != len(original):
                raise DataError(
                    f"{c.source} ({c.label}): the protected file has {len(frames[c.label])} "
                    f"records but the input {len(original)}; it must hold the same records in "
                    "the same order"
                )
            continue
        try:
            masked, recs = Pipeline.from_entries(c.methods).apply(original, seed=seed)
        except SdcInputError as exc:
            raise type(exc)(f"{c.source} ({c.label}): {exc}") from exc
        if len(masked) != len(original):
            raise DataError(
                f"{c.source} ({c.label}): the masked file has {len(masked)} records but the "
                f"input {len(original)}; compare evaluates record by record, so methods that "
                "drop records (sampling) cannot be compared -- remove them from the grid"
            )
        frames[c.label] = masked
        records[c.label] = recs
        steps[c.label] = [{name: params} for name, params in c.methods]
        if transparency:
            known[c.label] = _known_method(c.methods)
    if scale == "reidentification":
        qis = list(qi) if qi else (list(schema.quasi_identifiers) if schema is not None else [])
        if not qis:
            raise ConfigError(
                f"{key('qi')}: the re-identification scale needs the quasi-identifiers; list "
                "them under qi: or give them role quasi_identifying under attributes:"
            )
        hierarchies = {}
        if schema is not None:
            hierarchies = {
                q: schema.hierarchy(q)
                for q in qis
                if q in schema.attributes and schema.hierarchy(q) is not None
            }
        result = compare_reidentification(
            original,
            frames,
            qi=qis,
            hierarchies=hierarchies,
            methods=steps,
            anonymized=anonymized,
            order=[c.label for c in configurations],
        )
        result["masking"] = records
        result["scale"] = scale
        return result
    result = compare_frames(
        original,
        frames,
        columns=columns,
        qi=qi,
        categorical=categorical,
        known_methods=known,
        methods=steps,
        seed=0 if seed is None else int(seed),
        max_full_pairs=max_full_pairs,
    )
    result["masking"] = records
    result["scale"] = scale
    return result


def _run_anonymize(original: pd.DataFrame, schema, c: Configuration, seed) -> dict[str, Any]:
    """Run one anonymize configuration; ``data`` is None (with ``error``) without a solution."""
    from sdckit.algorithms.anonymize import anonymize
    from sdckit.errors import NoSolutionError

    a = c.anonymize
    params = {
        "algorithm": a["algorithm"],
        "models": [{name: p} for name, p in a["models_spec"]],
        "suppression_limit": a["suppression_limit"],
        "metric": a["metric"],
        "options": a["options"],
    }
    info: dict[str, Any] = {
        "record": {"method": "anonymize", "parameters": params},
        "data": None,
        "error": None,
    }
    t0 = time.perf_counter()
    try:
        res = anonymize(
            original,
            schema,
            a["models"],
            suppression_limit=a["suppression_limit"],
            metric=a["metric"],
            algorithm=a["algorithm"],
            seed=seed,
            risk=False,
            **a["options"],
        )
    except NoSolutionError as exc:
        info["error"] = f"no solution: {exc}"
        return info
    except SdcInputError as exc:
        raise type(exc)(f"{c.source} ({c.label}): {exc}") from exc
    info.update(
        data=res.data,
        seconds=time.perf_counter() - t0,
        transformation=res.transformation,
        suppressed_records=res.suppressed_records,
        metrics=res.metrics,
        models_satisfied=res.models_satisfied,
        verified=res.verified,
    )
    return info


def compare_reidentification(
    original: pd.DataFrame,
    protected: Mapping[str, pd.DataFrame],
    *,
    qi: Sequence[str],
    hierarchies: Mapping[str, Any] | None = None,
    methods: Mapping[str, Any] | None = None,
    anonymized: Mapping[str, Mapping[str, Any]] | None = None,
    order: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Rank protected files on the re-identification R-U scale of their quasi-identifiers.

    For each ``label -> protected frame``: disclosure risk = 100 x the expected share of
    records a prosecutor re-identifies by matching ``qi`` (:func:`sdckit.risk.matching.
    matching_risk`), information loss = 100 x the relative entropy-based loss of ``qi``, R-U
    score = their mean (:func:`sdckit.risk.matching.reidentification_scale`). ``anonymized``
    adds each anonymize configuration's transformation, suppressed records and ARX metrics to
    its row; one whose ``data`` is None (no solution) is ranked last with its ``error``.
    Returns ``{"ranking", "evaluations", "ru_score"}`` like :func:`compare_frames`.
    """
    from sdckit.risk.matching import reidentification_scale

    anonymized = anonymized or {}
    labels = list(order) if order is not None else list(protected)
    rows, docs = [], {}
    for label in labels:
        a = anonymized.get(label, {})
        steps = (methods or {}).get(label, [])
        row: dict[str, Any] = {
            "label": label,
            "methods": steps,
            "information_loss": None,
            "disclosure_risk": None,
            "ru_score": None,
            "highest_risk": None,
            "certain_share": None,
            "records_at_risk": None,
            "algorithm": a["record"]["parameters"]["algorithm"] if a else None,
            "transformation": a.get("transformation"),
            "suppressed_records": a.get("suppressed_records"),
            "loss": (a.get("metrics") or {}).get("loss"),
            "seconds": a.get("seconds"),
        }
        if label not in protected:
            docs[label] = {"notes": [a.get("error") or "not evaluated"]}
            rows.append(row)
            continue
        t0 = time.perf_counter()
        try:
            doc = reidentification_scale(
                original.reset_index(drop=True),
                protected[label].reset_index(drop=True),
                qi,
                hierarchies,
            )
        except SdcInputError as exc:
            raise type(exc)(f"configuration {label!r}: {exc}") from exc
        m = doc["matching"]
        row.update(
            information_loss=100.0 * doc["information_loss"],
            disclosure_risk=100.0 * doc["disclosure_risk"],
            ru_score=doc["score"],
            highest_risk=m["highest_risk"],
            certain_share=m["certain_share"],
            records_at_risk=m["records_at_risk_0.2"],
        )
        row["seconds"] = (row["seconds"] or 0.0) + time.perf_counter() - t0
        doc["notes"] = []
        docs[label] = doc
        rows.append(row)
    return {
        "ru_score": "(information_loss + disclosure_risk) / 2 with information_loss = 100 * "
        "relative entropy loss of the quasi-identifiers and disclosure_risk = 100 * expected "
        "share of records re-identified by matching them (percent); lower is better",
        "ranking": rank_configurations(rows),
        "evaluations": docs,
    }


def run_compare_job(job, json_out=None, html_out=None) -> dict[str, Any]:
    """Run a grid job (:class:`sdckit.jobs.config.Job` with a ``grid``) and write its outputs.

    Output paths: ``json_out``/``html_out`` override the job's ``output.json``/``output.report``.
    Everything is computed before anything is written (atomic writes).
    """
    from sdckit.report.writer import write_json

    raw = job.raw
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
    columns = raw.get("columns")
    configs = expand_grid(raw["grid"], columns, job.base_dir, job=job)
    job.check_outputs(
        {"--json": json_out, "--html": html_out},
        {f"{c.source}.protected.path": c.protected_path for c in configs if c.protected_path},
    )
    data = job.read_input()
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
            qi=raw.get("qi"),
            categorical=categorical,
            seed=job.seed,
            transparency=transparency,
            max_full_pairs=mfp,
            scale=scale,
            schema=job.schema if "attributes" in raw else None,
            key=job.key,
        )
    except ConfigError:
        raise
    except SdcInputError as exc:
        raise type(exc)(f"{job.source}: {exc}") from exc
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

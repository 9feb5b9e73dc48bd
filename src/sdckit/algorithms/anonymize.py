"""``sdckit.anonymize``: one call from data + schema + privacy models to a verified release.

Steps (docs/architecture.md, "verify independently"):

1. validate the request (columns, models, hierarchies, suppression limit) -- bad input raises
   an :class:`~sdckit.errors.SdcInputError` subclass naming what is wrong and how to fix it;
2. drop the identifying columns (or pseudonymize those whose attribute has ``pseudonymize``,
   keyed HMAC tokens, :mod:`sdckit.core.pseudonymize`);
3. run the algorithm, looked up by name in :data:`~sdckit.algorithms.registry.ALGORITHMS`
   (its traits say what it needs) and imported lazily; every
   algorithm takes the signature of :func:`sdckit.algorithms.optimal.optimal` and returns an
   :class:`~sdckit.core.release.AlgorithmOutput`;
4. compute the metrics (:func:`sdckit.utility.generalization.output_metrics`);
5. verify independently from the OUTPUT ROWS: a fresh frequency set of the released labels of
   the non-suppressed rows, every model re-evaluated on it, the suppressed share within the
   limit; a failure raises :class:`~sdckit.errors.VerificationError` (a bug; nothing is
   returned or written);
6. analyze the re-identification risk before and after (:func:`sdckit.risk.analyze`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from sdckit.algorithms.registry import ALGORITHMS, needed_algorithms
from sdckit.core import params
from sdckit.core.encoding import EncodedColumn, as_text, encode
from sdckit.core.frequency import (
    FrequencySet,
    attribute_columns,
    build_frequency_set,
    encode_ordered,
    encode_quasi_identifier,
    frequency_set,
    group_keys,
    sensitive_column,
)
from sdckit.core.release import SUPPRESSED, AlgorithmOutput
from sdckit.core.schema import Schema
from sdckit.errors import ConfigError, DataError, MissingHierarchyError, VerificationError
from sdckit.models import model_traits
from sdckit.models.base import PrivacyModel
from sdckit.models.check import _validate as validate_models
from sdckit.models.kanonymity import KAnonymity
from sdckit.utility.generalization import output_metrics, parse_metric

__all__ = ["ALGORITHMS", "AnonymizationResult", "anonymize", "verify_output", "verify_release"]

#: The metric keys of :attr:`AnonymizationResult.metrics` (and of the JSON ``metrics``).
METRIC_KEYS = ("loss", "precision", "discernibility", "aecs", "non_uniform_entropy", "height")
#: The keys of :meth:`AnonymizationResult.to_dict` (the CLI's JSON), in order.
JSON_KEYS = (
    "transformation",
    "suppressed_records",
    "metrics",
    "metric_conventions",
    "optimum_ties",
    "models_satisfied",
    "verified",
    "nodes_checked",
    "elapsed_seconds",
    "risk_before",
    "risk_after",
    "attack_coverage",
    "privacy",
    "model_checks",
)


@dataclass
class AnonymizationResult:
    """A verified anonymization: the released rows plus what the report and JSON show."""

    data: pd.DataFrame
    transformation: dict[str, int] | None
    suppressed_records: int
    metrics: dict[str, float | None]
    models_satisfied: list[str]
    verified: bool
    nodes_checked: int
    elapsed_seconds: float
    risk_before: dict[str, Any]
    risk_after: dict[str, Any]
    details: dict[str, Any] = field(default_factory=dict)
    extra_tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    algorithm: str = "optimal"
    models: list[dict] = field(default_factory=list)
    suppression_limit: float = 0.0

    def _repr_html_(self) -> str:
        """The anonymization in a Jupyter notebook: the summary tables and charts of its HTML
        report, compact (:func:`sdckit.core.display.notebook_html`)."""
        from sdckit.core.display import notebook_html

        return notebook_html("anonymization", self)

    def to_dict(self) -> dict[str, Any]:
        """The JSON document (keys exactly :data:`JSON_KEYS`)."""
        from sdckit.core.spec import json_ready
        from sdckit.models.attacks import attack_coverage

        return json_ready(
            {
                "transformation": self.transformation,
                "suppressed_records": self.suppressed_records,
                "metrics": self.metrics,
                "metric_conventions": self.details.get("metric_conventions", {}),
                "optimum_ties": self.details.get("ties"),
                "models_satisfied": self.models_satisfied,
                "verified": self.verified,
                "nodes_checked": self.nodes_checked,
                "elapsed_seconds": self.elapsed_seconds,
                "risk_before": self.risk_before,
                "risk_after": self.risk_after,
                # which attacks the job's models defend against (Fung et al. 2010, Table II)
                "attack_coverage": attack_coverage(self.models),
                # a differentially private algorithm's guarantee and its accounting (SafePub):
                # what epsilon covers, step by step; None for the other algorithms
                "privacy": self.details.get("privacy"),
                # what the verification measured for each release-wide (global) model: the
                # average risk, the sample or population uniqueness against the threshold
                "model_checks": self.details.get("model_checks", []),
            }
        )


def _known(algorithm: Any) -> str:
    """``algorithm`` if it names one of :data:`ALGORITHMS`, else the ConfigError."""
    if not isinstance(algorithm, str) or algorithm not in ALGORITHMS:
        raise ConfigError(f"algorithm must be one of {', '.join(ALGORITHMS)}, got {algorithm!r}")
    return algorithm


def _resolve(algorithm: str) -> Callable[..., AlgorithmOutput]:
    """Import the algorithm function named in :data:`ALGORITHMS`."""
    try:
        return ALGORITHMS.load(_known(algorithm))  # type: ignore[no-any-return]
    except ImportError as exc:  # pragma: no cover - depends on which algorithms are installed
        raise ConfigError(
            f"algorithm {algorithm!r} is not available in this installation ({exc})"
        ) from None


def _builder_hint(schema: Schema, name: str, algorithm: str) -> MissingHierarchyError:
    """Why ``name`` needs a hierarchy for ``algorithm``, and how to give it one, in the words
    of the Python API and of a job file (YAML)."""
    attr = schema.attributes[name]
    if attr.type.numeric:
        yaml_hint = "`hierarchy: {interval: {widths: [10, 50]}}`"
        py = "interval_hierarchy"
    elif attr.type.value == "date":
        yaml_hint = "`hierarchy: {date: {levels: [month, year]}}`"
        py = "date_hierarchy"
    else:
        yaml_hint = (
            "`hierarchy: {order: {group_sizes: [2, 4]}}` (groups of its categories, in the "
            "attribute's `order` if it has one) or `hierarchy: {masking: {}}` (codes such as "
            "ZIPs)"
        )
        py = "order_hierarchy or masking_hierarchy"
    why = (
        f"which full-domain generalization needs ({algorithm})"
        if ALGORITHMS.traits(algorithm).needs_hierarchy
        else f"without which {algorithm} would release '*' for every record (the whole "
        "attribute suppressed)"
    )
    numeric_note = "" if attr.type.numeric else "; a number can also be declared a number"
    return MissingHierarchyError(
        name,
        why,
        f"sdckit.core.hierarchy_builders.{py}, or sdckit.core.hierarchy.read_hierarchy for an "
        f"ARX hierarchy file{numeric_note.replace('declared a number', 'typed DataType.INTEGER')}",
        f"{yaml_hint}, or `hierarchy: FILE.csv` (ARX format)"
        + numeric_note.replace("declared a number", "declared `type: integer`"),
    )


def _validate(
    data: pd.DataFrame,
    schema: Schema,
    models: Sequence[PrivacyModel],
    suppression_limit: float,
    algorithm: str,
) -> None:
    if not isinstance(data, pd.DataFrame):
        raise DataError(f"anonymize: data must be a pandas DataFrame, got {type(data).__name__}")
    if not isinstance(schema, Schema):
        raise ConfigError(f"anonymize: schema must be a sdckit Schema, got {type(schema).__name__}")
    if len(data) == 0:
        raise DataError("the data has no records; nothing to anonymize")
    schema.check_columns(data)
    if not schema.quasi_identifiers:
        raise ConfigError(
            "the schema has no quasi-identifying attribute; mark the columns an intruder could "
            "know as quasi_identifying"
        )
    params.suppression_limit(suppression_limit)
    if isinstance(models, PrivacyModel):
        models = [models]
    validate_models(data, schema, models)
    for m in models:
        for a in m.sensitive_attributes:
            for col in attribute_columns(a):
                if col in schema.identifying:
                    raise ConfigError(
                        f"model {m.name}: attribute {col!r} is identifying and is dropped from "
                        "the output; mark it sensitive"
                    )
        if isinstance(m, KAnonymity) and m.k < 1:  # pragma: no cover - KAnonymity checks
            raise ConfigError(f"model {m.name}: k must be >= 1")
        only = needed_algorithms(m)  # models only some algorithms can give
        if only is not None and algorithm not in only:
            raise ConfigError(
                f"model {m.name} needs algorithm {' or '.join(map(repr, only))}, got "
                f"{algorithm!r}: its guarantee needs that algorithm's randomization"
            )
    traits = ALGORITHMS.traits(_known(algorithm))
    refused = dict(traits.refused_models)
    for m in models:
        why = refused.get(getattr(m, "spec_name", ""))
        if why is not None:
            raise ConfigError(
                f"model {m.name} cannot be given by algorithm {algorithm!r}: {why}; use a "
                "generalization algorithm (optimal, mondrian, datafly, tds)"
            )
        if model_traits(m).full_domain and not traits.needs_hierarchy:
            raise ConfigError(
                f"model {m.name} judges each class by the hierarchy levels its values are "
                f"generalized to, which algorithm {algorithm!r} does not release; use a "
                "full-domain generalization (algorithm optimal or datafly)"
            )
    for q in schema.quasi_identifiers:
        if schema.hierarchy(q) is not None:
            continue
        if traits.needs_hierarchy or (
            traits.partitioning and not schema.attributes[q].type.numeric
        ):
            raise _builder_hint(schema, q, algorithm)


def _identifiers(data: pd.DataFrame, schema: Schema) -> tuple[dict[str, pd.Series], list[str]]:
    """Pseudonymized identifying columns (the others are dropped) and the report's notices.

    The rule is :func:`sdckit.core.pseudonymize.protect_identifiers`.
    """
    from sdckit.core.pseudonymize import protect_identifiers

    ids = [c for c in schema.identifying if c in data.columns]
    kept, notices = protect_identifiers(data[ids], schema)
    return {c: kept[c] for c in kept.columns}, notices


def verify_output(
    original: pd.DataFrame,
    output: AlgorithmOutput,
    schema: Schema,
    models: Sequence[PrivacyModel],
    suppression_limit: float,
) -> list[str]:
    """Independently re-check a release from its rows; return the names of the models.

    See :func:`verify_release`, which also returns the released classes it counted.
    """
    return verify_release(original, output, schema, models, suppression_limit)[0]


def verify_release(
    original: pd.DataFrame,
    output: AlgorithmOutput,
    schema: Schema,
    models: Sequence[PrivacyModel],
    suppression_limit: float,
    measured: list[dict[str, Any]] | None = None,
) -> tuple[list[str], FrequencySet]:
    """Independently re-check a release from its rows: the names of the models it satisfies
    and the frequency set of its rows on the verification key (suppression flag excluded;
    the classes the risk after the release is measured on).

    Builds a fresh frequency set from the released labels (not from the algorithm's codes):
    the key is the QI labels (or the columns in ``output.details["verification_key"]``, e.g.
    Anatomy's group id) plus the suppression flag; models are prepared on all records (so
    t-closeness compares with the distribution of the whole input) and evaluated on the
    classes of the non-suppressed records. Raises :class:`VerificationError` on any failure.
    ``measured``, when given, receives ``{"model": name, **details}`` of each global model
    (``is_global``: the release-wide quantity it was checked on, e.g. the estimate) and of
    each model whose ``reports_checks`` says its details describe the release (the derived
    threshold of the no-attack profitability models).
    """
    from sdckit.algorithms.optimal import suppression_budget

    n = len(original)
    released = output.data
    supp = np.asarray(output.suppressed, dtype=bool)
    if len(released) != n or len(supp) != n:
        raise VerificationError(
            f"the algorithm released {len(released)} rows with {len(supp)} suppression flags "
            f"for {n} input records"
        )
    qis = schema.quasi_identifiers
    key_cols = list(output.details.get("verification_key") or qis)
    missing = [c for c in key_cols if c not in released.columns]
    if missing:
        raise VerificationError(f"the released data lacks the key column(s) {missing}")
    n_supp = int(supp.sum())
    budget = suppression_budget(suppression_limit, n)
    if n_supp > budget:
        raise VerificationError(f"{n_supp} records were suppressed but the limit allows {budget}")
    if n_supp and qis:
        star = np.ones(n_supp, dtype=bool)
        for q in qis:
            if q in released.columns:
                vals = released[q].to_numpy()[supp]
                star &= vals.astype(object) == SUPPRESSED
        if not star.all():
            raise VerificationError("a suppressed record still shows a quasi-identifier value")
    keys = [encode(released[c].reset_index(drop=True), c) for c in key_cols]
    flag = EncodedColumn("__suppressed__", supp.astype(np.int32), np.array(["0", "1"], object))
    sensitive: dict[str, EncodedColumn] = {}
    for m in models:
        for a in m.sensitive_attributes:
            if a in sensitive:
                continue
            cols = attribute_columns(a)
            frame = released if all(c in released.columns for c in cols) else original
            source = sensitive_column(frame, a)
            order = schema.attributes[a].order if a in schema.attributes else None
            sensitive[a] = encode_ordered(source.reset_index(drop=True), a, order)
    from sdckit.core.frequency import QuasiIdentifier

    qi_objs = [QuasiIdentifier(k.name, k.codes, k.values) for k in [*keys, flag]]
    full = build_frequency_set(qi_objs, None, sensitive)
    leveled = [m for m in models if model_traits(m).full_domain]
    population_models = [
        m for m in models if getattr(m, "population", None) is not None and m not in leveled
    ]
    for m in models:
        if m not in population_models and m not in leveled:
            m.prepare(full)
    kept = full.select(full.keys[:, -1] == 0)
    if population_models:
        published = build_frequency_set(
            [QuasiIdentifier(k.name, k.codes[~supp], k.values) for k in keys], None, {}
        )
    released_classes = build_frequency_set(qi_objs[:-1], None, {})
    names = []
    for m in models:
        if m in leveled:
            r = _evaluate_at_levels(m, original, released, supp, output, schema, key_cols)
            if not r.satisfied:
                raise VerificationError(
                    f"the released data does not satisfy {r.model} at the release's "
                    f"generalization levels ({r.n_violating_classes} violating classes): "
                    f"{r.details}. This is a bug in sdckit; nothing was written."
                )
            names.append(r.model)
            if measured is not None:
                measured.append({"model": r.model, **r.details})
            continue
        if m in population_models:
            r = _evaluate_on_population(m, published, output, schema, key_cols)
            if not r.satisfied:
                raise VerificationError(
                    f"the released data does not satisfy {r.model} against its population "
                    f"({r.n_violating_classes} violating classes): {r.details}. This is a bug "
                    "in sdckit; nothing was written."
                )
            names.append(r.model)
            if measured is not None and m.reports_checks:
                measured.append({"model": r.model, **r.details})
            continue
        r = m.evaluate(kept)
        if not r.satisfied:
            raise VerificationError(
                f"the released data does not satisfy {r.model} ({r.n_violating_classes} "
                f"violating classes): {r.details}. This is a bug in sdckit; nothing was written."
            )
        names.append(r.model)
        if measured is not None and (m.is_global or m.reports_checks):
            measured.append({"model": r.model, **r.details})
    return names, released_classes


def _full_domain(
    output: Any, schema: Schema, key_cols: Any, who: str, why: str
) -> tuple[Any, list[str], dict[str, Any]]:
    """The release's transformation, quasi-identifiers and their hierarchies, for a check
    that reads each class's hierarchy levels; ConfigError ("``who`` a full-domain
    generalization ...: ``why``") unless the release is a full-domain generalization of every
    quasi-identifier (optimal or datafly, each with a hierarchy)."""
    trans = output.transformation
    qis = list(schema.quasi_identifiers)
    hierarchies = {q: h for q in qis if (h := schema.hierarchy(q)) is not None}
    if trans is None or list(key_cols) != qis or len(hierarchies) != len(qis):
        raise ConfigError(
            f"{who} a full-domain generalization (algorithm optimal or datafly, every "
            f"quasi-identifier with a hierarchy): {why}"
        )
    return trans, qis, hierarchies


def _evaluate_at_levels(
    model: PrivacyModel,
    original: pd.DataFrame,
    released: pd.DataFrame,
    supp: np.ndarray,
    output: AlgorithmOutput,
    schema: Schema,
    key_cols: Sequence[str],
) -> Any:
    """Evaluate a model that judges classes by their generalization levels (traits
    ``full_domain``: profitability) on the published classes: each released label of a
    quasi-identifier is looked up among its hierarchy's labels at the release's level (a
    label that is not there fails the verification), the published records are grouped by
    those codes, and the model -- a copy, prepared on the input's records at level 0 -- is
    evaluated on these classes at the release's levels."""
    trans, qis, hierarchies = _full_domain(
        output,
        schema,
        key_cols,
        f"{model.name} needs",
        "it judges each class by the hierarchy levels of its values",
    )
    base = frequency_set(original, qis, hierarchies=hierarchies)
    check = model.with_params()
    check.prepare(base)
    keep = ~np.asarray(supp, dtype=bool)
    levels = tuple(int(trans[q]) for q in qis)
    codes = []
    for q, level in zip(qis, levels, strict=True):
        h = hierarchies[q]
        shown = released[q].reset_index(drop=True)[keep]
        if level == 0:  # the original values: matched to the leaves as the input's were
            code = h.levels[0][h.leaf_index(shown, column=q)].astype(np.int64)
        else:
            labels = pd.Index(np.asarray(h.labels[level], dtype=object))
            code = labels.get_indexer(as_text(shown))
        if (code < 0).any():
            bad = shown.iloc[int(np.argmax(code < 0))]
            raise VerificationError(
                f"the released value {bad!r} of {q!r} is no label of its hierarchy at level "
                f"{level}. This is a bug in sdckit; nothing was written."
            )
        codes.append(code.astype(np.int64))
    cards = [len(hierarchies[q].labels[lv]) for q, lv in zip(qis, levels, strict=True)]
    group, n_groups, rep = group_keys(codes, cards)
    published = FrequencySet(
        quasi_identifiers=base.quasi_identifiers,
        levels=levels,
        keys=np.stack([c[rep] for c in codes], axis=1).astype(np.int32)
        if n_groups
        else np.zeros((0, len(qis)), dtype=np.int32),
        counts=np.bincount(group, minlength=n_groups).astype(np.int64),
    )
    return check.evaluate(published)


def _evaluate_on_population(
    model: PrivacyModel,
    published: Any,
    output: AlgorithmOutput,
    schema: Schema,
    key_cols: Sequence[str],
) -> Any:
    """Evaluate a population model (k-map, δ-presence with a population table) on the
    published classes: the population is generalized by the release's own transformation
    (its records mapped to the released labels through the hierarchies), so each released
    class is compared with the population records it covers, as ARX does. Suppressed records
    are not published and count in no class. A copy of the model is used: the caller's model
    keeps its preparation on the input."""

    trans, qis, hierarchies = _full_domain(
        output,
        schema,
        key_cols,
        f"{model.name} with a population table needs",
        "its population records must map onto the released classes",
    )
    population = model.population  # type: ignore[attr-defined]
    generalized = {}
    for q in qis:
        h = hierarchies[q]
        level = int(trans[q])
        # leaf codes as the input's were found (distinct values matched once); the labels
        # at the level as categories, so the check matches distinct labels, not every row
        leaf = encode_quasi_identifier(population[q], q, h).codes
        labels = pd.Index(np.asarray(h.labels[level], dtype=object))
        generalized[q] = pd.Categorical.from_codes(h.levels[level][leaf], categories=labels)
    check = model.with_params(population=pd.DataFrame(generalized, index=population.index))
    check.prepare(published)
    return check.evaluate(published)


def anonymize(
    data: pd.DataFrame,
    schema: Schema,
    models: Sequence[PrivacyModel] | PrivacyModel,
    *,
    suppression_limit: float = 0.0,
    metric: str | Mapping[str, Any] | None = None,
    algorithm: str = "optimal",
    seed: int | None = None,
    progress: Callable[[int, int], Any] | bool | None = None,
    risk: bool = True,
    **algorithm_options: Any,
) -> AnonymizationResult:
    """Anonymize ``data`` so that it satisfies every model in ``models``; verified release.

    ``schema`` gives roles (identifying columns are dropped or pseudonymized, quasi-
    identifiers are generalized, sensitive attributes feed the models) and hierarchies;
    ``suppression_limit`` is the share of records that may be suppressed (``safepub``, which
    releases a random sample, suppresses by its own definition and is verified with a limit
    of 1: its traits say ``sampling``, :class:`~sdckit.algorithms.registry.AlgorithmTraits`);
    ``metric`` the
    information loss ``optimal`` minimises (name or ``{"name", "aggregate", "weights", ...}``;
    default ``loss``; the heuristics choose by their own rule and refuse a metric); ``algorithm``
    one of :data:`ALGORITHMS`; ``seed`` the random seed for randomized algorithms;
    ``progress(done, total)`` is passed to the algorithm; ``progress=True`` shows a progress
    bar (:func:`sdckit.core.progress.progress_bar`: a live line on a terminal, a live cell
    in a Jupyter notebook). ``risk=False`` skips the risk
    analyses (``risk_before``/``risk_after`` are then empty). Raises
    :class:`~sdckit.errors.NoSolutionError` when nothing satisfies the models within the
    limit, other :class:`~sdckit.errors.SdcInputError` subclasses for bad input and
    :class:`~sdckit.errors.VerificationError` if the release fails the independent check.
    """
    if progress is True:
        from sdckit.core.progress import progress_bar

        with progress_bar(f"{algorithm} search") as update:
            return anonymize(
                data,
                schema,
                models,
                suppression_limit=suppression_limit,
                metric=metric,
                algorithm=algorithm,
                seed=seed,
                progress=update,
                risk=risk,
                **algorithm_options,
            )
    if progress is False:
        progress = None
    t0 = time.perf_counter()
    if isinstance(models, PrivacyModel):
        models = [models]
    models = list(models) if isinstance(models, Sequence) else models
    _validate(data, schema, models, suppression_limit, algorithm)
    if ALGORITHMS.traits(algorithm).sampling:
        suppression_limit = 1.0
    from sdckit.algorithms.optimal import payout_metric

    # publisher_payout: the amounts of the job's profitability model (what the JSON states)
    spec = payout_metric(parse_metric(metric), models)
    func = _resolve(algorithm)
    identifiers, notices = _identifiers(data, schema)
    dropped = set(schema.identifying)
    work = data[[c for c in data.columns if c not in dropped]]
    output = func(
        work,
        schema,
        models,
        suppression_limit=float(suppression_limit),
        metric=None if metric is None else spec,  # parsed once, here
        seed=seed,
        progress=progress,
        **algorithm_options,
    )
    t1 = time.perf_counter()
    # an algorithm may hand over its metrics computed exactly on frequency sets (optimal does,
    # the same definitions as output_metrics); otherwise they come from the released rows
    metrics_all = output.details.get("metrics") or output_metrics(work, output, schema, spec)
    t2 = time.perf_counter()
    model_checks: list[dict[str, Any]] = []
    satisfied, released_classes = verify_release(
        work, output, schema, models, float(suppression_limit), model_checks
    )
    t3 = time.perf_counter()
    released = output.data
    if identifiers:
        released = released.copy(deep=False)
        for name, tokens in identifiers.items():
            released[name] = tokens.to_numpy()
        released = released[[c for c in data.columns if c in released.columns]]
    qis = schema.quasi_identifiers
    risk_before: dict[str, Any] = {}
    risk_after: dict[str, Any] = {}
    if risk:
        from sdckit.risk.analyze import analyze, analyze_frequency_set

        # ARX semantics: a suppressed or missing value is a category of its own (the release
        # is judged by its equivalence classes); only the class-based measures are needed.
        # The classes are those already counted: the input's by the search (when it counted
        # every record on the QIs), the release's by the verification (when its key is the QIs)
        def classes_risk(fs: FrequencySet | None, data: pd.DataFrame) -> dict[str, Any]:
            if fs is not None and list(fs.names) == list(qis):
                return analyze_frequency_set(fs, measures=[], missing="category").summary
            return analyze(data, qis, measures=[], missing="category").summary

        risk_before = classes_risk(output.input_classes, work)
        risk_after = classes_risk(released_classes, output.data)
    t4 = time.perf_counter()
    details = dict(output.details)
    details["timings"] = {
        "algorithm_seconds": t1 - t0,
        "metrics_seconds": t2 - t1,
        "verification_seconds": t3 - t2,
        "risk_seconds": t4 - t3,
    }
    details["iloss"] = metrics_all.get("iloss")
    if notices:
        details["notices"] = notices
    details["metric"] = spec.name
    if model_checks:
        details["model_checks"] = model_checks
    details["metric_conventions"] = {
        **spec.conventions(),
        "precision": "Sweeney's precision, higher is better (ARX prints 1 - precision)",
    }
    return AnonymizationResult(
        data=released,
        transformation=output.transformation,
        suppressed_records=output.suppressed_records,
        metrics={
            **{k: metrics_all[k] for k in METRIC_KEYS},
            # the search's own metric when it is none of those (publisher_payout)
            **({spec.name: metrics_all[spec.name]} if spec.name in metrics_all else {}),
        },
        models_satisfied=satisfied,
        verified=True,
        nodes_checked=int(output.nodes_checked),
        elapsed_seconds=time.perf_counter() - t0,
        risk_before=risk_before,
        risk_after=risk_after,
        details=details,
        extra_tables=dict(output.extra_tables),
        algorithm=algorithm,
        models=[m.describe() for m in models],
        suppression_limit=float(suppression_limit),
    )

"""``sdckit.synthesize``: one call from a DataFrame to synthetic copies with their evaluation.

The methods (:data:`METHODS`; a job file's ``method:``):

=============  ===============================================================================
``cart``       sequential CART synthesis, synthpop-style (:mod:`~sdckit.synthesis.sequential`)
``parametric`` sequential normal / (polytomous) logistic regression synthesis (same module)
``partial``    only the records at risk synthesized (:mod:`~sdckit.synthesis.partial`)
``hybrid``     microaggregation-based hybrid data (:mod:`~sdckit.synthesis.hybrid`)
``marginal_dp`` (epsilon, delta)-DP marginal-based synthesis, MST-style
               (:mod:`~sdckit.synthesis.marginal_dp`)
``safepub``    (epsilon, delta)-DP anonymization by sampling, private search and suppression
               (:mod:`sdckit.algorithms.safepub`); the released (non-suppressed) records
``alpha_beta`` the (alpha, beta)-algorithm of Rastogi, Suciu & Hong 2007
               (:mod:`~sdckit.synthesis.alpha_beta`)
=============  ===============================================================================

Evaluation (:func:`evaluate_synthetic`): with ``holdout`` > 0 (default 0.2) a random share of
the records is held out: the synthesizer is fitted on the rest (the *training* records) and
the holdout serves as the reference for the distance-to-closest-record risk
(:func:`sdckit.risk.synthetic.dcr_holdout`): a synthesizer that copies its training records puts
more synthetic records closer to the training part than the training share predicts (on a
seeded random sample of at most ``dcr_sample`` synthetic records, default :data:`DCR_SAMPLE`:
its cost is every synthetic record against every original one; the JSON states the records
measured). Utility
(pMSE/S_pMSE, 1-/2-way TVD) and TCAP compare the first copy with the training records. With
``holdout: 0`` every record is used for fitting and the DCR against a holdout is not measured.

**What may be published and what may not** (:meth:`SynthesisResult.to_dict`). The JSON has two
parts. ``release`` is what accompanies the synthetic data: the method, its parameters, the
privacy guarantee (``privacy``; ``private`` is false when the noise was drawn from the seed),
the number of copies and of records per copy, and for a differentially private method its
details -- declared, noisy or parameter values only, which the guarantee covers.
``steward_evaluation`` is everything computed from the original records: record counts,
utility, risk (DCR, TCAP), the notes, and the method's facts about the records (for a method
without a formal guarantee, all of its details). Its ``label`` says it: for the data steward,
not covered by epsilon -- exact statistics of the original that a release must not carry.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from sdckit.core.registry import Registry
from sdckit.errors import DataError, ParameterError, SdcInputError
from sdckit.synthesis.base import Synthesizer, as_generator

__all__ = [
    "DCR_SAMPLE",
    "METHODS",
    "SynthesisResult",
    "SynthesisTraits",
    "evaluate_synthetic",
    "make_synthesizer",
    "method_parameters",
    "synthesize",
]

#: Parameters of the synthesizer classes given by the caller, not among a method's
#: parameters (a job's ``options:``): the budget is the job's ``epsilon``/``delta``, the schema
#: its ``attributes:``.
CALLER_PARAMETERS = ("epsilon", "delta", "schema")


@dataclass(frozen=True)
class SynthesisTraits:
    """What a caller needs to know of a synthesis method without building it: what it is
    (``description``), whether it is differentially private (``dp``: it takes the budget,
    ``epsilon`` and ``delta``) and whether each output is one run of a randomized mechanism
    over the data (``single_release``: a second copy would be a second release, spending the
    budget again, so ``m`` must be 1), and whether it releases one record per fitted record
    (``one_per_record``: partially synthetic and hybrid data, whose size is the training
    data's). ``synthesizer``: the ``"module:Class"`` path of the synthesizer class whose
    keyword parameters are the method's parameters (:func:`method_parameters`), less
    ``fixed``, the ones the method sets itself."""

    description: str = ""
    dp: bool = False
    single_release: bool = False
    one_per_record: bool = False
    synthesizer: str = ""
    fixed: tuple[str, ...] = ()


#: The synthesis methods (the job file's ``method:``), each a builder
#: ``(method, epsilon, delta, schema, parameters) -> Synthesizer`` with its traits; filled
#: below the builders.
METHODS: Registry[SynthesisTraits] = Registry("synthesis method", SynthesisTraits())

#: The JSON keys of :meth:`SynthesisResult.to_dict`, in order.
JSON_KEYS = ("method", "release", "steward_evaluation", "elapsed_seconds")
#: The keys of its ``release`` part (what may be published with the synthetic data).
RELEASE_KEYS = ("method", "copies", "records", "privacy", "parameters", "details")
#: The keys of its ``steward_evaluation`` part (computed from the original records).
STEWARD_KEYS = (
    "label",
    "training_records",
    "holdout_records",
    "utility",
    "risk",
    "notes",
    "method_details",
)
#: How the steward's part is labelled, in the JSON and the report.
STEWARD_LABEL = (
    "for the data steward, not covered by epsilon: computed from the original records "
    "(exact counts, utility, risk); do not publish it with the release"
)


class SafePubRelease(Synthesizer):
    """SafePub (:func:`sdckit.algorithms.safepub.safepub` through :func:`sdckit.anonymize`,
    verified there) as a synthesizer: :meth:`fit` runs the mechanism once; :meth:`sample`
    returns its released records -- the sampled records of the classes of at least ``k``,
    generalized; the suppressed ones are left out, so the output's size is the mechanism's and
    ``n`` is ignored.

    Parameters
    ----------
    epsilon, delta : float
        The ``(epsilon, delta)``-DP budget (a job's ``epsilon:`` and ``delta:``).
    schema : Schema
        The roles and hierarchies; the quasi-identifiers need hierarchies (a job's
        ``attributes:``).
    epsilon_search : float
        The part of ``epsilon`` that pays for the private search (default 0.1;
        :class:`~sdckit.models.differential_privacy.DifferentialPrivacy`).
    **options
        The options of the ``safepub`` algorithm
        (:class:`~sdckit.algorithms.options.SafePubOptions`): ``search_steps``, ``score``,
        ``output``, ``insecure_reproducible_noise``.
    """

    name = "safepub"
    #: the spec of the keyword options passed on to :func:`sdckit.anonymize`
    #: (:class:`~sdckit.algorithms.options.SafePubOptions`), part of the method's parameters
    OPTIONS_SPEC = "sdckit.algorithms.options:SafePubOptions"
    #: facts of SafePub's result computed from the records (exact counts, the metrics of
    #: the released data against the original): not covered by the guarantee
    STEWARD_FACTS = (
        "metrics",
        "iloss",
        "timings",
        "records",
        "records_sampled",
        "records_not_sampled",
        "records_suppressed_small_classes",
        "records_suppressed",
        "note",
    )

    def __init__(
        self,
        epsilon: float,
        delta: float,
        *,
        schema: Any,
        epsilon_search: float = 0.1,
        **options: Any,
    ) -> None:
        super().__init__()
        from sdckit.algorithms.options import parse_options
        from sdckit.models.differential_privacy import DifferentialPrivacy

        parse_options("safepub", options)  # bad parameters are refused before the fit
        self.model = DifferentialPrivacy(
            epsilon=epsilon, delta=delta, epsilon_search=epsilon_search
        )
        if schema is None or not getattr(schema, "quasi_identifiers", None):
            raise ParameterError(
                "safepub: needs a schema whose quasi-identifiers have hierarchies (a job's "
                "`attributes:` with `role: quasi_identifying` and `hierarchy:`)"
            )
        self.schema = schema
        self.options = options
        self._release: pd.DataFrame | None = None

    def _fit(self, data: pd.DataFrame, rng: np.random.Generator) -> None:
        from sdckit.algorithms.anonymize import anonymize

        seed = int(rng.integers(0, 2**63 - 1))
        result = anonymize(
            data,
            self.schema,
            [self.model],
            algorithm="safepub",
            seed=seed,
            risk=False,
            **self.options,
        )
        qis = list(self.schema.quasi_identifiers)
        kept = ~(result.data[qis] == "*").all(axis=1)
        self._release = result.data.loc[kept].reset_index(drop=True)
        self._original = self._release.iloc[:0].copy()
        details = {
            "transformation": result.transformation,
            "metrics": result.metrics,
            **{k: v for k, v in result.details.items() if k not in ("solution_space",)},
        }
        self.details = {k: v for k, v in details.items() if k not in self.STEWARD_FACTS}
        self.steward_details = {k: v for k, v in details.items() if k in self.STEWARD_FACTS}
        # output: best_exact is not covered by epsilon: no guarantee is claimed (the details
        # say why)
        if result.details.get("covered_by_epsilon", True):
            self.privacy = {
                "epsilon": float(self.model.epsilon),
                "delta": float(self.model.delta),
            }

    def _sample(self, n: int, rng: np.random.Generator) -> pd.DataFrame:
        assert self._release is not None
        return self._release.copy()

    def sample(self, n: int | None = None, *, seed: Any = None) -> pd.DataFrame:
        """The released records (``n`` and ``seed`` are ignored: one release per fit)."""
        self._require_fitted()
        assert self._release is not None
        return self._release.copy()


def method_parameters(method: str) -> dict[str, inspect.Parameter]:
    """The parameters synthesis ``method`` takes (a job's ``options:``), in order: the keyword
    parameters of its synthesizer class (traits ``synthesizer``), less those the caller gives
    (:data:`CALLER_PARAMETERS`) and those the method sets (traits ``fixed``), plus the fields
    of the class's ``OPTIONS_SPEC`` where it passes ``**options`` on. Their meaning is the
    class docstring's numpydoc ``Parameters`` section."""
    import importlib

    def load(path: str) -> Any:
        module, _, attribute = path.partition(":")
        return getattr(importlib.import_module(module), attribute)

    traits = METHODS.traits(method)
    cls = load(traits.synthesizer)
    out: dict[str, inspect.Parameter] = {}
    for name, param in inspect.signature(cls).parameters.items():
        if name in CALLER_PARAMETERS or name in traits.fixed:
            continue
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            spec = load(cls.OPTIONS_SPEC)
            for field_name, info in spec.model_fields.items():
                out[field_name] = inspect.Parameter(
                    field_name,
                    inspect.Parameter.KEYWORD_ONLY,
                    default=info.get_default(call_default_factory=True),
                    annotation=info.annotation,
                )
            continue
        out[name] = param
    return out


def make_synthesizer(
    method: str,
    /,
    *,
    epsilon: float | None = None,
    delta: float | None = None,
    schema: Any = None,
    **parameters: Any,
) -> Synthesizer:
    """The synthesizer of ``method`` with its parameters (ParameterError naming a bad one)."""
    if method not in METHODS:
        from sdckit.core.spec import did_you_mean

        raise ParameterError(
            f"synthesize: unknown method {method!r}; one of {', '.join(METHODS)}"
            f"{did_you_mean(method, list(METHODS))}"
        )
    allowed = method_parameters(method)
    fixed = METHODS.traits(method).fixed  # refused by the method, with its reason
    unknown = [k for k in parameters if k not in allowed and k not in fixed]
    if unknown:
        from sdckit.core.spec import did_you_mean

        raise ParameterError(
            f"synthesize: method {method!r} has no parameter {unknown[0]!r}; it takes "
            f"{', '.join(allowed) or 'none'}{did_you_mean(unknown[0], list(allowed))}"
        )
    dp = METHODS.traits(method).dp
    if not dp and (epsilon is not None or delta is not None):
        raise ParameterError(
            f"synthesize: method {method!r} takes no epsilon/delta (the differentially private "
            f"methods are {' and '.join(METHODS.where(lambda t: t.dp))}; alpha_beta takes "
            "alpha and beta)"
        )
    if dp and epsilon is None and parameters.get("rho") is None:
        raise ParameterError(
            f"synthesize: method {method!r} needs its privacy budget: epsilon (and delta), "
            "e.g. epsilon: 1.0, delta: 1.0e-6"
        )
    try:
        return METHODS.load(method)(method, epsilon, delta, schema, parameters)
    except TypeError as exc:  # an unknown keyword
        raise ParameterError(f"synthesize: method {method!r}: {exc}") from None


def _sequential(
    method: str, epsilon: float | None, delta: float | None, schema: Any, parameters: dict[str, Any]
) -> Synthesizer:
    from sdckit.synthesis.sequential import Sequential

    if "method" in parameters and method == "parametric":
        raise ParameterError(
            "synthesize: method 'parametric' sets every variable's model; use method "
            "'cart' with a per-variable `method:` mapping to mix them"
        )
    parameters.setdefault("method", method)
    return Sequential(**parameters)


def _partial(
    method: str, epsilon: float | None, delta: float | None, schema: Any, parameters: dict[str, Any]
) -> Synthesizer:
    from sdckit.synthesis.partial import Partial

    if "quasi_identifiers" not in parameters and schema is not None:
        parameters["quasi_identifiers"] = list(schema.quasi_identifiers) or None
    return Partial(**parameters)


def _hybrid(
    method: str, epsilon: float | None, delta: float | None, schema: Any, parameters: dict[str, Any]
) -> Synthesizer:
    from sdckit.synthesis.hybrid import Hybrid

    return Hybrid(**parameters)


def _marginal_dp(
    method: str, epsilon: float | None, delta: float | None, schema: Any, parameters: dict[str, Any]
) -> Synthesizer:
    from sdckit.synthesis.marginal_dp import MarginalDP

    return MarginalDP(epsilon, 1e-6 if delta is None else delta, **parameters)


def _safepub(
    method: str, epsilon: float | None, delta: float | None, schema: Any, parameters: dict[str, Any]
) -> Synthesizer:
    if epsilon is None:
        raise ParameterError("synthesize: safepub needs epsilon, e.g. epsilon: 1.0")
    if delta is None:
        raise ParameterError("synthesize: safepub needs delta, e.g. delta: 1.0e-5")
    return SafePubRelease(epsilon, delta, schema=schema, **parameters)


def _alpha_beta(
    method: str, epsilon: float | None, delta: float | None, schema: Any, parameters: dict[str, Any]
) -> Synthesizer:
    from sdckit.synthesis.alpha_beta import AlphaBeta

    missing = [p for p in ("alpha", "beta") if p not in parameters]
    if missing:
        raise ParameterError(
            f"synthesize: method 'alpha_beta' needs the parameters alpha and beta (missing: "
            f"{', '.join(missing)}): a true tuple is published with probability alpha + "
            "beta, any other tuple of the domain with probability beta; e.g. job file "
            "`options: {alpha: 0.5, beta: 0.001}`, Python alpha=0.5, beta=0.001"
        )
    return AlphaBeta(**parameters)


_SEQUENTIAL = "sdckit.synthesis.sequential:Sequential"
METHODS.add(
    "cart",
    _sequential,
    SynthesisTraits("sequential CART synthesis (synthpop-style)", synthesizer=_SEQUENTIAL),
)
METHODS.add(
    "parametric",
    _sequential,
    SynthesisTraits(
        "sequential regression synthesis (normal, logistic, polytomous)",
        synthesizer=_SEQUENTIAL,
        fixed=("method",),
    ),
)
METHODS.add(
    "partial",
    _partial,
    SynthesisTraits(
        "partially synthetic: the records at risk",
        one_per_record=True,
        synthesizer="sdckit.synthesis.partial:Partial",
    ),
)
METHODS.add(
    "hybrid",
    _hybrid,
    SynthesisTraits(
        "microaggregation-based hybrid data",
        one_per_record=True,
        synthesizer="sdckit.synthesis.hybrid:Hybrid",
    ),
)
METHODS.add(
    "marginal_dp",
    _marginal_dp,
    SynthesisTraits(
        "differentially private marginal-based synthesis (MST-style)",
        dp=True,
        synthesizer="sdckit.synthesis.marginal_dp:MarginalDP",
    ),
)
METHODS.add(
    "safepub",
    _safepub,
    SynthesisTraits(
        "differentially private anonymization (SafePub)",
        dp=True,
        single_release=True,
        synthesizer="sdckit.synthesis.api:SafePubRelease",
    ),
)
METHODS.add(
    "alpha_beta",
    _alpha_beta,
    SynthesisTraits(
        "the (alpha, beta)-algorithm",
        single_release=True,
        synthesizer="sdckit.synthesis.alpha_beta:AlphaBeta",
    ),
)


@dataclass
class SynthesisResult:
    """Synthetic copies (``copies``; ``data`` is the first), the fitted synthesizer, its
    privacy guarantee and the evaluation of the first copy."""

    copies: list[pd.DataFrame]
    method: str
    synthesizer: Synthesizer
    parameters: dict[str, Any]
    training_records: int
    holdout_records: int
    utility: dict[str, Any] = field(default_factory=dict)
    risk: dict[str, Any] = field(default_factory=dict)
    evaluation_notes: list[str] = field(default_factory=list)
    elapsed_seconds: float = 0.0

    def _repr_html_(self) -> str:
        """The synthesis in a Jupyter notebook: the summary tables and charts of its HTML
        report, compact (:func:`sdckit.core.display.notebook_html`)."""
        from sdckit.core.display import notebook_html

        return notebook_html("synthesis", self)

    @property
    def data(self) -> pd.DataFrame:
        """The first synthetic copy."""
        return self.copies[0]

    @property
    def privacy(self) -> dict[str, float] | None:
        """``{"epsilon", "delta", ...}`` of a differentially private method, else None."""
        return self.synthesizer.privacy

    def privacy_statement(self) -> dict[str, Any]:
        """The release's guarantee: ``{guarantee, epsilon, delta, rho, private, statement}``
        (``private`` false for a DP method whose noise was drawn from the seed; a SafePub
        release that epsilon does not cover, ``output: best_exact``, claims no guarantee and
        its statement says why)."""
        from sdckit.dp.randomness import INSECURE_KIND, NOT_PRIVATE

        privacy = self.privacy
        if privacy is None:  # no guarantee, or (safepub's best_exact) none that covers it
            own = self.synthesizer.details.get("privacy")
            return {
                "guarantee": None,
                "epsilon": None,
                "delta": None,
                "private": False,
                "statement": own["guarantee"]
                if isinstance(own, dict)
                else f"{self.method} gives no formal privacy guarantee",
            }
        insecure = self.synthesizer.details.get("randomness") == INSECURE_KIND
        return {
            "guarantee": "(epsilon, delta)-differential privacy",
            "epsilon": privacy.get("epsilon"),
            "delta": privacy.get("delta"),
            **({"rho": privacy["rho"]} if "rho" in privacy else {}),
            "private": not insecure,
            "statement": NOT_PRIVATE
            if insecure
            else "the whole budget is spent in fitting, with noise from the OS CSPRNG; every "
            "copy drawn from the fitted model is post-processing",
        }

    def to_dict(self) -> dict[str, Any]:
        """The JSON document (keys :data:`JSON_KEYS`): the ``release`` part, which may be
        published, and the ``steward_evaluation`` part, which may not (module docstring)."""
        from sdckit.core.spec import json_ready

        dp = self.privacy is not None
        details = self.synthesizer.details
        steward = dict(self.synthesizer.steward_details)
        if not dp:  # no guarantee covers the method's facts about the records
            steward = {**details, **steward}
        return json_ready(
            {
                "method": self.method,
                "release": {
                    "method": self.method,
                    "copies": len(self.copies),
                    "records": len(self.copies[0]),
                    "privacy": self.privacy_statement(),
                    "parameters": self.parameters,
                    "details": details if dp else {},
                },
                "steward_evaluation": {
                    "label": STEWARD_LABEL,
                    "training_records": self.training_records,
                    "holdout_records": self.holdout_records,
                    "utility": self.utility,
                    "risk": self.risk,
                    "notes": self.evaluation_notes,
                    "method_details": steward,
                },
                "elapsed_seconds": self.elapsed_seconds,
            }
        )


#: Synthetic records the DCR measures by default (a seeded random sample of them when more).
DCR_SAMPLE = 2000


def _split(
    data: pd.DataFrame, holdout: float, rng: np.random.Generator
) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    if isinstance(holdout, bool) or not isinstance(holdout, (int, float)) or not 0 <= holdout < 1:
        raise ParameterError(f"synthesize: holdout must be a share in [0, 1), got {holdout!r}")
    n_hold = int(round(holdout * len(data)))
    if n_hold == 0:
        return data.reset_index(drop=True), None
    if len(data) - n_hold < 2:
        raise DataError(
            f"synthesize: {len(data)} records leave too few to fit after holding out {n_hold}; "
            "set holdout: 0"
        )
    perm = rng.permutation(len(data))
    hold = np.sort(perm[:n_hold])
    train = np.sort(perm[n_hold:])
    return data.iloc[train].reset_index(drop=True), data.iloc[hold].reset_index(drop=True)


def evaluate_synthetic(
    training: pd.DataFrame,
    synthetic: pd.DataFrame,
    holdout: pd.DataFrame | None = None,
    *,
    quasi_identifiers: Sequence[str] | None = None,
    target: str | None = None,
    regression: Mapping[str, Any] | None = None,
    dcr_sample: int | None = DCR_SAMPLE,
    seed: int | np.random.Generator | None = 0,
) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """Utility and risk of ``synthetic`` against the ``training`` records it was fitted on:
    ``utility`` {pmse, s_pmse, tvd_1way_mean, tvd_2way_mean} and ``risk``
    {dcr_share_closer_than_holdout, tcap, ...}; ``regression`` ``{target, predictors}`` adds
    Karr et al.'s confidence-interval overlap (:mod:`sdckit.utility.regression`); a measure
    that does not apply is None with the reason in the notes. The DCR measures a random
    sample of at most ``dcr_sample`` synthetic records drawn by ``seed`` (``None``: all)."""
    from sdckit.risk.synthetic import dcr_holdout, tcap
    from sdckit.utility.marginals import marginal_distances
    from sdckit.utility.propensity import propensity_mse

    notes: list[str] = []
    columns = [c for c in training.columns if c in synthetic.columns]
    utility: dict[str, Any] = {"pmse": None, "s_pmse": None}
    risk: dict[str, Any] = {"dcr_share_closer_than_holdout": None, "tcap": None}
    syn = synthetic[columns]
    orig = training[columns]
    if len(syn) == 0:
        notes.append("the synthetic data has no records: nothing to evaluate")
        utility.update(tvd_1way_mean=None, tvd_2way_mean=None)
        return utility, risk, notes
    try:
        p = propensity_mse(orig, syn)
        utility.update(pmse=p.pmse, s_pmse=p.s_pmse, s_pmse_published=p.s_pmse_published)
    except SdcInputError as exc:
        notes.append(f"pMSE not measured: {exc}")
    try:
        md = marginal_distances(orig, syn)
        utility.update(
            tvd_1way_mean=md.tvd_1way_mean,
            tvd_2way_mean=md.tvd_2way_mean,
            tvd_1way=md.one_way,
            tvd_2way_max=md.to_dict()["tvd_2way_max"],
        )
    except SdcInputError as exc:
        utility.update(tvd_1way_mean=None, tvd_2way_mean=None)
        notes.append(f"marginal distances not measured: {exc}")
    from sdckit.utility.regression import ci_overlap, correlation_differences

    corr = correlation_differences(orig, syn)
    utility["correlation_difference_mean"] = corr["mean_abs"]
    utility["correlation_difference_max"] = corr["max_abs"]
    if regression is not None:
        try:
            utility["ci_overlap"] = ci_overlap(
                orig, syn, regression["target"], list(regression.get("predictors", []))
            )
        except SdcInputError as exc:
            notes.append(f"CI overlap not measured: {exc}")
    if holdout is None:
        notes.append("DCR against a holdout not measured: no records were held out (holdout: 0)")
    else:
        try:
            d = dcr_holdout(orig, holdout[columns], syn, sample=dcr_sample, seed=seed)
            dd = d.to_dict()
            if d.measured_records < d.synthetic_records:
                notes.append(
                    f"DCR measured on a random sample of {d.measured_records:,} of the "
                    f"{d.synthetic_records:,} synthetic records (dcr_sample; null for all)"
                )
            risk["dcr_share_closer_than_holdout"] = d.share_closer_to_training
            risk["dcr"] = dd
        except SdcInputError as exc:
            notes.append(f"DCR not measured: {exc}")
    if quasi_identifiers and target:
        try:
            t = tcap(orig, syn, list(quasi_identifiers), target)
            td = t.to_dict()
            risk["tcap"] = t.tcap
            risk["tcap_details"] = {
                **td,
                "quasi_identifiers": list(quasi_identifiers),
                "target": target,
            }
        except SdcInputError as exc:
            notes.append(f"TCAP not measured: {exc}")
    else:
        notes.append(
            "TCAP not measured: declare quasi-identifying attributes and a sensitive attribute "
            "(the target) to measure it"
        )
    return utility, risk, notes


def synthesize(
    data: pd.DataFrame,
    method: str = "cart",
    *,
    seed: int | np.random.Generator | None = None,
    m: int = 1,
    n: int | None = None,
    epsilon: float | None = None,
    delta: float | None = None,
    holdout: float = 0.2,
    evaluate: bool = True,
    schema: Any = None,
    quasi_identifiers: Sequence[str] | None = None,
    target: str | None = None,
    regression: Mapping[str, Any] | None = None,
    original_share_warning: float | None = None,
    dcr_sample: int | None = DCR_SAMPLE,
    options: Mapping[str, Any] | None = None,
    **parameters: Any,
) -> SynthesisResult:
    """Fit ``method`` on ``data`` (minus a ``holdout`` share) and draw ``m`` synthetic copies
    of ``n`` records each, evaluated. By default a copy has as many records as ``data``
    (synthpop's ``syn()`` convention), also when a holdout is kept
    (:meth:`~sdckit.synthesis.base.Synthesizer.default_records`: a differentially private
    method scales its noisy count of the training records by ``1 / (1 - holdout)``, never
    reading the exact size); partially synthetic and hybrid data keep one record per
    training record.

    ``seed``: same seed, same bytes (the holdout split, the fit and every copy draw from
    generators spawned from it) -- except the privacy noise of a differentially private
    method, which comes from the OS CSPRNG whatever the seed (unless the method's option
    ``insecure_reproducible_noise`` is true: tests only, not private); ``epsilon``/``delta``:
    the budget of a differentially private method; ``schema``: roles and hierarchies
    (safepub's hierarchies, partial's quasi-identifiers, TCAP's keys and target);
    ``quasi_identifiers``/``target`` override the schema's for TCAP; ``regression``
    (``{target, predictors}``) adds the regression CI overlap to the utility; ``dcr_sample``:
    the synthetic records the DCR measures at most (a random sample drawn from the seed;
    ``None``: all); further keyword
    arguments are the method's parameters (:func:`method_parameters`; the class docstring of
    each method), which may also be given as the mapping ``options`` (as a job file's
    ``options:``; the only way to give :class:`~sdckit.synthesis.sequential.Sequential`'s own
    ``method``). Identifying attributes of ``schema`` are dropped.

    Always (also without ``evaluate``), ``risk["original_records"]`` counts the released
    records (every copy) equal to a record of ``data`` on every released column, with a
    warning above ``original_share_warning`` (default 0.1;
    :func:`sdckit.risk.original_records.original_records`); with a holdout, beside it the share
    of held-out records equal to a training record (what real records unseen by the
    synthesizer show by chance in this domain). Computed from the original records, it
    belongs to the steward's evaluation (``steward_evaluation.risk`` of the JSON), not to the
    release.
    """
    t0 = time.perf_counter()
    parameters = {**(options or {}), **parameters}
    if not isinstance(data, pd.DataFrame):
        raise DataError(f"synthesize: data must be a pandas DataFrame, got {type(data).__name__}")
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
        raise ParameterError(f"synthesize: m (copies) must be an integer >= 1, got {m!r}")
    if m > 1 and method in METHODS and METHODS.traits(method).single_release:
        raise ParameterError(
            f"synthesize: {method} releases one output per run (a second copy would be a second "
            "release over the same data); use m: 1"
        )
    from sdckit.risk.original_records import check_threshold, original_records

    share_limit = check_threshold(original_share_warning)
    rng = as_generator(seed)
    split_rng, fit_rng, *copy_rngs = rng.spawn(2 + m)
    if schema is not None:
        ids = [c for c in schema.identifying if c in data.columns]
        data = data.drop(columns=ids)
        if quasi_identifiers is None:
            quasi_identifiers = [c for c in schema.quasi_identifiers if c in data.columns]
        if target is None:
            sens = [c for c in schema.sensitive if c in data.columns]
            target = sens[0] if sens else None
    if method == "partial" and quasi_identifiers is not None:
        parameters.setdefault("quasi_identifiers", list(quasi_identifiers))
    synthesizer = make_synthesizer(
        method, epsilon=epsilon, delta=delta, schema=schema, **dict(parameters)
    )
    training, hold = _split(data, holdout, split_rng)
    synthesizer.fit(training, seed=fit_rng)
    traits = METHODS.traits(method) if method in METHODS else SynthesisTraits()
    if n is None and not (traits.one_per_record or traits.single_release):
        n = synthesizer.default_records(len(data), holdout)
    copies = [synthesizer.sample(n, seed=r) for r in copy_rngs]
    result = SynthesisResult(
        copies=copies,
        method=method,
        synthesizer=synthesizer,
        parameters=_plain(parameters),
        training_records=len(training),
        holdout_records=0 if hold is None else len(hold),
    )
    if evaluate:
        result.utility, result.risk, result.evaluation_notes = evaluate_synthetic(
            training,
            copies[0],
            hold,
            quasi_identifiers=quasi_identifiers,
            target=target,
            regression=regression,
            dcr_sample=dcr_sample,
            seed=split_rng.spawn(1)[0],  # a stream of its own: the copies stay the same
        )
    released = copies[0] if len(copies) == 1 else pd.concat(copies, ignore_index=True)
    originals = original_records(data, released, threshold=share_limit).to_dict()
    if len(copies) > 1:
        originals["per_copy"] = [
            original_records(data, c, threshold=share_limit).equal_to_original for c in copies
        ]
    # what chance gives: the share of held-out (real, unseen) records equal to a training record
    originals["holdout_share_equal_to_training"] = (
        None if hold is None else original_records(training, hold).share
    )
    result.risk["original_records"] = originals
    result.elapsed_seconds = time.perf_counter() - t0
    return result


def _plain(parameters: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters as JSON-ready values (a mask as its count)."""
    out: dict[str, Any] = {}
    for k, v in parameters.items():
        if isinstance(v, np.ndarray):
            out[k] = f"<array of {v.size}>"
        elif k == "accountant":
            continue
        else:
            out[k] = v
    return out

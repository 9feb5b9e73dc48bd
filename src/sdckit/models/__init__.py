"""Privacy models as predicates over a frequency set (see :mod:`sdckit.models.base`).

The classes are loaded on first use (``from sdckit.models import KAnonymity`` imports the
k-anonymity module only): a job naming one model does not pay for the import of twenty.

:data:`MODELS` is the :class:`~sdckit.core.registry.Registry` of the models a job file may
name: job-file name (the class's ``spec_name``; a test checks that each class declares its
registered name) -> the class, imported on first
:meth:`~sdckit.core.registry.Registry.load`, and its :class:`ModelTraits`. Reading the names
or the traits imports no model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sdckit._lazy import lazy_exports
from sdckit.core.registry import Registry

# loaded at once: the function ``check`` shares its name with its module, which would
# otherwise shadow it as this package's attribute once some other import loads the module
from sdckit.models.check import CheckResult, check

if TYPE_CHECKING:
    from sdckit.models.alpha_k import AlphaKAnonymity
    from sdckit.models.base import ModelResult, PrivacyModel
    from sdckit.models.beta_likeness import BetaLikeness
    from sdckit.models.confidence_bounding import ConfidenceBounding, PrivacyTemplate
    from sdckit.models.delta_disclosure import DeltaDisclosure
    from sdckit.models.differential_privacy import DifferentialPrivacy
    from sdckit.models.epsilon_m_anonymity import EpsilonMAnonymity
    from sdckit.models.kanonymity import KAnonymity
    from sdckit.models.ke_anonymity import KEAnonymity
    from sdckit.models.ldiversity import LDiversity
    from sdckit.models.lkc import LKCPrivacy
    from sdckit.models.multir import MultiRKAnonymity
    from sdckit.models.personalized import PersonalizedPrivacy
    from sdckit.models.presence import DeltaPresence, KMap
    from sdckit.models.profitability import ProfitabilityJournalist, ProfitabilityProsecutor
    from sdckit.models.profitability_no_attack import (
        ProfitabilityJournalistNoAttack,
        ProfitabilityProsecutorNoAttack,
    )
    from sdckit.models.risk_thresholds import (
        AverageRiskThreshold,
        PopulationUniquenessThreshold,
        SampleUniquenessThreshold,
    )
    from sdckit.models.tcloseness import TCloseness
    from sdckit.models.xy_privacy import XYPrivacy


@dataclass(frozen=True)
class ModelTraits:
    """What a caller may ask of a privacy model without building (or importing) it.

    ``sensitive``: it reads one or more sensitive attributes (the ones its parameters name),
    so the job must declare them. ``per_partition``: it can be checked on each partition of
    the records on its own (what a partitioning algorithm such as Mondrian checks, unless
    the model object says it is global, ``is_global``); the models that compare classes
    with each other or with a population cannot. ``differential_privacy``: a differential
    privacy model, whose guarantee only an algorithm whose traits say
    ``differential_privacy`` gives (:class:`sdckit.algorithms.registry.AlgorithmTraits`).
    ``hierarchy_when``: the parameter values under which the model takes a hierarchy of its
    sensitive attribute (parameter ``hierarchy``: an ARX file, a builder spec built from the
    data, or the attribute's own hierarchy); ``()`` for always, None for never.
    """

    sensitive: bool = False
    per_partition: bool = False
    differential_privacy: bool = False
    full_domain: bool = False
    hierarchy_when: tuple[tuple[str, str], ...] | None = None

    def reads_hierarchy(self, params: Mapping[str, Any]) -> bool:
        """Whether the model given the job-file ``params`` takes a hierarchy."""
        return self.hierarchy_when is not None and all(
            params.get(key) == value for key, value in self.hierarchy_when
        )

    def needs_data(self, params: Mapping[str, Any]) -> bool:
        """Whether building the model from its job-file ``params`` reads the input data: it
        takes a hierarchy that is not a file (a builder spec runs on the column's values,
        the attribute's own hierarchy may be built from them)."""
        return self.reads_hierarchy(params) and not isinstance(params.get("hierarchy"), str)


#: Job-file model name -> privacy model class (:class:`~sdckit.models.base.PrivacyModel`).
MODELS: Registry[ModelTraits] = Registry("privacy model", ModelTraits())

_K = ModelTraits(per_partition=True)  # on the classes' sizes alone
_S = ModelTraits(sensitive=True)
_SP = ModelTraits(sensitive=True, per_partition=True)
for _name, _target, _traits in (
    ("k_anonymity", "kanonymity:KAnonymity", _K),
    ("l_diversity", "ldiversity:LDiversity", _SP),
    (
        "t_closeness",
        "tcloseness:TCloseness",
        ModelTraits(
            sensitive=True, per_partition=True, hierarchy_when=(("distance", "hierarchical"),)
        ),
    ),
    ("delta_presence", "presence:DeltaPresence", None),
    ("k_map", "presence:KMap", None),
    ("lkc", "lkc:LKCPrivacy", _S),
    ("average_risk", "risk_thresholds:AverageRiskThreshold", None),
    ("sample_uniqueness", "risk_thresholds:SampleUniquenessThreshold", None),
    ("population_uniqueness", "risk_thresholds:PopulationUniquenessThreshold", None),
    (
        "differential_privacy",
        "differential_privacy:DifferentialPrivacy",
        ModelTraits(differential_privacy=True),
    ),
    ("ke_anonymity", "ke_anonymity:KEAnonymity", _SP),
    ("epsilon_m_anonymity", "epsilon_m_anonymity:EpsilonMAnonymity", _SP),
    (
        "personalized_privacy",
        "personalized:PersonalizedPrivacy",
        ModelTraits(sensitive=True, per_partition=True, hierarchy_when=()),
    ),
    ("multir_k_anonymity", "multir:MultiRKAnonymity", _SP),
    ("xy_privacy", "xy_privacy:XYPrivacy", _SP),
    ("alpha_k_anonymity", "alpha_k:AlphaKAnonymity", _SP),
    ("confidence_bounding", "confidence_bounding:ConfidenceBounding", _S),
    ("beta_likeness", "beta_likeness:BetaLikeness", _SP),
    ("delta_disclosure", "delta_disclosure:DeltaDisclosure", _SP),
    (
        "profitability_prosecutor",
        "profitability:ProfitabilityProsecutor",
        ModelTraits(full_domain=True),
    ),
    (
        "profitability_journalist",
        "profitability:ProfitabilityJournalist",
        ModelTraits(full_domain=True),
    ),
    # the no-attack variants judge class sizes alone: k-anonymity's and k-map's traits
    (
        "profitability_prosecutor_no_attack",
        "profitability_no_attack:ProfitabilityProsecutorNoAttack",
        _K,
    ),
    (
        "profitability_journalist_no_attack",
        "profitability_no_attack:ProfitabilityJournalistNoAttack",
        None,
    ),
):
    MODELS.add(_name, f"sdckit.models.{_target}", _traits)


def model_traits(model: Any) -> ModelTraits:
    """The traits of a model object by its ``spec_name`` (the default traits for a model
    class of the caller's own that is not registered)."""
    name = getattr(model, "spec_name", None)
    return (
        MODELS.traits(name) if isinstance(name, str) and name in MODELS else MODELS.default_traits
    )


#: Public name -> the module of :mod:`sdckit.models` that defines it: every registered model
#: class (:data:`MODELS`'s targets) and the protocol's own names.
_CLASSES = {name: str(MODELS.entry(name).target).partition(":") for name in MODELS}
_MODULES = {
    **{attribute: module for module, _, attribute in _CLASSES.values()},
    "ModelResult": ".base",
    "PrivacyModel": ".base",
    "PrivacyTemplate": ".confidence_bounding",
}

__all__ = [
    "AlphaKAnonymity",
    "AverageRiskThreshold",
    "BetaLikeness",
    "CheckResult",
    "ConfidenceBounding",
    "DeltaDisclosure",
    "DeltaPresence",
    "DifferentialPrivacy",
    "EpsilonMAnonymity",
    "KAnonymity",
    "KEAnonymity",
    "KMap",
    "LDiversity",
    "LKCPrivacy",
    "ModelResult",
    "MultiRKAnonymity",
    "PersonalizedPrivacy",
    "PopulationUniquenessThreshold",
    "PrivacyModel",
    "PrivacyTemplate",
    "ProfitabilityJournalist",
    "ProfitabilityJournalistNoAttack",
    "ProfitabilityProsecutor",
    "ProfitabilityProsecutorNoAttack",
    "SampleUniquenessThreshold",
    "TCloseness",
    "XYPrivacy",
    "check",
]


__getattr__, __dir__ = lazy_exports(__name__, _MODULES)


def model_class(name: str) -> type[PrivacyModel]:
    """The privacy model class a job file names (``k_anonymity`` -> :class:`KAnonymity`),
    :meth:`MODELS.load <sdckit.core.registry.Registry.load>`; ``KeyError`` for a name that
    is none."""
    return MODELS.load(name)  # type: ignore[no-any-return]

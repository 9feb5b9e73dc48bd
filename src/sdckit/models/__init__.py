"""Privacy models as predicates over a frequency set (see :mod:`sdckit.models.base`).

The classes are loaded on first use (``from sdckit.models import KAnonymity`` imports the
k-anonymity module only): a job naming one model does not pay for the import of twenty.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sdckit._lazy import lazy_exports

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
    from sdckit.models.risk_thresholds import AverageRiskThreshold, SampleUniquenessThreshold
    from sdckit.models.tcloseness import TCloseness
    from sdckit.models.xy_privacy import XYPrivacy

#: Public name -> the module of :mod:`sdckit.models` that defines it.
_MODULES = {
    "AlphaKAnonymity": ".alpha_k",
    "ModelResult": ".base",
    "PrivacyModel": ".base",
    "BetaLikeness": ".beta_likeness",
    "ConfidenceBounding": ".confidence_bounding",
    "PrivacyTemplate": ".confidence_bounding",
    "DeltaDisclosure": ".delta_disclosure",
    "DifferentialPrivacy": ".differential_privacy",
    "EpsilonMAnonymity": ".epsilon_m_anonymity",
    "KAnonymity": ".kanonymity",
    "KEAnonymity": ".ke_anonymity",
    "LDiversity": ".ldiversity",
    "LKCPrivacy": ".lkc",
    "MultiRKAnonymity": ".multir",
    "PersonalizedPrivacy": ".personalized",
    "DeltaPresence": ".presence",
    "KMap": ".presence",
    "AverageRiskThreshold": ".risk_thresholds",
    "SampleUniquenessThreshold": ".risk_thresholds",
    "TCloseness": ".tcloseness",
    "XYPrivacy": ".xy_privacy",
}

#: A job file's model name (the class's ``spec_name``) -> the class's public name; a test
#: checks that each class declares the name listed here.
JOB_FILE_NAMES = {
    "k_anonymity": "KAnonymity",
    "l_diversity": "LDiversity",
    "t_closeness": "TCloseness",
    "delta_presence": "DeltaPresence",
    "k_map": "KMap",
    "lkc": "LKCPrivacy",
    "average_risk": "AverageRiskThreshold",
    "sample_uniqueness": "SampleUniquenessThreshold",
    "differential_privacy": "DifferentialPrivacy",
    "ke_anonymity": "KEAnonymity",
    "epsilon_m_anonymity": "EpsilonMAnonymity",
    "personalized_privacy": "PersonalizedPrivacy",
    "multir_k_anonymity": "MultiRKAnonymity",
    "xy_privacy": "XYPrivacy",
    "alpha_k_anonymity": "AlphaKAnonymity",
    "confidence_bounding": "ConfidenceBounding",
    "beta_likeness": "BetaLikeness",
    "delta_disclosure": "DeltaDisclosure",
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
    "PrivacyModel",
    "PrivacyTemplate",
    "SampleUniquenessThreshold",
    "TCloseness",
    "XYPrivacy",
    "check",
]


__getattr__, __dir__ = lazy_exports(__name__, _MODULES)


def model_class(name: str) -> type[PrivacyModel]:
    """The privacy model class a job file names (``k_anonymity`` -> :class:`KAnonymity`);
    ``KeyError`` for a name that is none (see :data:`JOB_FILE_NAMES`)."""
    return __getattr__(JOB_FILE_NAMES[name])  # type: ignore[no-any-return]

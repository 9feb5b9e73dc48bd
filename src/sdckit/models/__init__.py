"""Privacy models as predicates over a frequency set (see :mod:`sdckit.models.base`)."""

from sdckit.models.alpha_k import AlphaKAnonymity
from sdckit.models.base import ModelResult, PrivacyModel
from sdckit.models.beta_likeness import BetaLikeness
from sdckit.models.check import CheckResult, check
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

__all__ = [
    "AlphaKAnonymity",
    "BetaLikeness",
    "ConfidenceBounding",
    "DeltaDisclosure",
    "PrivacyTemplate",
    "DifferentialPrivacy",
    "EpsilonMAnonymity",
    "KEAnonymity",
    "MultiRKAnonymity",
    "PersonalizedPrivacy",
    "XYPrivacy",
    "AverageRiskThreshold",
    "CheckResult",
    "DeltaPresence",
    "KAnonymity",
    "KMap",
    "LDiversity",
    "LKCPrivacy",
    "ModelResult",
    "PrivacyModel",
    "SampleUniquenessThreshold",
    "TCloseness",
    "check",
]

"""Privacy models as predicates over a frequency set (see :mod:`sdckit.models.base`)."""

from sdckit.models.base import ModelResult, PrivacyModel
from sdckit.models.check import CheckResult, check
from sdckit.models.differential_privacy import DifferentialPrivacy
from sdckit.models.kanonymity import KAnonymity
from sdckit.models.ldiversity import LDiversity
from sdckit.models.lkc import LKCPrivacy
from sdckit.models.presence import DeltaPresence, KMap
from sdckit.models.risk_thresholds import AverageRiskThreshold, SampleUniquenessThreshold
from sdckit.models.tcloseness import TCloseness

__all__ = [
    "DifferentialPrivacy",
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

"""sdckit: statistical disclosure control end to end.

Protect microdata (privacy models, generalization and suppression, perturbative and
non-perturbative masking), measure disclosure risk and information loss, from Python or the
``sdckit`` command line.
"""

from __future__ import annotations

__version__ = "0.1.0"

from sdckit.algorithms.anonymize import AnonymizationResult, anonymize
from sdckit.core.frequency import FrequencySet, frequency_set
from sdckit.core.io import read_table, write_table
from sdckit.core.schema import Attribute, DataType, Role, Schema
from sdckit.errors import SdcError, SdcInputError
from sdckit.jobs.evaluate import evaluate
from sdckit.risk.analyze import analyze

__all__ = [
    "AnonymizationResult",
    "Attribute",
    "DataType",
    "FrequencySet",
    "Role",
    "Schema",
    "SdcError",
    "SdcInputError",
    "__version__",
    "analyze",
    "anonymize",
    "evaluate",
    "frequency_set",
    "read_table",
    "write_table",
]

"""sdckit: statistical disclosure control end to end.

Protect microdata (privacy models, generalization and suppression, perturbative and
non-perturbative masking), measure disclosure risk and information loss, from Python or the
``sdckit`` command line.
"""

from __future__ import annotations

from sdckit._lazy import lazy_exports
from sdckit._version import __version__
from sdckit.core.schema import Attribute, DataType, Role, Schema
from sdckit.errors import SdcError, SdcInputError

#: Public names imported on first use, so that ``import sdckit`` (and every CLI command,
#: ``--help`` included) starts without numpy, pandas or scipy: name -> module.
_LAZY = {
    "FrequencySet": "sdckit.core.frequency",
    "frequency_set": "sdckit.core.frequency",
    "read_table": "sdckit.core.io",
    "write_table": "sdckit.core.io",
    "AnonymizationResult": "sdckit.algorithms.anonymize",
    "anonymize": "sdckit.algorithms.anonymize",
    "evaluate": "sdckit.evaluation.protected_file",
    "analyze": "sdckit.risk.analyze",
    "synthesize": "sdckit.synthesis.api",
    "SynthesisResult": "sdckit.synthesis.api",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)


__all__ = [
    "AnonymizationResult",
    "Attribute",
    "DataType",
    "FrequencySet",
    "Role",
    "Schema",
    "SdcError",
    "SdcInputError",
    "SynthesisResult",
    "__version__",
    "analyze",
    "anonymize",
    "evaluate",
    "frequency_set",
    "read_table",
    "synthesize",
    "write_table",
]

"""Deprecated: the masking methods as spec objects and their pipeline moved.

Each method's class lives beside its masking function (``Noise`` in
:mod:`sdckit.masking.noise_addition`, ``Microaggregation`` in
:mod:`sdckit.masking.microaggregation`, ...), the base class in :mod:`sdckit.masking.spec`,
the pipeline and the registry of method names in :mod:`sdckit.masking.pipeline`; all of them
are exported by :mod:`sdckit.masking`. A name read from this module still works and emits a
``DeprecationWarning`` naming its new home.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

from sdckit.masking import _EXPORTS

#: the names this module held -> the module holding them now
_MOVED: dict[str, str] = {
    **{
        name: "sdckit.masking" + module
        for name, module in _EXPORTS.items()
        if module not in (".base",) and name[:1].isupper()
    },
    **dict.fromkeys(
        ("METHODS", "method_names", "step_seeds", "unchanged_error"), "sdckit.masking.pipeline"
    ),
    **dict.fromkeys(
        ("LOCAL_AND_SPARK", "MaskingTraits", "Rng", "Positive", "Probability", "Count"),
        "sdckit.masking.spec",
    ),
}

__all__: list[str] = []


def __getattr__(name: str) -> Any:
    module = _MOVED.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(
        f"sdckit.masking.methods is deprecated: import {name} from {module}",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted(_MOVED)

"""Lazily exported names of a package (PEP 562): the one mechanism behind ``sdckit``,
``sdckit.models``, ``sdckit.masking`` and ``sdckit.tables`` loading a public name's module on
first use, so that importing the package (and starting a command) stays cheap."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module-level ``__getattr__`` and ``__dir__`` of ``package``.

    ``exports`` maps each public name to the module defining it, absolute
    (``"sdckit.core.io"``) or relative to the package (``".kanonymity"``). A name is imported
    on first access and then kept in the package's namespace; any other name raises
    ``AttributeError`` as a missing module attribute does.
    """

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *exports})

    return __getattr__, __dir__

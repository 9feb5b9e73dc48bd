"""The version of sdckit, in the lowest layer: the package (``sdckit.__version__``) and the
report writer read it from here, so no module imports the public facade ``sdckit`` for it."""

from __future__ import annotations

__version__ = "0.1.0"

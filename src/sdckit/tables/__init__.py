"""Tabular data protection: tables from microdata or cells, sensitivity rules, secondary
cell suppression, audit, controlled rounding, controlled tabular adjustment and the cell key
method (see each module)."""

from sdckit.tables.dimension import TOTAL, Dimension
from sdckit.tables.rules import (
    RULES,
    DominanceRule,
    FrequencyRule,
    PPercentRule,
    PQRule,
    Primary,
    SensitivityRule,
    ZeroRule,
    primary_cells,
)
from sdckit.tables.table import Table

__all__ = [
    "RULES",
    "TOTAL",
    "Dimension",
    "DominanceRule",
    "FrequencyRule",
    "PPercentRule",
    "PQRule",
    "Primary",
    "SensitivityRule",
    "Table",
    "ZeroRule",
    "primary_cells",
]

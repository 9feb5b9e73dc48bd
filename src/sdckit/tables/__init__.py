"""Tabular data protection: tables from microdata or cells, sensitivity rules, secondary
cell suppression, audit, controlled rounding, controlled tabular adjustment, the cell key
method and linked tables protected consistently (see each module)."""

from sdckit._lazy import lazy_exports
from sdckit.tables.dimension import TOTAL, Dimension
from sdckit.tables.rules import (
    RULES,
    DominanceRule,
    FrequencyRule,
    PPercentRule,
    PQRule,
    Primary,
    RequestRule,
    SensitivityRule,
    ZeroRule,
    primary_cells,
)
from sdckit.tables.table import Table

_LAZY = {
    "Audit": "sdckit.tables.audit",
    "audit": "sdckit.tables.audit",
    "audit_cells": "sdckit.tables.audit",
    "Suppression": "sdckit.tables.suppression",
    "suppress": "sdckit.tables.suppression",
    "Rounding": "sdckit.tables.rounding",
    "controlled_rounding": "sdckit.tables.rounding",
    "Adjustment": "sdckit.tables.adjustment",
    "controlled_adjustment": "sdckit.tables.adjustment",
    "CellKeyResult": "sdckit.tables.cell_key",
    "PTable": "sdckit.tables.cell_key",
    "cell_key": "sdckit.tables.cell_key",
    "cell_keys": "sdckit.tables.cell_key",
    "read_ptable": "sdckit.tables.cell_key",
    "record_keys": "sdckit.tables.cell_key",
    "Protection": "sdckit.tables.protect",
    "protect": "sdckit.tables.protect",
    "LinkedProtection": "sdckit.tables.linked",
    "LinkedTables": "sdckit.tables.linked",
    "protect_linked": "sdckit.tables.linked",
}


#: The solvers' modules (scipy) are imported when first used.
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)


__all__ = [
    *_LAZY,
    "RULES",
    "TOTAL",
    "Dimension",
    "DominanceRule",
    "FrequencyRule",
    "PPercentRule",
    "PQRule",
    "Primary",
    "RequestRule",
    "SensitivityRule",
    "Table",
    "ZeroRule",
    "primary_cells",
]

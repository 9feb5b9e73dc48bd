"""A generalized release: what every anonymization algorithm returns to :func:`sdckit.anonymize`.

It sits in ``core`` because the utility measures (:mod:`sdckit.utility.generalization`) and
the verification read it as well as the algorithms that write it.

The algorithms (optimal lattice search, Mondrian, Datafly, top-down specialization, Anatomy)
differ in *how* they generalize, but :func:`sdckit.anonymize` treats their outputs alike: it
drops or pseudonymizes direct identifiers, computes the metrics from the per-record domain
shares, verifies the released rows independently and writes nothing unless that check passes.

An algorithm therefore returns an :class:`AlgorithmOutput`:

* ``data`` -- the released rows, one per input record, in input order (same index). Quasi-
  identifiers hold generalized labels (hierarchy labels such as ``"[20, 30)"`` or ``"476**"``,
  Mondrian ranges, ...). Records that were suppressed keep their row but every quasi-identifier
  is ``"*"`` (ARX's convention). Non-QI columns are unchanged.
* ``share`` -- per quasi-identifier, a float array with one entry per record: the share of the
  attribute's domain that the record's released value covers, in ``[0, 1]``. For a hierarchy
  value this is ``leaves under it / |D_i|``; for a numeric range ``[a, b]`` it is
  ``(b - a) / (max - min)`` of the attribute (0 for a single point); ``1`` for ``"*"`` and
  for suppressed records. ARX's generalized loss ("loss") is computed from it (Iyengar 2002;
  ARX ``MetricMDNMLoss``); see :mod:`sdckit.utility.generalization`.
* ``suppressed`` -- boolean per record.
* ``transformation`` -- attribute -> generalization level for full-domain algorithms
  (optimal, Datafly), ``None`` for the others (their generalization differs per record).
* ``nodes_checked`` -- transformations or partitions evaluated (search effort).
* ``details`` -- JSON-ready facts the report shows (partitions, specializations, the solution
  space of a lattice search, ...).
* ``extra_tables`` -- additional released tables by name (Anatomy's sensitive table).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from sdckit.core.frequency import FrequencySet

#: The label of a suppressed quasi-identifier value.
SUPPRESSED = "*"


@dataclass
class AlgorithmOutput:
    """The released rows of an anonymization algorithm plus what the report needs."""

    data: pd.DataFrame
    share: dict[str, np.ndarray]
    suppressed: np.ndarray
    transformation: dict[str, int] | None = None
    nodes_checked: int = 0
    details: dict[str, Any] = field(default_factory=dict)
    extra_tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    #: The input's frequency set on the quasi-identifiers, ungeneralized, when the algorithm
    #: counted every input record (``optimal``): the risk before the release is read from it
    #: instead of encoding the input again.
    input_classes: FrequencySet | None = None

    @property
    def suppressed_records(self) -> int:
        """Number of suppressed records."""
        return int(np.count_nonzero(self.suppressed))

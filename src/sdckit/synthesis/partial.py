"""Partially synthetic data: only the records at risk get synthetic values.

Little (1993), "Statistical analysis of masked data", *J. Official Statistics* 9(2), and
Reiter (2003), "Inference for partially synthetic, public use microdata sets", *Survey
Methodology* 29(2): only some values are replaced -- those of selected attributes, and here
only in the records at risk -- and the rest of the file stays original. The records at risk
are those whose combination of quasi-identifiers is shared by fewer than ``k`` records of the
file (``k = 2``: the sample uniques of ``sdckit analyze``), from the one frequency-set engine
(:func:`sdckit.core.frequency.frequency_set`), or an explicit boolean mask. Their values of
``attributes`` (default: the quasi-identifiers) are drawn from the sequential conditional
models (:class:`~sdckit.synthesis.sequential.Sequential`, CART by default) fitted on the whole
file, given the record's own values of the other attributes; attributes are visited in the
order given. Inference from several copies uses Reiter's (2003) rule
(:func:`sdckit.synthesis.combining.combine` with ``partial=True``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from sdckit.core.params import column_names, integer_at_least
from sdckit.errors import DataError, ParameterError, short_repr
from sdckit.synthesis.base import Synthesizer
from sdckit.synthesis.sequential import Sequential

__all__ = ["Partial", "records_at_risk"]


def records_at_risk(data: pd.DataFrame, quasi_identifiers: Sequence[str], k: int = 2) -> np.ndarray:
    """Boolean per record: its quasi-identifier class has fewer than ``k`` records."""
    from sdckit.core.frequency import frequency_set

    fs = frequency_set(data, list(quasi_identifiers))
    return fs.counts[fs.row_class()] < k


class Partial(Synthesizer):
    """Partial synthesis of the records at risk (module docstring).

    Parameters
    ----------
    quasi_identifiers : list of str, optional
        The key attributes that define the classes (a job: its quasi-identifying
        attributes).
    attributes : list of str, optional
        The attributes synthesized in the records at risk (default: the quasi-identifiers).
    k : int
        Records in classes smaller than ``k`` are at risk (default 2, the sample uniques).
    records : list of bool, optional
        An explicit mask of the records to synthesize instead (one entry per record).
    method : str
        As :class:`~sdckit.synthesis.sequential.Sequential`'s ``method`` (default ``cart``).
    min_leaf : int
        As :class:`~sdckit.synthesis.sequential.Sequential`'s (default 5).
    smoothing : bool
        As :class:`~sdckit.synthesis.sequential.Sequential`'s (default False).
    """

    name = "partial"

    def __init__(
        self,
        quasi_identifiers: Sequence[str] | None = None,
        *,
        attributes: Sequence[str] | None = None,
        k: int = 2,
        records: Sequence[bool] | np.ndarray | None = None,
        method: str = "cart",
        min_leaf: int = 5,
        smoothing: bool = False,
    ) -> None:
        super().__init__()
        integer_at_least(k, 2, "partial", "k")
        if quasi_identifiers is None and attributes is None:
            raise ParameterError(
                "partial: name the quasi_identifiers (records at risk are those in small "
                "classes over them) or the attributes to synthesize"
            )
        if quasi_identifiers is None and records is None:
            raise ParameterError(
                "partial: give quasi_identifiers (to find the records at risk) or records "
                "(a boolean mask of the records to synthesize)"
            )
        self.quasi_identifiers = column_names(
            quasi_identifiers or [], "partial", "quasi_identifiers"
        )
        self.attributes = (
            column_names(attributes, "partial", "attributes")
            if attributes is not None
            else list(self.quasi_identifiers)
        )
        self.k = int(k)
        self.records = None if records is None else np.asarray(records)
        if self.records is not None and (self.records.ndim != 1 or self.records.dtype.kind != "b"):
            raise ParameterError(
                "partial: records must be a list of true/false, one per record (true: "
                f"synthesize it), got {short_repr(records)}"
            )
        self._inner = Sequential(
            method=method, visit_sequence=self.attributes, min_leaf=min_leaf, smoothing=smoothing
        )
        self._data: pd.DataFrame | None = None
        self._mask: np.ndarray | None = None

    def _fit(self, data: pd.DataFrame, rng: np.random.Generator) -> None:
        for c in [*self.quasi_identifiers, *self.attributes]:
            if c not in data.columns:
                raise DataError(
                    f"partial: column {c!r} is not in the data (columns: "
                    f"{', '.join(map(str, data.columns))})"
                )
        if self.records is not None:
            if self.records.dtype != bool or self.records.shape != (len(data),):
                raise ParameterError(
                    f"partial: records must be a boolean mask with one entry per record "
                    f"({len(data):,}), got shape {self.records.shape} of {self.records.dtype}"
                )
            mask = self.records.copy()
        else:
            mask = records_at_risk(data, self.quasi_identifiers, self.k)
        self._data = data.reset_index(drop=True)
        self._mask = mask
        self._inner.fit(self._data, seed=rng)
        self.details = {
            "quasi_identifiers": self.quasi_identifiers,
            "attributes": self.attributes,
            "k": self.k if self.records is None else None,
            "records_at_risk": int(mask.sum()),
            "records_synthesized_share": float(mask.mean()),
            "models": self._inner.details["models"],
        }

    def _sample(self, n: int, rng: np.random.Generator) -> pd.DataFrame:
        assert self._data is not None and self._mask is not None
        if n != len(self._data):
            raise ParameterError(
                f"partial: partially synthetic data has one record per original record "
                f"({len(self._data):,}), not {n:,}"
            )
        out = self._data.copy()
        if self._mask.any():
            drawn = self._inner._sample(n, rng)
            rows = np.flatnonzero(self._mask)
            for c in self.attributes:
                values: Any = drawn[c].to_numpy()
                col = out[c].astype(object) if values.dtype == object else out[c]
                col.iloc[rows] = values[rows]
                out[c] = col
        return out

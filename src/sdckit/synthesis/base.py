"""The one interface of every synthesizer: fit on a DataFrame, sample ``n`` rows.

A :class:`Synthesizer` is a fitted object in the style of scikit-learn's estimators: its
constructor takes the method's parameters (validated there), :meth:`Synthesizer.fit` learns
from the original data and returns the synthesizer, :meth:`Synthesizer.sample` draws synthetic
records. Randomness always comes from an explicit ``numpy.random.Generator`` (or a seed), so
the same seed gives the same bytes; a differentially private synthesizer charges its whole
budget to an :class:`~sdckit.dp.accountant.Accountant` in :meth:`fit` (sampling from the fitted
model is post-processing and costs nothing).

Column kinds (:func:`column_kinds`) are decided once, the same way for every method: a column
is ``numeric`` when its dtype is numeric (integers and floats; a job's CSV input is typed as
the mask job types it), otherwise ``categorical``. Integer columns stay integers in the
synthetic data.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from sdckit.core.encoding import is_numeric
from sdckit.errors import DataError, ParameterError

__all__ = [
    "ColumnKind",
    "Synthesizer",
    "as_generator",
    "column_kinds",
    "restore_dtypes",
]

ColumnKind = Literal["numeric", "categorical"]


def as_generator(seed: int | np.random.Generator | None) -> np.random.Generator:
    """The generator a seed stands for (a Generator is used as it is)."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
        raise ParameterError(f"seed must be a non-negative integer, got {seed!r}")
    if seed is not None and seed < 0:
        raise ParameterError(f"seed must be a non-negative integer, got {seed!r}")
    return np.random.default_rng(seed)


def column_kinds(
    data: pd.DataFrame, categorical: Sequence[str] = (), numeric: Sequence[str] = ()
) -> dict[str, ColumnKind]:
    """``numeric`` or ``categorical`` per column (dtype-based; ``categorical``/``numeric`` force
    a kind). A forced numeric column must hold numbers (DataError naming the column)."""
    kinds: dict[str, ColumnKind] = {}
    for c in data.columns:
        s = data[c]
        is_num = is_numeric(s)
        if c in categorical:
            kinds[c] = "categorical"
        elif c in numeric:
            if not is_num:
                raise DataError(
                    f"column {c!r} is declared numeric but holds text (e.g. "
                    f"{s.dropna().iloc[0]!r}); convert it or declare it categorical"
                )
            kinds[c] = "numeric"
        else:
            kinds[c] = "numeric" if is_num else "categorical"
    return kinds


def restore_dtypes(synthetic: pd.DataFrame, original: pd.DataFrame) -> pd.DataFrame:
    """The synthetic columns in the original's order and dtypes (integers rounded back)."""
    out = {}
    for c in original.columns:
        s = synthetic[c]
        dtype = original[c].dtype
        if pd.api.types.is_integer_dtype(dtype):
            values = np.round(pd.to_numeric(s, errors="coerce").to_numpy(dtype=np.float64))
            if np.isnan(values).any():
                out[c] = pd.array(
                    np.where(np.isnan(values), 0, values).astype(np.int64), dtype="Int64"
                )
                out[c][np.isnan(values)] = pd.NA
            else:
                out[c] = values.astype(dtype if isinstance(dtype, np.dtype) else np.int64)
        elif pd.api.types.is_float_dtype(dtype):
            out[c] = pd.to_numeric(s, errors="coerce").to_numpy(dtype=np.float64)
        else:
            out[c] = s.to_numpy(dtype=object)
    return pd.DataFrame(out, columns=original.columns)


class Synthesizer(ABC):
    """Fit on a DataFrame, then sample synthetic rows.

    Subclasses set :attr:`name` (the job file's ``method:``), implement :meth:`_fit` and
    :meth:`_sample`, and may fill :attr:`details` (JSON-ready facts for the report),
    :attr:`steward_details` (facts about the original records that no guarantee covers) and
    :attr:`privacy` (``{"epsilon", "delta", "rho"}`` for a DP method, spent in :meth:`fit`).
    A DP method's :attr:`details` hold only what its guarantee covers (declared, noisy or
    parameter values); a method without a guarantee covers nothing, so its :attr:`details`
    are evaluation for the steward too (:meth:`sdckit.synthesis.api.SynthesisResult.to_dict`).
    """

    #: the job file's ``method:``; an instance may name its variant (``cart``/``parametric``)
    name: str = "synthesizer"

    def __init__(self) -> None:
        self._original: pd.DataFrame | None = None
        self.details: dict[str, Any] = {}
        self.privacy: dict[str, float] | None = None
        #: facts computed from the original records that no privacy guarantee covers (counts
        #: of records a DP method clamped or left out...): for the data steward, not published
        self.steward_details: dict[str, Any] = {}
        #: records of the data the synthesizer was fitted on
        self.n_original = 0

    @property
    def fitted(self) -> bool:
        """Whether :meth:`fit` has run."""
        return self._original is not None

    @property
    def columns(self) -> list[str]:
        """The columns the synthesizer was fitted on."""
        self._require_fitted()
        assert self._original is not None
        return list(self._original.columns)

    def _require_fitted(self) -> None:
        if self._original is None:
            raise ParameterError(f"{self.name}: call fit(data) before sample()")

    def fit(self, data: pd.DataFrame, *, seed: int | np.random.Generator | None = None):
        """Learn from ``data`` (never modified); returns the synthesizer."""
        if not isinstance(data, pd.DataFrame):
            raise DataError(f"{self.name}: fit needs a pandas DataFrame, got {type(data).__name__}")
        if len(data) == 0 or data.shape[1] == 0:
            raise DataError(f"{self.name}: the data has no records or no columns")
        self._original = data.iloc[:0].copy()
        self.n_original = len(data)
        try:
            self._fit(data, as_generator(seed))
        except BaseException:
            self._original = None  # a failed fit leaves the synthesizer unfitted
            raise
        return self

    def sample(
        self, n: int | None = None, *, seed: int | np.random.Generator | None = None
    ) -> pd.DataFrame:
        """``n`` synthetic records (default: as many as the original)."""
        self._require_fitted()
        count = self.n_original if n is None else n
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 1:
            raise ParameterError(f"{self.name}: n must be a positive integer, got {n!r}")
        assert self._original is not None
        out = self._sample(int(count), as_generator(seed))
        return restore_dtypes(out, self._original).reset_index(drop=True)

    def default_records(self, total: int, holdout: float) -> int:
        """Records per copy when the caller gives none: the size of the whole input,
        ``total`` (``holdout``: the share held out of the fit), as synthpop's ``syn()``."""
        return int(total)

    @abstractmethod
    def _fit(self, data: pd.DataFrame, rng: np.random.Generator) -> None:
        """Fit on ``data``."""

    @abstractmethod
    def _sample(self, n: int, rng: np.random.Generator) -> pd.DataFrame:
        """``n`` synthetic records, columns as fitted (dtypes restored by :meth:`sample`)."""

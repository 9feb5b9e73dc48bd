"""What every masking method returns, and the checks they share.

Publishing the method and its parameters is the transparency principle (Domingo-Ferrer & Torra;
Torra's "transparency" attacks assume it), so every method returns, beside the masked data,
a small JSON-serialisable record of what was done.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from sdckit.core.encoding import is_numeric
from sdckit.errors import DataError


@dataclass
class MaskResult:
    """Masked data plus the record of what was done.

    ``data`` is a new DataFrame (the input is never modified) with the same rows and columns
    as the input; ``method`` names the method; ``parameters`` are the effective parameters
    (defaults filled in); ``details`` holds method-specific facts meant to be published
    (group sizes, transition matrices, sampling fraction, ...). Everything in ``parameters``
    and ``details`` is JSON-serialisable (lists, numbers, strings, dicts).
    """

    data: pd.DataFrame
    method: str
    parameters: dict[str, Any] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)

    def record(self) -> dict[str, Any]:
        """The publishable record: method, parameters and details."""
        return {"method": self.method, "parameters": self.parameters, "details": self.details}


def accepts_series(fn: Callable[..., MaskResult]) -> Callable[..., MaskResult]:
    """Let a masking function take a pandas Series as a one-column DataFrame (named as the
    Series, ``value`` if unnamed); the result's ``data`` is a DataFrame as always. Anything
    else but a DataFrame is a DataError naming the function."""

    @functools.wraps(fn)
    def wrapper(data: Any, *args: Any, **kwargs: Any) -> MaskResult:
        if isinstance(data, pd.Series):
            data = data.to_frame(name=data.name if data.name is not None else "value")
        elif not isinstance(data, pd.DataFrame):
            raise DataError(
                f"{fn.__name__}: data must be a pandas DataFrame or Series, got "
                f"{type(data).__name__}"
            )
        return fn(data, *args, **kwargs)

    return wrapper


def check_columns(data: pd.DataFrame, columns: Sequence[str] | str | None) -> list[str]:
    """Normalise ``columns`` to a list and check they exist in ``data`` (DataError otherwise)."""
    return check_column_names(list(map(str, data.columns)), columns)


def check_column_names(names: Sequence[str], columns: Sequence[str] | str | None) -> list[str]:
    """``columns`` as a list (all of ``names`` for None), every one among ``names``: the
    table's columns, read from a pandas table or a Spark frame (DataError naming the missing
    ones and the available ones otherwise)."""
    if columns is None:
        return list(names)
    cols = [columns] if isinstance(columns, str) else list(columns)
    if not cols:
        raise DataError("no columns given; name at least one column to mask")
    missing = [c for c in cols if c not in names]
    if missing:
        raise DataError(
            f"column(s) {', '.join(map(repr, missing))} not found; available columns: "
            f"{', '.join(names)}"
        )
    return cols


def numeric_matrix(data: pd.DataFrame, columns: Sequence[str], method: str) -> np.ndarray:
    """The columns as a float64 matrix (n, p); DataError naming the first non-numeric column/value.

    Missing values (NaN) are kept as NaN; callers decide how their method treats them. An
    infinite value is refused (DataError naming the column, row and value): no masking method
    can perturb or summarise it, and passing it through would release it unprotected.
    """
    out = np.empty((len(data), len(columns)), dtype=np.float64)
    for j, c in enumerate(columns):
        s = data[c]
        if is_numeric(s):
            out[:, j] = s.to_numpy(dtype=np.float64, na_value=np.nan)
            continue
        conv = pd.to_numeric(s, errors="coerce")
        bad = conv.isna() & s.notna() & (s.astype(str).str.strip() != "")
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise DataError(
                f"{method} needs numeric columns, but column {c!r} has the non-numeric value "
                f"{s.iloc[row]!r} (row {row + 1}); choose numeric columns or recode this one first"
            )
        out[:, j] = conv.to_numpy(dtype=np.float64, na_value=np.nan)
    infinite = np.isinf(out)
    if infinite.any():
        row, j = (int(v[0]) for v in np.nonzero(infinite))
        raise DataError(
            f"{method} needs finite numbers, but column {columns[j]!r} has "
            f"'{data[columns[j]].iloc[row]}' (row {row + 1}; {int(infinite.sum())} infinite "
            "value(s) in all); remove or recode the value (e.g. top-code it) and mask again"
        )
    return out


def standardize(
    x: np.ndarray, columns: Sequence[str], method: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Z-scores of the columns of ``x`` (sample standard deviation, ddof=1).

    Returns ``(z, mean, sd)``. A constant column cannot be standardized, nor one whose standard
    deviation overflows double precision (values near 1e300): DataError naming it.
    """
    mean = np.nanmean(x, axis=0)
    with np.errstate(over="ignore"):  # an overflowing spread is refused below, by name
        sd = np.nanstd(x, axis=0, ddof=1)
    bad = ~(sd > 0)
    if bad.any():
        name = columns[int(np.flatnonzero(bad)[0])]
        raise DataError(
            f"{method}: column {name!r} has zero variance (it is constant) and cannot be "
            f"standardized; leave it out of the columns"
        )
    huge = ~np.isfinite(sd)
    if huge.any():
        j = int(np.flatnonzero(huge)[0])
        raise DataError(
            f"{method}: column {columns[j]!r} has values so large that their spread overflows "
            f"double precision (largest |value| {np.nanmax(np.abs(x[:, j])):.3g}); rescale "
            "the column (e.g. divide it by a power of ten) or top-code it first"
        )
    return (x - mean) / sd, mean, sd


def integer_like(original: pd.Series, values: np.ndarray) -> Any:
    """``values`` (float, NaN = missing) in the integer type of ``original`` when possible.

    If ``original`` has an integer dtype (numpy or pandas nullable) and every non-missing value
    is a whole number, the result is that dtype (nullable ``Int64`` when values are missing,
    since numpy integers cannot hold them); otherwise ``values`` unchanged (float64). Masking
    methods that only move or round values (swapping, rounding, coding) keep integers integer.
    """
    v = np.asarray(values, dtype=np.float64)
    if not pd.api.types.is_integer_dtype(original.dtype) or isinstance(
        original.dtype, pd.CategoricalDtype
    ):
        return v
    missing = np.isnan(v)
    ok = v[~missing]
    if not np.all(ok == np.round(ok)) or (ok.size and np.abs(ok).max() >= 2**63):
        return v
    if not missing.any():
        return v.astype(
            original.dtype.numpy_dtype if hasattr(original.dtype, "numpy_dtype") else original.dtype
        )
    return pd.arrays.IntegerArray(np.where(missing, 0, v).astype(np.int64), missing)

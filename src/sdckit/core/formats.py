"""SPSS, Stata and SAS microdata files (the ``formats`` extra: pyreadstat, through ReadStat).

Reading (:func:`read_stat_file`): value labels become the values the user sees (a code without
a label is kept as its number, written as text, e.g. ``"3"``); SPSS user-defined missing values
(discrete codes and ranges) become missing values, as do Stata's and SAS's extended missing
values; the file's metadata -- variable labels, value labels, missing ranges, which columns
were numbers -- is kept in a :class:`FileMeta` (``DataFrame.attrs["file_meta"]``), so that the
release can be written back with it.

An mu-Argus/tau-Argus ``<CODELIST>`` is read the same way
(:func:`sdckit.core.argus.apply_codelists`: the labels shown, the codes kept as the value
labels of a :class:`FileMeta`), so its release is written back by the same rules.

Writing (:func:`write_stat_file`), the convention of haven's ``labelled`` vectors and of
sdcMicro's releases: a column whose values are all labels of the input's value labels is
written as its original codes with the labels of the categories that remain; a generalized
or recoded column (``20-39``, ``*``) of a labelled or numeric input column is written as
labelled numeric codes -- the original code for a value that is still an original label, new
codes after the largest original code (``1..n`` for a column that had no labels) for the new
values, in natural order (``5-9`` before ``10-14``) -- with the values as their labels; a
column of numbers stays numeric; other text is a string variable (so is a string variable
whose values had labels: written as its labels). Missing values are written
as system missing (SPSS's user-missing declarations are written back with the columns they
belong to); variable labels are kept; a weight or any other numeric column is written as it
is. SPSS portable (``.por``) and SAS transport (``.xpt``) files hold no value labels: there,
labelled columns are written as their labels (strings). pyreadstat cannot write
``.sas7bdat``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sdckit.errors import DataError

#: The suffixes read through pyreadstat, and its reader for each.
READERS = {
    ".sav": "read_sav",
    ".zsav": "read_sav",
    ".por": "read_por",
    ".dta": "read_dta",
    ".sas7bdat": "read_sas7bdat",
    ".xpt": "read_xport",
}
#: The suffixes written through pyreadstat (``.sas7bdat`` cannot be written).
WRITERS = (".sav", ".zsav", ".por", ".dta", ".xpt")
_WRITER_FUNCTIONS = {
    ".sav": "write_sav",
    ".zsav": "write_sav",
    ".por": "write_por",
    ".dta": "write_dta",
    ".xpt": "write_xport",
}
#: The formats whose files say which columns are numbers (a text input, such as an Argus
#: ``.asc`` with a codelist, does not: its unlabelled columns are written by their values).
_TYPED_FORMATS = frozenset(suffix[1:] for suffix in READERS)
_EXTRA_HINT = "install the formats extra: pip install 'sdckit[formats]'"


@dataclass
class FileMeta:
    """What a statistical package's file says about its columns beyond the values.

    ``format``: the file's suffix without the dot (``sav``, ``dta``, ...); ``column_labels``:
    variable labels; ``value_labels``: code -> label per labelled column; ``missing_ranges``:
    SPSS's user-missing declarations as pyreadstat gives them (``[{"lo": 99, "hi": 99}]``);
    ``numeric``: the columns stored as numbers in the file (a labelled column included).
    """

    format: str
    column_labels: dict[str, str] = field(default_factory=dict)
    value_labels: dict[str, dict[Any, str]] = field(default_factory=dict)
    missing_ranges: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    numeric: set[str] = field(default_factory=set)


def is_stat_file(path: str | Path) -> bool:
    """True for a path whose suffix names an SPSS, Stata or SAS file (:data:`READERS`)."""
    return Path(str(path)).suffix.lower() in READERS


def file_meta(df: pd.DataFrame) -> FileMeta | None:
    """The :class:`FileMeta` a table read from such a file carries, or None."""
    meta = df.attrs.get("file_meta")
    return meta if isinstance(meta, FileMeta) else None


def _pyreadstat(path: str | Path) -> Any:
    """The pyreadstat module, or a DataError naming ``path`` and the extra that brings it."""
    try:
        import pyreadstat
    except ImportError:
        raise DataError(
            f"{str(path)!r} is an SPSS/Stata/SAS file, which needs pyreadstat: {_EXTRA_HINT}"
        ) from None
    return pyreadstat


def read_stat_file(path: Path) -> pd.DataFrame:
    """The data of an SPSS (``.sav .zsav .por``), Stata (``.dta``) or SAS (``.sas7bdat
    .xpt``) file: value labels applied, user-defined missing values missing, its
    :class:`FileMeta` in ``attrs["file_meta"]``. DataError naming the file when it cannot be
    read or pyreadstat is not installed."""
    suffix = path.suffix.lower()
    reader = getattr(_pyreadstat(path), READERS[suffix])
    options = {"user_missing": True} if suffix in (".sav", ".zsav") else {}
    try:
        df, meta = reader(str(path), **options)
    except Exception as exc:  # noqa: BLE001 - pyreadstat raises its own and OS errors
        raise DataError(f"cannot read {str(path)!r} as a {suffix[1:]} file: {exc}") from None
    df.columns = [str(c) for c in df.columns]
    missing_ranges = {
        str(c): list(r) for c, r in (getattr(meta, "missing_ranges", None) or {}).items() if r
    }
    for column, ranges in missing_ranges.items():
        df[column] = df[column].mask(_in_ranges(df[column], ranges))
    value_labels = {
        str(c): dict(labels) for c, labels in (meta.variable_value_labels or {}).items() if labels
    }
    numeric = {c for c in df.columns if pd.api.types.is_numeric_dtype(df[c].dtype)}
    for column, labels in value_labels.items():
        df[column] = apply_value_labels(df[column], labels)
    df.attrs["file_meta"] = FileMeta(
        format=suffix[1:],
        column_labels={str(c): str(lab) for c, lab in meta.column_names_to_labels.items() if lab},
        value_labels=value_labels,
        missing_ranges=missing_ranges,
        numeric=numeric,
    )
    return df


def _in_ranges(values: pd.Series, ranges: list[dict[str, Any]]) -> pd.Series:
    """Which of ``values`` fall in one of SPSS's missing ranges (``lo`` to ``hi``, inclusive;
    a discrete missing value is a range with ``lo == hi``)."""
    hit = pd.Series(False, index=values.index)
    numeric = pd.api.types.is_numeric_dtype(values.dtype)
    for r in ranges:
        lo, hi = r.get("lo"), r.get("hi")
        if numeric and isinstance(lo, (int, float)) and isinstance(hi, (int, float)):
            hit |= (values >= lo) & (values <= hi)
        elif not numeric:
            hit |= values.isin({lo, hi})
    return hit


def _code_text(code: Any) -> str:
    """A code as text: ``3`` for ``3.0``."""
    if isinstance(code, float) and code.is_integer():
        return str(int(code))
    return str(code)


def apply_value_labels(values: pd.Series, labels: dict[Any, str]) -> pd.Series:
    """The labels of ``values``' codes (an unlabelled code as its text, missing kept): how
    a labelled column is read (an SPSS/Stata/SAS file's value labels, an Argus codelist)."""
    by_text = {_code_text(k): str(v) for k, v in labels.items()}
    index, codes = pd.factorize(values)  # one lookup per distinct code; missing: -1
    text = np.array([by_text.get(_code_text(c), _code_text(c)) for c in codes] + [None])
    return pd.Series(text[index], index=values.index, dtype="str")


def _natural_key(text: str) -> tuple:
    """Sort key that orders ``5-9`` before ``10-14`` (the first number, then the text)."""
    m = re.search(r"-?\d+(?:\.\d+)?", text)
    return (0, float(m.group()), text) if m else (1, 0.0, text)


def _as_numbers(values: pd.Series) -> pd.Series | None:
    """``values`` (text) as float64 when every non-empty one is a number, else None."""
    text = values.astype("str")
    empty = values.isna() | (text.str.strip() == "")
    conv = pd.to_numeric(text.where(~empty), errors="coerce")
    if (conv.isna() & ~empty).any():
        return None
    return conv.astype("float64")


def _coded(values: pd.Series, labels: dict[Any, str]) -> tuple[pd.Series, dict[int | float, str]]:
    """Text ``values`` as numeric codes and their labels: an original label keeps its code,
    new values get codes after the largest original one, in natural order; missing (or
    empty) stays missing. Only the labels of codes that occur are returned."""
    present = [str(v) for v in pd.unique(values.dropna()) if str(v) != ""]
    inverse: dict[str, Any] = {}
    for code, label in labels.items():
        inverse.setdefault(str(label), code)
    numeric_codes = [c for c in labels if isinstance(c, (int, float, np.number))]
    start = int(max(numeric_codes)) if numeric_codes else 0
    codes: dict[str, int | float] = {v: inverse[v] for v in present if v in inverse}
    for i, v in enumerate(sorted((v for v in present if v not in codes), key=_natural_key)):
        codes[v] = start + i + 1
    index, distinct = pd.factorize(values)  # missing: -1, the appended NaN
    lookup = np.array([codes.get(str(v), np.nan) for v in distinct] + [np.nan], dtype="float64")
    out = pd.Series(lookup[index], index=values.index)  # "" has no code: NaN
    return out, {_int(c): v for v, c in codes.items()}


def _int(code: Any) -> int | float:
    """An integral code as an int (Stata's value labels take integers)."""
    return int(code) if float(code).is_integer() else float(code)


def _prepare(
    df: pd.DataFrame, meta: FileMeta | None, labelled: bool
) -> tuple[pd.DataFrame, dict[str, dict[Any, str]]]:
    """The columns as the file holds them and the value labels to write (see the module's
    docstring); ``labelled``: the format holds value labels."""
    meta = meta or FileMeta(format="")
    out: dict[str, pd.Series] = {}
    value_labels: dict[str, dict[Any, str]] = {}
    for column in df.columns:
        name = str(column)
        s = df[column]
        if isinstance(s.dtype, pd.CategoricalDtype):
            s = s.astype(object)
        original = meta.value_labels.get(name, {})
        if pd.api.types.is_bool_dtype(s.dtype):
            out[name] = s.astype("float64")
        elif pd.api.types.is_numeric_dtype(s.dtype) or pd.api.types.is_datetime64_any_dtype(
            s.dtype
        ):
            out[name] = s
            if original and labelled:
                value_labels[name] = {_int(k): v for k, v in original.items()}
        elif original and labelled and name in meta.numeric:  # (labels of a string: text)
            out[name], value_labels[name] = _coded(s, original)
        elif meta.format in _TYPED_FORMATS and name not in meta.numeric:  # a string variable
            out[name] = s.astype("str").fillna("")
        else:
            numbers = _as_numbers(s)
            if numbers is not None:
                out[name] = numbers
            elif name in meta.numeric and labelled:  # a number column generalized
                out[name], value_labels[name] = _coded(s, {})
            else:
                out[name] = s.astype("str").fillna("")
    return pd.DataFrame(out, index=df.index).reset_index(drop=True), value_labels


def write_stat_file(
    df: pd.DataFrame, path: Path, meta: FileMeta | None = None, suffix: str | None = None
) -> None:
    """Write ``df`` to ``path`` in the format ``suffix`` names (default: ``path``'s;
    :data:`WRITERS`), with ``meta``'s variable labels, value labels and (SPSS) missing
    declarations as the module's docstring describes (``meta``: the input's, else
    ``df.attrs["file_meta"]``). A plain write: callers write through
    :func:`sdckit.core.io.atomic_write` (whose temporary file has another suffix)."""
    suffix = (suffix or path.suffix).lower()
    if suffix not in WRITERS:
        raise DataError(
            f"cannot write {str(path)!r}: pyreadstat writes {', '.join(WRITERS)} files, not "
            f"{suffix}; write the release as .xpt (SAS transport) or Parquet"
        )
    meta = meta if meta is not None else file_meta(df)
    frame, value_labels = _prepare(df, meta, labelled=suffix in (".sav", ".zsav", ".dta"))
    labels = {c: lab for c, lab in (meta.column_labels if meta else {}).items() if c in frame}
    options: dict[str, Any] = {"column_labels": [labels.get(c) for c in frame.columns]}
    if value_labels:
        options["variable_value_labels"] = value_labels
    if suffix in (".sav", ".zsav") and meta is not None:
        ranges = {
            c: [r["lo"] if r["lo"] == r["hi"] else r for r in rs]
            for c, rs in meta.missing_ranges.items()
            if c in frame and pd.api.types.is_numeric_dtype(frame[c].dtype)
        }
        if ranges:
            options["missing_ranges"] = ranges
    writer = _WRITER_FUNCTIONS[suffix]
    if suffix == ".zsav":
        options["compress"] = True
    module = _pyreadstat(path)
    try:
        getattr(module, writer)(frame, str(path), **options)
    except Exception as exc:  # noqa: BLE001 - pyreadstat raises its own types
        raise DataError(f"cannot write {str(path)!r} as a {suffix[1:]} file: {exc}") from None
